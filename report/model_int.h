/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to report/model*.c: the layout of struct model. */
#ifndef STKREC_REPORT_MODEL_INT_H
#define STKREC_REPORT_MODEL_INT_H

#include <stdio.h>
#include "report/container.h"
#include "report/idmap.h"
#include "report/model.h"
#include "util/hashtab.h"

struct model_comm {
	char name[17];
};

struct model_thread {
	uint64_t time;
	uint32_t tid;
	uint32_t pid;
	uint32_t flags;
	uint32_t comm;
	uint32_t seq;
	uint32_t ns_tid, ns_pid; /* 0 unknown */
};

struct model_exec {
	uint64_t time;
	uint32_t pid;
};

struct model_fork {
	uint64_t time;
	uint32_t pid;
	uint32_t ppid;
};

struct model_rawmap {
	struct cap_mapping rec;
	uint32_t seq;
};

struct model_ksym {
	uint64_t addr;
	uint64_t name_off;
	uint32_t size;
	uint32_t module_id;
	uint32_t name_len;
};

struct model_kmod {
	uint64_t base;
	uint32_t size;
	uint32_t name_id;
};

struct model_bdev {
	uint32_t major;
	uint32_t minor;
	char name[33];
};

struct model_stat {
	uint64_t value;
	uint32_t key_id;
};

/* The symbol pack (FORMAT.md §4.18): objects, symbols and addresses as
 * read (ids looked up at the end), JIT entries sorted by pid, time, order. */
struct model_pobj {
	uint32_t id;
	uint32_t path_id;
	uint8_t build_id_size;
	uint8_t flags;
	uint8_t build_id[20];
};

struct model_psym {
	uint32_t name_id;
	uint64_t start;
	uint64_t size;
};

struct model_paddr {
	uint64_t offset;
	uint32_t object;  /* PACK_OBJECT id */
	uint32_t symbol;  /* PACK_SYMBOL id */
	uint32_t first;   /* in pframes */
	uint32_t nr;
};

struct model_jit {
	uint64_t start;
	uint64_t size;
	uint64_t time;
	uint64_t name_off; /* in pool */
	uint32_t pid;
	uint32_t seq;
};

/* Ranges in a sorted array, stored in an idmap value: start << 32 | count. */
#define RANGE(start, count) ((uint64_t)(start) << 32 | (uint32_t)(count))
#define RANGE_START(v) ((uint32_t)((v) >> 32))
#define RANGE_COUNT(v) ((uint32_t)(v))

struct model {
	struct cap_header hdr;
	struct cap_read_stats stats_rd;
	bool recovered;
	char loss[600];
	struct cap_end end;
	bool has_end;
	struct cap_trigger trigger; /* the first TRIGGER (a dump), if has_trigger */
	bool has_trigger;
	struct cap_kernel kernel; /* the first KERNEL record, zero without */
	uint64_t last_event;
	struct cap_lost_detail lost;

	char *pool;             /* string bytes, each NUL-terminated */
	size_t pool_len, pool_cap;
	struct idmap strings;   /* id -> pool offset */
	uint64_t *ips;
	size_t ips_len, ips_cap;
	struct idmap stacks;    /* id -> ips offset << 8 | nr */

	struct model_comm *comms;
	size_t nr_comms, comms_cap;
	struct idmap comm_ids;  /* 16 name bytes -> comm id */

	struct model_thread *threads;
	size_t nr_threads, threads_cap;
	struct idmap thread_ids; /* tid -> RANGE in threads (sorted) */
	struct model_exec *execs;
	size_t nr_execs, execs_cap;
	struct idmap exec_ids;  /* pid -> RANGE in execs (sorted) */
	struct model_fork *forks_v;
	size_t nr_forks, forks_cap;
	struct idmap forks;     /* pid -> index in forks_v */

	struct model_rawmap *rawmaps;
	size_t nr_rawmaps, rawmaps_cap;
	struct model_map *maps;
	size_t nr_maps;
	struct idmap map_ids;   /* pid << 32 | epoch -> RANGE in maps */
	struct model_dso *dsos;
	size_t nr_dsos, dsos_cap;
	struct idmap dso_ids;   /* (path id, build id head) -> dso index */

	struct model_ksym *ksyms;
	size_t nr_ksyms, ksyms_cap;
	struct ksymtab *ksymtab;
	struct model_kmod *kmods;
	size_t nr_kmods, kmods_cap;
	struct model_bdev *bdevs;
	size_t nr_bdevs, bdevs_cap;
	struct idmap bdev_ids;  /* major << 32 | minor -> index */
	struct model_stat *stats;
	size_t nr_stats, stats_cap;

	struct model_pobj *pobjs;
	size_t nr_pobjs, pobjs_cap;
	struct idmap pobj_ids;  /* PACK_OBJECT id -> index */
	struct model_psym *psyms;
	size_t nr_psyms, psyms_cap;
	struct idmap psym_ids;  /* PACK_SYMBOL id -> index */
	struct model_paddr *paddrs;
	size_t nr_paddrs, paddrs_cap;
	struct cap_pack_frame *pframes;
	size_t nr_pframes, pframes_cap;
	struct model_jit *jits;
	size_t nr_jits, jits_cap;
	struct idmap jit_ids;   /* pid -> RANGE in jits (sorted) */
	struct cap_pack_info pack_info;
	bool has_pack_info;

	struct model_py *pycodes; /* model_py.c: PY_CODE records as read */
	size_t nr_pycodes, pycodes_cap;
	struct idmap pycode_ids;  /* PY_CODE id -> index */
	struct model_cgroup *cgroups; /* model_cgroup.c: CGROUP records, file order */
	size_t nr_cgroups, cgroups_cap;
	struct idmap cgroup_ids;  /* cgroup id -> index */

	/* model_opts.stream_events: the reader of the load, kept open for
	 * model__replay() (its input), and how many records the load took */
	struct cap_reader *kept;
	uint64_t nrec;
	bool streamed;
	/* model_opts.group_events (model_group.c): the groups, by key in
	 * group_tab; grouped while they hold (one name per group) */
	struct model_group *groups;
	size_t nr_groups, groups_cap;
	struct hashtab group_tab;
#define MODEL_GROUP_LAST 64
	uint64_t group_last[MODEL_GROUP_LAST]; /* by tid: its last group, if the key is */
	uint64_t group_seq;
	bool grouped;
	struct cap_offcpu *offcpu; /* NULL when streamed: nr_offcpu counts them */
	size_t nr_offcpu, offcpu_cap;
	struct cap_cpu *cpu;
	size_t nr_cpu, cpu_cap;
	struct cap_bio *bio;
	size_t nr_bio, bio_cap;
	uint32_t *bio_comm;
	size_t nr_bio_comm, bio_comm_cap;
	struct cap_wakeup *wakeups;
	size_t nr_wakeups, wakeups_cap;
	uint32_t *waker_of;     /* per offcpu: 1 + its waker's index, 0 none */
	uint32_t *wake_by;      /* wakeups by (tid, time), as indexes */
	struct idmap bio_by_done; /* (complete_time, sector) -> bio index */
};

/* A CGROUP record: its path in the pool, its container named. */
struct model_cgroup {
	uint64_t id, time;
	uint64_t path_off;
	uint32_t flags;
	struct container ctr;
};

/* A PY_CODE record: its three strings in the pool. */
struct model_py {
	uint64_t qual_off, file_off, lt_off; /* pool offsets */
	uint32_t lt_len;
	int32_t firstlineno;
	uint16_t version, flags;
};

/* model_py.c: PY_CODE records (FORMAT.md §4.24). */
int model_py_record(struct model *m, const struct cap_record *r);
uint64_t model_py_bytes(const struct model *m);

/* model_cgroup.c: CGROUP records (FORMAT.md §4.25). */
int model_cgroup_record(struct model *m, const struct cap_record *r);
uint64_t model_cgroup_bytes(const struct model *m);
void model_cgroup_free(struct model *m);

/* model_group.c: the streamed events grouped as read (model__groups()). */
int model_group_offcpu(struct model *m, const struct cap_offcpu *e);
int model_group_cpu(struct model *m, const struct cap_cpu *e);
/* After model_finish(): the groups are dropped if one spans two names. */
void model_group_finish(struct model *m);
uint64_t model_group_bytes(const struct model *m);
void model_group_free(struct model *m);

/* model_query.c, which the other model files call (it calls none of them): */
/* A string into the pool at *off, read back by model__string(). */
int model_pool_add(struct model *m, const void *data, size_t len, uint64_t *off);
/* Sort the time-dependent tables, build indexes and the kernel symbol
 * table. */
int model_finish(struct model *m);
int model_cmp_u64(uint64_t a, uint64_t b);
typedef uint64_t (*model_run_key_fn)(const struct model *m, size_t i);
/* Index the runs of equal keys of a sorted array: key -> RANGE. */
int model_index_runs(const struct model *m, struct idmap *map, size_t n, model_run_key_fn key);

/* model_pack.c: the symbol pack's records, and their tables once read. */
int model_pack_record(struct model *m, const struct cap_record *r);
int model_pack_finish(struct model *m);
uint64_t model_pack_bytes(const struct model *m);
void model_pack_free(struct model *m);
/* model_wake.c: WAKEUP records, and each wait joined to its waker. */
int model_on_wakeup(struct model *m, const struct cap_wakeup *w);
int model_wake_finish(struct model *m);

/* model__offcpu_seen(), inline for the grouped load's every event. */
static inline uint64_t model_offcpu_seen(const struct model *m, const struct cap_offcpu *e,
					 uint64_t *from)
{
	uint64_t skip = 0;

	*from = e->start;
	if ((e->open & CAP_OFFCPU_OPEN_START) && e->start < m->hdr.start_time) {
		skip = m->hdr.start_time - e->start;
		*from = m->hdr.start_time;
	}
	return e->duration > skip ? e->duration - skip : 0;
}

#endif /* STKREC_REPORT_MODEL_INT_H */
