/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stkrec capture format: reader and writer.
 *
 * The normative description is format/FORMAT.md; every struct below names
 * the section it mirrors. All on-disk integers are little-endian; the structs
 * are laid out without padding and their sizes are asserted in common.c.
 *
 * This library depends on nothing else in stkrec and never prints. Functions
 * return 0 (or a positive count) on success and a negative code on failure:
 * -errno for system errors, or one of enum cap_err; cap_strerror() names both.
 */
#ifndef STKREC_FORMAT_CAPTURE_H
#define STKREC_FORMAT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* ssize_t */

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "format/ assumes a little-endian host; add byte swapping to port it"
#endif

#define CAP_VERSION_MAJOR 1
#define CAP_VERSION_MINOR 6

/* Errors of the format library (FORMAT.md §8). -errno values pass through. */
enum cap_err {
	CAP_ERR_BASE = 4000,
	CAP_ERR_BAD_MAGIC = -(CAP_ERR_BASE + 1),    /* not a stkrec capture */
	CAP_ERR_VERSION = -(CAP_ERR_BASE + 2),      /* major version too new */
	CAP_ERR_FEATURE = -(CAP_ERR_BASE + 3),      /* unknown incompatible feature */
	CAP_ERR_TRUNCATED = -(CAP_ERR_BASE + 4),    /* header cut short */
	CAP_ERR_CORRUPT = -(CAP_ERR_BASE + 5),      /* a structure fails validation */
	CAP_ERR_TOO_LARGE = -(CAP_ERR_BASE + 6),    /* a declared size exceeds a limit */
	CAP_ERR_CHECKSUM = -(CAP_ERR_BASE + 7),     /* block checksum mismatch */
	CAP_ERR_ZSTD = -(CAP_ERR_BASE + 8),         /* zstd (de)compression failed */
	CAP_ERR_EMPTY = -(CAP_ERR_BASE + 9),        /* zero-length file */
	CAP_ERR_NOT_FILE = -(CAP_ERR_BASE + 10),    /* a directory or other non-file */
	CAP_ERR_RECORD = -(CAP_ERR_BASE + 11),      /* record too short for its type */
	CAP_ERR_INVAL = -(CAP_ERR_BASE + 12),       /* bad argument from the caller */
	CAP_ERR_FULL = -(CAP_ERR_BASE + 13),        /* --max-size reached */
	CAP_ERR_LAST = -(CAP_ERR_BASE + 14),
};

/* Message for a code from this library (or -errno); never NULL. */
const char *cap_strerror(int err);

/* Limits every reader enforces (FORMAT.md §7). */
#define CAP_MAX_BLOCK_SIZE (4u << 20)  /* uncompressed bytes in one block */
#define CAP_MAX_FRAME_SIZE (8u << 20)  /* compressed bytes in one frame */
#define CAP_MAX_HEADER_SIZE (64u << 10)
#define CAP_MAX_STACK_DEPTH 127
#define CAP_MAX_STRING 4096
#define CAP_DEFAULT_BLOCK_SIZE (256u << 10)
#define CAP_DEFAULT_BLOCK_AGE_NS 1000000000ull

/* Event kinds, used for totals and lost counts (FORMAT.md §5). */
enum cap_kind {
	CAP_KIND_OFFCPU = 0,
	CAP_KIND_CPU = 1,
	CAP_KIND_BIO = 2,
	CAP_KIND_SIDEBAND = 3, /* perf side band (mmap/comm/fork records) */
	CAP_KIND_WAKEUP = 4,   /* 1.2: who woke a thread (WAKEUP) */
	CAP_KIND_MAX = 5,
};
/* "offcpu", "cpu", "bio", "sideband", "wakeup" */
const char *cap_kind_name(enum cap_kind kind);

/* Record types (FORMAT.md §4). Values are part of the format: never reuse. */
enum cap_rec_type {
	CAP_REC_BLOCK = 1,     /* first record of every block */
	CAP_REC_STRING = 2,
	CAP_REC_STACK = 3,
	CAP_REC_THREAD = 4,
	CAP_REC_FORK = 5,
	CAP_REC_MAPPING = 6,
	CAP_REC_KERNEL = 7,
	CAP_REC_KMOD = 8,
	CAP_REC_KSYM = 9,
	CAP_REC_BLOCKDEV = 10,
	CAP_REC_PACK_OBJECT = 11, /* 1.2: the symbol pack (§4.18-4.22) */
	CAP_REC_PACK_SYMBOL = 12,
	CAP_REC_PACK_ADDR = 13,
	CAP_REC_PACK_JIT = 14,
	CAP_REC_PACK_INFO = 15,
	CAP_REC_PY_CODE = 16,  /* 1.4: a Python code object (§4.24) */
	CAP_REC_CGROUP = 17,   /* 1.5: a cgroup v2 id and its path (§4.25) */
	CAP_REC_TRIGGER = 18,  /* 1.6: why a flight recorder's dump was written (§4.26) */
	CAP_REC_OFFCPU = 32,
	CAP_REC_CPU = 33,
	CAP_REC_BIO = 34,
	CAP_REC_OFFCPU_COMPACT = 35, /* 1.1: OFFCPU, varint-coded (§4.17) */
	CAP_REC_WAKEUP = 36,   /* 1.2: who woke a thread (§4.23) */
	CAP_REC_LOST = 64,
	CAP_REC_STAT = 65,
	CAP_REC_END = 66,
};

/* §4.0 every record starts with this; size counts the whole record. */
struct cap_rec_hdr {
	uint16_t type;
	uint16_t size;
};

/* Stack ids: 0 = no stack taken (not requested, or a kernel thread's user
 * stack); CAP_STACK_LOST = the stack was requested but could not be taken. */
#define CAP_STACK_NONE 0u
#define CAP_STACK_LOST 0xffffffffu

/*
 * §4.3 a Python frame in a user stack (1.3, feature PYTHON): bits 63-60
 * CAP_PYFRAME_TAG (no user or kernel address has them), 59-28 the PY_CODE
 * id, 27-0 one more than the byte offset of the instruction in the code's
 * bytecode (f_lasti in bytes), 0 for a frame that ran none yet. Id 0 is a
 * marker, its offset field a CAP_PY_MARK_*.
 */
#define CAP_PYFRAME_TAG 0x5ull
#define CAP_PYFRAME_OFFSET_MAX 0xfffffffu
#define CAP_PYFRAME(code, off)                                                     \
	(CAP_PYFRAME_TAG << 60 | (uint64_t)(uint32_t)(code) << 28 |                \
	 ((off) > CAP_PYFRAME_OFFSET_MAX ? CAP_PYFRAME_OFFSET_MAX : (uint64_t)(off)))
#define CAP_IS_PYFRAME(ip) ((uint64_t)(ip) >> 60 == CAP_PYFRAME_TAG)
#define CAP_PYFRAME_CODE(ip) ((uint32_t)((uint64_t)(ip) >> 28))
#define CAP_PYFRAME_OFF(ip) ((uint32_t)((ip) & CAP_PYFRAME_OFFSET_MAX))
enum cap_py_mark {
	CAP_PY_MARK_DEPTH = 1,      /* more Python frames than the recorder takes */
	CAP_PY_MARK_UNREADABLE = 2, /* a frame or the thread state unreadable */
	CAP_PY_MARK_UNKNOWN = 3,    /* a frame whose code object was not read */
};

/* §4.24 PY_CODE (1.4): a Python function that frames of user stacks name
 * (CAP_PYFRAME). Tail: qualname, filename, then the line table. */
struct cap_py_code {
	uint32_t id;            /* >= 1 */
	int32_t firstlineno;    /* co_firstlineno */
	uint16_t version;       /* the interpreter's major << 8 | minor: the
				 * line table's format */
	uint16_t qualname_len;  /* <= CAP_MAX_STRING */
	uint16_t filename_len;  /* <= CAP_MAX_STRING */
	uint16_t flags;         /* CAP_PY_CODE_* */
	uint32_t linetable_len; /* bytes */
};
#define CAP_PY_CODE_NO_LINES 0x1 /* the line table did not fit: no lines */
#define CAP_PY_CODE_MAX_TAIL (UINT16_MAX - 4 - sizeof(struct cap_py_code))

/* §4.1 BLOCK */
struct cap_block {
	uint64_t seq;        /* 0, 1, 2, ... in file order */
	uint64_t first_time; /* monotonic ns of the block's first event, or 0 */
};

/* §4.2 STRING: id then `len` bytes, no NUL. Ids start at 1. */
struct cap_string {
	uint32_t id;
	uint32_t len;
	/* char data[len] */
};

/* §4.3 STACK: ips outermost-last (as the kernel returns them: ips[0] is
 * the innermost frame). kind: 1 user, 2 kernel. Ids start at 1. */
struct cap_stack {
	uint32_t id;
	uint16_t nr;
	uint8_t kind;
	uint8_t reserved;
	/* uint64_t ips[nr] */
};
#define CAP_STACK_USER 1
#define CAP_STACK_KERNEL 2

/* §4.4 THREAD: a thread's name as of `time`; a new record on every change. */
struct cap_thread {
	uint64_t time;
	uint32_t tid;
	uint32_t pid;
	uint32_t flags; /* CAP_THREAD_* */
	char comm[16];  /* NUL-padded */
	uint32_t reserved; /* zero; makes the layout padding-free */
	uint32_t ns_tid;   /* 1.5: tid in the thread's own PID namespace; 0 unknown */
	uint32_t ns_pid;   /* 1.5: pid (tgid) there; 0 unknown */
};
#define CAP_THREAD_SIZE_1_4 40u /* THREAD without ns_tid, ns_pid (1.0-1.4) */
#define CAP_THREAD_KERNEL 0x1 /* kernel thread */
#define CAP_THREAD_EXEC 0x2   /* name changed by exec: earlier mappings of pid end */

/* §4.5 FORK: process (or thread) creation seen by the side band. */
struct cap_fork {
	uint64_t time;
	uint32_t pid;
	uint32_t tid;
	uint32_t ppid;
	uint32_t ptid;
};

/* §4.6 MAPPING: an executable file mapping of process pid from `time` on. */
struct cap_mapping {
	uint64_t time;
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;   /* file offset of start */
	uint32_t pid;
	uint32_t path_id; /* STRING id */
	uint32_t flags;   /* CAP_MAP_* */
	uint8_t build_id_size; /* 0 when unknown */
	uint8_t reserved[3];
	uint8_t build_id[20];
	uint32_t reserved2; /* zero; makes the layout padding-free */
};
#define CAP_MAP_FROM_PROC 0x1     /* learned from /proc scan at start */
#define CAP_MAP_FROM_SIDEBAND 0x2 /* learned from perf MMAP2 */
#define CAP_MAP_ANON 0x4          /* anonymous executable memory (JIT) */

/* §4.7 KERNEL: the running kernel's identity. */
struct cap_kernel {
	uint8_t build_id_size;
	uint8_t reserved[3];
	uint8_t build_id[20];
	uint64_t stext; /* address of _stext, for KASLR-independent offsets */
	/* 1.2: the scheduler's and the spinlocks' own code (.sched.text,
	 * .spinlock.text), which a wait's site skips, as the kernel's wchan
	 * does; 0 when unknown (and in 32-byte records of older writers) */
	uint64_t sched_text_start, sched_text_end;
	uint64_t lock_text_start, lock_text_end;
};
#define CAP_KERNEL_SIZE_1_1 32u

/* §4.8 KMOD: a loaded module. */
struct cap_kmod {
	uint64_t base;
	uint32_t size;
	uint32_t name_id; /* STRING id */
	uint8_t build_id_size;
	uint8_t reserved[3];
	uint8_t build_id[20];
};

/* §4.9 KSYM: a kernel symbol [addr, addr+size). module_id 0 = vmlinux. */
struct cap_ksym {
	uint64_t addr;
	uint32_t size;
	uint32_t module_id; /* STRING id, or 0 */
	uint32_t name_len;
	uint32_t reserved; /* zero; makes the layout padding-free */
	/* char name[name_len] */
};

/* §4.25 CGROUP (1.5): a cgroup v2 id seen in events, and its path below
 * the cgroup2 mount ("/" the root), as it was when first seen. */
struct cap_cgroup {
	uint64_t id;       /* the kernel's cgroup id (the directory's inode) */
	uint64_t time;     /* monotonic ns when the path was taken */
	uint32_t flags;    /* CAP_CGROUP_F_* */
	uint32_t path_len; /* <= CAP_MAX_STRING */
	/* char path[path_len] */
};
#define CAP_CGROUP_F_REMOVED 0x1 /* removed while the recording ran */

/* §4.26 TRIGGER (1.6): a file that `record --flight-recorder` dumped from
 * its window in memory: what made it write the file, and the window of
 * time the file holds. One per file, after LOST and STAT. */
struct cap_trigger {
	uint64_t time;          /* monotonic ns of the trigger: the wait's end,
				 * the signal's arrival, the recording's stop */
	uint64_t window_start;  /* monotonic ns: events that ended before it
				 * fell out of the window (they are not lost) */
	uint64_t window_end;    /* monotonic ns: the dump's moment (time + post) */
	uint64_t wait_start;    /* WAIT: the wait's OFFCPU start */
	uint64_t wait_duration; /* WAIT: its duration, ns */
	uint64_t threshold;     /* WAIT: --trigger's DURATION, ns */
	uint64_t post;          /* --post, ns (0: none) */
	uint32_t kind;          /* CAP_TRIGGER_* */
	uint32_t tid;           /* WAIT: the thread that waited; 0 otherwise */
	uint32_t pid;
	uint32_t ustack;        /* WAIT: the wait's STACK ids (as its OFFCPU) */
	uint32_t kstack;
	uint32_t triggers;      /* triggers this dump covers (>= 1) */
	uint32_t dump;          /* 1: the recording's first dump, 2, ... */
	uint32_t reserved;
};
#define CAP_TRIGGER_SIGNAL 1 /* SIGUSR2 */
#define CAP_TRIGGER_WAIT 2   /* --trigger wait>=DURATION: a wait that long ended */
#define CAP_TRIGGER_END 3    /* the recording stopped, no --trigger given */
/* "signal", "wait", "end"; NULL for a kind this version does not know
 * (§4.26: readers refuse such a record). */
const char *cap_trigger_kind_name(uint32_t kind);

/* §4.10 BLOCKDEV */
struct cap_blockdev {
	uint32_t major;
	uint32_t minor;
	char name[32]; /* NUL-padded, e.g. "vda", "nvme0n1" */
};

/* §4.19 PACK_OBJECT (1.2): a binary of the symbol pack (§4.18). */
struct cap_pack_object {
	uint32_t id;            /* >= 1 */
	uint32_t path_id;       /* STRING id of a path it was mapped from, or 0 */
	uint8_t build_id_size;  /* 0: the object is the file at the path */
	uint8_t flags;          /* CAP_PACK_OBJ_* */
	uint16_t reserved;
	uint8_t build_id[20];
};
#define CAP_PACK_OBJ_DWARF 0x1 /* its PACK_ADDRs carry DWARF's answer */

/* §4.19 PACK_SYMBOL: a function symbol covering an address hit. */
struct cap_pack_symbol {
	uint32_t id;      /* >= 1 */
	uint32_t object;  /* PACK_OBJECT id */
	uint32_t name_id; /* STRING id, the name as the binary spells it */
	uint32_t reserved;
	uint64_t start;   /* file offset of its first byte */
	uint64_t size;    /* 0 when unknown */
};

/* §4.20 PACK_ADDR: an object's answer for one lookup offset; `nr` frames
 * (innermost first, the containing function last) follow. */
struct cap_pack_addr {
	uint64_t offset;  /* file offset, minus 1 for return addresses */
	uint32_t object;  /* PACK_OBJECT id */
	uint32_t symbol;  /* PACK_SYMBOL id, 0 none */
	uint16_t nr;      /* <= CAP_PACK_MAX_FRAMES */
	uint16_t reserved;
	uint32_t reserved2;
	/* struct cap_pack_frame frames[nr] */
};
struct cap_pack_frame {
	uint32_t name_id; /* STRING id, 0: DWARF names none at this level */
	uint32_t file_id; /* STRING id, 0: unknown */
	uint32_t line;    /* 0: unknown */
};
#define CAP_PACK_MAX_FRAMES 32
#define CAP_PACK_MAX_ADDRS (1u << 20) /* PACK_ADDRs a writer puts in a file */
#define CAP_PACK_MAX_JIT (1u << 20)   /* PACK_JITs a writer puts in a file */

/* §4.21 PACK_JIT: an entry of a process's JIT map (/tmp/perf-PID.map). */
struct cap_pack_jit {
	uint64_t start;
	uint64_t size;
	uint64_t time;     /* monotonic ns when the map was read, 0 unknown */
	uint32_t pid;
	uint32_t name_len; /* <= CAP_MAX_STRING */
	/* char name[name_len] */
};

/* §4.22 PACK_INFO: the pack's last record. */
struct cap_pack_info {
	uint64_t objects;
	uint64_t symbols;
	uint64_t addresses;
	uint64_t jit_entries;
	uint64_t jit_maps;        /* JIT maps read */
	uint64_t unnamed;         /* addresses hit that nothing named */
	uint64_t objects_missing; /* objects hit without a usable file */
	uint64_t left_out;        /* left out at a bound or the size limit */
};

/* §4.11 OFFCPU: one blocking interval [start, start+duration). */
struct cap_offcpu {
	uint64_t start;    /* monotonic ns at switch-out */
	uint64_t duration; /* ns until switch-in */
	uint32_t tid;
	uint32_t pid;
	uint32_t cpu;      /* CPU it switched out on */
	uint32_t state;    /* task state at switch-out (TASK_* bits) */
	uint32_t ustack;   /* STACK id */
	uint32_t kstack;   /* STACK id */
	uint32_t open;     /* 1.2: CAP_OFFCPU_OPEN_* (0 in 40-byte records) */
	uint32_t reserved;
	uint64_t cgroup;   /* 1.5: cgroup v2 id of the thread (CGROUP); 0 unknown */
};
#define CAP_OFFCPU_SIZE_1_1 40u /* OFFCPU without `open`, as 1.0 and 1.1 wrote it */
#define CAP_OFFCPU_SIZE_1_4 48u /* OFFCPU without `cgroup` (1.2-1.4) */
/* §4.11 OFFCPU.open: a wait the recording did not see whole. */
#define CAP_OFFCPU_OPEN_START 0x1 /* began before this file's recording */
#define CAP_OFFCPU_OPEN_END 0x2   /* still off CPU when the file ended */
#define CAP_OFFCPU_START_UNKNOWN 0x4 /* with OPEN_START: the kernel did not
				      * say when; start is when it was found */

/* §4.23 WAKEUP: a thread woken, by whom, with the waker's stacks. */
struct cap_wakeup {
	uint64_t time;      /* monotonic ns when it was woken (sched_waking) */
	uint32_t tid;       /* the thread woken */
	uint32_t pid;
	uint32_t waker_tid; /* 0: an interrupt (flags) */
	uint32_t waker_pid;
	uint32_t cpu;       /* the CPU the waker ran on */
	uint32_t flags;     /* CAP_WAKEUP_F_* */
	uint32_t ustack;    /* the waker's STACK ids */
	uint32_t kstack;
	uint32_t io_major;  /* with CAP_WAKEUP_F_IO: the block request whose */
	uint32_t io_minor;  /* completion woke it (the BIO record with this */
	uint64_t io_sector; /* device, sector and complete_time) */
	uint64_t io_complete_time;
	uint64_t cgroup;       /* 1.5: cgroup v2 id of the thread woken; 0 unknown */
	uint64_t waker_cgroup; /* 1.5: the waker's; 0 unknown or an interrupt */
};
#define CAP_WAKEUP_SIZE_1_4 64u /* WAKEUP without the cgroups (1.2-1.4) */
#define CAP_WAKEUP_F_HARDIRQ 0x1 /* woken from a hardware interrupt */
#define CAP_WAKEUP_F_SOFTIRQ 0x2 /* woken from a softirq */
#define CAP_WAKEUP_F_KTHREAD 0x4 /* the waker is a kernel thread */
#define CAP_WAKEUP_F_IO 0x8      /* in a block request's completion: io_* */

/* §4.12 CPU: one timed sample. */
struct cap_cpu {
	uint64_t time;
	uint32_t tid;
	uint32_t pid;
	uint32_t cpu;
	uint32_t ustack;
	uint32_t kstack;
	uint32_t reserved;
	uint64_t cgroup;   /* 1.5: cgroup v2 id of the thread sampled; 0 unknown */
};
#define CAP_CPU_SIZE_1_4 32u /* CPU without `cgroup` (1.0-1.4) */

/* §4.13 BIO: one completed block request. */
struct cap_bio {
	uint64_t issue_time;    /* monotonic ns at block_rq_issue */
	uint64_t complete_time; /* monotonic ns at block_rq_complete */
	uint64_t sector;
	uint32_t bytes;
	uint32_t tid;           /* issuing thread, 0 if unknown */
	uint32_t pid;
	uint32_t major;
	uint32_t minor;
	uint8_t op;             /* CAP_BIO_OP_* */
	uint8_t reserved;
	uint16_t flags;         /* CAP_BIO_F_* */
	int32_t error;          /* 0 or -errno */
	char comm[16];          /* issuing task's name at issue */
	uint32_t reserved2;     /* zero; makes the layout padding-free */
	uint32_t ustack;        /* 1.1: the submitter's stacks at submission */
	uint32_t kstack;        /* (0 in 72-byte records of older writers) */
	uint64_t cgroup;        /* 1.5: the submitter's cgroup v2 id; 0 unknown */
};
#define CAP_BIO_SIZE_1_0 72u /* BIO without stacks, as 1.0 and early 1.1 wrote it */
#define CAP_BIO_SIZE_1_4 80u /* BIO without `cgroup` (1.1-1.4) */
enum cap_bio_op {
	CAP_BIO_READ = 0,
	CAP_BIO_WRITE = 1,
	CAP_BIO_FLUSH = 2,
	CAP_BIO_DISCARD = 3,
	CAP_BIO_OTHER = 4,
};
#define CAP_BIO_F_SYNC 0x1
#define CAP_BIO_F_FUA 0x2
#define CAP_BIO_F_META 0x4
#define CAP_BIO_F_PREFLUSH 0x8

/* §4.14 LOST: `count` more events of `kind` were lost for `reason`. Counts
 * add up over the file. */
struct cap_lost {
	uint64_t count;
	uint32_t kind;   /* enum cap_kind */
	uint32_t reason; /* enum cap_lost_reason */
	uint32_t cpu;    /* or 0xffffffff: all CPUs */
	uint32_t reserved;
};
enum cap_lost_reason {
	CAP_LOST_RINGBUF = 0,    /* ringbuf reservation failed */
	CAP_LOST_USTACK = 1,     /* user stack could not be taken (event kept) */
	CAP_LOST_KSTACK = 2,     /* kernel stack could not be taken (event kept) */
	CAP_LOST_SIDEBAND = 3,   /* perf side band lost records */
	CAP_LOST_STATE = 4,      /* in-kernel state table full */
	CAP_LOST_FILE_FULL = 5,  /* 1.2: not written, the file had reached
				  * --max-size (waits open at the stop) */
	CAP_LOST_MAX = 6,
};
const char *cap_lost_reason_name(enum cap_lost_reason reason);

/* §4.15 STAT: a named recorder statistic (key is a STRING id). */
struct cap_stat {
	uint64_t value;
	uint32_t key_id;
	uint32_t reserved;
};

/* §4.15 the keys stkrec's recorder writes, in the order it writes them. */
enum cap_stat_key {
	CAP_STAT_EVENTS_OFFCPU,
	CAP_STAT_EVENTS_CPU,
	CAP_STAT_EVENTS_BIO,
	CAP_STAT_STACKS,
	CAP_STAT_STRINGS,
	CAP_STAT_THREADS,
	CAP_STAT_RINGBUF_SIZE,
	CAP_STAT_BAD_RINGBUF_RECORDS,
	CAP_STAT_MAPS_UNREADABLE,
	CAP_STAT_SIDEBAND_LOST,
	CAP_STAT_BIO_UNSEEN,
	CAP_STAT_BIO_FILTERED,
	CAP_STAT_DURATION_NS,
	CAP_STAT_BYTES_RAW,
	CAP_STAT_SKIPPED_OFFCPU,
	CAP_STAT_SKIPPED_CPU,
	CAP_STAT_SKIPPED_BIO,
	CAP_STAT_BIO_MISSED,
	CAP_STAT_BIO_INCOMPLETE,
	CAP_STAT_UNWIND_TRUNC_OFFCPU,
	CAP_STAT_UNWIND_TRUNC_CPU,
	CAP_STAT_UNWIND_TRUNC_BIO,
	CAP_STAT_UNWIND_NO_TABLES_OFFCPU,
	CAP_STAT_UNWIND_NO_TABLES_CPU,
	CAP_STAT_UNWIND_NO_TABLES_BIO,
	CAP_STAT_UNWIND_FP_FRAMES_OFFCPU,
	CAP_STAT_UNWIND_FP_FRAMES_CPU,
	CAP_STAT_UNWIND_FP_FRAMES_BIO,
	CAP_STAT_UNWIND_FILES,
	CAP_STAT_UNWIND_FILES_FAILED,
	CAP_STAT_UNWIND_ROWS,
	CAP_STAT_UNWIND_FULL,
	CAP_STAT_UNWIND_MAPS_DROPPED,
	CAP_STAT_EVENTS_WAKEUP,          /* 1.2: record -e wakeup */
	CAP_STAT_SKIPPED_WAKEUP,
	CAP_STAT_UNWIND_TRUNC_WAKEUP,
	CAP_STAT_UNWIND_NO_TABLES_WAKEUP,
	CAP_STAT_UNWIND_FP_FRAMES_WAKEUP,
	CAP_STAT_JIT_MAPS_REFUSED,       /* JIT maps not trusted (§4.15) */
	/* 1.4, written with the PYTHON feature only: */
	CAP_STAT_PY_PROCESSES,
	CAP_STAT_PY_UNSUPPORTED,
	CAP_STAT_PY_CODES_UNREAD,
	CAP_STAT_PY_CUT_OFFCPU,
	CAP_STAT_PY_CUT_CPU,
	CAP_STAT_PY_CUT_BIO,
	CAP_STAT_PY_CUT_WAKEUP,
	CAP_STAT_PY_TOO_DEEP,
	/* 1.5, written with the CGROUP feature only: */
	CAP_STAT_CGROUP_FILTERED_OFFCPU,
	CAP_STAT_CGROUP_FILTERED_CPU,
	CAP_STAT_CGROUP_FILTERED_WAKEUP,
	CAP_STAT_CGROUPS_UNNAMED,
	CAP_STAT_UNTRACED_OFFCPU,        /* 1.6 recorders since 2026-11-28 */
	CAP_STAT_RECOVERED_OFFCPU,
	CAP_STAT_UNWIND_CACHED_OFFCPU,   /* 1.6 recorders since 2026-12-02 */
	CAP_STAT_UNWIND_CACHED_WAKEUP,
	CAP_STAT_KSTACK_CACHED_OFFCPU,   /* 1.6 recorders since 2026-12-06 */
	CAP_STAT_KSTACK_CACHED_WAKEUP,
	CAP_STAT_UNTRACED_WAKEUP,        /* 1.6 recorders since 2026-12-06, later */
	CAP_STAT_MAX,
};
/* What a key says of the recording's completeness (§4.15 "Class"). */
enum cap_stat_class {
	CAP_STAT_COUNT = 0,    /* a count or size: nothing missing */
	CAP_STAT_NOT_RUN,      /* events the kernel ran no recorder program for */
	CAP_STAT_INCOMPLETE,   /* block requests not seen completing */
};
/* The wire key of k, or NULL out of range. */
const char *cap_stat_key_name(enum cap_stat_key k);
/* The key named key, or -1 for a key this version does not know. */
int cap_stat_key_of(const char *key);
/* The class of a key as found in a capture; unknown keys are counts. */
enum cap_stat_class cap_stat_classify(const char *key);

/* §4.15: why a JIT map (/tmp/perf-PID.map) was refused. Each refused map
 * is one STAT record of the reason's key, its value the pid. */
enum cap_jit_refusal {
	CAP_JIT_REFUSED_NOT_REGULAR,   /* a symlink, or not a regular file */
	CAP_JIT_REFUSED_OWNER,         /* owned by neither the process's user nor root */
	CAP_JIT_REFUSED_MAX,
};
/* The STAT key of reason why ("jit.refused.owner"), NULL out of range. */
const char *cap_jit_refusal_key(enum cap_jit_refusal why);
/* Its words for a person ("owned by ..."), NULL out of range. */
const char *cap_jit_refusal_text(enum cap_jit_refusal why);
/* The reason whose key is key, or -1. */
int cap_jit_refusal_of(const char *key);

/* §6.1 loss accounting: LOST records also count stacks that could not be
 * taken, whose events were kept; split, the two never mix. */
struct cap_loss {
	uint64_t events[CAP_KIND_MAX]; /* events lost, per kind */
	uint64_t stacks_missed[2];     /* user, kernel: events kept without one */
};

/* §4.16 END: the recorder stopped. */
struct cap_end {
	uint64_t time;
	uint32_t reason; /* enum cap_stop_reason */
	int32_t error;   /* -errno for CAP_STOP_ERROR */
	int32_t status;  /* exit status of the recorded command, or -1 */
	uint32_t reserved;
};
enum cap_stop_reason {
	CAP_STOP_SIGNAL = 0,
	CAP_STOP_DURATION = 1,
	CAP_STOP_COMMAND = 2,
	CAP_STOP_ERROR = 3,
	CAP_STOP_MAX_SIZE = 4,
	CAP_STOP_SWITCH = 5,   /* --switch-output: continues in the next file */
};

/* §3 header, as the reader returns it (host byte order, NUL-terminated). */
struct cap_header {
	uint16_t major;
	uint16_t minor;
	uint32_t features;
	uint64_t start_time;     /* monotonic ns when recording started */
	uint64_t start_realtime; /* CLOCK_REALTIME ns at the same instant */
	int64_t clock_offset;    /* realtime = monotonic + clock_offset */
	uint32_t ncpus;
	uint32_t page_size;
	uint32_t recorder_pid;
	char hostname[65];
	char release[65];
	char machine[65];
	char version[33];        /* stkrec version that wrote it */
	char cmdline[1024];      /* recording command line, truncated if longer */
	/* 1.3: how CPU samples were taken; 0 (CAP_CLOCK_NONE) in older files */
	uint32_t sample_clock;   /* enum cap_clock */
	uint32_t sample_flags;   /* CAP_SAMPLE_FREQ */
	uint64_t sample_rate;    /* with CAP_SAMPLE_FREQ samples/s per CPU, else
				  * ns of the clock between samples */
};

/* §3.1 (1.3) the clock CPU samples (§4.12) were taken on */
enum cap_clock {
	CAP_CLOCK_NONE = 0, /* not said: no CPU samples, or written before 1.3 */
	CAP_CLOCK_CPU = 1,  /* perf's software cpu-clock event: CPU time, ns */
};
#define CAP_SAMPLE_FREQ 0x1u /* sample_rate is a frequency (record -F) */
/* "cpu-clock", or NULL for a clock this version does not know. */
const char *cap_clock_name(uint32_t clock);
/* The clock time one sample stands for, ns: sample_rate, or a second over
 * it (rounded) with CAP_SAMPLE_FREQ; 0 when that is none. */
uint64_t cap_sample_period(uint32_t flags, uint64_t rate);

/* Totals the writer counts and the trailer stores (§6), per kind. */
struct cap_totals {
	uint64_t events[CAP_KIND_MAX];
	uint64_t lost[CAP_KIND_MAX];
	uint64_t records;
	uint64_t blocks;
	uint64_t end_time;     /* monotonic ns of the END record, or 0 */
	uint64_t bytes_raw;    /* uncompressed block bytes */
	uint64_t bytes_file;   /* file size */
};

/* ------------------------------------------------------------------------
 * Writer
 */
struct cap_writer;

struct cap_writer_opts {
	size_t block_size;       /* close a block at this many bytes; 0: default */
	uint64_t block_age_ns;   /* ... or when its first record is this old */
	int level;               /* zstd level; 0: default (3) */
	uint64_t max_size;       /* stop accepting records past this; 0: none */
	/* Write OFFCPU as the fixed 1.0 record (§4.11) instead of the compact
	 * 1.1 one (§4.17): files for 1.0 readers, and tests. */
	bool fixed_offcpu;
	/* Write hook for tests (fault injection); NULL: write(2). Returns as
	 * write(2) does: bytes written, or -1 with errno set. */
	ssize_t (*write_fn)(int fd, const void *buf, size_t len, void *ctx);
	void *write_ctx;
	/* Mode of the file cap_writer__open() creates; 0: CAP_FILE_MODE. */
	unsigned int mode;
	/* cap_writer__open(): the name must be new (CAP_CREATE_EXCL). */
	bool exclusive;
};

/*
 * Capture files are private: a capture holds kernel addresses, paths and
 * stacks of every process. They are created CAP_FILE_MODE (whatever the
 * umask), never through a symlink. With CAP_CREATE_EXCL (a name stkrec
 * chose) the name must be new; without it (a name the user gave) an
 * existing regular file is replaced by a new one, so that nobody keeps an
 * open descriptor of it, and a device or FIFO is written as it is. Both
 * return an fd or -errno.
 */
#define CAP_FILE_MODE 0600u
#define CAP_CREATE_EXCL 0x1u
int cap_file__create(const char *path, unsigned int flags, unsigned int mode);
/* A new file from a mkstemp() template (tmpl ends in XXXXXX, rewritten). */
int cap_file__create_tmp(char *tmpl, unsigned int mode);

/* Create path (cap_file__create()) or take over fd, and write the header
 * frame. */
int cap_writer__open(const char *path, const struct cap_header *hdr,
		     const struct cap_writer_opts *opts, struct cap_writer **out);
int cap_writer__fdopen(int fd, const struct cap_header *hdr,
		       const struct cap_writer_opts *opts, struct cap_writer **out);

/* Append one record: `fixed` is the type's struct above, `tail` its variable
 * part (string bytes, ips, name) or NULL. Counts events and LOST for the
 * totals. May close and write a block. */
int cap_writer__append(struct cap_writer *w, uint16_t type, const void *fixed,
		       size_t fixed_len, const void *tail, size_t tail_len);

/* A record as cap_reader__next() decoded it, appended again with its
 * fixed part `fixed` bytes long (copies: stkrec pack and scrub, the flight
 * recorder's dumps); cap_record_fixed_len() is how long the file had it. */
struct cap_record;
int cap_writer__append_record(struct cap_writer *w, const struct cap_record *rec, size_t fixed);
size_t cap_record_fixed_len(const struct cap_record *rec);

/* Convenience wrappers around cap_writer__append(). */
int cap_writer__string(struct cap_writer *w, uint32_t id, const char *s, size_t len);
int cap_writer__stack(struct cap_writer *w, uint32_t id, uint8_t kind,
		      const uint64_t *ips, uint16_t nr);

/* Close the current block if it is older than the age limit at `now`
 * (monotonic ns). Call it about every 100 ms. */
int cap_writer__tick(struct cap_writer *w, uint64_t now);
/* Close and write the current block now. */
int cap_writer__flush(struct cap_writer *w);
/* Flush, write the trailer, fsync and close. Frees w in all cases. */
int cap_writer__finish(struct cap_writer *w);
/* The same, and *size: the bytes the capture holds in the end (its trailer
 * included once written), which a pipe has no size to tell. */
int cap_writer__finish_size(struct cap_writer *w, uint64_t *size);
/* Drop w without a trailer (after a fatal error); closes the fd. */
void cap_writer__free(struct cap_writer *w);

const struct cap_totals *cap_writer__totals(const struct cap_writer *w);
uint64_t cap_writer__file_size(const struct cap_writer *w); /* bytes written */

/*
 * A tap: fn sees each record the writer takes from then on (whichever
 * cap_writer__*() wrote it), as cap_writer__append() was given it (an
 * OFFCPU as its struct, however it is written), once it is in the block,
 * in the file's order: what a reader of the file gets back, without
 * reading it. The recorder's symbol pack collects what it needs so. fn
 * must not write through w. NULL fn: none (the writer's cost is then one
 * test per record).
 */
typedef void (*cap_writer_tap_fn)(void *ctx, uint16_t type, const void *fixed, size_t fixed_len,
				  const void *tail, size_t tail_len);
void cap_writer__set_tap(struct cap_writer *w, cap_writer_tap_fn fn, void *ctx);

/* ------------------------------------------------------------------------
 * Reader
 */
struct cap_reader;

/* A decoded record. `fixed` holds the type's struct, zero-extended when the
 * file's record is shorter (older writer) and truncated when longer (newer
 * writer). tail/tail_len: the variable part; ips: the stack's frames, aligned.
 * A compact OFFCPU (§4.17) comes back decoded, as type CAP_REC_OFFCPU.
 * Pointers stay valid until the next cap_reader__next(). */
struct cap_record {
	uint16_t type;
	uint16_t size;
	uint64_t file_offset; /* offset of the block's frame in the file */
	union {
		struct cap_block block;
		struct cap_string string;
		struct cap_stack stack;
		struct cap_thread thread;
		struct cap_fork fork;
		struct cap_mapping mapping;
		struct cap_kernel kernel;
		struct cap_kmod kmod;
		struct cap_ksym ksym;
		struct cap_blockdev blockdev;
		struct cap_offcpu offcpu;
		struct cap_cpu cpu;
		struct cap_bio bio;
		struct cap_wakeup wakeup;
		struct cap_lost lost;
		struct cap_stat stat;
		struct cap_end end;
		struct cap_pack_object pack_object;
		struct cap_pack_symbol pack_symbol;
		struct cap_pack_addr pack_addr;
		struct cap_pack_jit pack_jit;
		struct cap_pack_info pack_info;
		struct cap_py_code py_code;
		struct cap_cgroup cgroup;
		struct cap_trigger trigger;
		uint8_t raw[96];
	};
	const char *tail;       /* STRING data, KSYM and PACK_JIT names, PY_CODE's
				 * three parts, CGROUP's path; a NUL-terminated copy */
	uint32_t tail_len;
	const uint64_t *ips;    /* STACK frames (stack.nr of them) */
	const struct cap_pack_frame *frames; /* PACK_ADDR (pack_addr.nr) */
};

/* What the reader saw; complete once cap_reader__next() returned 0. */
struct cap_read_stats {
	bool has_trailer;        /* a valid trailer was found */
	bool has_end;            /* an END record was read */
	bool recovered;          /* anything was missing or damaged */
	uint64_t blocks;         /* blocks decoded */
	uint64_t bad_blocks;     /* blocks skipped: checksum or decode error */
	uint64_t bytes_skipped;  /* bytes of damaged data passed over */
	uint64_t truncated_at;   /* offset where data ended early, or 0 */
	uint64_t unknown_records;/* records of unknown type skipped */
	uint64_t bad_records;    /* records too short for their type */
	uint64_t file_size;
	uint64_t bytes_raw;      /* uncompressed bytes of decoded blocks */
	int first_error;         /* first error met while recovering, or 0 */
	uint64_t first_error_offset;
	struct cap_totals counted;  /* counted from the records read */
	struct cap_totals trailer;  /* from the trailer, if has_trailer */
};

/* Open and validate the header. Refuses bad magic, newer major versions and
 * unknown incompatible features. Never trusts a length in the file. */
int cap_reader__open(const char *path, struct cap_reader **out);
/* The same on a memory buffer (fuzzing, tests); buf must outlive the reader. */
int cap_reader__open_mem(const void *buf, size_t len, struct cap_reader **out);
/* A second reader of r's file or buffer, from its start (r must outlive
 * it: a file's mapping is r's); CAP_ERR_INVAL for a stream, which is read
 * once. */
int cap_reader__reopen(const struct cap_reader *r, struct cap_reader **out);

const struct cap_header *cap_reader__header(const struct cap_reader *r);

/* Next record: 1 with *rec filled, 0 at the end of the data, <0 on an error
 * that stops reading (damaged blocks are skipped and counted, not errors). */
int cap_reader__next(struct cap_reader *r, struct cap_record *rec);
/* The OFFCPU events of the records next in the block being read, up to max,
 * into out, as cap_reader__next() would give them one by one: how many; 0
 * when the next record is not one (cap_reader__next() reads it). For a
 * load that reads millions of them: one call per run of them. */
size_t cap_reader__next_offcpus(struct cap_reader *r, struct cap_offcpu *out, size_t max);

const struct cap_read_stats *cap_reader__stats(const struct cap_reader *r);

/* Human description of what was lost when stats->recovered is set, e.g.
 * "file ends at byte 81234 inside block 7 (no trailer); 1 damaged block
 * skipped". Writes at most len bytes; returns buf. */
char *cap_reader__describe_loss(const struct cap_reader *r, char *buf, size_t len);

void cap_reader__close(struct cap_reader *r);


/* ------------------------------------------------------------------------
 * Additions (appended after the first API draft; see FORMAT.md §9).
 */

/* §2 zstd skippable-frame magics used by stkrec; the frame payload is one
 * of the structures below. */
#define CAP_ZSTD_MAGIC 0xFD2FB528u          /* a regular zstd frame (block) */
#define CAP_SKIP_MAGIC_HEADER 0x184D2A53u   /* header frame */
#define CAP_SKIP_MAGIC_TRAILER 0x184D2A5Eu  /* trailer frame */
#define CAP_MAX_TRAILER_SIZE (64u << 20)    /* §7: trailer frame, in bytes */
/* §5.3 with max_size set, LOST, STAT, TRIGGER, END and PACK_INFO records may
 * still use this many bytes after other records get CAP_ERR_FULL, so a full
 * capture still ends with its final counts (and a full dump says why it was
 * written). */
#define CAP_WRITER_END_RESERVE 4096u
#define CAP_MIN_BLOCK_SIZE 256u             /* smaller opts.block_size is raised */

/* §3.1 feature flags: the low 16 bits are compatible (readers ignore unknown
 * ones), the high 16 bits incompatible (readers refuse unknown ones). */
#define CAP_FEAT_INCOMPAT_MASK 0xffff0000u
#define CAP_FEAT_DWARF_UNWIND 0x00000001u   /* compatible (1.1): --call-graph dwarf */
/* compatible (within 1.2), `stkrec scrub`: kernel addresses are offsets
 * from _stext (KERNEL.stext 0), no hostname, cmdline the options only */
#define CAP_FEAT_SCRUBBED 0x00000002u
/* compatible (within 1.2), `stkrec scrub --paths`: home directories in
 * STRINGs and cmdline replaced by placeholders (CAP_SCRUB_HOME, _ROOT) */
#define CAP_FEAT_SCRUBBED_PATHS 0x00000004u
#define CAP_SCRUB_HOME "/home/<user>"
#define CAP_SCRUB_ROOT "/<root>"
#define CAP_FEAT_PYTHON 0x00000008u /* compatible (1.4): user stacks may hold
					* Python frames (§4.3, §4.24) */
#define CAP_FEAT_CGROUP 0x00000010u /* compatible (1.5): events carry cgroup
					* v2 ids, CGROUP records name them */
#define CAP_FEAT_KNOWN (CAP_FEAT_DWARF_UNWIND | CAP_FEAT_SCRUBBED | CAP_FEAT_SCRUBBED_PATHS | \
			CAP_FEAT_PYTHON | CAP_FEAT_CGROUP)

/* §3.1 the header payload's fixed part, as stored. Followed by cmdline_len
 * bytes of command line, then a CRC-32 of everything before it. */
#define CAP_HEADER_MAGIC "STKRCAP\0"
struct cap_file_header {
	uint8_t magic[8];
	uint16_t major;
	uint16_t minor;
	uint32_t features;
	uint32_t fixed_size;     /* bytes of this fixed part: 296 in 1.0, 312 in 1.3 */
	uint32_t cmdline_len;
	uint64_t start_time;
	uint64_t start_realtime;
	int64_t clock_offset;
	uint32_t ncpus;
	uint32_t page_size;
	uint32_t recorder_pid;
	uint32_t reserved;
	char hostname[65];
	char release[65];
	char machine[65];
	char version[33];
	uint8_t reserved2[4];
	uint32_t sample_clock;   /* 1.3: enum cap_clock */
	uint32_t sample_flags;   /* 1.3: CAP_SAMPLE_FREQ */
	uint64_t sample_rate;    /* 1.3 */
};
#define CAP_HEADER_MIN_FIXED 24u /* up to and including cmdline_len */
#define CAP_HEADER_FIXED_1_2 296u /* the fixed part up to 1.2 */

/* §6.1 the trailer payload starts with this ... */
#define CAP_TRAILER_MAGIC "STKRTRL\0"
struct cap_trailer_hdr {
	uint8_t magic[8];
	uint32_t fixed_size;     /* bytes of this struct: 144 in 1.2, 128 before */
	uint32_t nr_index;       /* number of index entries */
	uint32_t index_entry_size; /* 32 in 1.0 */
	uint32_t reserved;
	uint64_t events[4];      /* kinds 0-3 (§5.5) */
	uint64_t lost[4];
	uint64_t records;
	uint64_t blocks;
	uint64_t end_time;
	uint64_t bytes_raw;
	uint64_t bytes_file;
	uint64_t events_wakeup;  /* 1.2: kind 4 */
	uint64_t lost_wakeup;
};
#define CAP_TRAILER_SIZE_1_1 128u /* the header without kind 4, before 1.2 */
/* §6.2 ... then one entry per block in file order ... */
struct cap_index_entry {
	uint64_t offset;         /* file offset of the block's zstd frame */
	uint32_t csize;          /* compressed frame size */
	uint32_t usize;          /* uncompressed size */
	uint64_t seq;
	uint64_t first_time;
};
/* §6.3 ... and ends with this footer: the last 16 bytes of the file. */
#define CAP_FOOTER_MAGIC "STKRTAIL"
struct cap_footer {
	uint32_t frame_size;     /* whole trailer frame incl. its 8-byte frame header */
	uint32_t crc;            /* CRC-32 of the trailer payload before the footer */
	uint8_t magic[8];
};

/* Version and features of a capture whose header is readable (magic and the
 * first fields present), even when cap_reader__open() refuses it with
 * CAP_ERR_VERSION or CAP_ERR_FEATURE: lets a caller name both versions. */
int cap_file_version(const char *path, uint16_t *major, uint16_t *minor,
		     uint32_t *features);
int cap_mem_version(const void *buf, size_t len, uint16_t *major,
		    uint16_t *minor, uint32_t *features);

/* CRC-32 (ISO-HDLC: zlib's crc32()) used by the header and trailer. */
uint32_t cap_crc32(uint32_t crc, const void *buf, size_t len);

/* Name of a record type ("offcpu", "stack", ...), or NULL when unknown. */
const char *cap_rec_type_name(uint16_t type);
/* Bytes of a known type's fixed part in this version (§4), 0 if unknown. */
size_t cap_rec_fixed_size(uint16_t type);
/* Name of a stop reason ("signal", "duration", ...); "unknown" otherwise. */
const char *cap_stop_reason_name(uint32_t reason);

/* Lost events of one kind per reason, summed over LOST records read. */
struct cap_lost_detail {
	uint64_t count[CAP_KIND_MAX][CAP_LOST_MAX];
};
const struct cap_lost_detail *cap_reader__lost_detail(const struct cap_reader *r);
/* Events lost and stacks missed from LOST counts (§6.1). */
void cap_loss__split(const struct cap_lost_detail *d, struct cap_loss *out);

/* Records of this type (0..255) read so far; 0 for larger types. */
uint64_t cap_reader__type_count(const struct cap_reader *r, uint16_t type);

/* ------------------------------------------------------------------------
 * Streams (FORMAT.md §5.6): a capture read once, front to back, from a pipe,
 * a socket or any fd that cannot seek (stdin), with the same result as
 * reading the same bytes from a file. The fd is the caller's: never closed
 * here. A stream opens one reader, once; it must outlive that reader.
 */
struct cap_stream;

struct cap_stream_opts {
	/* Read hook for tests (chunking, faults); NULL: read(2). Returns as
	 * read(2) does: bytes read, 0 at the end, or -1 with errno set. */
	ssize_t (*read_fn)(int fd, void *buf, size_t len, void *ctx);
	void *read_ctx;
};

int cap_stream__new(int fd, const struct cap_stream_opts *opts, struct cap_stream **out);
void cap_stream__free(struct cap_stream *s);
/* cap_reader__open() on a stream: reads the header, and no further. A read
 * error (-errno: EISDIR for a directory) fails it; a read error later ends
 * the input where it happened, and cap_reader__next() returns it at the end
 * instead of 0. */
int cap_reader__open_stream(struct cap_stream *s, struct cap_reader **out);
/* cap_file_version() for the stream's first bytes, once open was tried. */
int cap_stream__version(const struct cap_stream *s, uint16_t *major, uint16_t *minor,
			uint32_t *features);

#endif /* STKREC_FORMAT_CAPTURE_H */
