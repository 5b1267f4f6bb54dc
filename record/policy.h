/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the recorder does on this kernel, decided in one place from one
 * probe (kfeatures.h): refused for an event kind the kernel cannot record,
 * or recorded with a fallback where it lacks a feature (PREEMPT_RT,
 * --call-graph dwarf's helpers, the task iterators, the block layer's
 * submitter tracepoints), each fallback one row of policy.c's table. The
 * lines that say so are handed back for src/ to print; recorder__new()
 * loads what was decided.
 */
#ifndef STKREC_RECORD_POLICY_H
#define STKREC_RECORD_POLICY_H

#include "record/kfeatures.h"

struct record_opts;

/* What a recording uses (record_policy.with): the options ask for them,
 * the fallbacks take them away or put others in their place. */
#define RP_DWARF       (1u << 0) /* --call-graph dwarf */
#define RP_CG_DEFAULT  (1u << 1) /* the call graph is the default, not asked */
#define RP_TP_SWITCH   (1u << 2) /* -e offcpu: sched_switch by tp_btf, else
				  * raw_tp */
#define RP_SLOT_ALLOC  (1u << 3) /* off-CPU slots allocated in sched_switch,
				  * else a preallocated hash */
#define RP_WAITS       (1u << 4) /* -e offcpu: task iterators, for the waits
				  * open at the start and the stop */
#define RP_WAITS_USER  (1u << 5) /* ... with their user stacks */
#define RP_IO_START    (1u << 6) /* -e bio: the submitter's context at
				  * block_io_start, */
#define RP_GETRQ       (1u << 7) /* else at block_getrq, else at
				  * block_rq_insert alone */

enum record_policy_level {
	RECORD_POLICY_ERROR, /* recording cannot start */
	RECORD_POLICY_WARN,
	RECORD_POLICY_DEBUG, /* -v */
};

#define RECORD_POLICY_NOTES 4

/* One line saying what was decided, without the "record: " prefix. */
struct record_policy_note {
	enum record_policy_level level;
	char text[256];
};

struct record_policy {
	unsigned with;        /* RP_* */
	int nr_notes;
	struct record_policy_note notes[RECORD_POLICY_NOTES];
};

/*
 * Probe the kernel and decide how o records on it: p->with, and
 * o->call_graph, which a fallback may turn to RECORD_CG_FP. 0, or a
 * negative code when recording cannot start; either way p->notes say what
 * was decided, in the order to print them (the last one why it cannot).
 */
int record_policy__decide(struct record_opts *o, struct record_policy *p);
/* The same on a kernel with the features in kf, probed already. */
int record_policy__apply(struct record_opts *o, const struct kfeatures *kf,
			 struct record_policy *p);

#endif /* STKREC_RECORD_POLICY_H */
