// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Who woke the waits (record -e wakeup; the model joins each off-CPU
 * interval to its waker): the waker's frames, name and wakeup site, and
 * the block request a completion ended a wait with, as the folded stacks
 * (--folded --wakers), the chain of waits (--chain), top-waits and script
 * show them.
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
