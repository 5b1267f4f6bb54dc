// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: a process whose threads name themselves with a terminal
 * escape sequence, a newline and a ';' (prctl(PR_SET_NAME), as any process
 * may), for the text views' escaping. Its "ev...il" waker thread naps in
 * evil_nap() then wakes the main thread, which waits in evil_wait() (a pipe
 * read) and burns a little CPU in evil_burn() each time, for about MS
 * milliseconds. One nap, halfway, lasts 100 ms: the main thread's longest
 * wait is then one the waker ends, even where a loaded host preempts a
 * thread for longer than the 5 ms naps (`--chain` follows the longest).
 * usage: evilname [MS]   (default 600)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define EVIL_NAME "ev\033[31mil\nX;Y 9"

static int fds[2];
static long total_ms = 600;
static volatile unsigned long sink;

void evil_nap(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

void evil_burn(void)
{
	unsigned long i, x = sink;

	for (i = 0; i < 200000; i++)
		x = x * 31 + i;
	sink = x;
}

char evil_wait(void)
{
	char c = 0;

	return read(fds[0], &c, 1) == 1 ? c : 0;
}

static void *waker(void *arg)
{
	long i, n = total_ms / 5;

	(void)arg;
	prctl(PR_SET_NAME, EVIL_NAME);
	for (i = 0; i < n; i++) {
		evil_nap(i == n / 2 ? 100 : 5);
		if (write(fds[1], i + 1 < n ? "w" : "q", 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		total_ms = atol(argv[1]);
	if (total_ms < 5 || pipe(fds)) {
		fprintf(stderr, "usage: evilname [MS]\n");
		return 2;
	}
	prctl(PR_SET_NAME, EVIL_NAME);
	if (pthread_create(&t, NULL, waker, NULL))
		return 1;
	while (evil_wait() == 'w')
		evil_burn();
	pthread_join(t, NULL);
	printf("pid=%d\n", getpid());
	return 0;
}
