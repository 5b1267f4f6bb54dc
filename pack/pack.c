// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The symbol pack (FORMAT.md §4.18-4.22), once the capture is scanned:
 *
 * Hits: each distinct (process, user stack) of the events maps every frame
 * through every mapping of the process that holds it (the report picks one
 * of them by time; packing all of them costs a few extra records and never
 * misses one), else the fork parent's, to (binary, lookup offset); a frame
 * in anonymous memory or in none is a JIT hit (process, lookup address).
 *
 * Names: sym/ gives each (binary, offset) its raw answer -- the covering
 * symbol and DWARF's inline chain with lines -- from the binary and its
 * debug files (or from the pack being replaced, for binaries gone), and the
 * PACK records carry it as is; JIT hits take the entries of the process's
 * perf maps that contain them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack_int.h"
#include "util/array.h"
#include "util/ranges.h"

_Static_assert(SYM_RAW_MAX_FRAMES == CAP_PACK_MAX_FRAMES, "a raw chain fits a PACK_ADDR");

_Static_assert(offsetof(struct pk_map, start) == 0, "ranges__after() reads start first");

#define FORK_DEPTH_MAX 16 /* parent chains of hostile files may loop */

/* Object key: a build ID, or a path. */
struct pk_objkey {
	uint32_t idx;
};

struct objkey_probe {
	const struct packer *p;
	const uint8_t *id;
	uint8_t size;
	const char *path;
};

uint64_t pk_hit_hash(const struct pk_hit *h)
{
	return hashtab__mix(h->off ^ ((uint64_t)h->who << 40 | (uint64_t)h->who >> 24));
}

bool pk_hit_eq(const void *ent, const void *key)
{
	const struct pk_hit *a = ent, *b = key;

	return a->off == b->off && a->who == b->who;
}

int pack__new(const struct pack_opts *o, struct packer **out)
{
	struct symbolizer_opts so = {
		.symfs = o->symfs, .debug_dir = o->debug_dir, .inlines = true,
		.srclines = true, .debuginfod = true, .raw_names = true,
	};
	struct packer *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->o = *o;
	hashtab__init(&p->strs, sizeof(struct pk_def));
	hashtab__init(&p->stacks, sizeof(struct pk_def));
	hashtab__init(&p->procs, sizeof(struct pk_proc));
	hashtab__init(&p->pairs, sizeof(uint64_t));
	hashtab__init(&p->refs, sizeof(uint32_t));
	hashtab__init(&p->obj_ids, sizeof(struct pk_objkey));
	hashtab__init(&p->hits, sizeof(struct pk_hit));
	hashtab__init(&p->jhits, sizeof(struct pk_hit));
	p->jm = o->jit;
	err = symbolizer__new(&so, &p->sym);
	if (!err && !p->jm) {
		err = jitmaps__new(&p->jm);
		p->own_jm = true;
	}
	if (err) {
		pack__free(p);
		return err;
	}
	*out = p;
	return 0;
}

void pack__free(struct packer *p)
{
	if (!p)
		return;
	pack_scan__free(p);
	hashtab__free(&p->obj_ids);
	hashtab__free(&p->hits);
	hashtab__free(&p->jhits);
	free(p->objs);
	symbolizer__free(p->sym);
	if (p->own_jm)
		jitmaps__free(p->jm);
	free(p);
}

int pack__scan(struct packer *p, const char *path)
{
	int err = pack_scan__file(p, path);

	if (!err && p->has_pack && p->o.old_pack)
		err = p->o.old_pack(p->o.old_pack_ctx, p->sym, p->jm);
	return err;
}

void pack__set_jit(struct packer *p, struct jitmaps *jm, uint64_t now)
{
	if (jm && p->own_jm)
		jitmaps__free(p->jm);
	if (jm) {
		p->jm = p->o.jit = jm;
		p->own_jm = false;
	}
	p->o.now = now;
}

void pack__usage(const struct packer *p, struct pack_usage *u)
{
	pack_scan__usage(p, u);
}

/* ---- hits ----------------------------------------------------------------- */

static uint64_t objkey_hash(const uint8_t *id, uint8_t size, const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull ^ size;
	size_t i;

	if (size) {
		for (i = 0; i < size; i++)
			h = (h ^ id[i]) * 0x100000001b3ull;
	} else {
		for (; *path; path++)
			h = (h ^ (uint8_t)*path) * 0x100000001b3ull;
	}
	return hashtab__mix(h);
}

static bool objkey_eq(const void *ent, const void *key)
{
	const struct objkey_probe *k = key;
	const struct pk_obj *o = &k->p->objs[((const struct pk_objkey *)ent)->idx];

	if (o->build_id_size != k->size)
		return false;
	return k->size ? !memcmp(o->build_id, k->id, k->size) :
			 !strcmp(k->p->sarena + o->path_off, k->path);
}

/* The object of a file mapping (added when new), or -1 when its path was
 * never defined. */
static long object_of(struct packer *p, const struct pk_map *m)
{
	const char *path = pack_scan__string(p, m->path_id);
	struct objkey_probe k = { p, m->build_id, m->build_id_size, path };
	uint64_t h;
	struct pk_objkey *e;
	struct pk_obj *o;
	int err;

	if (!path)
		return -1;
	if (ARRAY_RESERVE(p->objs, p->objs_cap, p->nobjs + 1))
		return -ENOMEM;
	h = objkey_hash(k.id, k.size, path);
	err = hashtab__upsert(&p->obj_ids, h, &k, objkey_eq, (void **)&e);
	if (err < 0)
		return err;
	if (!err)
		return e->idx;
	e->idx = p->nobjs;
	o = &p->objs[p->nobjs++];
	memset(o, 0, sizeof(*o));
	o->path_id = m->path_id;
	o->path_off = path - p->sarena;
	o->build_id_size = m->build_id_size;
	memcpy(o->build_id, m->build_id, sizeof(o->build_id));
	return e->idx;
}

/* One more hit in a table bounded at max entries: past it, counted. */
static int add_hit(struct packer *p, struct hashtab *t, uint32_t who, uint64_t off, size_t max)
{
	struct pk_hit k = { .off = off, .who = who }, *e;
	int err;

	if (t->nr >= max) {
		if (!hashtab__find(t, pk_hit_hash(&k), &k, pk_hit_eq))
			p->info.left_out++;
		return 0;
	}
	err = hashtab__upsert(t, pk_hit_hash(&k), &k, pk_hit_eq, (void **)&e);
	if (err > 0)
		*e = k;
	return err < 0 ? err : 0;
}

/* Every mapping of proc holding ip; returns how many were files. */
static int hit_in(struct packer *p, const struct pk_proc *proc, uint32_t pid, uint64_t ip,
		  bool caller, bool *any)
{
	const struct pk_map *v = p->maps + proc->first;
	long i = (long)ranges__after(v, proc->n, sizeof(*v), ip) - 1, obj;
	int files = 0, err;

	for (; i >= 0 && v[i].maxend > ip; i--) {
		if (ip >= v[i].end)
			continue;
		*any = true;
		if (v[i].anon)
			continue;
		obj = object_of(p, &v[i]);
		if (obj == -ENOMEM)
			return obj;
		if (obj < 0)
			continue;
		err = add_hit(p, &p->hits, obj,
			      sym_lookup_offset(ip - v[i].start + v[i].pgoff, caller),
			      CAP_PACK_MAX_ADDRS);
		if (err)
			return err;
		files++;
	}
	return files;
}

/* One frame of pid: its own mappings, else those of its fork parents; a
 * frame no file mapping holds is a JIT hit. */
static int hit_frame(struct packer *p, uint32_t pid, uint64_t ip, bool caller)
{
	const struct pk_proc *proc;
	uint32_t q = pid;
	bool any = false;
	int files = 0, depth;

	for (depth = 0; q && !any && depth < FORK_DEPTH_MAX; depth++) {
		proc = pack_scan__proc(p, q);
		if (!proc)
			break;
		files = proc->n ? hit_in(p, proc, pid, ip, caller, &any) : 0;
		if (files < 0)
			return files;
		q = proc->ppid;
	}
	if (files)
		return 0;
	return add_hit(p, &p->jhits, pid, sym_lookup_offset(ip, caller), CAP_PACK_MAX_JIT);
}

int pk_find_hits(struct packer *p)
{
	const uint64_t *pair, *ips;
	size_t pos;
	int i, nr, err = pack_scan__index(p);

	if (err)
		return err;
	hashtab__for_each(&p->pairs, pos, pair) {
		nr = pack_scan__stack(p, (uint32_t)*pair, &ips);
		for (i = 0; i < nr; i++) {
			if (ips[i] == UINT64_MAX)
				continue; /* §4.3: the unwinder's "truncated" marker */
			err = hit_frame(p, *pair >> 32, ips[i], i > 0);
			if (err)
				return err;
		}
	}
	return 0;
}
