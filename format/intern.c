// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * String and stack interning: a util/hashtab.h table of entries per kind of
 * value, the values themselves in one growing arena each. Every lookup
 * compares the full content, so two stacks never share an id (stack-id
 * maps can collide; this cannot).
 *
 * This runs once per event: the hash is a few multiply-rotates per frame,
 * the table stays at most half full, and a probe compares content only
 * when the slot's 32-bit tag matches the hash's (the comparison inlines
 * into hashtab__find()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "format/intern.h"
#include "util/array.h"
#include "util/hashtab.h"

struct ientry {
	size_t off;     /* into the arena: bytes (strings) or u64 slots (stacks) */
	uint32_t len;   /* bytes (strings) or frames (stacks) */
	uint32_t id;
	uint8_t kind;
};

/* What a probe compares an entry with: the value and the arena. */
struct string_key {
	const char *arena;
	const char *s;
	size_t len;
};

struct stack_key {
	const uint64_t *arena;
	const uint64_t *ips;
	uint16_t nr;
	uint8_t kind;
};

/* Values interned by their bytes (strings, PY_CODE bodies): struct ientry
 * entries, the bytes in one arena. */
struct btable {
	struct hashtab t;
	char *arena;
	size_t len, cap;
};

struct intern {
	struct cap_writer *w;
	struct btable strs;
	struct btable codes;   /* PY_CODE records less their id */
	char *code_buf;        /* one such record, being interned */
	struct hashtab stacks; /* of struct ientry */
	uint64_t *karena;
	size_t klen, kcap;
	intern_kstack_fn kstack_fn;
	void *kstack_ctx;
	struct intern_ids base; /* ids of new values start above these */
};

#define ITABLE_MIN 512u /* entries before the first growth */

static inline uint64_t rotl(uint64_t v, int r)
{
	return (v << r) | (v >> (64 - r));
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= rotl(v * 0x87c37b91114253d5ull, 31) * 0x4cf5ad432745937full;
	return rotl(h, 27) * 5 + 0x52dce729;
}

static uint64_t hash_stack(uint8_t kind, const uint64_t *ips, uint16_t nr)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)kind << 32) ^ nr;
	uint16_t i;

	for (i = 0; i < nr; i++)
		h = mix(h, ips[i]);
	return hashtab__mix(h);
}

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0x2545f4914f6cdd1dull ^ len, v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&v, s + i, 8);
		h = mix(h, v);
	}
	if (i < len) {
		v = 0;
		memcpy(&v, s + i, len - i);
		h = mix(h, v);
	}
	return hashtab__mix(h);
}

static bool string_eq(const void *ent, const void *key)
{
	const struct ientry *e = ent;
	const struct string_key *k = key;

	return e->len == k->len && !memcmp(k->arena + e->off, k->s, k->len);
}

static bool stack_eq(const void *ent, const void *key)
{
	const struct ientry *e = ent;
	const struct stack_key *k = key;

	return e->len == k->nr && e->kind == k->kind &&
	       !memcmp(k->arena + e->off, k->ips, k->nr * sizeof(*k->ips));
}

/* Room for one more entry, so that adding it after its record cannot fail. */
static int itable_reserve(struct hashtab *t)
{
	if (t->nr >= UINT32_MAX - 1)
		return -E2BIG;
	return hashtab__reserve(t, t->nr + 1);
}

static void itable_add(struct hashtab *t, uint64_t hash, const struct ientry *e)
{
	hashtab__insert(t, hash, e, NULL); /* cannot fail: itable_reserve() */
}

int intern__new(struct cap_writer *w, struct intern **out)
{
	struct intern *in;

	if (!w || !out)
		return CAP_ERR_INVAL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->w = w;
	hashtab__init(&in->strs.t, sizeof(struct ientry));
	hashtab__init(&in->codes.t, sizeof(struct ientry));
	hashtab__init(&in->stacks, sizeof(struct ientry));
	if (hashtab__reserve(&in->strs.t, ITABLE_MIN) ||
	    hashtab__reserve(&in->stacks, ITABLE_MIN)) {
		intern__free(in);
		return -ENOMEM;
	}
	*out = in;
	return 0;
}

void intern__free(struct intern *in)
{
	if (!in)
		return;
	hashtab__free(&in->strs.t);
	hashtab__free(&in->codes.t);
	hashtab__free(&in->stacks);
	free(in->strs.arena);
	free(in->codes.arena);
	free(in->code_buf);
	free(in->karena);
	free(in);
}

int intern__set_bases(struct intern *in, const struct intern_ids *base)
{
	if (in->strs.t.nr || in->stacks.nr || in->codes.t.nr)
		return CAP_ERR_INVAL;
	in->base = *base;
	return 0;
}

void intern__last_ids(const struct intern *in, struct intern_ids *ids)
{
	ids->string = in->base.string + in->strs.t.nr;
	ids->stack = in->base.stack + in->stacks.nr;
	ids->code = in->base.code + in->codes.t.nr;
}

void intern__set_kstack_hook(struct intern *in, intern_kstack_fn fn, void *ctx)
{
	in->kstack_fn = fn;
	in->kstack_ctx = ctx;
}

/* The entry holding s[0..len) in b, NULL when none; *hash its hash. */
static const struct ientry *btable_find(const struct btable *b, const char *s, size_t len,
					uint64_t *hash)
{
	struct string_key k = { .arena = b->arena, .s = s, .len = len };

	*hash = hash_bytes(s, len);
	return hashtab__find(&b->t, *hash, &k, string_eq);
}

/* Room for one more value of len bytes, so that adding it after its
 * record cannot fail. */
static int btable_reserve(struct btable *b, size_t len)
{
	return itable_reserve(&b->t) ?: ARRAY_RESERVE(b->arena, b->cap, b->len + len + 1);
}

static void btable_add(struct btable *b, uint64_t hash, const char *s, size_t len, uint32_t id)
{
	struct ientry e = { .off = b->len, .len = len, .id = id };

	memcpy(b->arena + b->len, s, len);
	b->len += len;
	itable_add(&b->t, hash, &e);
}

/* A new string: its STRING record, then its entry. Not inlined, so that
 * intern__string(), once per event, keeps its registers for the lookup. */
static __attribute__((noinline)) int string_add(struct intern *in, uint64_t hash,
						const char *s, size_t len, uint32_t *id)
{
	uint32_t nid = in->base.string + in->strs.t.nr + 1;
	int err;

	if (nid <= in->base.string) /* wrapped */
		return -E2BIG;
	err = btable_reserve(&in->strs, len);
	if (err)
		return err;
	err = cap_writer__string(in->w, nid, s, len);
	if (err < 0)
		return err;
	btable_add(&in->strs, hash, s, len, nid);
	*id = nid;
	return 0;
}

int intern__string(struct intern *in, const char *s, size_t len, uint32_t *id)
{
	const struct ientry *o;
	uint64_t hash;

	if (len > CAP_MAX_STRING)
		return CAP_ERR_TOO_LARGE;
	o = btable_find(&in->strs, s, len, &hash);
	if (!o)
		return string_add(in, hash, s, len, id);
	*id = o->id;
	return 0;
}

/* The PY_CODE record (§4.24) of a code object, less its id, as bytes: the
 * key it is interned by. */
static size_t py_code_body(char *buf, const struct cap_py_code *c, const char *qualname,
			   const char *filename, const uint8_t *linetable)
{
	size_t n = sizeof(*c);

	memcpy(buf, c, sizeof(*c));
	memcpy(buf + n, qualname, c->qualname_len);
	n += c->qualname_len;
	memcpy(buf + n, filename, c->filename_len);
	n += c->filename_len;
	memcpy(buf + n, linetable, c->linetable_len);
	return n + c->linetable_len;
}

int intern__pycode(struct intern *in, const struct cap_py_code *code, const char *qualname,
		   const char *filename, const uint8_t *linetable, uint32_t linetable_len,
		   uint32_t *id)
{
	struct cap_py_code c = *code;
	const struct ientry *o;
	uint64_t hash;
	size_t n;
	int err;

	c.id = 0;
	c.qualname_len = strnlen(qualname, CAP_MAX_STRING);
	c.filename_len = strnlen(filename, CAP_MAX_STRING);
	c.linetable_len = linetable_len;
	if (c.qualname_len + c.filename_len + (size_t)linetable_len > CAP_PY_CODE_MAX_TAIL) {
		c.linetable_len = 0;
		c.flags |= CAP_PY_CODE_NO_LINES;
	}
	if (!in->code_buf) {
		in->code_buf = malloc(UINT16_MAX);
		if (!in->code_buf)
			return -ENOMEM;
	}
	n = py_code_body(in->code_buf, &c, qualname, filename, linetable);
	o = btable_find(&in->codes, in->code_buf, n, &hash);
	if (o) {
		*id = o->id;
		return 0;
	}
	err = btable_reserve(&in->codes, n);
	if (err)
		return err;
	c.id = in->base.code + in->codes.t.nr + 1;
	if (c.id <= in->base.code)
		return -E2BIG;
	err = cap_writer__append(in->w, CAP_REC_PY_CODE, &c, sizeof(c),
				 in->code_buf + sizeof(c), n - sizeof(c));
	if (err < 0)
		return err;
	btable_add(&in->codes, hash, in->code_buf, n, c.id);
	*id = c.id;
	return 0;
}

static int stack_define(struct intern *in, struct ientry *e, const uint64_t *ips)
{
	int err;

	if (e->kind == CAP_STACK_KERNEL && in->kstack_fn) {
		err = in->kstack_fn(in->kstack_ctx, ips, e->len);
		if (err < 0)
			return err;
	}
	err = cap_writer__stack(in->w, e->id, e->kind, ips, e->len);
	return err < 0 ? err : 0;
}

/* A new stack: its STACK record (and the hook's), then its entry; not
 * inlined either. */
static __attribute__((noinline)) int stack_add(struct intern *in, uint64_t hash,
					       uint8_t kind, const uint64_t *ips,
					       uint16_t nr, uint32_t *id)
{
	struct ientry e = {
		.off = in->klen, .len = nr, .id = in->base.stack + in->stacks.nr + 1, .kind = kind,
	};
	int err;

	if (e.id <= in->base.stack || e.id == CAP_STACK_LOST) /* wrapped */
		return -E2BIG;

	err = itable_reserve(&in->stacks) ?:
	      ARRAY_RESERVE(in->karena, in->kcap, in->klen + nr);
	if (err)
		return err;
	err = stack_define(in, &e, ips);
	if (err)
		return err;
	memcpy(in->karena + in->klen, ips, nr * sizeof(*ips));
	in->klen += nr;
	itable_add(&in->stacks, hash, &e);
	*id = e.id;
	return 0;
}

int intern__stack(struct intern *in, uint8_t kind, const uint64_t *ips, uint16_t nr,
		  uint32_t *id)
{
	struct stack_key k = { .arena = in->karena, .ips = ips, .nr = nr, .kind = kind };
	const struct ientry *o;
	uint64_t hash;

	if (!nr) {
		*id = CAP_STACK_NONE;
		return 0;
	}
	if (nr > CAP_MAX_STACK_DEPTH || (kind != CAP_STACK_USER && kind != CAP_STACK_KERNEL))
		return CAP_ERR_INVAL;
	hash = hash_stack(kind, ips, nr);
	o = hashtab__find(&in->stacks, hash, &k, stack_eq);
	if (!o)
		return stack_add(in, hash, kind, ips, nr, id);
	*id = o->id;
	return 0;
}

uint64_t intern__nr_stacks(const struct intern *in)
{
	return in->stacks.nr;
}

uint64_t intern__nr_strings(const struct intern *in)
{
	return in->strs.t.nr;
}

uint64_t intern__nr_pycodes(const struct intern *in)
{
	return in->codes.t.nr;
}
