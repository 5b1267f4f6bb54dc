/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Report-time filters, with the recorder's meanings: -p PIDs, -t TIDs,
 * --comm NAMEs, --cgroup PATTERNs, --time START,END, -m/-M block time, --state MASK, -u/-k
 * thread kind, -U/-K stack part, -e event kinds.
 *
 * Fill the fields (or call the setters), filter__bind() once against the
 * loaded model (it turns wall-clock times and names into what events carry),
 * then ask per event. The time of an event is its switch-out time (off-CPU;
 * the capture's start for a wait open then), its sample time (CPU) or its
 * completion time (block I/O).
 */
#ifndef STKREC_REPORT_FILTER_H
#define STKREC_REPORT_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include "report/model.h"

enum filter_threads { FILTER_THREADS_ALL, FILTER_THREADS_USER, FILTER_THREADS_KERNEL };
enum filter_stacks { FILTER_STACKS_BOTH, FILTER_STACKS_USER, FILTER_STACKS_KERNEL };
/* --python: which frames of a stack with Python frames are shown */
enum filter_python {
	FILTER_PYTHON_CLEAN, /* the interpreter's own frames between two Python
			      * frames hidden (the default) */
	FILTER_PYTHON_ALL,   /* every native frame too */
	FILTER_PYTHON_NONE,  /* no Python frames: native stacks only */
};

/* One end of --time, kept as written until bound to a capture. */
struct filter_when {
	int kind;             /* 0 none, 1 relative ns, 2 time of day, 3 absolute */
	uint64_t rel_ns;      /* kind 1: ns since capture start */
	int64_t tod_ns;       /* kind 2: ns since local midnight */
	int64_t abs_ns;       /* kind 3: realtime ns since the epoch */
};

struct filter {
	uint32_t *pids, *tids; /* sorted by filter__bind() */
	int npids, ntids;
	char **comms;          /* owned (filter__free) */
	int ncomms;
	size_t comms_cap;
	char **cgroups;        /* --cgroup patterns, owned (filter__free) */
	int ncgroups;
	size_t cgroups_cap;
	struct filter_when from, to;
	uint64_t min_ns, max_ns; /* off-CPU duration bounds, of the part seen
				  * (model__offcpu_seen()); max 0: none */
	bool open_only;        /* --open-waits: waits open at the start or stop */
	bool has_state;
	uint32_t state;        /* 0: exactly TASK_RUNNING (preempted); else any bit */
	enum filter_threads threads;
	enum filter_stacks stacks;
	enum filter_python python;
	unsigned kinds;        /* bit per enum cap_kind; 0: all */

	/* set by filter__bind() */
	uint64_t t_lo, t_hi;   /* monotonic ns, [t_lo, t_hi] */
	uint8_t *comm_ok;      /* per model comm id */
	uint8_t *cgroup_ok;    /* per model cgroup (model__cgroup_index()) */
	bool bound;
};

/* Parse "START,END" (either side may be empty): seconds since the capture
 * start ("1.5"), wall-clock time of day ("14:03:07.25", local time, on the
 * capture's day) or an ISO 8601 timestamp ("2026-11-22T14:03:07.25Z",
 * "...+01:00", or local without a zone). A value without a comma is START.
 * Returns 0 or -EINVAL. */
int filter__parse_time(struct filter *f, const char *spec);
/* Add comma-separated names to --comm. 0, -EINVAL or -ENOMEM. */
int filter__add_comms(struct filter *f, const char *list);

/* Add comma-separated patterns to --cgroup: an event is kept when one
 * matches its cgroup's path, its container's ID or its pod's UID; a
 * pattern with '*', '?' or '[' as a glob over the whole string (fnmatch(3),
 * '*' crossing '/'), else as a substring. Events whose cgroup is unknown
 * never match. 0, -EINVAL or -ENOMEM. */
int filter__add_cgroups(struct filter *f, const char *list);
/* Does cgroup id (an event's) pass --cgroup? */
bool filter__cgroup(const struct filter *f, const struct model *m, uint64_t cgroup);

/* Resolve against the model. 0, -EINVAL (START after END) or -ENOMEM. */
int filter__bind(struct filter *f, const struct model *m);
void filter__free(struct filter *f);

bool filter__kind(const struct filter *f, enum cap_kind kind);
/* Thread, process, name, cgroup and time checks common to every kind. */
bool filter__task(const struct filter *f, const struct model *m, uint32_t pid,
		  uint32_t tid, uint32_t comm, uint64_t cgroup, uint64_t time);
bool filter__offcpu(const struct filter *f, const struct model *m,
		    const struct cap_offcpu *e, uint32_t comm);
/* The same checks of one event, with its thread's name at its time
 * (model__comm_id()). */
bool filter__offcpu_event(const struct filter *f, const struct model *m,
			  const struct cap_offcpu *e);
bool filter__cpu_event(const struct filter *f, const struct model *m, const struct cap_cpu *e);
/* The model's groups (model__groups()) where the filter keeps or leaves
 * each one whole, so that one event of a group (model__group_offcpu(),
 * model__group_cpu()) answers for all; NULL (*n 0) when the model has none
 * or the filter bounds an event's duration (-m, -M) or time (--time),
 * which a group's events do not share: the events are read again then. */
const struct model_group *filter__groups(const struct filter *f, const struct model *m,
					 size_t *n);
/* The capture has events of the kinds selected, and the filters pass none. */
bool filter__none_match(const struct filter *f, const struct model *m);
/* The stack ids to show under -U/-K (the other part becomes CAP_STACK_NONE). */
uint32_t filter__ustack(const struct filter *f, uint32_t id);
uint32_t filter__kstack(const struct filter *f, uint32_t id);

/* Format realtime ns as ISO 8601 local time with microseconds and offset,
 * e.g. "2026-11-22T14:03:07.250000+01:00". Returns buf. */
char *filter_fmt_iso(int64_t realtime_ns, char *buf, size_t len);

#endif /* STKREC_REPORT_FILTER_H */
