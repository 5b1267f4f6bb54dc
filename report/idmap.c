// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/idmap.h"

static inline uint64_t mix64(uint64_t x)
{
	/* splitmix64 finalizer: good spread for sequential ids and addresses */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline size_t slot_of(const struct idmap *m, uint64_t a, uint64_t b)
{
	return mix64(a ^ mix64(b + 0x9e3779b97f4a7c15ull)) & (m->cap - 1);
}

void idmap__fini(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

uint64_t *idmap__find(const struct idmap *m, uint64_t a, uint64_t b)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(m, a, b); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i].a == a && m->keys[i].b == b)
			return &m->vals[i];
	}
	return NULL;
}

static int grow(struct idmap *m)
{
	struct idmap bigger = { 0 };
	size_t i, j;

	bigger.cap = m->cap ? m->cap * 2 : 64;
	bigger.keys = malloc(bigger.cap * sizeof(*bigger.keys));
	bigger.vals = malloc(bigger.cap * sizeof(*bigger.vals));
	bigger.used = calloc(bigger.cap, 1);
	if (!bigger.keys || !bigger.vals || !bigger.used) {
		idmap__fini(&bigger);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		j = slot_of(&bigger, m->keys[i].a, m->keys[i].b);
		while (bigger.used[j])
			j = (j + 1) & (bigger.cap - 1);
		bigger.used[j] = 1;
		bigger.keys[j] = m->keys[i];
		bigger.vals[j] = m->vals[i];
	}
	bigger.n = m->n;
	idmap__fini(m);
	*m = bigger;
	return 0;
}

int idmap__upsert(struct idmap *m, uint64_t a, uint64_t b, uint64_t init,
		  uint64_t **val)
{
	size_t i;
	int err;

	/* keep the load factor under 1/2 so probe chains stay short */
	if ((m->n + 1) * 2 > m->cap) {
		err = grow(m);
		if (err)
			return err;
	}
	for (i = slot_of(m, a, b); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i].a == a && m->keys[i].b == b) {
			*val = &m->vals[i];
			return 0;
		}
	}
	m->used[i] = 1;
	m->keys[i].a = a;
	m->keys[i].b = b;
	m->vals[i] = init;
	m->n++;
	*val = &m->vals[i];
	return 1;
}
