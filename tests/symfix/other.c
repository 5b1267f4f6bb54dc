// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolizer fixture: another build installed where prog.c's was. Its names
 * must never be given to prog.c's frames. */
#include <stdio.h>

volatile int imposter_sink;

__attribute__((noinline)) int imposter_one(int x)
{
	for (int i = 0; i < x; i++)
		imposter_sink += i * 11;
	return imposter_sink;
}

__attribute__((noinline)) int imposter_two(int x)
{
	for (int i = 0; i < x; i++)
		imposter_sink ^= i * 13 + 1;
	return imposter_sink + imposter_one(x);
}

__attribute__((noinline)) static int imposter_three(int x)
{
	for (int i = 0; i < x; i++)
		imposter_sink -= i * 17 + 2;
	return imposter_sink + imposter_two(x);
}

int main(int argc, char **argv)
{
	printf("%d\n", imposter_three(argc) + imposter_two(argc + 1));
	return 0;
}
