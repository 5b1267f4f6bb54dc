// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel policy: what the options ask for (RP_* bits), then every
 * fallback of the table below, in its order, on what is left. A feature
 * every recording of a kind needs is kfeatures.c's table (its `events`):
 * without it the kind is refused, with the line kfeatures__explain() gives.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "record/policy.h"
#include "record/record.h"

/* fallbacks[].feature: the first of what --call-graph dwarf needs, or the
 * architecture (kfeatures__dwarf_missing()) */
#define DWARF_NEEDS KF_NR

enum say {
	SAY_NOTHING,
	SAY_WARN,
	SAY_WARN_IF_ASKED, /* a warning when the call graph was asked, -v else */
};

/*
 * A fallback: a recording that uses all of `uses`, on a kernel without
 * `feature` (with it, for if_present), does without `drop`, uses `add`
 * instead, and says so as `say` says, in kfeatures__explain()'s words.
 * Rows apply in this order, each to what the rows before it left.
 */
static const struct fallback {
	int feature;
	bool if_present;
	unsigned uses, drop, add;
	enum say say;
} fallbacks[] = {
	/* PREEMPT_RT: no allocation in sched_switch (the allocator's locks
	 * sleep there), so the slots are a preallocated hash, not task
	 * storage; the verifier requires it of raw_tp programs anyway */
	{ KF_PREEMPT_RT, true, RP_SLOT_ALLOC, RP_SLOT_ALLOC | RP_TP_SWITCH, 0, SAY_NOTHING },
	{ KF_TASK_ITER, false, RP_WAITS, RP_WAITS | RP_WAITS_USER, 0, SAY_WARN },
	{ KF_TASK_ITER_USER, false, RP_WAITS_USER, RP_WAITS_USER, 0, SAY_NOTHING },
	{ DWARF_NEEDS, false, RP_DWARF, RP_DWARF, 0, SAY_WARN_IF_ASKED },
	/* the submitter's context: block_io_start, else block_getrq, else
	 * block_rq_insert alone (which a request without a scheduler skips) */
	{ KF_TP_IO_START, false, RP_IO_START, RP_IO_START, RP_GETRQ, SAY_NOTHING },
	{ KF_TP_GETRQ, false, RP_GETRQ, RP_GETRQ, 0, SAY_NOTHING },
};

/* What the options ask for, before the kernel has a say. */
static unsigned asked(const struct record_opts *o)
{
	unsigned with = RP_SLOT_ALLOC;

	if (!o->call_graph_set)
		with |= RP_CG_DEFAULT;
	/* by default, dwarf where user stacks are taken: not with -K (kernel
	 * stacks only) or -k (kernel threads only) */
	if (o->call_graph == RECORD_CG_DWARF &&
	    (o->call_graph_set || (!o->kernel_stacks_only && !o->kernel_threads)))
		with |= RP_DWARF;
	if (o->events & RECORD_EV_OFFCPU)
		with |= RP_TP_SWITCH | RP_WAITS | RP_WAITS_USER;
	if (o->events & RECORD_EV_BIO)
		with |= RP_IO_START;
	return with;
}

/* The feature whose lack (or presence) row fb falls back for, or -1. */
static int lacks(const struct kfeatures *kf, const struct fallback *fb)
{
	if (fb->feature == DWARF_NEEDS)
		return kfeatures__dwarf_missing(kf);
	return kf->present[fb->feature] == fb->if_present ? fb->feature : -1;
}

static void note(struct record_policy *p, enum record_policy_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct record_policy *p, enum record_policy_level level, const char *fmt, ...)
{
	struct record_policy_note *n;
	va_list ap;

	if (p->nr_notes == RECORD_POLICY_NOTES)
		return;
	n = &p->notes[p->nr_notes++];
	n->level = level;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

static void say(struct record_policy *p, const struct fallback *fb, int f)
{
	char why[sizeof(p->notes[0].text)];

	if (fb->say == SAY_NOTHING)
		return;
	kfeatures__explain(f, why, sizeof(why));
	if (fb->say == SAY_WARN_IF_ASKED && (p->with & RP_CG_DEFAULT))
		note(p, RECORD_POLICY_DEBUG, "%s", why);
	else
		note(p, RECORD_POLICY_WARN, "%s", why);
}

int record_policy__apply(struct record_opts *o, const struct kfeatures *kf,
			 struct record_policy *p)
{
	const struct fallback *fb;
	char why[sizeof(p->notes[0].text)];
	size_t i;
	int f;

	memset(p, 0, sizeof(*p));
	f = kfeatures__first_missing(kf, o->events);
	if (f >= 0) {
		note(p, RECORD_POLICY_ERROR, "%s", kfeatures__explain(f, why, sizeof(why)));
		return -ENOENT;
	}
	p->with = asked(o);
	for (i = 0; i < sizeof(fallbacks) / sizeof(fallbacks[0]); i++) {
		fb = &fallbacks[i];
		if ((p->with & fb->uses) != fb->uses)
			continue;
		f = lacks(kf, fb);
		if (f == -1)
			continue;
		say(p, fb, f);
		p->with = (p->with & ~fb->drop) | fb->add;
	}
	o->call_graph = p->with & RP_DWARF ? RECORD_CG_DWARF : RECORD_CG_FP;
	return 0;
}

int record_policy__decide(struct record_opts *o, struct record_policy *p)
{
	struct kfeatures kf;
	int err;

	err = kfeatures__probe(o->events, &kf);
	if (err) {
		memset(p, 0, sizeof(*p));
		note(p, RECORD_POLICY_ERROR, "cannot read kernel BTF: %s", strerror(-err));
		return err;
	}
	return record_policy__apply(o, &kf, p);
}
