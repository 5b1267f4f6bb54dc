// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded stacks for flamegraph.pl, as BCC profile -f and offcputime -f print
 * them: "comm;outermost;...;innermost value", user frames then kernel
 * frames; off-CPU values in microseconds, CPU values in samples, block I/O
 * values in bytes (the submitter's stacks, then the disk). Stacks that
 * name the same (different addresses in one function) are merged, and lines
 * come out sorted bytewise, so the output is deterministic. --wakers:
 * offwaketime's lines, each wait's stacks and its waker's (view_wakers.c
 * names the waker).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"
#include "util/array.h"

/* Folded lines being built: frames appended to buf, each line a range
 * of it and a value; fold_each() sorts and merges them. */
struct fline {
	size_t off;
	uint32_t len;
	uint64_t value;
};

struct folded {
	char *buf;
	size_t len, cap;
	struct fline *lines;
	size_t n, ncap;
};

/* fold_each() callback printing "stack value" lines to out. */
struct fold_print {
	FILE *out;
	bool us; /* values are ns: print microseconds */
};

static int put(struct folded *fo, const char *s, size_t len)
{
	if (ARRAY_RESERVE(fo->buf, fo->cap, fo->len + len))
		return -ENOMEM;
	memcpy(fo->buf + fo->len, s, len);
	fo->len += len;
	return 0;
}

/* A frame must not contain the separators flamegraph.pl splits on: ';'
 * between frames, a newline between lines (spaces are fine: it takes the
 * count after the last one). */
static int fold_frame(struct folded *fo, const char *name, const char *suffix)
{
	size_t start = fo->len, i;
	int err;

	err = put(fo, ";", 1) ?: put(fo, name, strlen(name)) ?: put(fo, suffix, strlen(suffix));
	for (i = start + 1; !err && i < fo->len; i++) {
		if (fo->buf[i] == ';')
			fo->buf[i] = ':';
		else if (fo->buf[i] == '\n' || fo->buf[i] == '\r')
			fo->buf[i] = ' ';
	}
	return err;
}

static int put_comm(struct folded *fo, const struct report_ctx *ctx,
		    const struct agg_group *g)
{
	char tmp[48];

	if (ctx->opts.with_pid)
		snprintf(tmp, sizeof(tmp), "%s-%" PRIu32,
			 model__comm_name(ctx->model, g->comm), g->pid);
	else
		snprintf(tmp, sizeof(tmp), "%s", model__comm_name(ctx->model, g->comm));
	/* the comm is the first frame: reuse put_frame's sanitizing, drop ';' */
	return fold_frame(fo, tmp, "");
}

/* The frames from start (a ';' first) are one line of value. */
static int fold_line(struct folded *fo, size_t start, uint64_t value)
{
	/* skip the leading ';' put_frame wrote before the comm */
	struct fline l = { .off = start + 1, .len = fo->len - start - 1, .value = value };

	return ARRAY_PUSH(fo->lines, fo->n, fo->ncap, l);
}

/* The frames of a stack pair, outermost first: user, then kernel. */
static int fold_stacks(struct folded *fo, const struct report_ctx *ctx, uint32_t pid,
		       uint64_t time, uint32_t ustack, uint32_t kstack, struct rframe *fr)
{
	const char *ksuffix = ctx->opts.annotate ? "_[k]" : "";
	char src[VIEW_SRCLINE_MAX];
	int i, n, nk, err = 0;

	n = view_frames(ctx, pid, time, ustack, kstack, fr, &nk);
	if (n < 0)
		return n;
	/* --srcline: "func file:line", as perf script's folded srcline */
	for (i = n - 1; !err && i >= nk; i--)
		err = fold_frame(fo, fr[i].name, view_srcline(ctx, fr[i].srcfile, fr[i].line, src));
	/* BCC: the delimiter only when both stacks were taken */
	if (!err && ctx->opts.delimited && nk && n > nk && !fr[0].special && !fr[nk].special)
		err = put(fo, ";-", 2);
	for (i = nk - 1; !err && i >= 0; i--)
		err = fold_frame(fo, fr[i].name, fr[i].special ? "" : ksuffix);
	return err;
}

static int fold_group(struct folded *fo, const struct report_ctx *ctx,
		      const struct agg_group *g, struct rframe *fr, uint64_t value)
{
	size_t start = fo->len;

	return put_comm(fo, ctx, g) ?:
	       fold_stacks(fo, ctx, g->pid, g->first_time, g->ustack, g->kstack, fr) ?:
	       fold_line(fo, start, value);
}

static int cmp_line(const void *pa, const void *pb, void *ctx)
{
	const struct fline *a = pa, *b = pb;
	const char *buf = ctx;
	int c = memcmp(buf + a->off, buf + b->off, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Sort, merge lines naming the same stack, and hand each one to cb. */
static int fold_each(struct folded *fo, view_fold_fn cb, void *arg)
{
	size_t i, j;
	uint64_t sum;
	int err = 0;

	if (fo->n)
		qsort_r(fo->lines, fo->n, sizeof(*fo->lines), cmp_line, fo->buf);
	for (i = 0; i < fo->n && !err; i = j) {
		sum = 0;
		for (j = i; j < fo->n && !cmp_line(&fo->lines[i], &fo->lines[j], fo->buf); j++)
			sum += fo->lines[j].value;
		err = cb(arg, fo->buf + fo->lines[i].off, fo->lines[i].len, sum);
	}
	return err;
}

/* Block I/O: "comm;submitter's stacks;disk" per completed request, in
 * bytes (captures without block I/O stacks: "comm;disk"). */
static int fold_bio(struct folded *fo, const struct report_ctx *ctx, struct rframe *fr)
{
	const struct model *m = ctx->model;
	const struct filter *f = ctx->filter;
	const uint32_t *comms = model__bio_comms(m);
	const struct cap_bio *b;
	size_t i, n, start;
	char dev[VIEW_DISK_MAX];
	int err = 0;

	b = model__bio(m, &n);
	for (i = 0; i < n && !err; i++, b++) {
		if (!filter__task(ctx->filter, m, b->pid, b->tid, comms[i], b->cgroup,
				  b->complete_time))
			continue;
		start = fo->len;
		err = fold_frame(fo, model__comm_name(m, comms[i]), "");
		if (!err && (b->ustack || b->kstack))
			err = fold_stacks(fo, ctx, b->pid, b->issue_time, filter__ustack(f, b->ustack),
					 filter__kstack(f, b->kstack), fr);
		err = err ?: fold_frame(fo, view_disk(m, b->major, b->minor, dev), "") ?:
		      fold_line(fo, start, b->bytes);
	}
	return err;
}

static int fold_kind(struct folded *fo, struct report_ctx *ctx, enum cap_kind kind,
		     struct rframe *fr)
{
	struct agg a = { 0 };
	size_t i;
	int err;

	err = agg__collect(&a, ctx, kind, 0);
	for (i = 0; !err && i < a.n; i++)
		err = fold_group(fo, ctx, &a.g[i], fr, a.g[i].total);
	agg__fini(&a);
	return err;
}

static void fold_free(struct folded *fo)
{
	free(fo->buf);
	free(fo->lines);
}

int view_fold(struct report_ctx *ctx, enum cap_kind kind, view_fold_fn cb, void *arg)
{
	struct folded fo = { 0 };
	struct rframe *fr;
	int err;

	fr = malloc(VIEW_MAX_FRAMES * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	if (kind == CAP_KIND_BIO)
		err = fold_bio(&fo, ctx, fr);
	else
		err = fold_kind(&fo, ctx, kind, fr);
	if (!err)
		err = fold_each(&fo, cb, arg);
	free(fr);
	fold_free(&fo);
	return err;
}

static int fold_print_line(void *arg, const char *stack, size_t len, uint64_t value)
{
	struct fold_print *p = arg;

	/* ';' and newlines were mapped by fold_frame(), the rest here */
	esc__fwrite(stack, len, p->out);
	fprintf(p->out, " %" PRIu64 "\n", p->us ? view_ns_to_us(value) : value);
	return 0;
}

/* ---- --folded --wakers ------------------------------------------------- */

/* The waker's part of a line: its frames innermost first (kernel, then
 * user), its name, and the request a completion ended the wait with. */
static int fold_waker(struct folded *fo, const struct report_ctx *ctx,
		      const struct cap_wakeup *w, struct rframe *fr)
{
	const struct cap_bio *b;
	char io[64], label[48];
	int i, n, nk, err = 0;

	n = view_waker_frames(ctx, w, fr, &nk);
	if (n < 0)
		return n;
	b = view_wake_bio(ctx, w, fr, nk);
	for (i = 0; !err && i < n; i++)
		err = fold_frame(fo, fr[i].name, "");
	err = err ?: fold_frame(fo, view_waker_comm(ctx, w), "");
	if (!err && b) {
		view_bio_label(ctx, b, label, sizeof(label));
		snprintf(io, sizeof(io), "[io %s]", label);
		err = fold_frame(fo, io, "");
	}
	return err;
}

/* Why a wait has no waker: preempted, still waiting, or not recorded. */
static const char *no_waker(const struct cap_offcpu *e)
{
	if (e->open & CAP_OFFCPU_OPEN_END)
		return "[still waiting]";
	return e->state ? "[waker not recorded]" : "[preempted]";
}

static int fold_wait(struct folded *fo, const struct report_ctx *ctx,
		     const struct cap_offcpu *e, uint32_t comm, struct rframe *fr)
{
	const struct filter *f = ctx->filter;
	const struct cap_wakeup *w = model__waker(ctx->model, e);
	size_t start = fo->len;
	char who[48];
	uint64_t from, seen = model__offcpu_seen(ctx->model, e, &from);
	int err;

	if (ctx->opts.with_pid)
		snprintf(who, sizeof(who), "%s-%" PRIu32, model__comm_name(ctx->model, comm),
			 e->pid);
	else
		snprintf(who, sizeof(who), "%s", model__comm_name(ctx->model, comm));
	err = fold_frame(fo, who, "") ?:
	      fold_stacks(fo, ctx, e->pid, e->start, filter__ustack(f, e->ustack),
			  filter__kstack(f, e->kstack), fr) ?:
	      fold_frame(fo, "--", "");
	if (!err)
		err = w ? fold_waker(fo, ctx, w, fr) : fold_frame(fo, no_waker(e), "");
	return err ?: fold_line(fo, start, seen);
}

/* --folded --wakers: offwaketime's lines, "comm;waiter's frames;--;waker's
 * frames, innermost first;waker" and the wait's time seen. */
static int fold_wakers(struct report_ctx *ctx, struct fold_print *p)
{
	const struct model *m = ctx->model;
	const struct cap_offcpu *e;
	struct folded fo = { 0 };
	struct rframe *fr;
	size_t i, n;
	uint32_t comm;
	int err = 0;

	fr = malloc(VIEW_MAX_FRAMES * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	e = model__offcpu(m, &n);
	for (i = 0; i < n && !err; i++, e++) {
		comm = model__comm_id(m, e->tid, e->start);
		if (filter__offcpu(ctx->filter, m, e, comm))
			err = fold_wait(&fo, ctx, e, comm, fr);
	}
	if (!err)
		err = fold_each(&fo, fold_print_line, p);
	fold_free(&fo);
	free(fr);
	return err;
}

/* Off-CPU when selected and present, else CPU samples. */
enum cap_kind view_fold_kind(const struct report_ctx *ctx)
{
	/* -e bio alone: bytes per comm and disk (lines carry one unit) */
	if (filter__kind(ctx->filter, CAP_KIND_BIO) &&
	    !filter__kind(ctx->filter, CAP_KIND_OFFCPU) && !filter__kind(ctx->filter, CAP_KIND_CPU))
		return CAP_KIND_BIO;
	if (filter__kind(ctx->filter, CAP_KIND_OFFCPU) &&
	    (model__nr_events(ctx->model, CAP_KIND_OFFCPU) ||
	     !filter__kind(ctx->filter, CAP_KIND_CPU)))
		return CAP_KIND_OFFCPU;
	return CAP_KIND_CPU;
}

int view_folded(struct report_ctx *ctx, FILE *out)
{
	enum cap_kind kind = view_fold_kind(ctx);
	struct fold_print p = { .out = out, .us = kind == CAP_KIND_OFFCPU };

	if (!filter__kind(ctx->filter, kind))
		return 0;
	if (ctx->opts.wakers && kind == CAP_KIND_OFFCPU)
		return fold_wakers(ctx, &p);
	return view_fold(ctx, kind, fold_print_line, &p);
}
