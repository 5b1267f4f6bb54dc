// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: JIT code as a runtime makes it, for the trust of JIT maps.
 * It copies a counting loop into anonymous executable memory, runs it for
 * about MS milliseconds, and describes it in /tmp/perf-PID.map as
 * "jit_spin_loop", a map that is:
 *   self     its own, written after it dropped to nobody's user when root
 *   nobody   chowned to nobody while the process stays root (as if another
 *            user had planted it)
 *   symlink  a symlink to a file of its own
 * x86-64 only (the loop is machine code). It leaves the map behind, as
 * runtimes do, for the recorder to read at its exit: the test removes it
 * (and the symlink's target, /tmp/stkrec-jitspin-PID.real).
 * usage: jitspin MODE [MS]   (default 1500)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOBODY 65534

/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const unsigned char loop_code[] = {
	0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3,
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int write_map(const char *path, void *code)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)code, sizeof(loop_code));
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long ms = argc > 2 ? atol(argv[2]) : 1500;
	char map[64], real[64];
	long (*fn)(long);
	long long end;
	void *code;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
	snprintf(real, sizeof(real), "/tmp/stkrec-jitspin-%d.real", getpid());
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || ms <= 0)
		return 2;
	memcpy(code, loop_code, sizeof(loop_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	if (!strcmp(mode, "self")) {
		if (!getuid() && (setgid(NOBODY) || setuid(NOBODY)))
			return 1;
		if (write_map(map, code))
			return 1;
	} else if (!strcmp(mode, "nobody")) {
		if (write_map(map, code) || chown(map, NOBODY, NOBODY))
			return 1;
	} else if (!strcmp(mode, "symlink")) {
		if (write_map(real, code) || symlink(real, map))
			return 1;
	} else {
		fprintf(stderr, "usage: jitspin self|nobody|symlink [MS]\n");
		return 2;
	}
	printf("pid=%d\n", getpid());
	fflush(stdout);
	fn = (long (*)(long))code;
	for (end = now_ns() + ms * 1000000ll; now_ns() < end;)
		fn(1000000);
	return 0;
}
