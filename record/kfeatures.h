/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the recorder needs of the running kernel, per event kind, probed
 * before anything is loaded, so that a kernel without it gets one line
 * naming the feature and the kernel that has it (README, "Kernels").
 * Features with a fallback are probed too, for the policy (policy.h) to
 * choose.
 */
#ifndef STKREC_RECORD_KFEATURES_H
#define STKREC_RECORD_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>

enum kfeature {
	KF_BTF,            /* /sys/kernel/btf/vmlinux */
	KF_RINGBUF,        /* BPF_MAP_TYPE_RINGBUF */
	KF_TP_SWITCH,      /* tracepoints in BTF (tp_btf) */
	KF_TP_FORK,
	KF_TP_EXIT,
	KF_TP_RQ_INSERT,
	KF_TP_RQ_ISSUE,
	KF_TP_RQ_COMPLETE,
	KF_BLOCK_RQ_ARGS,  /* block_rq_* take the request alone (5.11) */
	KF_CPU_CLOCK,      /* perf's software cpu-clock event */
	KF_TP_WAKING,      /* sched_waking in BTF (-e wakeup) */
	/* optional: the loader falls back without them */
	KF_TP_IO_START,    /* block_io_start (6.5): the submitter's context */
	KF_TP_GETRQ,       /* block_getrq(bio) (5.11): the same, before io_start */
	KF_PREEMPT_RT,     /* a PREEMPT_RT kernel (/sys/kernel/realtime) */
	KF_TASK_ITER,      /* task iterator, bpf_get_task_stack() (5.9):
			    * waits open at the start and the stop */
	KF_TASK_ITER_USER, /* ... their user stacks: a sleepable iterator with
			    * bpf_copy_from_user_task() (5.18), the unwinder's
			    * helpers; x86-64 */
	/* --call-graph dwarf: without them, frame pointers */
	KF_BPF_LOOP,       /* bpf_loop() (5.17) */
	KF_TASK_PT_REGS,   /* bpf_task_pt_regs() (5.15) */
	KF_MMAP_ARRAY,     /* BPF_F_MMAPABLE arrays (5.5) */
	KF_FIND_VMA,       /* bpf_find_vma() (5.17) */
	KF_NR,
};

/* Which features are there: present[f] for each enum kfeature. */
struct kfeatures {
	bool present[KF_NR];
};

/* Probe the running kernel for what events (RECORD_EV_* bits) need; the
 * others are left false. 0, or -errno when probing itself failed. */
int kfeatures__probe(unsigned events, struct kfeatures *kf);
/* The first feature events need that kf lacks, or -1 when none. */
int kfeatures__first_missing(const struct kfeatures *kf, unsigned events);
/* The first feature --call-graph dwarf needs that kf lacks, or -1; the
 * architecture's lack (only x86-64 is unwound) is -2. */
int kfeatures__dwarf_missing(const struct kfeatures *kf);
/* One line saying what feature f is and which kernel has it, and what
 * records without it. Returns buf. */
const char *kfeatures__explain(int f, char *buf, size_t len);

#endif /* STKREC_RECORD_KFEATURES_H */
