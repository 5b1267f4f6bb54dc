// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writing the pack (FORMAT.md §4.18-4.22): per binary hit, in the order
 * first met, its PACK_OBJECT once an address of it is named, each symbol
 * once (PACK_SYMBOL), each address (PACK_ADDR) with DWARF's chain; then the
 * JIT entries that hold JIT hits (PACK_JIT); PACK_INFO last. Names and
 * source files are STRINGs through the capture's interner. A bound or the
 * size limit leaves the rest out, counted in PACK_INFO.left_out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack_int.h"
#include "util/array.h"

struct pk_sym {
	uint64_t start;
	uint32_t object;
	uint32_t name_id;
	uint32_t id;
};

struct pk_writer {
	struct packer *p;
	struct cap_writer *w;
	struct intern *in;
	struct hashtab syms;  /* of struct pk_sym */
	struct hashtab jdone; /* of uint64_t: JIT entries written (index) */
	uint32_t nobjects;
	uint32_t jit_pid;     /* the pid whose JIT hits are being written */
	bool jit_pid_wrote;
	bool full;            /* the size limit was reached */
};

static int put(struct pk_writer *pw, uint16_t type, const void *fixed, size_t len,
	       const void *tail, size_t tail_len)
{
	int err;

	if (pw->full)
		return CAP_ERR_FULL;
	err = cap_writer__append(pw->w, type, fixed, len, tail, tail_len);
	if (err == CAP_ERR_FULL)
		pw->full = true;
	return err < 0 ? err : 0;
}

/* STRING id of s, 0 for NULL or a name too long to keep (counted). */
static int string_id(struct pk_writer *pw, const char *s, uint32_t *id)
{
	size_t len = s ? strlen(s) : 0;
	int err;

	*id = 0;
	if (!s)
		return 0;
	if (len > CAP_MAX_STRING) {
		pw->p->info.left_out++;
		return 0;
	}
	if (pw->full)
		return CAP_ERR_FULL;
	err = intern__string(pw->in, s, len, id);
	if (err == CAP_ERR_FULL)
		pw->full = true;
	return err;
}

static uint64_t sym_hash(const struct pk_sym *k)
{
	return hashtab__mix(k->start ^ ((uint64_t)k->object << 32 | k->name_id));
}

static bool sym_eq(const void *ent, const void *key)
{
	const struct pk_sym *a = ent, *b = key;

	return a->start == b->start && a->object == b->object && a->name_id == b->name_id;
}

/* PACK_SYMBOL id of the raw answer's symbol, written when new; 0 none. */
static int symbol_id(struct pk_writer *pw, uint32_t object, const struct sym_raw *raw,
		     uint32_t *id)
{
	struct pk_sym k = { .start = raw->sym_start, .object = object }, *e;
	struct cap_pack_symbol rec;
	int err;

	*id = 0;
	err = string_id(pw, raw->sym_name, &k.name_id);
	if (err || !k.name_id)
		return err;
	err = hashtab__upsert(&pw->syms, sym_hash(&k), &k, sym_eq, (void **)&e);
	if (err <= 0) {
		*id = err ? 0 : e->id;
		return err < 0 ? err : 0;
	}
	k.id = pw->syms.nr;
	*e = k;
	rec = (struct cap_pack_symbol){ .id = k.id, .object = object, .name_id = k.name_id,
					.start = raw->sym_start, .size = raw->sym_size };
	err = put(pw, CAP_REC_PACK_SYMBOL, &rec, sizeof(rec), NULL, 0);
	if (err) {
		hashtab__delete(&pw->syms, e); /* not written: not there to refer to */
		return err;
	}
	pw->p->info.symbols++;
	*id = k.id;
	return 0;
}

/* PACK_OBJECT, at the first named address of the object. */
static int put_object(struct pk_writer *pw, struct pk_obj *o, bool dwarf)
{
	struct cap_pack_object rec = {
		.id = pw->nobjects + 1, .path_id = o->path_id,
		.build_id_size = o->build_id_size, .flags = dwarf ? CAP_PACK_OBJ_DWARF : 0,
	};
	int err;

	memcpy(rec.build_id, o->build_id, sizeof(rec.build_id));
	err = put(pw, CAP_REC_PACK_OBJECT, &rec, sizeof(rec), NULL, 0);
	if (err)
		return err;
	o->id = ++pw->nobjects;
	pw->p->info.objects++;
	return 0;
}

static int put_address(struct pk_writer *pw, const struct pk_obj *o, uint64_t off,
		       const struct sym_raw *raw)
{
	struct cap_pack_addr a = { .offset = off, .object = o->id, .nr = raw->nframes };
	struct cap_pack_frame f[CAP_PACK_MAX_FRAMES];
	int i, err;

	err = symbol_id(pw, o->id, raw, &a.symbol);
	for (i = 0; !err && i < raw->nframes; i++) {
		f[i].line = raw->frames[i].line > 0 ? raw->frames[i].line : 0;
		err = string_id(pw, raw->frames[i].name, &f[i].name_id) ?:
		      string_id(pw, raw->frames[i].file, &f[i].file_id);
	}
	if (err)
		return err;
	if (!a.symbol && !(a.nr && f[a.nr - 1].name_id)) {
		pw->p->info.left_out++; /* what named it was too long to keep */
		return 0;
	}
	err = put(pw, CAP_REC_PACK_ADDR, &a, sizeof(a), f, a.nr * sizeof(*f));
	if (!err)
		pw->p->info.addresses++;
	return err;
}

static int cmp_hit(const void *pa, const void *pb)
{
	const struct pk_hit *a = pa, *b = pb;

	if (a->who != b->who)
		return a->who < b->who ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* A table of hits as an array sorted by (object or pid, offset). */
static struct pk_hit *sorted_hits(const struct hashtab *t)
{
	struct pk_hit *v = malloc((t->nr ? t->nr : 1) * sizeof(*v)), *e;
	size_t pos, n = 0;

	if (!v)
		return NULL;
	hashtab__for_each(t, pos, e)
		v[n++] = *e;
	if (n)
		qsort(v, n, sizeof(*v), cmp_hit);
	return v;
}

/* One (object, offset): named through sym/, written when it names. */
static int pack_address(struct pk_writer *pw, const struct pk_hit *h)
{
	struct packer *p = pw->p;
	struct pk_obj *o = &p->objs[h->who];
	struct sym_raw raw;
	bool dwarf = false;
	int n;

	if (p->info.addresses >= CAP_PACK_MAX_ADDRS) {
		p->info.left_out++;
		return 0;
	}
	n = symbolizer__lookup_raw(p->sym, p->sarena + o->path_off, o->build_id,
				   o->build_id_size, h->off, &raw, &dwarf);
	if (n <= 0) {
		p->info.unnamed += !n;
		return n;
	}
	if (!o->id) {
		n = put_object(pw, o, dwarf);
		if (n)
			return n;
	}
	return put_address(pw, o, h->off, &raw);
}

static int pack_objects(struct pk_writer *pw)
{
	struct pk_hit *v = sorted_hits(&pw->p->hits);
	size_t i, n = pw->p->hits.nr;
	int err = v ? 0 : -ENOMEM;

	for (i = 0; !err && i < n; i++) {
		err = pack_address(pw, &v[i]);
		if (err == CAP_ERR_FULL) {
			pw->p->info.left_out += n - i;
			err = 0;
			break;
		}
	}
	free(v);
	return err;
}

static int put_jit(void *ctx, uint64_t time, size_t idx, const struct jit_entry *e)
{
	struct pk_writer *pw = ctx;
	struct cap_pack_jit rec = {
		.start = e->start, .size = e->size, .time = time, .pid = pw->jit_pid,
		.name_len = e->name_len,
	};
	uint64_t key = idx, *slot;
	int err;

	err = hashtab__upsert(&pw->jdone, hashtab__mix(key), &key, pk_u64_eq, (void **)&slot);
	if (err <= 0)
		return err;
	*slot = key;
	if (pw->p->info.jit_entries >= CAP_PACK_MAX_JIT) {
		pw->p->info.left_out++;
		return 0;
	}
	err = put(pw, CAP_REC_PACK_JIT, &rec, sizeof(rec), e->name, e->name_len);
	if (err)
		return err;
	pw->p->info.jit_entries++;
	pw->p->info.jit_maps += !pw->jit_pid_wrote;
	pw->jit_pid_wrote = true;
	return 0;
}

/* A new pid's JIT hits: its map as kept (read at its exit, or carried
 * over from an old pack), else as it is now. */
static int jit_pid(struct pk_writer *pw, uint32_t pid)
{
	struct packer *p = pw->p;
	int err = 0;

	pw->jit_pid = pid;
	pw->jit_pid_wrote = false;
	if (!jitmaps__has(p->jm, pid))
		err = jitmaps__read(p->jm, p->o.symfs, pid, p->o.now);
	if (err == -E2BIG)
		p->info.left_out++;
	/* a map that cannot be read names nothing; that is all */
	return err == -ENOMEM ? err : 0;
}

static int pack_jit(struct pk_writer *pw)
{
	struct pk_hit *v = sorted_hits(&pw->p->jhits);
	size_t i, n = pw->p->jhits.nr;
	int err = v ? 0 : -ENOMEM;

	for (i = 0; !err && i < n; i++) {
		if (!i || v[i].who != v[i - 1].who)
			err = jit_pid(pw, v[i].who);
		if (!err)
			err = jitmaps__lookup(pw->p->jm, v[i].who, v[i].off, put_jit, pw);
		if (err == CAP_ERR_FULL) {
			pw->p->info.left_out += n - i;
			err = 0;
			break;
		}
		pw->p->info.unnamed += err == 0;
		err = err < 0 ? err : 0;
	}
	free(v);
	return err;
}

int pack__write(struct packer *p, struct cap_writer *w, struct intern *in,
		struct cap_pack_info *info)
{
	struct pk_writer pw = { .p = p, .w = w, .in = in };
	struct symbolizer_stats st;
	int err;

	if (p->err) /* pack__feed()'s */
		return p->err;
	hashtab__init(&pw.syms, sizeof(struct pk_sym));
	hashtab__init(&pw.jdone, sizeof(uint64_t));
	memset(&p->info, 0, sizeof(p->info));
	err = pk_find_hits(p);
	if (!err)
		err = pack_objects(&pw);
	if (!err)
		err = pack_jit(&pw);
	symbolizer__stats(p->sym, &st);
	p->info.objects_missing = st.modules_missing - st.modules_packed;
	if (!err) {
		pw.full = false; /* PACK_INFO fits past the limit (§5.3) */
		err = put(&pw, CAP_REC_PACK_INFO, &p->info, sizeof(p->info), NULL, 0);
	}
	hashtab__free(&pw.syms);
	hashtab__free(&pw.jdone);
	if (info)
		*info = p->info;
	return err;
}
