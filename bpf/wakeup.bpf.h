/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who woke each wait (record -e wakeup): sched_waking runs in the waker's
 * context (the task calling try_to_wake_up(), or the interrupt that does),
 * so its stacks are taken there and sent with the woken thread's ids. Only
 * wakeups that can end a wait the recorder keeps are sent: with -e offcpu,
 * a thread whose switch-out has a slot, waiting at least -m. Each marks
 * the slot, and a sleep closed without the mark is counted
 * (bpf.untraced.wakeup): its wakeup reached no program, or came while the
 * thread was still switching out (try_to_wake_up() fires sched_waking once
 * the thread is off its run queue, before it is off its CPU), before the
 * switch program opened the wait, which the report's join (a wakeup
 * inside the wait) would not take.
 *
 * The wakeups a block request's completion runs (bio_endio() waking a
 * thread in io_schedule(), folio_end_writeback()...) happen on the CPU
 * that ran block_rq_complete, right after it: that program leaves the
 * request's name here, and a wakeup soon after on the same CPU carries it.
 * User space keeps it only when the waker's kernel stack shows the
 * completion path (report/), so an unrelated wakeup never names a request.
 *
 * Included by stkrec.bpf.c after the slots; one program per slot map, as
 * the switch programs.
 */
#ifndef STKREC_BPF_WAKEUP_BPF_H
#define STKREC_BPF_WAKEUP_BPF_H

const volatile bool wakeups_need_slot = false; /* -e offcpu too */
const volatile __u64 wake_io_ns = 1000000;     /* a completion's wakeups follow it */

struct bio_done {
	__u64 time;                /* when block_rq_complete ran here, 0: never */
	struct stkrec_wake_io io;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bio_done);
} bio_done SEC(".maps");

/* block_rq_complete: the request its wakeups will name (its BIO record). */
static __always_inline void note_bio_done(const struct stkrec_bio_ev *ev)
{
	__u32 zero = 0;
	struct bio_done *d = bpf_map_lookup_elem(&bio_done, &zero);

	if (!d)
		return;
	d->io.major = ev->major;
	d->io.minor = ev->minor;
	d->io.sector = ev->sector;
	d->io.complete_time = ev->complete_time;
	d->time = ev->complete_time;
}

/* The completion this wakeup runs in, if any, after the frames. */
static __always_inline void wake_io(struct stkrec_stack_ev *e, __u64 now)
{
	__u32 zero = 0, n = e->nr_ustack + e->nr_kstack + 2 * e->nr_pystack;
	const struct bio_done *d = bpf_map_lookup_elem(&bio_done, &zero);
	__u64 *out;

	if (!d || !d->time || now - d->time > wake_io_ns)
		return;
	barrier_var(n);
	if (n > 2 * STKREC_MAX_STACK + 2 * STKREC_MAX_PYSTACK)
		return;
	out = &e->ips[n]; /* one bounded pointer: the verifier keeps its range */
	out[0] = (__u64)d->io.minor << 32 | d->io.major;
	out[1] = d->io.sector;
	out[2] = d->io.complete_time;
	e->state = STKREC_WAKE_IO;
}

/* Whether this wakeup of p ends a wait the recorder keeps (open in p's
 * slot, and -m long); noted in the slot (STKREC_SLOT_WOKEN) for the wait's
 * close to check, sent or not. */
static __always_inline bool wakes_kept_wait(struct task_struct *p, __u32 tid, __u64 now,
					    bool btf)
{
	struct stkrec_stack_ev *slot = in_slot(p, tid, btf);

	if (!slot || !slot->time)
		return false;
	if (!slot->ips[STKREC_SLOT_WOKEN])
		slot->ips[STKREC_SLOT_WOKEN] = now;
	return now - slot->time >= min_ns;
}

/* btf: p and the current task are BTF pointers, their fields plain
 * loads (KREAD), not helper calls: about a tenth of this program's time
 * on 6.18 (3,153-3,535 ns a call before, 2,818-3,154 after). */
static __always_inline void on_waking(void *ctx, struct task_struct *p, bool btf)
{
	__u32 tid = KREAD(btf, p, pid), tgid = KREAD(btf, p, tgid), zero = SCRATCH_WAKE;
	struct task_struct *cur = current_task(btf);
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	struct stkrec_stack_ev *e;
	__u32 pflags;

	if (!tid || !task_allowed(tgid, tid, KREAD(btf, p, flags)))
		return;
	/* of the traced threads' wakeups only: the same ones each run */
	if (test_skip_wake && ++test_wake_runs % test_skip_wake == 0)
		return;
	if (!cgroup_keeps(task_cgroup_allowed(p), STKREC_KIND_WAKEUP))
		return;
	if (wakeups_need_slot && !wakes_kept_wait(p, tid, now, btf))
		return;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	pflags = KREAD(btf, cur, flags);
	e->type = STKREC_EV_WAKEUP;
	e->tid = (__u32)id;
	e->pid = id >> 32;
	e->cpu = bpf_get_smp_processor_id();
	e->time = now;
	e->duration = (__u64)tgid << 32 | tid;
	e->state = 0;
	e->flags = (pflags & STKREC_PF_KTHREAD) ? STKREC_F_KTHREAD : 0;
	e->cgroup = current_cgroup();
	task_ev_ids(e, cur, btf);
	e->woken_cgroup = task_cgroup(p, btf);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	take_stacks(ctx, e, STKREC_KIND_WAKEUP, pflags & STKREC_PF_KTHREAD, false, NULL, btf);
	wake_io(e, now);
	emit_stack_ev(e, STKREC_KIND_WAKEUP);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(stkrec_waking, struct task_struct *p)
{
	on_waking(ctx, p, true);
	return 0;
}

SEC("raw_tp/sched_waking")
int BPF_PROG(stkrec_waking_raw, struct task_struct *p)
{
	on_waking(ctx, p, false);
	return 0;
}

#endif /* STKREC_BPF_WAKEUP_BPF_H */
