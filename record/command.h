/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The recorded command: forked held, released once recording (command.c). */
#ifndef STKREC_RECORD_COMMAND_H
#define STKREC_RECORD_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

/* The recorded command. */
struct record_cmd {
	pid_t pid;       /* 0: none */
	int go_fd;       /* write end: one byte releases the child */
	int err_fd;      /* read end: errno of a failed exec, EOF on success */
	int pidfd;       /* readable once it exits, or -1 */
	int status;      /* wait status once reaped */
	bool reaped;
};

int command__fork_held(struct record_cmd *c, char *const argv[]);
int command__release(struct record_cmd *c);
/* Reap without blocking: 1 when it has exited (status set), else 0. */
int command__poll(struct record_cmd *c);
/* Exit status of the reaped command (128 + signal when killed), else -1. */
int command__status(const struct record_cmd *c);
void command__kill(struct record_cmd *c);
void command__close(struct record_cmd *c);

#endif
