// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --chain TID|PID (Brendan Gregg's chain graphs, as text): a thread's
 * longest wait, who woke it, what that waker was itself waiting on just
 * before it woke the thread, who woke that, and so on, a few hops, each
 * with its times, where it waited and the waker's innermost frames. The
 * chain ends at an interrupt, a waker that had not waited (it was
 * running), a wait without a recorded waker, or the hop limit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "report/views_int.h"

#define CHAIN_HOPS 5   /* default depth */
#define SHOW_FRAMES 4  /* innermost frames of a waker's stack shown */

struct chain {
	const struct report_ctx *ctx;
	const struct cap_offcpu *e; /* model__offcpu() */
	size_t n;
	struct wait_index *waits;   /* e by (tid, end) */
	struct rframe *fr;
	FILE *out;
};

/* The filtered thread id's longest wait, else that of any thread of the
 * process id. */
static const struct cap_offcpu *longest(const struct chain *c, uint32_t id)
{
	const struct model *m = c->ctx->model;
	const struct cap_offcpu *best = NULL, *e;
	uint64_t from, seen, most = 0;
	int pass;
	size_t i;

	for (pass = 0; pass < 2 && !best; pass++) {
		for (i = 0, e = c->e; i < c->n; i++, e++) {
			if ((pass ? e->pid : e->tid) != id ||
			    !filter__offcpu(c->ctx->filter, m, e, model__comm_id(m, e->tid, e->start)))
				continue;
			seen = model__offcpu_seen(m, e, &from);
			if (!best || seen > most) {
				best = e;
				most = seen;
			}
		}
	}
	return best;
}

/* " f1 <- f2 <- ..." of frames [from, to), at most SHOW_FRAMES. */
static void show_frames(FILE *out, const struct rframe *fr, int from, int to)
{
	int i;

	for (i = from; i < to && i < from + SHOW_FRAMES; i++)
		view_put_name(i > from ? " <- " : " ", fr[i].name, out);
}

static int show_wait(struct chain *c, int hop, const struct cap_offcpu *e)
{
	const struct model *m = c->ctx->model;
	char from_s[32], to_s[32], ec[VIEW_COMM_ESC], ns[VIEW_NS_MAX];
	uint64_t from, seen = model__offcpu_seen(m, e, &from);
	int n, nk, w, u;

	view_fmt_reltime(m, from, from_s, sizeof(from_s));
	view_fmt_reltime(m, e->start + e->duration, to_s, sizeof(to_s));
	fprintf(c->out, "%2d  %s %" PRIu32 "/%" PRIu32 "%s waited %" PRIu64 ".%03" PRIu64
		" ms, %s to %s%s%s\n", hop,
		esc__str(model__comm_name(m, model__comm_id(m, e->tid, e->start)), ec, sizeof(ec)),
		e->pid, e->tid, view_ns_ids(m, e->pid, e->tid, e->start, ns), seen / 1000000, seen / 1000 % 1000, from_s, to_s,
		(e->open & CAP_OFFCPU_OPEN_START) ? " (began before the recording)" : "",
		(e->open & CAP_OFFCPU_OPEN_END) ? " (still waiting at the end)" : "");
	n = view_frames(c->ctx, e->pid, e->start, e->ustack, e->kstack, c->fr, &nk);
	if (n < 0)
		return n;
	w = view_wait_site(c->ctx, c->fr, nk);
	u = view_user_site(c->fr, nk, n);
	view_put_name("      in [k] ", n ? c->fr[w].name : "[unknown]", c->out);
	if (u >= 0)
		view_put_name("  [.] ", c->fr[u].name, c->out);
	fputc('\n', c->out);
	return 0;
}

/* The waker line(s); *next: the waker's thread to follow, 0 to stop. */
static int show_waker(struct chain *c, const struct cap_wakeup *wk, uint32_t *next)
{
	const struct model *m = c->ctx->model;
	const struct cap_bio *b;
	char at[32], label[48], ns[VIEW_NS_MAX];
	int n, nk;

	view_fmt_reltime(m, wk->time, at, sizeof(at));
	n = view_waker_frames(c->ctx, wk, c->fr, &nk);
	if (n < 0)
		return n;
	fprintf(c->out, "      woken at %s by ", at);
	esc__fputs(view_waker_comm(c->ctx, wk), c->out);
	if (wk->waker_tid)
		fprintf(c->out, " %" PRIu32 "/%" PRIu32 "%s", wk->waker_pid, wk->waker_tid,
			view_ns_ids(m, wk->waker_pid, wk->waker_tid, wk->time, ns));
	fputs(":", c->out);
	show_frames(c->out, c->fr, nk, n);
	if (nk)
		fputs(n > nk ? " |" : "", c->out);
	show_frames(c->out, c->fr, view_wake_site(c->fr, nk), nk);
	fputc('\n', c->out);
	b = view_wake_bio(c->ctx, wk, c->fr, nk);
	if (b) {
		view_bio_label(c->ctx, b, label, sizeof(label));
		fprintf(c->out, "      the completion of %s (sector %" PRIu64 ", %" PRIu64
			" us issue to completion)\n", label, b->sector,
			view_ns_to_us(b->complete_time - b->issue_time));
	}
	*next = wk->waker_tid;
	return 0;
}

static int walk(struct chain *c, const struct cap_offcpu *e, unsigned hops)
{
	const struct cap_wakeup *wk;
	uint32_t next;
	unsigned hop;
	int err = 0;

	for (hop = 0; e && !err; hop++) {
		err = show_wait(c, hop, e);
		wk = err ? NULL : model__waker(c->ctx->model, e);
		if (!err && !wk) {
			fprintf(c->out, "      no waker: %s\n", e->open & CAP_OFFCPU_OPEN_END ?
				"still waiting" : e->state ? "none recorded" : "it was preempted");
			break;
		}
		err = err ?: show_waker(c, wk, &next);
		if (err || !next || hop + 1 >= hops)
			break;
		e = wait_index__before(c->waits, next, wk->time);
		if (!e)
			fprintf(c->out, "      %" PRIu32 " had not waited before (running)\n", next);
	}
	return err;
}

int view_chain(struct report_ctx *ctx, FILE *out)
{
	struct chain c = { .ctx = ctx, .out = out };
	const struct cap_offcpu *first;
	int err;

	c.e = model__offcpu(ctx->model, &c.n);
	c.fr = malloc(VIEW_MAX_FRAMES * sizeof(*c.fr));
	err = c.fr ? wait_index__new(ctx->model, &c.waits) : -ENOMEM;
	first = err ? NULL : longest(&c, ctx->opts.chain_id);
	if (!err && !first)
		err = -ENOENT;
	if (!err) {
		fprintf(out, "# the waits behind the longest wait of %" PRIu32 "\n",
			ctx->opts.chain_id);
		err = walk(&c, first, ctx->opts.chain_hops ? ctx->opts.chain_hops : CHAIN_HOPS);
	}
	wait_index__free(c.waits);
	free(c.fr);
	return err;
}
