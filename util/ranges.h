/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Address ranges that may overlap, kept in an array sorted by start, each
 * element also holding the largest end of the elements up to it: the
 * ranges that contain an address are among those before the index
 * ranges__after() returns, walking back while that largest end is past the
 * address. The mappings a process had over a recording (pack.c) and the
 * entries of a JIT map (jitmap.c) are such arrays.
 */
#ifndef STKREC_UTIL_RANGES_H
#define STKREC_UTIL_RANGES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Index of the first of v[0..n) (elements of `stride` bytes whose first
 * field is a uint64_t start) that starts after addr. */
static inline size_t ranges__after(const void *v, size_t n, size_t stride, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		memcpy(&start, (const char *)v + mid * stride, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
