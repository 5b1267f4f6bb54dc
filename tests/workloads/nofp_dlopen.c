// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload, built without frame pointers: sleeps DELAY_MS (so that a
 * recorder started with it is running), then dlopen()s LIB (nofp_lib.so)
 * and burns MS milliseconds of CPU time in main -> run_lib -> lib_outer ->
 * lib_burn, the last two in the library.
 * usage: nofp_dlopen LIB [DELAY_MS [MS]]   (default 500 2000)
 */
#include <dlfcn.h>
#include <stdio.h>
#include "nofp_common.h"

volatile unsigned long nofp_sink;

NOFP_FN int pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	return nanosleep(&ts, NULL);
}

NOFP_FN unsigned long run_lib(unsigned long (*fn)(unsigned long), long ms)
{
	long long end = nofp_thread_cpu_ns() + ms * 1000000ll;
	unsigned long x = 1;

	while (nofp_thread_cpu_ns() < end)
		x = fn(x);
	return x;
}

int main(int argc, char **argv)
{
	long delay = nofp_ms(argc, argv, 2, 500), ms = nofp_ms(argc, argv, 3, 2000);
	unsigned long (*fn)(unsigned long);
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: nofp_dlopen LIB [DELAY_MS [MS]]\n");
		return 2;
	}
	pause_ms(delay);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "nofp_dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (unsigned long (*)(unsigned long))dlsym(lib, "lib_outer");
	if (!fn) {
		fprintf(stderr, "nofp_dlopen: %s\n", dlerror());
		return 1;
	}
	nofp_sink = run_lib(fn, ms);
	dlclose(lib);
	return 0;
}
