/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to record/: the recording session (record.c runs it, drain.c
 * streams events into it, output.c opens and closes its files). */
#ifndef STKREC_RECORD_RECORDER_INT_H
#define STKREC_RECORD_RECORDER_INT_H

#include <limits.h>
#include <signal.h>
#include <time.h>
#include <sys/types.h>
#include "bpf/stkrec.h"
#include "format/intern.h"
#include "pack/jitmap.h"
#include "record/record.h"
#include "record/cgroups.h"
#include "record/command.h"
#include "record/ksyms.h"
#include "record/procmaps.h"
#include "record/sideband.h"
#include "record/threads.h"
#include "record/unwind.h"
#include "record/pytrack.h"
#include "record/trigger.h"

/* --call-graph dwarf: processes with unwind tables at once */
#define UNWIND_PROCS 16384
#define UNWIND_FILES 65536 /* files with rows */

/* A block request's submitter stacks, from its BIO_SUBMIT record until its
 * completion: a slot per submission number modulo the table size. */
struct bio_stacks_slot {
	uint64_t seq;      /* 0: empty */
	uint32_t ustack, kstack;
	uint32_t file;     /* the file whose interned stacks these are */
};

struct stkrec_bpf;
struct ringbuf;
struct bpf_link;

struct recorder {
	struct record_opts opts;
	unsigned with;           /* RP_*: what the kernel policy decided */
	struct stkrec_bpf *skel;
	struct ringbuf *rb;      /* the events (record/ringbuf.h) */
	struct cap_writer *w;
	struct intern *in;
	struct ksyms *ks;
	struct ksyms_sink sink;
	struct procmaps *pm;
	struct sideband *sb;
	struct unwind *uw;       /* --call-graph dwarf, else NULL */
	struct pytrack *py;      /* CPython frames, else NULL */
	struct bpf_link *waits_start, *waits_stop; /* waits.c's iterators */
	struct jitmaps *jm;      /* JIT maps for the symbol pack; NULL: --no-pack */
	struct packer *pk;       /* the file's symbol pack, fed as it is written;
				  * NULL: --no-pack, a flight recorder's segment */
	struct jitroots *jr;     /* ... where those of other mount namespaces are */
	struct cgroups *cg;      /* cgroup v2 paths; NULL: no cgroup2 mount */
	struct flight *fl;       /* --flight-recorder, else NULL */
	struct triggers *trg;    /* ... its triggers (flight.c owns them) */
	int seg_fd;              /* ... the segment being written (a dup), or -1 */
	struct intern_ids ids;   /* the last closed segment's (flight.c) */
	volatile sig_atomic_t dump_requested; /* recorder__dump() */
	struct cap_pack_info pack; /* the last file's symbol pack */
	uint64_t pack_ns;        /* time spent writing symbol packs */
	unsigned packs;          /* files with a pack */
	int pack_err;            /* the last pack's failure, or 0 */
	struct bpf_link **links;
	int nr_links;
	size_t links_cap;
	int *perf_fds;
	int nr_perf_fds;
	int *cpus;       /* online CPUs */
	int ncpus;
	int ncpus_possible;
	int epfd;
	struct thread_table threads;
	struct record_cmd cmd;

	volatile sig_atomic_t stop_requested;
	enum cap_stop_reason stop;
	int error;          /* what stopped recording with CAP_STOP_ERROR */
	uint64_t start_ns;  /* monotonic: every program attached (-d counts from it) */
	char path[PATH_MAX + 32]; /* the current file (output.c names it) */
	unsigned files;           /* files opened so far */
	uint64_t file_start_ns;   /* monotonic: the current file began */
	uint64_t switch_from_ns;  /* --switch-output's period counts from here:
				   * the file's start, the first file's from
				   * the attach (its setup is no recording) */
	uint64_t events_base[CAP_KIND_MAX]; /* events before the current file */
	uint64_t final_bytes; /* capture size once finished */
	struct file_tail *tail; /* output.c: the file switched from, finishing */
	uint64_t end_ns;
	uint64_t events[CAP_KIND_MAX];
	uint64_t bad_records; /* ringbuf records too short for their type */
	uint64_t maps_missed; /* processes whose /proc maps could not be read */
	uint64_t cgroup_filtered[CAP_KIND_MAX]; /* -G, as of the last file's end */
	uint64_t untraced, recovered; /* bpf.untraced.offcpu, bpf.recovered.offcpu, same */
	uint64_t untraced_wake;       /* bpf.untraced.wakeup, same */
	uint64_t ucache_wrong;        /* tests: kept walks a new walk found different */
	uint64_t kcache_wrong;        /* ... kernel walks */
	int tp_btf_err;               /* the tp_btf programs' load, failed */
	uint64_t lost_seen[STKREC_NR_COUNTERS]; /* counter sums written so far */
	uint64_t *percpu_buf; /* ncpus_possible u64 for counter reads */
	struct bio_stacks_slot *bio_stacks; /* -e bio: submitter stacks in flight */
	uint32_t bio_stacks_mask;
	uint64_t bio_stacks_missed; /* completions whose stacks were gone */
	uint64_t bio_stacks_missed_seen; /* ... written as LOST so far */
	uint64_t next_check;  /* drain.c: when the callback yields next */
	unsigned since_check;
	bool yielded;
};

/* CPython frames: user stacks taken, not --no-python, and x86-64 (the
 * walker finds a 3.8-3.10 thread by its fs base). */
static inline bool record_wants_python(const struct record_opts *o)
{
#if defined(__x86_64__)
	return !o->no_python && !o->kernel_stacks_only;
#else
	return false;
#endif
}

/* The current time, CLOCK_MONOTONIC ns: the clock of every record. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* output.c: opening and closing capture files */
/* A new file (r->path: opts.output, or output.<timestamp> when switching):
 * header and definitions, all but the /proc scan. */
int recorder__open_output(struct recorder *r, const char **step);
/* Every process's threads and mappings into the current file. */
int recorder__scan_proc(struct recorder *r, uint64_t now);
/* The waits still open, LOST, STAT, the pack and END, then finish the
 * file; r->w is NULL after. */
int recorder__close_output(struct recorder *r, uint32_t reason, int32_t error, uint64_t now);
/* Wait for the file a switch left finishing; 0 or its writer's error. */
int recorder__join_tail(struct recorder *r);
/* The kernel's drop counters since the last call, as LOST records. */
int recorder__write_lost(struct recorder *r);
bool recorder__switch_due(const struct recorder *r, uint64_t now);
/* Finish the current file and open the next, with every definition again. */
int recorder__switch_output(struct recorder *r, uint64_t now);

/* flight.c: --flight-recorder (segments in memory, dumps by dump.c) */
struct flight;
struct dump_job;
int flight__new(const struct record_opts *o, struct flight **out, struct triggers **trg);
void flight__free(struct flight *f);
/* Housekeeping: triggers, dumps, segments; 1 when --max-dumps is reached. */
int recorder__flight_tick(struct recorder *r, uint64_t now);
/* The recording's end: the last dump, if any, written. */
int recorder__flight_end(struct recorder *r, uint64_t now);
void recorder__flight_progress(const struct recorder *r, struct record_progress *p);
/* output.c: a segment closed without a pack (its bytes in r->seg_fd); the
 * next file opened after one closed (err: the close's); a dump's name
 * and header */
int recorder__close_segment(struct recorder *r, uint64_t now, uint64_t *size);
int recorder__open_next(struct recorder *r, uint64_t now, int err);
int recorder__dump_header(struct recorder *r, struct dump_job *j, uint64_t window_start);

/* events.c: a ring buffer record (or the stop iterator's) into the file;
 * <0 only for a write error (a malformed record is counted). */
int recorder__convert(struct recorder *r, const void *data, size_t size);

/* waits.c: waits open at the start and at the stop (bpf/waits.bpf.h) */
struct stkrec_bpf;
void waits__set_autoload(struct stkrec_bpf *s, bool on, bool raw, bool user);
int waits__attach(struct recorder *r);
void waits__detach(struct recorder *r);
/* The scope's threads off CPU now get their slots (after attaching). */
int recorder__scan_waits(struct recorder *r);
/* Every wait still open, as an interval ending at now, into the file. */
int recorder__write_open_waits(struct recorder *r, uint64_t now);

/* drain.c: the ring buffer callback and the loop */
int recorder__on_event(void *ctx, void *data, size_t size);
/* One pass over the side band and the ring buffer, yielding after budget_ns. */
int recorder__drain(struct recorder *r, uint64_t budget_ns);
/* Until told to stop, the duration, the command's exit or an error. */
int recorder__loop(struct recorder *r);
void recorder__report_progress(struct recorder *r);

#endif
