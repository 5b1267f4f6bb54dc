/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Offline symbolization of user-space frames for `stkrec report`.
 *
 * A frame is given as (recorded path, recorded build ID, file offset), so the
 * answer does not depend on where the object was loaded, and a capture can be
 * symbolized days later on another machine. The rule above all others: a
 * frame is named only from a file whose build ID equals the recorded one
 * (when one was recorded); otherwise it stays unnamed and the caller prints
 * "<basename>+0x<offset>".
 *
 * Where the ELF is looked for, in order (each candidate is checked):
 *   1. the recorded path (only without symfs);
 *   2. symfs + recorded path (perf's --symfs convention);
 *   3. <debug_dir>/.build-id/xx/rest.debug and .../xx/rest;
 *   4. .gnu_debuglink of the object: its directory, its .debug/ subdirectory
 *      and debug_dir + its directory (CRC32 or build ID verified);
 *   5. debuginfod (libdebuginfod.so.1 loaded at run time), only when
 *      opts->debuginfod is set and DEBUGINFOD_URLS is set.
 * Symbols come from .symtab, else .dynsym, plus .gnu_debugdata
 * (MiniDebugInfo); with inlines/srclines, DWARF through libdw.
 *
 * Without a recorded build ID the file at the path is trusted as it is (its
 * own build ID then vouches for its debug file). A separate debug file alone
 * (object not found) is used only if its PT_LOAD headers still describe the
 * object's file offsets (eu-strip keeps them; objcopy --only-keep-debug
 * does not): file offsets cannot be placed otherwise, so nothing is named.
 * C++ names are demangled (libstdc++ loaded at run time) unless raw_names.
 *
 * A symbolizer is not thread-safe. The library never prints. Functions
 * return 0 or a count on success and -errno on failure.
 */
#ifndef STKREC_REPORT_SYMBOLIZE_H
#define STKREC_REPORT_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

struct symbolizer;

struct symbolizer_opts {
	const char *symfs;     /* root prepended to recorded paths; NULL: none */
	const char *debug_dir; /* NULL: "/usr/lib/debug" (under symfs if set) */
	bool inlines;          /* expand inlined functions (needs DWARF) */
	bool srclines;         /* fill file:line (needs DWARF) */
	bool debuginfod;       /* used only if DEBUGINFOD_URLS is set */
	bool raw_names;        /* keep C++ names mangled (default: demangle) */
};

/* One resolved frame. Strings are owned by the symbolizer and stay valid
 * until symbolizer__free(). */
struct sym_frame {
	const char *name; /* function; never NULL in a returned frame */
	const char *file; /* source file, or NULL */
	int line;         /* source line, or 0 */
	bool inlined;     /* an inlined instance inside the next frame */
};

struct symbolizer_stats {
	uint64_t modules_found;      /* objects opened with a usable symbol source */
	uint64_t modules_missing;    /* objects with no acceptable file at all */
	uint64_t buildid_mismatches; /* candidate files refused: other build ID */
	uint64_t modules_mismatched; /* objects left unnamed because the only
				      * files found had another build ID (a
				      * binary replaced since the recording) */
	const char *first_mismatched; /* recorded path of the first of those, or
				       * NULL; valid until symbolizer__free() */
	uint64_t debug_files;        /* separate debug files used */
	uint64_t debuginfod_fetches; /* files obtained from debuginfod */
	uint64_t lookups;            /* symbolizer__resolve() calls */
	uint64_t cache_hits;         /* ... answered from the per-address cache */
	uint64_t resolved;           /* distinct addresses given a name */
	uint64_t unresolved;         /* distinct addresses left unnamed */
};

/* opts may be NULL (all defaults). Strings in opts are copied. */
int symbolizer__new(const struct symbolizer_opts *opts, struct symbolizer **out);
void symbolizer__free(struct symbolizer *s);

/*
 * Resolve one user-space frame: path = the mapping's recorded path,
 * build_id = the recorded one (size 0 = unknown), file_offset = addr -
 * map.start + map.pgoff (minus 1 for return addresses, i.e. every frame but
 * the innermost, so that a call at a function's end is not taken for the
 * next function). Fills frames[0..n): with inlines, the innermost
 * inlined function first and the containing function last; otherwise one
 * frame. When more inlined levels exist than max_frames, the innermost
 * max_frames - 1 are kept and the containing function is still last.
 * Returns n >= 1, or 0 when no trustworthy symbol exists (the caller then
 * prints "<basename>+0x<offset>"), or <0 on a hard error (-ENOMEM, -EINVAL).
 * Never uses a file whose build ID differs from a non-empty recorded one.
 */
int symbolizer__resolve(struct symbolizer *s, const char *path,
			const uint8_t *build_id, uint8_t build_id_size,
			uint64_t file_offset, struct sym_frame *frames,
			int max_frames);

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);

#endif /* STKREC_REPORT_SYMBOLIZE_H */
