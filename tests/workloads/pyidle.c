// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: a program that loads a libpython and never starts its
 * interpreter, as perf and gdb do (both link it for their scripting). It
 * loads LIBPYTHON, waits 300 ms for the recorder to read it, prints
 * "ready pid N", then sleeps in pyidle_nap() 5 ms at a time for TOTAL_MS.
 * usage: pyidle LIBPYTHON [TOTAL_MS]   (default 1000); exit 3 when the
 * library does not load.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void pyidle_nap(void)
{
	struct timespec ts = { 0, 5000000 };

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	long long end;
	long total_ms = argc > 2 ? atol(argv[2]) : 1000;

	if (argc < 2 || !dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "pyidle: %s\n", argc < 2 ? "usage: pyidle LIBPYTHON [TOTAL_MS]" :
			dlerror());
		return 3;
	}
	usleep(300000);
	printf("ready pid %d\n", getpid());
	fflush(stdout);
	end = now_ns() + total_ms * 1000000ll;
	while (now_ns() < end)
		pyidle_nap();
	return 0;
}
