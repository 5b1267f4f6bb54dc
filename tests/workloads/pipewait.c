// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: a reader thread ("pipe-reader") blocks in
 * pipe_reader_wait() (read on a pipe) called from pipe_reader_loop(); the
 * main thread writes one byte every GAP_MS, COUNT times.
 * usage: pipewait [COUNT [GAP_MS]]   (default 20 25)
 */
#define _GNU_SOURCE /* pthread_setname_np, O_DIRECT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static long count = 20;

char pipe_reader_wait(int fd)
{
	char c = 0;

	if (read(fd, &c, 1) != 1)
		return 0;
	return c;
}

long pipe_reader_loop(int fd)
{
	long got = 0;

	while (pipe_reader_wait(fd))
		got++;
	return got;
}

static void *reader(void *arg)
{
	return (void *)pipe_reader_loop(fds[0]);
}

int main(int argc, char **argv)
{
	long gap_ms = argc > 2 ? atol(argv[2]) : 25, i;
	struct timespec ts;
	pthread_t t;
	void *got;

	if (argc > 1)
		count = atol(argv[1]);
	if (count <= 0 || gap_ms <= 0 || pipe(fds))
		return 2;
	ts.tv_sec = gap_ms / 1000;
	ts.tv_nsec = (gap_ms % 1000) * 1000000;
	if (pthread_create(&t, NULL, reader, NULL))
		return 1;
	pthread_setname_np(t, "pipe-reader");
	for (i = 0; i < count; i++) {
		nanosleep(&ts, NULL);
		if (write(fds[1], "x", 1) != 1)
			return 1;
	}
	if (write(fds[1], "", 1) != 1) /* a zero byte ends the reader */
		return 1;
	pthread_join(t, &got);
	printf("pid=%d\nreads=%ld\n", getpid(), (long)got);
	return 0;
}
