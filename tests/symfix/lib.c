// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolizer fixture: a shared library with exported and hidden functions. */
volatile int symlib_sink;

__attribute__((noinline)) static int symlib_hidden(int x)
{
	for (int i = 0; i < x; i++)
		symlib_sink += i * 3;
	return symlib_sink;
}

__attribute__((noinline)) int symlib_one(int x)
{
	for (int i = 0; i < x; i++)
		symlib_sink ^= i + 9;
	return symlib_sink + symlib_hidden(x);
}

__attribute__((noinline)) int symlib_two(int x)
{
	for (int i = 0; i < x; i++)
		symlib_sink -= i * 5;
	return symlib_sink + symlib_one(x);
}

/* Hand-written functions: symlib_asm has no .size (as in much assembly);
 * symlib_asm_local, right after it, is sized but not exported. */
__asm__(".text\n"
	".globl symlib_asm\n"
	".type symlib_asm, @function\n"
	"symlib_asm:\n"
	"	nop\n	nop\n	nop\n	ret\n"
	".type symlib_asm_local, @function\n"
	"symlib_asm_local:\n"
	"	nop\n	nop\n	nop\n	ret\n"
	".size symlib_asm_local, .-symlib_asm_local\n");
