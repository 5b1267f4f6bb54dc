// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload for the reliability tests: load of a known shape.
 *
 *   burst pipe PAIRS SECONDS   PAIRS thread pairs ping-pong one byte over
 *                              two pipes for SECONDS (0: until killed): a
 *                              high rate of off-CPU events; prints rounds=N
 *   burst odirect PATH COUNT   writes COUNT 4 KiB blocks to PATH and syncs,
 *                              prints "ready", then per byte on stdin:
 *                              'p' overwrites block 0 with O_DIRECT and
 *                              prints "probe"; 'x' overwrites the COUNT
 *                              blocks and prints "done writes=COUNT".
 *                              Each write is exactly one block I/O
 *                              request, with no metadata I/O of its own.
 *                              Unlinks PATH at EOF.
 */
#define _GNU_SOURCE /* O_DIRECT */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096

struct pair {
	int ping[2], pong[2];
	double until;
	long rounds;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *ponger(void *arg)
{
	struct pair *p = arg;
	char c;

	while (read(p->ping[0], &c, 1) == 1) {
		if (write(p->pong[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *pinger(void *arg)
{
	struct pair *p = arg;
	char c = 'x';

	while (!p->until || now() < p->until) {
		if (write(p->ping[1], &c, 1) != 1 || read(p->pong[0], &c, 1) != 1)
			break;
		p->rounds++;
	}
	close(p->ping[1]); /* the ponger sees EOF */
	return NULL;
}

static int run_pipes(int pairs, double seconds)
{
	pthread_t *th = calloc(2 * pairs, sizeof(*th));
	struct pair *p = calloc(pairs, sizeof(*p));
	long total = 0;
	int i;

	if (!th || !p || pairs < 1)
		return 1;
	for (i = 0; i < pairs; i++) {
		if (pipe(p[i].ping) || pipe(p[i].pong))
			return 1;
		p[i].until = seconds > 0 ? now() + seconds : 0;
		pthread_create(&th[2 * i], NULL, ponger, &p[i]);
		pthread_create(&th[2 * i + 1], NULL, pinger, &p[i]);
	}
	for (i = 0; i < 2 * pairs; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < pairs; i++)
		total += p[i].rounds;
	printf("rounds=%ld\n", total);
	return 0;
}

static int prepare(const char *path, long count, char *buf)
{
	long i;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	for (i = 0; i < count; i++) {
		if (pwrite(fd, buf, BLOCK, i * BLOCK) != BLOCK)
			return -1;
	}
	if (fsync(fd))
		return -1;
	close(fd);
	return 0;
}

/* One O_DIRECT write of each of the first n blocks. */
static int write_blocks(int fd, const char *buf, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		if (pwrite(fd, buf, BLOCK, i * BLOCK) != BLOCK) {
			perror("burst: pwrite");
			return -1;
		}
	}
	return 0;
}

/* Commands on stdin: 'p' one write ("probe"), 'x' the COUNT writes. */
static int run_odirect(const char *path, long count)
{
	char *buf, c;
	int fd;

	if (count < 1 || posix_memalign((void **)&buf, BLOCK, BLOCK))
		return 1;
	memset(buf, 'a', BLOCK);
	if (prepare(path, count, buf)) {
		perror("burst: prepare");
		return 1;
	}
	fd = open(path, O_WRONLY | O_DIRECT);
	if (fd < 0) {
		perror("burst: O_DIRECT");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) == 1) {
		if (write_blocks(fd, buf, c == 'x' ? count : 1))
			return 1;
		if (c == 'x')
			printf("done writes=%ld\n", count);
		else
			printf("probe\n");
		fflush(stdout);
	}
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "pipe"))
		return run_pipes(atoi(argv[2]), atof(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "odirect"))
		return run_odirect(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: burst pipe PAIRS SECONDS | burst odirect PATH COUNT\n");
	return 2;
}
