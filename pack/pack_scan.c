// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the packer collects from a capture's records: its strings, user
 * stacks, executable mappings per process, fork parents, the distinct
 * (process, user stack) pairs of its events, and which STRINGs records
 * other than the pack's use (a rewrite keeps those). Events themselves
 * are not kept. The records come from the file read back (pack__scan(),
 * stkrec pack) or as its writer takes them (pack__feed(), the recorder):
 * one parser, on_record(), for both. The file may be hostile (stkrec
 * pack): ids go through hash tables, the first of two definitions stands,
 * and what the reader refused never arrives here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack_int.h"
#include "util/array.h"

static uint64_t id_hash(uint32_t id)
{
	return hashtab__mix(id);
}

static bool def_eq(const void *ent, const void *key)
{
	return ((const struct pk_def *)ent)->id == *(const uint32_t *)key;
}

static bool u32_eq(const void *ent, const void *key)
{
	return *(const uint32_t *)ent == *(const uint32_t *)key;
}

static bool proc_eq(const void *ent, const void *key)
{
	return ((const struct pk_proc *)ent)->pid == *(const uint32_t *)key;
}

static int on_string(struct packer *p, const struct cap_record *r)
{
	struct pk_def *d;
	int err;

	if (r->string.id > p->max_string)
		p->max_string = r->string.id;
	if (ARRAY_RESERVE(p->sarena, p->scap, p->slen + r->tail_len + 1))
		return -ENOMEM;
	err = hashtab__upsert(&p->strs, id_hash(r->string.id), &r->string.id, def_eq,
			      (void **)&d);
	if (err <= 0)
		return err;
	*d = (struct pk_def){ .id = r->string.id, .len = r->tail_len, .off = p->slen };
	memcpy(p->sarena + p->slen, r->tail, r->tail_len);
	p->sarena[p->slen + r->tail_len] = 0; /* a writer's tail has none */
	p->slen += r->tail_len + 1;
	return 0;
}

static int on_stack(struct packer *p, const struct cap_record *r)
{
	struct pk_def *d;
	int err;

	if (r->stack.kind != CAP_STACK_USER)
		return 0;
	if (ARRAY_RESERVE(p->ips, p->ips_cap, p->nips + r->stack.nr))
		return -ENOMEM;
	err = hashtab__upsert(&p->stacks, id_hash(r->stack.id), &r->stack.id, def_eq,
			      (void **)&d);
	if (err <= 0)
		return err;
	*d = (struct pk_def){ .id = r->stack.id, .len = r->stack.nr, .off = p->nips };
	if (r->stack.nr) /* ips may still be NULL */
		memcpy(p->ips + p->nips, r->ips, r->stack.nr * sizeof(*r->ips));
	p->nips += r->stack.nr;
	return 0;
}

static int on_mapping(struct packer *p, const struct cap_mapping *m)
{
	struct pk_map k = {
		.start = m->start, .end = m->end, .pgoff = m->pgoff, .pid = m->pid,
		.path_id = m->path_id, .anon = m->flags & CAP_MAP_ANON,
		.build_id_size = m->build_id_size <= 20 ? m->build_id_size : 20,
	};

	if (m->end <= m->start)
		return 0;
	memcpy(k.build_id, m->build_id, sizeof(k.build_id));
	return ARRAY_PUSH(p->maps, p->nmaps, p->maps_cap, k);
}

static struct pk_proc *proc_get(struct packer *p, uint32_t pid)
{
	struct pk_proc *e;
	int err = hashtab__upsert(&p->procs, id_hash(pid), &pid, proc_eq, (void **)&e);

	if (err < 0)
		return NULL;
	e->pid = pid;
	return e;
}

/* A process's parent: its first FORK as a new process (as the report). */
static int on_fork(struct packer *p, const struct cap_fork *f)
{
	struct pk_proc *e;

	if (f->pid != f->tid || f->pid == f->ppid)
		return 0;
	e = proc_get(p, f->pid);
	if (!e)
		return -ENOMEM;
	if (!e->ppid)
		e->ppid = f->ppid;
	return 0;
}

static int add_pair(struct packer *p, uint32_t pid, uint32_t ustack)
{
	uint64_t key = (uint64_t)pid << 32 | ustack, *slot;

	/* a thread's events come in runs of the same stack */
	if (ustack == CAP_STACK_NONE || ustack == CAP_STACK_LOST || key == p->last_pair)
		return 0;
	if (hashtab__upsert(&p->pairs, hashtab__mix(key), &key, pk_u64_eq, (void **)&slot) < 0)
		return -ENOMEM;
	*slot = key;
	p->last_pair = key;
	return 0;
}

/* A STRING id a record other than the pack's refers to. */
static int add_ref(struct packer *p, uint32_t id)
{
	uint32_t *slot;

	if (!id)
		return 0;
	if (hashtab__upsert(&p->refs, id_hash(id), &id, u32_eq, (void **)&slot) < 0)
		return -ENOMEM;
	*slot = id;
	return 0;
}

static int on_record(struct packer *p, const struct cap_record *r)
{
	switch (r->type) {
	case CAP_REC_STRING:
		return on_string(p, r);
	case CAP_REC_STACK:
		return on_stack(p, r);
	case CAP_REC_MAPPING:
		return add_ref(p, r->mapping.path_id) ?: on_mapping(p, &r->mapping);
	case CAP_REC_FORK:
		return on_fork(p, &r->fork);
	case CAP_REC_OFFCPU:
		return add_pair(p, r->offcpu.pid, r->offcpu.ustack);
	case CAP_REC_CPU:
		return add_pair(p, r->cpu.pid, r->cpu.ustack);
	case CAP_REC_BIO:
		return add_pair(p, r->bio.pid, r->bio.ustack);
	case CAP_REC_KMOD:
		return add_ref(p, r->kmod.name_id);
	case CAP_REC_KSYM:
		return add_ref(p, r->ksym.module_id);
	case CAP_REC_STAT:
		return add_ref(p, r->stat.key_id);
	case CAP_REC_PACK_OBJECT:
	case CAP_REC_PACK_SYMBOL:
	case CAP_REC_PACK_ADDR:
	case CAP_REC_PACK_JIT:
	case CAP_REC_PACK_INFO:
		p->has_pack = true;
		return 0;
	}
	return 0;
}

static int cmp_map(const void *pa, const void *pb)
{
	const struct pk_map *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return 0;
}

/* Each process's mappings: sorted by start, indexed, with their max ends. */
int pack_scan__index(struct packer *p)
{
	size_t i = 0, j;

	if (p->nmaps)
		qsort(p->maps, p->nmaps, sizeof(*p->maps), cmp_map);
	while (i < p->nmaps) {
		struct pk_proc *e = proc_get(p, p->maps[i].pid);
		uint64_t maxend = 0;

		if (!e)
			return -ENOMEM;
		for (j = i; j < p->nmaps && p->maps[j].pid == p->maps[i].pid; j++) {
			maxend = p->maps[j].end > maxend ? p->maps[j].end : maxend;
			p->maps[j].maxend = maxend;
		}
		e->first = i;
		e->n = j - i;
		i = j;
	}
	return 0;
}

int pack_scan__file(struct packer *p, const char *path)
{
	struct cap_record rec;
	struct cap_reader *r;
	int ret, err = 0;

	ret = cap_reader__open(path, &r);
	if (ret)
		return ret;
	while (!err && (ret = cap_reader__next(r, &rec)) > 0)
		err = on_record(p, &rec);
	cap_reader__close(r);
	return err ? err : ret;
}

/* The record as the reader decodes one of this version's writers: the
 * type's struct (zero-extended if shorter), a STRING's bytes and a STACK's
 * frames the last of its tail, checked as the reader checks them. */
static bool decode(struct cap_record *r, uint16_t type, const void *fixed, size_t fixed_len,
		   const void *tail, size_t tail_len)
{
	size_t size = cap_rec_fixed_size(type), n;

	memset(r, 0, sizeof(*r));
	r->type = type;
	if (fixed_len)
		memcpy(r->raw, fixed, fixed_len < size ? fixed_len : size);
	switch (type) {
	case CAP_REC_STRING:
		n = r->string.len;
		if (n > CAP_MAX_STRING || n > tail_len)
			return false;
		r->tail = (const char *)tail + tail_len - n;
		r->tail_len = n;
		return true;
	case CAP_REC_STACK:
		n = (size_t)r->stack.nr * sizeof(*r->ips);
		if (r->stack.nr > CAP_MAX_STACK_DEPTH || n > tail_len)
			return false;
		r->ips = (const uint64_t *)((const char *)tail + tail_len - n);
		return true;
	}
	return size != 0;
}

/* An event, most of what a writer takes: its (process, user stack) read
 * where the writer's struct holds them, without decode()'s copy. False
 * for any other record. */
static bool feed_event(struct packer *p, uint16_t type, const void *fixed, size_t fixed_len)
{
	const struct cap_offcpu *o = fixed;
	const struct cap_cpu *c = fixed;
	const struct cap_bio *b = fixed;

	if (type == CAP_REC_OFFCPU && fixed_len >= sizeof(*o))
		p->err = add_pair(p, o->pid, o->ustack);
	else if (type == CAP_REC_CPU && fixed_len >= sizeof(*c))
		p->err = add_pair(p, c->pid, c->ustack);
	else if (type == CAP_REC_BIO && fixed_len >= sizeof(*b))
		p->err = add_pair(p, b->pid, b->ustack);
	else
		return false;
	return true;
}

int pack__feed(struct packer *p, uint16_t type, const void *fixed, size_t fixed_len,
	       const void *tail, size_t tail_len)
{
	struct cap_record r;

	if (p->err || feed_event(p, type, fixed, fixed_len))
		return p->err;
	if (decode(&r, type, fixed, fixed_len, tail, tail_len))
		p->err = on_record(p, &r);
	return p->err;
}

void pack_scan__usage(const struct packer *p, struct pack_usage *u)
{
	u->entries = p->strs.nr + p->stacks.nr + p->nmaps + p->procs.nr + p->pairs.nr +
		     p->refs.nr;
	u->bytes = hashtab__bytes(&p->strs) + hashtab__bytes(&p->stacks) +
		   hashtab__bytes(&p->procs) + hashtab__bytes(&p->pairs) +
		   hashtab__bytes(&p->refs) + p->scap + p->ips_cap * sizeof(*p->ips) +
		   p->maps_cap * sizeof(*p->maps);
}

const char *pack_scan__string(const struct packer *p, uint32_t id)
{
	const struct pk_def *d = hashtab__find(&p->strs, id_hash(id), &id, def_eq);

	return d ? p->sarena + d->off : NULL;
}

const struct pk_proc *pack_scan__proc(const struct packer *p, uint32_t pid)
{
	return hashtab__find(&p->procs, id_hash(pid), &pid, proc_eq);
}

int pack_scan__stack(const struct packer *p, uint32_t id, const uint64_t **ips)
{
	const struct pk_def *d = hashtab__find(&p->stacks, id_hash(id), &id, def_eq);

	if (!d)
		return -1;
	*ips = p->ips + d->off;
	return d->len;
}

bool pack_scan__referenced(const struct packer *p, uint32_t id)
{
	return hashtab__find(&p->refs, id_hash(id), &id, u32_eq) != NULL;
}

void pack_scan__free(struct packer *p)
{
	hashtab__free(&p->strs);
	hashtab__free(&p->stacks);
	hashtab__free(&p->procs);
	hashtab__free(&p->pairs);
	hashtab__free(&p->refs);
	free(p->sarena);
	free(p->ips);
	free(p->maps);
}
