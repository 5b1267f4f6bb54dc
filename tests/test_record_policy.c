// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel policy (record/policy.h): from one probe, what a recording of
 * given options uses on a kernel with given features, and the lines that
 * say so, in the order src/ prints them.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "record/policy.h"
#include "record/record.h"

#define DWARF_WHY(what, ver) "this kernel has no " what ", which --call-graph dwarf needs " \
	"(Linux " ver "+); recording with --call-graph fp"
#define ITER_WHY "this kernel has no BPF task iterator with bpf_get_task_stack() (Linux " \
	"5.9+): waits open at the start or the end of the recording are not recorded"

/* A kernel with every feature but PREEMPT_RT. */
static void kernel(struct kfeatures *kf)
{
	int f;

	for (f = 0; f < KF_NR; f++)
		kf->present[f] = f != KF_PREEMPT_RT;
}

static void opts(struct record_opts *o, unsigned events)
{
	record_opts__init(o);
	o->events = events;
}

static void asked_dwarf(struct record_opts *o)
{
	o->call_graph = RECORD_CG_DWARF;
	o->call_graph_set = true;
}

Test(record_policy, everything_there_everything_used)
{
	struct record_policy p;
	struct record_opts o;
	struct kfeatures kf;

	kernel(&kf);
	opts(&o, RECORD_EV_ALL);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with, RP_DWARF | RP_CG_DEFAULT | RP_TP_SWITCH | RP_SLOT_ALLOC | RP_WAITS |
		     RP_WAITS_USER | RP_IO_START, "%#x", p.with);
	cr_assert_eq(p.nr_notes, 0);
	cr_assert_eq(o.call_graph, RECORD_CG_DWARF);
	/* what the kinds not recorded would use is not */
	opts(&o, RECORD_EV_CPU);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with, RP_DWARF | RP_CG_DEFAULT | RP_SLOT_ALLOC, "%#x", p.with);
}

/* A kind the kernel cannot record is refused, in kfeatures' words. */
Test(record_policy, missing_need_refused)
{
	struct record_policy p;
	struct record_opts o;
	struct kfeatures kf;

	kernel(&kf);
	kf.present[KF_TP_WAKING] = false;
	opts(&o, RECORD_EV_ALL | RECORD_EV_WAKEUP);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), -ENOENT);
	cr_assert_eq(p.nr_notes, 1);
	cr_assert_eq(p.notes[0].level, RECORD_POLICY_ERROR);
	cr_assert_str_eq(p.notes[0].text, "this kernel has no tracepoint 'sched_waking' in BTF, "
			 "which -e wakeup needs (Linux 5.5+); -e offcpu,cpu,bio records without it");
	opts(&o, RECORD_EV_ALL);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
}

/* PREEMPT_RT: dwarf as elsewhere (its guest freezes were qemu's
 * multi-threaded TCG, README Kernels), sched_switch by raw_tp with
 * preallocated slots; said nowhere. */
Test(record_policy, preempt_rt)
{
	struct record_policy p;
	struct record_opts o;
	struct kfeatures kf;

	kernel(&kf);
	kf.present[KF_PREEMPT_RT] = true;
	opts(&o, RECORD_EV_ALL);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(o.call_graph, RECORD_CG_DWARF);
	cr_assert_eq(p.with & (RP_DWARF | RP_TP_SWITCH | RP_SLOT_ALLOC), RP_DWARF, "%#x", p.with);
	cr_assert(p.with & RP_WAITS);
	cr_assert_eq(p.nr_notes, 0);
}

/* -K and -k take no user stack worth unwinding: fp, unless asked. */
Test(record_policy, kernel_stacks_or_threads_only)
{
	struct record_policy p;
	struct record_opts o;
	struct kfeatures kf;

	kernel(&kf);
	opts(&o, RECORD_EV_ALL);
	o.kernel_stacks_only = true;
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(o.call_graph, RECORD_CG_FP);
	cr_assert_eq(p.nr_notes, 0);
	opts(&o, RECORD_EV_ALL);
	o.kernel_threads = true;
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(o.call_graph, RECORD_CG_FP);
	asked_dwarf(&o);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(o.call_graph, RECORD_CG_DWARF);
}

/* Without a helper dwarf needs: fp, a warning when dwarf was asked, a -v
 * line when it was the default; the first helper missing is named. */
Test(record_policy, dwarf_falls_back_to_fp)
{
	static const struct { int f; const char *why; } c[] = {
		{ KF_BPF_LOOP, DWARF_WHY("bpf_loop() BPF helper", "5.17") },
		{ KF_TASK_PT_REGS, DWARF_WHY("bpf_task_pt_regs() BPF helper", "5.15") },
		{ KF_MMAP_ARRAY, DWARF_WHY("mmap()able BPF arrays (BPF_F_MMAPABLE)", "5.5") },
		{ KF_FIND_VMA, DWARF_WHY("bpf_find_vma() BPF helper", "5.17") },
	};
	struct record_policy p;
	struct record_opts o;
	struct kfeatures kf;
	size_t i;

#if !defined(__x86_64__)
	cr_skip_test("dwarf unwinds x86-64 only");
#endif
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		kernel(&kf);
		kf.present[c[i].f] = false;
		opts(&o, RECORD_EV_ALL);
		asked_dwarf(&o);
		cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
		cr_assert_eq(o.call_graph, RECORD_CG_FP);
		cr_assert_eq(p.nr_notes, 1);
		cr_assert_eq(p.notes[0].level, RECORD_POLICY_WARN);
		cr_assert_str_eq(p.notes[0].text, c[i].why);
		opts(&o, RECORD_EV_ALL);
		cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
		cr_assert_eq(o.call_graph, RECORD_CG_FP);
		cr_assert_eq(p.nr_notes, 1);
		cr_assert_eq(p.notes[0].level, RECORD_POLICY_DEBUG);
		cr_assert_str_eq(p.notes[0].text, c[i].why);
	}
	/* the first missing is named, once */
	kernel(&kf);
	kf.present[KF_TASK_PT_REGS] = kf.present[KF_FIND_VMA] = false;
	opts(&o, RECORD_EV_ALL);
	asked_dwarf(&o);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.nr_notes, 1);
	cr_assert_str_eq(p.notes[0].text, c[1].why);
	/* fp asked: nothing to fall back from */
	opts(&o, RECORD_EV_ALL);
	o.call_graph = RECORD_CG_FP;
	o.call_graph_set = true;
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.nr_notes, 0);
}

/* Without task iterators the waits open at the ends go, said once, before
 * the call graph's line; without the user helper their user stacks go. */
Test(record_policy, task_iterators)
{
	struct record_policy p;
	struct record_opts o;
	struct kfeatures kf;

	kernel(&kf);
	kf.present[KF_TASK_ITER] = false;
	kf.present[KF_BPF_LOOP] = false;
	opts(&o, RECORD_EV_ALL);
	asked_dwarf(&o);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with & (RP_WAITS | RP_WAITS_USER), 0, "%#x", p.with);
	cr_assert_eq(p.nr_notes, 2);
	cr_assert_eq(p.notes[0].level, RECORD_POLICY_WARN);
	cr_assert_str_eq(p.notes[0].text, ITER_WHY);
	cr_assert_str_eq(p.notes[1].text, DWARF_WHY("bpf_loop() BPF helper", "5.17"));
	/* no off-CPU recording, no waits, nothing said */
	opts(&o, RECORD_EV_CPU | RECORD_EV_BIO);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.nr_notes, 1, "%s", p.notes[0].text);
	cr_assert_eq(p.notes[0].level, RECORD_POLICY_DEBUG);
	kernel(&kf);
	kf.present[KF_TASK_ITER_USER] = false;
	opts(&o, RECORD_EV_ALL);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with & (RP_WAITS | RP_WAITS_USER), RP_WAITS, "%#x", p.with);
	cr_assert_eq(p.nr_notes, 0);
}

/* The submitter's context: block_io_start, else block_getrq, else none. */
Test(record_policy, block_submitter)
{
	const unsigned both = RP_IO_START | RP_GETRQ;
	struct record_policy p;
	struct record_opts o;
	struct kfeatures kf;

	kernel(&kf);
	opts(&o, RECORD_EV_BIO);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with & both, RP_IO_START);
	kf.present[KF_TP_IO_START] = false;
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with & both, RP_GETRQ);
	kf.present[KF_TP_GETRQ] = false;
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with & both, 0);
	cr_assert_eq(p.nr_notes, 0);
	kernel(&kf);
	opts(&o, RECORD_EV_OFFCPU);
	cr_assert_eq(record_policy__apply(&o, &kf, &p), 0);
	cr_assert_eq(p.with & both, 0);
}

/* This machine's kernel, probed once: a 6.18 has every feature. */
Test(record_policy, this_kernel)
{
	struct record_policy p;
	struct record_opts o;

	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK))
		cr_skip_test("needs root and kernel BTF");
	opts(&o, RECORD_EV_ALL);
	cr_assert_eq(record_policy__decide(&o, &p), 0, "%s", p.nr_notes ? p.notes[0].text : "");
	cr_assert(p.with & RP_IO_START);
	cr_assert(p.with & RP_WAITS);
}
