// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Who woke each wait (FORMAT.md §4.23): every off-CPU interval is joined
 * to the last WAKEUP of its thread inside it, and a wakeup that ran in a
 * block request's completion to that request's BIO record. Built once at
 * load (model_wake_finish()), then read-only like the rest of the model.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "report/model_int.h"
#include "util/array.h"

int model_on_wakeup(struct model *m, const struct cap_wakeup *w)
{
	uint64_t end = w->time;

	if (end > m->last_event)
		m->last_event = end;
	return ARRAY_PUSH(m->wakeups, m->nr_wakeups, m->wakeups_cap, *w);
}

/* Wakeups by (tid, time), as indexes into m->wakeups. */
static int cmp_wakeup(const void *pa, const void *pb, void *arg)
{
	const struct model *m = arg;
	const struct cap_wakeup *a = &m->wakeups[*(const uint32_t *)pa];
	const struct cap_wakeup *b = &m->wakeups[*(const uint32_t *)pb];

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

/* The last of the sorted wakeups of tid at or before t, or -1. */
static ssize_t last_before(const struct model *m, const uint32_t *by, uint32_t tid, uint64_t t)
{
	size_t lo = 0, hi = m->nr_wakeups, mid;
	const struct cap_wakeup *w;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		w = &m->wakeups[by[mid]];
		if (w->tid < tid || (w->tid == tid && w->time <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || m->wakeups[by[lo - 1]].tid != tid)
		return -1;
	return lo - 1;
}

static int join_waits(struct model *m, const uint32_t *by)
{
	const struct cap_offcpu *o;
	ssize_t j;
	size_t i;

	if (m->streamed)
		return 0; /* no interval kept to join: model__waker() looks each up */
	m->waker_of = calloc(m->nr_offcpu ? m->nr_offcpu : 1, sizeof(*m->waker_of));
	if (!m->waker_of)
		return -ENOMEM;
	for (i = 0; i < m->nr_offcpu; i++) {
		o = &m->offcpu[i];
		j = last_before(m, by, o->tid, o->start + o->duration);
		if (j >= 0 && m->wakeups[by[j]].time >= o->start)
			m->waker_of[i] = by[j] + 1;
	}
	return 0;
}

/* BIO records by completion time, for the requests wakeups name. */
static int index_bios(struct model *m)
{
	uint64_t *slot;
	size_t i;
	int ret;

	for (i = 0; i < m->nr_bio; i++) {
		ret = idmap__upsert(&m->bio_by_done, m->bio[i].complete_time, m->bio[i].sector, i,
				    &slot);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int model_wake_finish(struct model *m)
{
	uint32_t *by;
	size_t i;

	if (!m->nr_wakeups)
		return 0;
	by = malloc(m->nr_wakeups * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (i = 0; i < m->nr_wakeups; i++)
		by[i] = i;
	qsort_r(by, m->nr_wakeups, sizeof(*by), cmp_wakeup, m);
	m->wake_by = by;
	return join_waits(m, by) ?: index_bios(m);
}

const struct cap_wakeup *model__wakeups(const struct model *m, size_t *n)
{
	*n = m->nr_wakeups;
	return m->wakeups;
}

const struct cap_wakeup *model__waker(const struct model *m, const struct cap_offcpu *e)
{
	ssize_t j;
	size_t i;

	/* e one of the held intervals? (compared as addresses: a copy is
	 * another object, which pointer comparison does not order) */
	i = ((uintptr_t)e - (uintptr_t)m->offcpu) / sizeof(*e);
	if (m->waker_of && (uintptr_t)e >= (uintptr_t)m->offcpu && i < m->nr_offcpu &&
	    e == m->offcpu + i)
		return m->waker_of[i] ? &m->wakeups[m->waker_of[i] - 1] : NULL;
	/* a copy, or a streamed model's: the same join, looked up */
	if (!m->wake_by)
		return NULL;
	j = last_before(m, m->wake_by, e->tid, e->start + e->duration);
	if (j < 0 || m->wakeups[m->wake_by[j]].time < e->start)
		return NULL;
	return &m->wakeups[m->wake_by[j]];
}

const struct cap_bio *model__wakeup_bio(const struct model *m, const struct cap_wakeup *w)
{
	const uint64_t *i;
	const struct cap_bio *b;

	if (!(w->flags & CAP_WAKEUP_F_IO))
		return NULL;
	i = idmap__find(&m->bio_by_done, w->io_complete_time, w->io_sector);
	if (!i || *i >= m->nr_bio)
		return NULL;
	b = &m->bio[*i];
	return b->major == w->io_major && b->minor == w->io_minor ? b : NULL;
}
