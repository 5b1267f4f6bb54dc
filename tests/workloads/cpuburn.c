// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: burns CPU in burn_a() and burn_b(), PCT_A percent of the
 * work units in burn_a, the rest in burn_b (equal units), for about MS
 * milliseconds. A profile should split between them as configured.
 * usage: cpuburn [MS [PCT_A]]   (default 2000 25)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define UNIT 200000

static volatile unsigned long sink;

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void burn_a(void)
{
	unsigned long x = sink;
	int i;

	for (i = 0; i < UNIT; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

void burn_b(void)
{
	unsigned long x = sink;
	int i;

	for (i = 0; i < UNIT; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
}

void burn_loop(long ms, int pct_a)
{
	long long end = cpu_ns() + ms * 1000000ll;
	unsigned long units = 0, a = 0;

	while (cpu_ns() < end) {
		/* 100 units per round: pct_a of them in burn_a */
		if ((int)(units % 100) < pct_a) {
			burn_a();
			a++;
		} else {
			burn_b();
		}
		units++;
	}
	printf("pid=%d\nunits=%lu\nunits_a=%lu\n", getpid(), units, a);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 2000;
	int pct = argc > 2 ? atoi(argv[2]) : 25;

	if (ms <= 0 || pct < 0 || pct > 100) {
		fprintf(stderr, "usage: cpuburn [MS [PCT_A]]\n");
		return 2;
	}
	burn_loop(ms, pct);
	return 0;
}
