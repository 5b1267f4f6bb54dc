// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Ring buffer records become capture records: stacks interned, THREAD
 * records on first sight or rename, a process's maps on its first event,
 * block requests joined to their submitter's stacks. The one converter of
 * the ring buffer's callback (drain.c) and of the waits open at a file's
 * end (waits.c), which arrive in the same layout.
 */
#include <errno.h>
#include <string.h>
#include "record/recorder_int.h"

_Static_assert((int)STKREC_BIO_READ == CAP_BIO_READ && (int)STKREC_BIO_WRITE == CAP_BIO_WRITE &&
	       (int)STKREC_BIO_FLUSH == CAP_BIO_FLUSH && (int)STKREC_BIO_DISCARD == CAP_BIO_DISCARD &&
	       (int)STKREC_BIO_OTHER == CAP_BIO_OTHER, "bio ops match format");
_Static_assert(STKREC_BIO_F_SYNC == CAP_BIO_F_SYNC && STKREC_BIO_F_FUA == CAP_BIO_F_FUA &&
	       STKREC_BIO_F_META == CAP_BIO_F_META &&
	       STKREC_BIO_F_PREFLUSH == CAP_BIO_F_PREFLUSH, "bio flags match format");

static int note_thread(struct recorder *r, const struct stkrec_stack_ev *e, uint64_t time)
{
	struct cap_thread t = {
		.time = time, .tid = e->tid, .pid = e->pid,
		.ns_tid = e->ns_tid, .ns_pid = e->ns_pid,
	};
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
	if (e->flags & STKREC_F_KTHREAD)
		return 0;
	/* a container's process, new or exec'd (chroot then exec): its JIT
	 * map is in the root it has now */
	if (r->jr && e->ns_pid != e->pid)
		jitroots__watch(r->jr, e->pid);
	/* A process gone or unreadable is not fatal (the side band may have
	 * its maps); a failing writer shows up at the next append anyway. */
	if (!procmaps__known(r->pm, e->pid) && procmaps__ensure(r->pm, e->pid, time) < 0)
		r->maps_missed++;
	return 0;
}

/* The CGROUP record of id, before the first event of the file using it. */
static int note_cgroup(struct recorder *r, uint64_t id, uint64_t time)
{
	return r->cg ? cgroups__ensure(r->cg, r->w, r->files, id, time) : 0;
}

/* A user stack with Python frames: merged, then interned. */
static int python_stack(struct recorder *r, const struct stkrec_stack_ev *e, uint32_t *id)
{
	uint64_t ips[CAP_MAX_STACK_DEPTH];
	int n = pytrack__stack(r->py, r->in, e, ips);

	if (n < 0)
		return n;
	return intern__stack(r->in, CAP_STACK_USER, ips, n, id);
}

static int stack_ids(struct recorder *r, const struct stkrec_stack_ev *e,
		     uint32_t *ustack, uint32_t *kstack)
{
	int err;

	if (e->flags & STKREC_F_USTACK_LOST) {
		*ustack = CAP_STACK_LOST;
	} else if (r->py && (e->nr_pystack || e->py_flags)) {
		err = python_stack(r, e, ustack);
		if (err)
			return err;
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
	       e->nr_kstack <= STKREC_MAX_STACK && e->nr_pystack <= STKREC_MAX_PYSTACK &&
	       size >= stkrec_stack_ev_size(e);
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
		err = note_cgroup(r, e->cgroup, e->time);
	if (!err)
		err = stack_ids(r, e, ustack, kstack);
	return err ? err : 1;
}

/* FORMAT.md §4.11: a wait that began before this file (found waiting at
 * the start, or before a --switch-output), or was still open at its end. */
static uint32_t open_flags(const struct recorder *r, const struct stkrec_stack_ev *e)
{
	uint32_t open = 0;

	if ((e->flags & STKREC_F_OPEN_START) || e->time < r->file_start_ns)
		open |= CAP_OFFCPU_OPEN_START;
	if (e->flags & STKREC_F_START_UNKNOWN)
		open |= CAP_OFFCPU_START_UNKNOWN;
	if (e->flags & STKREC_F_OPEN_END)
		open |= CAP_OFFCPU_OPEN_END;
	return open;
}

/* -m/-M bound the part of an open wait this file saw: the kernel passes
 * those on whole (bpf/waits.bpf.h). */
static bool open_wait_filtered(const struct recorder *r, const struct stkrec_stack_ev *e)
{
	uint64_t from = e->time > r->file_start_ns ? e->time : r->file_start_ns;
	uint64_t end = e->time + e->duration, seen = end > from ? end - from : 0;
	uint64_t max = r->opts.max_us >= UINT64_MAX / 1000 ? UINT64_MAX : r->opts.max_us * 1000;

	if (!(e->flags & (STKREC_F_OPEN_START | STKREC_F_OPEN_END)))
		return false;
	return seen < r->opts.min_us * 1000 || seen > max;
}

static int on_stack_ev(struct recorder *r, const struct stkrec_stack_ev *e, size_t size)
{
	uint32_t ustack, kstack;
	int err;

	if (e->type == STKREC_EV_OFFCPU && size >= STKREC_STACK_EV_HDR_SIZE &&
	    open_wait_filtered(r, e))
		return 0;
	err = take_stack_ev(r, e, size, &ustack, &kstack);
	if (err <= 0)
		return err;
	if (e->type == STKREC_EV_OFFCPU) {
		struct cap_offcpu o = {
			.start = e->time, .duration = e->duration, .tid = e->tid,
			.pid = e->pid, .cpu = e->cpu, .state = e->state,
			.ustack = ustack, .kstack = kstack, .open = open_flags(r, e),
			.cgroup = e->cgroup,
		};

		err = append_event(r, CAP_KIND_OFFCPU, CAP_REC_OFFCPU, &o, sizeof(o));
		if (!err && r->trg)
			triggers__wait(r->trg, &o, e->comm, r->start_ns, now_ns());
		return err;
	} else {
		struct cap_cpu c = {
			.time = e->time, .tid = e->tid, .pid = e->pid, .cpu = e->cpu,
			.ustack = ustack, .kstack = kstack, .cgroup = e->cgroup,
		};

		return append_event(r, CAP_KIND_CPU, CAP_REC_CPU, &c, sizeof(c));
	}
}

/* WAKEUP (bpf/wakeup.bpf.h): the woken thread in duration, the request
 * of a completion after the frames. */
static size_t wakeup_size(const struct stkrec_stack_ev *e)
{
	return stkrec_stack_ev_size(e) + ((e->state & STKREC_WAKE_IO) ? sizeof(struct stkrec_wake_io) : 0);
}

static void wakeup_io(const struct stkrec_stack_ev *e, struct cap_wakeup *w)
{
	const uint64_t *io = (const uint64_t *)e->ips + e->nr_ustack + e->nr_kstack +
			     2 * e->nr_pystack;

	if (!(e->state & STKREC_WAKE_IO))
		return;
	w->flags |= CAP_WAKEUP_F_IO;
	w->io_major = (uint32_t)io[0];
	w->io_minor = io[0] >> 32;
	w->io_sector = io[1];
	w->io_complete_time = io[2];
}

/* An interrupt's wakeup names no thread: not the one it interrupted, whose
 * user stack and kernel frames below the interrupt's entry are dropped. */
static int irq_waker(struct recorder *r, const struct stkrec_stack_ev *e, struct cap_wakeup *w)
{
	const uint64_t *k = (const uint64_t *)e->ips + e->nr_ustack;
	bool softirq = false;
	int n;

	if (e->flags & STKREC_F_KSTACK_LOST)
		return 0;
	n = ksyms__irq_frames(r->ks, k, e->nr_kstack, &softirq);
	if (!n)
		return 0;
	w->waker_tid = w->waker_pid = 0;
	w->waker_cgroup = 0;
	w->flags = softirq ? CAP_WAKEUP_F_SOFTIRQ : CAP_WAKEUP_F_HARDIRQ;
	w->ustack = CAP_STACK_NONE;
	return intern__stack(r->in, CAP_STACK_KERNEL, k, n, &w->kstack) ?: 1;
}

static int on_wakeup_ev(struct recorder *r, const struct stkrec_stack_ev *e, size_t size)
{
	struct cap_wakeup w = { 0 };
	int err;

	if (!valid_stack_ev(e, size) || size < wakeup_size(e)) {
		r->bad_records++;
		return 0;
	}
	w.time = e->time;
	w.tid = (uint32_t)e->duration;
	w.pid = e->duration >> 32;
	w.waker_tid = e->tid;
	w.waker_pid = e->pid;
	w.cpu = e->cpu;
	w.cgroup = e->woken_cgroup;
	w.waker_cgroup = e->cgroup;
	err = note_cgroup(r, w.cgroup, w.time);
	if (err)
		return err;
	err = irq_waker(r, e, &w);
	if (!err) {
		w.flags = (e->flags & STKREC_F_KTHREAD) ? CAP_WAKEUP_F_KTHREAD : 0;
		err = take_stack_ev(r, e, size, &w.ustack, &w.kstack);
		if (!err)
			return 0; /* malformed: counted */
	}
	if (err < 0)
		return err;
	wakeup_io(e, &w); /* the waker's cgroup was noted with its stacks */
	return append_event(r, CAP_KIND_WAKEUP, CAP_REC_WAKEUP, &w, sizeof(w));
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
	int err;

	if (size < sizeof(*e)) {
		r->bad_records++;
		return 0;
	}
	err = note_cgroup(r, e->cgroup, e->complete_time);
	if (err)
		return err;
	bio_stacks(r, e, &b);
	b.cgroup = e->cgroup;
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

/* A cgroup directory made or removed (bpf/cgroup.bpf.h). */
static int on_cgroup_ev(struct recorder *r, const struct stkrec_cgroup_ev *e, size_t size)
{
	if (size < STKREC_CGROUP_EV_HDR_SIZE || e->path_len > STKREC_CGROUP_PATH_MAX ||
	    size < STKREC_CGROUP_EV_HDR_SIZE + e->path_len) {
		r->bad_records++;
		return 0;
	}
	if (!r->cg)
		return 0;
	return cgroups__note(r->cg, e->id, e->path, e->path_len,
			     e->flags & STKREC_CGROUP_RMDIR, e->time);
}

int recorder__convert(struct recorder *r, const void *data, size_t size)
{
	uint32_t type;

	if (size < sizeof(type)) {
		r->bad_records++;
		return 0;
	}
	memcpy(&type, data, sizeof(type));
	switch (type) {
	case STKREC_EV_OFFCPU:
	case STKREC_EV_CPU:
		return on_stack_ev(r, data, size);
	case STKREC_EV_BIO:
		return on_bio_ev(r, data, size);
	case STKREC_EV_BIO_SUBMIT:
		return on_bio_submit(r, data, size);
	case STKREC_EV_WAKEUP:
		return on_wakeup_ev(r, data, size);
	case STKREC_EV_CGROUP:
		return on_cgroup_ev(r, data, size);
	default:
		r->bad_records++;
		return 0;
	}
}
