// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: THREADS threads take one mutex ROUNDS times each; the
 * holder keeps it HOLD_MS in hold_lock() (sleeping), the others block in
 * wait_lock() (futex wait).
 * usage: mutexwait [THREADS [ROUNDS [HOLD_MS]]]   (default 4 10 5)
 */
#define _GNU_SOURCE /* pthread_setname_np, O_DIRECT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds = 10, hold_ms = 5;

void hold_lock(void)
{
	struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

void wait_lock(void)
{
	pthread_mutex_lock(&lock);
}

static void *worker(void *arg)
{
	long i;

	for (i = 0; i < rounds; i++) {
		wait_lock();
		hold_lock();
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4, i;
	pthread_t t[64];

	if (argc > 2)
		rounds = atol(argv[2]);
	if (argc > 3)
		hold_ms = atol(argv[3]);
	if (n <= 0 || n > 64 || rounds <= 0 || hold_ms < 0)
		return 2;
	for (i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
		pthread_setname_np(t[i], "mutex-worker");
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("locks=%ld\n", n * rounds);
	return 0;
}
