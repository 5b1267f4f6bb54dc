// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A symbol pack loaded into the symbolizer: per object (build ID, or path
 * when there is none) a table of raw answers (symbol, DWARF chain) by
 * lookup offset, exactly as sym/symbolize.c would compute them from the
 * binary. Only offsets held are ever answered: the pack's symbols are not a
 * symbol table, and another symbol of the binary may cover other offsets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_int.h"
#include "util/array.h"

struct sym_paddr {
	uint64_t offset;
	const char *sym_name;
	uint64_t sym_start;
	uint64_t sym_size;
	uint32_t first; /* in sym_pack.frames */
	uint32_t n;
};

static uint64_t off_hash(uint64_t off)
{
	return hashtab__mix(off);
}

static bool off_eq(const void *ent, const void *key)
{
	return ((const struct sym_paddr *)ent)->offset == *(const uint64_t *)key;
}

int sym_pack__object(struct sym_pack *p, const char *path, const uint8_t *id,
		     uint8_t id_size, bool dwarf, uint32_t *out)
{
	struct sym_pobj *o;

	if (!path || id_size > SYM_BUILD_ID_MAX || (id_size && !id))
		return -EINVAL;
	if (ARRAY_RESERVE(p->objs, p->objs_cap, p->nobjs + 1))
		return -ENOMEM;
	o = &p->objs[p->nobjs];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	if (id_size)
		memcpy(o->build_id, id, id_size);
	o->build_id_size = id_size;
	o->dwarf = dwarf;
	hashtab__init(&o->addrs, sizeof(struct sym_paddr));
	*out = p->nobjs++;
	return 0;
}

int sym_pack__address(struct sym_pack *p, uint32_t obj, uint64_t off,
		      const struct sym_raw *raw)
{
	struct sym_paddr *a;
	int n = raw->nframes, err;

	if (obj >= p->nobjs || n < 0 || n > SYM_RAW_MAX_FRAMES)
		return -EINVAL;
	if (ARRAY_RESERVE(p->frames, p->frames_cap, p->nframes + n))
		return -ENOMEM;
	err = hashtab__upsert(&p->objs[obj].addrs, off_hash(off), &off, off_eq, (void **)&a);
	if (err <= 0)
		return err;
	a->offset = off;
	a->sym_name = raw->sym_name;
	a->sym_start = raw->sym_start;
	a->sym_size = raw->sym_size;
	a->first = p->nframes;
	a->n = n;
	if (n) /* frames may still be NULL */
		memcpy(p->frames + p->nframes, raw->frames, n * sizeof(*raw->frames));
	p->nframes += n;
	return 1;
}

long sym_pack__find(const struct sym_pack *p, const char *path, const uint8_t *id,
		    uint8_t id_size)
{
	size_t i;

	for (i = 0; i < p->nobjs; i++) {
		const struct sym_pobj *o = &p->objs[i];

		if (o->build_id_size != id_size)
			continue;
		if (id_size ? !memcmp(o->build_id, id, id_size) : !strcmp(o->path, path))
			return i;
	}
	return -1;
}

int sym_pack__raw(const struct sym_pack *p, long obj, uint64_t off, struct sym_raw *out)
{
	const struct sym_paddr *a;

	if (obj < 0 || (size_t)obj >= p->nobjs)
		return 0;
	a = hashtab__find(&p->objs[obj].addrs, off_hash(off), &off, off_eq);
	if (!a)
		return 0;
	out->sym_name = a->sym_name;
	out->sym_start = a->sym_start;
	out->sym_size = a->sym_size;
	out->nframes = a->n;
	if (a->n)
		memcpy(out->frames, p->frames + a->first, a->n * sizeof(*out->frames));
	return 1;
}

bool sym_pack__dwarf(const struct sym_pack *p, long obj)
{
	return obj >= 0 && (size_t)obj < p->nobjs && p->objs[obj].dwarf;
}

void sym_pack__free(struct sym_pack *p)
{
	size_t i;

	for (i = 0; i < p->nobjs; i++) {
		free(p->objs[i].path);
		hashtab__free(&p->objs[i].addrs);
	}
	free(p->objs);
	free(p->frames);
	memset(p, 0, sizeof(*p));
}
