// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test library (nofp_lib.so), built without frame pointers and loaded by
 * nofp_dlopen with dlopen(): lib_outer -> lib_burn burns CPU.
 */
#include "nofp_common.h"

#define UNIT 400000

volatile unsigned long nofp_lib_sink;

NOFP_FN unsigned long lib_burn(unsigned long x)
{
	int i;

	for (i = 0; i < UNIT; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	nofp_lib_sink = x;
	return x;
}

NOFP_FN unsigned long lib_outer(unsigned long x)
{
	return lib_burn(x) ^ 0xa5a5;
}
