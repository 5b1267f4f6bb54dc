// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolizer fixture: distinct noinline functions, one of them static. */
#include <stdio.h>

volatile int symfix_sink;

__attribute__((noinline)) int symfix_alpha(int x)
{
	for (int i = 0; i < x; i++)
		symfix_sink += i * 3;
	return symfix_sink;
}

__attribute__((noinline)) int symfix_beta(int x)
{
	for (int i = 0; i < x; i++)
		symfix_sink ^= i * 5 + 1;
	return symfix_sink + symfix_alpha(x);
}

__attribute__((noinline)) static int symfix_local(int x)
{
	for (int i = 0; i < x; i++)
		symfix_sink -= i * 7 + 2;
	return symfix_sink + symfix_beta(x);
}

int main(int argc, char **argv)
{
	printf("%d\n", symfix_local(argc));
	return 0;
}
