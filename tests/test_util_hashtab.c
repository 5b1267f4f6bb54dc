// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* util/hashtab.c: every key found after growth and backward-shift
 * deletion, at most half full, iteration, clearing, size refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "util/hashtab.h"

struct ent {
	uint64_t key;
	uint64_t val;
};

static struct hashtab t;

static void setup(void)
{
	hashtab__init(&t, sizeof(struct ent));
}

static void teardown(void)
{
	hashtab__free(&t);
}

TestSuite(util_hashtab, .init = setup, .fini = teardown);

static bool ent_eq(const void *e, const void *key)
{
	return ((const struct ent *)e)->key == *(const uint64_t *)key;
}

/* A hash with all of its bits in the top half, like hashtab__mix()'s. */
static uint64_t good_hash(uint64_t key)
{
	return hashtab__mix(key);
}

/* Every key on one home slot: one long probe run, which wraps around. */
static uint64_t same_hash(uint64_t key)
{
	return 0xffffffffull << 32;
}

static uint64_t (*hash)(uint64_t) = good_hash;

static struct ent *find(uint64_t key)
{
	return hashtab__find(&t, hash(key), &key, ent_eq);
}

static void add(uint64_t key, uint64_t val)
{
	void *slot;

	cr_assert_eq(hashtab__upsert(&t, hash(key), &key, ent_eq, &slot), 1,
		     "key %lu", key);
	cr_assert_eq(((struct ent *)slot)->key, 0, "a new entry is zeroed");
	cr_assert_eq(((struct ent *)slot)->val, 0);
	((struct ent *)slot)->key = key;
	((struct ent *)slot)->val = val;
}

/* Keys 1..n, with the value 7 * key. */
static void fill(uint64_t n)
{
	for (uint64_t k = 1; k <= n; k++)
		add(k, k * 7);
}

static void del(uint64_t key)
{
	struct ent *e = find(key);

	cr_assert_not_null(e, "key %lu", key);
	hashtab__delete(&t, e);
}

/* Keys 1..n are there with their values, but the multiples of step (when
 * not 0) and the keys whose bit is set in gone. */
static void expect_keys(uint64_t n, uint64_t step, uint64_t gone)
{
	for (uint64_t k = 1; k <= n; k++) {
		struct ent *e = find(k);

		if ((step && k % step == 0) || (k < 64 && (gone >> k & 1))) {
			cr_assert_null(e, "deleted key %lu found", k);
			continue;
		}
		cr_assert_not_null(e, "key %lu lost", k);
		cr_assert_eq(e->val, k * 7);
	}
}

Test(util_hashtab, empty_finds_nothing)
{
	uint64_t key = 1;
	size_t pos;
	void *e;

	cr_assert_null(find(key));
	cr_assert_eq(t.cap, 0, "nothing allocated before the first insert");
	hashtab__for_each(&t, pos, e)
		cr_assert_fail("an empty table has no entries");
	hashtab__clear(&t);
	cr_assert_eq(hashtab__bytes(&t), 0);
}

Test(util_hashtab, upsert_adds_once)
{
	uint64_t key = 42;
	void *slot;

	add(key, 1);
	cr_assert_eq(hashtab__upsert(&t, hash(key), &key, ent_eq, &slot), 0);
	cr_assert_eq(((struct ent *)slot)->val, 1);
	cr_assert_eq(t.nr, 1);
}

Test(util_hashtab, insert_many_grows_and_finds_all)
{
	const uint64_t n = 100000;

	fill(n);
	cr_assert_eq(t.nr, n);
	cr_assert_geq(t.cap, 2 * n, "at most half full");
	cr_assert_eq(t.cap & (t.cap - 1), 0, "a power of two");
	expect_keys(n, 0, 0);
	cr_assert_null(find(n + 1));
	cr_assert_eq(hashtab__bytes(&t), t.cap * (sizeof(struct ent) + sizeof(uint32_t)));
}

Test(util_hashtab, insert_copies_the_entry)
{
	void *slot;

	for (uint64_t k = 1; k <= 1000; k++) {
		struct ent e = { .key = k, .val = k * 7 };

		cr_assert_eq(hashtab__insert(&t, hash(k), &e, k & 1 ? &slot : NULL), 0);
		if (k & 1)
			cr_assert_eq(((struct ent *)slot)->key, k);
	}
	cr_assert_eq(t.nr, 1000);
	expect_keys(1000, 0, 0);
}

Test(util_hashtab, delete_half_keeps_the_rest)
{
	const uint64_t n = 20000;

	fill(n);
	for (uint64_t k = 2; k <= n; k += 2)
		del(k);
	cr_assert_eq(t.nr, n / 2);
	expect_keys(n, 2, 0);
	/* the holes are reusable and the deleted keys come back */
	for (uint64_t k = 2; k <= n; k += 2)
		add(k, k * 7);
	expect_keys(n, 0, 0);
}

Test(util_hashtab, delete_shifts_back_a_wrapped_run)
{
	const uint64_t n = 6;

	/* all six on the last slot: the run wraps to slots 0..4 */
	hash = same_hash;
	fill(n);
	cr_assert_eq(t.cap, 16);
	cr_assert_eq(t.tags[15] & 15, 15);
	/* from the middle, then the head, then the tail of the run */
	del(3);
	del(1);
	del(6);
	cr_assert_eq(t.nr, 3);
	expect_keys(n, 0, 1 << 1 | 1 << 3 | 1 << 6);
	/* no tombstones: the run is contiguous from its home again */
	cr_assert_neq(t.tags[15], 0);
	cr_assert_neq(t.tags[0], 0);
	cr_assert_neq(t.tags[1], 0);
	cr_assert_eq(t.tags[2], 0);
}

/* Homes (in 16 slots) that interleave runs: 14 14 15 0 15 1 4 fill slots
 * 14 15 0 1 2 3 4, and key 7 sits at its own home right after the others. */
static const uint64_t homes[] = { 0, 14, 14, 15, 0, 15, 1, 4 };

static uint64_t homes_hash(uint64_t key)
{
	return homes[key] << 32;
}

Test(util_hashtab, delete_moves_only_what_may_move)
{
	const uint64_t n = 7;

	hash = homes_hash;
	fill(n);
	cr_assert_eq(t.cap, 16);
	for (uint64_t k = 1; k <= n; k++) {
		del(k);
		cr_assert_eq(t.nr, n - 1);
		expect_keys(n, 0, 1ull << k);
		add(k, k * 7);
	}
	expect_keys(n, 0, 0);
}

Test(util_hashtab, iteration_visits_each_once)
{
	const uint64_t n = 5000;
	static uint8_t seen[5001];
	struct ent *e;
	size_t pos, count = 0;

	fill(n);
	hashtab__for_each(&t, pos, e) {
		cr_assert(e->key >= 1 && e->key <= n);
		cr_assert_eq(seen[e->key]++, 0, "key %lu twice", e->key);
		count++;
	}
	cr_assert_eq(count, n);
}

Test(util_hashtab, clear_forgets_and_keeps_memory)
{
	size_t cap;

	fill(100);
	cap = t.cap;
	hashtab__clear(&t);
	cr_assert_eq(t.nr, 0);
	cr_assert_eq(t.cap, cap);
	cr_assert_null(find(50));
	add(50, 350);
	cr_assert_eq(find(50)->val, 350);
}

Test(util_hashtab, reserve_does_not_grow_later)
{
	size_t cap;

	cr_assert_eq(hashtab__reserve(&t, 1000), 0);
	cap = t.cap;
	cr_assert_geq(cap, 2000);
	fill(1000);
	cr_assert_eq(t.cap, cap);
}

Test(util_hashtab, refuses_sizes_that_overflow)
{
	struct hashtab big;

	cr_assert_eq(hashtab__reserve(&t, SIZE_MAX / 2), -ENOMEM);
	cr_assert_eq(hashtab__reserve(&t, (size_t)1 << 31), -ENOMEM, "over 2^31 slots");
	cr_assert_eq(t.cap, 0, "unchanged");
	cr_assert_null(t.tags);
	/* cap * esize would wrap */
	hashtab__init(&big, SIZE_MAX / 8);
	cr_assert_eq(hashtab__reserve(&big, 1), -ENOMEM);
	cr_assert_eq(big.cap, 0);
	hashtab__free(&big);
	/* entries of no size */
	hashtab__init(&big, 0);
	cr_assert_eq(hashtab__reserve(&big, 1), -EINVAL);
}
