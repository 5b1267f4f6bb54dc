// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The drain loop: ringbuf records become capture records (events.c), the
 * side band is drained in the same pass, blocks are aged out
 * every ~100 ms, and once a second the kernel's drop counters become LOST
 * records (output.c writes the delta since the last, so the file's totals
 * are exact) and the file is switched when --switch-output says so.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include "record/recorder_int.h"
#include "record/ringbuf.h"

#define NSEC_PER_SEC 1000000000ull
#define TICK_NS (100 * 1000000ull)
#define POLL_MS 100
#define CHECK_EVERY 1024 /* records between clock reads in the callback */

/* ringbuf callback. Returning <0 stops ringbuf__consume() after this
 * record (already consumed), which is how a long burst yields to the loop. */
int recorder__on_event(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	int err = recorder__convert(r, data, size);

	if (err < 0)
		return err;
	if (++r->since_check >= CHECK_EVERY) {
		r->since_check = 0;
		if (now_ns() >= r->next_check) {
			r->yielded = true;
			return -EAGAIN;
		}
	}
	return 0;
}

void recorder__progress(const struct recorder *r, struct record_progress *p)
{
	int k;

	memset(p, 0, sizeof(*p));
	p->elapsed_ns = (r->end_ns ? r->end_ns : now_ns()) - r->start_ns;
	for (k = 0; k < STKREC_KIND_NR; k++) {
		p->events[k] = r->events[k];
		p->lost[k] = r->lost_seen[k * STKREC_LOST_NR + STKREC_LOST_RINGBUF] +
			     r->lost_seen[k * STKREC_LOST_NR + STKREC_LOST_STATE];
		p->ustack_missed += r->lost_seen[k * STKREC_LOST_NR + STKREC_LOST_USTACK];
		p->kstack_missed += r->lost_seen[k * STKREC_LOST_NR + STKREC_LOST_KSTACK];
	}
	p->lost[CAP_KIND_SIDEBAND] = r->sb ? sideband__lost(r->sb) : 0;
	p->stacks = r->in ? intern__nr_stacks(r->in) : 0;
	p->bytes = r->w ? cap_writer__file_size(r->w) : r->final_bytes;
	p->stop = r->stop;
	p->command_status = command__status(&r->cmd);
	p->path = r->path;
	p->files = r->files;
	if (r->fl)
		recorder__flight_progress(r, p);
	p->pack = r->pack;
	p->packs = r->packs;
	p->pack_ns = r->pack_ns;
	p->pack_err = r->pack_err;
	p->no_cgroup2 = !r->cg;
	p->cgroups_unnamed = cgroups__unnamed(r->cg);
	memcpy(p->cgroup_filtered, r->cgroup_filtered, sizeof(p->cgroup_filtered));
	p->untraced = r->untraced;
	p->recovered = r->recovered;
	p->untraced_wake = r->untraced_wake;
	p->ucache_wrong = r->ucache_wrong;
	p->kcache_wrong = r->kcache_wrong;
	p->tp_btf_err = r->tp_btf_err;
}

/* One pass over both sources, the side band first: an exec's or mmap's
 * MAPPING records (procmaps__ensure() stamps them) must precede the events
 * of the new image that the ringbuf holds. A yield (burst still flowing) is
 * not an error: the loop comes back after its housekeeping. */
int recorder__drain(struct recorder *r, uint64_t budget_ns)
{
	int n;

	n = sideband__drain(r->sb, r->w, r->pm);
	if (n < 0)
		return n;
	r->next_check = now_ns() + budget_ns;
	r->yielded = false;
	n = ringbuf__consume(r->rb);
	if (n < 0 && !(n == -EAGAIN && r->yielded))
		return n;
	return 0;
}

void recorder__report_progress(struct recorder *r)
{
	struct record_progress p;

	if (!r->opts.progress)
		return;
	recorder__progress(r, &p);
	r->opts.progress(r->opts.progress_ctx, &p);
}

/* The file's switch, or the flight recorder's dumps: <0 an error, 1 when
 * --max-dumps is reached. */
static int output_tick(struct recorder *r, uint64_t now)
{
	if (r->fl)
		return recorder__flight_tick(r, now);
	if (recorder__switch_due(r, now))
		return recorder__switch_output(r, now);
	return 0;
}

/* Housekeeping after a drain; true when recording should stop. */
static bool housekeeping(struct recorder *r, uint64_t *next_sec, int *err)
{
	uint64_t now = now_ns();
	int ret;

	*err = cap_writer__tick(r->w, now);
	if (!*err && now >= *next_sec) {
		*err = recorder__write_lost(r);
		recorder__report_progress(r);
		*next_sec = now + NSEC_PER_SEC;
	}
	ret = *err ? *err : output_tick(r, now);
	*err = ret < 0 ? ret : 0;
	if (ret < 0)
		return true;
	if (ret > 0 || r->stop_requested) /* --max-dumps reached, or a signal */
		r->stop = CAP_STOP_SIGNAL;
	else if (r->opts.duration_ns && now - r->start_ns >= r->opts.duration_ns)
		r->stop = CAP_STOP_DURATION;
	else if (command__poll(&r->cmd))
		r->stop = CAP_STOP_COMMAND;
	else
		return false;
	return true;
}

/* The reader of the output pipe went away (record.c watches it). */
static bool output_gone(const struct recorder *r, const struct epoll_event *evs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (evs[i].data.fd == r->opts.output_fd &&
		    (evs[i].events & (EPOLLERR | EPOLLHUP)))
			return true;
	}
	return false;
}

int recorder__loop(struct recorder *r)
{
	uint64_t next_sec = now_ns() + NSEC_PER_SEC;
	struct epoll_event evs[16];
	int n, err, timeout = POLL_MS;

	for (;;) {
		n = epoll_wait(r->epfd, evs, 16, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (output_gone(r, evs, n))
			return -EPIPE;
		err = recorder__drain(r, TICK_NS);
		if (err)
			return err;
		if (housekeeping(r, &next_sec, &err))
			return err;
		/* A yield left data behind, and the kernel side may not wake
		 * us for it (it wakes past a fill level only): no sleeping. */
		timeout = r->yielded ? 0 : POLL_MS;
	}
}

