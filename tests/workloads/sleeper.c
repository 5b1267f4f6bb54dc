// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: one thread named "sleeper-nap" sleeps in sleeper_nap()
 * (nanosleep) NAP_MS at a time for TOTAL_MS, then prints its tid and its
 * wall time (and its pid), so a test can compare them with the recorded
 * off-CPU time.
 * usage: sleeper [TOTAL_MS [NAP_MS]]   (default 1000 10)
 */
#define _GNU_SOURCE /* pthread_setname_np, O_DIRECT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long total_ms = 1000, nap_ms = 10;
static long long wall_ns;
static int tid;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void sleeper_nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

void sleeper_loop(void)
{
	long long start = now_ns(), end = start + total_ms * 1000000ll;

	while (now_ns() < end)
		sleeper_nap(nap_ms);
	wall_ns = now_ns() - start;
}

static void *sleeper_thread(void *arg)
{
	tid = syscall(SYS_gettid);
	sleeper_loop();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		total_ms = atol(argv[1]);
	if (argc > 2)
		nap_ms = atol(argv[2]);
	if (total_ms <= 0 || nap_ms <= 0) {
		fprintf(stderr, "usage: sleeper [TOTAL_MS [NAP_MS]]\n");
		return 2;
	}
	if (pthread_create(&t, NULL, sleeper_thread, NULL))
		return 1;
	pthread_setname_np(t, "sleeper-nap");
	pthread_join(t, NULL);
	printf("pid=%d\ntid=%d\nwall_ns=%lld\n", getpid(), tid, wall_ns);
	return 0;
}
