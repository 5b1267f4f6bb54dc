/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which name each thread last had in the capture (threads.c). */
#ifndef STKREC_RECORD_THREADS_H
#define STKREC_RECORD_THREADS_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/stkrec.h"
#include "util/hashtab.h"

/* tid -> last comm written in a THREAD record. */
struct thread_slot {
	uint32_t tid;
	uint32_t pid;
	char comm[STKREC_COMM_LEN];
};

/* Threads seen, as the THREADS STAT counts them: tab.nr (none is ever
 * removed). */
struct thread_table {
	struct hashtab tab; /* of struct thread_slot */
};

int threads__init(struct thread_table *t);
void threads__free(struct thread_table *t);
/* true when tid is new or its comm/pid changed; the table is updated. */
bool threads__changed(struct thread_table *t, uint32_t tid, uint32_t pid, const char *comm);
/* A live thread's tid and pid in its own PID namespace, from the last
 * fields of NSpid and NStgid in /proc/TID/status: 0, or -errno (gone). The
 * THREAD records of the /proc scan and the side band take them so; events
 * carry them from the kernel. */
int threads__ns_ids(uint32_t tid, uint32_t *ns_tid, uint32_t *ns_pid);

#endif
