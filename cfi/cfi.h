/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call-frame information of an x86-64 ELF file (.eh_frame, .debug_frame)
 * turned into the compact unwind rows the BPF unwinder binary-searches
 * (struct stkrec_cfi_row, bpf/stkrec.h). A rule stkrec cannot follow
 * becomes a STKREC_CFA_NONE row: a row is never wrong, at worst absent.
 */
#ifndef STKREC_CFI_CFI_H
#define STKREC_CFI_CFI_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/stkrec.h"

/*
 * Rows of the ELF file open on fd (the caller keeps fd), from .eh_frame
 * and, where present, .debug_frame; .eh_frame wins where both cover an
 * address. Sorted by pc, strictly increasing; a gap between functions and
 * the end of the last range are STKREC_CFA_GAP rows (no CFI: the frame
 * pointer is followed there); consecutive rows
 * with the same rule are merged. *rows is malloc'd: free() it.
 * Returns 0 or -errno: -ENOEXEC not an x86-64 executable or shared
 * object, -ENOENT no call-frame information, -E2BIG an address at or
 * beyond 4 GiB, -ENOMEM.
 */
int cfi__load(int fd, struct stkrec_cfi_row **rows, size_t *nr);

/* cfi__load() of the file at path; also -errno from open(). */
int cfi__load_path(const char *path, struct stkrec_cfi_row **rows, size_t *nr);

/* The row covering ELF address pc, as the BPF unwinder finds it: the last
 * row whose pc <= pc. NULL before the first row. */
const struct stkrec_cfi_row *cfi__find(const struct stkrec_cfi_row *rows, size_t nr,
				       uint32_t pc);

#endif
