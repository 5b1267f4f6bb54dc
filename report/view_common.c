// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Aggregation and frame helpers shared by the views. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"
#include "util/array.h"

void agg__fini(struct agg *a)
{
	free(a->g);
	idmap__fini(&a->idx);
	memset(a, 0, sizeof(*a));
}

/* One event: value (the part seen, for a wait), at time; open: its
 * CAP_OFFCPU_OPEN_* flags, start the real start of such a wait. */
struct agg_ev {
	uint64_t value, time, start;
	uint32_t tid, comm, open;
	const struct cap_offcpu *e; /* off-CPU: the interval */
};

static void agg_max(struct agg_group *g, const struct agg_ev *ev)
{
	g->max = ev->value;
	g->max_time = ev->time;
	g->max_start = ev->start;
	g->max_tid = ev->tid;
	g->max_comm = ev->comm;
	g->max_open = ev->open;
	g->max_offcpu = ev->e;
}

static int agg_add(struct agg *a, const struct agg_group *key, const struct agg_ev *ev)
{
	struct agg_group *g;
	uint64_t *slot;
	int ret;

	ret = idmap__upsert(&a->idx, (uint64_t)key->pid << 32 | key->comm,
			    (uint64_t)key->ustack << 32 | key->kstack, a->n, &slot);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		if (ARRAY_RESERVE(a->g, a->cap, a->n + 1))
			return -ENOMEM;
		g = &a->g[a->n++];
		*g = *key;
		g->first_time = ev->time;
		agg_max(g, ev);
	} else {
		g = &a->g[*slot];
		if (ev->value > g->max)
			agg_max(g, ev);
	}
	g->count++;
	g->total += ev->value;
	g->open += !!ev->open;
	return 0;
}

static int collect_offcpu(struct agg *a, const struct report_ctx *ctx, unsigned flags)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	const struct cap_offcpu *e;
	struct agg_group key = { 0 };
	struct agg_ev ev;
	size_t i, n;
	int err;

	e = model__offcpu(m, &n);
	for (i = 0; i < n; i++, e++) {
		ev = (struct agg_ev){ .start = e->start, .tid = e->tid, .open = e->open, .e = e };
		ev.value = model__offcpu_seen(m, e, &ev.time);
		ev.comm = model__comm_id(m, e->tid, e->start);
		if (!filter__offcpu(f, m, e, ev.comm))
			continue;
		key.pid = e->pid;
		key.comm = (flags & AGG_ANY_COMM) ? 0 : ev.comm;
		key.ustack = filter__ustack(f, e->ustack);
		key.kstack = filter__kstack(f, e->kstack);
		err = agg_add(a, &key, &ev);
		if (err)
			return err;
	}
	return 0;
}

static int collect_cpu(struct agg *a, const struct report_ctx *ctx, unsigned flags)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	const struct cap_cpu *e;
	struct agg_group key = { 0 };
	struct agg_ev ev;
	size_t i, n;
	int err;

	e = model__cpu(m, &n);
	for (i = 0; i < n; i++, e++) {
		ev = (struct agg_ev){ .value = 1, .time = e->time, .start = e->time, .tid = e->tid };
		ev.comm = model__comm_id(m, e->tid, e->time);
		if (!filter__task(f, m, e->pid, e->tid, ev.comm, e->time))
			continue;
		key.pid = e->pid;
		key.comm = (flags & AGG_ANY_COMM) ? 0 : ev.comm;
		key.ustack = filter__ustack(f, e->ustack);
		key.kstack = filter__kstack(f, e->kstack);
		err = agg_add(a, &key, &ev);
		if (err)
			return err;
	}
	return 0;
}

int agg__collect(struct agg *a, const struct report_ctx *ctx, enum cap_kind kind,
		 unsigned flags)
{
	if (kind == CAP_KIND_OFFCPU)
		return collect_offcpu(a, ctx, flags);
	if (kind == CAP_KIND_CPU)
		return collect_cpu(a, ctx, flags);
	return -EINVAL;
}

int view_frames(const struct report_ctx *ctx, uint32_t pid, uint64_t time,
		uint32_t ustack, uint32_t kstack, struct rframe *buf, int *nkernel)
{
	int nk, nu;

	nk = resolver__kernel(ctx->res, kstack, buf, RESOLVE_MAX_FRAMES);
	if (nk < 0)
		return nk;
	nu = resolver__user(ctx->res, pid, time, ustack, buf + nk, RESOLVE_MAX_FRAMES);
	if (nu < 0)
		return nu;
	if (!nk && !nu && ctx->filter->stacks != FILTER_STACKS_BOTH) {
		/* -K of a sample taken in user mode (or -U of a kernel
		 * thread's): one marker, the same in every view */
		bool k = ctx->filter->stacks == FILTER_STACKS_KERNEL;

		buf[0] = (struct rframe){ .name = k ? "[no kernel frames]" : "[no user frames]",
					  .dso = "[unknown]", .kernel = k, .special = true };
		nk = k;
		nu = !k;
	}
	if (nkernel)
		*nkernel = nk;
	return nk + nu;
}

/* In captures without the kernel's own ranges (before format 1.2): the
 * core of the scheduler, by name. */
static const char *const sched_funcs[] = {
	"__schedule", "schedule", "schedule_idle", "schedule_preempt_disabled",
	"preempt_schedule", "preempt_schedule_common", "preempt_schedule_irq",
	"preempt_schedule_notrace", "io_schedule", "io_schedule_timeout", "schedule_timeout",
	"schedule_hrtimeout", "schedule_hrtimeout_range", "schedule_hrtimeout_range_clock",
	"do_nanosleep", "__cond_resched",
};

static bool in_range(uint64_t ip, uint64_t lo, uint64_t hi)
{
	return lo && ip >= lo && ip < hi;
}

/* A frame of the scheduler's own: the kernel's .sched.text or
 * .spinlock.text (FORMAT.md §4.7), which the kernel's wchan skips too. */
static bool sched_frame(const struct report_ctx *ctx, const struct rframe *f)
{
	const struct cap_kernel *k = model__kernel(ctx->model);
	size_t i;

	if (k->sched_text_start)
		return in_range(f->ip, k->sched_text_start, k->sched_text_end) ||
		       in_range(f->ip, k->lock_text_start, k->lock_text_end);
	for (i = 0; i < sizeof(sched_funcs) / sizeof(sched_funcs[0]); i++)
		if (!strcmp(f->name, sched_funcs[i]))
			return true;
	return false;
}

int view_wait_site(const struct report_ctx *ctx, const struct rframe *fr, int nk)
{
	int i;

	for (i = 0; i < nk; i++)
		if (!fr[i].special && !sched_frame(ctx, &fr[i]))
			return i;
	return 0;
}

/* The C library and the dynamic loader: the wrappers a program blocks in. */
static bool libc_frame(const struct rframe *f)
{
	static const char *const libs[] = { "libc.so", "libc-", "libpthread", "ld-linux",
					     "ld-musl", "libc.musl" };
	size_t i;

	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(f->dso, libs[i], strlen(libs[i])))
			return true;
	return false;
}

int view_user_site(const struct rframe *fr, int nk, int n)
{
	int i;

	for (i = nk; i < n; i++)
		if (!fr[i].special && !libc_frame(&fr[i]))
			return i;
	return nk < n ? nk : -1;
}

const char *view_srcline(const struct report_ctx *ctx, const char *file, int line, char *buf)
{
	const char *base;

	if (!ctx->opts.srcline || !file || !*file)
		return "";
	base = strrchr(file, '/');
	base = base && base[1] ? base + 1 : file;
	if (line > 0)
		snprintf(buf, VIEW_SRCLINE_MAX, " %s:%d", base, line);
	else
		snprintf(buf, VIEW_SRCLINE_MAX, " %s", base);
	return buf;
}

void view_fmt_reltime(const struct model *m, uint64_t t, char *buf, size_t len)
{
	uint64_t start = model__header(m)->start_time, d;

	if (t >= start) {
		d = t - start;
		snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, d / 1000000000,
			 d % 1000000000 / 1000);
	} else {
		d = start - t;
		snprintf(buf, len, "-%" PRIu64 ".%06" PRIu64, d / 1000000000,
			 d % 1000000000 / 1000);
	}
}

void view_fmt_walltime(const struct model *m, uint64_t t, char *buf, size_t len)
{
	filter_fmt_iso((int64_t)t + model__header(m)->clock_offset, buf, len);
}

void view_json_chars(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}
