/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One open-addressing hash table for every layer: linear probing over a
 * power-of-two array of fixed-size entries, at most half full, with
 * backward-shift deletion (no tombstones).
 *
 * The caller hashes its key to 64 bits, of which the table uses the upper
 * half (a multiplicative hash, key * 0x9e3779b97f4a7c15, mixes it well;
 * hashtab__mix() mixes all 64 bits), and says how to compare keys:
 * hashtab__find() and hashtab__upsert() take the hash and an equality
 * function. A 32-bit tag of the hash is kept per slot in an array of its
 * own (0: empty), so a probe compares the caller's key only on a tag
 * match, growth and deletion re-place entries by their tag without calling
 * back, and the entries' memory is written only where entries are: a
 * table costs the pages it uses, as the hand-made ones it replaced did.
 *
 * find and upsert are static inline so that the equality function, known
 * where they are called, inlines into the probe loop: the drain's tables
 * (format/intern.c, record/threads.c) and the report's run once per event.
 *
 * Entry pointers are valid until the next insertion or deletion.
 */
#ifndef STKREC_UTIL_HASHTAB_H
#define STKREC_UTIL_HASHTAB_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct hashtab {
	uint32_t *tags; /* per slot: 0 empty, else the entry's tag */
	char *ents;     /* cap entries of esize bytes, set where tagged */
	size_t esize;
	size_t cap;     /* slots: a power of two, or 0 before the first insert */
	size_t nr;      /* entries */
};

/* Does the entry hold key? */
typedef bool hashtab_eq_fn(const void *ent, const void *key);

/* An empty table of esize-byte entries; it allocates on first insert. */
void hashtab__init(struct hashtab *t, size_t esize);
/* Free the memory; t is then empty (and keeps its entry size). */
void hashtab__free(struct hashtab *t);
/* Forget every entry, keeping the memory (a cache at its cap). */
void hashtab__clear(struct hashtab *t);
/* Room for n entries without growing: 0 or -ENOMEM (-EINVAL for an entry
 * size of 0). */
int hashtab__reserve(struct hashtab *t, size_t n);
/* Add a copy of ent, whose key is known to be absent; *out (when out is
 * not NULL) is the copy. 0 or -ENOMEM (nothing added). */
int hashtab__insert(struct hashtab *t, uint64_t hash, const void *ent, void **out);
/* Remove the entry ent (from find, upsert, insert or next). */
void hashtab__delete(struct hashtab *t, void *ent);
/* Bytes of memory the table holds. */
size_t hashtab__bytes(const struct hashtab *t);
/* Iteration: pos starts at 0; NULL at the end. Deleting during an
 * iteration may skip entries. */
void *hashtab__next(const struct hashtab *t, size_t *pos);

#define hashtab__for_each(t, pos, ent) \
	for ((pos) = 0; ((ent) = hashtab__next((t), &(pos))) != NULL;)

/* splitmix64's finalizer: spreads sequential ids and addresses. */
static inline uint64_t hashtab__mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The hash's upper half, never 0: slots are placed by its low bits, so
 * the table takes them from the well-mixed top of a multiplicative hash. */
static inline uint32_t hashtab__tag(uint64_t hash)
{
	return (uint32_t)(hash >> 32) | 0x80000000u;
}

static inline void *hashtab__at(const struct hashtab *t, size_t i)
{
	return t->ents + i * t->esize;
}

/* The slot holding key, or else the empty slot that ends its probe run. */
static inline size_t hashtab__probe(const struct hashtab *t, uint32_t tag,
				    const void *key, hashtab_eq_fn *eq)
{
	size_t mask = t->cap - 1, i;

	for (i = tag & mask; t->tags[i]; i = (i + 1) & mask) {
		if (t->tags[i] == tag && eq(hashtab__at(t, i), key))
			break;
	}
	return i;
}

/* The entry holding key, or NULL. */
static inline void *hashtab__find(const struct hashtab *t, uint64_t hash,
				  const void *key, hashtab_eq_fn *eq)
{
	size_t i;

	if (!t->nr)
		return NULL;
	i = hashtab__probe(t, hashtab__tag(hash), key, eq);
	return t->tags[i] ? hashtab__at(t, i) : NULL;
}

/*
 * The entry holding key, added when absent (zeroed, for the caller to
 * fill): 1 added, 0 found, -ENOMEM. It makes room for one more entry
 * first, found or not, so that a hit and a miss cost one probe each.
 */
static inline int hashtab__upsert(struct hashtab *t, uint64_t hash,
				  const void *key, hashtab_eq_fn *eq, void **ent)
{
	uint32_t tag = hashtab__tag(hash);
	size_t i;

	if ((t->nr + 1) * 2 > t->cap && hashtab__reserve(t, t->nr + 1))
		return -ENOMEM;
	i = hashtab__probe(t, tag, key, eq);
	*ent = hashtab__at(t, i);
	if (t->tags[i])
		return 0;
	t->tags[i] = tag;
	t->nr++;
	memset(*ent, 0, t->esize);
	return 1;
}

#endif /* STKREC_UTIL_HASHTAB_H */
