// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capture -> memory. One pass over the records collects definitions and
 * events; model_finish() then sorts the time-dependent tables (thread names,
 * execs, mappings) and builds the kernel symbol table, so definitions that
 * arrive late (or never) cost nothing but a missing name; the wakeups and
 * the symbol pack are joined and indexed last. This file calls down into
 * model_query.c, model_wake.c and model_pack.c; none of them calls it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/idmap.h"
#include "sym/sym.h"
#include "report/model.h"
#include "report/model_int.h"
#include "util/array.h"

static int on_string(struct model *m, const struct cap_record *r)
{
	uint64_t *val, off;
	int err;

	if (!r->string.id)
		return 0;
	err = idmap__upsert(&m->strings, r->string.id, 0, UINT64_MAX, &val);
	if (err <= 0)
		return err; /* duplicate id: the first definition stands */
	err = model_pool_add(m, r->tail, r->tail_len, &off);
	if (err)
		return err;
	*idmap__find(&m->strings, r->string.id, 0) = off;
	return 0;
}

static int on_stack(struct model *m, const struct cap_record *r)
{
	uint16_t nr = r->stack.nr;
	uint64_t *val;
	int err;

	if (!r->stack.id || r->stack.id == CAP_STACK_LOST || nr > CAP_MAX_STACK_DEPTH)
		return 0;
	if (ARRAY_RESERVE(m->ips, m->ips_cap, m->ips_len + nr))
		return -ENOMEM;
	err = idmap__upsert(&m->stacks, r->stack.id, 0, m->ips_len << 8 | nr, &val);
	if (err <= 0)
		return err;
	if (nr)
		memcpy(m->ips + m->ips_len, r->ips, nr * sizeof(uint64_t));
	m->ips_len += nr;
	return 0;
}

static int model_intern_comm(struct model *m, const char *comm, size_t len, uint32_t *id)
{
	struct model_comm c = { { 0 } };
	uint64_t k[2], *val;
	int err;

	len = strnlen(comm, len < 16 ? len : 16);
	memcpy(c.name, comm, len);
	if (!len) {
		*id = 0;
		return 0;
	}
	memcpy(k, c.name, 16);
	/* views pack comm ids in 29 bits; past that many names, "[unknown]" */
	if (m->nr_comms >= MODEL_MAX_COMMS && !idmap__find(&m->comm_ids, k[0], k[1])) {
		*id = 0;
		return 0;
	}
	err = idmap__upsert(&m->comm_ids, k[0], k[1], m->nr_comms, &val);
	if (err < 0)
		return err;
	*id = *val;
	if (err == 1)
		return ARRAY_PUSH(m->comms, m->nr_comms, m->comms_cap, c);
	return 0;
}

static int on_thread(struct model *m, const struct cap_record *r)
{
	struct model_thread t = {
		.time = r->thread.time,
		.tid = r->thread.tid,
		.pid = r->thread.pid,
		.flags = r->thread.flags,
		.seq = m->nr_threads,
		.ns_tid = r->thread.ns_tid,
		.ns_pid = r->thread.ns_pid,
	};
	struct model_exec e = { .time = r->thread.time, .pid = r->thread.pid };
	int err;

	err = model_intern_comm(m, r->thread.comm, sizeof(r->thread.comm), &t.comm);
	if (!err)
		err = ARRAY_PUSH(m->threads, m->nr_threads, m->threads_cap, t);
	if (!err && (t.flags & CAP_THREAD_EXEC))
		err = ARRAY_PUSH(m->execs, m->nr_execs, m->execs_cap, e);
	return err;
}

static int on_fork(struct model *m, const struct cap_record *r)
{
	struct model_fork f = { .time = r->fork.time, .pid = r->fork.pid,
				.ppid = r->fork.ppid };
	uint64_t *val;
	int err;

	/* Only process creation matters for mappings; a pid's first fork wins. */
	if (r->fork.pid != r->fork.tid || r->fork.pid == r->fork.ppid)
		return 0;
	err = idmap__upsert(&m->forks, r->fork.pid, 0, m->nr_forks, &val);
	if (err <= 0)
		return err;
	return ARRAY_PUSH(m->forks_v, m->nr_forks, m->forks_cap, f);
}

static int on_mapping(struct model *m, const struct cap_record *r)
{
	const struct cap_mapping *c = &r->mapping;
	struct model_rawmap rm = { .rec = *c, .seq = m->nr_rawmaps };

	if (c->end <= c->start)
		return 0;
	if (rm.rec.build_id_size > sizeof(rm.rec.build_id))
		rm.rec.build_id_size = sizeof(rm.rec.build_id);
	return ARRAY_PUSH(m->rawmaps, m->nr_rawmaps, m->rawmaps_cap, rm);
}

static int on_ksym(struct model *m, const struct cap_record *r)
{
	struct model_ksym k = {
		.addr = r->ksym.addr,
		.size = r->ksym.size,
		.module_id = r->ksym.module_id,
		.name_len = r->tail_len,
	};
	int err;

	if (!r->tail_len)
		return 0;
	err = model_pool_add(m, r->tail, r->tail_len, &k.name_off);
	if (err)
		return err;
	return ARRAY_PUSH(m->ksyms, m->nr_ksyms, m->ksyms_cap, k);
}

static int on_kmod(struct model *m, const struct cap_record *r)
{
	struct model_kmod k = {
		.base = r->kmod.base,
		.size = r->kmod.size,
		.name_id = r->kmod.name_id,
	};

	return ARRAY_PUSH(m->kmods, m->nr_kmods, m->kmods_cap, k);
}

static int on_blockdev(struct model *m, const struct cap_record *r)
{
	struct model_bdev b = { .major = r->blockdev.major, .minor = r->blockdev.minor };
	uint64_t *val;
	int err;

	memcpy(b.name, r->blockdev.name, sizeof(r->blockdev.name));
	b.name[sizeof(b.name) - 1] = '\0';
	err = idmap__upsert(&m->bdev_ids, (uint64_t)b.major << 32 | b.minor, 0,
			    m->nr_bdevs, &val);
	if (err <= 0)
		return err;
	return ARRAY_PUSH(m->bdevs, m->nr_bdevs, m->bdevs_cap, b);
}

static void note_time(struct model *m, uint64_t t)
{
	if (t > m->last_event)
		m->last_event = t;
}

static int on_offcpu(struct model *m, const struct cap_offcpu *o)
{
	note_time(m, o->start + o->duration);
	if (m->streamed) {
		m->nr_offcpu++;
		return m->grouped ? model_group_offcpu(m, o) : 0;
	}
	return ARRAY_PUSH(m->offcpu, m->nr_offcpu, m->offcpu_cap, *o);
}

static int on_event(struct model *m, const struct cap_record *r)
{
	uint32_t comm;
	int err;

	switch (r->type) {
	case CAP_REC_OFFCPU:
		return on_offcpu(m, &r->offcpu);
	case CAP_REC_CPU:
		note_time(m, r->cpu.time);
		if (m->streamed) {
			m->nr_cpu++;
			return m->grouped ? model_group_cpu(m, &r->cpu) : 0;
		}
		return ARRAY_PUSH(m->cpu, m->nr_cpu, m->cpu_cap, r->cpu);
	case CAP_REC_WAKEUP:
		return model_on_wakeup(m, &r->wakeup);
	case CAP_REC_BIO:
		note_time(m, r->bio.complete_time);
		err = model_intern_comm(m, r->bio.comm, sizeof(r->bio.comm), &comm);
		if (!err)
			err = ARRAY_PUSH(m->bio_comm, m->nr_bio_comm, m->bio_comm_cap, comm);
		if (!err)
			err = ARRAY_PUSH(m->bio, m->nr_bio, m->bio_cap, r->bio);
		return err;
	}
	return 0;
}

static int on_misc(struct model *m, const struct cap_record *r)
{
	struct model_stat s = { .key_id = r->stat.key_id, .value = r->stat.value };

	switch (r->type) {
	case CAP_REC_LOST:
		if (r->lost.kind < CAP_KIND_MAX && r->lost.reason < CAP_LOST_MAX)
			m->lost.count[r->lost.kind][r->lost.reason] += r->lost.count;
		return 0;
	case CAP_REC_STAT:
		return ARRAY_PUSH(m->stats, m->nr_stats, m->stats_cap, s);
	case CAP_REC_END:
		if (!m->has_end) {
			m->end = r->end;
			m->has_end = true;
		}
		return 0;
	case CAP_REC_TRIGGER:
		/* FORMAT.md §4.26: the first stands, later ones are ignored
		 * (the reader has refused the malformed ones) */
		if (!m->has_trigger) {
			m->trigger = r->trigger;
			m->has_trigger = true;
		}
		return 0;
	case CAP_REC_KERNEL:
		if (!m->kernel.stext && !m->kernel.build_id_size)
			m->kernel = r->kernel;
		return 0;
	}
	return 0;
}

static int on_record(struct model *m, const struct cap_record *r)
{
	switch (r->type) {
	case CAP_REC_STRING:
		return on_string(m, r);
	case CAP_REC_STACK:
		return on_stack(m, r);
	case CAP_REC_THREAD:
		return on_thread(m, r);
	case CAP_REC_FORK:
		return on_fork(m, r);
	case CAP_REC_MAPPING:
		return on_mapping(m, r);
	case CAP_REC_KSYM:
		return on_ksym(m, r);
	case CAP_REC_KMOD:
		return on_kmod(m, r);
	case CAP_REC_BLOCKDEV:
		return on_blockdev(m, r);
	case CAP_REC_OFFCPU:
	case CAP_REC_CPU:
	case CAP_REC_BIO:
	case CAP_REC_WAKEUP:
		return on_event(m, r);
	case CAP_REC_LOST:
	case CAP_REC_STAT:
	case CAP_REC_END:
	case CAP_REC_TRIGGER:
	case CAP_REC_KERNEL:
		return on_misc(m, r);
	case CAP_REC_PACK_OBJECT:
	case CAP_REC_PACK_SYMBOL:
	case CAP_REC_PACK_ADDR:
	case CAP_REC_PACK_JIT:
	case CAP_REC_PACK_INFO:
		return model_pack_record(m, r);
	case CAP_REC_PY_CODE:
		return model_py_record(m, r);
	case CAP_REC_CGROUP:
		return model_cgroup_record(m, r);
	}
	return 0; /* BLOCK and unknown types carry nothing we need */
}

/* Bytes held by the tables (capacities, so growth is counted up front). */
static uint64_t mem_usage(const struct model *m)
{
	return m->pool_cap + m->ips_cap * sizeof(*m->ips) +
	       m->comms_cap * sizeof(*m->comms) + m->threads_cap * sizeof(*m->threads) +
	       m->execs_cap * sizeof(*m->execs) + m->forks_cap * sizeof(*m->forks_v) +
	       m->rawmaps_cap * sizeof(*m->rawmaps) * 2 + m->ksyms_cap * sizeof(*m->ksyms) +
	       m->kmods_cap * sizeof(*m->kmods) + m->bdevs_cap * sizeof(*m->bdevs) +
	       m->stats_cap * sizeof(*m->stats) + m->offcpu_cap * sizeof(*m->offcpu) +
	       m->cpu_cap * sizeof(*m->cpu) + m->bio_cap * sizeof(*m->bio) +
	       m->bio_comm_cap * sizeof(*m->bio_comm) + m->wakeups_cap * sizeof(*m->wakeups) +
	       idmap__bytes(&m->strings) +
	       idmap__bytes(&m->stacks) + idmap__bytes(&m->comm_ids) +
	       idmap__bytes(&m->forks) + idmap__bytes(&m->bdev_ids) + model_pack_bytes(m) +
	       model_py_bytes(m) + model_cgroup_bytes(m) + model_group_bytes(m);
}

static void note_loss(struct model *m, struct cap_reader *rd, int ret, uint64_t limit)
{
	char buf[400];

	if (limit) { /* the reader would only say it was not read to the end */
		snprintf(m->loss, sizeof(m->loss), "reading stopped at the memory limit "
			 "(%llu MiB) after %llu events", (unsigned long long)(limit >> 20),
			 (unsigned long long)(m->nr_offcpu + m->nr_cpu + m->nr_bio));
		return;
	}
	cap_reader__describe_loss(rd, buf, sizeof(buf));
	if (ret < 0)
		snprintf(m->loss, sizeof(m->loss), "%s%sreading stopped: %s", buf,
			 *buf ? "; " : "", cap_strerror(ret));
	else
		snprintf(m->loss, sizeof(m->loss), "%s", buf);
}

/* The next records: a run of OFFCPU events at once, else one record; how
 * many (at most max), 0 at the end with *ret cap_reader__next()'s return. */
static int read_some(struct model *m, struct cap_reader *rd, size_t max, size_t *n, int *ret)
{
	struct cap_offcpu run[64];
	struct cap_record rec;
	size_t i;
	int err = 0;

	*n = cap_reader__next_offcpus(rd, run, max < 64 ? max : 64);
	for (i = 0; !err && i < *n; i++)
		err = on_offcpu(m, &run[i]);
	if (*n)
		return err;
	*ret = cap_reader__next(rd, &rec);
	if (*ret <= 0)
		return 0;
	*n = 1;
	return on_record(m, &rec);
}

#define MEM_CHECK_EVERY 0x10000u /* records */

static int read_all(struct model *m, struct cap_reader *rd, uint64_t limit)
{
	bool full = false;
	size_t n;
	int ret = 1, err;

	for (;;) {
		err = read_some(m, rd, MEM_CHECK_EVERY - m->nrec % MEM_CHECK_EVERY, &n, &ret);
		if (err)
			return err; /* out of memory: nothing sensible to show */
		if (!n)
			break;
		m->nrec += n;
		if (!(m->nrec % MEM_CHECK_EVERY) && mem_usage(m) > limit) {
			full = true;
			break;
		}
	}
	m->stats_rd = *cap_reader__stats(rd);
	m->recovered = m->stats_rd.recovered || ret < 0 || full;
	if (m->recovered)
		note_loss(m, rd, ret, full ? limit : 0);
	return 0;
}

/* The capture *rd, opened with `err` (so each way to open one is a line):
 * its model in *out; the reader is closed either way, or kept by a model
 * that streams its events (a file's: replay, opts->stream_events). */
static int load(int err, struct cap_reader **rd, const struct model_opts *opts, bool replay,
		struct model **out)
{
	uint64_t limit = opts && opts->max_memory ? opts->max_memory : MODEL_DEFAULT_MAX_MEMORY;
	struct model *m;

	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m) {
		cap_reader__close(*rd);
		return -ENOMEM;
	}
	m->hdr = *cap_reader__header(*rd);
	m->streamed = replay && opts && opts->stream_events;
	m->grouped = m->streamed && opts->group_events;
	/* comm id 0 is the unknown name */
	err = ARRAY_PUSH(m->comms, m->nr_comms, m->comms_cap,
		       ((struct model_comm){ .name = "[unknown]" }));
	if (!err)
		err = read_all(m, *rd, limit);
	if (m->streamed)
		m->kept = *rd; /* its input, for model__replay() */
	else
		cap_reader__close(*rd);
	if (!err)
		err = model_finish(m) ?: model_wake_finish(m) ?: model_pack_finish(m);
	if (!err)
		model_group_finish(m);
	if (err) {
		model__free(m);
		return err;
	}
	*out = m;
	return 0;
}

int model__load_opts(const char *path, const struct model_opts *opts, struct model **out)
{
	struct cap_reader *rd;

	return load(cap_reader__open(path, &rd), &rd, opts, true, out);
}

int model__load(const char *path, struct model **out)
{
	return model__load_opts(path, NULL, out);
}

int model__load_mem(const void *buf, size_t len, const struct model_opts *opts,
		     struct model **out)
{
	struct cap_reader *rd;

	return load(cap_reader__open_mem(buf, len, &rd), &rd, opts, false, out);
}

int model__load_stream(struct cap_stream *s, const struct model_opts *opts,
			struct model **out)
{
	struct cap_reader *rd;

	return load(cap_reader__open_stream(s, &rd), &rd, opts, false, out);
}

bool model__streamed(const struct model *m)
{
	return m->streamed;
}

/* The load's records again, from the same input, to where the load
 * stopped; only the events it did not keep are handed on. */
int model__replay(const struct model *m, model_event_fn fn, void *arg)
{
	struct cap_reader *rd;
	struct cap_record rec;
	uint64_t n;
	int ret = 0, err;

	if (!m->streamed)
		return -EINVAL;
	err = cap_reader__reopen(m->kept, &rd);
	if (err)
		return err;
	for (n = 0; !ret && n < m->nrec; n++) {
		err = cap_reader__next(rd, &rec);
		if (err <= 0) {
			ret = err ? err : CAP_ERR_CORRUPT; /* changed since */
			break;
		}
		if (rec.type == CAP_REC_OFFCPU)
			ret = fn(arg, &rec.offcpu, NULL);
		else if (rec.type == CAP_REC_CPU)
			ret = fn(arg, NULL, &rec.cpu);
	}
	cap_reader__close(rd);
	return ret;
}

void model__free(struct model *m)
{
	if (!m)
		return;
	cap_reader__close(m->kept);
	idmap__fini(&m->strings);
	idmap__fini(&m->stacks);
	idmap__fini(&m->comm_ids);
	idmap__fini(&m->thread_ids);
	idmap__fini(&m->exec_ids);
	idmap__fini(&m->forks);
	idmap__fini(&m->map_ids);
	idmap__fini(&m->dso_ids);
	idmap__fini(&m->bdev_ids);
	idmap__fini(&m->pycode_ids);
	free(m->pycodes);
	free(m->pool);
	free(m->ips);
	free(m->comms);
	free(m->threads);
	free(m->execs);
	free(m->forks_v);
	free(m->rawmaps);
	free(m->maps);
	free(m->dsos);
	free(m->ksyms);
	free(m->kmods);
	free(m->bdevs);
	free(m->stats);
	free(m->offcpu);
	free(m->cpu);
	free(m->bio);
	free(m->bio_comm);
	free(m->wakeups);
	free(m->waker_of);
	free(m->wake_by);
	idmap__fini(&m->bio_by_done);
	if (m->ksymtab)
		ksymtab__free(m->ksymtab);
	model_pack_free(m);
	model_cgroup_free(m);
	model_group_free(m);
	free(m);
}
