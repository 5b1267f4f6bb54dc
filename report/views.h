/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report views. Each is one file, report/view_<name>.c, with the same
 * signature: it reads the model through the context, applies the filter,
 * names frames through the resolver and writes to `out` only. It returns 0
 * or a negative code (-errno, -ENOMEM); it never prints diagnostics.
 *
 * Every view aggregates first -- by (pid, comm, user stack, kernel stack)
 * in one hash table -- and names the distinct stacks afterwards, so the
 * cost per event is a couple of hash lookups whatever the symbolization.
 */
#ifndef STKREC_REPORT_VIEWS_H
#define STKREC_REPORT_VIEWS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/filter.h"
#include "report/idmap.h"
#include "report/model.h"
#include "report/resolve.h"

enum view_sort { SORT_COMM, SORT_PID, SORT_DSO, SORT_SYM, SORT_MAX };

struct report_opts {
	enum view_sort sort[SORT_MAX]; /* perf view columns; nsort 0: comm,dso,sym */
	int nsort;
	bool callgraph;     /* perf view -g */
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
/* Flame graph of view_fold_kind()'s folded stacks, or of block I/O with
 * -e bio alone (view_svg.c). */
int view_svg(struct report_ctx *ctx, FILE *out);

/* ---- folded stacks as data (view_folded.c) ---------------------------- */

/* One folded stack "comm;outermost;...;innermost" (len bytes, not
 * NUL-terminated) and its value: off-CPU ns, CPU samples or block I/O bytes.
 * A nonzero return stops view_fold(), which returns it. */
typedef int (*view_fold_fn)(void *arg, const char *stack, size_t len, uint64_t value);
/* The filtered events of kind as view_folded prints them: merged by name,
 * in bytewise order, values not rounded. Block I/O, without stacks, folds
 * to "comm;disk" ("MAJ:MIN" when the disk has no name). 0 or -ENOMEM. */
int view_fold(struct report_ctx *ctx, enum cap_kind kind, view_fold_fn cb, void *arg);
/* The kind of view_folded: block I/O when it alone is selected, else
 * off-CPU when selected and present, else CPU. */
enum cap_kind view_fold_kind(const struct report_ctx *ctx);

/* ---- helpers shared by the views (view_common.c) ---------------------- */

/* Events of one kind grouped by (pid, comm, ustack, kstack); comm is 0
 * when grouped with AGG_ANY_COMM. value: off-CPU ns or 1 per CPU sample. */
struct agg_group {
	uint32_t pid, comm, ustack, kstack;
	uint64_t count, total, max;
	uint64_t max_time;    /* event time of the maximum */
	uint64_t first_time;  /* time of the first event, for mapping lookups */
	uint32_t max_tid;
	uint32_t max_comm;    /* thread name at the maximum */
};

struct agg {
	struct agg_group *g;
	size_t n, cap;
	struct idmap idx;
};

#define AGG_ANY_COMM 0x1

/* Group the filtered events of kind (CAP_KIND_OFFCPU or CAP_KIND_CPU).
 * The -U/-K filter is applied to the stack ids. 0 or -ENOMEM. */
int agg__collect(struct agg *a, const struct report_ctx *ctx, enum cap_kind kind,
		 unsigned flags);
void agg__fini(struct agg *a);

/* Frames of one stack pair, innermost first: kernel frames, then user
 * frames. *nkernel (may be NULL) gets the number of kernel frames. buf must
 * hold VIEW_MAX_FRAMES. Returns the count or -ENOMEM. */
#define VIEW_MAX_FRAMES (2 * RESOLVE_MAX_FRAMES)
int view_frames(const struct report_ctx *ctx, uint32_t pid, uint64_t time,
		uint32_t ustack, uint32_t kstack, struct rframe *buf, int *nkernel);

/* With opts.srcline, " FILE:LINE" of a frame's source line (rframe srcfile
 * and line), FILE the basename as perf report shows it; "" when unknown or
 * without opts.srcline. Written into buf (VIEW_SRCLINE_MAX bytes) unless "".
 * The tables, -g, the folded stacks and top-waits put it after the name. */
#define VIEW_SRCLINE_MAX 256
const char *view_srcline(const struct report_ctx *ctx, const char *file, int line, char *buf);

/* "seconds.microseconds" of a monotonic time since the capture start. */
void view_fmt_reltime(const struct model *m, uint64_t t, char *buf, size_t len);
/* Wall clock of a monotonic time (ISO 8601, local, microseconds). */
void view_fmt_walltime(const struct model *m, uint64_t t, char *buf, size_t len);
/* The off-CPU value of a sum of ns in microseconds, rounded. */
static inline uint64_t view_ns_to_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

#endif /* STKREC_REPORT_VIEWS_H */
