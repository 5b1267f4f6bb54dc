/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the nofp_* workloads (built without frame pointers, see the
 * Makefile): a clock, a CPU burner and a nap, each a real function.
 */
#ifndef STKREC_NOFP_COMMON_H
#define STKREC_NOFP_COMMON_H

#include <stdlib.h>
#include <time.h>

/* Not static: every function keeps its own symbol and frame. */
#define NOFP_FN __attribute__((noinline))

static inline long long nofp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* CPU time of the calling thread: a burner that runs for this long is
 * sampled as often whatever else the machine runs (wall time under a
 * load gives fewer samples). */
static inline long long nofp_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A duration in ms from argv[i] (def when absent); exits 2 if not > 0. */
static inline long nofp_ms(int argc, char **argv, int i, long def)
{
	long v = argc > i ? atol(argv[i]) : def;

	if (v <= 0)
		exit(2);
	return v;
}

#endif /* STKREC_NOFP_COMMON_H */
