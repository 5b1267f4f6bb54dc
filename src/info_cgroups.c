// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cgroups of a capture for `stkrec info` (info_cgroups.h): a table of
 * ids, the first CGROUP record's path of each, and the events of each kind
 * that carry it (a wakeup counts for the thread it woke). Listed by path,
 * those never named (and the unknown cgroup, id 0) last by id.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/container.h"
#include "report/views.h"
#include "src/info_cgroups.h"
#include "util/escape.h"

struct info_cgroup {
	uint64_t id;
	char *path;        /* NULL until a CGROUP record names it */
	uint32_t flags;
	uint64_t events[CAP_KIND_MAX];
};

static bool id_eq(const void *ent, const void *key)
{
	return ((const struct info_cgroup *)ent)->id == *(const uint64_t *)key;
}

void info_cgroups__init(struct info_cgroups *c)
{
	memset(c, 0, sizeof(*c));
	hashtab__init(&c->t, sizeof(struct info_cgroup));
}

void info_cgroups__free(struct info_cgroups *c)
{
	struct info_cgroup *g;
	size_t pos;

	hashtab__for_each(&c->t, pos, g)
		free(g->path);
	hashtab__free(&c->t);
}

static struct info_cgroup *get(struct info_cgroups *c, uint64_t id)
{
	struct info_cgroup *g;
	int ret = hashtab__upsert(&c->t, hashtab__mix(id), &id, id_eq, (void **)&g);

	if (ret < 0)
		return NULL;
	g->id = id;
	return g;
}

static void count(struct info_cgroups *c, uint64_t id, enum cap_kind kind)
{
	struct info_cgroup *g;

	c->any |= id != 0;
	g = get(c, id);
	if (g)
		g->events[kind]++;
}

void info_cgroups__add(struct info_cgroups *c, const struct cap_record *rec)
{
	struct info_cgroup *g;

	switch (rec->type) {
	case CAP_REC_OFFCPU:
		return count(c, rec->offcpu.cgroup, CAP_KIND_OFFCPU);
	case CAP_REC_CPU:
		return count(c, rec->cpu.cgroup, CAP_KIND_CPU);
	case CAP_REC_BIO:
		return count(c, rec->bio.cgroup, CAP_KIND_BIO);
	case CAP_REC_WAKEUP:
		return count(c, rec->wakeup.cgroup, CAP_KIND_WAKEUP);
	case CAP_REC_CGROUP:
		c->any = true;
		g = rec->cgroup.id ? get(c, rec->cgroup.id) : NULL;
		if (g && !g->path) { /* the first definition stands */
			g->path = strndup(rec->tail ? rec->tail : "", rec->tail_len);
			g->flags = rec->cgroup.flags;
		}
		return;
	}
}

static int cmp_cgroup(const void *pa, const void *pb)
{
	const struct info_cgroup *a = *(const struct info_cgroup *const *)pa;
	const struct info_cgroup *b = *(const struct info_cgroup *const *)pb;
	int c;

	if (!a->path != !b->path)
		return a->path ? -1 : 1;
	if (a->path && (c = strcmp(a->path, b->path)))
		return c;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The table's entries, sorted; NULL (nothing listed) without memory. */
static struct info_cgroup **sorted(const struct info_cgroups *c, size_t *n)
{
	struct info_cgroup **v = malloc((c->t.nr + 1) * sizeof(*v)), *g;
	size_t pos;

	*n = 0;
	if (!v)
		return NULL;
	hashtab__for_each(&c->t, pos, g)
		v[(*n)++] = g;
	qsort(v, *n, sizeof(*v), cmp_cgroup);
	return v;
}

void info_cgroups__print_text(const struct info_cgroups *c)
{
	char name[300], id[40];
	struct info_cgroup **v;
	struct container ctr;
	size_t i, n;

	if (!c->any)
		return;
	v = sorted(c, &n);
	for (i = 0; v && i < n; i++) {
		const uint64_t *e = v[i]->events;

		container__parse(v[i]->path, &ctr);
		snprintf(id, sizeof(id), v[i]->id ? "[cgroup %" PRIu64 "]" : "[unknown]", v[i]->id);
		printf("cgroup:       ");
		esc__fputs(v[i]->path ? v[i]->path : id, stdout);
		printf(": offcpu %" PRIu64 ", cpu %" PRIu64 ", bio %" PRIu64 ", wakeup %" PRIu64,
		       e[CAP_KIND_OFFCPU], e[CAP_KIND_CPU], e[CAP_KIND_BIO], e[CAP_KIND_WAKEUP]);
		if (ctr.kind != CONTAINER_NONE) {
			printf("; ");
			esc__fputs(container__name(&ctr, name, sizeof(name)), stdout);
		}
		printf("%s\n", v[i]->flags & CAP_CGROUP_F_REMOVED ? "; removed while recording" :
		       "");
	}
	free(v);
}

void info_cgroups__print_json(const struct info_cgroups *c)
{
	struct info_cgroup **v;
	struct container ctr;
	size_t i, n;

	if (!c->any)
		return;
	v = sorted(c, &n);
	printf("\"cgroups\":[");
	for (i = 0; v && i < n; i++) {
		const uint64_t *e = v[i]->events;

		container__parse(v[i]->path, &ctr);
		printf("%s{\"id\":%" PRIu64 ",\"path\":", i ? "," : "", v[i]->id);
		if (v[i]->path) {
			putchar('"');
			view_json_chars(stdout, v[i]->path);
			putchar('"');
		} else {
			printf("null");
		}
		printf(",\"runtime\":\"%s\",\"container_id\":\"", container__runtime(ctr.kind));
		view_json_chars(stdout, ctr.id);
		printf("\",\"pod_uid\":\"%s\",\"removed\":%s,\"events\":{\"offcpu\":%" PRIu64
		       ",\"cpu\":%" PRIu64 ",\"bio\":%" PRIu64 ",\"wakeup\":%" PRIu64 "}}",
		       ctr.pod_uid, v[i]->flags & CAP_CGROUP_F_REMOVED ? "true" : "false",
		       e[CAP_KIND_OFFCPU], e[CAP_KIND_CPU], e[CAP_KIND_BIO], e[CAP_KIND_WAKEUP]);
	}
	printf("],");
	free(v);
}
