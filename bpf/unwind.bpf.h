/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --call-graph dwarf: user stacks unwound in the kernel from the rows
 * cfi/ builds out of each binary's call-frame information (bpf/stkrec.h
 * has the layout). Per frame: the process's mapping by binary search in its
 * `umaps` entry, the file's row by binary search in `cfi_rows`, then the
 * caller's registers from the row: CFA, return address at CFA - 8, rbp
 * where the row says it was saved. Frames in memory without rows (JIT
 * code, anonymous memory) and in code no CFI covers (a GAP row, or below
 * the file's first row: V8's embedded builtins, assembly without CFI) are
 * followed with the frame pointer.
 *
 * The unwinder is x86-64 only (the maps exist everywhere, so that user
 * space builds alike); included by stkrec.bpf.c, which supplies
 * count_stat().
 */
#ifndef STKREC_BPF_UNWIND_BPF_H
#define STKREC_BPF_UNWIND_BPF_H

const volatile bool dwarf_unwind = false;

/*
 * The rows, in chunks of STKREC_CFI_CHUNK_ROWS that user space creates as
 * files are loaded and writes through mmap(): row i is entry
 * i % STKREC_CFI_CHUNK_ROWS of chunk i / STKREC_CFI_CHUNK_ROWS. The number
 * of chunks is sized by record/ before load.
 */
struct cfi_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, STKREC_CFI_CHUNK_ROWS);
	/* sizes, not types: the struct behind two pointers is only a
	 * forward declaration in BTF */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct stkrec_cfi_row));
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct cfi_chunk);
} cfi_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stkrec_umaps);
} umaps SEC(".maps");

/* Not preallocated: user space alone adds entries, and the 64k entries the
 * table may hold took 10 ms of every start to allocate (and 5 MB). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct stkrec_ufile_key);
	__type(value, struct stkrec_ufile);
} ufiles SEC(".maps");

/*
 * What bpf_find_vma() found, for the next events of the process: key tgid
 * and the address's 2 MiB region, valid while the process keeps its
 * address space (an exec replaces mm).
 */
struct vcache_key {
	__u32 tgid;
	__u32 region;
};
struct vcache_val {
	__u64 mm;
	struct stkrec_umap m;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct vcache_key);
	__type(value, struct vcache_val);
} vcache SEC(".maps");

/* vcache's entry being made, per CPU and kind (and one for the sleepable
 * walks of another task's stack): not on the BPF stack, whose 512 bytes
 * the whole call chain shares where the kernel gives programs no stack of
 * their own (before 6.13, or a JIT without), and the kept walk's chain
 * uses nearly all. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STKREC_KIND_NR + 1);
	__type(key, __u32);
	__type(value, struct vcache_val);
} unwind_vma SEC(".maps");

/*
 * A thread's last user walks, of the kinds walked in its own context: two
 * of its switch-outs, two of its wakeups of others. Each holds the
 * registers it started from (rbp only where the walk used it before a
 * frame restored it), the address space, the generation of the process's
 * `umaps` entry, every stack word it read with the value read, and the
 * frames found. A walk is a function of exactly these (the rows are append
 * only, record/unwind.c): when the registers, the address space and the
 * entry are the same and every word holds the same value, a new walk would
 * read the same words and find the same frames, so they are taken from
 * here, exact. Kept only for a walk that ended cleanly, read at most
 * UCACHE_SLOTS words, found at most UCACHE_FRAMES frames, and took every
 * mapping from the process's entry (the kernel's own mappings, asked or in
 * vcache, have no generation).
 */
#define UCACHE_FRAMES 32
#define UCACHE_SLOTS 64 /* a power of two: the index mask */
/* Two entries per kind: a thread often blocks at two places in turn (a
 * read, a write preempted on its way out), or wakes others from two. */
#define UCACHE_OFFCPU 0 /* entries 0 and 1 */
#define UCACHE_WAKEUP 2 /* 2 and 3 */
#define UCACHE_ENTS 4
const volatile bool ucache_on = false;
const volatile bool test_ucache_verify = false; /* tests: walk anyway, compare */

/* A check reads the words in windows, each one copy: a word this close
 * past a window joins it (copying the gap costs about what another copy
 * would), at most UCACHE_WINS of them and UCACHE_SPAN bytes in all (a
 * power of two); else word by word. */
#define UCACHE_WINS 8
#define UCACHE_GAP 512
#define UCACHE_SPAN 4096

/* The stack words a walk read, and the values read. */
struct ucache_words {
	__u64 addr[UCACHE_SLOTS];
	__u64 val[UCACHE_SLOTS];
};

struct ucache_ent {
	__u64 mm, pc, sp, fp;
	__u64 wlo[UCACHE_WINS];   /* each window's first word */
	__u32 gen;
	__u16 n;                  /* frames; 0: nothing kept */
	__u16 wlen[UCACHE_WINS];  /* its bytes */
	__u16 wbase[UCACHE_WINS]; /* where its copy goes in ucache_span */
	__u16 wof[UCACHE_SLOTS];  /* word i's place there, in words */
	__u8 nwin;                /* windows; 0: word by word */
	__u8 nslots;
	__u8 fp_used : 1, fp0_used : 1; /* fp0_used: fp must be the same */
	__u64 ips[UCACHE_FRAMES];
	struct ucache_words w;
};
struct ucache {
	struct ucache_ent e[UCACHE_ENTS];
	__u8 mru; /* bit k: of kind k's two (0 switch-outs, 1 wakeups), the
		   * one found or kept last */
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ucache);
} ucache SEC(".maps");

/* The words each walk reads, per CPU and kind: a program of one kind does
 * not nest in itself, and one that interrupts another (a CPU sample's, in
 * an NMI) writes its own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STKREC_KIND_NR);
	__type(key, __u32);
	__type(value, struct ucache_words);
} ucache_rec SEC(".maps");

/* The windows' copies (one per CPU: only the switch and waking programs
 * read them, and neither runs inside the other); twice UCACHE_SPAN, for
 * the verifier, which bounds a window's place and length apart. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2 * UCACHE_SPAN / 8]);
} ucache_span SEC(".maps");

#if defined(__TARGET_ARCH_x86)
#define UNWIND_GO 0
#define UNWIND_END 1   /* the outermost frame: a clean end */
#define UNWIND_TRUNC 2 /* cannot go on: the marker ends the stack */
#define UNWIND_VMA 3   /* pc in no known mapping: ask the kernel, then go on */

#define UMAP_SEARCH 9  /* log2(STKREC_MAX_UMAPS) + 1 */
#define ROW_SEARCH 25  /* up to 16M rows per file */
#define USER_TOP 0x800000000000ull /* x86-64 user addresses are below */
#define UNWIND_NO_REC 0xffffffff /* unwind_ctx.kind: the words read are not kept */

struct unwind_ctx {
	__u64 *ips;          /* the event's frames */
	__u64 mm;            /* the task's address space, for vcache */
	__u32 tgid;
	__u32 kind;          /* ucache_rec's key: the words read go there, */
			     /* UNWIND_NO_REC: nowhere (always with cross) */
	__u64 pc, sp, fp;
	__u32 n;             /* frames written */
	__u32 status;
	bool exact;          /* pc is not a return address (frame 0, signals) */
	bool fp_used;        /* a frame was followed by frame pointer */
	bool vma_asked;      /* bpf_find_vma() was called (once per event) */
	struct stkrec_umap vma; /* the mapping it found, nr_rows 0 if none */
	struct task_struct *task; /* whose memory: with cross, another task's */
	__u32 nslots;
	bool uncached;         /* the walk cannot be kept */
	bool fp_restored;      /* fp no longer the starting register's */
	bool fp0_used;         /* the starting rbp was used: it must be the same */
};

/* The index in ms of the mapping holding addr, -1 if none. */
static __always_inline int umap_search(const struct stkrec_umaps *ms, __u64 addr)
{
	__u32 lo = 0, hi, mid, i;

	hi = ms->nr;
	if (hi > STKREC_MAX_UMAPS)
		return -1;
	/* the last mapping starting at or below addr */
	for (i = 0; i < UMAP_SEARCH && lo < hi; i++) {
		mid = (lo + hi) / 2;
		if (ms->m[mid & (STKREC_MAX_UMAPS - 1)].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	lo = (lo - 1) & (STKREC_MAX_UMAPS - 1);
	return addr < ms->m[lo].end ? lo : -1;
}

/* umap_search() as a global function, for the reason given at
 * stkrec_row_find(). */
__noinline int stkrec_umap_find(const struct stkrec_umaps *ms, __u64 addr)
{
	return ms ? umap_search(ms, addr) : -1;
}

/* inl (a constant): the search inlined, in stkrec_ustep() (whose frame
 * must leave room for no other: see there), else the global function */
static __always_inline const struct stkrec_umap *umap_find(const struct stkrec_umaps *ms,
							   __u64 addr, const bool inl)
{
	int i;

	if (!ms)
		return NULL;
	i = inl ? umap_search(ms, addr) : stkrec_umap_find(ms, addr);
	if (i < 0)
		return NULL;
	return &ms->m[i & (STKREC_MAX_UMAPS - 1)];
}

/* Row i, NULL when its chunk does not exist. Both lookups are inlined
 * (the chunks all have the template's size and flags). */
static __always_inline const struct stkrec_cfi_row *row_at(__u32 i)
{
	__u32 c = i / STKREC_CFI_CHUNK_ROWS, k = i % STKREC_CFI_CHUNK_ROWS;
	void *chunk = bpf_map_lookup_elem(&cfi_rows, &c);

	if (!chunk)
		return NULL;
	return bpf_map_lookup_elem(chunk, &k);
}

/* The index of the last row at or below vaddr among nr rows from first,
 * -1 if none. */
static __always_inline int row_search(__u32 first, __u32 nr, __u32 vaddr)
{
	__u32 lo = first, hi = first + nr, mid, i;
	const struct stkrec_cfi_row *row;

	if (hi < lo)
		return -1;
	for (i = 0; i < ROW_SEARCH && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		row = row_at(mid);
		if (!row)
			return -1;
		if (row->pc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first)
		return -1; /* below the file's first row */
	return lo - 1;
}

/*
 * row_search() as a global function, which the verifier checks once per
 * program with nothing known of its arguments, where the same loop inlined
 * in each frame's step was checked again for every state reaching it.
 */
__noinline int stkrec_row_find(__u32 first, __u32 nr, __u32 vaddr)
{
	return row_search(first, nr, vaddr);
}

/* inl: as at umap_find() */
static __always_inline const struct stkrec_cfi_row *row_find(const struct stkrec_umap *m,
							     __u64 vaddr, const bool inl)
{
	__u32 i;
	int r;

	if (vaddr >> 32)
		return NULL;
	r = inl ? row_search(m->first, m->nr_rows, vaddr) :
		  stkrec_row_find(m->first, m->nr_rows, vaddr);
	if (r < 0)
		return NULL;
	i = r;
	return row_at(i);
}

/* cross (a constant at every call): the memory of c->task, which is not
 * the current task; only sleepable programs may read it. */
static __always_inline int read_user_u64(struct unwind_ctx *c, struct ucache_words *w,
					 __u64 addr, __u64 *v, const bool cross)
{
	__u32 i = c->nslots;
	int err;

	if (cross)
		return bpf_copy_from_user_task(v, sizeof(*v), (const void *)addr, c->task, 0);
	err = bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
	if (!w || c->uncached)
		return err;
	if (i >= UCACHE_SLOTS) {
		c->uncached = true;
		return err;
	}
	c->nslots = i + 1;
	/* the mask for verifiers that lose the bound above when i is
	 * spilled (6.1), which the compiler would drop as implied */
	barrier_var(i);
	i &= UCACHE_SLOTS - 1;
	w->addr[i] = addr;
	w->val[i] = *v;
	return err;
}

/* The caller by the frame-pointer convention: code without rows. rbp must
 * point into the stack above rsp, 8-aligned, else it is no frame pointer
 * and the stack ends with the marker. */
static __always_inline __u32 step_fp(struct unwind_ctx *c, struct ucache_words *w, const bool cross)
{
	__u64 ra, fp;

	c->fp_used = true;
	c->fp0_used |= !c->fp_restored;
	if (!c->fp)
		return UNWIND_END;
	if (c->fp < c->sp || (c->fp & 7) || read_user_u64(c, w, c->fp + 8, &ra, cross) ||
	    read_user_u64(c, w, c->fp, &fp, cross))
		return UNWIND_TRUNC;
	c->sp = c->fp + 16;
	c->fp = fp;
	c->fp_restored = true;
	c->pc = ra;
	c->exact = false;
	return UNWIND_GO;
}

/* __restore_rt: the interrupted registers are in the ucontext at rsp
 * (uc_mcontext at 40: rbp +80, rsp +120, rip +128). */
static __always_inline __u32 step_signal(struct unwind_ctx *c, struct ucache_words *w,
					 const bool cross)
{
	__u64 fp, sp, pc;

	if (read_user_u64(c, w, c->sp + 120, &fp, cross) ||
	    read_user_u64(c, w, c->sp + 160, &sp, cross) ||
	    read_user_u64(c, w, c->sp + 168, &pc, cross))
		return UNWIND_TRUNC;
	c->fp = fp;
	c->fp_restored = true;
	c->sp = sp;
	c->pc = pc;
	c->exact = true;
	return UNWIND_GO;
}

static __always_inline __u32 step_row(struct unwind_ctx *c, struct ucache_words *w,
				      const struct stkrec_cfi_row *row, const bool cross)
{
	__u64 cfa, ra, fp = c->fp;

	switch (row->kind) {
	case STKREC_CFA_SP:
		cfa = c->sp + row->cfa_off;
		break;
	case STKREC_CFA_FP:
		cfa = c->fp + row->cfa_off;
		c->fp0_used |= !c->fp_restored;
		break;
	case STKREC_CFA_PLT:
		cfa = c->sp + 8 + ((c->pc & 15) >= 11 ? 8 : 0);
		break;
	case STKREC_CFA_SIGNAL:
		return step_signal(c, w, cross);
	case STKREC_CFA_END:
		return UNWIND_END;
	case STKREC_CFA_GAP:
		return step_fp(c, w, cross);
	default:
		return UNWIND_TRUNC;
	}
	if (cfa <= c->sp || read_user_u64(c, w, cfa - 8, &ra, cross))
		return UNWIND_TRUNC;
	if (row->fp_off && read_user_u64(c, w, cfa + (__s64)row->fp_off * 8, &fp, cross))
		return UNWIND_TRUNC;
	c->fp_restored |= row->fp_off != 0;
	c->sp = cfa;
	c->fp = fp;
	c->pc = ra;
	c->exact = false;
	return UNWIND_GO;
}

static __always_inline bool in_map(const struct stkrec_umap *m, __u64 addr)
{
	return m->nr_rows && addr >= m->start && addr < m->end;
}

/* The mapping of look: the process's table, else what the kernel said,
 * in this event or an earlier one. */
static __always_inline const struct stkrec_umap *frame_map(struct unwind_ctx *c,
							   const struct stkrec_umaps *maps,
							   __u64 look, const bool inl)
{
	const struct stkrec_umap *m = umap_find(maps, look, inl);
	struct vcache_key k = { .tgid = c->tgid, .region = look >> 21 };
	const struct vcache_val *v;

	if (m)
		return m;
	c->uncached = true; /* not from the process's entry */
	if (in_map(&c->vma, look))
		return &c->vma;
	v = bpf_map_lookup_elem(&vcache, &k);
	if (v && v->mm == c->mm && in_map(&v->m, look))
		return &v->m;
	return NULL;
}

/* One frame: record pc, then find the caller. */
static __always_inline long step(struct unwind_ctx *c, __u64 *ips, const struct stkrec_umaps *maps,
				 struct ucache_words *w, const bool cross)
{
	const struct stkrec_cfi_row *row;
	const struct stkrec_umap *m;
	__u32 n = c->n;
	__u64 look;

	/* one slot stays free for the marker */
	if (n >= STKREC_MAX_STACK - 1) {
		c->status = UNWIND_TRUNC;
		return 1;
	}
	/* a return address may be past its function's end (noreturn calls):
	 * the call instruction is one byte before it */
	look = c->exact ? c->pc : c->pc - 1;
	/* fp recordings load no rows: the verifier drops what follows them */
	m = dwarf_unwind ? frame_map(c, maps, look, !cross) : NULL;
	if (!m && !c->vma_asked && dwarf_unwind) {
		c->status = UNWIND_VMA; /* this frame again, once the kernel said */
		return 1;
	}
	ips[n] = c->pc;
	c->n = n + 1;
	row = m && m->nr_rows ? row_find(m, look - m->bias, !cross) : NULL;
	c->status = row ? step_row(c, w, row, cross) : step_fp(c, w, cross);
	if (c->status == UNWIND_GO && (!c->pc || c->pc >= USER_TOP))
		c->status = c->pc ? UNWIND_TRUNC : UNWIND_END;
	return c->status != UNWIND_GO;
}

struct unwind_frames {
	__u64 ips[STKREC_MAX_STACK];
};

/*
 * One step of the current task's walk: a global function, which the
 * verifier checks once per program with nothing known of c, where the
 * step inlined in the bpf_loop() callback was checked again for every
 * state of the program reaching the loop (instructions processed, on
 * 6.18: the switch program 48.4k so, 36.7k now; all programs 150k, 123k;
 * a start's CPU 0.31 s, 0.26 s). Its map values are found again from c's
 * keys, its pointers being unknown here.
 *
 * Its frame is the last one the stack allows: on 6.1, which rounds each
 * frame up to 32 bytes, the switch program (192), stkrec_unwind_kept()
 * (192), the callback (32) and this one (96) make the 512 the verifier
 * takes. So the searches are inlined here (inl), not called, and what
 * unwind_ctx holds is kept to what a walk needs.
 */
__noinline int stkrec_ustep(struct unwind_ctx *c, struct unwind_frames *f)
{
	const struct stkrec_umaps *maps;
	struct ucache_words *rec = NULL;
	__u32 key; /* one slot for both keys: 6.1 takes no key in c */

	if (!c || !f)
		return 1;
	key = c->tgid;
	maps = bpf_map_lookup_elem(&umaps, &key);
	key = c->kind;
	if (key < STKREC_KIND_NR)
		rec = bpf_map_lookup_elem(&ucache_rec, &key);
	return step(c, f->ips, maps, rec, false);
}

/* bpf_loop()'s context for stkrec_ustep(): f outlives the calls, which
 * leave what c holds unknown */
struct ustep_args {
	struct unwind_ctx *c;
	struct unwind_frames *f;
};

/* unwind_step_task()'s: another task's stack, the step inlined */
struct ustep_task_args {
	struct unwind_ctx *c;
	const struct stkrec_umaps *maps;
};

/* bpf_loop() callbacks: the current task's stack, another task's. */
static long unwind_step(__u64 i, void *arg)
{
	struct ustep_args *a = arg;

	return stkrec_ustep(a->c, a->f) ? 1 : 0;
}

static long unwind_step_task(__u64 i, void *arg)
{
	struct ustep_task_args *a = arg;

	return step(a->c, a->c->ips, a->maps, NULL, true);
}

/* One bpf_loop() of steps; maps: the process's table, for cross. The
 * global step leaves what c holds unknown to the verifier, so its
 * pointers are set again. */
static __always_inline void unwind_loop(struct unwind_ctx *c, const struct stkrec_umaps *maps,
					const bool cross)
{
	struct ustep_args a = { .c = c, .f = (struct unwind_frames *)c->ips };
	struct ustep_task_args t = { .c = c, .maps = maps };

	if (cross) {
		bpf_loop(STKREC_MAX_STACK, unwind_step_task, &t, 0);
		return;
	}
	bpf_loop(STKREC_MAX_STACK, unwind_step, &a, 0);
	c->ips = a.f->ips;
	c->task = bpf_get_current_task_btf();
}

/* bpf_find_vma() callback: the file's rows, if it was loaded. */
static long vma_file(struct task_struct *task, struct vm_area_struct *vma, void *arg)
{
	struct unwind_ctx *c = arg;
	struct stkrec_umap *m = &c->vma;
	struct stkrec_ufile_key k = {};
	const struct stkrec_ufile *f;
	struct inode *inode = BPF_CORE_READ(vma, vm_file, f_inode);

	if (!inode)
		return 0;
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.ino = BPF_CORE_READ(inode, i_ino);
	f = bpf_map_lookup_elem(&ufiles, &k);
	if (!f)
		return 0;
	m->start = BPF_CORE_READ(vma, vm_start);
	m->end = BPF_CORE_READ(vma, vm_end);
	/* vaddr = addr - start + file offset + adj */
	m->bias = m->start - (BPF_CORE_READ(vma, vm_pgoff) << 12) - f->adj;
	m->first = f->first;
	m->nr_rows = f->nr_rows;
	return 0;
}

/*
 * The user stack of task from the registers it entered the kernel with (or
 * the sampled ones), into ips; returns the frames written. A frame in no
 * mapping the process's table knows (it just started, or mapped a library)
 * is looked up in the kernel's own mappings, once per event: the kernel
 * defers the lock release of a lookup made with interrupts off, so a second
 * one would find it busy. Frames still unknown follow frame pointers.
 * cross: task is not the current one (sleepable programs); counted: the
 * dwarf statistics and the marker, which frame-pointer recordings lack.
 */
static __always_inline int unwind_run(struct unwind_ctx *c, struct task_struct *task, __u32 kind,
				      const bool cross, const bool counted)
{
	struct vcache_key k = { .tgid = c->tgid };
	__u32 vk = cross ? STKREC_KIND_NR : kind;
	const struct stkrec_umaps *maps;
	struct vcache_val *v;
	__u64 look;
	__u32 n;

	c->task = task;
	c->mm = (__u64)BPF_CORE_READ(task, mm);
	maps = bpf_map_lookup_elem(&umaps, &c->tgid);
	if (!maps && counted)
		count_stat(STKREC_STAT_UNWIND_NO_TABLES + kind);
	unwind_loop(c, maps, cross);
	if (dwarf_unwind && c->status == UNWIND_VMA) {
		c->vma_asked = true;
		look = c->exact ? c->pc : c->pc - 1;
		bpf_find_vma(task, look, vma_file, c, 0);
		v = c->vma.nr_rows ? bpf_map_lookup_elem(&unwind_vma, &vk) : NULL;
		if (v) {
			k.region = look >> 21;
			v->mm = c->mm;
			v->m = c->vma;
			bpf_map_update_elem(&vcache, &k, v, BPF_ANY);
		}
		unwind_loop(c, maps, cross);
	}
	n = c->n;
	if (c->fp_used && counted)
		count_stat(STKREC_STAT_UNWIND_FP_FRAMES + kind);
	if (c->status != UNWIND_END && n < STKREC_MAX_STACK && counted) {
		c->ips[n] = STKREC_UNWIND_MARKER;
		n++;
		count_stat(STKREC_STAT_UNWIND_TRUNCATED + kind);
	}
	return n;
}

struct ucache_check {
	const struct ucache_ent *u;
	bool same;
};

/* bpf_loop() callback: does word i still hold its value? */
static long ucache_word(__u64 i, void *arg)
{
	struct ucache_check *k = arg;
	__u32 j = i & (UCACHE_SLOTS - 1);
	__u64 v;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)k->u->w.addr[j]) ||
	    v != k->u->w.val[j]) {
		k->same = false;
		return 1;
	}
	return 0;
}

/*
 * The loops over a kept walk's words and frames are global functions or
 * bpf_loop()s: the verifier checks each once, with nothing known of its
 * arguments, instead of every iteration again for each state reaching it
 * (inlined bounded loops took each program that keeps walks from ~24k to
 * ~840k of the 1M instructions it may check, and the attach from 0.3 s to
 * 1.4 s).
 */
struct ucache_frames {
	__u64 ips[UCACHE_FRAMES];
};

/* Do u's words all hold their values? Its windows each in one copy, or
 * word by word. 1 if so, else 0. */
__noinline int stkrec_ucache_words(const struct ucache_ent *u)
{
	struct ucache_check k = { .u = u, .same = true };
	__u32 zero = 0, i;
	__u64 base, len; /* 64 bits: no zero extension between test and use */
	__u8 *w;

	if (!u)
		return 0;
	if (!u->nwin) {
		bpf_loop(u->nslots, ucache_word, &k, 0);
		return k.same;
	}
	w = bpf_map_lookup_elem(&ucache_span, &zero);
	if (!w)
		return 0;
	for (i = 0; i < UCACHE_WINS; i++) {
		if (i >= u->nwin)
			break;
		base = u->wbase[i];
		len = u->wlen[i];
		/* each bounded where the helper takes it (6.1 loses a
		 * bound through the stack, see KIDX) */
		barrier_var(base);
		base &= UCACHE_SPAN - 1;
		barrier_var(len);
		if (len > UCACHE_SPAN ||
		    bpf_probe_read_user(w + base, len, (const void *)u->wlo[i]))
			return 0;
	}
	for (i = 0; i < UCACHE_SLOTS; i++) {
		if (i >= u->nslots)
			break;
		if (((__u64 *)w)[u->wof[i] & (UCACHE_SPAN / 8 - 1)] != u->w.val[i])
			return 0;
	}
	return 1;
}

/* The windows being built (on the stack of a call chain that 6.1's
 * verifier limits to 512 bytes in all: the ends are in u->wlen). */
struct ucache_wins {
	struct ucache_ent *u;
	__u32 nwin;
	bool fail; /* too many windows or bytes, or a word not 8-aligned as
		    * the first */
};

/* bpf_loop() callback: word i into the last window, when it is that
 * close (a walk reads its words outward, mostly in order), else into a
 * new one; the window's number in wof[i] until ucache_place(). No loop
 * here: the verifier checks a callback again for each state it ends in. */
static long ucache_win(__u64 i, void *arg)
{
	struct ucache_wins *b = arg;
	struct ucache_ent *u = b->u;
	__u32 j = i & (UCACHE_SLOTS - 1), k = (b->nwin - 1) & (UCACHE_WINS - 1);
	__u64 a = u->w.addr[j], lo = u->wlo[k], hi = lo + u->wlen[k];

	if ((a ^ u->w.addr[0]) & 7) {
		b->fail = true;
		return 1;
	}
	if (b->nwin && a + 8 + UCACHE_GAP >= lo && a <= hi + UCACHE_GAP) {
		lo = a < lo ? a : lo;
		hi = a + 8 > hi ? a + 8 : hi;
		if (hi - lo > UCACHE_SPAN) {
			b->fail = true;
			return 1;
		}
		u->wlo[k] = lo;
		u->wlen[k] = hi - lo;
		u->wof[j] = k;
		return 0;
	}
	if (b->nwin >= UCACHE_WINS) {
		b->fail = true;
		return 1;
	}
	k = b->nwin & (UCACHE_WINS - 1);
	u->wlo[k] = a;
	u->wlen[k] = 8;
	u->wof[j] = k;
	b->nwin++;
	return 0;
}

/* bpf_loop() callback: word i's place in the copies, in its window's. */
static long ucache_place(__u64 i, void *arg)
{
	struct ucache_ent *u = ((struct ucache_wins *)arg)->u;
	__u32 j = i & (UCACHE_SLOTS - 1), k = u->wof[j] & (UCACHE_WINS - 1);

	u->wof[j] = (u->wbase[k] + (u->w.addr[j] - u->wlo[k])) / 8;
	return 0;
}

/* u's windows (u->nwin), 0 when its words need more of them or of bytes
 * than a check reads (word by word). bpf_loop()s: the bounded loops they
 * replace took the verifier 127k instructions. */
__noinline int stkrec_ucache_windows(struct ucache_ent *u)
{
	struct ucache_wins b = { .u = u };
	__u32 k, total = 0;

	if (!u || !u->nslots || u->nslots > UCACHE_SLOTS)
		return 0;
	u->nwin = 0;
	bpf_loop(u->nslots, ucache_win, &b, 0);
	if (b.fail || !b.nwin || b.nwin > UCACHE_WINS)
		return 0;
	for (k = 0; k < UCACHE_WINS; k++) {
		if (k >= b.nwin)
			break;
		if (u->wlen[k] > UCACHE_SPAN - total)
			return 0;
		u->wbase[k] = total;
		total += u->wlen[k];
	}
	u->nwin = b.nwin;
	bpf_loop(u->nslots, ucache_place, &b, 0);
	return u->nwin;
}

/* Keep in u the walk c describes (read for its scalars only), its frames
 * in ips, its words in rec, the process's table at generation gen; u's
 * starting registers are already set. */
__noinline int stkrec_ucache_keep(struct ucache_ent *u, const struct ucache_frames *ips,
				  const struct ucache_words *rec, const struct unwind_ctx *c,
				  __u32 gen)
{
	if (!u || !ips || !rec || !c || c->uncached || !c->n || c->n > UCACHE_FRAMES ||
	    c->nslots > UCACHE_SLOTS)
		return 0;
	/* whole: straight-line code, no loop for the verifier */
	*(struct ucache_frames *)u->ips = *ips;
	u->w = *rec;
	u->mm = c->mm;
	u->gen = gen;
	u->nslots = c->nslots;
	u->nwin = 0;
	stkrec_ucache_windows(u);
	u->fp_used = c->fp_used;
	u->fp0_used = c->fp0_used;
	u->n = c->n; /* last: the entry is whole */
	return 1;
}

/* The walk c just ended cleanly, from r: keep it in u, if it can be. */
static __always_inline void ucache_keep(struct unwind_ctx *c, struct ucache_ent *u,
					const struct user_regs *r)
{
	const struct stkrec_umaps *maps = bpf_map_lookup_elem(&umaps, &c->tgid);

	if (c->uncached || !maps)
		return;
	u->pc = r->pc;
	u->sp = r->sp;
	u->fp = r->fp;
	stkrec_ucache_keep(u, (const struct ucache_frames *)c->ips,
			   bpf_map_lookup_elem(&ucache_rec, &c->kind), c, maps->gen);
}

/* The thread's kept walks, made empty on its first. */
static __always_inline struct ucache *ucache_of(struct task_struct *task)
{
	return bpf_task_storage_get(&ucache, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The thread's kept walks of kind in the order checked (i 0, 1): the
 * one found or kept last first. */
static __always_inline __u32 ucache_pick(const struct ucache *uc, __u32 kind, __u32 i)
{
	__u32 k = kind == STKREC_KIND_WAKEUP;

	return 2 * k + (((uc->mru >> k) ^ i) & 1);
}

/* Entry j was found or kept last of its kind's two. */
static __always_inline void ucache_used(struct ucache *uc, __u32 j)
{
	__u32 k = (j >> 1) & 1;

	uc->mru = (uc->mru & ~(1u << k)) | (j & 1) << k;
}

/* Entry j of uc, j bounded where the verifier sees it. */
static __always_inline struct ucache_ent *ucache_ent_at(struct ucache *uc, __u32 j)
{
	barrier_var(j);
	if (j >= UCACHE_ENTS)
		return NULL;
	return &uc->e[j];
}


/* The first n frames of a equal to b's? 1 if so. */
__noinline int stkrec_ucache_same(const struct ucache_frames *a, const struct ucache_frames *b,
				  __u32 n)
{
	__u32 i;

	if (!a || !b)
		return 0;
	for (i = 0; i < UCACHE_FRAMES; i++) {
		if (i >= n)
			break;
		if (a->ips[i] != b->ips[i])
			return 0;
	}
	return 1;
}

/* The kept frames into ips if the walk would find them again, else 0. */
static __always_inline int ucache_hit(const struct ucache_ent *u, const struct user_regs *r,
				      __u32 tgid, __u64 *ips, __u32 kind)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct stkrec_umaps *maps;
	__u32 n = u->n;

	/* the registers first: a miss costs no lookup */
	if (!n || n > UCACHE_FRAMES || u->pc != r->pc || u->sp != r->sp ||
	    (u->fp0_used && u->fp != r->fp))
		return 0;
	maps = bpf_map_lookup_elem(&umaps, &tgid);
	if (!maps || maps->gen != u->gen || u->mm != (__u64)task->mm)
		return 0;
	if (!stkrec_ucache_words(u))
		return 0;
	*(struct ucache_frames *)ips = *(const struct ucache_frames *)u->ips;
	count_stat(STKREC_STAT_UNWIND_CACHED + kind);
	return n;
}

/*
 * The current thread's kept walk of kind that a walk from r would find
 * again, its frames into f: (its entry << 8) | its frames. Else (the entry
 * a new walk replaces, emptied) << 8; -1 when the thread has no entries.
 * A global function, called from the program's body: inside
 * stkrec_unwind_kept() its state, and its call of stkrec_ucache_words(),
 * would take the switch program's call chains past the 512 bytes 6.1
 * takes (DEVELOPERS.md).
 */
__noinline int stkrec_ucache_find(struct unwind_frames *f, const struct user_regs *r, __u32 tgid,
				  __u32 kind)
{
	struct ucache *uc = ucache_of(bpf_get_current_task_btf());
	struct ucache_ent *u;
	__u32 i, j;
	int n;

	if (!f || !r || !uc)
		return -1;
	for (i = 0; i < 2; i++) {
		j = ucache_pick(uc, kind, i);
		u = ucache_ent_at(uc, j);
		n = u ? ucache_hit(u, r, tgid, f->ips, kind) : 0;
		if (!n)
			continue;
		if (u->fp_used && !test_ucache_verify) /* as the walk would count */
			count_stat(STKREC_STAT_UNWIND_FP_FRAMES + kind);
		ucache_used(uc, j);
		return j << 8 | n;
	}
	/* of the two, the one used least lately */
	j = ucache_pick(uc, kind, 1);
	u = ucache_ent_at(uc, j);
	if (u)
		u->n = 0;
	return j << 8;
}

/* Do the n frames of ips equal what u kept? */
static __always_inline bool ucache_same(const struct ucache_ent *u, __u64 *ips, int n)
{
	return n == u->n && n > 0 &&
	       stkrec_ucache_same((const struct ucache_frames *)ips,
				  (const struct ucache_frames *)u->ips, n);
}


/*
 * The current task's user stack into f, walked, and kept in the entry
 * stkrec_ucache_find() gave (found) when the walk ends cleanly; with
 * test_ucache_verify, a kept walk it found is compared. A global function:
 * the verifier checks it once per program, not once more for each state of
 * the program reaching it (inlined, the switch program took ~65k
 * instructions to check; so, ~34k, against ~24k without kept walks).
 */
__noinline int stkrec_unwind_kept(struct unwind_frames *f, const struct user_regs *r, __u32 tgid,
				  __u32 kind, int found)
{
	struct unwind_ctx c = { .exact = true, .tgid = tgid };
	struct ucache_ent *u;
	struct ucache *uc;
	int n, hit;

	if (!f || !r)
		return 0;
	c.pc = r->pc;
	c.sp = r->sp;
	c.fp = r->fp;
	c.ips = f->ips;
	c.task = bpf_get_current_task_btf();
	c.kind = kind;
	if (!bpf_map_lookup_elem(&ucache_rec, &kind))
		return 0;
	hit = found > 0 ? found & 0xff : 0;
	n = unwind_run(&c, c.task, kind, false, true);
	/* found again, not held through the walk: the verifier then checks
	 * what follows once, not once for each state the walk ends in */
	uc = found >= 0 ? ucache_of(c.task) : NULL;
	u = uc ? ucache_ent_at(uc, found >> 8) : NULL;
	if (!u)
		return n;
	if (hit) { /* tests: the walk must find what was kept */
		if (!ucache_same(u, f->ips, n))
			count_stat(STKREC_STAT_UCACHE_WRONG);
		return n;
	}
	if (c.status == UNWIND_END) {
		ucache_keep(&c, u, r);
		ucache_used(uc, found >> 8);
	}
	return n;
}

/*
 * The current task's user stack. cached (a constant at each call, true only
 * in the programs whose task pointers are trusted): the thread's last walk
 * of kind may serve (stkrec_unwind_kept()).
 */
static __always_inline int unwind_user(__u64 *ips, __u32 tgid, const struct user_regs *r,
				       __u32 kind, const bool cached)
{
	struct unwind_ctx c = { .ips = ips, .pc = r->pc, .sp = r->sp, .fp = r->fp, .exact = true,
				.tgid = tgid, .kind = UNWIND_NO_REC };
	int found;

	if (cached) {
		found = ucache_on ? stkrec_ucache_find((struct unwind_frames *)ips, r, tgid, kind)
				  : -1;
		if (found > 0 && (found & 0xff) && !test_ucache_verify)
			return found & 0xff;
		return stkrec_unwind_kept((struct unwind_frames *)ips, r, tgid, kind, found);
	}
	return unwind_run(&c, bpf_get_current_task_btf(), kind, false, true);
}

/* The user stack of t, a task off CPU, from the registers it entered the
 * kernel with: sleepable programs only (it reads t's memory). dwarf: the
 * rows, else frame pointers only (no maps: every frame is followed so). */
static __always_inline int unwind_user_task(__u64 *ips, struct task_struct *t, __u32 kind,
					    const bool dwarf)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(t);
	struct unwind_ctx c = { .ips = ips, .exact = true, .tgid = BPF_CORE_READ(t, tgid),
				.kind = UNWIND_NO_REC };

	c.pc = PT_REGS_IP_CORE(regs);
	c.sp = PT_REGS_SP_CORE(regs);
	c.fp = PT_REGS_FP_CORE(regs);
	return unwind_run(&c, t, kind, true, dwarf);
}

#endif /* __TARGET_ARCH_x86 */
#endif /* STKREC_BPF_UNWIND_BPF_H */
