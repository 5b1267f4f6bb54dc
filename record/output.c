// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Opening and closing a capture file, the one place for both: at the start,
 * at each --switch-output and at the end of recording.
 *
 * A file opens with its header and every definition it needs (the STAT
 * keys, kernel identity and modules, block devices; then the threads and
 * mappings of the /proc scan), because the interners and tables start
 * empty for it, and a packer of its own takes each record as it is
 * written. It closes with the waits still open (waits.c), LOST (the drops
 * since the last LOST), STAT (this file's numbers), its symbol pack and
 * END. With --switch-output the recording goes to FILE.<timestamp>
 * files, as perf record's, each a complete capture; a file switched from
 * gets its pack and END on a thread of its own (struct file_tail).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "stkrec.skel.h"
#include "pack/pack.h"
#include "record/blockdev.h"
#include "record/dump.h"
#include "record/recorder_int.h"

static uint64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000ull + ts->tv_nsec;
}

/* realtime = monotonic + offset, from the tightest of a few bracketed
 * readings (a preemption inside one bracket would skew it). */
static void clock_pair(uint64_t *mono, uint64_t *real, int64_t *offset)
{
	uint64_t best = UINT64_MAX;
	struct timespec a, m, b;
	int i;

	for (i = 0; i < 16; i++) {
		clock_gettime(CLOCK_REALTIME, &a);
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(CLOCK_REALTIME, &b);
		if (ts_ns(&b) - ts_ns(&a) < best) {
			best = ts_ns(&b) - ts_ns(&a);
			*mono = ts_ns(&m);
			*real = ts_ns(&a) + best / 2;
		}
	}
	*offset = (int64_t)(*real - *mono);
}

static void fill_header(const struct recorder *r, struct cap_header *h)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	h->major = CAP_VERSION_MAJOR;
	h->minor = CAP_VERSION_MINOR;
	clock_pair(&h->start_time, &h->start_realtime, &h->clock_offset);
	h->ncpus = r->ncpus_possible;
	h->page_size = sysconf(_SC_PAGESIZE);
	h->recorder_pid = getpid();
	if (!uname(&u)) {
		snprintf(h->hostname, sizeof(h->hostname), "%s", u.nodename);
		snprintf(h->release, sizeof(h->release), "%s", u.release);
		snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	}
	snprintf(h->version, sizeof(h->version), "%s", STKREC_VERSION);
	snprintf(h->cmdline, sizeof(h->cmdline), "%s", r->opts.cmdline ? r->opts.cmdline : "");
	if (r->opts.call_graph == RECORD_CG_DWARF)
		h->features |= CAP_FEAT_DWARF_UNWIND;
	if (record_wants_python(&r->opts))
		h->features |= CAP_FEAT_PYTHON;
	if (r->cg)
		h->features |= CAP_FEAT_CGROUP;
	/* the CPU time a sample stands for, as the perf event was opened */
	if (r->opts.events & RECORD_EV_CPU) {
		h->sample_clock = CAP_CLOCK_CPU;
		h->sample_flags = r->opts.period ? 0 : CAP_SAMPLE_FREQ;
		h->sample_rate = r->opts.period ? r->opts.period : r->opts.freq;
	}
}

/* FILE.YYYYmmddHHMMSSmmm (local time, as perf names them); a second file
 * within the same millisecond gets a -N suffix rather than replacing it. */
static int set_path(struct recorder *r)
{
	char stamp[32], prev[sizeof(r->path)];
	struct timespec ts;
	struct tm tm;
	int n;

	if (!r->opts.switch_ns && !r->opts.switch_bytes && !r->fl) {
		n = snprintf(r->path, sizeof(r->path), "%s", r->opts.output);
		return n < (int)sizeof(r->path) ? 0 : -ENAMETOOLONG;
	}
	memcpy(prev, r->path, sizeof(prev));
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!localtime_r(&ts.tv_sec, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm))
		return -EOVERFLOW;
	n = snprintf(r->path, sizeof(r->path), "%s.%s%03ld", r->opts.output, stamp,
		     ts.tv_nsec / 1000000);
	if (n >= (int)sizeof(r->path) - 16)
		return -ENAMETOOLONG;
	if (!strncmp(prev, r->path, n) && (prev[n] == 0 || prev[n] == '-'))
		snprintf(r->path + n, sizeof(r->path) - n, "-%u", r->files);
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

/* Completions whose submitter stacks user space no longer held (a file
 * switch in between, or a submission's slot reused): both stacks missed. */
static int write_bio_stacks_missed(struct recorder *r)
{
	struct cap_lost l = { .cpu = 0xffffffffu, .kind = CAP_KIND_BIO };
	int err;

	if (r->bio_stacks_missed <= r->bio_stacks_missed_seen)
		return 0;
	l.count = r->bio_stacks_missed - r->bio_stacks_missed_seen;
	for (l.reason = CAP_LOST_USTACK; l.reason <= CAP_LOST_KSTACK; l.reason++) {
		err = cap_writer__append(r->w, CAP_REC_LOST, &l, sizeof(l), NULL, 0);
		if (err < 0)
			return err;
	}
	r->bio_stacks_missed_seen = r->bio_stacks_missed;
	return 0;
}

int recorder__write_lost(struct recorder *r)
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
	return write_bio_stacks_missed(r);
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
static int intern_stat_keys(struct recorder *r)
{
	const char *key;
	uint32_t id;
	int k, err;

	for (k = 0; (key = cap_stat_key_name(k)); k++) {
		err = intern__string(r->in, key, strlen(key), &id);
		if (err)
			return err;
	}
	for (k = 0; r->jm && (key = cap_jit_refusal_key(k)); k++) {
		err = intern__string(r->in, key, strlen(key), &id);
		if (err)
			return err;
	}
	return 0;
}

/* Each JIT map refused for this file: which process, why (§4.15). */
static int write_refused(struct recorder *r)
{
	const struct jit_refused *j;
	size_t i;
	int err = 0;

	for (i = 0; !err && (j = jitmaps__refused(r->jm, i)); i++)
		err = write_stat(r, cap_jit_refusal_key(j->why), j->pid);
	jitmaps__clear_refused(r->jm);
	return err;
}

/* The py.* keys (FORMAT.md §4.15), with Python frames only. */
static int write_py_stats(struct recorder *r)
{
	struct pytrack_stats ps;
	uint64_t v[CAP_STAT_MAX] = { 0 };
	int k, err;

	if (!r->py)
		return 0;
	pytrack__stats(r->py, &ps);
	v[CAP_STAT_PY_PROCESSES] = ps.processes;
	v[CAP_STAT_PY_UNSUPPORTED] = ps.unsupported;
	v[CAP_STAT_PY_CODES_UNREAD] = ps.code_unread;
	v[CAP_STAT_PY_CUT_OFFCPU] = bpf_stat(r, STKREC_STAT_PY_CUT + STKREC_KIND_OFFCPU);
	v[CAP_STAT_PY_CUT_CPU] = bpf_stat(r, STKREC_STAT_PY_CUT + STKREC_KIND_CPU);
	v[CAP_STAT_PY_CUT_BIO] = bpf_stat(r, STKREC_STAT_PY_CUT + STKREC_KIND_BIO);
	v[CAP_STAT_PY_CUT_WAKEUP] = bpf_stat(r, STKREC_STAT_PY_CUT + STKREC_KIND_WAKEUP);
	v[CAP_STAT_PY_TOO_DEEP] = ps.merged_cut;
	for (k = CAP_STAT_PY_PROCESSES; k <= CAP_STAT_PY_TOO_DEEP; k++) {
		err = write_stat(r, cap_stat_key_name(k), v[k]);
		if (err < 0)
			return err;
	}
	return 0;
}

/* The cgroup.* keys (FORMAT.md §4.15), with cgroup ids only. */
static int write_cgroup_stats(struct recorder *r)
{
	const uint64_t v[] = {
		r->cgroup_filtered[STKREC_KIND_OFFCPU],
		r->cgroup_filtered[STKREC_KIND_CPU],
		r->cgroup_filtered[STKREC_KIND_WAKEUP],
		cgroups__unnamed(r->cg),
	};
	size_t i;
	int err;

	if (!r->cg)
		return 0;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		err = write_stat(r, cap_stat_key_name(CAP_STAT_CGROUP_FILTERED_OFFCPU + i), v[i]);
		if (err < 0)
			return err;
	}
	return 0;
}

/* This file's numbers (FORMAT.md §4.15): events since it began, its own
 * tables. */
static struct unwind_stats unwind_numbers(const struct recorder *r)
{
	struct unwind_stats us = {};

	if (r->uw)
		unwind__stats(r->uw, &us);
	return us;
}

/* -G's counts so far, for the summary and the cgroup.* keys. */
static void cgroup_counts(struct recorder *r)
{
	static const int kinds[] = { STKREC_KIND_OFFCPU, STKREC_KIND_CPU, STKREC_KIND_WAKEUP };
	size_t i;

	if (!r->opts.nr_cgroups)
		return;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		r->cgroup_filtered[kinds[i]] = bpf_stat(r, STKREC_STAT_CGROUP_FILTERED + kinds[i]);
	r->cgroup_filtered[STKREC_KIND_BIO] = bpf_stat(r, STKREC_STAT_BIO_FILTERED);
}

static int write_stats(struct recorder *r, uint64_t now)
{
	const struct cap_totals *t = cap_writer__totals(r->w);
	const struct unwind_stats us = unwind_numbers(r);
	const uint64_t v[CAP_STAT_MAX] = {
		[CAP_STAT_EVENTS_OFFCPU] = r->events[CAP_KIND_OFFCPU] - r->events_base[CAP_KIND_OFFCPU],
		[CAP_STAT_EVENTS_CPU] = r->events[CAP_KIND_CPU] - r->events_base[CAP_KIND_CPU],
		[CAP_STAT_EVENTS_BIO] = r->events[CAP_KIND_BIO] - r->events_base[CAP_KIND_BIO],
		[CAP_STAT_STACKS] = intern__nr_stacks(r->in),
		[CAP_STAT_STRINGS] = intern__nr_strings(r->in),
		[CAP_STAT_THREADS] = r->threads.tab.nr,
		[CAP_STAT_RINGBUF_SIZE] = r->opts.ringbuf_size,
		[CAP_STAT_BAD_RINGBUF_RECORDS] = r->bad_records,
		[CAP_STAT_MAPS_UNREADABLE] = r->maps_missed,
		[CAP_STAT_SIDEBAND_LOST] = r->sb ? sideband__lost(r->sb) : 0,
		[CAP_STAT_BIO_UNSEEN] = bpf_stat(r, STKREC_STAT_BIO_UNSEEN),
		[CAP_STAT_BIO_FILTERED] = bpf_stat(r, STKREC_STAT_BIO_FILTERED),
		[CAP_STAT_DURATION_NS] = now - r->file_start_ns,
		[CAP_STAT_BYTES_RAW] = t->bytes_raw, /* before these last records */
		[CAP_STAT_SKIPPED_OFFCPU] = prog_skipped(r->skel->progs.stkrec_switch) +
					    prog_skipped(r->skel->progs.stkrec_switch_raw),
		[CAP_STAT_SKIPPED_CPU] = prog_skipped(r->skel->progs.stkrec_cpu),
		[CAP_STAT_SKIPPED_BIO] = prog_skipped(r->skel->progs.stkrec_rq_complete),
		[CAP_STAT_BIO_MISSED] = bpf_stat(r, STKREC_STAT_BIO_MISSED),
		[CAP_STAT_BIO_INCOMPLETE] = bio_incomplete(r),
		[CAP_STAT_UNWIND_TRUNC_OFFCPU] =
			bpf_stat(r, STKREC_STAT_UNWIND_TRUNCATED + STKREC_KIND_OFFCPU),
		[CAP_STAT_UNWIND_TRUNC_CPU] =
			bpf_stat(r, STKREC_STAT_UNWIND_TRUNCATED + STKREC_KIND_CPU),
		[CAP_STAT_UNWIND_TRUNC_BIO] =
			bpf_stat(r, STKREC_STAT_UNWIND_TRUNCATED + STKREC_KIND_BIO),
		[CAP_STAT_UNWIND_NO_TABLES_OFFCPU] =
			bpf_stat(r, STKREC_STAT_UNWIND_NO_TABLES + STKREC_KIND_OFFCPU),
		[CAP_STAT_UNWIND_NO_TABLES_CPU] =
			bpf_stat(r, STKREC_STAT_UNWIND_NO_TABLES + STKREC_KIND_CPU),
		[CAP_STAT_UNWIND_NO_TABLES_BIO] =
			bpf_stat(r, STKREC_STAT_UNWIND_NO_TABLES + STKREC_KIND_BIO),
		[CAP_STAT_UNWIND_FP_FRAMES_OFFCPU] =
			bpf_stat(r, STKREC_STAT_UNWIND_FP_FRAMES + STKREC_KIND_OFFCPU),
		[CAP_STAT_UNWIND_FP_FRAMES_CPU] =
			bpf_stat(r, STKREC_STAT_UNWIND_FP_FRAMES + STKREC_KIND_CPU),
		[CAP_STAT_UNWIND_FP_FRAMES_BIO] =
			bpf_stat(r, STKREC_STAT_UNWIND_FP_FRAMES + STKREC_KIND_BIO),
		[CAP_STAT_UNWIND_FILES] = us.files,
		[CAP_STAT_UNWIND_FILES_FAILED] = us.files_failed,
		[CAP_STAT_UNWIND_ROWS] = us.rows,
		[CAP_STAT_UNWIND_FULL] = us.full,
		[CAP_STAT_UNWIND_MAPS_DROPPED] = us.maps_dropped,
		[CAP_STAT_EVENTS_WAKEUP] =
			r->events[CAP_KIND_WAKEUP] - r->events_base[CAP_KIND_WAKEUP],
		[CAP_STAT_SKIPPED_WAKEUP] = prog_skipped(r->skel->progs.stkrec_waking) +
					    prog_skipped(r->skel->progs.stkrec_waking_raw),
		[CAP_STAT_UNWIND_TRUNC_WAKEUP] =
			bpf_stat(r, STKREC_STAT_UNWIND_TRUNCATED + STKREC_KIND_WAKEUP),
		[CAP_STAT_UNWIND_NO_TABLES_WAKEUP] =
			bpf_stat(r, STKREC_STAT_UNWIND_NO_TABLES + STKREC_KIND_WAKEUP),
		[CAP_STAT_UNWIND_FP_FRAMES_WAKEUP] =
			bpf_stat(r, STKREC_STAT_UNWIND_FP_FRAMES + STKREC_KIND_WAKEUP),
		[CAP_STAT_JIT_MAPS_REFUSED] = jitmaps__nr_refused(r->jm),
	};
	int k, err;

	cgroup_counts(r);
	for (k = 0; k < CAP_STAT_PY_PROCESSES; k++) {
		err = write_stat(r, cap_stat_key_name(k), v[k]);
		if (err < 0)
			return err;
	}
	err = write_refused(r);
	err = err ?: write_py_stats(r) ?: write_cgroup_stats(r);
	if (err)
		return err;
	r->untraced = bpf_stat(r, STKREC_STAT_UNTRACED_IN);
	r->recovered = bpf_stat(r, STKREC_STAT_RECOVERED_IN);
	r->untraced_wake = bpf_stat(r, STKREC_STAT_UNTRACED_WAKE);
	r->ucache_wrong = bpf_stat(r, STKREC_STAT_UCACHE_WRONG);
	r->kcache_wrong = bpf_stat(r, STKREC_STAT_KCACHE_WRONG);
	return write_stat(r, cap_stat_key_name(CAP_STAT_UNTRACED_OFFCPU), r->untraced) ?:
	       write_stat(r, cap_stat_key_name(CAP_STAT_RECOVERED_OFFCPU), r->recovered) ?:
	       write_stat(r, cap_stat_key_name(CAP_STAT_UNWIND_CACHED_OFFCPU),
			  bpf_stat(r, STKREC_STAT_UNWIND_CACHED + STKREC_KIND_OFFCPU)) ?:
	       write_stat(r, cap_stat_key_name(CAP_STAT_UNWIND_CACHED_WAKEUP),
			  bpf_stat(r, STKREC_STAT_UNWIND_CACHED + STKREC_KIND_WAKEUP)) ?:
	       write_stat(r, cap_stat_key_name(CAP_STAT_KSTACK_CACHED_OFFCPU),
			  bpf_stat(r, STKREC_STAT_KSTACK_CACHED + STKREC_KIND_OFFCPU)) ?:
	       write_stat(r, cap_stat_key_name(CAP_STAT_KSTACK_CACHED_WAKEUP),
			  bpf_stat(r, STKREC_STAT_KSTACK_CACHED + STKREC_KIND_WAKEUP)) ?:
	       write_stat(r, cap_stat_key_name(CAP_STAT_UNTRACED_WAKEUP), r->untraced_wake);
}

static int write_defs(struct recorder *r, const char **step)
{
	int err;

	*step = "intern";
	err = intern__new(r->w, &r->in);
	if (!err && r->fl) /* a flight recorder's segments share one id space */
		err = intern__set_bases(r->in, &r->ids);
	if (err)
		return err;
	err = intern_stat_keys(r);
	if (err)
		return err;
	r->sink = (struct ksyms_sink){ .ks = r->ks, .w = r->w, .in = r->in };
	intern__set_kstack_hook(r->in, ksyms__kstack_hook, &r->sink);
	*step = "write kernel identity";
	err = ksyms__write_kernel(r->ks, r->w, r->in);
	if (err < 0)
		return err;
	*step = "write block devices";
	err = blockdev__write_all(r->w, "/sys");
	return err < 0 ? err : 0;
}

/* A memfd for a flight recorder's next segment: the writer's to own, a dup
 * of it in r->seg_fd for flight.c to keep once the segment is closed. */
static int segment_fd(struct recorder *r)
{
	int fd = memfd_create("stkrec-segment", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (r->seg_fd >= 0)
		close(r->seg_fd);
	r->seg_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r->seg_fd < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* What the pack needs of a record: a failure is the pack's, which
 * pack__write() returns. */
static void tap_pack(void *ctx, uint16_t type, const void *fixed, size_t fixed_len,
		     const void *tail, size_t tail_len)
{
	pack__feed(ctx, type, fixed, fixed_len, tail, tail_len);
}

/* The file's packer, fed every record the writer takes from the first on:
 * at the close it knows the user stacks, mappings and (process, stack)
 * pairs of the file without reading it back. A flight recorder's segments
 * have none (a dump packs what it merged). */
static int open_pack(struct recorder *r, const char **step)
{
	const struct pack_opts o = { 0 }; /* its JIT maps: at the close */
	int err;

	if (r->opts.no_pack || r->fl)
		return 0;
	*step = "symbol pack";
	err = pack__new(&o, &r->pk);
	if (!err)
		cap_writer__set_tap(r->w, tap_pack, r->pk);
	return err;
}

/* A file given up on: what it holds is readable as it is. */
static void drop_file(struct recorder *r)
{
	cap_writer__free(r->w);
	r->w = NULL;
	pack__free(r->pk);
	r->pk = NULL;
}

/* A new file: its header, then every definition it needs but the /proc
 * scan (recorder__scan_proc(), once the side band is open). */
int recorder__open_output(struct recorder *r, const char **step)
{
	/* a --switch-output name is stkrec's: it must be new (perf's rule) */
	struct cap_writer_opts wo = { .max_size = r->opts.max_size,
				      .exclusive = r->opts.switch_ns || r->opts.switch_bytes };
	struct cap_header h;
	int err;

	*step = "open output";
	err = r->fl ? 0 : set_path(r);
	if (err)
		return err;
	fill_header(r, &h);
	if (r->fl) { /* a flight recorder's segment, in memory */
		err = segment_fd(r);
		r->files += err >= 0;
		err = err < 0 ? err : cap_writer__fdopen(err, &h, &wo, &r->w);
	} else if (r->opts.output_fd >= 0) {
		/* the writer owns the fd now, even when it fails */
		r->files++;
		err = cap_writer__fdopen(r->opts.output_fd, &h, &wo, &r->w);
	} else {
		err = cap_writer__open(r->path, &h, &wo, &r->w);
		r->files += !err;
	}
	if (err)
		return err;
	r->file_start_ns = h.start_time;
	r->switch_from_ns = h.start_time;
	memcpy(r->events_base, r->events, sizeof(r->events_base));
	err = open_pack(r, step);
	if (!err)
		err = write_defs(r, step);
	if (!err)
		err = threads__init(&r->threads);
	return err;
}

/* A process of the recorded scope (-p, a command and its children; any
 * process when the recording is system-wide). */
static bool sink_traced(const struct recorder *r, uint32_t pid)
{
	uint8_t v;

	return !r->skel->rodata->filter_tgid ||
	       !bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.tgids), &pid, &v);
}

/* The threads and mappings of every process, as MAPPING and THREAD
 * records, and the table that keeps them current from then on: the
 * unwinder's tables and the Python tracker follow it for the processes of
 * the scope, and an exiting process's JIT map is read. */
static int sink_map(void *ctx, const struct cap_mapping *m, int fd, const char *path)
{
	struct recorder *r = ctx;
	int err;

	if (!sink_traced(r, m->pid))
		return 0;
	err = r->uw ? unwind__map(r->uw, m->pid, m, fd) : 0;
	return err ?: r->py ? pytrack__map(r->py, m->pid, m, fd, path) : 0;
}

static void sink_gone(void *ctx, uint32_t pid)
{
	struct recorder *r = ctx;

	if (r->uw)
		unwind__forget(r->uw, pid);
	if (r->py)
		pytrack__forget(r->py, pid);
}

static int sink_fork(void *ctx, uint32_t parent, uint32_t child)
{
	struct recorder *r = ctx;
	int err;

	if (!sink_traced(r, child))
		return 0;
	err = r->uw ? unwind__fork(r->uw, parent, child) : 0;
	return err ?: r->py ? pytrack__fork(r->py, parent, child) : 0;
}

/* Before the map can be deleted by the runtime's exit handling or a
 * cleanup of /tmp; a map too large to keep is counted by jitmaps. */
static void sink_exit(void *ctx, uint32_t pid)
{
	struct recorder *r = ctx;

	if (jitroots__read(r->jr, r->jm, pid, now_ns()) == -ENOENT)
		jitmaps__read(r->jm, NULL, pid, now_ns());
}

/* At a new file's scan the unwinder and the Python tracker know every
 * mapping already (the last file's table kept them current): the scan
 * writes the records, and the sink follows the changes from then on. */
int recorder__scan_proc(struct recorder *r, uint64_t now)
{
	struct procmaps_sink sink = {
		.map = r->uw || r->py ? sink_map : NULL,
		.gone = r->uw || r->py ? sink_gone : NULL,
		.fork = r->uw || r->py ? sink_fork : NULL,
		.exit = r->jm ? sink_exit : NULL, .ctx = r,
	};
	bool first = r->files == 1;
	int err = procmaps__new(r->w, r->in, &r->pm);

	if (!err && first && (r->uw || r->py || r->jm))
		procmaps__set_sink(r->pm, &sink);
	if (!err)
		err = procmaps__scan_all(r->pm, now);
	if (!err && !first && (r->uw || r->py || r->jm))
		procmaps__set_sink(r->pm, &sink);
	return err < 0 ? err : 0;
}

/*
 * The end of a file: its symbol pack (FORMAT.md §4.18), named from what
 * the file's packer took of each record as it was written (the file is
 * not read back: the pack's time and memory grow with the file's distinct
 * stacks and mappings, not with its events), then END. At a
 * --switch-output this runs on a thread of its own while the drain goes on
 * into the next file: the pack opens every binary the file's stacks hit,
 * 0.3 s on a quiet host and seconds beside a load, and a drain stopped
 * that long lets the ring buffer overflow. The tail owns the old file's
 * writer, its interner, its packer and its JIT maps; nothing else touches
 * them until it is joined. One tail at a time: the next switch waits for
 * it (a pack slower than the period stops the drain then, and what
 * overflows is counted lost), so that the files stay as large or as long
 * as --switch-output says and memory holds one file's tables more, not a
 * queue of them. The tail runs niced; once the drain waits for it, it
 * runs at the drain's priority (boost()), else a host's load kept it from
 * the CPU for as long as the drain waited: a 3.5 s recording at
 * --switch-output 1s beside 4 CPU hogs took 10 s, its packs 7.4 s.
 */
#define TAIL_NICE 10

struct file_tail {
	struct cap_writer *w;
	struct intern *in;
	struct jitmaps *jm;       /* NULL: --no-pack */
	struct packer *pk;        /* the file's, fed; NULL: --no-pack */
	struct cap_end end;
	uint64_t now;             /* JIT maps read now are this recent */
	pthread_t thread;
	int nice;                 /* the drain's, when it waits (boost()) */
	int tid;                  /* the thread's; atomic, 0 until it runs */
	bool boosted;             /* atomic: the drain waits for it */
	/* out, read once joined */
	struct cap_pack_info pack;
	uint64_t pack_ns, final_bytes;
	int pack_err, err;
};

/* A pack that fails costs the pack, not the file (t->pack_err says). */
static void tail_pack(struct file_tail *t)
{
	uint64_t t0 = now_ns();

	pack__set_jit(t->pk, t->jm, t->now);
	t->pack_err = pack__write(t->pk, t->w, t->in, &t->pack);
	t->pack_ns = now_ns() - t0;
}

/* The file is closed (t->w NULL) whatever happens: a failed write leaves
 * what the file holds readable. */
static void tail_finish(struct file_tail *t)
{
	int err;

	cap_writer__set_tap(t->w, NULL, NULL); /* the pack is not the packer's */
	/* the pack in blocks of its own: damage to it costs no event */
	err = cap_writer__flush(t->w);
	if (!err && t->pk)
		tail_pack(t);
	pack__free(t->pk);
	t->pk = NULL;
	if (!err)
		err = cap_writer__append(t->w, CAP_REC_END, &t->end, sizeof(t->end), NULL, 0);
	t->final_bytes = cap_writer__file_size(t->w);
	if (!err)
		err = cap_writer__finish_size(t->w, &t->final_bytes);
	else
		cap_writer__free(t->w);
	t->w = NULL;
	t->err = err;
}

/* Niced: on a busy host the drain, not the pack, gets the CPU first,
 * until the drain waits for it. The boost is checked after the nice, so
 * that a boost() that came before it is not undone. */
static void *tail_thread(void *arg)
{
	struct file_tail *t = arg;
	int tid = (int)syscall(SYS_gettid);

	__atomic_store_n(&t->tid, tid, __ATOMIC_SEQ_CST);
	setpriority(PRIO_PROCESS, (id_t)tid, TAIL_NICE);
	if (__atomic_load_n(&t->boosted, __ATOMIC_SEQ_CST))
		setpriority(PRIO_PROCESS, (id_t)tid, t->nice);
	tail_finish(t);
	return NULL;
}

/* The drain is about to wait for t: t runs at its priority from now on
 * (best effort: without CAP_SYS_NICE it stays niced). */
static void boost(struct file_tail *t)
{
	int tid;

	__atomic_store_n(&t->boosted, true, __ATOMIC_SEQ_CST);
	tid = __atomic_load_n(&t->tid, __ATOMIC_SEQ_CST);
	if (tid)
		setpriority(PRIO_PROCESS, (id_t)tid, t->nice);
}

/* What a finished tail tells the recorder; frees what it owned. */
static int tail_done(struct recorder *r, struct file_tail *t, bool own)
{
	int err = t->err;

	if (t->jm) {
		r->pack = t->pack;
		r->pack_ns += t->pack_ns;
		r->packs += !t->pack_err;
		r->pack_err = t->pack_err;
	}
	r->final_bytes = t->final_bytes;
	if (own) {
		jitmaps__free(t->jm);
		intern__free(t->in);
		free(t);
	}
	return err;
}

int recorder__join_tail(struct recorder *r)
{
	struct file_tail *t = r->tail;

	if (!t)
		return 0;
	r->tail = NULL;
	boost(t);
	pthread_join(t->thread, NULL);
	return tail_done(r, t, true);
}

/* The waits still open, LOST and STAT: what only the recorder knows. */
static int close_head(struct recorder *r, uint64_t now)
{
	int err = recorder__write_open_waits(r, now);

	if (!err)
		err = recorder__write_lost(r);
	if (!err)
		err = write_stats(r, now);
	return err;
}

static void end_of(const struct recorder *r, uint32_t reason, int32_t error, uint64_t now,
		   struct cap_end *e)
{
	*e = (struct cap_end){
		.time = now,
		.reason = reason,
		.error = reason == CAP_STOP_ERROR ? error : 0,
		.status = reason == CAP_STOP_SWITCH ? -1 : command__status(&r->cmd),
	};
}

int recorder__close_output(struct recorder *r, uint32_t reason, int32_t error, uint64_t now)
{
	struct file_tail t = { .w = r->w, .in = r->in, .jm = r->jm, .pk = r->pk, .now = now };
	int err = recorder__join_tail(r), e2 = close_head(r, now);

	end_of(r, reason, error, now, &t.end);
	memset(&r->pack, 0, sizeof(r->pack));
	if (e2) {
		drop_file(r);
		t.w = NULL;
		t.pk = NULL;
		t.err = e2;
	} else {
		tail_finish(&t);
	}
	r->w = NULL;
	r->pk = NULL;
	if (r->jm)
		jitmaps__clear(r->jm);
	e2 = tail_done(r, &t, false);
	return err ? err : e2;
}

/* The current file handed to a tail thread, to finish beside the drain:
 * the recorder goes on with a new interner and new JIT maps. Without the
 * memory for that, the file finishes here. */
static int close_async(struct recorder *r, uint64_t now)
{
	struct file_tail *t = calloc(1, sizeof(*t));
	struct jitmaps *jm = NULL;
	int err;

	if (!t || (r->jm && jitmaps__new(&jm))) {
		free(t);
		return recorder__close_output(r, CAP_STOP_SWITCH, 0, now);
	}
	err = recorder__join_tail(r);
	if (!err)
		err = close_head(r, now);
	if (err) {
		drop_file(r);
		jitmaps__free(jm);
		free(t);
		return err;
	}
	*t = (struct file_tail){ .w = r->w, .in = r->in, .jm = r->jm, .pk = r->pk, .now = now };
	errno = 0;
	t->nice = getpriority(PRIO_PROCESS, 0); /* this thread's */
	if (errno)
		t->nice = 0;
	end_of(r, CAP_STOP_SWITCH, 0, now, &t->end);
	r->w = NULL;
	r->pk = NULL;
	r->in = NULL;
	r->jm = t->jm ? jm : NULL;
	if (pthread_create(&t->thread, NULL, tail_thread, t)) {
		tail_finish(t); /* no thread: finish it here */
		return tail_done(r, t, true);
	}
	pthread_setname_np(t->thread, "stkrec-tail"); /* as top -H and tests see it */
	r->tail = t;
	return 0;
}

bool recorder__switch_due(const struct recorder *r, uint64_t now)
{
	if (r->opts.switch_ns && now - r->switch_from_ns >= r->opts.switch_ns)
		return true;
	return r->opts.switch_bytes && cap_writer__file_size(r->w) >= r->opts.switch_bytes;
}

/* Drop what the old file defined: each table starts empty for the new one. */
static void forget_defs(struct recorder *r)
{
	procmaps__free(r->pm);
	r->pm = NULL;
	intern__free(r->in);
	r->in = NULL;
	threads__free(&r->threads);
	ksyms__new_file(r->ks);
	pytrack__new_file(r->py);
}

int recorder__switch_output(struct recorder *r, uint64_t now)
{
	return recorder__open_next(r, now, close_async(r, now));
}

int recorder__open_next(struct recorder *r, uint64_t now, int err)
{
	const char *step;

	forget_defs(r);
	if (!err)
		err = recorder__open_output(r, &step);
	if (!err)
		err = recorder__scan_proc(r, now);
	if (err && r->w) /* half a file */
		drop_file(r);
	return err;
}

/*
 * A flight recorder's segment ends: the waits still open, LOST, STAT and
 * END, no pack (a dump has its own); *size its bytes, in r->seg_fd. The
 * ids it gave out are where the next segment's start.
 */
int recorder__close_segment(struct recorder *r, uint64_t now, uint64_t *size)
{
	struct cap_end end;
	int err;

	*size = 0;
	if (!r->w)
		return 0;
	err = close_head(r, now); /* its open waits may intern stacks */
	intern__last_ids(r->in, &r->ids);
	end_of(r, CAP_STOP_SWITCH, 0, now, &end);
	if (!err)
		err = cap_writer__append(r->w, CAP_REC_END, &end, sizeof(end), NULL, 0);
	if (!err)
		err = cap_writer__finish_size(r->w, size);
	else
		cap_writer__free(r->w);
	r->w = NULL;
	return err;
}

/* A dump's name, FILE.<timestamp> as --switch-output's, and its header:
 * the recording's, from the window's start. */
int recorder__dump_header(struct recorder *r, struct dump_job *j, uint64_t window_start)
{
	int err = set_path(r);

	if (err)
		return err;
	snprintf(j->path, sizeof(j->path), "%s", r->path);
	fill_header(r, &j->hdr);
	j->hdr.start_realtime = (uint64_t)((int64_t)window_start + j->hdr.clock_offset);
	j->hdr.start_time = window_start;
	return 0;
}
