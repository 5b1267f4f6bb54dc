// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * String and stack interning: open addressing (linear probing) over a
 * power-of-two table of indexes into an entry array; values live in one
 * growing arena each. Every lookup compares the full content, so two stacks
 * never share an id (stack-id maps can collide; this cannot).
 *
 * This runs once per event: the hash is a few multiply-rotates per frame,
 * the table stays at most half full, and the 64-bit hash is kept in the
 * entry so a probe compares content only on a full hash match.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "record/intern.h"

struct ientry {
	uint64_t hash;
	size_t off;     /* into the arena: bytes (strings) or u64 slots (stacks) */
	uint32_t len;   /* bytes (strings) or frames (stacks) */
	uint32_t id;
	uint8_t kind;
};

struct itable {
	uint32_t *slots;     /* 0 empty, else entry index + 1 */
	uint32_t mask;
	struct ientry *ents;
	uint32_t nr, cap;
};

struct intern {
	struct cap_writer *w;
	struct itable strs;
	struct itable stacks;
	char *sarena;
	size_t slen, scap;
	uint64_t *karena;
	size_t klen, kcap;
	intern_kstack_fn kstack_fn;
	void *kstack_ctx;
};

#define ITABLE_MIN 1024u

static inline uint64_t rotl(uint64_t v, int r)
{
	return (v << r) | (v >> (64 - r));
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= rotl(v * 0x87c37b91114253d5ull, 31) * 0x4cf5ad432745937full;
	return rotl(h, 27) * 5 + 0x52dce729;
}

static inline uint64_t finish(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static uint64_t hash_stack(uint8_t kind, const uint64_t *ips, uint16_t nr)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)kind << 32) ^ nr;
	uint16_t i;

	for (i = 0; i < nr; i++)
		h = mix(h, ips[i]);
	return finish(h);
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
	return finish(h);
}

static int itable_init(struct itable *t)
{
	t->slots = calloc(ITABLE_MIN, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->mask = ITABLE_MIN - 1;
	return 0;
}

static void itable_free(struct itable *t)
{
	free(t->slots);
	free(t->ents);
}

static int itable_grow(struct itable *t)
{
	uint32_t size = (t->mask + 1) * 2, i, j;
	uint32_t *slots;

	if (!size)
		return -E2BIG;
	slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->nr; i++) {
		j = t->ents[i].hash & (size - 1);
		while (slots[j])
			j = (j + 1) & (size - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = size - 1;
	return 0;
}

/* Append an entry whose slot is *slot (found empty by the probe). */
static int itable_add(struct itable *t, uint32_t slot, const struct ientry *e)
{
	struct ientry *ents;
	int err;

	if (t->nr == UINT32_MAX - 1)
		return -E2BIG;
	if (t->nr == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;

		ents = realloc(t->ents, (size_t)cap * sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		t->ents = ents;
		t->cap = cap;
	}
	t->ents[t->nr++] = *e;
	t->slots[slot] = t->nr;
	if ((uint64_t)t->nr * 2 > (uint64_t)t->mask + 1) {
		err = itable_grow(t);
		if (err)
			return err;
	}
	return 0;
}

static int arena_reserve(void **buf, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 4096;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*buf, ncap * elem);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = ncap;
	return 0;
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
	if (itable_init(&in->strs) || itable_init(&in->stacks)) {
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
	itable_free(&in->strs);
	itable_free(&in->stacks);
	free(in->sarena);
	free(in->karena);
	free(in);
}

void intern__set_kstack_hook(struct intern *in, intern_kstack_fn fn, void *ctx)
{
	in->kstack_fn = fn;
	in->kstack_ctx = ctx;
}

int intern__string(struct intern *in, const char *s, size_t len, uint32_t *id)
{
	struct itable *t = &in->strs;
	struct ientry e = { .hash = hash_bytes(s, len), .len = len };
	uint32_t j, idx;
	int err;

	if (len > CAP_MAX_STRING)
		return CAP_ERR_TOO_LARGE;
	for (j = e.hash & t->mask; (idx = t->slots[j]); j = (j + 1) & t->mask) {
		const struct ientry *o = &t->ents[idx - 1];

		if (o->hash == e.hash && o->len == len && !memcmp(in->sarena + o->off, s, len)) {
			*id = o->id;
			return 0;
		}
	}
	err = arena_reserve((void **)&in->sarena, &in->scap, in->slen + len + 1, 1);
	if (err)
		return err;
	e.id = t->nr + 1;
	err = cap_writer__string(in->w, e.id, s, len);
	if (err < 0)
		return err;
	e.off = in->slen;
	memcpy(in->sarena + in->slen, s, len);
	in->slen += len;
	err = itable_add(t, j, &e);
	if (err)
		return err;
	*id = e.id;
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

int intern__stack(struct intern *in, uint8_t kind, const uint64_t *ips, uint16_t nr,
		  uint32_t *id)
{
	struct itable *t = &in->stacks;
	struct ientry e = { .kind = kind, .len = nr };
	uint32_t j, idx;
	int err;

	if (!nr) {
		*id = CAP_STACK_NONE;
		return 0;
	}
	if (nr > CAP_MAX_STACK_DEPTH || (kind != CAP_STACK_USER && kind != CAP_STACK_KERNEL))
		return CAP_ERR_INVAL;
	e.hash = hash_stack(kind, ips, nr);
	for (j = e.hash & t->mask; (idx = t->slots[j]); j = (j + 1) & t->mask) {
		const struct ientry *o = &t->ents[idx - 1];

		if (o->hash == e.hash && o->len == nr && o->kind == kind &&
		    !memcmp(in->karena + o->off, ips, nr * sizeof(*ips))) {
			*id = o->id;
			return 0;
		}
	}
	err = arena_reserve((void **)&in->karena, &in->kcap, in->klen + nr, sizeof(*ips));
	if (err)
		return err;
	e.id = t->nr + 1;
	err = stack_define(in, &e, ips);
	if (err)
		return err;
	e.off = in->klen;
	memcpy(in->karena + in->klen, ips, nr * sizeof(*ips));
	in->klen += nr;
	err = itable_add(t, j, &e);
	if (err)
		return err;
	*id = e.id;
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
