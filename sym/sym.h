/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sym/: naming addresses, offline, for `stkrec report`. The one public
 * header of the layer between format/ and report/; it includes nothing of
 * stkrec. Three parts: the ELF symbolizer of user-space frames (symbolizer__*),
 * the kernel symbol table of a capture (ksymtab__*) and CPython's line
 * numbers (sym_pyline()). The library never prints.
 */
#ifndef STKREC_SYM_SYM_H
#define STKREC_SYM_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- user space: the ELF symbolizer (symbolize.c) ---------------------- */

/*
 * Offline symbolization of user-space frames.
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
 * A symbolizer is not thread-safe. Functions return 0 or a count on
 * success and -errno on failure.
 */
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
	uint64_t resolved_pack;      /* of resolved: named from the symbol pack */
	uint64_t modules_packed;     /* objects without a usable file that the
				      * symbol pack holds */
	uint64_t modules_mismatched_packed; /* of those, objects whose files
					     * had another build ID */
	const char *first_mismatched_packed; /* recorded path of the first */
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

/* The offset symbolizer__resolve() is given for a frame at file offset
 * off: one less for a return address (caller: every frame of a stack but
 * the innermost), so that a call at a function's end is not taken for the
 * next function. */
static inline uint64_t sym_lookup_offset(uint64_t off, bool caller)
{
	return caller && off ? off - 1 : off;
}

/* ---- the symbol pack ---------------------------------------------------- */

/*
 * What an object's files say of one lookup offset before the options shape
 * it into frames: the function symbol covering it and DWARF's inline chain
 * with lines. A symbol pack (a capture's PACK records, FORMAT.md §4.18)
 * holds these for the addresses a capture hit, so that a report names
 * those frames exactly as the binary would, on a host without it.
 */
#define SYM_RAW_MAX_FRAMES 32
struct sym_raw {
	const char *sym_name;  /* covering function symbol as the binary spells
				* it (C++ mangled), or NULL */
	uint64_t sym_start;    /* its first byte, as a file offset */
	uint64_t sym_size;     /* 0: the symbol table gives none */
	int nframes;           /* DWARF's chain, 0 when DWARF does not cover it */
	/* innermost first, each but the last inlined in the next; the last is
	 * the containing function (its name may be NULL) */
	struct sym_frame frames[SYM_RAW_MAX_FRAMES];
};

/*
 * The raw answer for a lookup offset (file first, then a loaded pack, by
 * the rules of symbolizer__pack_object()), DWARF's chain included whatever
 * the options, names as spelled in the binary. Returns 1 when it names the
 * address (a symbol, or a chain whose function is named), 0 when not, <0
 * on error. *dwarf (may be NULL) says whether the source had DWARF.
 */
int symbolizer__lookup_raw(struct symbolizer *s, const char *path,
			   const uint8_t *build_id, uint8_t build_id_size,
			   uint64_t offset, struct sym_raw *out, bool *dwarf);

/*
 * Load a symbol pack, before the first resolve: an object (*id is its
 * handle), then the raw answer of each address. An object stands for the
 * frames of its build ID (without one, of its path). It names them when no
 * file with that build ID is found, and first when the options want inlines
 * or lines, the object was packed with DWARF and the file found has none;
 * the file names what the other does not. Addresses the pack does not hold
 * are never named from it. Strings in raw must outlive the symbolizer.
 * symbolizer__pack_address() returns 1, or 0 for an offset already held.
 */
int symbolizer__pack_object(struct symbolizer *s, const char *path,
			    const uint8_t *build_id, uint8_t build_id_size,
			    bool dwarf, uint32_t *id);
int symbolizer__pack_address(struct symbolizer *s, uint32_t id, uint64_t offset,
			     const struct sym_raw *raw);

/* ---- kernel: the symbol table of a capture (ksymtab.c) ---------------- */

/*
 * Kernel symbol table built from a capture's KSYM and KMOD records (never
 * from the machine the report runs on).
 *
 * Usage: ksymtab__new(), ksymtab__add() for every symbol, ksymtab__finalize()
 * once, then ksymtab__lookup() any number of times. Functions return 0 or
 * -errno.
 */
struct ksymtab;

int ksymtab__new(struct ksymtab **out);

/* Add the symbol [addr, addr + size). size 0 = unknown: the symbol then
 * extends to the next symbol. module NULL (or "") = vmlinux. The name need
 * not be NUL-terminated; both strings are copied. -EINVAL after finalize. */
int ksymtab__add(struct ksymtab *t, uint64_t addr, uint32_t size,
		 const char *name, size_t name_len, const char *module);

/* A module's extent [base, base + size) from its KMOD record (optional):
 * it bounds the module's symbols of unknown size. */
int ksymtab__add_module(struct ksymtab *t, const char *name, uint64_t base,
			uint32_t size);

/* Sort by address and drop exact duplicates (same address and name). On
 * several names at one address, a sized one is preferred, then the shorter,
 * then the lexically smaller name, so lookups are deterministic. */
int ksymtab__finalize(struct ksymtab *t);

/* Symbol containing addr, or NULL. *module (if module is not NULL) is set to
 * the module name or NULL for vmlinux, *offset (if not NULL) to addr minus the
 * symbol's start. Only valid after ksymtab__finalize(). */
const char *ksymtab__lookup(const struct ksymtab *t, uint64_t addr,
			    const char **module, uint64_t *offset);

/* Number of symbols after finalize. */
size_t ksymtab__count(const struct ksymtab *t);

/* True for frames of the tracer itself (BPF helpers, BPF program trampolines,
 * tracepoint and perf overflow glue). The report strips innermost kernel
 * frames while this is true and stops at the first other frame. */
bool ksymtab__is_tracer_frame(const char *name);

void ksymtab__free(struct ksymtab *t);

/* ---- CPython: the line of a bytecode offset (pyline.c) ----------------- */

/* A CPython version as sym_pyline() takes it: major << 8 | minor. */
#define SYM_PYVER(major, minor) ((unsigned int)(major) << 8 | (unsigned int)(minor))

/* sym_pyline()'s answer for an instruction the table gives no line (3.10+:
 * co_lines() says None, frame.f_lineno is None, traceback prints "line
 * None"); *line is then -1, what PyCode_Addr2Line() returns. */
#define SYM_PYLINE_NONE 1

/*
 * The line of the instruction at byte_offset (f_lasti * sizeof(_Py_CODEUNIT),
 * as frame.f_lineno and traceback compute it: PyCode_Addr2Line()) in a code
 * object of CPython `version` (SYM_PYVER(3, 8) to SYM_PYVER(3, 13)) whose
 * co_firstlineno is firstlineno and whose raw line table is table[0..len):
 * co_lnotab for 3.8 and 3.9, co_linetable for 3.10 and later (from 3.11 the
 * location table). A negative offset (a frame not started) is firstlineno.
 *
 * Returns 0 with *line set, SYM_PYLINE_NONE (the instruction has no line),
 * -EINVAL for a version it does not know (or NULL arguments), -ENOEXEC for a
 * malformed table (an odd length where entries are pairs, a 3.11+ table not
 * starting an entry, a varint cut short or over 32 bits, a negative line or
 * firstlineno, a line past int), -ERANGE (3.10+) for an offset past the code
 * the table describes (CPython says -1 there: the offset is not this code
 * object's). 3.8 and 3.9 tables do not say where the code ends: an offset
 * past them has the last line, as in CPython. The table is hostile input:
 * nothing is read past len, and every loop ends with the table.
 */
int sym_pyline(unsigned int version, const uint8_t *table, size_t len, int firstlineno,
	       int byte_offset, int *line);

#endif /* STKREC_SYM_SYM_H */
