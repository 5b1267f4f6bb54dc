// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Top waits (Domas Mituzas' topwaits, 2019): per (pid, user stack, kernel
 * stack) the number of off-CPU intervals, their total, the longest one and
 * when it happened (wall clock), longest first. Text or JSON. Durations
 * are of the part the recording saw; a longest wait that was open at the
 * start or the stop is marked (so a thread blocked through the whole
 * recording comes first, marked open both ways). A flight recorder's dump
 * (FORMAT.md §4.26) says first why it was written: its trigger, and for a
 * wait that long the wait itself, named as the rows are. The trigger is the
 * file's, shown whatever the filters keep of the table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"

static int cmp_wait(const void *pa, const void *pb)
{
	const struct agg_group *a = pa, *b = pb;

	if (a->max != b->max)
		return a->max > b->max ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->kstack != b->kstack)
		return a->kstack < b->kstack ? -1 : 1;
	if (a->ustack != b->ustack)
		return a->ustack < b->ustack ? -1 : 1;
	return 0;
}

/* "start", "end" or "both": which ends of the wait the recording missed. */
static const char *open_name(uint32_t open)
{
	bool s = open & CAP_OFFCPU_OPEN_START, e = open & CAP_OFFCPU_OPEN_END;

	return s && e ? "both" : s ? "start" : e ? "end" : NULL;
}

/* Who woke the longest wait, its innermost frames (user, then kernel),
 * and the request whose completion did. */
static int print_waker_text(const struct report_ctx *ctx, const struct agg_group *g,
			    struct rframe *fr, FILE *out)
{
	const struct cap_wakeup *w = model__waker(ctx->model, &g->max_offcpu);
	const struct cap_bio *b;
	char label[48], ns[VIEW_NS_MAX];
	int i, k, n, nk;

	if (!w)
		return 0;
	n = view_waker_frames(ctx, w, fr, &nk);
	if (n < 0)
		return n;
	view_put_name("        woken by ", view_waker_comm(ctx, w), out);
	if (w->waker_tid)
		fprintf(out, " %" PRIu32 "/%" PRIu32 "%s", w->waker_pid, w->waker_tid,
			view_ns_ids(ctx->model, w->waker_pid, w->waker_tid, w->time, ns));
	k = view_wake_site(fr, nk);
	for (i = nk; i < n && i < nk + 3; i++)
		view_put_name(i == nk ? ": " : " <- ", fr[i].name, out);
	for (i = k; i < nk && i < k + 3; i++)
		view_put_name(i > k ? " <- " : n > nk ? " | " : ": ", fr[i].name, out);
	fputc('\n', out);
	b = view_wake_bio(ctx, w, fr, nk);
	if (b) {
		view_bio_label(ctx, b, label, sizeof(label));
		fprintf(out, "        request %s, sector %" PRIu64 ", %" PRIu64
			" us issue to completion\n", label, b->sector,
			view_ns_to_us(b->complete_time - b->issue_time));
	}
	return 0;
}

/* A wait's frames, one a line below its row: kernel, "--", user. */
static void print_frames(const struct report_ctx *ctx, const struct rframe *fr, int n,
			 int nk, FILE *out)
{
	char src[VIEW_SRCLINE_MAX];
	int i;

	for (i = 0; i < n; i++) {
		if (i == nk && nk)
			fprintf(out, "        --\n");
		view_put_name("        ", fr[i].name, out);
		view_put_name("", view_srcline(ctx, fr[i].srcfile, fr[i].line, src), out);
		fputc('\n', out);
	}
}

static void print_text(const struct report_ctx *ctx, const struct agg_group *g,
		       const struct rframe *fr, int n, int nk, FILE *out)
{
	const char *open = open_name(g->max_open);
	char when[64], ec[VIEW_COMM_ESC], nsb[VIEW_NS_MAX];
	/* the longest wait's thread, as its PID namespace knows it */
	const char *ns = view_ns_ids(ctx->model, g->pid, g->max_tid, g->max_time, nsb);

	view_fmt_walltime(ctx->model, g->max_time, when, sizeof(when));
	fprintf(out, "%-7" PRIu32 " %-16s %7" PRIu64 " %12" PRIu64 " %12" PRIu64 "  %s%s%s%s%s\n",
		g->pid, esc__str(model__comm_name(ctx->model, g->max_comm), ec, sizeof(ec)), g->count,
		view_ns_to_us(g->total), view_ns_to_us(g->max), when, open ? "  open " : "",
		open ? open : "", *ns ? " " : "", ns);
	print_frames(ctx, fr, n, nk, out);
}

/* An open longest wait: which ends the recording missed and, where the
 * kernel told, when it really began (else the recorder found it then). */
static void print_json_open(const struct report_ctx *ctx, const struct agg_group *g, FILE *out)
{
	const char *open = open_name(g->max_open);
	char began[64];

	if (!open)
		return;
	fprintf(out, ", \"open\": \"%s\"", open);
	if ((g->max_open & CAP_OFFCPU_OPEN_START) &&
	    !(g->max_open & CAP_OFFCPU_START_UNKNOWN)) {
		view_fmt_walltime(ctx->model, g->max_start, began, sizeof(began));
		fprintf(out, ", \"began\": \"%s\"", began);
	}
}

static void print_json(const struct report_ctx *ctx, const struct agg_group *g,
		       const struct rframe *fr, int n, bool first, FILE *out)
{
	uint32_t ns_pid, ns_tid;
	char when[64];

	view_fmt_walltime(ctx->model, g->max_time, when, sizeof(when));
	fprintf(out, "%s\n  {\"comm\": ", first ? "" : ",");
	view_json_str(out, model__comm_name(ctx->model, g->max_comm), "");
	fprintf(out, ", \"pid\": %" PRIu32 ", \"max_tid\": %" PRIu32
		", \"count\": %" PRIu64 ", \"total_us\": %" PRIu64 ", \"max_us\": %" PRIu64
		", \"max_time\": \"%s\"", g->pid, g->max_tid, g->count,
		view_ns_to_us(g->total), view_ns_to_us(g->max), when);
	if (model__ns_ids(ctx->model, g->max_tid, g->max_time, &ns_pid, &ns_tid))
		fprintf(out, ", \"ns_pid\": %" PRIu32 ", \"max_ns_tid\": %" PRIu32, ns_pid, ns_tid);
	print_json_open(ctx, g, out);
	fputs(", \"stack\": ", out);
	view_json_stack(ctx, fr, n, out);
}

/* "waker": who woke the longest wait, its stack and the request. */
static int print_waker_json(const struct report_ctx *ctx, const struct agg_group *g,
			    struct rframe *fr, FILE *out)
{
	const struct cap_wakeup *w = model__waker(ctx->model, &g->max_offcpu);
	static const char ops[] = "RWFD?";
	const struct cap_bio *b;
	const char *disk;
	int n, nk;

	if (!w)
		return 0;
	n = view_waker_frames(ctx, w, fr, &nk);
	if (n < 0)
		return n;
	fputs(", \"waker\": {\"comm\": ", out);
	view_json_str(out, view_waker_comm(ctx, w), "");
	fprintf(out, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"stack\": ", w->waker_pid,
		w->waker_tid);
	view_json_stack(ctx, fr, n, out);
	b = view_wake_bio(ctx, w, fr, nk);
	if (b) {
		disk = model__blockdev(ctx->model, b->major, b->minor);
		fputs(", \"io\": {\"disk\": ", out);
		view_json_str(out, disk ? disk : "?", "");
		fprintf(out, ", \"major\": %" PRIu32 ", \"minor\": %" PRIu32 ", \"op\": \"%c\""
			", \"bytes\": %" PRIu32 ", \"sector\": %" PRIu64 ", \"latency_us\": %"
			PRIu64 "}", b->major, b->minor, ops[b->op < 4 ? b->op : 4], b->bytes,
			b->sector, view_ns_to_us(b->complete_time - b->issue_time));
	}
	fputc('}', out);
	return 0;
}

/* The frames of a WAIT trigger's wait, -U/-K applied as to the rows. */
static int trigger_frames(const struct report_ctx *ctx, const struct cap_trigger *t,
			  struct rframe *fr, int *nk)
{
	return view_frames(ctx, t->pid, t->wait_start, filter__ustack(ctx->filter, t->ustack),
			   filter__kstack(ctx->filter, t->kstack), fr, nk);
}

/* "trigger: ..." (FORMAT.md §4.26): why the dump was written, then the
 * trigger's wait and its stack, then a blank line before the table. */
static int print_trigger_text(const struct report_ctx *ctx, const struct cap_trigger *t,
			      struct rframe *fr, FILE *out)
{
	const struct model *m = ctx->model;
	char when[64], ec[VIEW_COMM_ESC], ns[VIEW_NS_MAX];
	int n, nk;

	view_fmt_walltime(m, t->kind == CAP_TRIGGER_WAIT ? t->wait_start : t->time, when,
			  sizeof(when));
	if (t->kind == CAP_TRIGGER_SIGNAL)
		fprintf(out, "trigger: SIGUSR2 at %s", when);
	else if (t->kind == CAP_TRIGGER_END)
		fprintf(out, "trigger: the recording's end at %s (no --trigger)", when);
	else
		fprintf(out, "trigger: wait >= %" PRIu64 " us", view_ns_to_us(t->threshold));
	fprintf(out, ", flight recorder dump %" PRIu32, t->dump);
	if (t->triggers > 1)
		fprintf(out, ", %" PRIu32 " triggers", t->triggers);
	fputc('\n', out);
	if (t->kind == CAP_TRIGGER_WAIT) {
		n = trigger_frames(ctx, t, fr, &nk);
		if (n < 0)
			return n;
		fprintf(out, "%-7" PRIu32 " %-16s tid %" PRIu32 "%s: %" PRIu64 " us off CPU from %s\n",
			t->pid, esc__str(model__comm_name(m, model__comm_id(m, t->tid, t->wait_start)),
					 ec, sizeof(ec)),
			t->tid, view_ns_ids(m, t->pid, t->tid, t->wait_start, ns),
			view_ns_to_us(t->wait_duration), when);
		print_frames(ctx, fr, n, nk, out);
	}
	fputc('\n', out);
	return 0;
}

/* The same as the JSON array's first element, {"trigger": {...}}: a
 * consumer of the rows tells it by its key. */
static int print_trigger_json(const struct report_ctx *ctx, const struct cap_trigger *t,
			      struct rframe *fr, FILE *out)
{
	const struct model *m = ctx->model;
	char when[64];
	int n;

	view_fmt_walltime(m, t->time, when, sizeof(when));
	fprintf(out, "\n  {\"trigger\": {\"kind\": \"%s\", \"dump\": %" PRIu32
		", \"triggers\": %" PRIu32 ", \"time\": \"%s\"", cap_trigger_kind_name(t->kind),
		t->dump, t->triggers, when);
	if (t->kind == CAP_TRIGGER_WAIT) {
		n = trigger_frames(ctx, t, fr, NULL);
		if (n < 0)
			return n;
		view_fmt_walltime(m, t->wait_start, when, sizeof(when));
		fputs(", \"comm\": ", out);
		view_json_str(out, model__comm_name(m, model__comm_id(m, t->tid, t->wait_start)), "");
		fprintf(out, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"threshold_us\": %"
			PRIu64 ", \"duration_us\": %" PRIu64 ", \"start\": \"%s\", \"stack\": ",
			t->pid, t->tid, view_ns_to_us(t->threshold), view_ns_to_us(t->wait_duration),
			when);
		view_json_stack(ctx, fr, n, out);
	}
	fputs("}}", out);
	return 0;
}

int view_topwaits(struct report_ctx *ctx, FILE *out)
{
	const struct cap_trigger *t = model__trigger(ctx->model);
	struct agg a = { 0 };
	struct rframe *fr;
	size_t i, rows;
	int n, nk, err;

	fr = malloc(VIEW_MAX_FRAMES * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	err = filter__kind(ctx->filter, CAP_KIND_OFFCPU) ?
		      agg__collect(&a, ctx, CAP_KIND_OFFCPU, AGG_ANY_COMM) : 0;
	if (!err && a.n)
		qsort(a.g, a.n, sizeof(*a.g), cmp_wait);
	rows = ctx->opts.max_rows && ctx->opts.max_rows < a.n ? ctx->opts.max_rows : a.n;
	if (!err && ctx->opts.json)
		fputc('[', out);
	if (!err && t)
		err = ctx->opts.json ? print_trigger_json(ctx, t, fr, out) :
				       print_trigger_text(ctx, t, fr, out);
	if (!err && !ctx->opts.json)
		fprintf(out, "%-7s %-16s %7s %12s %12s  %s\n", "PID", "COMM", "COUNT",
			"TOTAL_us", "MAX_us", "MAX_TIME");
	for (i = 0; !err && i < rows; i++) {
		const struct agg_group *g = &a.g[i];

		n = view_frames(ctx, g->pid, g->max_time, g->ustack, g->kstack, fr, &nk);
		if (n < 0) {
			err = n;
			break;
		}
		if (ctx->opts.json) {
			print_json(ctx, g, fr, n, i == 0 && !t, out);
			err = print_waker_json(ctx, g, fr, out);
			fputc('}', out);
		} else {
			print_text(ctx, g, fr, n, nk, out);
			err = print_waker_text(ctx, g, fr, out);
			fputc('\n', out);
		}
	}
	if (!err && ctx->opts.json)
		fputs(rows || t ? "\n]\n" : "]\n", out);
	agg__fini(&a);
	free(fr);
	return err;
}
