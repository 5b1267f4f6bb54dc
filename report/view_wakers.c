// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Who woke the waits (record -e wakeup; the model joins each off-CPU
 * interval to its waker): offwaketime's folded stacks (--folded --wakers),
 * the chain of waits behind one thread's longest wait (--chain), and the
 * helpers top-waits names wakers and block requests with.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"


int view_waker_frames(const struct report_ctx *ctx, const struct cap_wakeup *w,
		      struct rframe *fr, int *nk)
{
	const struct filter *f = ctx->filter;

	return view_frames(ctx, w->waker_pid, w->time, filter__ustack(f, w->ustack),
			   filter__kstack(f, w->kstack), fr, nk);
}

const char *view_waker_comm(const struct report_ctx *ctx, const struct cap_wakeup *w)
{
	if (w->flags & CAP_WAKEUP_F_HARDIRQ)
		return "[hardirq]";
	if (w->flags & CAP_WAKEUP_F_SOFTIRQ)
		return "[softirq]";
	return model__comm_name(ctx->model, model__comm_id(ctx->model, w->waker_tid, w->time));
}

/* The scheduler's wakeup machinery, which every waker's kernel stack
 * starts with: try_to_wake_up(), wake_up_*(), __wake_up_common(), the
 * wait queue entries' wake functions. */
static bool wakeup_code(const char *name)
{
	size_t n = strlen(name);

	return !strcmp(name, "try_to_wake_up") || strstr(name, "wake_up") ||
	       (n > 13 && !strcmp(name + n - 13, "wake_function"));
}

int view_wake_site(const struct rframe *fr, int nk)
{
	int i;

	for (i = 0; i < nk; i++)
		if (!fr[i].special && !wakeup_code(fr[i].name))
			return i;
	return 0;
}

/* The block layer's completion of a request: every completion that ends
 * bios passes one of these. */
static bool completion_path(const struct rframe *fr, int nk)
{
	int i;

	for (i = 0; i < nk; i++)
		if (!strcmp(fr[i].name, "bio_endio") || !strcmp(fr[i].name, "blk_update_request"))
			return true;
	return false;
}

const struct cap_bio *view_wake_bio(const struct report_ctx *ctx, const struct cap_wakeup *w,
				    const struct rframe *fr, int nk)
{
	if (!(w->flags & CAP_WAKEUP_F_IO) || !completion_path(fr, nk))
		return NULL;
	return model__wakeup_bio(ctx->model, w);
}

static void human(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 20) && !(bytes % (1u << 20)))
		snprintf(buf, len, "%" PRIu64 "M", bytes >> 20);
	else if (bytes >= 1024 && !(bytes % 1024))
		snprintf(buf, len, "%" PRIu64 "K", bytes >> 10);
	else
		snprintf(buf, len, "%" PRIu64 "B", bytes);
}

void view_bio_label(const struct report_ctx *ctx, const struct cap_bio *b, char *buf,
		    size_t len)
{
	static const char ops[] = "RWFD?";
	const char *disk = model__blockdev(ctx->model, b->major, b->minor);
	char dev[24], size[24];

	if (!disk) {
		snprintf(dev, sizeof(dev), "%" PRIu32 ":%" PRIu32, b->major, b->minor);
		disk = dev;
	}
	human(b->bytes, size, sizeof(size));
	snprintf(buf, len, "%s %c %s", disk, ops[b->op < 4 ? b->op : 4], size);
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

int view_fold_wakers(struct report_ctx *ctx, struct fold_print *p)
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
