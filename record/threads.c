// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which name each thread last had in the capture, so a THREAD record is
 * written when a tid first shows up or its comm changes, and not per event.
 * A util/hashtab.h table keyed by tid; tids are dense small integers, so a
 * multiplicative hash spreads them well.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/threads.h"
#include "util/procstatus.h"

#define THREADS_MIN 2048u /* entries before the first growth */

/* In the upper half, where the table takes its tag and slot from: dense
 * tids then land on distinct slots (an odd multiplier permutes the low
 * bits), which a 64-bit mix would not promise. */
static inline uint64_t tid_hash(uint32_t tid)
{
	return (uint64_t)(uint32_t)(tid * 2654435761u) << 32;
}

static bool tid_eq(const void *ent, const void *key)
{
	return ((const struct thread_slot *)ent)->tid == *(const uint32_t *)key;
}

int threads__init(struct thread_table *t)
{
	hashtab__init(&t->tab, sizeof(struct thread_slot));
	return hashtab__reserve(&t->tab, THREADS_MIN);
}

void threads__free(struct thread_table *t)
{
	hashtab__free(&t->tab);
}

/* On allocation failure the table stays as it is: the thread is then
 * reported again, never missed. */
static void thread_add(struct thread_table *t, uint64_t hash, uint32_t tid,
		       uint32_t pid, const char *comm)
{
	struct thread_slot n = { .tid = tid, .pid = pid };

	memcpy(n.comm, comm, STKREC_COMM_LEN); /* comm is always 16 bytes */
	hashtab__insert(&t->tab, hash, &n, NULL);
}

bool threads__changed(struct thread_table *t, uint32_t tid, uint32_t pid, const char *comm)
{
	uint64_t hash = tid_hash(tid);
	struct thread_slot *s = hashtab__find(&t->tab, hash, &tid, tid_eq);

	if (!s) {
		thread_add(t, hash, tid, pid, comm);
		return true;
	}
	if (s->pid == pid && !strncmp(s->comm, comm, STKREC_COMM_LEN))
		return false;
	s->pid = pid;
	memcpy(s->comm, comm, STKREC_COMM_LEN);
	return true;
}

int threads__ns_ids(uint32_t tid, uint32_t *ns_tid, uint32_t *ns_pid)
{
	struct proc_status st;
	int err = proc_status__read(tid, &st);

	*ns_tid = st.ns_tid;
	*ns_pid = st.ns_pid;
	return err ? err : st.ns_tid && st.ns_pid ? 0 : -ENOENT;
}
