// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorded command: forked early and held on a pipe, so its pid can be
 * put in the BPF filter before it runs a single instruction of its own;
 * released once everything is attached. A second, close-on-exec pipe
 * carries the errno of a failed exec back, so "command not found" is an
 * error of the recorder rather than a silent exit status 127.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record/command.h"

static void child(int go_rd, int err_wr, char *const argv[])
{
	char c;
	int e;

	if (read(go_rd, &c, 1) != 1)
		_exit(127); /* the recorder gave up before releasing us */
	close(go_rd);
	/* the recorder ignores SIGPIPE (a capture pipe's reader may go);
	 * exec would pass that on, and the command is to run as it would */
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	e = errno;
	if (write(err_wr, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int command__fork_held(struct record_cmd *c, char *const argv[])
{
	int go[2], err[2];
	pid_t pid;

	c->pid = 0;
	c->go_fd = c->err_fd = c->pidfd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return e;
	}
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		child(go[0], err[1], argv);
	}
	close(go[0]);
	close(err[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	c->pidfd = syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

int command__release(struct record_cmd *c)
{
	ssize_t n;
	int e = 0;

	if (write(c->go_fd, "g", 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	do {
		n = read(c->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == sizeof(e))
		return -e;
	return 0;
}

int command__poll(struct record_cmd *c)
{
	int status;
	pid_t p;

	if (!c->pid || c->reaped)
		return c->reaped;
	p = waitpid(c->pid, &status, WNOHANG);
	if (p != c->pid)
		return 0;
	c->status = status;
	c->reaped = true;
	return 1;
}

/* The recorder failed or was stopped first: do not leave the command held
 * or running unrecorded. */
void command__kill(struct record_cmd *c)
{
	if (!c->pid || c->reaped)
		return;
	if (c->go_fd >= 0) {
		close(c->go_fd); /* a held child exits on EOF */
		c->go_fd = -1;
	} else {
		kill(c->pid, SIGTERM);
	}
	if (waitpid(c->pid, &c->status, 0) == c->pid)
		c->reaped = true;
}

void command__close(struct record_cmd *c)
{
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->go_fd = c->err_fd = c->pidfd = -1;
}

/* Exit status of the reaped command (128 + signal when killed), else -1. */
int command__status(const struct record_cmd *c)
{
	if (!c->pid || !c->reaped)
		return -1;
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	return 128 + WTERMSIG(c->status);
}
