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

struct intern {
	struct cap_writer *w;
	struct hashtab strs;   /* of struct ientry */
	struct hashtab stacks; /* of struct ientry */
	char *sarena;
	size_t slen, scap;
	uint64_t *karena;
	size_t klen, kcap;
	intern_kstack_fn kstack_fn;
	void *kstack_ctx;
	uint32_t string_base; /* ids of new strings start above it */
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
	hashtab__init(&in->strs, sizeof(struct ientry));
	hashtab__init(&in->stacks, sizeof(struct ientry));
	if (hashtab__reserve(&in->strs, ITABLE_MIN) ||
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
	hashtab__free(&in->strs);
	hashtab__free(&in->stacks);
	free(in->sarena);
	free(in->karena);
	free(in);
}

int intern__set_string_base(struct intern *in, uint32_t base)
{
	if (in->strs.nr)
		return CAP_ERR_INVAL;
	in->string_base = base;
	return 0;
}

void intern__set_kstack_hook(struct intern *in, intern_kstack_fn fn, void *ctx)
{
	in->kstack_fn = fn;
	in->kstack_ctx = ctx;
}

/* A new string: its STRING record, then its entry. Not inlined, so that
 * intern__string(), once per event, keeps its registers for the lookup. */
static __attribute__((noinline)) int string_add(struct intern *in, uint64_t hash,
						const char *s, size_t len, uint32_t *id)
{
	struct ientry e = { .off = in->slen, .len = len, .id = in->string_base + in->strs.nr + 1 };
	int err;

	if (e.id <= in->string_base) /* wrapped */
		return -E2BIG;
	err = itable_reserve(&in->strs) ?:
	      ARRAY_RESERVE(in->sarena, in->scap, in->slen + len + 1);
	if (err)
		return err;
	err = cap_writer__string(in->w, e.id, s, len);
	if (err < 0)
		return err;
	memcpy(in->sarena + in->slen, s, len);
	in->slen += len;
	itable_add(&in->strs, hash, &e);
	*id = e.id;
	return 0;
}

int intern__string(struct intern *in, const char *s, size_t len, uint32_t *id)
{
	struct string_key k = { .arena = in->sarena, .s = s, .len = len };
	const struct ientry *o;
	uint64_t hash;

	if (len > CAP_MAX_STRING)
		return CAP_ERR_TOO_LARGE;
	hash = hash_bytes(s, len);
	o = hashtab__find(&in->strs, hash, &k, string_eq);
	if (!o)
		return string_add(in, hash, s, len, id);
	*id = o->id;
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
		.off = in->klen, .len = nr, .id = in->stacks.nr + 1, .kind = kind,
	};
	int err;

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
	return in->strs.nr;
}
