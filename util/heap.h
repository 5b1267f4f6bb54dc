/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process heap through a burst of large allocations: a recorder's
 * start parses the kernel's BTF twice (its own probe and libbpf's load),
 * about 11 MB each. Each parse took fresh 4 KiB pages (glibc maps a block
 * that large on its own and unmaps it when freed): 43 ms against 4 ms for
 * the same parse in pages already there, on a paravirtual guest where a
 * page fault and a TLB miss cost most. heap__reserve() readies the main
 * arena for them: kept (the second parse reuses the first's pages) and
 * advised as transparent huge pages (MADV_HUGEPAGE: a request the
 * kernel's THP settings decide; with defrag "madvise" a fault there may
 * compact memory, for a few MB once). heap__release() hands the free
 * pages back and restores glibc's thresholds (fixed at their defaults).
 */
#ifndef STKREC_UTIL_HEAP_H
#define STKREC_UTIL_HEAP_H

#include <stddef.h>

/* Grow the main arena by bytes (at most 30 MiB) and keep allocations up
 * to that size and freed memory in it until heap__release(); its whole
 * huge pages are advised as such. Best effort: returns nothing, changes
 * nothing when the heap cannot grow. */
void heap__reserve(size_t bytes);

/* The free pages back to the kernel, glibc's thresholds restored. */
void heap__release(void);

#endif
