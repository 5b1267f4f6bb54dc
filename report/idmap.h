/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A hash map (util/hashtab.h) with exact 128-bit keys and 64-bit values,
 * used by the report for id -> index tables, aggregation by (pid, comm,
 * ustack, kstack) and the per-address symbol cache. Keys are
 * compared in full: two distinct keys never share a value.
 */
#ifndef STKREC_REPORT_IDMAP_H
#define STKREC_REPORT_IDMAP_H

#include <stddef.h>
#include <stdint.h>
#include "util/hashtab.h"

struct idmap_key {
	uint64_t a;
	uint64_t b;
};

struct idmap {
	struct hashtab t; /* of (a, b, value) */
};

/* An empty map is all zeroes; idmap__fini() frees it. */
void idmap__fini(struct idmap *m);
/* Bytes of memory the map holds. */
size_t idmap__bytes(const struct idmap *m);

/* Value of key, or NULL. The pointer is valid until the next insertion. */
uint64_t *idmap__find(const struct idmap *m, uint64_t a, uint64_t b);

/* Find key, inserting it with value `init` when absent. Returns 1 when
 * inserted, 0 when it existed, -ENOMEM; *val points at the value (valid
 * until the next insertion). */
int idmap__upsert(struct idmap *m, uint64_t a, uint64_t b, uint64_t init,
		  uint64_t **val);

#endif /* STKREC_REPORT_IDMAP_H */
