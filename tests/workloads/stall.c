// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload for the flight recorder: short waits with a few long
 * stalls between them. Its main thread naps NAP_MS at a time in
 * stall_nap(); each "+MS" item of the plan stalls MS in stall_long(), each
 * "-MS" item naps for MS, and "c" starts a child process named
 * "stall-child" that naps 100 ms and exits. Prints "stall T" (monotonic
 * ns at the stall's end) for each stall, so a test can find it.
 * usage: stall NAP_MS ITEM...    e.g. stall 10 -4000 c -1000 +800 -2000
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long nap_ms = 10;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) void stall_nap(long ms)
{
	sleep_ms(ms);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void stall_long(long ms)
{
	sleep_ms(ms);
	__asm__ volatile("" ::: "memory");
}

/* Short waits for ms in all. */
static void naps(long ms)
{
	long long end = now_ns() + ms * 1000000ll;

	while (now_ns() < end)
		stall_nap(nap_ms);
}

static void child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_NAME, "stall-child");
		naps(100);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2 || (nap_ms = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: stall NAP_MS [+MS|-MS|c]...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 2; i < argc; i++) {
		if (argv[i][0] == '+') {
			stall_long(atol(argv[i] + 1));
			printf("stall %lld\n", now_ns());
		} else if (argv[i][0] == '-') {
			naps(atol(argv[i] + 1));
		} else if (!strcmp(argv[i], "c")) {
			child();
		}
	}
	return 0;
}
