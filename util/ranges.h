/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Arrays sorted by a uint64_t start (an address or a time), the first field
 * of each element. ranges__after() gives the index of the first element
 * that starts after an address; an element that holds the address is
 * before that index.
 *
 * Where ranges do not overlap (symbols, modules) only the element just
 * before the index can hold the address. Where they may overlap, each
 * element also keeps the largest end of the elements up to it: those that
 * hold an address are among those before the index, walking back while
 * that largest end is past the address. The mappings a process had over
 * a recording (pack.c) and the entries of a JIT map (jitmap.c) are such
 * arrays.
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
