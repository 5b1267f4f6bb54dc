/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython frames (part of stkrec.bpf.c, included once, like unwind.bpf.h).
 *
 * For an event of a thread of a process in `pyprocs`, the thread's Python
 * frames follow its kernel frames in the record, innermost first, as
 * struct stkrec_pyframe: the code object and the instruction offset of each
 * call, and which frames end one call of the eval function. User space
 * interleaves them with the native frames and names the code objects.
 *
 * The thread state is found through _PyRuntime: the main interpreter's
 * list of threads, matched by tid (native_thread_id, 3.11+) or by
 * pthread_self() (thread_id, the fs base, 3.8-3.10); `pythreads` keeps the
 * answer, checked again at each use, so the list is walked once a thread.
 * Every read is of the process's memory, which may change under it or be
 * paged out: a read that fails ends the stack with STKREC_PY_F_UNREADABLE.
 */
#ifndef STKREC_BPF_PYTHON_BPF_H
#define STKREC_BPF_PYTHON_BPF_H

#define PY_MAX_THREADS 128 /* thread states walked to find a thread's */

/* Python frames wanted (and bpf_loop() there): set by record/ before load. */
const volatile bool want_python = false;
/* Set by user space when it adds a process to `pyprocs`: until then no
 * event looks there. */
__u32 py_procs;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct stkrec_pyproc);
} pyprocs SEC(".maps");

/* tid -> its PyThreadState's address, a hint checked at each use. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} pythreads SEC(".maps");

static __always_inline int py_read(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

static __always_inline int py_read_ptr(__u64 *dst, __u64 addr)
{
	*dst = 0;
	return py_read(dst, sizeof(*dst), addr);
}

/* The current thread's tid as its own PID namespace numbers it (a
 * container's process sees its own): what native_thread_id holds. */
static __always_inline __u32 py_ns_tid(void)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	bpf_core_read(&up, sizeof(up), &pid->numbers[level & 31]);
	return up.nr;
}

/* What the thread state field ts_tid holds for the current thread. */
static __always_inline __u64 py_thread_key(const struct stkrec_pyproc *pp, __u32 tid)
{
	if (pp->tid_kind == STKREC_PY_TID_NATIVE)
		return py_ns_tid();
#if defined(__TARGET_ARCH_x86)
	{
		struct task_struct *t = (void *)bpf_get_current_task();

		return BPF_CORE_READ(t, thread.fsbase);
	}
#else
	return 0;
#endif
}

/* Does the thread state at ts belong to the thread with this key? */
static __always_inline bool py_thread_is(const struct stkrec_pyproc *pp, __u64 ts, __u64 key)
{
	__u64 v;

	if (pp->tid_kind == STKREC_PY_TID_NATIVE) {
		__u32 t;

		if (py_read(&t, sizeof(t), ts + pp->ts_tid))
			return false;
		v = t;
	} else if (py_read_ptr(&v, ts + pp->ts_tid)) {
		return false;
	}
	return v && v == key;
}

/* bpf_loop() state of the search of the interpreter's thread list. */
struct py_find {
	const struct stkrec_pyproc *pp;
	__u64 key;
	__u64 ts;      /* the thread state looked at next, 0 at the end */
	int found;     /* 1 found (ts is it), -1 unreadable */
};

static long py_find_step(__u64 i, void *arg)
{
	struct py_find *f = arg;

	if (!f->ts)
		return 1;
	if (py_thread_is(f->pp, f->ts, f->key)) {
		f->found = 1;
		return 1;
	}
	if (py_read_ptr(&f->ts, f->ts + f->pp->ts_next)) {
		f->found = -1;
		return 1;
	}
	return 0;
}

/* The current thread's PyThreadState, 0 when it has none (a thread Python
 * does not know, or no interpreter yet), -1 when the interpreter's memory
 * could not be read. A bpf_loop() walks the list: the verifier checks one
 * step, not 128. */
static __always_inline __s64 py_thread_state(const struct stkrec_pyproc *pp, __u32 tid)
{
	struct py_find f = { .pp = pp, .key = py_thread_key(pp, tid) };
	__u64 *hint;

	if (!f.key)
		return 0;
	hint = bpf_map_lookup_elem(&pythreads, &tid);
	if (hint && py_thread_is(pp, *hint, f.key))
		return *hint;
	if (py_read_ptr(&f.ts, pp->runtime + pp->rt_interp))
		return -1;
	/* no interpreter: not started (perf and gdb link libpython for their
	 * scripting and never start it), or finalized: no Python runs */
	if (!f.ts)
		return 0;
	if (py_read_ptr(&f.ts, f.ts + pp->is_threads))
		return -1;
	bpf_loop(PY_MAX_THREADS, py_find_step, &f, 0);
	if (f.found < 0)
		return -1;
	if (!f.found)
		return 0;
	bpf_map_update_elem(&pythreads, &tid, &f.ts, BPF_ANY);
	return f.ts;
}

/* The thread's innermost frame (0: none, it runs no Python now). */
static __always_inline int py_top_frame(const struct stkrec_pyproc *pp, __u64 ts, __u64 *frame)
{
	if (py_read_ptr(frame, ts + pp->ts_frame))
		return -1;
	if (pp->cf_frame != STKREC_PY_NONE && *frame && py_read_ptr(frame, *frame + pp->cf_frame))
		return -1;
	return 0;
}

/* The stamp of the code object at code (bpf/stkrec.h). */
static __always_inline int py_stamp(const struct stkrec_pyproc *pp, __u64 code, __u32 *stamp)
{
	__u64 name;
	__s32 first;

	if (py_read(&first, sizeof(first), code + pp->co_firstlineno) ||
	    py_read_ptr(&name, code + pp->co_name))
		return -1;
	*stamp = stkrec_py_stamp(first, name);
	return 0;
}

/* The raw instruction offset of a frame running code. */
static __always_inline int py_lasti(const struct stkrec_pyproc *pp, __u64 frame, __u64 code,
				    __u32 *lasti)
{
	__u64 ip;
	__s32 l;

	if (pp->instr_kind == STKREC_PY_INSTR_INT) {
		if (py_read(&l, sizeof(l), frame + pp->fr_instr))
			return -1;
		*lasti = l;
		return 0;
	}
	if (py_read_ptr(&ip, frame + pp->fr_instr))
		return -1;
	*lasti = ip - code;
	return 0;
}

/*
 * One frame into out (or none, for a shim frame that only ends a call):
 * 1 written, 0 skipped, -1 unreadable. *entry_prev: the frame written
 * before this one ends its call.
 */
static __always_inline int py_frame(const struct stkrec_pyproc *pp, __u64 frame,
				     struct stkrec_pyframe *out, bool *entry_prev)
{
	__u64 code;
	__u8 b = 0;

	*entry_prev = false;
	if (pp->entry_kind != STKREC_PY_ENTRY_EACH && py_read(&b, 1, frame + pp->fr_entry))
		return -1;
	if (pp->entry_kind == STKREC_PY_ENTRY_SHIM && b == STKREC_PY_OWNED_BY_CSTACK) {
		*entry_prev = true;
		return 0;
	}
	if (py_read_ptr(&code, frame + pp->fr_code) || !code)
		return -1;
	if (py_lasti(pp, frame, code, &out->lasti) || py_stamp(pp, code, &out->stamp))
		return -1;
	out->code = code;
	if (pp->entry_kind == STKREC_PY_ENTRY_EACH || (pp->entry_kind == STKREC_PY_ENTRY_FLAG && b))
		out->code |= STKREC_PYFRAME_ENTRY;
	return 1;
}

/* bpf_loop() state of one Python stack walk. */
struct py_walk {
	struct stkrec_stack_ev *e;
	const struct stkrec_pyproc *pp;
	__u64 frame;    /* the next frame to read, 0 at the end */
	__u32 base;     /* e->ips index of the first Python frame */
	__u32 n;        /* frames written */
	__u8 flags;     /* STKREC_PY_F_* */
};

/* The i-th Python frame slot of the walk, bounded for the verifier. */
static __always_inline struct stkrec_pyframe *py_slot(struct py_walk *w, __u32 i)
{
	__u64 idx = (__u64)w->base + 2 * (__u64)i;

	/* the verifier must see the bound right where idx indexes ips */
	barrier_var(idx);
	if (idx > 2 * STKREC_MAX_STACK + 2 * STKREC_MAX_PYSTACK - 2)
		return NULL;
	return (void *)&w->e->ips[idx];
}

static long py_step(__u64 i, void *arg)
{
	struct py_walk *w = arg;
	struct stkrec_pyframe *out, *prev;
	bool entry_prev;
	int r;

	if (!w->frame)
		return 1;
	if (w->n >= STKREC_MAX_PYSTACK) {
		w->flags |= STKREC_PY_F_DEPTH;
		return 1;
	}
	out = py_slot(w, w->n);
	if (!out)
		return 1;
	r = py_frame(w->pp, w->frame, out, &entry_prev);
	if (r < 0) {
		w->flags |= STKREC_PY_F_UNREADABLE;
		return 1;
	}
	if (entry_prev && w->n) {
		prev = py_slot(w, w->n - 1);
		if (prev)
			prev->code |= STKREC_PYFRAME_ENTRY;
	}
	w->n += r;
	if (py_read_ptr(&w->frame, w->frame + w->pp->fr_back)) {
		w->flags |= STKREC_PY_F_UNREADABLE;
		return 1;
	}
	return 0;
}

/*
 * The current thread's Python frames into e->ips from index base, for an
 * event of process e->pid: e->nr_pystack and e->py_flags tell what was
 * taken. A shim frame (3.12+) takes a step and writes nothing: a stack of
 * shims alone ends at 2 * STKREC_MAX_PYSTACK steps, counted as deep.
 */
static __always_inline void py_stack(struct stkrec_stack_ev *e, __u32 base, __u32 kind)
{
	struct py_walk w = { .e = e, .base = base };
	__s64 ts;

	if (!want_python || !py_procs)
		return;
	w.pp = bpf_map_lookup_elem(&pyprocs, &e->pid);
	if (!w.pp)
		return;
	ts = py_thread_state(w.pp, e->tid);
	if (ts < 0 || (ts > 0 && py_top_frame(w.pp, ts, &w.frame)))
		w.flags |= STKREC_PY_F_UNREADABLE;
	else if (ts > 0)
		bpf_loop(2 * STKREC_MAX_PYSTACK, py_step, &w, 0);
	if (w.frame && !w.flags)
		w.flags |= STKREC_PY_F_DEPTH;
	e->nr_pystack = w.n;
	e->py_flags = w.flags;
	if (w.flags)
		count_stat(STKREC_STAT_PY_CUT + kind);
}

#endif /* STKREC_BPF_PYTHON_BPF_H */
