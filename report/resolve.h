/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frame naming for the report views. A user ip is mapped through the
 * process's mapping at the event's time to (object, file offset) and named by
 * the symbolizer (from the binary, else the capture's symbol pack), else
 * "<basename>+0x<offset>", else "[unknown]"; one in no file mapping (JIT
 * code) by the capture's JIT map entries, dso "perf-PID.map"; a Python
 * frame (FORMAT.md §4.3) by its PY_CODE, "qualname (file.py:LINE)" with
 * the line of its instruction, dso the script's file name; a kernel ip
 * is named from the capture's kernel symbols, with the tracer's own innermost
 * frames stripped. Every distinct (object, offset) and kernel ip is resolved
 * once per resolver: cost grows with distinct addresses, not with events.
 */
#ifndef STKREC_REPORT_RESOLVE_H
#define STKREC_REPORT_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>
#include "report/model.h"
#include "sym/sym.h"

struct resolver;

/* A named frame. Strings live as long as the resolver. */
struct rframe {
	uint64_t ip;
	const char *name;   /* never NULL */
	const char *dso;    /* "libc.so.6", "[kernel.kallsyms]", "[ext4]", "[unknown]" */
	const char *srcfile;/* with --srcline, else NULL */
	uint64_t offset;    /* ip - symbol start, when has_offset */
	int line;
	bool kernel;
	bool inlined;       /* an inlined function inside the next frame */
	bool has_offset;
	bool special;       /* a placeholder: missed or lost stack */
	bool python;        /* a Python frame: func in srcfile at line (0:
			     * unknown), or a marker (func NULL) */
	const char *func;   /* Python: the function's qualified name */
};

/* The function's name alone: a Python frame's qualified name (its line
 * and file apart, for the exports), else the frame's name. */
static inline const char *rframe_func(const struct rframe *f)
{
	return f->python && f->func ? f->func : f->name;
}

/* Most frames one stack can yield (inlined levels included). */
#define RESOLVE_MAX_FRAMES 512

/* sym_opts may be NULL. The model must outlive the resolver. */
int resolver__new(const struct model *m, const struct symbolizer_opts *sym_opts,
		  struct resolver **out);
void resolver__free(struct resolver *r);

/* Frames of a user stack of pid at `time`, innermost first, into
 * out[0..max). CAP_STACK_NONE gives 0 frames; CAP_STACK_LOST one
 * "[Missed User Stack]" frame; an id never defined one "[lost stack]" frame.
 * Returns the count, or -ENOMEM. */
int resolver__user(struct resolver *r, uint32_t pid, uint64_t time, uint32_t stack_id,
		   struct rframe *out, int max);
/* The same for a kernel stack ("[Missed Kernel Stack]"), tracer frames
 * stripped. */
int resolver__kernel(struct resolver *r, uint32_t stack_id, struct rframe *out, int max);

void resolver__sym_stats(const struct resolver *r, struct symbolizer_stats *out);
/* Distinct JIT map entries that named frames (FORMAT.md §4.21). */
uint64_t resolver__jit_named(const struct resolver *r);

#endif /* STKREC_REPORT_RESOLVE_H */
