// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload for the kept kernel walks (bpf/kstack.bpf.h): one syscall,
 * two kernel stacks, in turn. The main thread reads a pipe through
 * read_pipe(), then a UNIX socket through read_sock(), N times each: both
 * are read(2), so the two waits have the same syscall and the same start of
 * their kernel stacks, and only the words further up (anon_pipe_read
 * against unix_stream_read_generic) tell them apart; the user stack says
 * which read each off-CPU interval was. A feeder thread writes one byte to
 * each in turn, US apart, so that every read blocks and nothing else of
 * the reader's does.
 * usage: kreads [N [US]]   (default 1000 of each, 100 us apart)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int pipe_fd[2], sock_fd[2];
static long n, us;
volatile long kreads_sink;

static void nap(void)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static void *feeder(void *arg)
{
	char c = 1;
	long i;

	(void)arg;
	for (i = 0; i < n; i++) {
		nap();
		if (write(pipe_fd[1], &c, 1) != 1)
			break;
		nap();
		if (write(sock_fd[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

/* Each uses the result: no tail call, its own frame on the user stack. */
__attribute__((noinline)) int read_pipe(void)
{
	char c;

	return read(pipe_fd[0], &c, 1) == 1 ? c : -1;
}

__attribute__((noinline)) int read_sock(void)
{
	char c;

	return read(sock_fd[0], &c, 1) == 1 ? c : -1;
}

int main(int argc, char **argv)
{
	long i, sum = 0;
	pthread_t t;

	n = argc > 1 ? atol(argv[1]) : 1000;
	us = argc > 2 ? atol(argv[2]) : 100;
	if (pipe(pipe_fd) || socketpair(AF_UNIX, SOCK_STREAM, 0, sock_fd) ||
	    pthread_create(&t, NULL, feeder, NULL))
		return 1;
	for (i = 0; i < n; i++)
		sum += read_pipe() + read_sock();
	pthread_join(t, NULL);
	kreads_sink = sum;
	printf("reads=%ld\n", 2 * n);
	return sum == 2 * n ? 0 : 1;
}
