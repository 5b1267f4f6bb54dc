/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the tests of cfi/cfi.c share (tests/test_record_cfi*.c): a
 * scratch directory (cfit_dir) holding prog.c, a small program with rsp-
 * and rbp-based frames; building it or other sources there; a file's rows;
 * the comparison of every row with readelf's reading of the same tables.
 */
#ifndef STKREC_TESTS_UTIL_CFI_H
#define STKREC_TESTS_UTIL_CFI_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cfi/cfi.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO "/lib64/ld-linux-x86-64.so.2"
#define PYTHON "/usr/bin/python3.11"
#define NODE "/usr/bin/node"

/* What a readelf row means: a kind with its offsets, or EXPR (a CFA
 * expression, checked by the tests of .plt and signal frames). */
#define EXPR 0xff

struct cfit_rule {
	uint8_t kind;
	uint16_t cfa_off;
	int8_t fp_off;
};

struct cfit_cie {
	int sect;
	uint64_t off;
	bool signal;
	bool has_row;
	struct cfit_rule row;
};

struct cfit_cmp {
	size_t compared, mismatches, exprs, sig_rows, sig_bad;
	struct cfit_cie cies[64];
	size_t nr_cies;
	uint64_t (*eh)[2]; /* .eh_frame FDE ranges */
	size_t nr_eh, cap_eh;
};

/* The scratch directory, made by cfit_setup (a suite's .init), removed by
 * cfit_teardown (.fini). */
extern char cfit_dir[];
/* prog.c's source, for tests that build it with more around it. */
extern const char cfit_prog_src[];
void cfit_setup(void);
void cfit_teardown(void);
/* cfit_dir/name built with cc FLAGS from source (prog.c when NULL); skips
 * the test where cc refuses the flags. */
const char *cfit_build(const char *name, const char *flags, const char *source);
/* cfit_dir/name built -O2 from prog.c and the assembly text (name.s). */
const char *cfit_build_asm(const char *name, const char *text);
/* path's rows, asserted loaded and not empty. */
void cfit_load(const char *path, struct stkrec_cfi_row **rows, size_t *nr);
/* Skips the test when path is not installed. */
void cfit_need(const char *path);
/* Rows sorted, strictly increasing, no equal neighbours, ending in GAP. */
void cfit_well_formed(const struct stkrec_cfi_row *r, size_t nr);
/* path's rows compared with readelf's: no row differs, at least min_rows
 * compared; the counts into out when not NULL. */
void cfit_same_as_readelf(const char *path, size_t min_rows, struct cfit_cmp *out);
/* path's section called name into out: found? */
bool cfit_section(const char *path, const char *name, GElf_Shdr *out);
/* The value of path's symbol-table entry called name, 0 when none. */
uint64_t cfit_symbol(const char *path, const char *name);
/* The kind of the row covering pc, 0xff where none does. */
uint8_t cfit_kind_at(const struct stkrec_cfi_row *rows, size_t nr, uint64_t pc);

#endif
