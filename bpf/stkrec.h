/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI shared by bpf/stkrec.bpf.c and record/ (and cfi/: the unwind
 * rows): ringbuf record layouts, counter indexes and constants. Fixed-width
 * types only, no kernel types, so user space includes it as is. The
 * ringbuf record is not the file record: record/ converts each one into
 * format/'s layout.
 */
#ifndef STKREC_BPF_STKREC_H
#define STKREC_BPF_STKREC_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* __u32 and friends, as vmlinux.h has them */
#endif

#define STKREC_MAX_STACK 127  /* frames per stack, as bpf_get_stack allows; 0x7f,
			       * a mask the BPF programs bound indexes with */
#define STKREC_COMM_LEN 16
#define STKREC_MAX_PYSTACK 64 /* Python frames per stack (bpf/python.bpf.h) */

/* Every ringbuf record starts with one of these (u32). */
enum stkrec_ev_type {
	STKREC_EV_OFFCPU = 1,
	STKREC_EV_CPU = 2,
	STKREC_EV_BIO = 3,
	STKREC_EV_BIO_SUBMIT = 4, /* the stacks of a block request's submitter */
	STKREC_EV_WAKEUP = 5,     /* a traced thread woken, the waker's stacks */
	STKREC_EV_CGROUP = 6,     /* a cgroup v2 directory made or removed */
};

/* stkrec_stack_ev.flags */
#define STKREC_F_KTHREAD 0x1     /* the task is a kernel thread */
#define STKREC_F_USTACK_LOST 0x2 /* user stack requested, not taken */
#define STKREC_F_KSTACK_LOST 0x4 /* kernel stack requested, not taken */
/* OFFCPU, waits open at the start or the stop (bpf/waits.bpf.h): */
#define STKREC_F_OPEN_START 0x8  /* off CPU before the recording began: time is
				  * when the kernel says it went off CPU */
#define STKREC_F_START_UNKNOWN 0x10 /* ... the kernel did not say: time is
				     * when the recorder found it */
#define STKREC_F_OPEN_END 0x20   /* still off CPU at the stop: the interval
				  * ends there (duration up to it) */
/* stkrec_bio_state.issuer_flags only: the issuer is outside -G's cgroups */
#define STKREC_F_CGROUP_OUT 0x40

/* stkrec_stack_ev.py_flags: how the Python stack (nr_pystack frames) ended */
#define STKREC_PY_F_DEPTH 0x1      /* STKREC_MAX_PYSTACK reached, more frames */
#define STKREC_PY_F_UNREADABLE 0x2 /* a frame or the thread state unreadable */

/*
 * OFFCPU and CPU records: this header, then nr_ustack user frames, then
 * nr_kstack kernel frames (innermost first), then nr_pystack Python frames
 * of two words each (struct stkrec_pyframe). Only the used frames travel:
 * the record length is sizeof(header) + 8 * (nr_ustack + nr_kstack +
 * 2 * nr_pystack).
 *
 * WAKEUP records (bpf/wakeup.bpf.h) have the same layout: tid, pid, comm,
 * flags and stacks are the waker's (the current task, also when an
 * interrupt woke the thread: user space tells from the kernel stack),
 * time when it woke, duration the woken thread (tgid << 32 | tid), state
 * STKREC_WAKE_IO when a struct stkrec_wake_io follows the frames,
 * woken_cgroup the woken thread's cgroup.
 *
 * cgroup is the task's cgroup v2 id (0: recorded without cgroups), ns_tid
 * and ns_pid its ids in its own PID namespace, read where the event is
 * taken, so a process gone before user space sees the event keeps them.
 */
struct stkrec_stack_ev {
	__u32 type;      /* STKREC_EV_OFFCPU or STKREC_EV_CPU */
	__u32 tid;
	__u32 pid;       /* tgid */
	__u16 cpu;
	__u8 nr_pystack; /* Python frames after the kernel frames */
	__u8 py_flags;   /* STKREC_PY_F_* */
	__u64 time;      /* OFFCPU: switch-out; CPU: sample; BIO_SUBMIT:
			  * submission (monotonic ns) */
	__u64 duration;  /* OFFCPU: ns until switch-in; CPU: 0; BIO_SUBMIT:
			  * the request's submission number (stkrec_bio_ev.seq) */
	__u32 state;     /* OFFCPU: task state at switch-out; CPU: 0 */
	__u16 flags;     /* STKREC_F_* */
	__u8 nr_ustack;
	__u8 nr_kstack;
	char comm[STKREC_COMM_LEN];
	__u64 cgroup;       /* cgroup v2 id of tid */
	__u32 ns_tid;       /* tid, pid in the task's own PID namespace */
	__u32 ns_pid;
	__u64 woken_cgroup; /* WAKEUP: the woken thread's cgroup; else 0 */
	/* frames, then a struct stkrec_wake_io */
	__u64 ips[2 * STKREC_MAX_STACK + 2 * STKREC_MAX_PYSTACK + 3];
};
#define STKREC_STACK_EV_HDR_SIZE 80u
/* An off-CPU slot's last word, past any frames (and never sent): the
 * thread's switch count (nvcsw + nivcsw) at its last switch-out traced. */
#define STKREC_SLOT_SWITCHES (2 * STKREC_MAX_STACK + 2 * STKREC_MAX_PYSTACK + 2)
/* ... and the word before it: when the sched_waking program first saw the
 * thread woken in the wait open now, 0: not yet */
#define STKREC_SLOT_WOKEN (STKREC_SLOT_SWITCHES - 1)
_Static_assert(sizeof(struct stkrec_stack_ev) ==
	       STKREC_STACK_EV_HDR_SIZE + (2 * STKREC_MAX_STACK + 2 * STKREC_MAX_PYSTACK + 3) * 8,
	       "stkrec_stack_ev layout");

/* A stack record's length: its header and the frames it holds (a WAKEUP's
 * struct stkrec_wake_io follows them). */
static inline __u64 stkrec_stack_ev_size(const struct stkrec_stack_ev *e)
{
	return STKREC_STACK_EV_HDR_SIZE +
	       ((__u64)e->nr_ustack + e->nr_kstack + 2 * (__u64)e->nr_pystack) * 8;
}

/*
 * One CPython frame, innermost first: the code object it runs and where in
 * it. code has STKREC_PYFRAME_ENTRY set on the outermost frame of one call
 * of the interpreter's eval function (its frames run in one native
 * _PyEval_EvalFrameDefault frame). lasti is raw: the frame's int f_lasti
 * (STKREC_PY_INSTR_INT) or its instruction pointer less the code object's
 * address (STKREC_PY_INSTR_PTR); user space turns it into a bytecode offset
 * by the version. stamp tells apart code objects that used the same address
 * in turn (one freed, another allocated there): co_firstlineno's low 16
 * bits, then bits 4-19 of its co_name pointer.
 */
#define STKREC_PYFRAME_ENTRY (1ull << 63)
struct stkrec_pyframe {
	__u64 code;
	__u32 lasti;
	__u32 stamp;
};
_Static_assert(sizeof(struct stkrec_pyframe) == 16, "stkrec_pyframe layout");

/* stkrec_pyframe.stamp of a code object with this co_firstlineno and
 * co_name pointer. */
static inline __u32 stkrec_py_stamp(__s32 firstlineno, __u64 co_name)
{
	return ((__u32)firstlineno & 0xffff) | (__u32)((co_name >> 4) & 0xffff) << 16;
}

/*
 * Map `pyprocs`, key tgid: a process running CPython (its mappings hold
 * python3.X or libpython3.X), with where its interpreter keeps threads and
 * frames. record/ fills it (python/: from _Py_DebugOffsets, DWARF or a
 * table per minor version). Offsets are bytes into the structure named;
 * STKREC_PY_NONE where the version has no such field.
 */
#define STKREC_PY_NONE 0xffffu
enum stkrec_py_tid {
	STKREC_PY_TID_NATIVE = 0,  /* ts_tid is native_thread_id: the tid (3.11+) */
	STKREC_PY_TID_PTHREAD = 1, /* ts_tid is thread_id: pthread_self(), the fs base */
};
enum stkrec_py_entry {
	STKREC_PY_ENTRY_EACH = 0,  /* every frame its own eval call (3.8-3.10) */
	STKREC_PY_ENTRY_FLAG = 1,  /* byte at fr_entry non-zero: the outermost
				    * frame of its eval call (is_entry, 3.11) */
	STKREC_PY_ENTRY_SHIM = 2,  /* byte at fr_entry == STKREC_PY_OWNED_BY_CSTACK:
				    * a shim frame, no Python function, that
				    * ends an eval call (owner, 3.12+) */
};
#define STKREC_PY_OWNED_BY_CSTACK 3
enum stkrec_py_instr {
	STKREC_PY_INSTR_INT = 0,   /* int at fr_instr: f_lasti */
	STKREC_PY_INSTR_PTR = 1,   /* pointer at fr_instr: prev_instr, instr_ptr */
};
struct stkrec_pyproc {
	__u64 runtime;          /* address of _PyRuntime in the process */
	__u16 rt_interp;        /* _PyRuntime.interpreters.head */
	__u16 is_threads;       /* PyInterpreterState: first PyThreadState */
	__u16 ts_next;          /* PyThreadState.next */
	__u16 ts_tid;           /* PyThreadState.native_thread_id or thread_id */
	__u16 ts_frame;         /* PyThreadState.frame, cframe or current_frame */
	__u16 cf_frame;         /* _PyCFrame.current_frame; NONE: ts_frame is it */
	__u16 fr_back;          /* f_back, previous */
	__u16 fr_code;          /* f_code, f_executable */
	__u16 fr_instr;         /* f_lasti, prev_instr, instr_ptr */
	__u16 fr_entry;         /* is_entry, owner; NONE with ENTRY_EACH */
	__u16 co_firstlineno;
	__u16 co_name;
	__u8 tid_kind;          /* enum stkrec_py_tid */
	__u8 entry_kind;        /* enum stkrec_py_entry */
	__u8 instr_kind;        /* enum stkrec_py_instr */
	__u8 reserved[5];
};
_Static_assert(sizeof(struct stkrec_pyproc) == 40, "stkrec_pyproc layout");

/* WAKEUP: the block request whose completion ran the wakeup, as its BIO
 * record will name it. */
#define STKREC_WAKE_IO 0x1
struct stkrec_wake_io {
	__u32 major;
	__u32 minor;
	__u64 sector;
	__u64 complete_time;
};
_Static_assert(sizeof(struct stkrec_wake_io) == 3 * 8, "stkrec_wake_io layout");

/* BIO op codes (same values as format's enum cap_bio_op). */
enum stkrec_bio_op {
	STKREC_BIO_READ = 0,
	STKREC_BIO_WRITE = 1,
	STKREC_BIO_FLUSH = 2,
	STKREC_BIO_DISCARD = 3,
	STKREC_BIO_OTHER = 4,
};
/* BIO flags (same values as format's CAP_BIO_F_*). */
#define STKREC_BIO_F_SYNC 0x1
#define STKREC_BIO_F_FUA 0x2
#define STKREC_BIO_F_META 0x4
#define STKREC_BIO_F_PREFLUSH 0x8

/* One completion (possibly partial) of a block request. */
struct stkrec_bio_ev {
	__u32 type;      /* STKREC_EV_BIO */
	__u32 tid;       /* issuing thread, 0 when unknown */
	__u32 pid;
	__u32 bytes;     /* bytes completed by this completion */
	__u64 issue_time;
	__u64 complete_time;
	__u64 sector;
	__u32 major;
	__u32 minor;
	__u8 op;         /* enum stkrec_bio_op */
	__u8 status;     /* blk_status_t of the completion, 0 = OK */
	__u16 flags;     /* STKREC_BIO_F_* */
	__u32 issuer_flags; /* STKREC_F_KTHREAD when the issuer is a kernel thread */
	char comm[STKREC_COMM_LEN];
	__u64 seq;       /* submission number: its BIO_SUBMIT record's, 0 none */
	__u32 last;      /* the request's last completion */
	__u32 reserved;
	__u64 cgroup;    /* the issuer's cgroup v2 id at submission, 0 unknown */
};
_Static_assert(sizeof(struct stkrec_bio_ev) == 96, "stkrec_bio_ev layout");

/*
 * Map `bio_inflight`, key the request's address: a block request between
 * block_io_start (or block_rq_insert/block_rq_issue) and its last
 * completion. User space reads what is left at the end of a file.
 */
struct stkrec_bio_state {
	__u64 issue_time;   /* block_rq_issue, 0 until then */
	__u64 gen;          /* request::start_time_ns at entry: which use of rq */
	__u32 tid;          /* issuer, 0 when unknown */
	__u32 pid;
	__u32 issuer_flags; /* STKREC_F_KTHREAD, STKREC_F_CGROUP_OUT */
	__u32 traced;       /* the issuer passed the filters when it issued */
	char comm[STKREC_COMM_LEN];
	__u64 seq;          /* submission number, 0 when no stacks were sent */
	__u64 cgroup;       /* the issuer's cgroup v2 id, 0 unknown */
};
_Static_assert(sizeof(struct stkrec_bio_state) == 64, "stkrec_bio_state layout");

/*
 * CGROUP records (tp_btf/cgroup_mkdir, cgroup_rmdir): a directory of the
 * cgroup v2 hierarchy made or removed, with its path below the root ("/"
 * the root), so a cgroup gone before user space looks keeps its name.
 * The record is sent with path_len bytes of path.
 */
#define STKREC_CGROUP_PATH_MAX 512
#define STKREC_CGROUP_RMDIR 0x1
struct stkrec_cgroup_ev {
	__u32 type;     /* STKREC_EV_CGROUP */
	__u32 flags;    /* STKREC_CGROUP_RMDIR */
	__u64 id;
	__u64 time;
	__u32 path_len; /* without a NUL */
	__u32 reserved;
	char path[STKREC_CGROUP_PATH_MAX];
};
#define STKREC_CGROUP_EV_HDR_SIZE 32u
_Static_assert(sizeof(struct stkrec_cgroup_ev) == STKREC_CGROUP_EV_HDR_SIZE + STKREC_CGROUP_PATH_MAX,
	       "stkrec_cgroup_ev layout");

/* record -G: at most this many cgroups (each with its subtree) */
#define STKREC_MAX_CGROUPS 16

/*
 * Per-CPU drop counters: array index kind * STKREC_LOST_NR + reason. The
 * values match format's enum cap_kind and enum cap_lost_reason (record/
 * asserts it), so user space writes them into LOST records unchanged.
 */
enum stkrec_kind {
	STKREC_KIND_OFFCPU = 0,
	STKREC_KIND_CPU = 1,
	STKREC_KIND_BIO = 2,
	STKREC_KIND_WAKEUP = 4, /* 3 is the side band, user space's alone */
	STKREC_KIND_NR = 5,
};
enum stkrec_lost {
	STKREC_LOST_RINGBUF = 0,
	STKREC_LOST_USTACK = 1,
	STKREC_LOST_KSTACK = 2,
	STKREC_LOST_STATE = 4,
	STKREC_LOST_FILE_FULL = 5, /* user space only: open waits --max-size refused */
	STKREC_LOST_NR = 6,
};
#define STKREC_NR_COUNTERS (STKREC_KIND_NR * STKREC_LOST_NR)

/* Per-CPU event statistics (not losses): array `stats` indexes. */
enum stkrec_stat {
	STKREC_STAT_BIO_UNSEEN = 0,  /* completion of a request not seen issued */
	STKREC_STAT_BIO_FILTERED,    /* completion filtered out (issuer not traced) */
	STKREC_STAT_BIO_MISSED,      /* request seen issued, completion never seen */
	/* --call-graph dwarf, index + kind (OFFCPU, CPU, BIO) */
	STKREC_STAT_UNWIND_TRUNCATED, /* stack ended early, with the marker */
	STKREC_STAT_UNWIND_NO_TABLES = STKREC_STAT_UNWIND_TRUNCATED + STKREC_KIND_NR,
				      /* process without tables yet: frame pointers */
	STKREC_STAT_UNWIND_FP_FRAMES = STKREC_STAT_UNWIND_NO_TABLES + STKREC_KIND_NR,
				      /* some frames outside every known mapping
				       * (JIT, anonymous, not yet loaded) or in code
				       * no CFI covers: frame pointers */
	STKREC_STAT_PY_CUT = STKREC_STAT_UNWIND_FP_FRAMES + STKREC_KIND_NR,
				      /* Python stack cut: STKREC_PY_F_* set */
	STKREC_STAT_CGROUP_FILTERED = STKREC_STAT_PY_CUT + STKREC_KIND_NR,
				      /* -G: event of a task outside the cgroups
				       * (BIO: counted as STKREC_STAT_BIO_FILTERED) */
	STKREC_STAT_UNTRACED_IN = STKREC_STAT_CGROUP_FILTERED + STKREC_KIND_NR,
				      /* an off-CPU interval found still open at
				       * the thread's next switch-out: the kernel
				       * switched it in with no sched_switch
				       * reaching any program (seen on 6.18) */
	STKREC_STAT_RECOVERED_IN,     /* ... whose end the scheduler's clock told */
	STKREC_STAT_UNWIND_CACHED,    /* + kind: user stacks taken from the
				       * thread's last walk (bpf/unwind.bpf.h) */
	STKREC_STAT_UCACHE_WRONG = STKREC_STAT_UNWIND_CACHED + STKREC_KIND_NR,
				      /* tests only: a cached stack a new walk
				       * found different */
	STKREC_STAT_KSTACK_CACHED,    /* + kind: kernel stacks taken from the
				       * thread's last walk (bpf/kstack.bpf.h) */
	STKREC_STAT_KCACHE_WRONG = STKREC_STAT_KSTACK_CACHED + STKREC_KIND_NR,
				      /* tests only: ... a new walk found
				       * different */
	STKREC_STAT_UNTRACED_WAKE,    /* a sleep recorded whose wakeup reached
				       * no program (-e offcpu,wakeup) */
	STKREC_STAT_NR,
};

/*
 * --call-graph dwarf: user stacks unwound in the kernel from call-frame
 * information (.eh_frame, .debug_frame) that cfi/ turns into rows.
 *
 * One row covers the addresses [pc, next row's pc) of one ELF file (pc is
 * an ELF virtual address, so the rows of a file serve every process that
 * maps it). The rows of all files live in `cfi_rows`, an array of array
 * maps of STKREC_CFI_CHUNK_ROWS rows each (1 MiB), added as the rows grow;
 * a file's rows are consecutive (they may cross chunks), sorted by pc and ending with a STKREC_CFA_GAP row at the end of
 * its last range; addresses between FDEs are GAP rows too. NONE marks
 * code whose CFI says something the rows cannot express: it ends a
 * stack. GAP marks code no CFI describes (V8's embedded builtins, hand
 * written assembly): such code is followed by frame pointer, like JIT code.
 *
 * x86-64 only: the return address is always at CFA - 8.
 */
enum stkrec_cfa_kind {
	STKREC_CFA_NONE = 0,   /* no rule here, or one stkrec cannot follow */
	STKREC_CFA_SP = 1,     /* CFA = rsp + cfa_off */
	STKREC_CFA_FP = 2,     /* CFA = rbp + cfa_off */
	STKREC_CFA_PLT = 3,    /* .plt: CFA = rsp + 8, + 8 when (rip & 15) >= 11 */
	STKREC_CFA_SIGNAL = 4, /* __restore_rt: registers in the sigcontext at rsp */
	STKREC_CFA_END = 5,    /* return address undefined: the outermost frame */
	STKREC_CFA_GAP = 6,    /* no FDE covers this address: frame pointer */
};

struct stkrec_cfi_row {
	__u32 pc;       /* first address covered (ELF virtual address) */
	__u16 cfa_off;  /* bytes added to the CFA register */
	__u8 kind;      /* enum stkrec_cfa_kind */
	__s8 fp_off;    /* rbp saved at CFA + 8 * fp_off; 0: rbp unchanged */
};
_Static_assert(sizeof(struct stkrec_cfi_row) == 8, "stkrec_cfi_row layout");
#define STKREC_CFI_CHUNK_ROWS (1u << 17)

/*
 * Map `umaps`, key tgid: the executable mappings of one process, sorted by
 * start. nr_rows 0 marks a mapping without tables (JIT code, anonymous
 * memory, a file whose tables are not loaded): frames there are followed
 * with frame pointers.
 */
#define STKREC_MAX_UMAPS 256
struct stkrec_umap {
	__u64 start;
	__u64 end;
	__u64 bias;     /* address - bias = ELF virtual address */
	__u32 first;    /* index of the first row in cfi_rows */
	__u32 nr_rows;
};
struct stkrec_umaps {
	__u32 nr;
	__u32 gen;      /* the recording's count of umaps writes at this one:
			 * the same gen, the same entry (bpf/unwind.bpf.h's
			 * cache of walks) */
	struct stkrec_umap m[STKREC_MAX_UMAPS];
};
_Static_assert(sizeof(struct stkrec_umap) == 32, "stkrec_umap layout");

/*
 * Map `ufiles`, key the file's kernel identity (super block dev_t as the
 * kernel encodes it, inode number): the rows of every file loaded. For a
 * frame in no mapping of `umaps` (a process just started or exec'd, a
 * library just mapped) the unwinder asks the kernel for the address's
 * mapping (bpf_find_vma(), once per event) and finds the file here.
 */
struct stkrec_ufile_key {
	__u64 dev;
	__u64 ino;
};
struct stkrec_ufile {
	__u64 adj;      /* ELF virtual address - file offset, executable segment */
	__u32 first;
	__u32 nr_rows;
};

/* A dwarf-unwound stack that ends early ends with this address, which no
 * user mapping holds: reports show it as one [unknown] frame. */
#define STKREC_UNWIND_MARKER 0xffffffffffffffffull

/* Task flag and states the BPF side tests (include/linux/sched.h). */
#define STKREC_PF_KTHREAD 0x00200000u
#define STKREC_TASK_DEAD 0x80u

#endif /* STKREC_BPF_STKREC_H */
