// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: the short-lived child of `shortlived`: burns CPU in
 * short_child_work() for MS milliseconds (default 300), then exits. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void short_child_work(long ms)
{
	long long end = now_ns() + ms * 1000000ll;
	unsigned long x = sink;
	int i;

	while (now_ns() < end) {
		for (i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	}
	sink = x;
}

int main(int argc, char **argv)
{
	short_child_work(argc > 1 ? atol(argv[1]) : 300);
	return 0;
}
