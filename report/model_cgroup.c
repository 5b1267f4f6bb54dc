// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cgroups of a capture (CGROUP, FORMAT.md §4.25), as the model holds
 * them: each id's path in the string pool and its container, named once
 * at load (report/container.h). Hostile input: the reader checked the
 * path's length against the record; the first of two definitions of an
 * id stands; ids are only ever looked up, never used as indexes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/model_int.h"
#include "util/array.h"

int model_cgroup_record(struct model *m, const struct cap_record *r)
{
	const struct cap_cgroup *c = &r->cgroup;
	struct model_cgroup g = { .id = c->id, .time = c->time, .flags = c->flags };
	uint64_t *val;
	int err;

	if (!c->id)
		return 0; /* 0 is "unknown" in events: it names nothing */
	err = idmap__upsert(&m->cgroup_ids, c->id, 0, m->nr_cgroups, &val);
	if (err <= 0)
		return err;
	err = model_pool_add(m, r->tail ? r->tail : "", r->tail ? r->tail_len : 0,
			     &g.path_off);
	if (err)
		return err;
	container__parse(m->pool + g.path_off, &g.ctr);
	return ARRAY_PUSH(m->cgroups, m->nr_cgroups, m->cgroups_cap, g);
}

uint64_t model_cgroup_bytes(const struct model *m)
{
	return m->cgroups_cap * sizeof(*m->cgroups) + idmap__bytes(&m->cgroup_ids);
}

void model_cgroup_free(struct model *m)
{
	idmap__fini(&m->cgroup_ids);
	free(m->cgroups);
}

size_t model__nr_cgroups(const struct model *m)
{
	return m->nr_cgroups;
}

int model__cgroup(const struct model *m, size_t i, struct model_cgroup_info *out)
{
	const struct model_cgroup *g;

	if (i >= m->nr_cgroups)
		return -ENOENT;
	g = &m->cgroups[i];
	*out = (struct model_cgroup_info){ .id = g->id, .time = g->time, .flags = g->flags,
					   .path = m->pool + g->path_off, .container = &g->ctr };
	return 0;
}

long model__cgroup_index(const struct model *m, uint64_t id)
{
	const uint64_t *v = id ? idmap__find(&m->cgroup_ids, id, 0) : NULL;

	return v && *v < m->nr_cgroups ? (long)*v : -1;
}

const char *model__cgroup_path(const struct model *m, uint64_t id)
{
	long i = model__cgroup_index(m, id);

	return i < 0 ? NULL : m->pool + m->cgroups[i].path_off;
}

const struct container *model__cgroup_container(const struct model *m, uint64_t id)
{
	long i = model__cgroup_index(m, id);

	return i < 0 ? NULL : &m->cgroups[i].ctr;
}
