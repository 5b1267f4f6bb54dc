// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel feature probes: this machine's kernel has everything stkrec needs,
 * and a kernel that lacks one feature is refused with a line naming it and
 * the kernel that has it, only for the event kinds that need it. (The
 * kernel matrix, tests/test_kernels.c, hides BTF for real.)
 */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>
#include "record/kfeatures.h"
#include "record/record.h"

static void all_present(struct kfeatures *kf)
{
	int f;

	for (f = 0; f < KF_NR; f++)
		kf->present[f] = true;
}

Test(record_kfeatures, this_kernel_has_what_every_kind_needs)
{
	struct kfeatures kf;
	char why[256];
	int f;

	if (geteuid() != 0)
		cr_skip_test("probing BPF map types needs root");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		cr_skip_test("this machine's kernel has no BTF");
	cr_assert_eq(kfeatures__probe(RECORD_EV_ALL, &kf), 0);
	f = kfeatures__first_missing(&kf, RECORD_EV_ALL);
	cr_assert_eq(f, -1, "missing: %s", f >= 0 ? kfeatures__explain(f, why, sizeof(why)) : "");
	/* 6.18: the submitter is seen at block_io_start */
	cr_assert(kf.present[KF_TP_IO_START]);
	cr_assert(kf.present[KF_TP_GETRQ]);
}

Test(record_kfeatures, not_probed_for_kinds_not_recorded)
{
	struct kfeatures kf;

	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK))
		cr_skip_test("needs root and kernel BTF");
	cr_assert_eq(kfeatures__probe(RECORD_EV_OFFCPU, &kf), 0);
	cr_assert_not(kf.present[KF_CPU_CLOCK], "cpu-clock probed without -e cpu");
}

/* Each feature missing alone: refused for the kinds that need it, with its
 * name and kernel version in the line; the other kinds record. */
Test(record_kfeatures, each_missing_feature_is_named)
{
	static const struct {
		int f;
		unsigned blocks;      /* kinds it stops */
		const char *says;
	} cases[] = {
		{ KF_BTF, RECORD_EV_ANY, "has no BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y), which stkrec needs (Linux 5.4+)" },
		{ KF_RINGBUF, RECORD_EV_ANY, "has no BPF ring buffer (BPF_MAP_TYPE_RINGBUF), which stkrec needs (Linux 5.8+)" },
		{ KF_TP_SWITCH, RECORD_EV_OFFCPU, "has no tracepoint 'sched_switch' in BTF, which -e offcpu needs (Linux 5.5+); -e cpu,bio records without it" },
		{ KF_TP_FORK, RECORD_EV_ANY, "tracepoint 'sched_process_fork' in BTF, which stkrec needs" },
		{ KF_TP_EXIT, RECORD_EV_ANY, "tracepoint 'sched_process_exit' in BTF, which stkrec needs" },
		{ KF_TP_RQ_INSERT, RECORD_EV_BIO, "tracepoint 'block_rq_insert' in BTF, which -e bio needs (Linux 5.5+); -e offcpu,cpu records without it" },
		{ KF_TP_RQ_ISSUE, RECORD_EV_BIO, "'block_rq_issue' in BTF, which -e bio needs" },
		{ KF_TP_RQ_COMPLETE, RECORD_EV_BIO, "'block_rq_complete' in BTF, which -e bio needs" },
		{ KF_BLOCK_RQ_ARGS, RECORD_EV_BIO, "has no block_rq_issue(request) tracepoint (older kernels pass the queue too), which -e bio needs (Linux 5.11+)" },
		{ KF_CPU_CLOCK, RECORD_EV_CPU, "has no perf cpu-clock event (CONFIG_PERF_EVENTS), which -e cpu needs (Linux 2.6.31+); -e offcpu,bio records without it" },
		{ KF_TP_WAKING, RECORD_EV_WAKEUP, "has no tracepoint 'sched_waking' in BTF, which -e wakeup needs (Linux 5.5+); -e offcpu,cpu,bio records without it" },
		{ KF_TP_IO_START, 0, NULL },
		{ KF_TP_GETRQ, 0, NULL },
		{ KF_PREEMPT_RT, 0, NULL },
		{ KF_TASK_ITER, 0, "has no BPF task iterator with bpf_get_task_stack() (Linux 5.9+): waits open at the start or the end of the recording are not recorded" },
		{ KF_BPF_LOOP, 0, "has no bpf_loop() BPF helper, which --call-graph dwarf needs (Linux 5.17+); recording with --call-graph fp" },
		{ KF_TASK_PT_REGS, 0, "has no bpf_task_pt_regs() BPF helper, which --call-graph dwarf needs (Linux 5.15+); recording with --call-graph fp" },
		{ KF_MMAP_ARRAY, 0, "has no mmap()able BPF arrays (BPF_F_MMAPABLE), which --call-graph dwarf needs (Linux 5.5+); recording with --call-graph fp" },
		{ KF_FIND_VMA, 0, "has no bpf_find_vma() BPF helper, which --call-graph dwarf needs (Linux 5.17+); recording with --call-graph fp" },
	};
	struct kfeatures kf;
	char why[256];
	unsigned ev;
	size_t i;

	cr_assert_eq(sizeof(cases) / sizeof(cases[0]), KF_NR, "a feature without a case");
	for (i = 0; i < KF_NR; i++) {
		all_present(&kf);
		kf.present[cases[i].f] = false;
		for (ev = 1; ev <= RECORD_EV_ANY; ev++) {
			int want = (ev & cases[i].blocks) ? cases[i].f : -1;

			cr_assert_eq(kfeatures__first_missing(&kf, ev), want,
				     "feature %d, events %#x", cases[i].f, ev);
		}
		if (!cases[i].says)
			continue;
		kfeatures__explain(cases[i].f, why, sizeof(why));
		cr_assert(strstr(why, cases[i].says), "'%s' lacks '%s'", why, cases[i].says);
		cr_assert(!strncmp(why, "this kernel has no ", 19), "%s", why);
		cr_assert_null(strchr(why, '\n'), "one line: %s", why);
	}
}

/* --call-graph dwarf falls back to fp, naming the first helper missing. */
Test(record_kfeatures, dwarf_names_the_missing_helper)
{
	static const int needs[] = { KF_BPF_LOOP, KF_TASK_PT_REGS, KF_MMAP_ARRAY, KF_FIND_VMA };
	struct kfeatures kf;
	size_t i;

	all_present(&kf);
	cr_assert_eq(kfeatures__dwarf_missing(&kf), -1);
	for (i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		all_present(&kf);
		kf.present[needs[i]] = false;
		cr_assert_eq(kfeatures__dwarf_missing(&kf), needs[i]);
		cr_assert_eq(kfeatures__first_missing(&kf, RECORD_EV_ALL), -1,
			     "no event kind needs an unwinder helper");
	}
}
