// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec kernel side: off-CPU intervals (sched_switch), timed CPU samples
 * (perf_event cpu-clock) and block I/O completions, each streamed as one
 * ringbuf record per event with its stacks inline (no stack-id map, so no
 * collisions). Every failure to take a stack or to emit a record is counted
 * per CPU, per kind and reason, in `counters`.
 *
 * Only tracepoints and perf events are used: kprobes and fentry are not
 * available everywhere, tracepoint names are stable.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/stkrec.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define E2BIG 7 /* map full; vmlinux.h has no errno values */

/* Tunables, set by record/ before load. */
const volatile __u64 min_ns = 1;           /* off-CPU duration bounds */
const volatile bool wakeups_kept = false;  /* -e offcpu,wakeup: sleeps checked for
					    * their wakeup (bpf/wakeup.bpf.h) */
const volatile __u64 max_ns = ~0ull;
const volatile __s64 state_filter = -1;    /* -1: any; 0: preempted; else mask */
const volatile __u32 self_tgid = 0;        /* the recorder: never traced */
const volatile bool filter_tgid = false;   /* only tgids in `tgids` */
const volatile bool filter_tid = false;    /* only tids in `tids` */
const volatile bool follow_fork = false;   /* children of traced tgids too */
const volatile bool user_only = false;
const volatile bool kernel_only = false;
const volatile bool want_ustack = true;
const volatile bool want_kstack = true;
const volatile bool include_idle = false;  /* CPU samples of pid 0 */
const volatile __s32 target_cpu = -1;      /* off-CPU: only this CPU */
const volatile __u64 wakeup_bytes = 1 << 20; /* wake the reader past this */
/* Tests only: skip every Nth run of stkrec_rq_complete, as the kernel may
 * (0: never; the verifier drops the test then). */
const volatile __u32 test_skip_complete = 0;
const volatile __u32 test_skip_major = 0; /* with test_skip_minor: that disk's only; 0 = all */
const volatile __u32 test_skip_minor = 0;
__u32 test_complete_runs;
/* Tests only: miss every Nth switch-in of a thread off CPU, as the kernel
 * may (0: never). */
const volatile __u32 test_skip_in = 0;
__u32 test_in_runs;
/* ... and every Nth run of the sched_waking program, as the kernel may */
const volatile __u32 test_skip_wake = 0;
__u32 test_wake_runs;
__u64 bio_seq; /* submissions numbered, from 1 */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STKREC_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STKREC_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * A thread switched out: its record waits here until it runs again. The
 * value is the record itself, so switch-in sends it without a copy.
 * tp_btf keeps it in task storage: no hashing, no size limit, and it is
 * freed with the task. The raw_tp fallback (no trusted task pointers) uses
 * the hash, emptied at sched_process_exit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stkrec_stack_ev);
} offcpu_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct stkrec_stack_ev);
} offcpu_start SEC(".maps");

#define SCRATCH_OFFCPU 0
#define SCRATCH_CPU 1
#define SCRATCH_BIO 2
#define SCRATCH_ITER 3 /* the stop iterator (bpf/waits.bpf.h) */
#define SCRATCH_WAKE 4 /* the waking program (bpf/wakeup.bpf.h) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 5);
	__type(key, __u32);
	__type(value, struct stkrec_stack_ev);
} scratch SEC(".maps");

/* -p PIDs, or the recorded command and its descendants (follow_fork). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} tids SEC(".maps");

/* A block request between block_io_start/block_rq_insert and its last
 * completion: who issued it and when it went to the device. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct stkrec_bio_state);
} bio_inflight SEC(".maps");

/*
 * Kernels without block_io_start (before 6.5): who allocated a request for
 * a bio, seen at block_getrq in the submitter's context, keyed by the bio,
 * which becomes the request's first (rq->bio). Taken when the request is
 * first seen at block_rq_insert or, with no I/O scheduler (a request goes
 * straight to the driver, never inserted), at block_rq_issue, which may
 * run in another task's context. LRU: an entry whose request was never
 * seen (a flush, a front merge that replaced rq->bio) ages out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct stkrec_bio_state);
} bio_submit SEC(".maps");

/* Kernels before 5.14 named task_struct::__state `state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline void count_stat(__u32 key)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* Atomic although per-CPU: a program in task context (preemptible under
 * migrate_disable()) can be interrupted by one counting the same key. */
static __always_inline void count_lost(__u32 kind, __u32 reason)
{
	__u32 key = kind * STKREC_LOST_NR + reason;
	__u64 *v = bpf_map_lookup_elem(&counters, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* Wake the reader only once enough data waits: it polls with a short
 * timeout anyway, and a wakeup per event would cost more than the event.
 * Asked of the ring every WAKE_EVERY records of a CPU, not at each: the
 * query reads the positions the reader's CPU writes (a cache line moved
 * per record), and records are small next to wakeup_bytes. */
#define WAKE_EVERY 32
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} wake_count SEC(".maps");

static __always_inline __u64 wake_flags(void)
{
	__u32 zero = 0, *n = bpf_map_lookup_elem(&wake_count, &zero);

	if (n && (++*n & (WAKE_EVERY - 1)))
		return BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * A field of a kernel object. Where the pointer is a BTF one (a tp_btf
 * program's arguments, bpf_get_current_task_btf()), a plain load, which
 * the verifier makes a checked one (a fault reads 0); else one
 * bpf_probe_read_kernel() call, several times the cost. btf is a
 * constant in each program, so only one of the two is compiled in.
 */
#define KREAD(btf, p, field) ((btf) ? (p)->field : BPF_CORE_READ(p, field))

/* The current task, as a BTF pointer where btf. */
static __always_inline struct task_struct *current_task(bool btf)
{
	if (btf)
		return bpf_get_current_task_btf();
	return (void *)bpf_get_current_task();
}

static __always_inline __u32 task_state(struct task_struct *t, bool btf)
{
	struct task_struct___old *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return KREAD(btf, t, __state);
	return BPF_CORE_READ(old, state);
}

static __always_inline bool task_allowed(__u32 tgid, __u32 tid, __u32 pflags)
{
	if (self_tgid && tgid == self_tgid)
		return false;
	if (user_only && (pflags & STKREC_PF_KTHREAD))
		return false;
	if (kernel_only && !(pflags & STKREC_PF_KTHREAD))
		return false;
	if (filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
		return false;
	if (filter_tid && !bpf_map_lookup_elem(&tids, &tid))
		return false;
	return true;
}

static __always_inline bool state_allowed(__u32 state)
{
	if (state_filter < 0)
		return true;
	/* As BCC offcputime: 0 means exactly "preempted/running", any
	 * other value is a mask of TASK_* bits. */
	if (state_filter == 0)
		return state == 0;
	return state & (__u32)state_filter;
}

#include "bpf/cgroup.bpf.h"

/* User registers an unwinder starts from. */
struct user_regs {
	__u64 pc, sp, fp;
};

#include "bpf/unwind.bpf.h"
#include "bpf/kstack.bpf.h"
#include "bpf/python.bpf.h"

#if defined(__TARGET_ARCH_x86)

/* The registers the current task entered the kernel with. loads (a
 * constant): plain loads from the helper's BTF pointer, not probe reads;
 * not in the perf_event program, where clang merges them with the loads
 * of the sampled registers, which the verifier refuses ("same insn cannot
 * be used with different pointers"). */
static __always_inline void entry_regs(struct user_regs *u, const bool loads)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());

	if (loads) {
		u->pc = PT_REGS_IP(regs);
		u->sp = PT_REGS_SP(regs);
		u->fp = PT_REGS_FP(regs);
		return;
	}
	u->pc = PT_REGS_IP_CORE(regs);
	u->sp = PT_REGS_SP_CORE(regs);
	u->fp = PT_REGS_FP_CORE(regs);
}

/* --call-graph dwarf: frames written, or -1 for a frame-pointer stack. */
static __always_inline long dwarf_stack(struct stkrec_stack_ev *e, __u32 kind,
					const struct user_regs *sampled, const bool cached)
{
	struct user_regs u;

	if (!dwarf_unwind)
		return -1;
	if (sampled)
		u = *sampled;
	else
		entry_regs(&u, cached);
	return unwind_user(e->ips, e->pid, &u, kind, cached);
}
#else
static __always_inline long dwarf_stack(struct stkrec_stack_ev *e, __u32 kind,
					const struct user_regs *sampled, const bool cached)
{
	return -1;
}
#endif

/* User then kernel frames into e->ips, contiguous, so the record can be sent
 * with only the frames taken, then the Python frames. Runs in the context of
 * the task sampled; sampled holds its user registers when a sample
 * interrupted user mode. cached (a constant): the thread's last user walk
 * of this kind may serve (bpf/unwind.bpf.h), in tp_btf programs only. */
static __always_inline void take_stacks(void *ctx, struct stkrec_stack_ev *e,
					__u32 kind, bool kthread, bool in_user,
					const struct user_regs *sampled, const bool cached)
{
	__u64 nu = 0, fm;
	long n, hit;

	e->nr_ustack = 0;
	e->nr_kstack = 0;
	e->nr_pystack = 0;
	e->py_flags = 0;
	if (want_ustack && !kthread) {
		n = dwarf_stack(e, kind, sampled, cached);
		if (n < 0) {
			n = bpf_get_stack(ctx, e->ips, STKREC_MAX_STACK * 8, BPF_F_USER_STACK);
			n = n > 0 ? n >> 3 : 0;
		}
		if (n > 0) {
			nu = n;
		} else {
			e->flags |= STKREC_F_USTACK_LOST;
			count_lost(kind, STKREC_LOST_USTACK);
		}
	}
	/* the verifier must see the bound right where nu indexes ips */
	barrier_var(nu);
	if (nu > STKREC_MAX_STACK)
		nu = STKREC_MAX_STACK;
	e->nr_ustack = nu;
	if (want_kstack) {
		/* cached: from the thread's kept walk where a walk would find
		 * it (bpf/kstack.bpf.h); fm is this program's frame, so the
		 * call stays here, in the program's own body */
		fm = cached && kcache_on ? stkrec_kframe() : 0;
		hit = fm ? stkrec_kstack_kept((struct kstack_frames *)&e->ips[nu], fm, kind) : 0;
		if (hit && !test_ucache_verify) {
			n = hit * 8;
		} else {
			n = bpf_get_stack(ctx, &e->ips[nu], STKREC_MAX_STACK * 8, 0);
			if (fm && n > 0)
				stkrec_kstack_note((struct kstack_frames *)&e->ips[nu], n / 8, fm,
						   kind, hit);
		}
		if (n > 0) {
			e->nr_kstack = n / 8;
		} else if (!(n == 0 && in_user)) {
			/* a sample taken in user mode has no kernel frames: not lost */
			e->flags |= STKREC_F_KSTACK_LOST;
			count_lost(kind, STKREC_LOST_KSTACK);
		}
	}
	if (want_ustack && !kthread)
		py_stack(e, nu + e->nr_kstack, kind);
}

static __always_inline void emit_stack_ev(struct stkrec_stack_ev *e, __u32 kind)
{
	__u64 size = stkrec_stack_ev_size(e);

	if (e->type == STKREC_EV_WAKEUP && (e->state & STKREC_WAKE_IO))
		size += sizeof(struct stkrec_wake_io);
	if (size > sizeof(*e))
		return;
	if (bpf_ringbuf_output(&events, e, size, wake_flags()))
		count_lost(kind, STKREC_LOST_RINGBUF);
}

static __always_inline struct stkrec_stack_ev *offcpu_slot(__u32 tid)
{
	struct stkrec_stack_ev *e;
	__u32 zero = SCRATCH_OFFCPU;

	e = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (e)
		return e;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return NULL;
	bpf_map_update_elem(&offcpu_start, &tid, e, BPF_NOEXIST);
	return bpf_map_lookup_elem(&offcpu_start, &tid);
}

/* The slot of a task switching out; created on its first switch. */
static __always_inline struct stkrec_stack_ev *out_slot(struct task_struct *t, __u32 tid,
							bool btf)
{
	if (btf)
		return bpf_task_storage_get(&offcpu_task, t, NULL,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	return offcpu_slot(tid);
}

/* The slot of a task switching in, if it has one. */
static __always_inline struct stkrec_stack_ev *in_slot(struct task_struct *t, __u32 tid,
						       bool btf)
{
	if (btf)
		return bpf_task_storage_get(&offcpu_task, t, NULL, 0);
	return bpf_map_lookup_elem(&offcpu_start, &tid);
}

/* __schedule() counts a switch in nvcsw or nivcsw just before the
 * tracepoint: one more at each switch-out. */
static __always_inline __u64 nr_switches(struct task_struct *t, bool btf)
{
	return KREAD(btf, t, nvcsw) + KREAD(btf, t, nivcsw);
}

/* When did t, switching out now, last switch in? From the scheduler's
 * clock: the clock of t's runqueue (this CPU's), taken at this
 * __schedule()'s start, less t's sched_info.last_arrival, taken at the
 * switch-in's, is how long t ran; 0 where the kernel keeps neither (the
 * runqueue is reached through t's CFS queue, kept with group scheduling).
 * Both clock reads lag their switch by the same few microseconds. */
static __always_inline __u64 arrived_at(struct task_struct *t, __u64 now, bool btf)
{
	__u64 clock, arrival;

	if (!bpf_core_field_exists(t->sched_info.last_arrival) ||
	    !bpf_core_field_exists(t->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq))
		return 0;
	clock = btf ? t->se.cfs_rq->rq->clock : BPF_CORE_READ(t, se.cfs_rq, rq, clock);
	arrival = KREAD(btf, t, sched_info.last_arrival);
	if (!clock || !arrival || clock < arrival || clock - arrival >= now)
		return 0;
	return now - (clock - arrival);
}

/* A sleep kept without its wakeup (none seen in it, up to its end): the
 * kernel woke the thread with no sched_waking reaching the recorder's
 * program (ftrace's event fired; seen on 6.18 about once in 200 naps of a
 * 20 ms nap loop), or woke it while it was still switching out, before
 * this program opened the wait. A preemption (state 0) has no wakeup; a
 * wait open at the start may have had it before its slot. */
static __always_inline void check_woken(const struct stkrec_stack_ev *e, __u64 end)
{
	__u64 woken = e->ips[STKREC_SLOT_WOKEN];

	if (wakeups_kept && e->state && !(e->flags & STKREC_F_OPEN_START) &&
	    (!woken || woken > end))
		count_stat(STKREC_STAT_UNTRACED_WAKE);
}

static __always_inline void close_wait(struct stkrec_stack_ev *e, __u64 end)
{
	__u64 delta = end - e->time;

	e->duration = delta;
	/* a wait open at the start: user space bounds the part it saw */
	if ((e->flags & STKREC_F_OPEN_START) || (delta >= min_ns && delta <= max_ns)) {
		emit_stack_ev(e, STKREC_KIND_OFFCPU);
		check_woken(e, e->time + e->duration); /* end, not kept across the call */
	}
	e->time = 0;
	e->ips[STKREC_SLOT_WOKEN] = 0;
}

/*
 * Account for the switches of t that reached no probe since the last one
 * its slot saw (its switch count then in the slot): the kernel now and
 * then switches a thread without the tracepoint reaching any program,
 * perf's included: about one switch in 1,000 of a nap loop on 6.18, and
 * often an idle CPU's switch to rcu_preempt. A switch-in so missed leaves
 * the slot open (e->time) with one switch since: its wait is closed at the
 * switch-in the scheduler's clock tells (bpf.recovered.offcpu). A
 * switch-out so missed adds two to the count, not one: that wait is lost,
 * and counted (bpf.untraced.offcpu), as is a missed switch-in the clock
 * cannot tell.
 */
static __always_inline void check_untraced(struct stkrec_stack_ev *e, struct task_struct *t,
					   __u64 now, bool btf)
{
	__u64 last = e->ips[STKREC_SLOT_SWITCHES], count = nr_switches(t, btf), in;

	e->ips[STKREC_SLOT_SWITCHES] = count;
	if (e->time && count == last + 1 && (in = arrived_at(t, now, btf)) > e->time) {
		close_wait(e, in);
		count_stat(STKREC_STAT_RECOVERED_IN);
	} else if (e->time || (last && count > last + 1)) {
		count_stat(STKREC_STAT_UNTRACED_IN);
		e->ips[STKREC_SLOT_WOKEN] = 0; /* the lost wait's */
	}
	e->time = 0;
}

/* A switch-out that records no wait (a filtered state or CPU, the thread's
 * last): still checked for a gap before it, and accounted for. */
static __always_inline void switch_out_unrecorded(struct task_struct *prev, __u32 tid, __u64 now,
						  bool btf)
{
	struct stkrec_stack_ev *e = in_slot(prev, tid, btf);

	if (e)
		check_untraced(e, prev, now, btf);
}

static __always_inline void switch_out(void *ctx, bool preempt, struct task_struct *prev,
				       __u64 now, __u32 cpu, bool btf)
{
	__u32 tid = KREAD(btf, prev, pid);
	__u32 tgid = KREAD(btf, prev, tgid);
	__u32 pflags, state;
	struct stkrec_stack_ev *e;

	if (!tid)
		return; /* idle */
	state = preempt ? 0 : task_state(prev, btf);
	/* the last switch of a dead thread: it never comes back */
	if ((target_cpu >= 0 && cpu != (__u32)target_cpu) || (state & STKREC_TASK_DEAD) ||
	    !state_allowed(state)) {
		switch_out_unrecorded(prev, tid, now, btf);
		return;
	}
	pflags = KREAD(btf, prev, flags);
	if (!task_allowed(tgid, tid, pflags) ||
	    !cgroup_keeps(current_cgroup_allowed(), STKREC_KIND_OFFCPU))
		return;
	e = out_slot(prev, tid, btf);
	if (!e) {
		count_lost(STKREC_KIND_OFFCPU, STKREC_LOST_STATE);
		return;
	}
	check_untraced(e, prev, now, btf);
	e->type = STKREC_EV_OFFCPU;
	e->tid = tid;
	e->pid = tgid;
	e->cpu = cpu;
	e->duration = 0;
	e->state = state;
	e->flags = (pflags & STKREC_PF_KTHREAD) ? STKREC_F_KTHREAD : 0;
	e->cgroup = current_cgroup(); /* current is prev */
	task_ev_ids(e, prev, btf);
	e->woken_cgroup = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	take_stacks(ctx, e, STKREC_KIND_OFFCPU, pflags & STKREC_PF_KTHREAD, false, NULL, btf);
	e->time = now; /* last: a nonzero time marks the slot complete */
}

static __always_inline void switch_in(struct task_struct *next, __u64 now, bool btf)
{
	__u32 tid = KREAD(btf, next, pid);
	struct stkrec_stack_ev *e;

	if (!tid)
		return;
	e = in_slot(next, tid, btf);
	if (!e || !e->time || (test_skip_in && ++test_in_runs % test_skip_in == 0))
		return;
	close_wait(e, now);
}

/* btf is a constant at each call: each program references one slot map. */
static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u64 now = bpf_ktime_get_ns();

	switch_out(ctx, preempt, prev, now, bpf_get_smp_processor_id(), btf);
	switch_in(next, now, btf);
	return 0;
}

#include "bpf/waits.bpf.h"
#include "bpf/wakeup.bpf.h"

SEC("tp_btf/sched_switch")
int BPF_PROG(stkrec_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, true);
}

/* Same logic where tp_btf cannot load: the task pointers are then plain
 * values, which is why the helpers above read through BPF_CORE_READ. */
SEC("raw_tp/sched_switch")
int BPF_PROG(stkrec_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, false);
}

/*
 * Did the sample interrupt user mode? The instruction pointer tells on
 * every architecture: user addresses are in the lower half. The register
 * that holds the mode does not travel well: x86's cs is a plain word up to
 * 6.8 and a union member since FRED, and the perf context allows only
 * 8-byte loads of it, so a read sized for one layout fails on the other.
 */
static __always_inline bool sampled_in_user(struct bpf_perf_event_data *ctx)
{
	return (long)PT_REGS_IP(&ctx->regs) >= 0;
}

SEC("perf_event")
int stkrec_cpu(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__u32 zero = SCRATCH_CPU, pflags;
	struct stkrec_stack_ev *e;
	struct user_regs u;
	bool in_user;

	if (!tid && !include_idle)
		return 0;
	pflags = BPF_CORE_READ(t, flags);
	if (tid && !task_allowed(tgid, tid, pflags))
		return 0;
	if (!cgroup_keeps(current_cgroup_allowed(), STKREC_KIND_CPU))
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	e->type = STKREC_EV_CPU;
	e->tid = tid;
	e->pid = tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->time = bpf_ktime_get_ns();
	e->duration = 0;
	e->state = 0;
	e->flags = (pflags & STKREC_PF_KTHREAD) ? STKREC_F_KTHREAD : 0;
	e->cgroup = current_cgroup();
	task_ev_ids(e, t, false);
	e->woken_cgroup = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	in_user = sampled_in_user(ctx);
	if (in_user) {
		u.pc = PT_REGS_IP(&ctx->regs);
		u.sp = PT_REGS_SP(&ctx->regs);
		u.fp = PT_REGS_FP(&ctx->regs);
	}
	/* one call: each call site is a copy of the unwinder to verify */
	take_stacks(ctx, e, STKREC_KIND_CPU, pflags & STKREC_PF_KTHREAD, in_user,
		    in_user ? &u : NULL, false);
	emit_stack_ev(e, STKREC_KIND_CPU);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(stkrec_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (!follow_fork || ptgid == ctgid)
		return 0;
	if (!bpf_map_lookup_elem(&tgids, &ptgid))
		return 0;
	if (bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY))
		count_lost(STKREC_KIND_OFFCPU, STKREC_LOST_STATE);
	return 0;
}

/* --call-graph dwarf: the old image's mappings are gone; until user space
 * has the new image's, the process's stacks use frame pointers. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(stkrec_exec, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	bpf_map_delete_elem(&umaps, &tgid);
	return 0;
}

/* A wait still open when its thread exits: its switch-in reached no
 * program (the thread runs its exit), and the scheduler's clock, last read
 * at a tick, no longer tells when: lost, and counted. */
static __always_inline void exit_wait(struct stkrec_stack_ev *e)
{
	if (e && e->time) {
		count_stat(STKREC_STAT_UNTRACED_IN);
		e->time = 0;
	}
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(stkrec_exit, struct task_struct *p)
{
	__u32 tid = p->pid, tgid = p->tgid;

	exit_wait(bpf_map_lookup_elem(&offcpu_start, &tid));
	bpf_map_delete_elem(&offcpu_start, &tid);
	/* signal->live dropped to 0 before this tracepoint: last thread. */
	if (!BPF_CORE_READ(p, signal, live.counter))
		bpf_map_delete_elem(&tgids, &tgid);
	return 0;
}

/* ... the switch program's slots in task storage (tp_btf/sched_switch) */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(stkrec_exit_task, struct task_struct *p)
{
	exit_wait(bpf_task_storage_get(&offcpu_task, p, NULL, 0));
	return 0;
}

static __always_inline bool bio_allowed(const struct stkrec_bio_state *s)
{
	if (s->issuer_flags & STKREC_F_CGROUP_OUT)
		return false;
	if (!s->tid)
		return !filter_tgid && !filter_tid && !user_only && !kernel_only &&
		       !nr_cgroup_filter;
	return task_allowed(s->pid, s->tid,
			    (s->issuer_flags & STKREC_F_KTHREAD) ? STKREC_PF_KTHREAD : 0);
}

/* Which use of a request an entry belongs to: the block layer stamps
 * start_time_ns when it sets a request up (0 when it keeps no times). */
static __always_inline __u64 rq_gen(struct request *rq)
{
	if (bpf_core_field_exists(rq->start_time_ns))
		return BPF_CORE_READ(rq, start_time_ns);
	return 0;
}

/* The entry was left by an earlier use of the same request. */
static __always_inline bool bio_stale(const struct stkrec_bio_state *s, __u64 gen)
{
	return s->gen && gen && s->gen != gen;
}

/*
 * An entry goes before its completion was seen: the request completed but
 * the kernel did not run stkrec_rq_complete for it (nested on a CPU, or in
 * a context where it runs no BPF program at all). Counted when it would
 * have been recorded, so that no I/O goes missing silently.
 */
static __always_inline void bio_forget(const struct stkrec_bio_state *s)
{
	if (s->issue_time && s->traced)
		count_stat(STKREC_STAT_BIO_MISSED);
}

/*
 * The stacks of a traced submitter, sent now as a BIO_SUBMIT record that
 * user space keeps until the completion (same seq) arrives: a request in
 * flight costs the kernel 8 bytes, not its stacks.
 */
static __always_inline void submit_stacks(void *ctx, struct stkrec_bio_state *s)
{
	__u32 zero = SCRATCH_BIO;
	struct stkrec_stack_ev *e;
	__u64 size;

	if (!bio_allowed(s) || (!want_ustack && !want_kstack))
		return;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	s->seq = __sync_fetch_and_add(&bio_seq, 1) + 1;
	e->type = STKREC_EV_BIO_SUBMIT;
	e->tid = s->tid;
	e->pid = s->pid;
	e->cpu = bpf_get_smp_processor_id();
	e->time = bpf_ktime_get_ns();
	e->duration = s->seq;
	e->state = 0;
	e->flags = s->issuer_flags;
	e->cgroup = s->cgroup;
	task_ev_ids(e, current_task(false), false); /* the issuer */
	e->woken_cgroup = 0;
	__builtin_memcpy(e->comm, s->comm, sizeof(e->comm));
	take_stacks(ctx, e, STKREC_KIND_BIO, s->issuer_flags & STKREC_F_KTHREAD, false, NULL,
		    false);
	/* Not a lost event when the ring buffer is full: the completion then
	 * finds no stacks for its seq and user space counts them missed. */
	size = stkrec_stack_ev_size(e);
	if (size <= sizeof(*e))
		bpf_ringbuf_output(&events, e, size, wake_flags());
}

/* What the current task is, as the issuer of a block request, with its
 * stacks. */
static __always_inline void current_issuer(void *ctx, struct stkrec_bio_state *s)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();

	s->tid = (__u32)id;
	s->pid = id >> 32;
	if (BPF_CORE_READ(t, flags) & STKREC_PF_KTHREAD)
		s->issuer_flags = STKREC_F_KTHREAD;
	s->cgroup = current_cgroup();
	if (!current_cgroup_allowed())
		s->issuer_flags |= STKREC_F_CGROUP_OUT;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	submit_stacks(ctx, s);
}

/* The submitter block_getrq saw for rq's first bio, if it is this
 * request's: the entry holds the bio's start sector, which is the
 * request's while that bio leads it. */
static __always_inline bool submitted_issuer(struct request *rq, struct stkrec_bio_state *s)
{
	__u64 bio = (__u64)BPF_CORE_READ(rq, bio);
	struct stkrec_bio_state *sub;

	if (!bio)
		return false;
	sub = bpf_map_lookup_elem(&bio_submit, &bio);
	if (!sub)
		return false;
	if (sub->gen != BPF_CORE_READ(rq, __sector)) {
		bpf_map_delete_elem(&bio_submit, &bio);
		return false;
	}
	__builtin_memcpy(s, sub, sizeof(*s));
	bpf_map_delete_elem(&bio_submit, &bio);
	return true;
}

/*
 * rq enters bio_inflight. block_io_start runs once per use of a request in
 * its submitter's context, so an entry it finds is a former use's; the
 * later tracepoints keep an entry of the same use. Without io_start the
 * issuer comes from block_getrq, else (insert only) the current task.
 */
static __always_inline struct stkrec_bio_state *bio_enter(void *ctx, struct request *rq,
							  bool first, bool use_current)
{
	__u64 key = (__u64)rq, gen = rq_gen(rq);
	struct stkrec_bio_state s = {}, *old;

	old = bpf_map_lookup_elem(&bio_inflight, &key);
	if (old) {
		if (!first && !bio_stale(old, gen)) {
			if (!old->gen)
				old->gen = gen;
			return old;
		}
		bio_forget(old);
	}
	if (first || !submitted_issuer(rq, &s)) {
		if (use_current)
			current_issuer(ctx, &s);
	}
	/* io_start runs before the block layer stamps this use of rq (the
	 * accounting restamps start_time_ns after it): the stamp is taken
	 * at the next tracepoint. */
	s.gen = first ? 0 : gen;
	s.traced = bio_allowed(&s);
	if (bpf_map_update_elem(&bio_inflight, &key, &s, BPF_ANY) == -E2BIG)
		count_lost(STKREC_KIND_BIO, STKREC_LOST_STATE);
	return bpf_map_lookup_elem(&bio_inflight, &key);
}

/* Fires in the submitter's context (6.5+). */
SEC("tp_btf/block_io_start")
int BPF_PROG(stkrec_io_start, struct request *rq)
{
	bio_enter(ctx, rq, true, true);
	return 0;
}

/* Fires in the submitter's context when a new request is allocated for
 * bio (kernels without block_io_start). */
SEC("tp_btf/block_getrq")
int BPF_PROG(stkrec_getrq, struct bio *bio)
{
	struct stkrec_bio_state s = {};
	__u64 key = (__u64)bio;

	current_issuer(ctx, &s);
	s.gen = BPF_CORE_READ(bio, bi_iter.bi_sector);
	bpf_map_update_elem(&bio_submit, &key, &s, BPF_ANY);
	return 0;
}

/* The submitter of a request block_getrq saw, or of one io_start did not
 * account: usually the current task at insertion. */
SEC("tp_btf/block_rq_insert")
int BPF_PROG(stkrec_rq_insert, struct request *rq)
{
	bio_enter(ctx, rq, false, true);
	return 0;
}

/* Issue may run in any task's context: the issuer comes from block_getrq
 * or an earlier tracepoint, else it stays unknown (tid 0, the I/O kept). */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(stkrec_rq_issue, struct request *rq)
{
	struct stkrec_bio_state *s = bio_enter(ctx, rq, false, false);

	if (s)
		s->issue_time = bpf_ktime_get_ns();
	return 0;
}

static __always_inline __u16 bio_flags(__u32 opf)
{
	__u16 f = 0;

	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		f |= STKREC_BIO_F_SYNC;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		f |= STKREC_BIO_F_FUA;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		f |= STKREC_BIO_F_META;
	if (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		f |= STKREC_BIO_F_PREFLUSH;
	return f;
}

/* REQ_OP_* values 0..3 have been stable since 4.10; only flag bits moved. */
static __always_inline __u8 bio_op(__u32 opf)
{
	__u32 op = opf & 0xff; /* REQ_OP_MASK */

	return op <= STKREC_BIO_DISCARD ? op : STKREC_BIO_OTHER;
}

static __always_inline void bio_fill(struct stkrec_bio_ev *ev, const struct stkrec_bio_state *s,
				     struct request *rq, __u32 nr_bytes)
{
	__u32 opf = BPF_CORE_READ(rq, cmd_flags);

	ev->type = STKREC_EV_BIO;
	ev->tid = s->tid;
	ev->pid = s->pid;
	ev->bytes = nr_bytes;
	ev->issue_time = s->issue_time;
	ev->complete_time = bpf_ktime_get_ns();
	ev->sector = BPF_CORE_READ(rq, __sector);
	ev->major = BPF_CORE_READ(rq, q, disk, major);
	ev->minor = BPF_CORE_READ(rq, q, disk, first_minor);
	ev->op = bio_op(opf);
	ev->flags = bio_flags(opf);
	ev->issuer_flags = s->issuer_flags;
	__builtin_memcpy(ev->comm, s->comm, sizeof(ev->comm));
	ev->seq = s->seq;
	ev->cgroup = s->cgroup;
	ev->last = nr_bytes >= BPF_CORE_READ(rq, __data_len);
}

/* Tests only: this run is one the kernel would not make (every Nth
 * completion, of one disk when a test names it). */
static __always_inline bool test_skips(struct request *rq)
{
	if (test_skip_major && (BPF_CORE_READ(rq, q, disk, major) != test_skip_major ||
				BPF_CORE_READ(rq, q, disk, first_minor) != test_skip_minor))
		return false;
	return ++test_complete_runs % test_skip_complete == 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(stkrec_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	struct stkrec_bio_ev ev = {};
	__u64 key = (__u64)rq;
	struct stkrec_bio_state *s;

	if (test_skip_complete && test_skips(rq))
		return 0;
	s = bpf_map_lookup_elem(&bio_inflight, &key);
	if (s && bio_stale(s, rq_gen(rq))) {
		/* this use of rq was never seen issued */
		bio_forget(s);
		bpf_map_delete_elem(&bio_inflight, &key);
		s = NULL;
	}
	if (!s || !s->issue_time) {
		count_stat(STKREC_STAT_BIO_UNSEEN);
	} else if (!bio_allowed(s)) {
		count_stat(STKREC_STAT_BIO_FILTERED);
	} else {
		bio_fill(&ev, s, rq, nr_bytes);
		ev.status = error;
		note_bio_done(&ev);
		if (bpf_ringbuf_output(&events, &ev, sizeof(ev), wake_flags()))
			count_lost(STKREC_KIND_BIO, STKREC_LOST_RINGBUF);
	}
	if (!s)
		return 0;
	/* Partial completions come first; the last one covers the rest. */
	if (nr_bytes >= BPF_CORE_READ(rq, __data_len))
		bpf_map_delete_elem(&bio_inflight, &key);
	return 0;
}
