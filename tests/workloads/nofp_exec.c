// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload, built without frame pointers: forks a child that burns
 * MS milliseconds of CPU time in main -> start_child -> child_burn ->
 * child_step, then execs PROG ARGS (another fp-less workload) in place;
 * the parent waits for it in main -> reap.
 * usage: nofp_exec MS PROG [ARGS...]
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "nofp_common.h"

#define UNIT 400000

volatile unsigned long nofp_sink;

NOFP_FN unsigned long child_step(unsigned long x)
{
	int i;

	for (i = 0; i < UNIT; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	nofp_sink = x;
	return x;
}

NOFP_FN unsigned long child_burn(long ms)
{
	long long end = nofp_thread_cpu_ns() + ms * 1000000ll;
	unsigned long x = 3;

	while (nofp_thread_cpu_ns() < end)
		x = child_step(x);
	return x;
}

NOFP_FN pid_t start_child(long ms, char **argv)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	nofp_sink = child_burn(ms);
	execv(argv[0], argv);
	perror("nofp_exec: exec");
	_exit(127);
}

NOFP_FN int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	long ms = nofp_ms(argc, argv, 1, 1000);
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: nofp_exec MS PROG [ARGS...]\n");
		return 2;
	}
	fflush(stdout);
	pid = start_child(ms, argv + 2);
	if (pid < 0) {
		perror("nofp_exec: fork");
		return 1;
	}
	return reap(pid);
}
