/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Interning of strings and stacks for the capture: each distinct value gets
 * an id and its definition record is written (through the writer) the first
 * time it is seen, before the record that uses it. Beside the writer, in
 * format/, because the recorder and the symbol pack both write through it.
 */
#ifndef STKREC_FORMAT_INTERN_H
#define STKREC_FORMAT_INTERN_H

#include <stdint.h>
#include <stddef.h>
#include "format/capture.h"

struct intern;

/* Called once for every new kernel stack, before its STACK record is
 * written (ksyms uses it to write the KSYM records the stack needs). */
typedef int (*intern_kstack_fn)(void *ctx, const uint64_t *ips, uint16_t nr);

int intern__new(struct cap_writer *w, struct intern **out);
void intern__free(struct intern *in);
void intern__set_kstack_hook(struct intern *in, intern_kstack_fn fn, void *ctx);
/* Ids of each kind of definition: the last given out, or a base. */
struct intern_ids {
	uint32_t string, stack, code;
};
/* New values get ids above these (the strings of a capture being rewritten
 * keep theirs; a flight recorder's next segment continues the ids of the
 * last, so that segments merge without renumbering); only before the
 * first value. */
int intern__set_bases(struct intern *in, const struct intern_ids *base);
/* The highest id of each kind given out (the base when none was). */
void intern__last_ids(const struct intern *in, struct intern_ids *ids);

/* Id (>= 1) of string s[0..len), writing its STRING record when new. */
int intern__string(struct intern *in, const char *s, size_t len, uint32_t *id);
/* Id of the stack (kind CAP_STACK_USER or CAP_STACK_KERNEL); nr == 0 gives
 * CAP_STACK_NONE. Writes the STACK record when new. */
int intern__stack(struct intern *in, uint8_t kind, const uint64_t *ips, uint16_t nr,
		  uint32_t *id);

/* Id (>= 1) of the code object (code's firstlineno, version and flags;
 * the lengths come from the strings and linetable_len), writing its
 * PY_CODE record (§4.24) when new: equal code objects of two processes
 * share one. A line table that does not fit in the record is left out
 * (CAP_PY_CODE_NO_LINES). */
int intern__pycode(struct intern *in, const struct cap_py_code *code, const char *qualname,
		   const char *filename, const uint8_t *linetable, uint32_t linetable_len,
		   uint32_t *id);

uint64_t intern__nr_stacks(const struct intern *in);
uint64_t intern__nr_pycodes(const struct intern *in);
uint64_t intern__nr_strings(const struct intern *in);

#endif
