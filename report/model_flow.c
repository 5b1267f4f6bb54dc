// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The waits of every thread ordered by (tid, end), to find what a waker
 * was itself waiting on just before it woke a thread: one hop of a wait
 * chain. Built on demand by the views that follow chains, from the
 * read-only model.
 */
#include <errno.h>
#include <stdlib.h>
#include "report/model.h"

struct wait_index {
	const struct cap_offcpu *e; /* model__offcpu() */
	uint32_t *by_end;           /* indexes into e */
	size_t n;
};

static uint64_t end_of(const struct cap_offcpu *e)
{
	return e->start + e->duration;
}

static int cmp_end(const void *pa, const void *pb, void *arg)
{
	const struct cap_offcpu *e = arg;
	const struct cap_offcpu *a = &e[*(const uint32_t *)pa], *b = &e[*(const uint32_t *)pb];

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return end_of(a) < end_of(b) ? -1 : end_of(a) > end_of(b);
}

int wait_index__new(const struct model *m, struct wait_index **out)
{
	struct wait_index *w = calloc(1, sizeof(*w));
	size_t i;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->e = model__offcpu(m, &w->n);
	w->by_end = malloc((w->n ? w->n : 1) * sizeof(*w->by_end));
	if (!w->by_end) {
		free(w);
		return -ENOMEM;
	}
	for (i = 0; i < w->n; i++)
		w->by_end[i] = i;
	if (w->n)
		qsort_r(w->by_end, w->n, sizeof(*w->by_end), cmp_end, (void *)w->e);
	*out = w;
	return 0;
}

const struct cap_offcpu *wait_index__before(const struct wait_index *w, uint32_t tid,
					    uint64_t t)
{
	size_t lo = 0, hi = w->n, mid;
	const struct cap_offcpu *e;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		e = &w->e[w->by_end[mid]];
		if (e->tid < tid || (e->tid == tid && end_of(e) <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && w->e[w->by_end[lo - 1]].tid == tid ? &w->e[w->by_end[lo - 1]] : NULL;
}

void wait_index__free(struct wait_index *w)
{
	if (w)
		free(w->by_end);
	free(w);
}
