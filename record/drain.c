// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The drain loop: ringbuf records become capture records (stacks interned,
 * THREAD records on first sight or rename, process maps on a pid's first
 * event), the side band is drained in the same pass, blocks are aged out
 * every ~100 ms, and once a second the kernel's drop counters become LOST
 * records (output.c writes the delta since the last, so the file's totals
 * are exact) and the file is switched when --switch-output says so.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "stkrec.skel.h"
#include "record/recorder_int.h"

#define NSEC_PER_SEC 1000000000ull
#define TICK_NS (100 * 1000000ull)
#define POLL_MS 100
#define CHECK_EVERY 1024 /* records between clock reads in the callback */

_Static_assert((int)STKREC_BIO_READ == CAP_BIO_READ && (int)STKREC_BIO_WRITE == CAP_BIO_WRITE &&
	       (int)STKREC_BIO_FLUSH == CAP_BIO_FLUSH && (int)STKREC_BIO_DISCARD == CAP_BIO_DISCARD &&
	       (int)STKREC_BIO_OTHER == CAP_BIO_OTHER, "bio ops match format");
_Static_assert(STKREC_BIO_F_SYNC == CAP_BIO_F_SYNC && STKREC_BIO_F_FUA == CAP_BIO_F_FUA &&
	       STKREC_BIO_F_META == CAP_BIO_F_META &&
	       STKREC_BIO_F_PREFLUSH == CAP_BIO_F_PREFLUSH, "bio flags match format");

static int note_thread(struct recorder *r, const struct stkrec_stack_ev *e, uint64_t time)
{
	struct cap_thread t = { .time = time, .tid = e->tid, .pid = e->pid };
	int err;

	/* tid 0 is each CPU's idle task ("swapper/N"): not a thread to name */
	if (!e->tid || !threads__changed(&r->threads, e->tid, e->pid, e->comm))
		return 0;
	if (e->flags & STKREC_F_KTHREAD)
		t.flags |= CAP_THREAD_KERNEL;
	memcpy(t.comm, e->comm, sizeof(t.comm));
	err = cap_writer__append(r->w, CAP_REC_THREAD, &t, sizeof(t), NULL, 0);
	if (err < 0)
		return err;
	/* A process gone or unreadable is not fatal (the side band may have
	 * its maps); a failing writer shows up at the next append anyway. */
	if (!(e->flags & STKREC_F_KTHREAD) && !procmaps__known(r->pm, e->pid) &&
	    procmaps__ensure(r->pm, e->pid, time) < 0)
		r->maps_missed++;
	return 0;
}

static int stack_ids(struct recorder *r, const struct stkrec_stack_ev *e,
		     uint32_t *ustack, uint32_t *kstack)
{
	int err;

	if (e->flags & STKREC_F_USTACK_LOST) {
		*ustack = CAP_STACK_LOST;
	} else {
		err = intern__stack(r->in, CAP_STACK_USER, (const uint64_t *)e->ips,
				    e->nr_ustack, ustack);
		if (err)
			return err;
	}
	if (e->flags & STKREC_F_KSTACK_LOST)
		*kstack = CAP_STACK_LOST;
	else
		return intern__stack(r->in, CAP_STACK_KERNEL,
				     (const uint64_t *)e->ips + e->nr_ustack,
				     e->nr_kstack, kstack);
	return 0;
}

/* Counted once in the file: the event --max-size refuses (the one that
 * ends the recording) is in no file, and the file's STAT events.* says
 * exactly what it holds (FORMAT.md §4.15). */
static int append_event(struct recorder *r, int kind, uint16_t type, const void *rec,
			size_t len)
{
	int err = cap_writer__append(r->w, type, rec, len, NULL, 0);

	if (err >= 0)
		r->events[kind]++;
	return err;
}

static bool valid_stack_ev(const struct stkrec_stack_ev *e, size_t size)
{
	return size >= STKREC_STACK_EV_HDR_SIZE && e->nr_ustack <= STKREC_MAX_STACK &&
	       e->nr_kstack <= STKREC_MAX_STACK &&
	       size >= STKREC_STACK_EV_HDR_SIZE + 8u * (e->nr_ustack + e->nr_kstack);
}

/* A record with stacks: its thread noted, its stacks interned. 1, 0 for a
 * malformed record (counted, dropped), or the error. */
static int take_stack_ev(struct recorder *r, const struct stkrec_stack_ev *e, size_t size,
			 uint32_t *ustack, uint32_t *kstack)
{
	int err;

	if (!valid_stack_ev(e, size)) {
		r->bad_records++;
		return 0;
	}
	err = note_thread(r, e, e->time);
	if (!err)
		err = stack_ids(r, e, ustack, kstack);
	return err ? err : 1;
}

static int on_stack_ev(struct recorder *r, const struct stkrec_stack_ev *e, size_t size)
{
	uint32_t ustack, kstack;
	int err;

	err = take_stack_ev(r, e, size, &ustack, &kstack);
	if (err <= 0)
		return err;
	if (e->type == STKREC_EV_OFFCPU) {
		struct cap_offcpu o = {
			.start = e->time, .duration = e->duration, .tid = e->tid,
			.pid = e->pid, .cpu = e->cpu, .state = e->state,
			.ustack = ustack, .kstack = kstack,
		};

		return append_event(r, CAP_KIND_OFFCPU, CAP_REC_OFFCPU, &o, sizeof(o));
	} else {
		struct cap_cpu c = {
			.time = e->time, .tid = e->tid, .pid = e->pid, .cpu = e->cpu,
			.ustack = ustack, .kstack = kstack,
		};

		return append_event(r, CAP_KIND_CPU, CAP_REC_CPU, &c, sizeof(c));
	}
}

/* blk_status_t to -errno, as blk_status_to_errno(); codes 1..13 have kept
 * their values since 4.13. Anything else reads as an I/O error. */
static int32_t blk_errno(uint8_t status)
{
	static const int32_t map[] = {
		0, -EOPNOTSUPP, -ETIMEDOUT, -ENOSPC, -ENOLINK, -EREMOTEIO, -EBADE,
		-ENODATA, -EILSEQ, -ENOMEM, -EIO, -EREMCHG, -EAGAIN, -EBUSY,
	};

	return status < sizeof(map) / sizeof(map[0]) ? map[status] : -EIO;
}

/* A submitter's stacks (BIO_SUBMIT), interned now, kept for the request's
 * completion; the slot of an older submission that never completed is
 * reused. */
static int on_bio_submit(struct recorder *r, const struct stkrec_stack_ev *e, size_t size)
{
	struct bio_stacks_slot *s;
	uint32_t ustack, kstack;
	int err;

	if (!r->bio_stacks || (size >= STKREC_STACK_EV_HDR_SIZE && !e->duration)) {
		r->bad_records++;
		return 0;
	}
	err = take_stack_ev(r, e, size, &ustack, &kstack);
	if (err <= 0)
		return err;
	s = &r->bio_stacks[e->duration & r->bio_stacks_mask];
	*s = (struct bio_stacks_slot){ e->duration, ustack, kstack, r->files };
	return 0;
}

/* The stacks of a completed request: its submission's, if still held and
 * interned in this file; else counted as stacks missed (the event kept). */
static void bio_stacks(struct recorder *r, const struct stkrec_bio_ev *e, struct cap_bio *b)
{
	struct bio_stacks_slot *s;

	if (!e->seq || !r->bio_stacks)
		return; /* no stacks were taken: issuer unknown or not traced */
	s = &r->bio_stacks[e->seq & r->bio_stacks_mask];
	if (s->seq != e->seq || s->file != r->files) {
		b->ustack = b->kstack = CAP_STACK_LOST;
		r->bio_stacks_missed++;
		return;
	}
	b->ustack = s->ustack;
	b->kstack = s->kstack;
	if (e->last)
		s->seq = 0;
}

static int on_bio_ev(struct recorder *r, const struct stkrec_bio_ev *e, size_t size)
{
	struct cap_bio b = {};

	if (size < sizeof(*e)) {
		r->bad_records++;
		return 0;
	}
	bio_stacks(r, e, &b);
	b.issue_time = e->issue_time;
	b.complete_time = e->complete_time;
	b.sector = e->sector;
	b.bytes = e->bytes;
	b.tid = e->tid;
	b.pid = e->pid;
	b.major = e->major;
	b.minor = e->minor;
	b.op = e->op;
	b.flags = e->flags;
	b.error = blk_errno(e->status);
	memcpy(b.comm, e->comm, sizeof(b.comm));
	return append_event(r, CAP_KIND_BIO, CAP_REC_BIO, &b, sizeof(b));
}

/* ring_buffer callback. Returning <0 stops ring_buffer__consume() after this
 * record (already consumed), which is how a long burst yields to the loop. */
int recorder__on_event(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	uint32_t type;
	int err;

	if (size < sizeof(type)) {
		r->bad_records++;
		return 0;
	}
	memcpy(&type, data, sizeof(type));
	switch (type) {
	case STKREC_EV_OFFCPU:
	case STKREC_EV_CPU:
		err = on_stack_ev(r, data, size);
		break;
	case STKREC_EV_BIO:
		err = on_bio_ev(r, data, size);
		break;
	case STKREC_EV_BIO_SUBMIT:
		err = on_bio_submit(r, data, size);
		break;
	default:
		r->bad_records++;
		err = 0;
	}
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
	p->pack = r->pack;
	p->packs = r->packs;
	p->pack_ns = r->pack_ns;
	p->pack_err = r->pack_err;
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
	n = ring_buffer__consume(r->rb);
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

/* Housekeeping after a drain; true when recording should stop. */
static bool housekeeping(struct recorder *r, uint64_t *next_sec, int *err)
{
	uint64_t now = now_ns();

	*err = cap_writer__tick(r->w, now);
	if (!*err && now >= *next_sec) {
		*err = recorder__write_lost(r);
		recorder__report_progress(r);
		*next_sec = now + NSEC_PER_SEC;
	}
	if (!*err && recorder__switch_due(r, now))
		*err = recorder__switch_output(r, now);
	if (*err < 0)
		return true;
	*err = 0;
	if (r->stop_requested)
		r->stop = CAP_STOP_SIGNAL;
	else if (r->opts.duration_ns && now - r->start_ns >= r->opts.duration_ns)
		r->stop = CAP_STOP_DURATION;
	else if (command__poll(&r->cmd))
		r->stop = CAP_STOP_COMMAND;
	else
		return false;
	return true;
}

int recorder__loop(struct recorder *r)
{
	uint64_t next_sec = now_ns() + NSEC_PER_SEC;
	struct epoll_event evs[16];
	int err, timeout = POLL_MS;

	for (;;) {
		if (epoll_wait(r->epfd, evs, 16, timeout) < 0 && errno != EINTR)
			return -errno;
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


