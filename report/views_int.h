/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to the views (report/view_*.c): the aggregation and frame helpers
 * of view_common.c, the wakers' of view_wakers.c and the kind the folded
 * views fold. The public view API -- what src/ and report/diff.c call -- is
 * report/views.h.
 */
#ifndef STKREC_REPORT_VIEWS_INT_H
#define STKREC_REPORT_VIEWS_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report/idmap.h"
#include "util/escape.h"
#include "report/views.h"

/* ---- folded stacks (view_folded.c) ------------------------------------- */

/* The kind of view_folded: block I/O when it alone is selected, else
 * off-CPU when selected and present, else CPU. */
enum cap_kind view_fold_kind(const struct report_ctx *ctx);

/* ---- who woke the waits (view_wakers.c) -------------------------------- */

/* Where a waker woke the thread: the index of the innermost of its nk
 * kernel frames outside the scheduler's wakeup code (try_to_wake_up(),
 * wake_up_*(), wait queue wake functions); 0 when all are. */
int view_wake_site(const struct rframe *fr, int nk);
/* The waker's frames (innermost first, kernel then user; -U/-K applied)
 * into fr (VIEW_MAX_FRAMES), *nk of them kernel ones. */
int view_waker_frames(const struct report_ctx *ctx, const struct cap_wakeup *w,
		      struct rframe *fr, int *nk);
/* The waker's name: "[hardirq]", "[softirq]", or its thread's comm. */
const char *view_waker_comm(const struct report_ctx *ctx, const struct cap_wakeup *w);
/* The request whose completion ended the wait, if w ran in one and the
 * waker's kernel frames (fr[0..nk)) show the completion path; NULL else. */
const struct cap_bio *view_wake_bio(const struct report_ctx *ctx, const struct cap_wakeup *w,
				    const struct rframe *fr, int nk);
/* "vda W 4K" of a request (disk name, or MAJ:MIN). */
void view_bio_label(const struct report_ctx *ctx, const struct cap_bio *b, char *buf,
		    size_t len);

/* ---- helpers shared by the views (view_common.c) ---------------------- */

/* A comm (char[16], FORMAT.md §4.4) escaped for a text view (escape.h). */
#define VIEW_COMM_ESC ESC_SIZE(16)
/* " <- NAME" style: sep, then name escaped (escape.h), to out. */
void view_put_name(const char *sep, const char *name, FILE *out);


/* Events of one kind grouped by (pid, comm, ustack, kstack); comm is 0
 * when grouped with AGG_ANY_COMM. value: off-CPU ns or 1 per CPU sample. */
struct agg_group {
	uint32_t pid, comm, ustack, kstack;
	uint64_t cgroup;      /* with AGG_BY_CGROUP; else 0 */
	uint64_t count, total, max; /* off-CPU: of the parts seen */
	uint64_t max_time;    /* event time of the maximum (a wait: its part seen) */
	uint64_t max_start;   /* the maximum's own start (a wait open at the
			       * start: before the capture's, where known) */
	uint64_t first_time;  /* time of the first event, for mapping lookups */
	uint64_t open;        /* waits open at the start or the stop */
	uint32_t max_tid;
	uint32_t max_comm;    /* thread name at the maximum */
	uint32_t max_open;    /* CAP_OFFCPU_OPEN_* of the maximum */
	struct cap_offcpu max_offcpu; /* off-CPU: the maximum interval */
	uint64_t max_seq;     /* folded from a model's groups: the maximum's
			       * number there (struct model_group) */
};

/* A thread's name over a span of time, as model__comm_span() gave it. */
struct agg_comm {
	uint64_t from, to;
	uint32_t tid, comm;
	bool valid;
};
#define AGG_COMMS 64

struct agg {
	struct agg_group *g;
	size_t n, cap;
	struct agg_comm comms[AGG_COMMS]; /* by tid: the events' names */
	struct idmap idx;
	struct idmap tuples;  /* AGG_BY_CGROUP: (stacks, cgroup) -> number */
	uint32_t ntuples;
	struct idmap idle;    /* AGG_FOLD_IDLE: the tids left out */
	size_t nidle;         /* ... how many */
};

#define AGG_ANY_COMM 0x1
#define AGG_BY_CGROUP 0x2 /* groups of one cgroup each */
#define AGG_FOLD_IDLE 0x4 /* view_idle_kthread() waits: counted per thread
			   * in nidle, in no group */

/* A kernel thread idle throughout: a wait of a kernel thread open at both
 * the start and the end of the recording, in an idle sleep
 * (TASK_INTERRUPTIBLE, or TASK_NOLOAD: the kernel's TASK_IDLE, which the
 * load average leaves out too). A kernel thread stuck in plain D state all
 * along is not idle. The default table counts these in one line. */
bool view_idle_kthread(const struct model *m, const struct cap_offcpu *e);

/* Group the filtered events of kind (CAP_KIND_OFFCPU or CAP_KIND_CPU):
 * those the model holds, or a streamed model's replay. The -U/-K filter
 * is applied to the stack ids. 0, -ENOMEM, or a replay's read error. */
int agg__collect(struct agg *a, const struct report_ctx *ctx, enum cap_kind kind,
		 unsigned flags);
/* Both kinds at once, each into its own groups with its flags (a NULL
 * agg: that kind is not wanted): one replay of a streamed model, not two. */
int agg__collect_kinds(struct agg *off, unsigned off_flags, struct agg *cpu,
		       unsigned cpu_flags, const struct report_ctx *ctx);
void agg__fini(struct agg *a);

/* Frames of one stack pair, innermost first: kernel frames, then user
 * frames. *nkernel (may be NULL) gets the number of kernel frames. buf must
 * hold VIEW_MAX_FRAMES. Returns the count or -ENOMEM. */
#define VIEW_MAX_FRAMES (2 * RESOLVE_MAX_FRAMES)
int view_frames(const struct report_ctx *ctx, uint32_t pid, uint64_t time,
		uint32_t ustack, uint32_t kstack, struct rframe *buf, int *nkernel);

/* Where a wait waited: the index of the innermost of the nk kernel frames
 * outside the scheduler's own code (the kernel's wchan: hrtimer_nanosleep,
 * futex_wait_queue, anon_pipe_read, io_schedule's caller); 0 when all are
 * the scheduler's. */
int view_wait_site(const struct report_ctx *ctx, const struct rframe *fr, int nk);
/* The user function it blocked in: the index of the innermost user frame
 * (fr[nk..n)) outside the C library and the dynamic loader (their syscall
 * wrappers), else of the innermost user frame; -1 without user frames. */
int view_user_site(const struct rframe *fr, int nk, int n);

/* With opts.srcline, " FILE:LINE" of a frame's source line (rframe srcfile
 * and line), FILE the basename as perf report shows it; "" when unknown or
 * without opts.srcline. Written into buf (VIEW_SRCLINE_MAX bytes) unless "".
 * The tables, -g, the folded stacks and top-waits put it after the name. */
#define VIEW_SRCLINE_MAX 256
const char *view_srcline(const struct report_ctx *ctx, const char *file, int line, char *buf);

/* The cgroup of an event as the views print it: its path, "[unknown]"
 * for 0, "[cgroup ID]" when no CGROUP record names it; into buf
 * (VIEW_CGROUP_MAX) unless it is the path. */
#define VIEW_CGROUP_MAX 32
const char *view_cgroup(const struct model *m, uint64_t id, char *buf);
/* Its container, container__name()'s "RUNTIME:ID" ("-" for none), in
 * buf (VIEW_CONTAINER_MAX); *full (may be NULL) gets the full ID ("" for
 * none). */
#define VIEW_CONTAINER_MAX 300
const char *view_container(const struct model *m, uint64_t id, char *buf, const char **full);

/* " ns PID/TID": the ids tid had at `time` inside its own PID namespace,
 * printed after its host "PID/TID" where they are known and differ from
 * them; "" otherwise (every capture before format 1.5). Into buf
 * (VIEW_NS_MAX) unless "". */
#define VIEW_NS_MAX 32
const char *view_ns_ids(const struct model *m, uint32_t pid, uint32_t tid, uint64_t time,
			char *buf);
/* " cgroup PATH container NAME" of an event in a container (a named one:
 * report/container.h); nothing for the host's own cgroups and the unknown
 * one (0), so that script prints the host's events, and older captures,
 * as before. To out, names escaped. */
void view_put_cgroup(const struct model *m, uint64_t cgroup, FILE *out);

/* "seconds.microseconds" of a monotonic time since the capture start. */
void view_fmt_reltime(const struct model *m, uint64_t t, char *buf, size_t len);

/* The name of a block device, or "MAJ:MIN" in buf (VIEW_DISK_MAX bytes)
 * when the capture names none. */
#define VIEW_DISK_MAX 32
const char *view_disk(const struct model *m, uint32_t major, uint32_t minor, char *buf);

/* ---- events one at a time: script and the exports (view_common.c) ----- */

/* One event that passed the filters: its kind, its index in
 * model__offcpu(), model__cpu() or model__bio(), its task, and the time
 * the filters place it at (switch-out, sample, completion). */
struct view_event {
	uint64_t time;
	uint32_t idx;
	uint32_t pid, tid;
	uint8_t kind;
};

/* The events of the kinds selected (by -e) and wanted (a mask of 1 <<
 * CAP_KIND_*) that pass the filters, in model order (off-CPU, CPU, block
 * I/O, then wakeups: a wakeup's task is the thread it woke): *out is
 * malloc()ed, for the caller to sort and free. 0 or -ENOMEM. */
#define VIEW_EVENTS_STACKS (1u << CAP_KIND_OFFCPU | 1u << CAP_KIND_CPU | 1u << CAP_KIND_BIO)
#define VIEW_EVENTS_ALL (VIEW_EVENTS_STACKS | 1u << CAP_KIND_WAKEUP)
int view_events(const struct report_ctx *ctx, unsigned kinds, struct view_event **out,
		size_t *n);

/* What the views print of an off-CPU, CPU or block I/O event. */
struct view_evinfo {
	uint64_t start;       /* off-CPU: switch-out; CPU: the sample; block
	                       * I/O: issue. Its stacks were taken then. */
	uint64_t end;         /* switch-in, the sample, completion */
	uint32_t pid, tid;
	uint32_t comm;        /* model__comm_name() id */
	int32_t cpu;          /* -1 for block I/O */
	uint32_t ustack, kstack; /* with -U/-K applied */
	uint64_t cgroup;      /* 0 unknown */
};
void view_event_info(const struct report_ctx *ctx, const struct view_event *e,
		     struct view_evinfo *out);
/* The same of an interval or a sample itself (a streamed model's). */
void view_offcpu_info(const struct report_ctx *ctx, const struct cap_offcpu *o,
		      struct view_evinfo *out);
void view_cpu_info(const struct report_ctx *ctx, const struct cap_cpu *c,
		   struct view_evinfo *out);

/* Events with the same key have the same frames (view_frames()): a view
 * names each key once. */
struct idmap_key view_stack_key(const struct model *m, const struct view_evinfo *e);

/* ---- JSON and numbers for the exports (view_common.c) ------------------ */

/* s as a JSON string, quotes included, with more ("" for nothing)
 * appended inside it. */
void view_json_str(FILE *out, const char *s, const char *more);
/* fr[0..n), innermost first, as a JSON array of names outermost first,
 * each with its --srcline suffix: top-waits --json's and the Chrome
 * trace's "stack". */
void view_json_stack(const struct report_ctx *ctx, const struct rframe *fr, int n,
		     FILE *out);
/* Decimal v at p (at most 20 bytes); returns the end. */
char *view_put_u64(char *p, uint64_t v);
/* t - base in microseconds with three decimals, "-" first when negative
 * ("1234.567", at most 25 bytes); returns the end. */
char *view_put_us(char *p, uint64_t t, uint64_t base);

#endif /* STKREC_REPORT_VIEWS_INT_H */
