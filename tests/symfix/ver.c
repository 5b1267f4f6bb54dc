// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolizer fixture: a versioned export (the test links it with a version
 * script defining SYMFIX_1), as glibc defines its functions. */
volatile int ver_sink;

__attribute__((noinline)) int symlib_ver_impl(int x)
{
	for (int i = 0; i < x; i++)
		ver_sink += i;
	return ver_sink;
}
__asm__(".symver symlib_ver_impl, symlib_ver@@SYMFIX_1");
