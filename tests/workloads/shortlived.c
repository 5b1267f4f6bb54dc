// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: forks and execs CHILD (default: shortlived_child next to
 * this program), which lives about 300 ms, and waits for it. A capture must
 * still know the child's executable and build ID after it is gone.
 * usage: shortlived [CHILD [MS]]
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char child[PATH_MAX], *slash;
	const char *ms = argc > 2 ? argv[2] : "300";
	int status;
	pid_t pid;

	if (argc > 1) {
		snprintf(child, sizeof(child), "%s", argv[1]);
	} else {
		if (!realpath("/proc/self/exe", child))
			return 1;
		slash = strrchr(child, '/');
		snprintf(slash + 1, sizeof(child) - (slash + 1 - child), "shortlived_child");
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execl(child, child, ms, (char *)NULL);
		perror("shortlived: exec");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	printf("child=%s\nchild_pid=%d\n", child, pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
