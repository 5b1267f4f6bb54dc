// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload for waits open at the start or the stop of a recording: a
 * thread ("blk-waiter") blocks in a known function, and the program says
 * on stdout when (CLOCK_MONOTONIC ns) it blocked and woke.
 * usage: blocker pipe             read() on a pipe nobody writes, for ever
 *        blocker nap MS           one nanosleep of MS (SIGUSR1 ends it sooner),
 *                                 then exit
 *        blocker later MS         run (short naps) for MS, then read() for ever
 * Each prints "blocked NS TID" just before the wait, "woke NS TID" after a
 * nap.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static long ms;

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void say(const char *what)
{
	printf("%s %llu %d\n", what, mono_ns(), gettid());
	fflush(stdout);
}

char blk_pipe_wait(int fd)
{
	char c = 0;

	say("blocked");
	if (read(fd, &c, 1) != 1)
		return 0;
	return c;
}

void blk_nap(long nap_ms)
{
	struct timespec ts = { nap_ms / 1000, (nap_ms % 1000) * 1000000L };

	say("blocked");
	nanosleep(&ts, NULL);
	say("woke");
}

/* Busy with 1 ms naps for run_ms, then blocked for good. */
void blk_later(long run_ms)
{
	struct timespec one = { 0, 1000000L };
	unsigned long long end = mono_ns() + run_ms * 1000000ull;

	while (mono_ns() < end)
		nanosleep(&one, NULL);
	blk_pipe_wait(fds[0]);
}

/* SIGUSR1 interrupts the nap: a test ends it when it has seen what it
 * waited for (a recorder's start), not after a length that must cover it */
static void on_usr1(int sig)
{
}

static void *waiter(void *arg)
{
	const char *mode = arg;
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	pthread_setname_np(pthread_self(), "blk-waiter");
	if (!strcmp(mode, "pipe"))
		blk_pipe_wait(fds[0]);
	else if (!strcmp(mode, "nap"))
		blk_nap(ms);
	else
		blk_later(ms);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr1;
	pthread_t t;

	if (argc < 2 || (strcmp(argv[1], "pipe") && argc < 3) ||
	    (strcmp(argv[1], "pipe") && strcmp(argv[1], "nap") && strcmp(argv[1], "later"))) {
		fprintf(stderr, "usage: blocker pipe | nap MS | later MS\n");
		return 2;
	}
	ms = argc > 2 ? atol(argv[2]) : 0;
	/* no SA_RESTART; blocked here, so the waiter alone takes it */
	sigemptyset(&sa.sa_mask);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigaction(SIGUSR1, &sa, NULL) || pthread_sigmask(SIG_BLOCK, &usr1, NULL))
		return 1;
	if (pipe(fds) || pthread_create(&t, NULL, waiter, argv[1]))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
