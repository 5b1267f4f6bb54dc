// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload, built without frame pointers, for the kept user walks
 * (bpf/unwind.bpf.h): a stack that changes where the registers do not.
 * The main thread naps N times in nap_us() -> nanosleep, called through
 * caller_a() and caller_b() in turn, TURN naps each (2: a a b b a a ...).
 * The two callers have frames of one size, so every nap enters the kernel
 * with the same registers and only the return address on the stack tells
 * the two apart. The thread is named "callers-a" or "callers-b" before
 * each nap, so a test knows whose each off-CPU interval was.
 * usage: nofp_callers [N [US [TURN]]]   (default 2000 naps of 100 us, 2)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>
#include "nofp_common.h"

volatile long nofp_sink;

NOFP_FN int nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	return nanosleep(&ts, NULL);
}

/* Each uses its callee's result: no tail call, and one frame size. */
NOFP_FN int caller_a(long us)
{
	return nap_us(us) + 1;
}

NOFP_FN int caller_b(long us)
{
	return nap_us(us) + 2;
}

int main(int argc, char **argv)
{
	long i, n = nofp_ms(argc, argv, 1, 2000), us = nofp_ms(argc, argv, 2, 100), sum = 0;
	long turn = nofp_ms(argc, argv, 3, 2);

	for (i = 0; i < n; i++) {
		if ((i / turn) & 1) {
			prctl(PR_SET_NAME, "callers-b");
			sum += caller_b(us);
		} else {
			prctl(PR_SET_NAME, "callers-a");
			sum += caller_a(us);
		}
	}
	nofp_sink = sum;
	printf("naps=%ld\n", n);
	return 0;
}
