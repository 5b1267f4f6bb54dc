/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel symbol table for `stkrec report`, built from a capture's KSYM and
 * KMOD records (never from the machine the report runs on).
 *
 * Usage: ksymtab__new(), ksymtab__add() for every symbol, ksymtab__finalize()
 * once, then ksymtab__lookup() any number of times. The library never prints;
 * functions return 0 or -errno.
 */
#ifndef STKREC_REPORT_KSYMTAB_H
#define STKREC_REPORT_KSYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif /* STKREC_REPORT_KSYMTAB_H */
