// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The symbol pack of a capture (FORMAT.md §4.18-4.22), as the model holds
 * it: objects, symbols and addresses kept as read, their ids looked up when
 * asked (so a definition that arrives out of order or never costs only a
 * name), and JIT map entries sorted by pid, the time their map was read and
 * file order. Hostile input: every id through a hash table, the first of
 * two definitions stands, nothing indexed by a value from the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/model_int.h"
#include "sym/sym.h"
#include "util/array.h"

static int on_object(struct model *m, const struct cap_pack_object *r)
{
	struct model_pobj o = {
		.id = r->id, .path_id = r->path_id, .flags = r->flags,
		.build_id_size = r->build_id_size < 20 ? r->build_id_size : 20,
	};
	uint64_t *val;
	int err;

	memcpy(o.build_id, r->build_id, sizeof(o.build_id));
	err = idmap__upsert(&m->pobj_ids, r->id, 0, m->nr_pobjs, &val);
	if (err <= 0)
		return err;
	return ARRAY_PUSH(m->pobjs, m->nr_pobjs, m->pobjs_cap, o);
}

static int on_symbol(struct model *m, const struct cap_pack_symbol *r)
{
	struct model_psym s = { .name_id = r->name_id, .start = r->start, .size = r->size };
	uint64_t *val;
	int err;

	err = idmap__upsert(&m->psym_ids, r->id, 0, m->nr_psyms, &val);
	if (err <= 0)
		return err;
	return ARRAY_PUSH(m->psyms, m->nr_psyms, m->psyms_cap, s);
}

static int on_addr(struct model *m, const struct cap_record *r)
{
	struct model_paddr a = {
		.offset = r->pack_addr.offset, .object = r->pack_addr.object,
		.symbol = r->pack_addr.symbol, .first = m->nr_pframes, .nr = r->pack_addr.nr,
	};

	/* the reader checked nr against CAP_PACK_MAX_FRAMES and the record */
	if (ARRAY_RESERVE(m->pframes, m->pframes_cap, m->nr_pframes + a.nr))
		return -ENOMEM;
	if (a.nr) /* pframes may still be NULL */
		memcpy(m->pframes + m->nr_pframes, r->frames, a.nr * sizeof(*r->frames));
	m->nr_pframes += a.nr;
	return ARRAY_PUSH(m->paddrs, m->nr_paddrs, m->paddrs_cap, a);
}

static int on_jit(struct model *m, const struct cap_record *r)
{
	struct model_jit j = {
		.start = r->pack_jit.start, .size = r->pack_jit.size, .time = r->pack_jit.time,
		.pid = r->pack_jit.pid, .seq = m->nr_jits,
	};
	int err;

	if (!j.size || j.start + j.size < j.start || !r->tail_len)
		return 0; /* covers nothing, or no name to give */
	err = model_pool_add(m, r->tail, r->tail_len, &j.name_off);
	return err ? err : ARRAY_PUSH(m->jits, m->nr_jits, m->jits_cap, j);
}

int model_pack_record(struct model *m, const struct cap_record *r)
{
	switch (r->type) {
	case CAP_REC_PACK_OBJECT:
		return on_object(m, &r->pack_object);
	case CAP_REC_PACK_SYMBOL:
		return on_symbol(m, &r->pack_symbol);
	case CAP_REC_PACK_ADDR:
		return on_addr(m, r);
	case CAP_REC_PACK_JIT:
		return on_jit(m, r);
	case CAP_REC_PACK_INFO:
		if (!m->has_pack_info)
			m->pack_info = r->pack_info;
		m->has_pack_info = true;
		return 0;
	}
	return 0;
}

static int cmp_jit(const void *pa, const void *pb)
{
	const struct model_jit *a = pa, *b = pb;

	if (a->pid != b->pid)
		return model_cmp_u64(a->pid, b->pid);
	if (a->time != b->time)
		return model_cmp_u64(a->time, b->time);
	return model_cmp_u64(a->seq, b->seq);
}

static uint64_t jit_key(const struct model *m, size_t i)
{
	return m->jits[i].pid;
}

int model_pack_finish(struct model *m)
{
	if (m->nr_jits)
		qsort(m->jits, m->nr_jits, sizeof(*m->jits), cmp_jit);
	return model_index_runs(m, &m->jit_ids, m->nr_jits, jit_key);
}

uint64_t model_pack_bytes(const struct model *m)
{
	return m->pobjs_cap * sizeof(*m->pobjs) + m->psyms_cap * sizeof(*m->psyms) +
	       m->paddrs_cap * sizeof(*m->paddrs) + m->pframes_cap * sizeof(*m->pframes) +
	       m->jits_cap * sizeof(*m->jits) + idmap__bytes(&m->pobj_ids) +
	       idmap__bytes(&m->psym_ids);
}

void model_pack_free(struct model *m)
{
	idmap__fini(&m->pobj_ids);
	idmap__fini(&m->psym_ids);
	idmap__fini(&m->jit_ids);
	free(m->pobjs);
	free(m->psyms);
	free(m->paddrs);
	free(m->pframes);
	free(m->jits);
}

size_t model__pack_objects(const struct model *m)
{
	return m->nr_pobjs;
}

int model__pack_object(const struct model *m, size_t i, const char **path,
		       const uint8_t **build_id, uint8_t *build_id_size, bool *dwarf)
{
	const struct model_pobj *o;

	if (i >= m->nr_pobjs)
		return -ENOENT;
	o = &m->pobjs[i];
	*path = model__string(m, o->path_id);
	if (!*path)
		*path = "";
	*build_id = o->build_id;
	*build_id_size = o->build_id_size;
	*dwarf = o->flags & CAP_PACK_OBJ_DWARF;
	return 0;
}

size_t model__pack_addresses(const struct model *m)
{
	return m->nr_paddrs;
}

/* §4.20: the raw answer as the symbolizer would give it. */
static void addr_raw(const struct model *m, const struct model_paddr *a, struct sym_raw *raw)
{
	const uint64_t *si = a->symbol ? idmap__find(&m->psym_ids, a->symbol, 0) : NULL;
	const struct cap_pack_frame *f = a->nr ? m->pframes + a->first : NULL;
	uint32_t i;

	memset(raw, 0, sizeof(*raw));
	if (si) {
		raw->sym_name = model__string(m, m->psyms[*si].name_id);
		raw->sym_start = m->psyms[*si].start;
		raw->sym_size = m->psyms[*si].size;
	}
	raw->nframes = a->nr;
	for (i = 0; i < a->nr; i++) {
		raw->frames[i].name = f[i].name_id ? model__string(m, f[i].name_id) : NULL;
		raw->frames[i].file = f[i].file_id ? model__string(m, f[i].file_id) : NULL;
		raw->frames[i].line = f[i].line <= INT32_MAX ? (int)f[i].line : 0;
		raw->frames[i].inlined = i + 1 < a->nr;
	}
}

int model__pack_address(const struct model *m, size_t i, size_t *obj, uint64_t *offset,
			struct sym_raw *raw)
{
	const struct model_paddr *a;
	const uint64_t *oi;

	if (i >= m->nr_paddrs)
		return -ENOENT;
	a = &m->paddrs[i];
	oi = idmap__find(&m->pobj_ids, a->object, 0);
	if (!oi)
		return -ESRCH;
	*obj = *oi;
	*offset = a->offset;
	addr_raw(m, a, raw);
	return 0;
}

int model__pack_load(const struct model *m, struct symbolizer *s)
{
	size_t i, obj;
	uint32_t *handle = m->nr_pobjs ? calloc(m->nr_pobjs, sizeof(*handle)) : NULL;
	const uint8_t *id;
	struct sym_raw raw;
	uint64_t off;
	uint8_t idn;
	const char *path;
	bool dwarf;
	int err = m->nr_pobjs && !handle ? -ENOMEM : 0;

	for (i = 0; !err && i < m->nr_pobjs; i++) {
		model__pack_object(m, i, &path, &id, &idn, &dwarf);
		err = symbolizer__pack_object(s, path, id, idn, dwarf, &handle[i]);
	}
	for (i = 0; !err && i < m->nr_paddrs; i++) {
		if (model__pack_address(m, i, &obj, &off, &raw))
			continue; /* its object was never defined */
		err = symbolizer__pack_address(s, handle[obj], off, &raw);
		err = err < 0 ? err : 0;
	}
	free(handle);
	return err;
}

size_t model__jit_entries(const struct model *m)
{
	return m->nr_jits;
}

void model__jit_entry(const struct model *m, size_t i, uint32_t *pid, uint64_t *time,
		      uint64_t *start, uint64_t *size)
{
	*pid = m->jits[i].pid;
	*time = m->jits[i].time;
	*start = m->jits[i].start;
	*size = m->jits[i].size;
}

const struct cap_pack_info *model__pack_info(const struct model *m)
{
	return m->has_pack_info ? &m->pack_info : NULL;
}

/* §4.21: of pid's entries containing addr, those of the first map read at
 * or after `time`, else of the last map; in that map, the last written. */
long model__jit_find(const struct model *m, uint32_t pid, uint64_t time, uint64_t addr,
		     bool *timeless)
{
	const uint64_t *range = idmap__find(&m->jit_ids, pid, 0);
	long best = -1;
	size_t i, start, end;

	*timeless = true;
	if (!range)
		return -1;
	start = RANGE_START(*range);
	end = start + RANGE_COUNT(*range);
	*timeless = m->jits[start].time == m->jits[end - 1].time;
	for (i = start; i < end; i++) {
		const struct model_jit *j = &m->jits[i];

		if (addr - j->start >= j->size)
			continue;
		/* sorted by time then order: a later entry of the same map, or
		 * of a later map while the best one's was read before `time` */
		if (best < 0 || j->time == m->jits[best].time || m->jits[best].time < time)
			best = i;
	}
	return best;
}

const char *model__jit_name(const struct model *m, long entry)
{
	return m->pool + m->jits[entry].name_off;
}

uint32_t model__jit_pid(const struct model *m, long entry)
{
	return m->jits[entry].pid;
}
