// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The perf side band: a PERF_COUNT_SW_DUMMY event on every CPU for all
 * tasks, which samples nothing but makes the kernel emit MMAP2 (executable
 * mappings, with the file's build ID when it can), COMM (exec and renames),
 * FORK and EXIT records into a ring per CPU. Each record ends with a
 * sample_id (PERF_SAMPLE_TID | PERF_SAMPLE_TIME), timed with CLOCK_MONOTONIC:
 * perf's clock for CLOCK_MONOTONIC is ktime_get_mono_fast_ns(), which is
 * what bpf_ktime_get_ns() returns, so both streams share one time line.
 *
 * Each drain merges the per-CPU rings by time, so the capture holds the
 * side band in time order (up to records the kernel writes while a drain
 * runs, which the next drain picks up).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/sideband.h"
#include "record/threads.h"

#define SB_MAX_RECORD 65536 /* perf_event_header.size is 16 bits */

struct sb_ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t mask;
	int cpu;
	/* drain state: [tail, head) is being read, cur is the next record */
	uint64_t head, tail;
	const struct perf_event_header *cur;
	uint64_t cur_time;
	uint8_t *scratch; /* a record wrapping the end, allocated on first use */
};

struct sideband {
	struct sb_ring *rings;
	int *fds;
	int nr;
	size_t mmap_len;
	uint64_t lost;
	bool build_id; /* kernel puts build IDs in MMAP2 (Linux 5.12+) */
	bool eager;    /* SIDEBAND_EAGER */
};

/* Trailing sample_id with sample_type PERF_SAMPLE_TID | PERF_SAMPLE_TIME. */
struct sb_sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

struct sb_mmap2 {
	struct perf_event_header hdr;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct sb_comm {
	struct perf_event_header hdr;
	uint32_t pid, tid;
	char comm[];
};

struct sb_task {
	struct perf_event_header hdr;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct sb_lost {
	struct perf_event_header hdr;
	uint64_t id, lost;
};

static void sb_attr(struct perf_event_attr *a, unsigned pages, bool build_id, bool eager)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->sample_id_all = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->build_id = build_id;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* wake a poller when a quarter of the ring is used, not per record;
	 * eager: at any record (the unwinder waits for new mappings;
	 * wakeup_events would count samples only, which this event has none of) */
	a->watermark = 1;
	a->wakeup_watermark = eager ? 1 : pages * (unsigned)sysconf(_SC_PAGESIZE) / 4;
}

static int sb_open_cpu(struct sideband *sb, int cpu, unsigned pages)
{
	struct perf_event_attr attr;
	int fd;

	sb_attr(&attr, pages, sb->build_id, sb->eager);
	fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && sb->build_id) {
		/* kernels before 5.12 reject attr.build_id */
		sb->build_id = false;
		sb_attr(&attr, pages, false, sb->eager);
		fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
				  PERF_FLAG_FD_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

static int sb_map(struct sideband *sb, int i, int cpu, unsigned pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct sb_ring *r = &sb->rings[i];
	void *base;

	base = mmap(NULL, sb->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, sb->fds[i], 0);
	if (base == MAP_FAILED)
		return -errno;
	r->meta = base;
	r->data = (uint8_t *)base + psz;
	r->mask = (uint64_t)pages * (uint64_t)psz - 1;
	r->cpu = cpu;
	/* Linux 4.1+ says where the data area is; older ones: the next page */
	if (r->meta->data_size) {
		if (r->meta->data_size != r->mask + 1 ||
		    r->meta->data_offset + r->meta->data_size > sb->mmap_len)
			return -EPROTO;
		r->data = (uint8_t *)base + r->meta->data_offset;
	}
	return 0;
}

int sideband__open(const int *cpus, int ncpus, unsigned pages, unsigned flags,
		   struct sideband **out)
{
	struct sideband *sb;
	int i, err = 0;

	*out = NULL;
	if (ncpus <= 0 || !pages || (pages & (pages - 1)) || pages > (1u << 16))
		return CAP_ERR_INVAL;
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	sb->rings = calloc((size_t)ncpus, sizeof(*sb->rings));
	sb->fds = malloc((size_t)ncpus * sizeof(*sb->fds));
	if (!sb->rings || !sb->fds) {
		sideband__free(sb);
		return -ENOMEM;
	}
	sb->build_id = true;
	sb->eager = flags & SIDEBAND_EAGER;
	sb->mmap_len = (size_t)(pages + 1) * (size_t)sysconf(_SC_PAGESIZE);
	for (i = 0; i < ncpus && !err; i++) {
		err = sb_open_cpu(sb, cpus[i], pages);
		if (err < 0)
			break;
		sb->fds[i] = err;
		sb->nr = i + 1;
		err = sb_map(sb, i, cpus[i], pages);
	}
	if (err < 0) {
		sideband__free(sb);
		return err;
	}
	*out = sb;
	return 0;
}

void sideband__free(struct sideband *sb)
{
	int i;

	if (!sb)
		return;
	for (i = 0; i < sb->nr; i++) {
		if (sb->rings[i].meta)
			munmap(sb->rings[i].meta, sb->mmap_len);
		free(sb->rings[i].scratch);
		close(sb->fds[i]);
	}
	free(sb->rings);
	free(sb->fds);
	free(sb);
}

int sideband__fds(const struct sideband *sb, const int **fds)
{
	*fds = sb->fds;
	return sb->nr;
}

uint64_t sideband__lost(const struct sideband *sb)
{
	return sb->lost;
}

/* Time from the trailing sample_id; the caller checked the size. */
static uint64_t rec_time(const struct perf_event_header *h)
{
	struct sb_sample_id sid;

	memcpy(&sid, (const uint8_t *)h + h->size - sizeof(sid), sizeof(sid));
	return sid.time;
}

/* Bytes between the fixed part of a record and its sample_id, or -1. */
static ssize_t rec_var_len(const struct perf_event_header *h, size_t fixed)
{
	if (h->size < fixed + sizeof(struct sb_sample_id))
		return -1;
	return (ssize_t)(h->size - fixed - sizeof(struct sb_sample_id));
}

static int on_mmap2(const struct perf_event_header *h, struct procmaps *pm)
{
	const struct sb_mmap2 *r = (const void *)h;
	struct cap_mapping m = { .flags = CAP_MAP_FROM_SIDEBAND };
	ssize_t n = rec_var_len(h, sizeof(*r));

	if (n <= 0 || strnlen(r->filename, (size_t)n) == (size_t)n)
		return 0; /* malformed: no NUL-terminated file name */
	if (!(r->prot & PROT_EXEC))
		return 0;
	m.time = rec_time(h);
	m.start = r->addr;
	m.end = r->addr + r->len;
	m.pgoff = r->pgoff;
	m.pid = r->pid;
	if ((h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && r->build_id_size &&
	    r->build_id_size <= sizeof(m.build_id)) {
		m.build_id_size = r->build_id_size;
		memcpy(m.build_id, r->build_id, r->build_id_size);
	}
	return procmaps__add(pm, &m, r->filename);
}

static int on_comm(const struct perf_event_header *h, struct cap_writer *w,
		   struct procmaps *pm)
{
	const struct sb_comm *r = (const void *)h;
	struct cap_thread t = {};
	ssize_t n = rec_var_len(h, sizeof(*r));

	if (n <= 0)
		return 0;
	t.time = rec_time(h);
	t.tid = r->tid;
	t.pid = r->pid;
	memcpy(t.comm, r->comm, strnlen(r->comm, (size_t)n < sizeof(t.comm) - 1 ?
					  (size_t)n : sizeof(t.comm) - 1));
	threads__ns_ids(t.tid, &t.ns_tid, &t.ns_pid); /* 0 when gone */
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
		t.flags |= CAP_THREAD_EXEC;
		procmaps__exec(pm, r->pid, t.time);
	}
	return cap_writer__append(w, CAP_REC_THREAD, &t, sizeof(t), NULL, 0);
}

static int on_task(const struct perf_event_header *h, struct cap_writer *w,
		   struct procmaps *pm)
{
	const struct sb_task *r = (const void *)h;
	struct cap_fork f = {};

	if (rec_var_len(h, sizeof(*r)) < 0)
		return 0;
	if (h->type == PERF_RECORD_EXIT) {
		if (r->pid == r->tid)
			procmaps__forget(pm, r->pid);
		return 0;
	}
	if (r->pid != r->ppid) {
		int err = procmaps__fork(pm, r->ppid, r->pid);

		if (err < 0)
			return err;
	}
	f.time = r->time;
	f.pid = r->pid;
	f.tid = r->tid;
	f.ppid = r->ppid;
	f.ptid = r->ptid;
	return cap_writer__append(w, CAP_REC_FORK, &f, sizeof(f), NULL, 0);
}

static int on_lost(struct sideband *sb, const struct sb_ring *ring,
		   const struct perf_event_header *h, struct cap_writer *w)
{
	const struct sb_lost *r = (const void *)h;
	struct cap_lost l = {
		.kind = CAP_KIND_SIDEBAND,
		.reason = CAP_LOST_SIDEBAND,
		.cpu = (uint32_t)ring->cpu,
	};

	if (rec_var_len(h, sizeof(*r)) < 0)
		return 0;
	l.count = r->lost;
	sb->lost += r->lost;
	return cap_writer__append(w, CAP_REC_LOST, &l, sizeof(l), NULL, 0);
}

static int on_record(struct sideband *sb, const struct sb_ring *ring,
		     const struct perf_event_header *h, struct cap_writer *w,
		     struct procmaps *pm)
{
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return on_mmap2(h, pm);
	case PERF_RECORD_COMM:
		return on_comm(h, w, pm);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return on_task(h, w, pm);
	case PERF_RECORD_LOST:
		return on_lost(sb, ring, h, w);
	default:
		return 0; /* throttling and others: nothing to keep */
	}
}

/* Point ring->cur at the next record below the snapshot head, or NULL. A
 * record that wraps around the end of the ring is copied whole. */
static int ring_peek(struct sb_ring *r)
{
	struct perf_event_header hdr;
	uint64_t off = r->tail & r->mask, first = r->mask + 1 - off;

	r->cur = NULL;
	if (r->tail >= r->head)
		return 0;
	/* records are 8-byte aligned, so the header itself never wraps */
	memcpy(&hdr, r->data + off, sizeof(hdr));
	if (hdr.size < sizeof(hdr) || hdr.size > r->head - r->tail || first < sizeof(hdr)) {
		r->tail = r->head; /* cannot happen with a sane kernel: resync */
		return 0;
	}
	if (hdr.size <= first) {
		r->cur = (const void *)(r->data + off);
	} else {
		if (!r->scratch && !(r->scratch = malloc(SB_MAX_RECORD)))
			return -ENOMEM;
		memcpy(r->scratch, r->data + off, first);
		memcpy(r->scratch + first, r->data, hdr.size - first);
		r->cur = (const void *)r->scratch;
	}
	r->cur_time = hdr.size >= sizeof(hdr) + sizeof(struct sb_sample_id) ?
		      rec_time(r->cur) : 0;
	return 0;
}

/* The ring whose next record is the oldest, or NULL when all are empty. */
static struct sb_ring *oldest_ring(struct sideband *sb)
{
	struct sb_ring *best = NULL;
	int i;

	for (i = 0; i < sb->nr; i++) {
		struct sb_ring *r = &sb->rings[i];

		if (r->cur && (!best || r->cur_time < best->cur_time))
			best = r;
	}
	return best;
}

/*
 * Merge the rings by time up to a snapshot of each head, so that an exec
 * seen on one CPU precedes the mappings its task made after migrating to
 * another. data_head is loaded with acquire (pairs with the kernel's
 * store); data_tail is stored with release, so our reads of a record are
 * done before the kernel may overwrite it.
 */
int sideband__drain(struct sideband *sb, struct cap_writer *w, struct procmaps *pm)
{
	struct sb_ring *r;
	int i, n = 0, err = 0;

	for (i = 0; i < sb->nr && !err; i++) {
		r = &sb->rings[i];
		r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		r->tail = r->meta->data_tail;
		err = ring_peek(r);
	}
	while (!err && (r = oldest_ring(sb))) {
		err = on_record(sb, r, r->cur, w, pm);
		if (err < 0)
			break;
		err = 0;
		r->tail += r->cur->size;
		n++;
		err = ring_peek(r);
	}
	for (i = 0; i < sb->nr; i++) {
		r = &sb->rings[i];
		if (r->tail > r->meta->data_tail)
			__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
	}
	return err < 0 ? err : n;
}

bool sideband__has_build_id(const struct sideband *sb)
{
	return sb->build_id;
}
