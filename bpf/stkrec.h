/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI shared by bpf/stkrec.bpf.c and record/: ringbuf record layouts,
 * counter indexes and constants. Fixed-width types only, no kernel types, so
 * user space includes it as is. The ringbuf record is not the file record:
 * record/ converts each one into format/'s layout.
 */
#ifndef STKREC_BPF_STKREC_H
#define STKREC_BPF_STKREC_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* __u32 and friends, as vmlinux.h has them */
#endif

#define STKREC_MAX_STACK 127  /* frames per stack, as bpf_get_stack allows */
#define STKREC_COMM_LEN 16

/* Every ringbuf record starts with one of these (u32). */
enum stkrec_ev_type {
	STKREC_EV_OFFCPU = 1,
	STKREC_EV_CPU = 2,
	STKREC_EV_BIO = 3,
};

/* stkrec_stack_ev.flags */
#define STKREC_F_KTHREAD 0x1     /* the task is a kernel thread */
#define STKREC_F_USTACK_LOST 0x2 /* user stack requested, not taken */
#define STKREC_F_KSTACK_LOST 0x4 /* kernel stack requested, not taken */

/*
 * OFFCPU and CPU records: this header, then nr_ustack user frames, then
 * nr_kstack kernel frames (innermost first). Only the used frames travel:
 * the record length is sizeof(header) + 8 * (nr_ustack + nr_kstack).
 */
struct stkrec_stack_ev {
	__u32 type;      /* STKREC_EV_OFFCPU or STKREC_EV_CPU */
	__u32 tid;
	__u32 pid;       /* tgid */
	__u32 cpu;
	__u64 time;      /* OFFCPU: switch-out; CPU: sample (monotonic ns) */
	__u64 duration;  /* OFFCPU: ns until switch-in; CPU: 0 */
	__u32 state;     /* OFFCPU: task state at switch-out; CPU: 0 */
	__u16 flags;     /* STKREC_F_* */
	__u8 nr_ustack;
	__u8 nr_kstack;
	char comm[STKREC_COMM_LEN];
	__u64 ips[2 * STKREC_MAX_STACK];
};
#define STKREC_STACK_EV_HDR_SIZE 56u
_Static_assert(sizeof(struct stkrec_stack_ev) ==
	       STKREC_STACK_EV_HDR_SIZE + 2 * STKREC_MAX_STACK * 8, "stkrec_stack_ev layout");

/* BIO op codes (same values as format's enum cap_bio_op). */
enum stkrec_bio_op {
	STKREC_BIO_READ = 0,
	STKREC_BIO_WRITE = 1,
	STKREC_BIO_FLUSH = 2,
	STKREC_BIO_DISCARD = 3,
	STKREC_BIO_OTHER = 4,
};
/* BIO flags (same values as format's CAP_BIO_F_*). */
#define STKREC_BIO_F_SYNC 0x1
#define STKREC_BIO_F_FUA 0x2
#define STKREC_BIO_F_META 0x4
#define STKREC_BIO_F_PREFLUSH 0x8

/* One completion (possibly partial) of a block request. */
struct stkrec_bio_ev {
	__u32 type;      /* STKREC_EV_BIO */
	__u32 tid;       /* issuing thread, 0 when unknown */
	__u32 pid;
	__u32 bytes;     /* bytes completed by this completion */
	__u64 issue_time;
	__u64 complete_time;
	__u64 sector;
	__u32 major;
	__u32 minor;
	__u8 op;         /* enum stkrec_bio_op */
	__u8 status;     /* blk_status_t of the completion, 0 = OK */
	__u16 flags;     /* STKREC_BIO_F_* */
	__u32 issuer_flags; /* STKREC_F_KTHREAD when the issuer is a kernel thread */
	char comm[STKREC_COMM_LEN];
};
_Static_assert(sizeof(struct stkrec_bio_ev) == 72, "stkrec_bio_ev layout");

/*
 * Map `bio_inflight`, key the request's address: a block request between
 * block_io_start (or block_rq_insert/block_rq_issue) and its last
 * completion. User space reads what is left at the end of a file.
 */
struct stkrec_bio_state {
	__u64 issue_time;   /* block_rq_issue, 0 until then */
	__u64 gen;          /* request::start_time_ns at entry: which use of rq */
	__u32 tid;          /* issuer, 0 when unknown */
	__u32 pid;
	__u32 issuer_flags; /* STKREC_F_KTHREAD */
	__u32 traced;       /* the issuer passed the filters when it issued */
	char comm[STKREC_COMM_LEN];
};
_Static_assert(sizeof(struct stkrec_bio_state) == 48, "stkrec_bio_state layout");

/*
 * Per-CPU drop counters: array index kind * STKREC_LOST_NR + reason. The
 * values match format's enum cap_kind and enum cap_lost_reason (record/
 * asserts it), so user space writes them into LOST records unchanged.
 */
enum stkrec_kind {
	STKREC_KIND_OFFCPU = 0,
	STKREC_KIND_CPU = 1,
	STKREC_KIND_BIO = 2,
	STKREC_KIND_NR = 3,
};
enum stkrec_lost {
	STKREC_LOST_RINGBUF = 0,
	STKREC_LOST_USTACK = 1,
	STKREC_LOST_KSTACK = 2,
	STKREC_LOST_STATE = 4,
	STKREC_LOST_NR = 5,
};
#define STKREC_NR_COUNTERS (STKREC_KIND_NR * STKREC_LOST_NR)

/* Per-CPU event statistics (not losses): array `stats` indexes. */
enum stkrec_stat {
	STKREC_STAT_BIO_UNSEEN = 0,  /* completion of a request not seen issued */
	STKREC_STAT_BIO_FILTERED,    /* completion filtered out (issuer not traced) */
	STKREC_STAT_BIO_MISSED,      /* request seen issued, completion never seen */
	STKREC_STAT_NR,
};

/* Task flag and states the BPF side tests (include/linux/sched.h). */
#define STKREC_PF_KTHREAD 0x00200000u
#define STKREC_TASK_DEAD 0x80u

#endif /* STKREC_BPF_STKREC_H */
