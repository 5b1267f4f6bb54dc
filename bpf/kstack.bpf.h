/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kept kernel walks: a thread's last kernel stack of a kind (its switch-out,
 * its wakeups of others), given again while a new walk would find it, so
 * that the kernel's unwinder does not walk it again (most of the switch
 * program's time on a pipe ping-pong).
 *
 * bpf_get_stack() walks with the kernel's ORC unwinder: the helper's own
 * frames, then this program's JIT frame by its frame pointer (ORC has no
 * entries for JIT code), then the tracer's frames and the task's. Past the
 * helper's frames the walk is a function of where the program's frame is
 * (its rbp: fm), of the stack words the walk reads (each frame's return
 * address; a saved rbp where a frame's CFA is computed from rbp) and of the
 * ORC tables, which do not change. When every such word holds the value it
 * held, a new walk from the same fm finds the same frames: they are taken
 * from here, exact.
 *
 * From another fm: a syscall's frames start at a random depth (the
 * kernel's randomize_kstack_offset, on by default: do_syscall_64()
 * allocates 0 to 1023 bytes), so fm moves from one switch to the next.
 * Each address the walk reads is either relative to fm (its CFA comes from
 * rsp, or from an rbp that points below the random gap) or fixed (from an
 * rbp that points above it: do_syscall_64()'s own frame); a saved rbp is a
 * value of one class or the other. Kept with each word's class, a walk is
 * found again from any fm where every relative word (at fm + offset, and
 * as a value, less fm) and every fixed word holds what it held, and the
 * kernel's own checks hold as they did: each read inside the task's stack,
 * and the stack growing where a CFA changes class. Which class a saved rbp
 * gets does not make a walk right or wrong, only how often it is found
 * again: the last rbp a CFA is computed from (do_syscall_64()'s) is fixed,
 * and any below it relative.
 *
 * Which words: the walk is done again here, ORC entry by entry from the
 * kernel's own tables (__start_orc_unwind_ip, __start_orc_unwind, whose
 * addresses user space sets from kallsyms), and kept only where it found
 * exactly what bpf_get_stack() found, through frames of the kinds followed
 * here: calls whose CFA is rsp or rbp based, ending at the end-of-stack
 * hint of a kernel thread or at a user task's registers at the top of its
 * stack; in the core kernel's text (not modules), on the task's own stack.
 * Anything else (an interrupt's registers in mid-stack, a module, an ftrace
 * trampoline) is walked every time. A thread whose stack differs from its
 * last one pays a comparison: the walk is done again only when a stack
 * repeats, and from its third time it is kept.
 *
 * Included by stkrec.bpf.c after unwind.bpf.h (the verify flag,
 * count_stat()); x86-64 with the 6.4+ ORC layout only (the
 * rest walks).
 */
#ifndef STKREC_BPF_KSTACK_BPF_H
#define STKREC_BPF_KSTACK_BPF_H

#define KCACHE_FRAMES 32 /* a power of two: the index mask */
#define KCACHE_BP 4      /* saved rbp words a kept walk may depend on */
#define KCACHE_CROSS 4   /* CFAs that change class: the stack must grow */
#define KCACHE_SPAN 4096 /* bytes of stack a check reads at once, per class */
#define KCACHE_FIXED 0x8000 /* an offset below the stack's top, not from fm */

/* i & mask as an index the verifier sees bounded: the compiler drops a
 * mask it finds implied by an earlier test, and 6.1's verifier loses that
 * test's bound when i goes through the stack. */
#define KIDX(i, mask)                    \
	({                               \
		__u32 __i = (i);         \
		barrier_var(__i);        \
		__i & (mask);            \
	})

/* Set by user space before the attach; 0 keeps nothing. */
__u64 korc_ip;   /* __start_orc_unwind_ip: s32 offsets to each entry's address */
__u64 korc_nr;   /* its entries */
__u64 korc_tab;  /* __start_orc_unwind: the entries, 6 bytes each */
__u64 ktext_lo;  /* _stext, _etext: the core kernel's text */
__u64 ktext_hi;
const volatile bool kcache_on = false;

struct kcache_ent {
	__u64 sel;                  /* the syscall the task was in (orig_ax) */
	__u64 fm;                   /* the program's frame the walk began at */
	__u64 ips[KCACHE_FRAMES];   /* what bpf_get_stack() found */
	__u64 bpval[KCACHE_BP];     /* saved rbp values the walk depends on
				     * (less fm where bprel says so) */
	__u64 cross_fixed[KCACHE_CROSS]; /* a CFA that changed class, fixed */
	__u16 cross_rel[KCACHE_CROSS];   /* ... and the other, from fm */
	__u16 off[KCACHE_FRAMES];   /* ips[i] (i >= 1) read at fm + off[i], or
				     * (KCACHE_FIXED) off[i] bytes below the
				     * top of the task's stack */
	__u16 bpoff[KCACHE_BP];     /* where bpval[i] was read, as off */
	__u16 rspan, fspan;         /* bytes read from fm, and below the top */
	__u8 n;                     /* frames; 0: nothing */
	__u8 nbp, ncross;
	__u8 bprel;                 /* bit i: bpval[i] is relative to fm */
	__u8 cross_up;              /* bit i: the fixed CFA is the upper one */
	__u8 kept : 1,              /* off, bpoff known: a kept walk; else the
				     * last walk only, to tell a repeat */
	     at_fm : 1;             /* its end depends on fm: only from fm */
};
/* Two kept walks per kind: a thread often waits at two places in turn (a
 * read that blocks, a write preempted on its way out). The syscall the
 * thread is in says which to check. */
struct kcache_kind {
	struct kcache_ent e[2];     /* kept walks, or last walks (kept 0) */
	__u8 mru;                   /* the entry found or kept last */
};
struct kcache {
	struct kcache_kind k[2];    /* switch-outs, wakeups */
	__u64 lo, hi;               /* the task's stack (hi: the end of its
				     * registers), fixed for its life: read
				     * once, when the entry is made */
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kcache);
} kcache SEC(".maps");

/* The state of the walk done again (in the kcache_work of key, with the
 * frames it must find and what it read: the BPF stack has no room). */
struct kwalk {
	__u64 ip, sp, bp, fm, lo, hi, ptregs;
	__u64 bp_addr;       /* where bp was read */
	__s32 bp_step;       /* ... from frame i's CFA (-1: at fm) */
	__u64 b;             /* the last rbp a CFA came from: the boundary */
	__u32 n, nk, status;
	__u32 cfa;           /* bit i: frame i's CFA is fixed */
	__u8 user;           /* a user task: its walk ends at its registers */
	__u8 end_bp;         /* the walk ended at registers, CFA from rbp use
			      * end_bp - 1; 0: from rsp (or no registers) */
};
/* A check's copies of the stack (from fm, and the fixed part), and what a
 * walk read before it is kept: per CPU and kind (a switch program does not
 * nest in a waking one, nor either in itself). */
struct kcache_work {
	__u64 rel[KCACHE_SPAN / 8];
	__u64 fixed[KCACHE_SPAN / 8];
	__u64 k[KCACHE_FRAMES];     /* the frames the walk must find */
	__u64 addr[KCACHE_FRAMES];  /* where ips[i] was read (its CFA - 8) */
	__u64 bpaddr[KCACHE_BP];    /* where each rbp used was read */
	__u64 bpval[KCACHE_BP];
	__u8 cfa_bp[KCACHE_FRAMES]; /* frame i's CFA from rbp use j: j + 1 */
	__s8 bp_step[KCACHE_BP];    /* rbp use j read from frame i's CFA */
	__u8 nbp;
	__u8 hit;                   /* the entry the last check found */
	struct kwalk w;             /* the walk done again */
	struct kcache_ent ent;      /* ... as it will be kept */
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct kcache_work);
} kcache_work SEC(".maps");

struct kstack_frames {
	__u64 ips[KCACHE_FRAMES];
};

#if defined(__TARGET_ARCH_x86)

/* The kernel's struct orc_entry, 6.4 on: type 3 bits, then signal. */
struct orc_entry___k {
	__s16 sp_offset;
	__s16 bp_offset;
	unsigned int sp_reg : 4;
	unsigned int bp_reg : 4;
	unsigned int type : 3;
	unsigned int signal : 1;
} __attribute__((packed, preserve_access_index));

#define ORC_REG_UNDEFINED 0
#define ORC_REG_PREV_SP 1
#define ORC_REG_BP 4
#define ORC_REG_SP 5
#define ORC_TYPE_END_OF_STACK 1
#define ORC_TYPE_CALL 2
#define ORC_TYPE_REGS 3
#define KORC_FOUND (1ull << 63)
#define KORC_SEARCH 24 /* up to 16M entries */

/*
 * The frame pointer of the caller, from this function's own frame: the
 * x86 JIT keeps BPF's r10 in rbp and pushes the caller's rbp at entry. A
 * global function of under 64 bytes of stack, which no kernel moves to a
 * private stack. Called from each program's own body, it gives the
 * program's frame: where bpf_get_stack()'s walk of it begins.
 */
__noinline __u64 stkrec_kframe(void)
{
	__u64 fm = 0;
	void *fs;

	/* r10 is rbp here: the word it points to is the caller's rbp */
	asm volatile("%[fs] = r10" : [fs] "=r"(fs));
	if (bpf_probe_read_kernel(&fm, sizeof(fm), fs))
		return 0;
	return fm;
}

/*
 * The ORC entry of ip, as the kernel's __orc_find() gives it (the last
 * entry at or below ip): offsets in bits 0-31, sp_reg, bp_reg, type and
 * signal each in a byte above, KORC_FOUND set; 0 where none is found or the
 * kernel's entries have another layout.
 */
__noinline __u64 stkrec_korc(__u64 ip)
{
	__u32 lo = 0, hi, mid, i;
	__u64 a, e = 0;
	__s32 rel;
	__u16 b;

	if (!bpf_core_field_exists(struct orc_entry___k, signal) ||
	    bpf_core_type_size(struct orc_entry___k) != 6 || !korc_ip || korc_nr >> 24)
		return 0;
	hi = korc_nr;
	for (i = 0; i < KORC_SEARCH && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		a = korc_ip + 4ull * mid;
		if (bpf_probe_read_kernel(&rel, sizeof(rel), (void *)a))
			return 0;
		if (a + (__s64)rel <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || bpf_probe_read_kernel(&e, 6, (void *)(korc_tab + 6ull * (lo - 1))))
		return 0;
	b = e >> 32;
	return KORC_FOUND | (e & 0xffffffffull) | (__u64)(b & 15) << 32 |
	       (__u64)((b >> 4) & 15) << 40 | (__u64)((b >> 8) & 7) << 48 |
	       (__u64)((b >> 11) & 1) << 56;
}

/* The address of task's registers at the top of its stack, as a number
 * (the verifier keeps the helper's pointer a pointer through any cast). */
static __always_inline __u64 kregs_at(struct task_struct *task)
{
	void *p = (void *)bpf_task_pt_regs(task);
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

#define KW_GO 0
#define KW_END 1
#define KW_FAIL 2

/* Can the kernel read the word at addr (the task's own stack), and can it
 * be checked later (within KCACHE_SPAN of fm, or of the fixed words)? */
static __always_inline bool kw_word(const struct kwalk *w, __u64 addr)
{
	return addr >= w->lo && addr + 8 <= w->hi;
}

/* The walk uses bp: note the rbp use, 1 + its index, or 0 if it cannot. */
static __always_inline __u32 kw_use_bp(struct kwalk *w, struct kcache_work *wk)
{
	__u32 j = wk->nbp;

	if (j && wk->bpval[KIDX(j - 1, KCACHE_BP - 1)] == w->bp &&
	    wk->bp_step[KIDX(j - 1, KCACHE_BP - 1)] == w->bp_step)
		return j;
	if (j >= KCACHE_BP)
		return 0;
	wk->bpaddr[KIDX(j, KCACHE_BP - 1)] = w->bp_addr;
	wk->bpval[KIDX(j, KCACHE_BP - 1)] = w->bp;
	wk->bp_step[KIDX(j, KCACHE_BP - 1)] = w->bp_step;
	wk->nbp = j + 1;
	return j + 1;
}

/* One frame as the kernel's unwind_next_frame() takes it, or the end: a
 * global function, which the verifier checks once, not once per frame. */
static __always_inline __u32 kw_step(struct kcache_work *wk, struct kwalk *w)
{
	__u32 type, sp_reg, bp_reg, n = w->n, use = 0;
	__u64 o, psp, ra, bpa;
	__s16 spo, bpo;

	if (w->ip < ktext_lo || w->ip >= ktext_hi)
		return KW_FAIL;
	o = stkrec_korc(w->ip - 1); /* a return address: the call before it */
	if (!o)
		return KW_FAIL;
	spo = o & 0xffff;
	bpo = (o >> 16) & 0xffff;
	sp_reg = (o >> 32) & 0xff;
	bp_reg = (o >> 40) & 0xff;
	type = (o >> 48) & 0xff;
	if (type == ORC_TYPE_END_OF_STACK)
		return w->user ? KW_FAIL : KW_END;
	if (sp_reg == ORC_REG_SP) {
		psp = w->sp + spo;
	} else if (sp_reg == ORC_REG_BP && (use = kw_use_bp(w, wk))) {
		psp = w->bp + spo;
		w->b = w->bp;
	} else {
		return KW_FAIL;
	}
	/* a user task's registers at the top of its stack: the kernel's
	 * walk ends there (user mode) */
	if (type == ORC_TYPE_REGS) {
		w->end_bp = use;
		return w->user && psp == w->ptregs ? KW_END : KW_FAIL;
	}
	/* bp restored from rbp (not from the CFA) is not followed */
	if (type != ORC_TYPE_CALL || ((o >> 56) & 1) || psp <= w->sp || !kw_word(w, psp - 8) ||
	    n >= w->nk || n >= KCACHE_FRAMES ||
	    (bp_reg != ORC_REG_UNDEFINED && bp_reg != ORC_REG_PREV_SP) ||
	    bpf_probe_read_kernel(&ra, sizeof(ra), (void *)(psp - 8)) ||
	    ra != wk->k[KIDX(n, KCACHE_FRAMES - 1)])
		return KW_FAIL;
	if (bp_reg == ORC_REG_PREV_SP) {
		bpa = psp + bpo;
		if (!kw_word(w, bpa) || bpf_probe_read_kernel(&w->bp, sizeof(w->bp), (void *)bpa))
			return KW_FAIL;
		w->bp_addr = bpa;
		w->bp_step = n;
	}
	wk->addr[KIDX(n, KCACHE_FRAMES - 1)] = psp - 8;
	wk->cfa_bp[KIDX(n, KCACHE_FRAMES - 1)] = use;
	w->ip = ra;
	w->sp = psp;
	w->n = n + 1;
	return KW_GO;
}

/* The next frame of the walk in the kcache_work of key: 1 at its end. */
__noinline int stkrec_kw_step(__u32 key)
{
	struct kcache_work *wk = bpf_map_lookup_elem(&kcache_work, &key);

	if (!wk)
		return 1;
	wk->w.status = kw_step(wk, &wk->w);
	return wk->w.status != KW_GO;
}

static long kw_loop(__u64 i, void *arg)
{
	return stkrec_kw_step(*(__u32 *)arg) ? 1 : 0; /* a callback returns 0 or 1 */
}

/*
 * Walk again from fm the n frames k that bpf_get_stack() found for the
 * current task, noting in wk the words each was read from: 1 when the
 * walk found exactly k through frames it follows, else 0.
 */
static __always_inline int kw_walk(struct kcache_work *wk, __u32 *key,
				   const struct kstack_frames *k, __u32 n, __u64 fm,
				   struct task_struct *task)
{
	struct kwalk *w = &wk->w;

	__builtin_memset(w, 0, sizeof(*w));
	w->fm = fm;

	w->ptregs = kregs_at(task);
	w->lo = (__u64)BPF_CORE_READ(task, stack);
	w->hi = w->ptregs + sizeof(struct pt_regs);
	w->user = !(task->flags & STKREC_PF_KTHREAD);
	w->nk = n;
	*(struct kstack_frames *)wk->k = *k;
	wk->nbp = 0;
	/* k[0] is the program's own call of the helper; k[1] its caller, by
	 * the frame pointer fm (the kernel's orc_fp_entry) */
	if (n < 3 || !kw_word(w, fm) || !kw_word(w, fm + 8) ||
	    bpf_probe_read_kernel(&w->bp, sizeof(w->bp), (void *)fm) ||
	    bpf_probe_read_kernel(&w->ip, sizeof(w->ip), (void *)(fm + 8)) || w->ip != k->ips[1])
		return 0;
	w->sp = fm + 16;
	w->bp_addr = fm;
	w->bp_step = -1;
	wk->addr[1] = fm + 8;
	wk->cfa_bp[1] = 0;
	w->n = 2;
	bpf_loop(KCACHE_FRAMES, kw_loop, key, 0);
	return w->status == KW_END && w->n == n;
}

/* Where addr is kept, as an offset of its class (fixed: below the top of
 * the stack), that class's span grown to hold it. */
static __always_inline __u16 kw_off(struct kcache_ent *e, const struct kwalk *w, __u64 addr,
				    __u32 fixed)
{
	__u64 o = fixed ? w->hi - addr : addr + 8 - w->fm;

	if (fixed) {
		e->fspan = o > e->fspan ? o : e->fspan;
		return o | KCACHE_FIXED;
	}
	e->rspan = o > e->rspan ? o : e->rspan;
	return o - 8;
}

/*
 * Frame i of the walk done again, as it will be kept (wk->ent): where
 * its return address was read, of which class (the class of its CFA: that
 * of the frame below when from rsp, of the rbp value when from rbp; an rbp
 * value is fixed at or above the last one a CFA came from), and where its
 * CFA changes class, the stack's growth to check from any fm. A global
 * function, called for each frame in order.
 */
static __always_inline int kw_frame(struct kcache_work *wk, struct kwalk *w, __u32 i)
{
	struct kcache_ent *e = &wk->ent;
	__u32 j, c, up, below;
	__u64 lower, upper;

	i &= KCACHE_FRAMES - 1;
	if (i < 1)
		return 0;
	j = wk->cfa_bp[i];
	below = i > 1 ? (w->cfa >> (i - 1)) & 1 : 0;
	up = j ? wk->bpval[KIDX(j - 1, KCACHE_BP - 1)] >= w->b : below;
	w->cfa |= up << i;
	e->off[i] = kw_off(e, w, wk->addr[i], up);
	if (up == below)
		return 1;
	c = e->ncross;
	if (c >= KCACHE_CROSS)
		return 0;
	lower = wk->addr[KIDX(i - 1, KCACHE_FRAMES - 1)] + 8;
	upper = wk->addr[i] + 8;
	e->cross_fixed[KIDX(c, KCACHE_CROSS - 1)] = up ? upper : lower;
	e->cross_rel[KIDX(c, KCACHE_CROSS - 1)] = (up ? lower : upper) - w->fm;
	e->cross_up |= up << (c & (KCACHE_CROSS - 1));
	e->ncross = c + 1;
	return 1;
}

/* Frame i of the walk in the kcache_work of key, kept: 1 when done (the
 * last frame, or a failure in its status). */
__noinline int stkrec_kw_frame(__u32 key, __u32 i)
{
	struct kcache_work *wk = bpf_map_lookup_elem(&kcache_work, &key);

	if (!wk)
		return 1;
	if (i >= wk->w.n)
		return 1;
	if (!kw_frame(wk, &wk->w, i)) {
		wk->w.status = KW_FAIL;
		return 1;
	}
	return 0;
}

static long kw_frame_loop(__u64 i, void *arg)
{
	return stkrec_kw_frame(*(__u32 *)arg, i + 1) ? 1 : 0;
}

/* The rbp values the walk in the kcache_work of key depends on, into its
 * ent, after its frames: each read where its CFA's class says, each of the
 * class its value says. A global function. */
__noinline int stkrec_kw_bp(__u32 key)
{
	struct kcache_work *wk = bpf_map_lookup_elem(&kcache_work, &key);
	struct kcache_ent *e;
	struct kwalk *w;
	__u32 i, s, fixed;

	if (!wk)
		return 0;
	e = &wk->ent;
	w = &wk->w;
	e->bprel = 0;
	for (i = 0; i < KCACHE_BP; i++) {
		if (i >= wk->nbp)
			break;
		s = wk->bp_step[i];
		fixed = wk->bp_step[i] >= 0 ? (w->cfa >> (s & (KCACHE_FRAMES - 1))) & 1 : 0;
		e->bpoff[i] = kw_off(e, w, wk->bpaddr[i], fixed);
		e->bpval[i] = wk->bpval[i];
		if (wk->bpval[i] < w->b || !w->b) {
			e->bpval[i] -= w->fm;
			e->bprel |= 1u << i;
		}
	}
	e->nbp = wk->nbp;
	return 1;
}

/* The walk w did again, in wk, as it will be kept (wk->ent): 1 when it
 * can be checked (each class within KCACHE_SPAN), else 0. */
static __always_inline int kw_keep(struct kcache_work *wk, __u32 *key)
{
	struct kcache_ent *e = &wk->ent;
	struct kwalk *w = &wk->w;
	__u32 last;

	if (w->end_bp)
		w->b = wk->bpval[KIDX(w->end_bp - 1, KCACHE_BP - 1)];
	e->fm = w->fm;
	e->rspan = e->fspan = 0;
	e->ncross = e->cross_up = 0;
	w->cfa = 0; /* frame 1's CFA is fm + 16 */
	w->status = KW_END;
	bpf_loop(KCACHE_FRAMES, kw_frame_loop, key, 0);
	if (w->status != KW_END)
		return 0;
	stkrec_kw_bp(*key);
	/* the registers the walk ended at: where from fm, if relative */
	last = (w->cfa >> ((w->n - 1) & (KCACHE_FRAMES - 1))) & 1;
	e->at_fm = w->end_bp ? wk->bpval[KIDX(w->end_bp - 1, KCACHE_BP - 1)] < w->b : !last;
	return e->rspan < KCACHE_SPAN && e->fspan < KCACHE_SPAN;
}

/* The task's kept walks; made with its stack's bounds when create. */
static __always_inline struct kcache *kcache_get(struct task_struct *task, bool create)
{
	struct kcache *kc = bpf_task_storage_get(&kcache, task, NULL,
						 create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);

	if (kc && create && !kc->hi) {
		kc->lo = (__u64)BPF_CORE_READ(task, stack);
		kc->hi = kregs_at(task) + sizeof(struct pt_regs);
	}
	return kc;
}

static __always_inline struct kcache_kind *kcache_kind_of(struct kcache *kc, __u32 kind)
{
	return &kc->k[kind == STKREC_KIND_WAKEUP];
}

/* The syscall the current task is in (orig_ax; -1 outside one, kernel
 * threads' 0): which kept walk to check. */
static __always_inline __u64 kcache_sel(struct task_struct *task)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(task);

	return regs->orig_ax;
}

/* Would a walk from fm read in the task's stack [lo, hi) where e's did, its
 * stack growing where a CFA changes class? */
static __always_inline bool kcache_fits(const struct kcache_ent *e, __u64 fm, __u64 lo, __u64 hi)
{
	__u64 r;
	__u32 i;

	if (fm == e->fm)
		return true;
	if (e->at_fm || fm < lo || fm + e->rspan > hi)
		return false;
	for (i = 0; i < KCACHE_CROSS; i++) {
		if (i >= e->ncross)
			break;
		r = fm + e->cross_rel[i];
		if (((e->cross_up >> i) & 1) ? e->cross_fixed[i] <= r : r <= e->cross_fixed[i])
			return false;
	}
	return true;
}

/* The word off of e, from the copies: from fm, or fspan bytes below the
 * top. */
static __always_inline __u64 kcache_word(const struct kcache_work *wk, __u16 off, __u32 fspan)
{
	__u32 j;

	if (off & KCACHE_FIXED)
		j = ((fspan - (off & ~KCACHE_FIXED)) / 8) & (KCACHE_SPAN / 8 - 1);
	else
		j = (off / 8) & (KCACHE_SPAN / 8 - 1);
	return off & KCACHE_FIXED ? wk->fixed[j] : wk->rel[j];
}

/*
 * Would a walk from the program's frame fm, in the current task's stack
 * [lo, hi), find e's frames? Its words read from fm and below the top at
 * once, each holding its value (relative ones less fm). 1 if so. A global
 * function: the verifier checks its loops once.
 */
__noinline int stkrec_kcache_check(const struct kcache_ent *e, __u64 fm, __u64 lo, __u64 hi,
				   __u32 key)
{
	struct kcache_work *wk = bpf_map_lookup_elem(&kcache_work, &key);
	__u32 rspan, fspan, i;
	__u64 v;

	if (!e || !wk || !e->kept || e->n < 3 || e->n > KCACHE_FRAMES ||
	    !kcache_fits(e, fm, lo, hi))
		return 0;
	rspan = e->rspan;
	fspan = e->fspan;
	if (!rspan || rspan >= KCACHE_SPAN || fspan >= KCACHE_SPAN)
		return 0;
	/* the masks the verifier needs, not dropped as implied */
	barrier_var(rspan);
	barrier_var(fspan);
	if (bpf_probe_read_kernel(wk->rel, rspan & (KCACHE_SPAN - 1), (void *)fm) ||
	    (fspan && bpf_probe_read_kernel(wk->fixed, fspan & (KCACHE_SPAN - 1),
					    (void *)(hi - fspan))))
		return 0;
	for (i = 1; i < KCACHE_FRAMES; i++) {
		if (i >= e->n)
			break;
		if (kcache_word(wk, e->off[i], fspan) != e->ips[i])
			return 0;
	}
	for (i = 0; i < KCACHE_BP; i++) {
		if (i >= e->nbp)
			break;
		v = kcache_word(wk, e->bpoff[i], fspan);
		if (((e->bprel >> i) & 1) ? v - fm != e->bpval[i] : v != e->bpval[i])
			return 0;
	}
	return 1;
}

/*
 * The current task's kernel stack from one of its kept walks of kind, into
 * out, if a new walk from the program's frame fm would find it: the
 * frames, or 0. The entries of the syscall the task is in are checked, the
 * one found last first.
 */
__noinline int stkrec_kstack_kept(struct kstack_frames *out, __u64 fm, __u32 kind)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 key = kind == STKREC_KIND_WAKEUP, i, j;
	struct kcache_work *wk;
	struct kcache_kind *kk;
	struct kcache_ent *e;
	struct kcache *kc;
	__u64 sel;

	if (!out || !fm || !kcache_on || !ktext_lo)
		return 0;
	kc = kcache_get(task, false);
	wk = bpf_map_lookup_elem(&kcache_work, &key);
	if (!kc || !wk)
		return 0;
	kk = kcache_kind_of(kc, kind);
	sel = kcache_sel(task);
	for (i = 0; i < 2; i++) {
		j = (kk->mru ^ i) & 1;
		e = &kk->e[j];
		if (e->sel != sel || !stkrec_kcache_check(e, fm, kc->lo, kc->hi, key))
			continue;
		kk->mru = j;
		wk->hit = j;
		*out = *(const struct kstack_frames *)e->ips;
		count_stat(STKREC_STAT_KSTACK_CACHED + kind);
		return e->n;
	}
	return 0;
}

/* Are the n frames of a those of b (n of them too)? 1 if so: a global
 * function, its loop checked once. */
__noinline int stkrec_kframes_same(const struct kstack_frames *a, const struct kcache_ent *b,
				   __u32 n)
{
	__u32 i;

	if (!a || !b || b->n != n)
		return 0;
	for (i = 0; i < KCACHE_FRAMES; i++) {
		if (i >= n)
			break;
		if (a->ips[i] != b->ips[i])
			return 0;
	}
	return 1;
}

/* The walk w did again, kept in e for syscall sel: its frames k. */
static __always_inline void kcache_set(struct kcache_ent *e, const struct kcache_work *wk,
				       const struct kstack_frames *k, __u32 n, __u64 sel)
{
	e->kept = 0;
	/* whole: straight-line copies */
	*(struct kstack_frames *)e->ips = *k;
	__builtin_memcpy(e->off, wk->ent.off, sizeof(e->off));
	__builtin_memcpy(e->bpoff, wk->ent.bpoff, sizeof(e->bpoff));
	__builtin_memcpy(e->bpval, wk->ent.bpval, sizeof(e->bpval));
	__builtin_memcpy(e->cross_fixed, wk->ent.cross_fixed, sizeof(e->cross_fixed));
	__builtin_memcpy(e->cross_rel, wk->ent.cross_rel, sizeof(e->cross_rel));
	e->sel = sel;
	e->fm = wk->ent.fm;
	e->rspan = wk->ent.rspan;
	e->fspan = wk->ent.fspan;
	e->n = n;
	e->nbp = wk->ent.nbp;
	e->ncross = wk->ent.ncross;
	e->bprel = wk->ent.bprel;
	e->cross_up = wk->ent.cross_up;
	e->at_fm = wk->ent.at_fm;
	e->kept = 1;
}

/*
 * After a walk of the current task's kernel stack from the program's frame
 * fm found the n frames k: kept when an entry of kind holds these frames
 * (kept, or a last walk) and a walk done again here finds them too; else
 * noted as a last walk, in an entry that keeps none (of two, the one
 * used least lately), else in the one used least lately. hit: a kept walk
 * gave k before this walk (tests): counted when the two differ. A global
 * function.
 */
__noinline int stkrec_kstack_note(const struct kstack_frames *k, __u32 n, __u64 fm, __u32 kind,
				  __u32 hit)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 key = kind == STKREC_KIND_WAKEUP;
	struct kcache_work *wk = bpf_map_lookup_elem(&kcache_work, &key);
	struct kcache_kind *kk;
	struct kcache_ent *e;
	struct kcache *kc;
	__u64 sel;
	__u32 j;

	if (!k || !wk || !kcache_on || !ktext_lo || n < 3 || n > KCACHE_FRAMES)
		return 0;
	kc = kcache_get(task, true);
	if (!kc)
		return 0;
	kk = kcache_kind_of(kc, kind);
	if (hit) {
		if (!stkrec_kframes_same(k, &kk->e[KIDX(wk->hit, 1)], n))
			count_stat(STKREC_STAT_KCACHE_WRONG);
		return 0;
	}
	sel = kcache_sel(task);
	j = stkrec_kframes_same(k, &kk->e[0], n) ? 0 : stkrec_kframes_same(k, &kk->e[1], n) ? 1 : 2;
	if (j == 2) { /* the one found least lately, of those keeping none */
		j = kk->e[0].kept == kk->e[1].kept ? !kk->mru : !kk->e[1].kept;
		e = &kk->e[KIDX(j, 1)];
		e->kept = 0;
		*(struct kstack_frames *)e->ips = *k;
		e->n = n;
		kk->mru = j & 1;
		return 0;
	}
	e = &kk->e[KIDX(j, 1)];
	e->kept = 0;
	if (!kw_walk(wk, &key, k, n, fm, task) || !kw_keep(wk, &key))
		return 0;
	kcache_set(e, wk, k, n, sel);
	kk->mru = j & 1;
	return 1;
}

#else
__noinline __u64 stkrec_kframe(void)
{
	return 0;
}
__noinline int stkrec_kstack_kept(struct kstack_frames *out, __u64 fm, __u32 kind)
{
	return 0;
}
__noinline int stkrec_kstack_note(const struct kstack_frames *k, __u32 n, __u64 fm, __u32 kind,
				  __u32 hit)
{
	return 0;
}
#endif /* __TARGET_ARCH_x86 */
#endif /* STKREC_BPF_KSTACK_BPF_H */
