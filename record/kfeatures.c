// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel feature probes. Each feature is probed the way the loader will use
 * it: tracepoints by the btf_trace_* typedef tp_btf attaches through, the
 * block tracepoints' arguments by that typedef's prototype, the ring buffer
 * and the cpu-clock event by creating one. The kernel versions are where
 * each feature appeared upstream; distribution kernels may backport.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "record/kfeatures.h"
#include "record/record.h"

#define EV_ANY RECORD_EV_ANY

static const struct {
	unsigned events;    /* the RECORD_EV_* kinds that need it */
	const char *tp;     /* the tracepoint, for KF_TP_* */
	const char *what;   /* what is missing, as the error names it */
	const char *kernel; /* the upstream release that has it */
} table[KF_NR] = {
	[KF_BTF] = { EV_ANY, NULL, "BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y)",
		     "5.4" },
	[KF_RINGBUF] = { EV_ANY, NULL, "BPF ring buffer (BPF_MAP_TYPE_RINGBUF)", "5.8" },
	[KF_TP_SWITCH] = { RECORD_EV_OFFCPU, "sched_switch", NULL, "5.5" },
	[KF_TP_FORK] = { EV_ANY, "sched_process_fork", NULL, "5.5" },
	[KF_TP_EXIT] = { EV_ANY, "sched_process_exit", NULL, "5.5" },
	[KF_TP_RQ_INSERT] = { RECORD_EV_BIO, "block_rq_insert", NULL, "5.5" },
	[KF_TP_RQ_ISSUE] = { RECORD_EV_BIO, "block_rq_issue", NULL, "5.5" },
	[KF_TP_RQ_COMPLETE] = { RECORD_EV_BIO, "block_rq_complete", NULL, "5.5" },
	[KF_BLOCK_RQ_ARGS] = { RECORD_EV_BIO, NULL,
			       "block_rq_issue(request) tracepoint (older kernels pass the queue too)",
			       "5.11" },
	[KF_CPU_CLOCK] = { RECORD_EV_CPU, NULL, "perf cpu-clock event (CONFIG_PERF_EVENTS)",
			   "2.6.31" },
	[KF_TP_WAKING] = { RECORD_EV_WAKEUP, "sched_waking", NULL, "5.5" },
	[KF_TP_IO_START] = { 0, "block_io_start", NULL, "6.5" },
	[KF_TP_GETRQ] = { 0, "block_getrq", NULL, "5.11" },
	[KF_PREEMPT_RT] = { 0, NULL, "PREEMPT_RT", "5.3" },
	[KF_TASK_ITER] = { 0, NULL, "BPF task iterator with bpf_get_task_stack()", "5.9" },
	[KF_BPF_LOOP] = { 0, NULL, "bpf_loop() BPF helper", "5.17" },
	[KF_TASK_PT_REGS] = { 0, NULL, "bpf_task_pt_regs() BPF helper", "5.15" },
	[KF_MMAP_ARRAY] = { 0, NULL, "mmap()able BPF arrays (BPF_F_MMAPABLE)", "5.5" },
	[KF_FIND_VMA] = { 0, NULL, "bpf_find_vma() BPF helper", "5.17" },
};

static const int dwarf_needs[] = { KF_BPF_LOOP, KF_TASK_PT_REGS, KF_MMAP_ARRAY, KF_FIND_VMA };

/* The prototype of tracepoint tp as tp_btf sees it, or NULL. */
static const struct btf_type *tp_proto(const struct btf *btf, const char *tp)
{
	const struct btf_type *t;
	char name[128];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return NULL;
	t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

static bool cpu_clock_opens(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000,
		.disabled = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return errno != ENOENT && errno != EOPNOTSUPP && errno != ENOSYS;
	close(fd);
	return true;
}

static void probe_btf(const struct btf *btf, struct kfeatures *kf)
{
	const struct btf_type *t;
	int f;

	for (f = 0; f < KF_NR; f++)
		if (table[f].tp)
			kf->present[f] = tp_proto(btf, table[f].tp) != NULL;
	/* (void *ctx, struct request *rq) since 5.11; the queue came first before */
	t = tp_proto(btf, "block_rq_issue");
	kf->present[KF_BLOCK_RQ_ARGS] = t && btf_vlen(t) == 2;
}

/* PREEMPT_RT kernels have /sys/kernel/realtime, reading "1". */
static bool realtime(void)
{
	char c = 0;
	FILE *f = fopen("/sys/kernel/realtime", "r");

	if (!f)
		return false;
	if (fread(&c, 1, 1, f) != 1)
		c = 0;
	fclose(f);
	return c == '1';
}

static bool mmap_array(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, &o);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int kfeatures__probe(unsigned events, struct kfeatures *kf)
{
	struct btf *btf;
	int err;

	memset(kf, 0, sizeof(*kf));
	kf->present[KF_PREEMPT_RT] = realtime();
	kf->present[KF_BTF] = !access("/sys/kernel/btf/vmlinux", R_OK);
	if (!kf->present[KF_BTF])
		return 0;
	btf = btf__load_vmlinux_btf();
	err = libbpf_get_error(btf);
	if (err)
		return err;
	probe_btf(btf, kf);
	kf->present[KF_TASK_ITER] =
		btf__find_by_name_kind(btf, "bpf_iter__task", BTF_KIND_STRUCT) > 0 &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_task_stack, NULL) == 1;
	btf__free(btf);
	kf->present[KF_RINGBUF] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	if (events & RECORD_EV_CPU)
		kf->present[KF_CPU_CLOCK] = cpu_clock_opens();
	kf->present[KF_BPF_LOOP] =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) == 1;
	kf->present[KF_TASK_PT_REGS] =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) == 1;
	kf->present[KF_MMAP_ARRAY] = mmap_array();
	kf->present[KF_FIND_VMA] =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1;
	return 0;
}

int kfeatures__dwarf_missing(const struct kfeatures *kf)
{
	size_t i;

#if !defined(__x86_64__)
	return -2;
#endif
	for (i = 0; i < sizeof(dwarf_needs) / sizeof(dwarf_needs[0]); i++)
		if (!kf->present[dwarf_needs[i]])
			return dwarf_needs[i];
	return -1;
}

int kfeatures__first_missing(const struct kfeatures *kf, unsigned events)
{
	int f;

	for (f = 0; f < KF_NR; f++)
		if ((table[f].events & events) && !kf->present[f])
			return f;
	return -1;
}

/* "-e offcpu,bio" for the kinds not in events */
static void other_kinds(unsigned events, char *buf, size_t len)
{
	static const char *const names[] = { "offcpu", "cpu", "bio" };
	size_t i, off = snprintf(buf, len, "-e ");

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && off < len; i++)
		if (!(events & (1u << i)))
			off += snprintf(buf + off, len - off, "%s%s", off > 3 ? "," : "", names[i]);
}

const char *kfeatures__explain(int f, char *buf, size_t len)
{
	char what[96], others[32];
	unsigned ev = table[f].events;

	if (f == -2) {
		snprintf(buf, len, "--call-graph dwarf unwinds x86-64 only; recording with "
			 "--call-graph fp");
		return buf;
	}
	if (table[f].tp)
		snprintf(what, sizeof(what), "tracepoint '%s' in BTF", table[f].tp);
	else
		snprintf(what, sizeof(what), "%s", table[f].what);
	if (f == KF_BPF_LOOP || f == KF_TASK_PT_REGS || f == KF_MMAP_ARRAY || f == KF_FIND_VMA) {
		snprintf(buf, len, "this kernel has no %s, which --call-graph dwarf needs "
			 "(Linux %s+); recording with --call-graph fp", what, table[f].kernel);
		return buf;
	}
	if (f == KF_TASK_ITER) {
		snprintf(buf, len, "this kernel has no %s (Linux %s+): waits open at the start "
			 "or the end of the recording are not recorded", what, table[f].kernel);
		return buf;
	}
	if (ev == EV_ANY) {
		snprintf(buf, len, "this kernel has no %s, which stkrec needs (Linux %s+)", what,
			 table[f].kernel);
		return buf;
	}
	other_kinds(ev, others, sizeof(others));
	snprintf(buf, len, "this kernel has no %s, which -e %s needs (Linux %s+); %s records "
		 "without it", what, ev == RECORD_EV_OFFCPU ? "offcpu" : ev == RECORD_EV_CPU ?
		 "cpu" : ev == RECORD_EV_WAKEUP ? "wakeup" : "bio", table[f].kernel, others);
	return buf;
}
