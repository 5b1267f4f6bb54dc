/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A capture loaded into memory for `stkrec report` and `stkrec script`:
 * string and stack tables, thread names over time, forks, executable
 * mappings per process (exec-aware, inherited from the fork parent), the
 * kernel symbols (as a ksymtab), block device names, loss and statistics,
 * and one array of events per kind.
 *
 * The file is hostile: every id is looked up in a hash table (never used as
 * an index), duplicate definitions keep the first one, a stack or string that
 * was never defined reads as missing, and memory grows only with the records
 * actually decoded. The library never prints.
 */
#ifndef STKREC_REPORT_MODEL_H
#define STKREC_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/capture.h"

struct model;
struct ksymtab;
struct sym_raw;

/* An executable object seen in mappings: (path, build ID) pairs. */
struct model_dso {
	const char *path;     /* recorded path ("" if the STRING is missing) */
	const char *base;     /* basename of path */
	uint8_t build_id[20];
	uint8_t build_id_size;
	bool anon;            /* anonymous executable memory (JIT) */
};

/* One mapping of a process. */
struct model_map {
	uint64_t time;
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint32_t pid;
	uint32_t dso;         /* index for model__dso() */
	uint32_t epoch;       /* execs of pid before `time` */
	uint32_t seq;         /* file order, for stable sorting */
};

struct model_opts {
	/* Stop reading when the tables would use more than this many bytes
	 * (a small, highly compressed file can decode to billions of events);
	 * what was read is kept and the model is marked recovered. 0: the
	 * default, MODEL_DEFAULT_MAX_MEMORY. */
	uint64_t max_memory;
	/* Count the off-CPU intervals and CPU samples without keeping them:
	 * model__offcpu() and model__cpu() then give none, and
	 * model__replay() reads them again from the file, so memory does not
	 * grow with them. Only model__load_opts() streams: a capture read
	 * from a stream cannot be read twice, and a buffer is the caller's. */
	bool stream_events;
	/* With stream_events: group them too as they are read, for
	 * model__groups(). */
	bool group_events;
};
#define MODEL_DEFAULT_MAX_MEMORY (4ull << 30)

/* Load a capture. Returns 0, or a negative code (-errno or CAP_ERR_*) when
 * it cannot be opened at all. Damage met while reading is not an error: what
 * was read is kept and model__recovered() says so. opts may be NULL. */
int model__load(const char *path, struct model **out);
int model__load_opts(const char *path, const struct model_opts *opts, struct model **out);
int model__load_mem(const void *buf, size_t len, const struct model_opts *opts,
		     struct model **out);
/* The same from a stream (format/capture.h), read once to its end: nothing
 * reads a capture twice, so the tables are all it costs (max_memory). */
int model__load_stream(struct cap_stream *s, const struct model_opts *opts,
			struct model **out);
void model__free(struct model *m);

const struct cap_header *model__header(const struct model *m);
/* True when the capture was truncated or damaged; model__loss_text() then
 * describes what is missing (from cap_reader__describe_loss()). */
bool model__recovered(const struct model *m);
const char *model__loss_text(const struct model *m);
/* The END record, or NULL when the capture has none. */
const struct cap_end *model__end(const struct model *m);
/* Why a flight recorder's dump was written and the window it holds: the
 * file's first TRIGGER (FORMAT.md §4.26; any later one is ignored), or
 * NULL when the file is not a dump. Its stack ids read through
 * model__stack() as any event's, and may be undefined. */
const struct cap_trigger *model__trigger(const struct model *m);
/* Monotonic ns of the last thing known to have happened (END, else the
 * latest event time); the header's start_time if nothing was recorded. */
uint64_t model__last_time(const struct model *m);

/* The KERNEL record (FORMAT.md §4.7); all zero when the capture has none. */
const struct cap_kernel *model__kernel(const struct model *m);

/* The part of an off-CPU interval the recording saw: a wait open at the
 * start (§4.11) counts from the capture's start. Its length; *from gets
 * where it begins. Views weigh and filter (-m/-M) intervals by it. */
uint64_t model__offcpu_seen(const struct model *m, const struct cap_offcpu *e, uint64_t *from);

/* Lost events (or stacks) of a kind for a reason, summed over LOST records. */
uint64_t model__lost(const struct model *m, enum cap_kind kind,
		     enum cap_lost_reason reason);
/* All LOST counts, for cap_loss__split(). */
const struct cap_lost_detail *model__lost_detail(const struct model *m);
/* STAT records in file order: 0 with *key and *value set, or -ENOENT. */
int model__stat(const struct model *m, size_t i, const char **key, uint64_t *value);

/* Event arrays, in file order (which is not strictly time order). */
const struct cap_offcpu *model__offcpu(const struct model *m, size_t *n);
const struct cap_cpu *model__cpu(const struct model *m, size_t *n);
const struct cap_bio *model__bio(const struct model *m, size_t *n);
size_t model__nr_events(const struct model *m, enum cap_kind kind);

/* True when the model was loaded with stream_events from a file: its
 * off-CPU intervals and CPU samples are read by model__replay(). */
bool model__streamed(const struct model *m);
/* Each off-CPU interval (off) or CPU sample (cpu) of a streamed model, in
 * file order: exactly those a load without stream_events would have kept
 * (the same records, to where the load stopped). fn gets one of the two,
 * the other NULL; a non-zero return stops the replay and is returned.
 * -EINVAL when the model is not streamed; a reader error that the load
 * did not meet (the file changed since) is returned as the reader's. */
typedef int (*model_event_fn)(void *arg, const struct cap_offcpu *off,
			      const struct cap_cpu *cpu);
int model__replay(const struct model *m, model_event_fn fn, void *arg);

/*
 * A streamed model's off-CPU intervals and CPU samples grouped as the load
 * read them (model_opts.group_events, report/model_group.c): by kind,
 * process, thread, stacks, cgroup, and an interval's state and open flags.
 * The views group by these, the thread's name and (pprof) the process's
 * image, so a group's events have one name (model__comm_id()) and one
 * exec epoch (model__exec_epoch()) from t_min to t_max, or the model has
 * no groups.
 */
struct model_group_key {
	uint32_t pid, tid, ustack, kstack;
	uint32_t state, open;   /* off-CPU: TASK_* bits, CAP_OFFCPU_OPEN_*; CPU: 0 */
	uint64_t cgroup;
	uint8_t kind;           /* CAP_KIND_OFFCPU or CAP_KIND_CPU */
};
struct model_group {
	struct model_group_key k;
	uint64_t count, total;  /* off-CPU: ns of the parts seen (model__offcpu_seen());
				 * CPU: samples */
	uint64_t first_time;    /* the first event's: where a wait's part seen
				 * begins, or the sample's */
	uint64_t first_start;   /* ... and its own time: switch-out, sample */
	uint64_t t_min, t_max;  /* the events' own times: switch-out, sample */
	uint64_t max;           /* the largest value (CPU: 1) */
	uint64_t max_seq;       /* the first event with it, numbered in file order
				 * among the model's grouped events */
	struct cap_offcpu max_offcpu; /* off-CPU: that interval */
};
/* The groups in the order of their first events; NULL (*n 0) without
 * group_events, or when a group's events have two thread names. */
const struct model_group *model__groups(const struct model *m, size_t *n);
/* One event that stands for a group's in what is the same for them all:
 * an off-CPU group's longest interval (max_offcpu), a CPU group's first
 * sample (its CPU number unknown: 0). */
const struct cap_offcpu *model__group_offcpu(const struct model_group *g);
void model__group_cpu(const struct model_group *g, struct cap_cpu *out);

/* WAKEUP records, in file order. */
const struct cap_wakeup *model__wakeups(const struct model *m, size_t *n);
/* Who woke the off-CPU interval e (an element of model__offcpu(), or a
 * copy of one, or one model__replay() handed on): the last WAKEUP of its
 * thread inside it, or NULL (preempted, still waiting at the end, or no
 * wakeup recorded). */
const struct cap_wakeup *model__waker(const struct model *m, const struct cap_offcpu *e);
/* The BIO record of the request whose completion ran wakeup w, or NULL
 * (w ran in none, or the capture holds no such request). */
const struct cap_bio *model__wakeup_bio(const struct model *m, const struct cap_wakeup *w);

/* The waits of every thread by their end (model_flow.c): the hops of a
 * wait chain, as --chain and the Chrome trace's wakeups follow them. */
struct wait_index;
/* 0, or -ENOMEM. */
int wait_index__new(const struct model *m, struct wait_index **out);
/* tid's last off-CPU interval (of model__offcpu()) that ended at or
 * before t, or NULL: what a waker was waiting on before it woke a thread
 * at t. */
const struct cap_offcpu *wait_index__before(const struct wait_index *w, uint32_t tid,
					    uint64_t t);
void wait_index__free(struct wait_index *w);

/* STRING by id, NUL-terminated; NULL when never defined. */
const char *model__string(const struct model *m, uint32_t id);

/* A Python code object (PY_CODE, FORMAT.md §4.24) by id: 0, or -ENOENT
 * when never defined. Pointers live as long as the model. */
struct model_pycode {
	const char *qualname;
	const char *filename;
	const uint8_t *linetable;
	uint32_t linetable_len;
	int32_t firstlineno;
	uint16_t version; /* major << 8 | minor: the line table's format */
	uint16_t flags;   /* CAP_PY_CODE_* */
};
int model__pycode(const struct model *m, uint32_t id, struct model_pycode *out);

/* Frames of STACK id, innermost first: returns nr >= 0 with *ips set (nr 0
 * for CAP_STACK_NONE), -ENOENT for CAP_STACK_LOST or an id never defined. */
int model__stack(const struct model *m, uint32_t id, const uint64_t **ips);

/* Interned command names: id 0 is "[unknown]". model__comm_id() is the name
 * of tid at `time` (the latest THREAD record at or before it, else the
 * earliest one). BIO records carry their own name: model__bio_comms()[i] is
 * the interned comm of model__bio()[i]. */
#define MODEL_MAX_COMMS (1u << 24)
uint32_t model__comm_id(const struct model *m, uint32_t tid, uint64_t time);
/* The same, and the times [*from, *to) over which tid's name is that one,
 * so that a caller may keep the answer for later times in the span. */
uint32_t model__comm_span(const struct model *m, uint32_t tid, uint64_t time, uint64_t *from,
			  uint64_t *to);
const char *model__comm_name(const struct model *m, uint32_t comm_id);
const uint32_t *model__bio_comms(const struct model *m);
size_t model__nr_comms(const struct model *m);
/* Kernel thread: a THREAD record flagged it, or tid 0 (idle). */
bool model__is_kthread(const struct model *m, uint32_t tid);

/* The ids tid had inside its own PID namespace at `time` (the THREAD
 * record model__comm_id() takes): true with *ns_pid and *ns_tid set when
 * the capture knows them (format 1.5), false (both 0) otherwise. */
bool model__ns_ids(const struct model *m, uint32_t tid, uint64_t time, uint32_t *ns_pid,
		   uint32_t *ns_tid);

/* The cgroups (CGROUP records, FORMAT.md §4.25) in file order, the first
 * definition of each id; pointers live as long as the model. */
struct container;
struct model_cgroup_info {
	uint64_t id;
	uint64_t time;        /* when the path was taken */
	uint32_t flags;       /* CAP_CGROUP_F_* */
	const char *path;     /* below the cgroup2 mount, "/" the root */
	const struct container *container; /* kind CONTAINER_NONE without one */
};
size_t model__nr_cgroups(const struct model *m);
/* Cgroup i (< model__nr_cgroups()): 0, or -ENOENT past the last. */
int model__cgroup(const struct model *m, size_t i, struct model_cgroup_info *out);
/* The index of cgroup id for model__cgroup(), or -1 (0, or never named). */
long model__cgroup_index(const struct model *m, uint64_t id);
/* The path of cgroup id, NULL when no CGROUP record names it. */
const char *model__cgroup_path(const struct model *m, uint64_t id);
/* Its container (report/container.h), NULL when no record names it. */
const struct container *model__cgroup_container(const struct model *m, uint64_t id);

/* The mapping of pid containing ip at `time`: the process's own mappings
 * since its last exec before `time` (the latest one at or before `time`,
 * else the earliest later one), else, before its first exec, those of its
 * fork parent at fork time. NULL when none. */
const struct model_map *model__find_map(const struct model *m, uint32_t pid,
					uint64_t time, uint64_t ip);
const struct model_dso *model__dso(const struct model *m, uint32_t idx);
/* Execs of pid at or before `time`: two times of one pid with the same
 * count see the same process image (model__find_map() looks no further
 * back than its last exec), so views cache named stacks per (pid, count). */
uint32_t model__exec_epoch(const struct model *m, uint32_t pid, uint64_t time);

/* Kernel symbols from KSYM records (finalized); never NULL after load. */
const struct ksymtab *model__ksymtab(const struct model *m);
/* Module containing a kernel address (KMOD records), or NULL. */
const char *model__kmod(const struct model *m, uint64_t addr, uint64_t *offset);
/* Name of a block device, or NULL when no BLOCKDEV record names it. */
const char *model__blockdev(const struct model *m, uint32_t major, uint32_t minor);

/* The symbol pack (FORMAT.md §4.18-4.22). Objects by index: path ("" when
 * unknown), build ID, packed with DWARF; -ENOENT past the last. */
size_t model__pack_objects(const struct model *m);
int model__pack_object(const struct model *m, size_t i, const char **path,
		       const uint8_t **build_id, uint8_t *build_id_size, bool *dwarf);
/* Address i (file order): the index of its object, its lookup offset and
 * its raw answer (strings from the capture; a symbol, name or file never
 * defined reads as absent). -ENOENT past the last, -ESRCH when its object
 * was never defined. */
size_t model__pack_addresses(const struct model *m);
int model__pack_address(const struct model *m, size_t i, size_t *obj, uint64_t *offset,
			struct sym_raw *raw);
/* Load the pack into a symbolizer (symbolizer__pack_object/address), as
 * the resolver does; the model must outlive s. */
struct symbolizer;
int model__pack_load(const struct model *m, struct symbolizer *s);
/* The PACK_JIT entries, sorted by pid, then the time their map was read,
 * then file order; i < model__jit_entries(). The name: model__jit_name(). */
size_t model__jit_entries(const struct model *m);
void model__jit_entry(const struct model *m, size_t i, uint32_t *pid, uint64_t *time,
		      uint64_t *start, uint64_t *size);
/* The pack's PACK_INFO, or NULL without one. */
const struct cap_pack_info *model__pack_info(const struct model *m);
/* The JIT map entry (PACK_JIT) naming addr of pid at `time` (FORMAT.md
 * §4.21): its index, or -1. *timeless is set when pid has a single map,
 * so that the answer holds at any time. */
long model__jit_find(const struct model *m, uint32_t pid, uint64_t time, uint64_t addr,
		     bool *timeless);
const char *model__jit_name(const struct model *m, long entry);
uint32_t model__jit_pid(const struct model *m, long entry);

#endif /* STKREC_REPORT_MODEL_H */
