// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which name each thread last had in the capture, so a THREAD record is
 * written when a tid first shows up or its comm changes, and not per event.
 * Open addressing keyed by tid; tids are dense small integers, so a
 * multiplicative hash spreads them well.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "record/threads.h"

#define THREADS_MIN 4096u

static inline uint32_t tid_hash(uint32_t tid)
{
	return tid * 2654435761u;
}

int threads__init(struct thread_table *t)
{
	t->slots = calloc(THREADS_MIN, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->mask = THREADS_MIN - 1;
	t->nr = 0;
	return 0;
}

void threads__free(struct thread_table *t)
{
	free(t->slots);
	t->slots = NULL;
}

static struct thread_slot *find(struct thread_slot *slots, uint32_t mask, uint32_t tid)
{
	uint32_t j = tid_hash(tid) & mask;

	while (slots[j].tid && slots[j].tid != tid)
		j = (j + 1) & mask;
	return &slots[j];
}

static int grow(struct thread_table *t)
{
	uint32_t size = (t->mask + 1) * 2, i;
	struct thread_slot *slots;

	slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++) {
		if (t->slots[i].tid)
			*find(slots, size - 1, t->slots[i].tid) = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->mask = size - 1;
	return 0;
}

bool threads__changed(struct thread_table *t, uint32_t tid, uint32_t pid, const char *comm)
{
	struct thread_slot *s = find(t->slots, t->mask, tid);

	if (s->tid) {
		if (s->pid == pid && !strncmp(s->comm, comm, STKREC_COMM_LEN))
			return false;
	} else {
		/* On allocation failure the table stays as it is: the
		 * thread is then reported again, never missed. */
		if ((t->nr + 1) * 2 > t->mask + 1 && grow(t) == 0)
			s = find(t->slots, t->mask, tid);
		if ((t->nr + 1) * 2 > t->mask + 1 && !s->tid)
			return true;
		s->tid = tid;
		t->nr++;
	}
	s->pid = pid;
	memcpy(s->comm, comm, STKREC_COMM_LEN); /* comm is always 16 bytes */
	return true;
}
