// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The heap through the start's burst of large allocations (heap.h).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/heap.h"

#define HEAP_HUGE (2u << 20)	       /* x86-64's and arm64's (4 KiB base) PMD */
#define HEAP_MAX (30u << 20)	       /* under glibc's 32 MiB mmap threshold cap */
#define HEAP_DEFAULT_THRESHOLD (128 << 10) /* glibc's M_MMAP/M_TRIM_THRESHOLD */

void heap__reserve(size_t bytes)
{
	uintptr_t lo, hi;
	void *p;

	if (bytes > HEAP_MAX)
		bytes = HEAP_MAX;
	/* from the arena, and kept there once freed: a block this size and
	 * under it is not mapped on its own nor trimmed */
	if (!mallopt(M_MMAP_THRESHOLD, HEAP_MAX + HEAP_HUGE) ||
	    !mallopt(M_TRIM_THRESHOLD, 2 * HEAP_MAX))
		return;
	p = malloc(bytes);
	if (!p)
		return;
	lo = ((uintptr_t)p + HEAP_HUGE - 1) & ~(uintptr_t)(HEAP_HUGE - 1);
	hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(HEAP_HUGE - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	free(p); /* the top chunk again: the next allocations carve it */
}

void heap__release(void)
{
	malloc_trim(0);
	mallopt(M_MMAP_THRESHOLD, HEAP_DEFAULT_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, HEAP_DEFAULT_THRESHOLD);
}
