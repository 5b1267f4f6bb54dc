// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload, built without frame pointers: for MS milliseconds,
 *   thread "nofp-burn" burns CPU in t_burn -> outer -> middle -> inner
 *   (MS ms of its own CPU time: as many samples on a busy machine),
 *   thread "nofp-nap" sleeps in t_nap -> waiter -> nap -> nanosleep,
 *   thread "nofp-lock" blocks in t_lock -> lock_wait -> pthread_mutex_lock
 *   on a mutex that thread "nofp-hold" keeps HOLD_MS at a time (sleeping in
 *   t_hold -> hold -> nanosleep).
 * Only an unwinder that reads .eh_frame sees those chains whole.
 * usage: nofp_threads [MS [HOLD_MS]]   (default 2000 50)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include "nofp_common.h"

#define UNIT 400000

static long long end_ns, burn_ns;
static long hold_ms = 50;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long taken; /* times nofp-hold took the lock (atomic) */
volatile unsigned long nofp_sink;

NOFP_FN unsigned long inner(unsigned long x)
{
	int i;

	for (i = 0; i < UNIT; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	nofp_sink = x;
	return x;
}

/* Each caller uses its callee's result: no tail calls to fold frames. */
NOFP_FN unsigned long middle(unsigned long x)
{
	return inner(x) ^ 0x5a5a;
}

NOFP_FN unsigned long outer(unsigned long x)
{
	return middle(x) + 7;
}

NOFP_FN void *t_burn(void *arg)
{
	unsigned long x = (unsigned long)arg;

	prctl(PR_SET_NAME, "nofp-burn");
	while (nofp_thread_cpu_ns() < burn_ns)
		x = outer(x);
	nofp_sink = x;
	return NULL;
}

NOFP_FN int nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	return nanosleep(&ts, NULL);
}

NOFP_FN int waiter(void)
{
	return nap(10) + 1;
}

NOFP_FN void *t_nap(void *arg)
{
	long n = 0;

	prctl(PR_SET_NAME, "nofp-nap");
	while (nofp_now_ns() < end_ns)
		n += waiter();
	nofp_sink = n;
	return NULL;
}

NOFP_FN int hold(long ms)
{
	return nap(ms) + 1;
}

NOFP_FN void *t_hold(void *arg)
{
	prctl(PR_SET_NAME, "nofp-hold");
	while (nofp_now_ns() < end_ns) {
		pthread_mutex_lock(&lock);
		__atomic_add_fetch(&taken, 1, __ATOMIC_SEQ_CST);
		hold(hold_ms);
		pthread_mutex_unlock(&lock);
		nap(1);
	}
	/* let nofp-lock see the end */
	__atomic_add_fetch(&taken, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

NOFP_FN int lock_wait(void)
{
	return pthread_mutex_lock(&lock) + 1;
}

/* Blocks on the mutex only (no other sleep): after each round it spins
 * on CPU until nofp-hold has taken the lock again. */
NOFP_FN void *t_lock(void *arg)
{
	unsigned long seen;

	prctl(PR_SET_NAME, "nofp-lock");
	while (nofp_now_ns() < end_ns) {
		nofp_sink += lock_wait();
		seen = __atomic_load_n(&taken, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&lock);
		while (seen == __atomic_load_n(&taken, __ATOMIC_SEQ_CST) &&
		       nofp_now_ns() < end_ns)
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { t_burn, t_nap, t_hold, t_lock };
	long ms = nofp_ms(argc, argv, 1, 2000);
	pthread_t t[4];
	int i;

	hold_ms = nofp_ms(argc, argv, 2, 50);
	end_ns = nofp_now_ns() + ms * 1000000ll;
	burn_ns = ms * 1000000ll;
	for (i = 0; i < 4; i++) {
		if (pthread_create(&t[i], NULL, fns[i], (void *)(long)i)) {
			perror("nofp_threads: pthread_create");
			return 1;
		}
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
