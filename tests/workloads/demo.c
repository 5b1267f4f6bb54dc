// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The workload of `make demo` (demo/run.sh), and of tests/test_demo.c: for
 * SECONDS, threads that each wait or burn in a way of their own, so that
 * every view has something to find:
 *   main (demo)    hold_lock: holds a mutex while crunch_numbers() burns
 *                  the CPU for 0.8 s, then lets go for 50 ms
 *   demo-waiter    wait_for_lock: blocked on that mutex most of the time
 *                  (the longest waits; their waker is hold_lock)
 *   demo-writer    write_pipe: a line into a pipe every 250 ms
 *   demo-reader    read_pipe: blocked reading it
 *   demo-sleeper   nap: 100 ms sleeps
 *   demo-dio       direct_write, direct_read: 256 KiB with O_DIRECT to and
 *                  from a file in DIR, every 100 ms (a filesystem that
 *                  refuses O_DIRECT, tmpfs before Linux 6.6, is said and
 *                  skipped)
 *   PYTHON PY      poll_queue(), a Python function sleeping 0.2 s at a
 *                  time (tests/workloads/py/demo.py), when they are given
 * usage: demo SECONDS DIR [PYTHON PY]
 * Built by clang with frame pointers like every tests/workloads program.
 */
#define _GNU_SOURCE /* pthread_setname_np, O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIO_SIZE (256 * 1024)

extern char **environ;

static double deadline;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pipefd[2];
static const char *dio_dir;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int over(void)
{
	return now() >= deadline;
}

/* A macro, not a function: the caller is the frame that sleeps. */
#define sleep_ms(ms) nanosleep(&(struct timespec){ (ms) / 1000, (ms) % 1000 * 1000000L }, NULL)

/* CPU only, a leaf: the innermost frame of its samples. */
unsigned long crunch_numbers(double until)
{
	unsigned long x = 88172645463325252ul, i;

	do {
		for (i = 0; i < 200000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	} while (now() < until);
	return x;
}

unsigned long hold_lock(void)
{
	unsigned long sum = 0;
	double until;

	while (!over()) {
		pthread_mutex_lock(&lock);
		until = now() + 0.8;
		sum += crunch_numbers(until < deadline ? until : deadline);
		pthread_mutex_unlock(&lock);
		sleep_ms(50);
	}
	return sum;
}

void wait_for_lock(void)
{
	while (!over()) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		sleep_ms(20);
	}
}

void write_pipe(void)
{
	while (!over()) {
		if (write(pipefd[1], "tick\n", 5) != 5)
			break;
		sleep_ms(250);
	}
	close(pipefd[1]);
}

void read_pipe(void)
{
	char buf[64];

	while (read(pipefd[0], buf, sizeof(buf)) > 0)
		;
}

void nap(void)
{
	while (!over())
		sleep_ms(100);
}

int direct_write(int fd, void *buf)
{
	return pwrite(fd, buf, DIO_SIZE, 0) == DIO_SIZE ? 0 : -1;
}

int direct_read(int fd, void *buf)
{
	return pread(fd, buf, DIO_SIZE, 0) == DIO_SIZE ? 0 : -1;
}

void direct_io(void)
{
	char path[4096];
	void *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/demo-dio.dat", dio_dir);
	if (posix_memalign(&buf, 4096, DIO_SIZE))
		return;
	memset(buf, 'x', DIO_SIZE);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0) {
		fprintf(stderr, "demo: %s refuses O_DIRECT (%s): no direct I/O in this run\n",
			dio_dir, strerror(errno));
		free(buf);
		return;
	}
	while (!over() && !direct_write(fd, buf) && !direct_read(fd, buf))
		sleep_ms(100);
	close(fd);
	unlink(path);
	free(buf);
}

static void *run(void *arg)
{
	void (*fn)(void) = arg;

	fn();
	return NULL;
}

static const struct {
	const char *name;
	void (*fn)(void);
} roles[] = {
	{ "demo-waiter", wait_for_lock }, { "demo-writer", write_pipe },
	{ "demo-reader", read_pipe },     { "demo-sleeper", nap },
	{ "demo-dio", direct_io },
};

#define NROLES (sizeof(roles) / sizeof(roles[0]))

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[1]) : 0;
	pthread_t t[NROLES];
	pid_t py = -1;
	size_t i;

	if ((argc != 3 && argc != 5) || seconds <= 0) {
		fprintf(stderr, "usage: demo SECONDS DIR [PYTHON PY]\n");
		return 2;
	}
	dio_dir = argv[2];
	deadline = now() + seconds;
	if (pipe(pipefd))
		return 1;
	if (argc == 5) {
		char until[32]; /* the same deadline: time.monotonic() is CLOCK_MONOTONIC */
		char *pargv[] = { argv[3], argv[4], until, NULL };

		snprintf(until, sizeof(until), "%.6f", deadline);

		if (posix_spawnp(&py, argv[3], NULL, NULL, pargv, environ)) {
			fprintf(stderr, "demo: cannot run %s: the Python part is left out\n",
				argv[3]);
			py = -1;
		}
	}
	for (i = 0; i < NROLES; i++) {
		if (pthread_create(&t[i], NULL, run, roles[i].fn))
			return 1;
		pthread_setname_np(t[i], roles[i].name);
	}
	hold_lock();
	for (i = 0; i < NROLES; i++)
		pthread_join(t[i], NULL);
	if (py > 0)
		waitpid(py, NULL, 0);
	return 0;
}
