// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The drain loop: ringbuf records become capture records (stacks interned,
 * THREAD records on first sight or rename, process maps on a pid's first
 * event), the side band is drained in the same pass, blocks are aged out
 * every ~100 ms, and the kernel's drop counters become LOST records (the
 * delta since the last write, so the file's totals are exact).
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static int on_stack_ev(struct recorder *r, const struct stkrec_stack_ev *e, size_t size)
{
	uint32_t ustack, kstack;
	int err;

	if (size < STKREC_STACK_EV_HDR_SIZE || e->nr_ustack > STKREC_MAX_STACK ||
	    e->nr_kstack > STKREC_MAX_STACK ||
	    size < STKREC_STACK_EV_HDR_SIZE + 8u * (e->nr_ustack + e->nr_kstack)) {
		r->bad_records++;
		return 0;
	}
	err = note_thread(r, e, e->time);
	if (!err)
		err = stack_ids(r, e, &ustack, &kstack);
	if (err)
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

static int on_bio_ev(struct recorder *r, const struct stkrec_bio_ev *e, size_t size)
{
	struct cap_bio b = {};

	if (size < sizeof(*e)) {
		r->bad_records++;
		return 0;
	}
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
int record__on_event(void *ctx, void *data, size_t size)
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
	default:
		r->bad_records++;
		err = 0;
	}
	if (err < 0)
		return err;
	if (++r->since_check >= CHECK_EVERY) {
		r->since_check = 0;
		if (record__now() >= r->next_check) {
			r->yielded = true;
			return -EAGAIN;
		}
	}
	return 0;
}

static int read_percpu(struct recorder *r, int fd, uint32_t key, uint64_t *sum)
{
	int i;

	if (bpf_map_lookup_elem(fd, &key, r->percpu_buf))
		return -errno;
	*sum = 0;
	for (i = 0; i < r->ncpus_possible; i++)
		*sum += r->percpu_buf[i];
	return 0;
}

int record__write_lost(struct recorder *r)
{
	struct cap_lost l = { .cpu = 0xffffffffu };
	uint64_t sum = 0;
	uint32_t key;
	int err;

	for (key = 0; key < STKREC_NR_COUNTERS; key++) {
		err = read_percpu(r, bpf_map__fd(r->skel->maps.counters), key, &sum);
		if (err)
			return err;
		if (sum <= r->lost_seen[key])
			continue;
		l.count = sum - r->lost_seen[key];
		l.kind = key / STKREC_LOST_NR;
		l.reason = key % STKREC_LOST_NR;
		err = cap_writer__append(r->w, CAP_REC_LOST, &l, sizeof(l), NULL, 0);
		if (err < 0)
			return err;
		r->lost_seen[key] = sum;
	}
	return 0;
}

static int write_stat(struct recorder *r, const char *key, uint64_t value)
{
	struct cap_stat s = { .value = value };
	int err;

	err = intern__string(r->in, key, strlen(key), &s.key_id);
	if (err)
		return err;
	return cap_writer__append(r->w, CAP_REC_STAT, &s, sizeof(s), NULL, 0);
}

static uint64_t bpf_stat(struct recorder *r, uint32_t key)
{
	uint64_t sum = 0;

	if (read_percpu(r, bpf_map__fd(r->skel->maps.stats), key, &sum))
		return 0;
	return sum;
}

/* The STAT keys, in the order record__write_stats() writes them. */
static const char *const stat_keys[] = {
	"events.offcpu", "events.cpu", "events.bio", "stacks", "strings", "threads",
	"ringbuf_size", "bad_ringbuf_records", "maps_unreadable", "sideband_lost",
	"bio.unseen_completions", "bio.filtered_completions", "duration_ns", "bytes_raw",
	"bpf.skipped.offcpu", "bpf.skipped.cpu", "bpf.skipped.bio",
	"bio.missed_completions", "bio.incomplete",
};

/* Runs of a program the kernel skipped because it was already running on
 * that CPU (a completion interrupting another, say): events the program
 * could neither record nor count lost. */
static uint64_t prog_skipped(const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(p);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

/* Requests of traced issuers seen issued whose completion was not seen
 * (yet): in flight when the file ended, or completed where the kernel ran
 * no program (their entries stay until the request is used again). */
static bool bio_incomplete_entry(const struct stkrec_bio_state *s)
{
	return s->issue_time && s->traced;
}

/* Before 5.6 (no batch lookup): one key at a time, which restarts when the
 * key just read goes meanwhile, hence the bound. */
static uint64_t bio_incomplete_slow(int fd, uint32_t max)
{
	struct stkrec_bio_state s;
	uint64_t key, next, *prev = NULL, n = 0;
	uint32_t i;

	for (i = 0; i < max && !bpf_map_get_next_key(fd, prev, &next); i++) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &s) && bio_incomplete_entry(&s))
			n++;
	}
	return n;
}

static uint64_t bio_incomplete(struct recorder *r)
{
	const struct bpf_map *m = r->skel->maps.bio_inflight;
	struct stkrec_bio_state vals[128];
	uint64_t keys[128], batch = 0, n = 0;
	int err, fd = bpf_map__fd(m);
	bool first = true;
	__u32 count, i;

	if (fd < 0)
		return 0;
	do {
		/* a batch takes whole hash buckets: an entry that comes or
		 * goes meanwhile is read once at most */
		count = 128;
		err = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, vals, &count,
					   NULL);
		if (err && err != -ENOENT)
			return first ? bio_incomplete_slow(fd, bpf_map__max_entries(m)) : n;
		for (i = 0; i < count; i++)
			n += bio_incomplete_entry(&vals[i]);
		first = false;
	} while (!err);
	return n;
}

/* Intern the STAT keys up front: once --max-size is reached the writer
 * takes only LOST, STAT and END records, not the STRINGs naming keys. */
int record__intern_stat_keys(struct recorder *r)
{
	uint32_t id;
	size_t i;
	int err;

	for (i = 0; i < sizeof(stat_keys) / sizeof(stat_keys[0]); i++) {
		err = intern__string(r->in, stat_keys[i], strlen(stat_keys[i]), &id);
		if (err)
			return err;
	}
	return 0;
}

/* This file's numbers: events since it began, its own tables. */
int record__write_stats(struct recorder *r, uint64_t now)
{
	const struct cap_totals *t = cap_writer__totals(r->w);
	const struct {
		const char *key;
		uint64_t value;
	} stats[] = {
		{ "events.offcpu", r->events[CAP_KIND_OFFCPU] - r->events_base[CAP_KIND_OFFCPU] },
		{ "events.cpu", r->events[CAP_KIND_CPU] - r->events_base[CAP_KIND_CPU] },
		{ "events.bio", r->events[CAP_KIND_BIO] - r->events_base[CAP_KIND_BIO] },
		{ "stacks", intern__nr_stacks(r->in) },
		{ "strings", intern__nr_strings(r->in) },
		{ "threads", r->threads.nr },
		{ "ringbuf_size", r->opts.ringbuf_size },
		{ "bad_ringbuf_records", r->bad_records },
		{ "maps_unreadable", r->maps_missed },
		{ "sideband_lost", r->sb ? sideband__lost(r->sb) : 0 },
		{ "bio.unseen_completions", bpf_stat(r, STKREC_STAT_BIO_UNSEEN) },
		{ "bio.filtered_completions", bpf_stat(r, STKREC_STAT_BIO_FILTERED) },
		{ "duration_ns", now - r->file_start_ns },
		{ "bytes_raw", t->bytes_raw }, /* before these last records */
		{ "bpf.skipped.offcpu", prog_skipped(r->skel->progs.stkrec_switch) +
					prog_skipped(r->skel->progs.stkrec_switch_raw) },
		{ "bpf.skipped.cpu", prog_skipped(r->skel->progs.stkrec_cpu) },
		{ "bpf.skipped.bio", prog_skipped(r->skel->progs.stkrec_rq_complete) },
		{ "bio.missed_completions", bpf_stat(r, STKREC_STAT_BIO_MISSED) },
		{ "bio.incomplete", bio_incomplete(r) },
	};
	size_t i;
	int err;

	_Static_assert(sizeof(stats) / sizeof(stats[0]) == sizeof(stat_keys) / sizeof(stat_keys[0]),
		       "every STAT key is interned up front");
	for (i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		err = write_stat(r, stats[i].key, stats[i].value);
		if (err < 0)
			return err;
	}
	return 0;
}

static int command_status(const struct recorder *r)
{
	if (!r->cmd.pid || !r->cmd.reaped)
		return -1;
	if (WIFEXITED(r->cmd.status))
		return WEXITSTATUS(r->cmd.status);
	return 128 + WTERMSIG(r->cmd.status);
}

int record__write_end(struct recorder *r, uint32_t reason, int32_t error, uint64_t now)
{
	struct cap_end e = {
		.time = now,
		.reason = reason,
		.error = reason == CAP_STOP_ERROR ? error : 0,
		.status = reason == CAP_STOP_SWITCH ? -1 : command_status(r),
	};

	return cap_writer__append(r->w, CAP_REC_END, &e, sizeof(e), NULL, 0);
}

void recorder__progress(const struct recorder *r, struct record_progress *p)
{
	int k;

	memset(p, 0, sizeof(*p));
	p->elapsed_ns = (r->end_ns ? r->end_ns : record__now()) - r->start_ns;
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
	p->command_status = command_status(r);
	p->path = r->path;
	p->files = r->files;
}

/* One pass over both sources, the side band first: an exec's or mmap's
 * MAPPING records (procmaps__ensure() stamps them) must precede the events
 * of the new image that the ringbuf holds. A yield (burst still flowing) is
 * not an error: the loop comes back after its housekeeping. */
static int drain(struct recorder *r, uint64_t budget_ns)
{
	int n;

	n = sideband__drain(r->sb, r->w, r->pm);
	if (n < 0)
		return n;
	r->next_check = record__now() + budget_ns;
	r->yielded = false;
	n = ring_buffer__consume(r->rb);
	if (n < 0 && !(n == -EAGAIN && r->yielded))
		return n;
	return 0;
}

static void report_progress(struct recorder *r)
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
	uint64_t now = record__now();

	*err = cap_writer__tick(r->w, now);
	if (!*err && now >= *next_sec) {
		*err = record__write_lost(r);
		report_progress(r);
		*next_sec = now + NSEC_PER_SEC;
	}
	if (!*err && record__switch_due(r, now))
		*err = record__switch_output(r, now);
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

int record__loop(struct recorder *r)
{
	uint64_t next_sec = record__now() + NSEC_PER_SEC;
	struct epoll_event evs[16];
	int err, timeout = POLL_MS;

	for (;;) {
		if (epoll_wait(r->epfd, evs, 16, timeout) < 0 && errno != EINTR)
			return -errno;
		err = drain(r, TICK_NS);
		if (err)
			return err;
		if (housekeeping(r, &next_sec, &err))
			return err;
		/* A yield left data behind, and the kernel side may not wake
		 * us for it (it wakes past a fill level only): no sleeping. */
		timeout = r->yielded ? 0 : POLL_MS;
	}
}

static int finish(struct recorder *r, int err)
{
	struct stat st;
	int e2;

	record__detach(r);
	if (!r->w) { /* a failed --switch-output left no file open */
		r->stop = CAP_STOP_ERROR;
		r->error = err;
		command__kill(&r->cmd);
		r->end_ns = record__now();
		report_progress(r);
		return err;
	}
	if (!err)
		err = drain(r, UINT64_MAX / 2);
	if (err) {
		r->stop = err == CAP_ERR_FULL ? CAP_STOP_MAX_SIZE : CAP_STOP_ERROR;
		r->error = err;
	}
	if (r->stop != CAP_STOP_COMMAND)
		command__kill(&r->cmd);
	r->end_ns = record__now();
	e2 = record__write_lost(r);
	if (!e2)
		e2 = record__write_stats(r, r->end_ns);
	if (!e2)
		e2 = record__write_end(r, r->stop, r->error, r->end_ns);
	if (!e2)
		e2 = cap_writer__finish(r->w);
	else
		cap_writer__free(r->w);
	r->w = NULL;
	if (!stat(r->path, &st))
		r->final_bytes = st.st_size;
	report_progress(r);
	return err == CAP_ERR_FULL ? e2 : (err ? err : e2);
}

int recorder__run(struct recorder *r)
{
	int err = 0;

	if (!r->w)
		return CAP_ERR_INVAL; /* already run */
	r->stop = CAP_STOP_SIGNAL;
	r->start_ns = record__now();
	if (r->cmd.pid) {
		err = command__release(&r->cmd);
		if (err)
			command__kill(&r->cmd);
	}
	if (!err)
		err = record__loop(r);
	return finish(r, err);
}
