// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "report/idmap.h"

struct idmap_ent {
	uint64_t a, b;
	uint64_t val;
};

/* b is often 0 or small: a multiply spreads it before the one mix. */
static inline uint64_t key_hash(uint64_t a, uint64_t b)
{
	return hashtab__mix(a ^ (b * 0x9e3779b97f4a7c15ull));
}

static bool key_eq(const void *ent, const void *key)
{
	const struct idmap_ent *e = ent;
	const struct idmap_key *k = key;

	return e->a == k->a && e->b == k->b;
}

void idmap__fini(struct idmap *m)
{
	hashtab__free(&m->t);
}

size_t idmap__bytes(const struct idmap *m)
{
	return hashtab__bytes(&m->t);
}

uint64_t *idmap__find(const struct idmap *m, uint64_t a, uint64_t b)
{
	struct idmap_key k = { .a = a, .b = b };
	struct idmap_ent *e = hashtab__find(&m->t, key_hash(a, b), &k, key_eq);

	return e ? &e->val : NULL;
}

int idmap__upsert(struct idmap *m, uint64_t a, uint64_t b, uint64_t init,
		  uint64_t **val)
{
	struct idmap_key k = { .a = a, .b = b };
	struct idmap_ent *e;
	void *slot;
	int ret;

	m->t.esize = sizeof(*e); /* an all-zero map is empty too */
	ret = hashtab__upsert(&m->t, key_hash(a, b), &k, key_eq, &slot);
	if (ret < 0)
		return ret;
	e = slot;
	if (ret) {
		e->a = a;
		e->b = b;
		e->val = init;
	}
	*val = &e->val;
	return ret;
}
