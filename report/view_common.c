// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Aggregation and frame helpers shared by the views. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/container.h"
#include "report/views_int.h"
#include "util/array.h"

void agg__fini(struct agg *a)
{
	free(a->g);
	idmap__fini(&a->idx);
	idmap__fini(&a->tuples);
	idmap__fini(&a->idle);
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
	if (ev->e)
		g->max_offcpu = *ev->e;
}

/* The second half of a group's key: its stacks, or with AGG_BY_CGROUP a
 * number for (stacks, cgroup), which do not fit one 64-bit half. */
static int agg_key_b(struct agg *a, const struct agg_group *key, unsigned flags,
		     uint64_t *b)
{
	uint64_t *slot;
	int ret;

	*b = (uint64_t)key->ustack << 32 | key->kstack;
	if (!(flags & AGG_BY_CGROUP))
		return 0;
	ret = idmap__upsert(&a->tuples, *b, key->cgroup, a->ntuples, &slot);
	if (ret < 0)
		return ret;
	a->ntuples += ret;
	*b = *slot;
	return 0;
}

/* The group of key, new (*is_new) with key's fields; NULL on -ENOMEM or
 * the error in *err. */
static struct agg_group *agg_group_of(struct agg *a, const struct agg_group *key, unsigned flags,
				      bool *is_new, int *err)
{
	uint64_t *slot, b;
	int ret;

	*err = agg_key_b(a, key, flags, &b);
	if (*err)
		return NULL;
	ret = idmap__upsert(&a->idx, (uint64_t)key->pid << 32 | key->comm, b, a->n, &slot);
	if (ret < 0 || (ret == 1 && ARRAY_RESERVE(a->g, a->cap, a->n + 1))) {
		*err = -ENOMEM;
		return NULL;
	}
	*is_new = ret;
	if (!ret)
		return &a->g[*slot];
	a->g[a->n] = *key;
	return &a->g[a->n++];
}

/* What agg_add() adds to a group: one event, or a model's group of them
 * (struct model_group) at once. */
struct agg_part {
	uint64_t count, total;
	uint64_t first_time;  /* the first event's time */
	uint64_t max_seq;     /* a model's group: its maximum's number; else
			       * UINT64_MAX (the later event never wins a tie) */
};

/* part into key's group, ev its maximum. Parts come in the order of their
 * first events, and the first event with the largest value is the
 * maximum: a model's groups fold as their events would, one by one. */
static int agg_add(struct agg *a, const struct agg_group *key, const struct agg_ev *ev,
		   const struct agg_part *part, unsigned flags)
{
	struct agg_group *g;
	bool is_new;
	int err;

	g = agg_group_of(a, key, flags, &is_new, &err);
	if (!g)
		return err;
	if (is_new)
		g->first_time = part->first_time;
	if (is_new || ev->value > g->max || (ev->value == g->max && part->max_seq < g->max_seq)) {
		agg_max(g, ev);
		g->max_seq = part->max_seq;
	}
	g->count += part->count;
	g->total += part->total;
	g->open += ev->open ? part->count : 0;
	return 0;
}

/* tid's name at t (model__comm_id()), kept for the span it holds: events
 * come in runs of a few threads. */
static uint32_t agg_comm(struct agg *a, const struct model *m, uint32_t tid, uint64_t t)
{
	struct agg_comm *c = &a->comms[tid % AGG_COMMS];

	if (!c->valid || c->tid != tid || t < c->from || t >= c->to) {
		c->comm = model__comm_span(m, tid, t, &c->from, &c->to);
		c->tid = tid;
		c->valid = true;
	}
	return c->comm;
}

/* An off-CPU interval or a CPU sample as agg_add() takes it (its key's
 * pid and stacks; the thread name in ev); false when the filters leave it
 * out. */
static bool offcpu_ev(struct agg *a, const struct report_ctx *ctx, const struct cap_offcpu *e,
		      struct agg_group *key, struct agg_ev *ev)
{
	const struct model *m = ctx->model;

	*ev = (struct agg_ev){ .start = e->start, .tid = e->tid, .open = e->open, .e = e };
	ev->value = model__offcpu_seen(m, e, &ev->time);
	ev->comm = agg_comm(a, m, e->tid, e->start);
	key->pid = e->pid;
	key->ustack = e->ustack;
	key->kstack = e->kstack;
	key->cgroup = e->cgroup;
	return filter__offcpu(ctx->filter, m, e, ev->comm);
}

static bool cpu_ev(struct agg *a, const struct report_ctx *ctx, const struct cap_cpu *e,
		   struct agg_group *key, struct agg_ev *ev)
{
	*ev = (struct agg_ev){ .value = 1, .time = e->time, .start = e->time, .tid = e->tid };
	ev->comm = agg_comm(a, ctx->model, e->tid, e->time);
	key->pid = e->pid;
	key->ustack = e->ustack;
	key->kstack = e->kstack;
	key->cgroup = e->cgroup;
	return filter__task(ctx->filter, ctx->model, e->pid, e->tid, ev->comm, e->cgroup,
			    e->time);
}

#define TASK_INTERRUPTIBLE 0x1 /* the kernel's task state bits */
#define TASK_NOLOAD 0x400

bool view_idle_kthread(const struct model *m, const struct cap_offcpu *e)
{
	const uint32_t both = CAP_OFFCPU_OPEN_START | CAP_OFFCPU_OPEN_END;

	return (e->open & both) == both && (e->state & (TASK_INTERRUPTIBLE | TASK_NOLOAD)) &&
	       model__is_kthread(m, e->tid);
}

/* AGG_FOLD_IDLE: count e's thread if idle throughout: 1 when it is, 0
 * when not, or -ENOMEM. */
static int fold_idle(struct agg *a, const struct report_ctx *ctx, const struct cap_offcpu *e)
{
	uint64_t *slot;
	int ret;

	if (!view_idle_kthread(ctx->model, e))
		return 0;
	ret = idmap__upsert(&a->idle, e->tid, 0, 0, &slot);
	if (ret < 0)
		return ret;
	a->nidle += ret;
	return 1;
}

/* One event of either kind into the groups (off or cpu, the other NULL),
 * or with mg a model's group of such events, off or cpu its maximum;
 * inlined once per kind, so that each loop reads its own kind's events
 * with no test of the kind per event. */
static inline __attribute__((always_inline)) int
collect_one(struct agg *a, const struct report_ctx *ctx, unsigned flags,
	    const struct cap_offcpu *off, const struct cap_cpu *cpu, const struct model_group *mg)
{
	const struct filter *f = ctx->filter;
	struct agg_group key = { 0 };
	struct agg_part part;
	struct agg_ev ev;
	int err;

	if (!(off ? offcpu_ev(a, ctx, off, &key, &ev) : cpu_ev(a, ctx, cpu, &key, &ev)))
		return 0;
	if (off && (flags & AGG_FOLD_IDLE)) {
		err = fold_idle(a, ctx, off);
		if (err)
			return err < 0 ? err : 0;
	}
	key.comm = (flags & AGG_ANY_COMM) ? 0 : ev.comm;
	key.ustack = filter__ustack(f, key.ustack);
	key.kstack = filter__kstack(f, key.kstack);
	if (!(flags & AGG_BY_CGROUP))
		key.cgroup = 0;
	if (mg)
		part = (struct agg_part){ mg->count, mg->total, mg->first_time, mg->max_seq };
	else
		part = (struct agg_part){ 1, ev.value, ev.time, UINT64_MAX };
	return agg_add(a, &key, &ev, &part, flags);
}

/* A streamed model's events (model__replay()), each kind into its groups
 * (a NULL agg: that kind is not wanted). */
struct collect_replay {
	struct agg *off, *cpu;
	unsigned off_flags, cpu_flags;
	const struct report_ctx *ctx;
};

static int collect_replayed(void *arg, const struct cap_offcpu *off, const struct cap_cpu *cpu)
{
	struct collect_replay *c = arg;

	if (off)
		return c->off ? collect_one(c->off, c->ctx, c->off_flags, off, NULL, NULL) : 0;
	return c->cpu ? collect_one(c->cpu, c->ctx, c->cpu_flags, NULL, cpu, NULL) : 0;
}

/* A model's group into its kind's groups: as its events would be, one
 * by one, with the same filters (filter__groups()). */
static int collect_group(struct collect_replay *c, const struct model_group *mg)
{
	struct cap_cpu first;

	if (mg->k.kind == CAP_KIND_OFFCPU)
		return c->off ? collect_one(c->off, c->ctx, c->off_flags,
					    model__group_offcpu(mg), NULL, mg) : 0;
	model__group_cpu(mg, &first);
	return c->cpu ? collect_one(c->cpu, c->ctx, c->cpu_flags, NULL, &first, mg) : 0;
}

/* A streamed model's events: its groups where the filters take or leave
 * them whole, else read again. */
static int collect_streamed(struct collect_replay *c)
{
	size_t i, n;
	const struct model_group *g = filter__groups(c->ctx->filter, c->ctx->model, &n);
	int err = 0;

	if (!g)
		return model__replay(c->ctx->model, collect_replayed, c);
	for (i = 0; !err && i < n; i++)
		err = collect_group(c, &g[i]);
	return err;
}

int agg__collect_kinds(struct agg *off, unsigned off_flags, struct agg *cpu,
		       unsigned cpu_flags, const struct report_ctx *ctx)
{
	struct collect_replay c = { .off = off, .cpu = cpu, .off_flags = off_flags,
				    .cpu_flags = cpu_flags, .ctx = ctx };
	const struct cap_offcpu *o;
	const struct cap_cpu *e;
	size_t i, n;
	int err = 0;

	if (model__streamed(ctx->model))
		return off || cpu ? collect_streamed(&c) : 0;
	o = model__offcpu(ctx->model, &n);
	for (i = 0; off && !err && i < n; i++)
		err = collect_one(off, ctx, off_flags, &o[i], NULL, NULL);
	e = model__cpu(ctx->model, &n);
	for (i = 0; cpu && !err && i < n; i++)
		err = collect_one(cpu, ctx, cpu_flags, NULL, &e[i], NULL);
	return err;
}

int agg__collect(struct agg *a, const struct report_ctx *ctx, enum cap_kind kind,
		 unsigned flags)
{
	if (kind == CAP_KIND_OFFCPU)
		return agg__collect_kinds(a, flags, NULL, 0, ctx);
	if (kind == CAP_KIND_CPU)
		return agg__collect_kinds(NULL, 0, a, flags, ctx);
	return -EINVAL;
}

/* The interpreter's object: the one of the native frame a Python frame
 * runs in (its eval function), NULL without Python frames. */
static const char *interp_dso(const struct rframe *f, int n)
{
	int i;

	for (i = 0; i + 1 < n; i++)
		if (f[i].python && !f[i + 1].python)
			return f[i + 1].dso;
	return NULL;
}

/* --python: the frames of user stack f[0..n) kept in place; how many. */
static int python_frames(enum filter_python mode, struct rframe *f, int n)
{
	const char *interp = interp_dso(f, n);
	int i, first = n, last = -1, out = 0;

	if (mode == FILTER_PYTHON_ALL || !interp)
		return n;
	for (i = 0; i < n; i++) {
		if (f[i].python) {
			first = i < first ? i : first;
			last = i;
		}
	}
	for (i = 0; i < n; i++) {
		if (mode == FILTER_PYTHON_NONE ? f[i].python :
		    !f[i].python && i > first && i < last && !strcmp(f[i].dso, interp))
			continue;
		f[out++] = f[i];
	}
	return out;
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
	nu = python_frames(ctx->filter->python, buf + nk, nu);
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

const char *view_cgroup(const struct model *m, uint64_t id, char *buf)
{
	const char *path = model__cgroup_path(m, id);

	if (path)
		return path;
	if (!id)
		return "[unknown]";
	snprintf(buf, VIEW_CGROUP_MAX, "[cgroup %" PRIu64 "]", id);
	return buf;
}

const char *view_container(const struct model *m, uint64_t id, char *buf, const char **full)
{
	const struct container *c = model__cgroup_container(m, id);
	static const struct container none;

	if (!c)
		c = &none;
	if (full)
		*full = c->kind == CONTAINER_POD ? c->pod_uid : c->id;
	return container__name(c, buf, VIEW_CONTAINER_MAX);
}

const char *view_ns_ids(const struct model *m, uint32_t pid, uint32_t tid, uint64_t time,
			char *buf)
{
	uint32_t ns_pid, ns_tid;

	if (!model__ns_ids(m, tid, time, &ns_pid, &ns_tid) || (ns_pid == pid && ns_tid == tid))
		return "";
	snprintf(buf, VIEW_NS_MAX, " ns %" PRIu32 "/%" PRIu32, ns_pid, ns_tid);
	return buf;
}

void view_put_cgroup(const struct model *m, uint64_t cgroup, FILE *out)
{
	const struct container *c = model__cgroup_container(m, cgroup);
	char name[VIEW_CONTAINER_MAX], path[VIEW_CGROUP_MAX];

	/* the host's own cgroups say nothing here: -s cgroup, info */
	if (!c || c->kind == CONTAINER_NONE)
		return;
	view_container(m, cgroup, name, NULL);
	view_put_name(" cgroup ", view_cgroup(m, cgroup, path), out);
	view_put_name(" container ", name, out);
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
	const char *run = s;
	unsigned char c;

	/* runs that need no escape go out in one piece: the exports write
	 * millions of names */
	for (; (c = *s); s++) {
		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		fwrite_unlocked(run, 1, s - run, out);
		if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fprintf(out, "\\%c", c);
		run = s + 1;
	}
	fwrite_unlocked(run, 1, s - run, out);
}

void view_json_str(FILE *out, const char *s, const char *more)
{
	putc_unlocked('"', out);
	view_json_chars(out, s);
	view_json_chars(out, more);
	putc_unlocked('"', out);
}

void view_json_stack(const struct report_ctx *ctx, const struct rframe *fr, int n,
		     FILE *out)
{
	char src[VIEW_SRCLINE_MAX];
	int i;

	putc_unlocked('[', out);
	for (i = n - 1; i >= 0; i--) {
		view_json_str(out, fr[i].name, view_srcline(ctx, fr[i].srcfile, fr[i].line, src));
		if (i)
			fputs_unlocked(", ", out);
	}
	putc_unlocked(']', out);
}

char *view_put_u64(char *p, uint64_t v)
{
	char tmp[20], *t = tmp + sizeof(tmp);
	size_t n;

	do {
		*--t = '0' + v % 10;
		v /= 10;
	} while (v);
	n = tmp + sizeof(tmp) - t;
	memcpy(p, t, n);
	return p + n;
}

char *view_put_us(char *p, uint64_t t, uint64_t base)
{
	uint64_t d = t >= base ? t - base : base - t;

	if (t < base)
		*p++ = '-';
	p = view_put_u64(p, d / 1000);
	*p++ = '.';
	*p++ = '0' + d % 1000 / 100;
	*p++ = '0' + d % 100 / 10;
	*p++ = '0' + d % 10;
	return p;
}

void view_put_name(const char *sep, const char *name, FILE *out)
{
	fputs(sep, out);
	esc__fputs(name, out);
}

const char *view_disk(const struct model *m, uint32_t major, uint32_t minor, char *buf)
{
	const char *name = model__blockdev(m, major, minor);

	if (name)
		return name;
	snprintf(buf, VIEW_DISK_MAX, "%" PRIu32 ":%" PRIu32, major, minor);
	return buf;
}

/* ---- events one at a time ---------------------------------------------- */

/* Does the caller want kind, and does -e select it? */
static bool wanted(const struct filter *f, unsigned kinds, enum cap_kind kind)
{
	return (kinds & 1u << kind) && filter__kind(f, kind);
}

int view_events(const struct report_ctx *ctx, unsigned kinds, struct view_event **out,
		size_t *nout)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	size_t i, n0, n1, n2, n3, k = 0;
	const struct cap_offcpu *off = model__offcpu(m, &n0);
	const struct cap_cpu *cpu = model__cpu(m, &n1);
	const struct cap_bio *bio = model__bio(m, &n2);
	const struct cap_wakeup *w = model__wakeups(m, &n3);
	const uint32_t *bcomm = model__bio_comms(m);
	struct view_event *v;

	v = malloc((n0 + n1 + n2 + n3 + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; wanted(f, kinds, CAP_KIND_OFFCPU) && i < n0; i++) {
		if (filter__offcpu(f, m, &off[i], model__comm_id(m, off[i].tid, off[i].start)))
			v[k++] = (struct view_event){ off[i].start, i, off[i].pid, off[i].tid,
						      CAP_KIND_OFFCPU };
	}
	for (i = 0; wanted(f, kinds, CAP_KIND_CPU) && i < n1; i++) {
		if (filter__task(f, m, cpu[i].pid, cpu[i].tid,
				 model__comm_id(m, cpu[i].tid, cpu[i].time), cpu[i].cgroup,
				 cpu[i].time))
			v[k++] = (struct view_event){ cpu[i].time, i, cpu[i].pid, cpu[i].tid,
						      CAP_KIND_CPU };
	}
	for (i = 0; wanted(f, kinds, CAP_KIND_BIO) && i < n2; i++) {
		if (filter__task(f, m, bio[i].pid, bio[i].tid, bcomm[i], bio[i].cgroup,
				 bio[i].complete_time))
			v[k++] = (struct view_event){ bio[i].complete_time, i, bio[i].pid,
						      bio[i].tid, CAP_KIND_BIO };
	}
	for (i = 0; wanted(f, kinds, CAP_KIND_WAKEUP) && i < n3; i++) {
		if (filter__task(f, m, w[i].pid, w[i].tid, model__comm_id(m, w[i].tid, w[i].time),
				 w[i].cgroup, w[i].time))
			v[k++] = (struct view_event){ w[i].time, i, w[i].pid, w[i].tid,
						      CAP_KIND_WAKEUP };
	}
	*out = v;
	*nout = k;
	return 0;
}

/* The -U/-K filter on its stacks, the thread's name of the time for an
 * off-CPU interval or CPU sample. */
static void evinfo_done(const struct report_ctx *ctx, bool named, struct view_evinfo *out)
{
	if (!named)
		out->comm = model__comm_id(ctx->model, out->tid, out->start);
	out->ustack = filter__ustack(ctx->filter, out->ustack);
	out->kstack = filter__kstack(ctx->filter, out->kstack);
}

void view_offcpu_info(const struct report_ctx *ctx, const struct cap_offcpu *o,
		      struct view_evinfo *out)
{
	*out = (struct view_evinfo){ o->start, o->start + o->duration, o->pid, o->tid, 0, o->cpu,
				     o->ustack, o->kstack, o->cgroup };
	evinfo_done(ctx, false, out);
}

void view_cpu_info(const struct report_ctx *ctx, const struct cap_cpu *c,
		   struct view_evinfo *out)
{
	*out = (struct view_evinfo){ c->time, c->time, c->pid, c->tid, 0, c->cpu, c->ustack,
				     c->kstack, c->cgroup };
	evinfo_done(ctx, false, out);
}

void view_event_info(const struct report_ctx *ctx, const struct view_event *e,
		     struct view_evinfo *out)
{
	const struct model *m = ctx->model;
	const struct cap_bio *b;
	size_t n;

	if (e->kind == CAP_KIND_OFFCPU) {
		view_offcpu_info(ctx, model__offcpu(m, &n) + e->idx, out);
		return;
	}
	if (e->kind == CAP_KIND_CPU) {
		view_cpu_info(ctx, model__cpu(m, &n) + e->idx, out);
		return;
	}
	b = model__bio(m, &n) + e->idx;
	*out = (struct view_evinfo){ b->issue_time, b->complete_time, b->pid, b->tid,
				     model__bio_comms(m)[e->idx], -1, b->ustack, b->kstack,
				     b->cgroup };
	evinfo_done(ctx, true, out);
}

struct idmap_key view_stack_key(const struct model *m, const struct view_evinfo *e)
{
	return (struct idmap_key){
		(uint64_t)e->pid << 32 | model__exec_epoch(m, e->pid, e->start),
		(uint64_t)e->ustack << 32 | e->kstack,
	};
}
