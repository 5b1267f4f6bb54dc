/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to record/record.c, drain.c, command.c, threads.c: the session. */
#ifndef STKREC_RECORD_RECORDER_INT_H
#define STKREC_RECORD_RECORDER_INT_H

#include <limits.h>
#include <signal.h>
#include <sys/types.h>
#include "bpf/stkrec.h"
#include "record/record.h"
#include "record/intern.h"
#include "record/ksyms.h"
#include "record/procmaps.h"
#include "record/sideband.h"

struct stkrec_bpf;
struct ring_buffer;
struct bpf_link;

/* tid -> last comm written in a THREAD record (threads.c). */
struct thread_slot {
	uint32_t tid;  /* 0: empty */
	uint32_t pid;
	char comm[STKREC_COMM_LEN];
};

struct thread_table {
	struct thread_slot *slots;
	uint32_t mask;
	uint32_t nr;
};

/* The recorded command (command.c). */
struct record_cmd {
	pid_t pid;       /* 0: none */
	int go_fd;       /* write end: one byte releases the child */
	int err_fd;      /* read end: errno of a failed exec, EOF on success */
	int pidfd;       /* readable once it exits, or -1 */
	int status;      /* wait status once reaped */
	bool reaped;
};

struct recorder {
	struct record_opts opts;
	struct stkrec_bpf *skel;
	struct ring_buffer *rb;
	struct cap_writer *w;
	struct intern *in;
	struct ksyms *ks;
	struct ksyms_sink sink;
	struct procmaps *pm;
	struct sideband *sb;
	struct bpf_link **links;
	int nr_links;
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
	uint64_t start_ns;  /* monotonic: recorder__run() began */
	char path[PATH_MAX + 32]; /* the current file (rotate.c names it) */
	unsigned files;           /* files opened so far */
	uint64_t file_start_ns;   /* monotonic: the current file began */
	uint64_t events_base[CAP_KIND_MAX]; /* events before the current file */
	uint64_t final_bytes; /* capture size once finished */
	uint64_t end_ns;
	uint64_t events[CAP_KIND_MAX];
	uint64_t bad_records; /* ringbuf records too short for their type */
	uint64_t maps_missed; /* processes whose /proc maps could not be read */
	uint64_t lost_seen[STKREC_NR_COUNTERS]; /* counter sums written so far */
	uint64_t *percpu_buf; /* ncpus_possible u64 for counter reads */
	uint64_t next_check;  /* drain.c: when the callback yields next */
	unsigned since_check;
	bool yielded;
};

/* record.c */
uint64_t record__now(void);
/* Destroy links and close perf events: no event after this returns. */
void record__detach(struct recorder *r);
void record__fill_header(const struct recorder *r, struct cap_header *h);
/* Definitions a file starts with: a new interner (STAT keys, kernel stack
 * hook), the kernel's identity and modules, the block devices. */
int record__write_defs(struct recorder *r, const char **step);

/* drain.c */
int record__on_event(void *ctx, void *data, size_t size);
int record__write_lost(struct recorder *r);
int record__intern_stat_keys(struct recorder *r);
int record__write_stats(struct recorder *r, uint64_t now);
int record__write_end(struct recorder *r, uint32_t reason, int32_t error, uint64_t now);
int record__loop(struct recorder *r);

/* rotate.c */
/* r->path for a new file: opts.output, or output.<timestamp> when switching */
int record__set_path(struct recorder *r);
bool record__switch_due(const struct recorder *r, uint64_t now);
/* Finish the current file and open the next, with every definition again. */
int record__switch_output(struct recorder *r, uint64_t now);

/* threads.c */
int threads__init(struct thread_table *t);
void threads__free(struct thread_table *t);
/* true when tid is new or its comm/pid changed; the table is updated. */
bool threads__changed(struct thread_table *t, uint32_t tid, uint32_t pid, const char *comm);

/* command.c */
int command__fork_held(struct record_cmd *c, char *const argv[]);
int command__release(struct record_cmd *c);
/* Reap without blocking: 1 when it has exited (status set), else 0. */
int command__poll(struct record_cmd *c);
void command__kill(struct record_cmd *c);
void command__close(struct record_cmd *c);

#endif
