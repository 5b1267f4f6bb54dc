// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload for record -e wakeup: waits whose wakers are known.
 * usage: wakechain lock ROUNDS   "wk-holder" holds a mutex 50 ms in
 *                                hold_lock(), drops it in release_lock();
 *                                "wk-waiter" blocks in take_lock() from
 *                                when the holder has it (a barrier)
 *        wakechain pipe COUNT    "wk-writer" writes a byte every 20 ms in
 *                                write_token(); "wk-reader" blocks in
 *                                read_token()
 *        wakechain timer COUNT   "wk-napper" sleeps 20 ms in nap_20ms()
 *        wakechain chain ROUNDS  "wk-a" waits on "wk-b" (a pipe), which
 *                                waits on "wk-c" (another), which sleeps
 *                                30 ms first: a two-hop chain per round
 *        wakechain io PATH       4 x 64 KiB written and fsync()ed in
 *                                sync_data(), then read back with O_DIRECT
 *                                in read_direct()
 * Each waits with a gap so that rounds do not overlap.
 */
#define _GNU_SOURCE /* pthread_setname_np, O_DIRECT */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IO_SIZE 65536
#define IO_COUNT 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held, round_done;
static int p1[2], p2[2];
static long n;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* --- lock ---------------------------------------------------------------- */

void release_lock(void)
{
	pthread_mutex_unlock(&lock);
}

void hold_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&held);
	sleep_ms(50);
	release_lock();
}

void take_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static void *holder(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-holder");
	for (i = 0; i < n; i++) {
		hold_lock();
		pthread_barrier_wait(&round_done);
	}
	return NULL;
}

static void *waiter(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-waiter");
	for (i = 0; i < n; i++) {
		pthread_barrier_wait(&held); /* the holder has the lock */
		take_lock();
		pthread_barrier_wait(&round_done);
	}
	return NULL;
}

/* --- pipe ---------------------------------------------------------------- */

void write_token(int fd)
{
	char c = 't';

	if (write(fd, &c, 1) != 1)
		exit(1);
}

char read_token(int fd)
{
	char c = 0;

	if (read(fd, &c, 1) != 1)
		exit(1);
	return c;
}

static void *writer(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-writer");
	for (i = 0; i < n; i++) {
		sleep_ms(20);
		write_token(p1[1]);
	}
	return NULL;
}

static void *reader(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-reader");
	for (i = 0; i < n; i++)
		read_token(p1[0]);
	return NULL;
}

/* --- timer --------------------------------------------------------------- */

void nap_20ms(void)
{
	sleep_ms(20);
}

static void *napper(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-napper");
	for (i = 0; i < n; i++)
		nap_20ms();
	return NULL;
}

/* --- chain: a <- b <- c <- timer ------------------------------------------- */

static void *chain_a(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-a");
	for (i = 0; i < n; i++)
		read_token(p1[0]);
	return NULL;
}

static void *chain_b(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-b");
	for (i = 0; i < n; i++) {
		read_token(p2[0]);
		write_token(p1[1]);
	}
	return NULL;
}

static void *chain_c(void *arg)
{
	long i;

	pthread_setname_np(pthread_self(), "wk-c");
	for (i = 0; i < n; i++) {
		sleep_ms(30);
		write_token(p2[1]);
		sleep_ms(20); /* the round ends before the next nap */
	}
	return NULL;
}

/* --- io ------------------------------------------------------------------ */

void sync_data(int fd, char *buf)
{
	int i;

	for (i = 0; i < IO_COUNT; i++)
		if (write(fd, buf, IO_SIZE) != IO_SIZE)
			exit(1);
	if (fsync(fd))
		exit(1);
}

void read_direct(int fd, char *buf)
{
	int i;

	for (i = 0; i < IO_COUNT; i++)
		if (pread(fd, buf, IO_SIZE, (off_t)i * IO_SIZE) != IO_SIZE)
			exit(1);
}

static int io(const char *path)
{
	char *buf;
	int fd;

	if (posix_memalign((void **)&buf, 4096, IO_SIZE))
		return 1;
	memset(buf, 'x', IO_SIZE);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	sync_data(fd, buf);
	close(fd);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return 1;
	read_direct(fd, buf);
	close(fd);
	free(buf);
	return 0;
}

static int run(void *(*fns[])(void *), int nr)
{
	pthread_t t[3];
	int i;

	if (pipe(p1) || pipe(p2) || pthread_barrier_init(&held, NULL, 2) ||
	    pthread_barrier_init(&round_done, NULL, 2))
		return 1;
	for (i = 0; i < nr; i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL))
			return 1;
	for (i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		goto usage;
	if (!strcmp(argv[1], "io"))
		return io(argv[2]);
	n = atol(argv[2]);
	if (!strcmp(argv[1], "lock"))
		return run((void *(*[])(void *)){ holder, waiter }, 2);
	if (!strcmp(argv[1], "pipe"))
		return run((void *(*[])(void *)){ writer, reader }, 2);
	if (!strcmp(argv[1], "timer"))
		return run((void *(*[])(void *)){ napper }, 1);
	if (!strcmp(argv[1], "chain"))
		return run((void *(*[])(void *)){ chain_a, chain_b, chain_c }, 3);
usage:
	fprintf(stderr, "usage: wakechain lock|pipe|timer|chain N | wakechain io PATH\n");
	return 2;
}
