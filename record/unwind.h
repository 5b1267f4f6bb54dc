/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user-space half of --call-graph dwarf: fills the BPF unwinder's maps
 * (bpf/unwind.bpf.h). Each executable mapping of a traced process is added
 * to the process's `umaps` entry; the first time a file is seen its
 * call-frame information becomes rows (cfi/cfi.h) appended to
 * `cfi_rows`, shared by every process that maps the file.
 *
 * Never prints; the numbers it keeps become STAT records.
 */
#ifndef STKREC_RECORD_UNWIND_H
#define STKREC_RECORD_UNWIND_H

#include <stdint.h>
#include "bpf/stkrec.h"
#include "format/capture.h"

struct unwind;

/* Chunks of rows (bpf/stkrec.h) that hold rows_max rows: cfi_rows' size. */
#define UNWIND_CHUNKS(rows_max) \
	(((rows_max) + STKREC_CFI_CHUNK_ROWS - 1) / STKREC_CFI_CHUNK_ROWS)

struct unwind_stats {
	uint64_t files;        /* files whose rows were loaded */
	uint64_t files_failed; /* files without usable CFI (frame pointers) */
	uint64_t rows;         /* rows used in cfi_rows */
	uint64_t rows_max;     /* its size */
	uint64_t full;         /* files refused: rows_max reached, or no
				* memory for a chunk */
	uint64_t maps_dropped; /* mappings beyond STKREC_MAX_UMAPS */
	uint64_t load_ns;      /* time spent building rows */
};

/* The BPF maps it fills (bpf/stkrec.h, bpf/unwind.bpf.h). */
struct unwind_maps {
	int rows_fd;       /* cfi_rows: array of UNWIND_CHUNKS(rows_max) chunks */
	uint32_t rows_max;
	int umaps_fd;      /* per process: its executable mappings */
	int ufiles_fd;     /* per file: its rows */
};

int unwind__new(const struct unwind_maps *maps, struct unwind **out);
void unwind__free(struct unwind *u);
/*
 * An executable file mapping of pid (m: start, end, pgoff), the file open
 * on fd (the caller closes it). Replaces any mapping it overlaps. Returns
 * 0 or -errno; a file without usable CFI is not an error (its frames are
 * followed with frame pointers).
 */
int unwind__map(struct unwind *u, uint32_t pid, const struct cap_mapping *m, int fd);
/* Build the rows of the file at path now, so that a process about to map
 * it (the command, once it execs) gets its tables without waiting. */
int unwind__preload(struct unwind *u, const char *path);
/* pid exec'd or exited: its mappings are gone. */
void unwind__forget(struct unwind *u, uint32_t pid);
/* child was forked from parent: it starts with the parent's mappings. */
int unwind__fork(struct unwind *u, uint32_t parent, uint32_t child);
void unwind__stats(const struct unwind *u, struct unwind_stats *st);

#endif
