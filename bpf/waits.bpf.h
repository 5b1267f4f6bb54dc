/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Waits open at the start or the stop of a recording, which sched_switch
 * alone cannot see: an interval is sent when it ends, so a thread blocked
 * through the whole recording would never show, nor the beginning of a
 * wait that started before it.
 *
 * Two task iterators, each run by user space (record/waits.c) reading its
 * fd to the end:
 * - at the start, every thread of the recorded scope that is off CPU gets
 *   the slot its switch-out would have filled (kernel stack, state, the
 *   time it went off CPU as the scheduler's clock tells it), flagged
 *   STKREC_F_OPEN_START; switch_in() then sends it as any other interval.
 *   Its user stack is read from its memory by the sleepable variant
 *   (bpf_copy_from_user_task(), 5.18, x86-64: the unwinder), else counted
 *   lost (LOST reason 1).
 * - at each file's end, every slot still waiting is written to the
 *   iterator's output as an OFFCPU record ending at stop_ns, flagged
 *   STKREC_F_OPEN_END; the slot stays, so the wait's whole interval goes
 *   into the next file of a --switch-output recording when it ends.
 *
 * Included by stkrec.bpf.c after the slots and switch_in(); one program of
 * each per slot map, as the switch programs (btf: task storage, raw: the
 * hash).
 */
#ifndef STKREC_BPF_WAITS_BPF_H
#define STKREC_BPF_WAITS_BPF_H

/* Set by user space before it runs the stop iterator: END.time. */
__u64 stop_ns;

/* Kernels before 5.16 kept the CPU in task_struct, later in thread_info. */
struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_cpu(struct task_struct *t)
{
	struct task_struct___cpu *old = (void *)t;

	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ(old, cpu);
}

/* t's runqueue, through its group scheduling entity (the runqueues
 * per-CPU symbol is not in kallsyms without CONFIG_KALLSYMS_ALL). */
static __always_inline struct rq *task_rq(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq))
		return NULL;
	return BPF_CORE_READ(t, se.cfs_rq, rq);
}

/*
 * When t went off CPU, in bpf_ktime_get_ns() time, or 0 if unknown. The
 * scheduler stamped se.exec_start when it last stopped running t, in its
 * runqueue's task clock (rq->clock less the IRQ and steal time so far);
 * that clock is moved to the later of its runqueue's and this CPU's
 * rq->clock (the same sched_clock on machines with a stable clock), taken
 * as now. Off by the IRQ time of the wait and by how long ago those clocks
 * were updated (a tick at most): a wait that began after is placed now.
 */
static __always_inline __u64 offcpu_since(struct task_struct *t, __u64 now)
{
	__u64 exec_start = BPF_CORE_READ(t, se.exec_start), at, here;
	struct rq *trq = task_rq(t), *crq = task_rq(bpf_get_current_task_btf());

	if (!exec_start || !trq || !crq)
		return 0;
	here = BPF_CORE_READ(trq, clock);
	at = exec_start + (here - BPF_CORE_READ(trq, clock_task));
	if (BPF_CORE_READ(crq, clock) > here)
		here = BPF_CORE_READ(crq, clock);
	if (at > here)
		return now;
	return here - at < now ? now - (here - at) : 0;
}

/* t off CPU (not running, not the idle task, not exiting) and in scope. */
static __always_inline bool waiting_in_scope(struct task_struct *t, __u32 *state)
{
	__u32 tid = BPF_CORE_READ(t, pid);

	if (!tid || BPF_CORE_READ(t, on_cpu) || BPF_CORE_READ(t, exit_state))
		return false;
	*state = task_state(t, false);
	if ((*state & STKREC_TASK_DEAD) || !state_allowed(*state))
		return false;
	return task_allowed(BPF_CORE_READ(t, tgid), tid, BPF_CORE_READ(t, flags)) &&
	       task_cgroup_allowed(t);
}

/* The user stack of t, off CPU: read from its memory by the sleepable
 * iterator (x86-64: the unwinder), else counted missed. Returns frames. */
static __always_inline __u32 waiting_ustack(struct stkrec_stack_ev *e, struct task_struct *t,
					    __u32 pflags, const bool user)
{
	long n = 0;

	if (!want_ustack || (pflags & STKREC_PF_KTHREAD))
		return 0;
#if defined(__TARGET_ARCH_x86)
	if (user)
		n = unwind_user_task(e->ips, t, STKREC_KIND_OFFCPU, dwarf_unwind);
#endif
	if (n > 0 && n <= STKREC_MAX_STACK)
		return n;
	e->flags |= STKREC_F_USTACK_LOST;
	count_lost(STKREC_KIND_OFFCPU, STKREC_LOST_USTACK);
	return 0;
}

/* A wait found at the start: the slot switch_out() would have filled.
 * user: in the sleepable iterator, which can read t's user stack. */
static __always_inline void found_waiting(struct task_struct *t, bool btf, const bool user)
{
	__u32 tid = BPF_CORE_READ(t, pid), state, pflags;
	struct stkrec_stack_ev *e;
	__u64 now = bpf_ktime_get_ns(), since, sw;
	__u32 nu;
	long n;

	if (!waiting_in_scope(t, &state))
		return;
	e = in_slot(t, tid, btf);
	if (e && e->time)
		return; /* switched out since the tracepoint was attached */
	sw = nr_switches(t, false);
	e = out_slot(t, tid, btf);
	if (!e) {
		count_lost(STKREC_KIND_OFFCPU, STKREC_LOST_STATE);
		return;
	}
	pflags = BPF_CORE_READ(t, flags);
	e->type = STKREC_EV_OFFCPU;
	e->tid = tid;
	e->pid = BPF_CORE_READ(t, tgid);
	e->cpu = task_cpu(t);
	e->duration = 0;
	e->state = state;
	e->flags = STKREC_F_OPEN_START | ((pflags & STKREC_PF_KTHREAD) ? STKREC_F_KTHREAD : 0);
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	e->cgroup = task_cgroup(t, false);
	task_ev_ids(e, t, false);
	e->woken_cgroup = 0;
	/* at most 127 = 0x7f frames: the mask keeps the verifier's bound */
	nu = waiting_ustack(e, t, pflags, user) & STKREC_MAX_STACK;
	e->nr_ustack = nu;
	e->nr_kstack = 0;
	e->nr_pystack = 0; /* another task's memory: no Python frames */
	e->py_flags = 0;
	if (want_kstack) {
		n = bpf_get_task_stack(t, &e->ips[nu], STKREC_MAX_STACK * 8, 0);
		if (n > 0) {
			e->nr_kstack = n / 8;
		} else {
			e->flags |= STKREC_F_KSTACK_LOST;
			count_lost(STKREC_KIND_OFFCPU, STKREC_LOST_KSTACK);
		}
	}
	since = offcpu_since(t, now);
	if (!since) {
		since = now;
		e->flags |= STKREC_F_START_UNKNOWN;
	}
	/* it ran meanwhile: its own switch-out fills the slot next time */
	e->time = (BPF_CORE_READ(t, on_cpu) || nr_switches(t, false) != sw) ? 0 : since;
}

/* A wait still open at the stop, as the record switch_in() would send. */
static __always_inline void still_waiting(struct seq_file *seq, struct task_struct *t, bool btf)
{
	__u32 tid = BPF_CORE_READ(t, pid), zero = SCRATCH_ITER;
	struct stkrec_stack_ev *e, *out;
	__u64 size;

	e = in_slot(t, tid, btf);
	if (!e || !e->time || e->time > stop_ns)
		return;
	out = bpf_map_lookup_elem(&scratch, &zero);
	if (!out)
		return;
	if (bpf_probe_read_kernel(out, sizeof(*out), e))
		return;
	out->duration = stop_ns - e->time;
	out->flags |= STKREC_F_OPEN_END;
	size = stkrec_stack_ev_size(out);
	if (size <= sizeof(*out))
		bpf_seq_write(seq, out, size);
}

SEC("iter/task")
int stkrec_waits_start(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t)
		found_waiting(t, true, false);
	return 0;
}

SEC("iter/task")
int stkrec_waits_start_raw(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t)
		found_waiting(t, false, false);
	return 0;
}

/* The same, sleepable, with the user stacks (x86-64, 5.18+). */
SEC("iter.s/task")
int stkrec_waits_start_u(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t)
		found_waiting(t, true, true);
	return 0;
}

SEC("iter.s/task")
int stkrec_waits_start_u_raw(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t)
		found_waiting(t, false, true);
	return 0;
}

SEC("iter/task")
int stkrec_waits_stop(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t)
		still_waiting(ctx->meta->seq, t, true);
	return 0;
}

SEC("iter/task")
int stkrec_waits_stop_raw(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t)
		still_waiting(ctx->meta->seq, t, false);
	return 0;
}

#endif /* STKREC_BPF_WAITS_BPF_H */
