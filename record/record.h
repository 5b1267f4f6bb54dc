/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording session: load the BPF programs, write the capture's
 * preamble (header, kernel, block devices, processes), stream events from
 * the ringbuf and the perf side band into the capture until told to stop,
 * then write the loss, statistics and END records and finish the file.
 *
 * Never prints: libbpf's messages go to opts->libbpf_log, progress to
 * opts->progress, errors are returned as -errno or CAP_ERR_*.
 */
#ifndef STKREC_RECORD_RECORD_H
#define STKREC_RECORD_RECORD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include "format/capture.h"

/* opts->events bits */
#define RECORD_EV_OFFCPU (1u << CAP_KIND_OFFCPU)
#define RECORD_EV_CPU (1u << CAP_KIND_CPU)
#define RECORD_EV_BIO (1u << CAP_KIND_BIO)
#define RECORD_EV_WAKEUP (1u << CAP_KIND_WAKEUP) /* not in the default set */
#define RECORD_EV_ALL (RECORD_EV_OFFCPU | RECORD_EV_CPU | RECORD_EV_BIO)
#define RECORD_EV_ANY (RECORD_EV_ALL | RECORD_EV_WAKEUP)

#define RECORD_DEFAULT_OUTPUT "stkrec.cap"
#define RECORD_DEFAULT_FREQ 49
#define RECORD_DEFAULT_RINGBUF (16u << 20)
#define RECORD_DEFAULT_STORAGE 16384
#define RECORD_DEFAULT_MIN_US 1
#define RECORD_MAX_CGROUPS 16 /* -G entries */
#define RECORD_DEFAULT_UNWIND_ROWS (4u << 20) /* 32 MiB of unwind rows */

/* opts->call_graph: how user stacks are walked */
enum record_call_graph {
	RECORD_CG_FP = 0,    /* frame pointers (bpf_get_stack) */
	RECORD_CG_DWARF = 1, /* call-frame information, in the kernel */
};

/* What the summary and the status line show. */
struct record_progress {
	uint64_t elapsed_ns;
	uint64_t events[CAP_KIND_MAX];
	uint64_t lost[CAP_KIND_MAX];   /* events lost (ringbuf, state table) */
	uint64_t ustack_missed;        /* events kept without their user stack */
	uint64_t kstack_missed;
	uint64_t stacks;               /* distinct stacks interned */
	uint64_t bytes;                /* capture bytes written so far */
	enum cap_stop_reason stop;     /* once stopped */
	int command_status;            /* wait status of -- COMMAND, or -1 */
	const char *path;              /* the current (at the end: last) file */
	unsigned files;                /* capture files written (--switch-output) */
	/* the symbol pack (FORMAT.md §4.18) of the last file closed */
	struct cap_pack_info pack;
	unsigned packs;                /* files closed with a pack */
	uint64_t pack_ns;              /* time spent writing packs, all files */
	int pack_err;                  /* why the last pack failed, or 0 */
	bool no_cgroup2;               /* no cgroup2 mount: events carry no cgroup */
	uint64_t cgroups_unnamed;      /* cgroup ids written without a path */
	uint64_t cgroup_filtered[CAP_KIND_MAX]; /* -G: events of other cgroups */
	uint64_t untraced;             /* waits lost to a switch no probe saw */
	uint64_t recovered;            /* waits ended by the scheduler's clock */
	uint64_t untraced_wake;        /* sleeps kept whose wakeup no probe saw */
	uint64_t ucache_wrong;         /* tests: kept user walks found wrong */
	uint64_t kcache_wrong;         /* tests: kept kernel walks found wrong */
	/* the tp_btf programs failed to load (this error) where the kernel
	 * has tp_btf: the raw_tp ones record, without kept walks */
	int tp_btf_err;
	/* --flight-recorder */
	unsigned dumps;                /* dumps written */
	uint64_t triggers_ignored;     /* triggers past --max-dumps */
	bool max_dumps_reached;        /* what stopped recording */
	uint64_t held_bytes;           /* compressed segments held now */
	uint64_t held_peak;            /* ... at most */
};

/* A flight recorder's dump, once its file is complete (or failed). */
struct record_dump {
	const char *path;
	struct cap_trigger trigger; /* as the file's TRIGGER record says it */
	char comm[16];              /* WAIT: the thread's name */
	uint64_t events;            /* events in the window */
	uint64_t bytes;             /* the file's size */
	uint64_t latency_ns;        /* from the trigger (or the dump's moment,
				     * with --post) to the file complete */
	int err;                    /* 0, or why the file is incomplete */
};

struct record_opts {
	const char *output;          /* capture path; with output_fd, its name */
	/* >= 0: write the capture to this fd (a pipe: standard output), which
	 * the recorder then owns and closes; it also stops, as for a failed
	 * write (-EPIPE), as soon as the fd's reader is gone. Not with
	 * switch_ns or switch_bytes. */
	int output_fd;
	unsigned events;             /* RECORD_EV_* */
	uint32_t *pids;              /* -p: tgids */
	int nr_pids;
	uint32_t *tids;              /* -t */
	int nr_tids;
	bool all_cpus;               /* -a: whole system, even with a command */
	bool user_threads;           /* -u */
	bool kernel_threads;         /* -k */
	/* -G: only these cgroups and their subtrees, as cgroups__resolve()
	 * (record/cgroups.h) gives them: depth below the root and id */
	int nr_cgroups;
	uint32_t cgroup_levels[RECORD_MAX_CGROUPS];
	uint64_t cgroup_ids[RECORD_MAX_CGROUPS];
	bool user_stacks_only;       /* -U */
	bool kernel_stacks_only;     /* -K */
	enum record_call_graph call_graph; /* --call-graph (default dwarf) */
	bool call_graph_set;         /* --call-graph given, not the default */
	uint32_t unwind_rows;        /* dwarf: rows of unwind tables the kernel holds */
	uint64_t freq;               /* -F: samples/s per CPU (freq mode) */
	uint64_t period;             /* -c: cpu-clock ns between samples; 0: use freq */
	bool idle;                   /* -I: sample the idle task too */
	int cpu;                     /* -C, or -1 for all */
	uint64_t min_us, max_us;     /* -m, -M: off-CPU duration bounds */
	int64_t state;               /* --state, or -1 */
	uint64_t storage_entries;    /* --stack-storage-size */
	uint64_t ringbuf_size;       /* --ringbuf-size (power of 2) */
	uint64_t duration_ns;        /* -d, 0 = until stopped */
	uint64_t max_size;           /* stop at this capture size; 0 = none */
	uint64_t switch_ns;          /* --switch-output: a new file this often, */
	uint64_t switch_bytes;       /* or past this size; 0 = never */
	bool no_pack;                /* --no-pack: no symbol pack at file close */
	bool no_python;              /* --no-python: no CPython frames */
	/* --flight-recorder: hold only the last flight_ns (or flight_bytes of
	 * compressed capture) in memory and write FILE.<timestamp> files only
	 * at a dump: SIGUSR2 (recorder__dump()), a wait of at least
	 * trigger_wait_ns, or the end when no trigger is set */
	uint64_t flight_ns, flight_bytes;
	uint64_t trigger_wait_ns;    /* --trigger wait>=DURATION; 0: none */
	uint64_t post_ns;            /* --post: record this long after a trigger */
	unsigned max_dumps;          /* --max-dumps: stop after this many; 0 none */
	void (*on_dump)(void *ctx, const struct record_dump *d);
	char **command;              /* -- COMMAND ARGS..., NULL-terminated */
	/* tests only: the kernel side skips every Nth run of its block I/O
	 * completion program, as a kernel may; 0 = never; of the disk
	 * test_skip_major:minor alone when major is not 0 */
	uint32_t test_skip_bio;
	uint32_t test_skip_major, test_skip_minor;
	uint32_t test_skip_in;       /* ... of its switch-ins of waiting threads */
	uint32_t test_skip_wake;     /* ... of its sched_waking program */
	/* tests: each thread's last user and kernel walks kept and reused
	 * (bpf/unwind.bpf.h, bpf/kstack.bpf.h); off: never; verify: walked
	 * anyway and compared; user, kernel: only those */
	enum {
		RECORD_UCACHE_ON,
		RECORD_UCACHE_OFF,
		RECORD_UCACHE_VERIFY,
		RECORD_UCACHE_USER,
		RECORD_UCACHE_KERNEL,
	} test_ucache;
	const char *cmdline;         /* for the header */
	int verbose;
	bool quiet;                  /* -q: src/ prints no start line or summary */
	/* libbpf's log, or NULL to silence it */
	libbpf_print_fn_t libbpf_log;
	/* called about once a second while recording, and once at the end */
	void (*progress)(void *ctx, const struct record_progress *p);
	void *progress_ctx;
};

/* Defaults: every kind, whole system, 49 Hz, RECORD_DEFAULT_* sizes. */
void record_opts__init(struct record_opts *o);

struct recorder;
struct record_policy;

/*
 * Open the capture, write the preamble, load and attach the BPF programs
 * as policy decided for opts (record_policy__decide(), policy.h), and
 * (with a command) fork it held until everything is attached. The
 * capture path is opened first, so an unwritable path fails before BPF.
 * opts->output_fd is the recorder's from here on, whatever happens.
 * On failure *step (if not NULL) names what failed, e.g. "load BPF" or
 * "attach block_rq_issue" (a static string).
 * On success every program is attached: events are recorded from here on
 * (the ring buffer holds them until recorder__run() drains it), and
 * opts->duration_ns counts from here; a held command waits for
 * recorder__run(). A caller that says "recording" says it in between.
 */
int recorder__new(const struct record_opts *opts, const struct record_policy *policy,
		  struct recorder **out, const char **step);
/* Record until recorder__stop(), the duration, or the command's exit; then
 * finish the capture. Returns 0 or the error that stopped recording (the
 * capture is still finished with an END record saying so). */
int recorder__run(struct recorder *r);
/* Async-signal-safe: ask recorder__run() to stop at its next wakeup. */
void recorder__stop(struct recorder *r);
/* Async-signal-safe: with --flight-recorder, a dump (SIGUSR2). */
void recorder__dump(struct recorder *r);
/* Final (or current) numbers. */
void recorder__progress(const struct recorder *r, struct record_progress *p);
/* pid of the recorded command, or 0 */
int recorder__command_pid(const struct recorder *r);
void recorder__free(struct recorder *r);

#endif /* STKREC_RECORD_RECORD_H */
