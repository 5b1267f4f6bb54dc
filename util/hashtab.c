// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The open-addressing hash table of util/hashtab.h: its cold half. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/hashtab.h"

#define HASHTAB_MIN 16u
/* Slots are placed by a tag's 31 low bits: more would never be homes. */
#define HASHTAB_MAX ((uint64_t)1 << 31)

void hashtab__init(struct hashtab *t, size_t esize)
{
	memset(t, 0, sizeof(*t));
	t->esize = esize;
}

void hashtab__free(struct hashtab *t)
{
	free(t->tags);
	free(t->ents);
	hashtab__init(t, t->esize);
}

void hashtab__clear(struct hashtab *t)
{
	if (t->cap)
		memset(t->tags, 0, t->cap * sizeof(*t->tags));
	t->nr = 0;
}

size_t hashtab__bytes(const struct hashtab *t)
{
	return t->cap * (t->esize + sizeof(*t->tags));
}

/* The empty slot at the end of tag's probe run. */
static size_t free_slot(const uint32_t *tags, size_t cap, uint32_t tag)
{
	size_t i;

	for (i = tag & (cap - 1); tags[i]; i = (i + 1) & (cap - 1))
		;
	return i;
}

/* The entries are malloc()ed, not zeroed: only the slots that get an
 * entry are ever written, so untouched pages cost nothing. */
static int rehash(struct hashtab *t, size_t cap)
{
	uint32_t *tags = calloc(cap, sizeof(*tags));
	char *ents = malloc(cap * t->esize);
	size_t i, j;

	if (!tags || !ents) {
		free(tags);
		free(ents);
		return -ENOMEM;
	}
	for (i = 0; i < t->cap; i++) {
		if (!t->tags[i])
			continue;
		j = free_slot(tags, cap, t->tags[i]);
		tags[j] = t->tags[i];
		memcpy(ents + j * t->esize, hashtab__at(t, i), t->esize);
	}
	free(t->tags);
	free(t->ents);
	t->tags = tags;
	t->ents = ents;
	t->cap = cap;
	return 0;
}

int hashtab__reserve(struct hashtab *t, size_t n)
{
	size_t cap = t->cap ? t->cap : HASHTAB_MIN;

	if (n <= t->cap / 2)
		return 0;
	while (cap / 2 < n) {
		if ((uint64_t)cap >= HASHTAB_MAX)
			return -ENOMEM;
		cap *= 2;
	}
	if (!t->esize)
		return -EINVAL;
	if (cap > SIZE_MAX / (t->esize + sizeof(*t->tags)))
		return -ENOMEM;
	return rehash(t, cap);
}

int hashtab__insert(struct hashtab *t, uint64_t hash, const void *ent, void **out)
{
	uint32_t tag = hashtab__tag(hash);
	size_t i;

	if (hashtab__reserve(t, t->nr + 1))
		return -ENOMEM;
	i = free_slot(t->tags, t->cap, tag);
	t->tags[i] = tag;
	memcpy(hashtab__at(t, i), ent, t->esize);
	t->nr++;
	if (out)
		*out = hashtab__at(t, i);
	return 0;
}

void hashtab__delete(struct hashtab *t, void *ent)
{
	size_t mask = t->cap - 1, i, j, home;

	i = (size_t)((char *)ent - t->ents) / t->esize;
	/* Move later members of the probe run back into the hole when it
	 * lies between their home and where they are (cyclically). */
	for (j = (i + 1) & mask; t->tags[j]; j = (j + 1) & mask) {
		home = t->tags[j] & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->tags[i] = t->tags[j];
			memcpy(hashtab__at(t, i), hashtab__at(t, j), t->esize);
			i = j;
		}
	}
	t->tags[i] = 0;
	t->nr--;
}

void *hashtab__next(const struct hashtab *t, size_t *pos)
{
	while (*pos < t->cap) {
		if (t->tags[(*pos)++])
			return hashtab__at(t, *pos - 1);
	}
	return NULL;
}
