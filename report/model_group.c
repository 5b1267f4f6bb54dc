// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * model_opts.group_events: a streamed model's off-CPU intervals and CPU
 * samples grouped as the load reads them, by all that the views group and
 * filter them by but their thread's name and time: kind, process, thread,
 * stacks, cgroup, and an interval's state and open flags. A view that
 * filters by nothing else (filter__groups()) folds these groups into
 * its own instead of reading the events again (model__replay()), which
 * reads the capture once where the replay reads it twice.
 *
 * A group keeps what the views keep of their groups' events: count, sum,
 * the first event's time, and the first event with the largest value, by
 * its number in the file, so that groups merged in a view break ties as
 * the events would. The thread's name and the process's image (pprof's
 * key) are views' keys too, and they depend on the time:
 * model_group_finish() makes the groups unusable (the views then replay)
 * when a group's events span two names or an exec.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/model_int.h"
#include "util/array.h"
#include "util/hashtab.h"

struct group_ent {
	struct model_group_key k;
	uint64_t idx; /* in m->groups */
};

static uint64_t key_hash(const struct model_group_key *k)
{
	return hashtab__mix(((uint64_t)k->tid << 32 | k->ustack) ^
			    ((uint64_t)k->kstack << 32 | k->state) * 0x9e3779b97f4a7c15ull ^
			    k->cgroup * 0xc2b2ae3d27d4eb4full ^
			    ((uint64_t)k->pid << 32 | k->open << 1 | k->kind) * 0x165667b19e3779f9ull);
}

static bool key_eq_key(const struct model_group_key *a, const struct model_group_key *b)
{
	return a->tid == b->tid && a->ustack == b->ustack && a->kstack == b->kstack &&
	       a->pid == b->pid && a->cgroup == b->cgroup && a->state == b->state &&
	       a->open == b->open && a->kind == b->kind;
}

static bool key_eq(const void *ent, const void *key)
{
	return key_eq_key(&((const struct group_ent *)ent)->k, key);
}

/* group_of()'s search of the table, and the new group when none is. */
static struct model_group *group_find(struct model *m, const struct model_group_key *k,
				      uint64_t time, uint64_t own, bool *is_new)
{
	uint64_t *last = &m->group_last[k->tid % MODEL_GROUP_LAST];
	struct group_ent *e;
	int ret;

	m->group_tab.esize = sizeof(*e);
	ret = hashtab__upsert(&m->group_tab, key_hash(k), k, key_eq, (void **)&e);
	if (ret < 0)
		return NULL;
	*is_new = ret;
	if (!ret) {
		*last = e->idx;
		return &m->groups[e->idx];
	}
	e->k = *k;
	e->idx = m->nr_groups;
	if (ARRAY_RESERVE(m->groups, m->groups_cap, m->nr_groups + 1)) {
		hashtab__delete(&m->group_tab, e);
		return NULL;
	}
	*last = m->nr_groups;
	m->groups[m->nr_groups] = (struct model_group){ .k = *k, .first_time = time,
							.first_start = own, .t_min = UINT64_MAX };
	return &m->groups[m->nr_groups++];
}

/* The group of key, created with the event's times when new (time as a
 * view places it, own its own). A thread's events come in runs of one
 * group: its last one is tried first, inline. */
static inline struct model_group *group_of(struct model *m, const struct model_group_key *k,
					   uint64_t time, uint64_t own, bool *is_new)
{
	uint64_t last = m->group_last[k->tid % MODEL_GROUP_LAST];

	if (last < m->nr_groups && key_eq_key(&m->groups[last].k, k)) {
		*is_new = false;
		return &m->groups[last];
	}
	return group_find(m, k, time, own, is_new);
}

/* One event into g: value at time (as a view places it), own: its own
 * time (switch-out, sample), the thread's name's. */
static void group_add(struct model *m, struct model_group *g, bool is_new, uint64_t value,
		      uint64_t own, const struct cap_offcpu *e)
{
	uint64_t seq = m->group_seq++;

	if (is_new || value > g->max) {
		g->max = value;
		g->max_seq = seq;
		if (e)
			g->max_offcpu = *e;
	}
	g->count++;
	g->total += value;
	if (own < g->t_min)
		g->t_min = own;
	if (own > g->t_max)
		g->t_max = own;
}

int model_group_offcpu(struct model *m, const struct cap_offcpu *e)
{
	struct model_group_key k = { .pid = e->pid, .tid = e->tid, .ustack = e->ustack,
				     .kstack = e->kstack, .state = e->state, .open = e->open,
				     .cgroup = e->cgroup, .kind = CAP_KIND_OFFCPU };
	uint64_t from, value = model_offcpu_seen(m, e, &from);
	struct model_group *g;
	bool is_new;

	g = group_of(m, &k, from, e->start, &is_new);
	if (!g)
		return -ENOMEM;
	group_add(m, g, is_new, value, e->start, e);
	return 0;
}

int model_group_cpu(struct model *m, const struct cap_cpu *e)
{
	struct model_group_key k = { .pid = e->pid, .tid = e->tid, .ustack = e->ustack,
				     .kstack = e->kstack, .cgroup = e->cgroup,
				     .kind = CAP_KIND_CPU };
	struct model_group *g;
	bool is_new;

	g = group_of(m, &k, e->time, e->time, &is_new);
	if (!g)
		return -ENOMEM;
	group_add(m, g, is_new, 1, e->time, NULL);
	return 0;
}

/* Does tid have one name from t_min to t_max (model__comm_id())? */
static bool one_name(const struct model *m, uint32_t tid, uint64_t t_min, uint64_t t_max)
{
	uint64_t from, to;
	uint32_t comm = model__comm_span(m, tid, t_min, &from, &to);

	while (to <= t_max) {
		if (model__comm_span(m, tid, to, &from, &to) != comm)
			return false;
	}
	return true;
}

void model_group_finish(struct model *m)
{
	size_t i;

	for (i = 0; m->grouped && i < m->nr_groups; i++) {
		const struct model_group *g = &m->groups[i];

		if (!one_name(m, g->k.tid, g->t_min, g->t_max) ||
		    model__exec_epoch(m, g->k.pid, g->t_min) !=
			    model__exec_epoch(m, g->k.pid, g->t_max))
			m->grouped = false;
	}
}

uint64_t model_group_bytes(const struct model *m)
{
	return m->groups_cap * sizeof(*m->groups) + hashtab__bytes(&m->group_tab);
}

void model_group_free(struct model *m)
{
	hashtab__free(&m->group_tab);
	free(m->groups);
}

const struct model_group *model__groups(const struct model *m, size_t *n)
{
	*n = m->grouped ? m->nr_groups : 0;
	return m->grouped ? m->groups : NULL;
}

const struct cap_offcpu *model__group_offcpu(const struct model_group *g)
{
	return &g->max_offcpu;
}

void model__group_cpu(const struct model_group *g, struct cap_cpu *out)
{
	*out = (struct cap_cpu){ .time = g->first_start, .tid = g->k.tid, .pid = g->k.pid,
				 .ustack = g->k.ustack, .kstack = g->k.kstack,
				 .cgroup = g->k.cgroup };
}
