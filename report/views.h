/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report views. Each is one file, report/view_<name>.c, with the same
 * signature: it reads the model through the context, applies the filter,
 * names frames through the resolver and writes to `out` only. It returns 0
 * or a negative code (-errno, -ENOMEM); it never prints diagnostics.
 *
 * Every view aggregates first -- by (pid, comm, user stack, kernel stack)
 * in one hash table -- and names the distinct stacks afterwards, so the
 * cost per event is a couple of hash lookups whatever the symbolization;
 * the views of every event (script, speedscope, Chrome) name each distinct
 * stack once and look it up per event.
 * The helpers they share, private to report/view_*.c, are in views_int.h.
 */
#ifndef STKREC_REPORT_VIEWS_H
#define STKREC_REPORT_VIEWS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/filter.h"
#include "report/model.h"
#include "report/resolve.h"

enum view_sort {
	SORT_COMM, SORT_PID, SORT_DSO, SORT_SYM, SORT_WAIT, SORT_USYM,
	SORT_CGROUP, SORT_CONTAINER, /* the event's cgroup path, its container */
	SORT_MAX
};

struct report_opts {
	enum view_sort sort[SORT_MAX]; /* perf view columns; nsort 0: comm,dso,sym
					* (off-CPU without -g: comm,wait,usym) */
	int nsort;
	bool callgraph;     /* perf view -g */
	bool header;        /* perf view: the full header, every recorder counter */
	bool delimited;     /* folded -d: "-" between user and kernel frames */
	bool annotate;      /* folded -a: "_[k]" after kernel frames */
	bool with_pid;      /* folded --pid: first frame "comm-PID" */
	bool json;          /* top-waits --json */
	bool srcline;       /* file:line after names when known (view_srcline) */
	bool script_folded; /* script --folded */
	uint64_t interval_ns; /* biotop; 0: 1 s */
	uint64_t count;     /* biotop intervals to print; 0: all */
	uint32_t max_rows;  /* biotop and top-waits rows; 0: biotop 20, top-waits all */
	bool icicle;        /* svg: root at the top */
	/* pprof, speedscope: the CPU time one CPU sample stands for (the
	 * recording's sampling period); 0: unknown, samples are counted only */
	uint64_t cpu_period_ns;
	bool wakers;        /* folded --wakers: offwaketime's waiter;--;waker */
	uint32_t chain_id;  /* --chain TID|PID: the waits behind its longest */
	uint32_t chain_hops; /* ... followed this far (0: the default) */
};

struct report_ctx {
	const struct model *model;
	struct resolver *res;
	const struct filter *filter;
	struct report_opts opts;
};

int view_perf(struct report_ctx *ctx, FILE *out);
int view_folded(struct report_ctx *ctx, FILE *out);
int view_topwaits(struct report_ctx *ctx, FILE *out);
int view_biotop(struct report_ctx *ctx, FILE *out);
int view_script(struct report_ctx *ctx, FILE *out);
/* --chain: who woke a thread's longest wait, what that waker waited on
 * just before, and so on (view_chain.c). -ENOENT: no such thread. */
int view_chain(struct report_ctx *ctx, FILE *out);
/* Flame graph of view_fold_kind()'s folded stacks, or of block I/O with
 * -e bio alone (view_svg.c). */
int view_svg(struct report_ctx *ctx, FILE *out);

/* Exports for other viewers, each streamed to `out` as it is built. */
/* pprof's profile.proto, gzip-compressed (view_pprof.c). */
int view_pprof(struct report_ctx *ctx, FILE *out);
/* speedscope's JSON file format (view_speedscope.c). */
int view_speedscope(struct report_ctx *ctx, FILE *out);
/* Trace Event Format JSON, for Perfetto and chrome://tracing (view_chrome.c). */
int view_chrome(struct report_ctx *ctx, FILE *out);

/* ---- folded stacks as data (view_folded.c) ---------------------------- */

/* One folded stack "comm;outermost;...;innermost" (len bytes, not
 * NUL-terminated) and its value: off-CPU ns, CPU samples or block I/O bytes.
 * A nonzero return stops view_fold(), which returns it. */
typedef int (*view_fold_fn)(void *arg, const char *stack, size_t len, uint64_t value);
/* The filtered events of kind as view_folded prints them: merged by name,
 * in bytewise order, values not rounded. Block I/O, without stacks, folds
 * to "comm;disk" ("MAJ:MIN" when the disk has no name). 0 or -ENOMEM. */
int view_fold(struct report_ctx *ctx, enum cap_kind kind, view_fold_fn cb, void *arg);

/* ---- formatting the views share with report/diff.c (view_common.c) ---- */

/* s as the inside of a JSON string: '"' and '\' escaped, control bytes
 * as \u00XX, other bytes as they are (UTF-8 passes through). */
void view_json_chars(FILE *out, const char *s);
/* Wall clock of a monotonic time (ISO 8601, local, microseconds). */
void view_fmt_walltime(const struct model *m, uint64_t t, char *buf, size_t len);
/* The off-CPU value of a sum of ns in microseconds, rounded. */
static inline uint64_t view_ns_to_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

#endif /* STKREC_REPORT_VIEWS_H */
