// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The loaded model: indexes built after the pass over the file, and the
 * queries the resolver and the views make (names over time, mappings at a
 * time, kernel symbols, devices); the string pool and the index helpers
 * that model.c and model_pack.c build with. It calls no other model file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sym/sym.h"
#include "report/model_int.h"
#include "util/array.h"
#include "util/ranges.h"

#define FORK_DEPTH_MAX 16 /* parent chains in hostile files may loop */

int model_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct model_thread *a = pa, *b = pb;

	if (a->tid != b->tid)
		return model_cmp_u64(a->tid, b->tid);
	if (a->time != b->time)
		return model_cmp_u64(a->time, b->time);
	return model_cmp_u64(a->seq, b->seq);
}

static int cmp_exec(const void *pa, const void *pb)
{
	const struct model_exec *a = pa, *b = pb;

	if (a->pid != b->pid)
		return model_cmp_u64(a->pid, b->pid);
	return model_cmp_u64(a->time, b->time);
}

static int cmp_map(const void *pa, const void *pb)
{
	const struct model_map *a = pa, *b = pb;

	if (a->pid != b->pid)
		return model_cmp_u64(a->pid, b->pid);
	if (a->epoch != b->epoch)
		return model_cmp_u64(a->epoch, b->epoch);
	if (a->time != b->time)
		return model_cmp_u64(a->time, b->time);
	return model_cmp_u64(a->seq, b->seq);
}

static int cmp_kmod(const void *pa, const void *pb)
{
	const struct model_kmod *a = pa, *b = pb;

	return model_cmp_u64(a->base, b->base);
}

int model_index_runs(const struct model *m, struct idmap *map, size_t n, model_run_key_fn key)
{
	size_t i = 0, j;
	uint64_t k, *v;
	int err;

	while (i < n) {
		k = key(m, i);
		for (j = i + 1; j < n && key(m, j) == k; j++)
			;
		err = idmap__upsert(map, k, 0, RANGE(i, j - i), &v);
		if (err < 0)
			return err;
		i = j;
	}
	return 0;
}

static uint64_t thread_key(const struct model *m, size_t i)
{
	return m->threads[i].tid;
}

static uint64_t exec_key(const struct model *m, size_t i)
{
	return m->execs[i].pid;
}

static uint64_t map_key(const struct model *m, size_t i)
{
	return (uint64_t)m->maps[i].pid << 32 | m->maps[i].epoch;
}

static uint32_t epoch_of(const struct model *m, uint32_t pid, uint64_t time)
{
	const uint64_t *v = idmap__find(&m->exec_ids, pid, 0);
	uint32_t lo, hi, start;

	if (!v)
		return 0;
	start = RANGE_START(*v);
	lo = 0;
	hi = RANGE_COUNT(*v);
	/* number of execs at or before time */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->execs[start + mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int dso_for(struct model *m, const struct cap_mapping *c, uint32_t *idx)
{
	struct model_dso d = { .build_id_size = c->build_id_size,
			       .anon = !!(c->flags & CAP_MAP_ANON) };
	uint64_t head = 0, *val;
	const char *slash;
	int err;

	memcpy(d.build_id, c->build_id, d.build_id_size);
	memcpy(&head, d.build_id, 8);
	err = idmap__upsert(&m->dso_ids,
			    (uint64_t)c->path_id << 32 | d.build_id_size << 1 | d.anon,
			    head, m->nr_dsos, &val);
	if (err < 0)
		return err;
	if (!err && !memcmp(m->dsos[*val].build_id, d.build_id, d.build_id_size)) {
		*idx = *val;
		return 0;
	}
	/* new object (or a 64-bit head collision: keep it apart, unindexed) */
	d.path = model__string(m, c->path_id);
	if (!d.path)
		d.path = "";
	slash = strrchr(d.path, '/');
	d.base = slash ? slash + 1 : d.path;
	if (err == 1)
		*val = m->nr_dsos;
	*idx = m->nr_dsos;
	return ARRAY_PUSH(m->dsos, m->nr_dsos, m->dsos_cap, d);
}

static int build_maps(struct model *m)
{
	size_t i;
	int err;

	m->maps = calloc(m->nr_rawmaps ? m->nr_rawmaps : 1, sizeof(*m->maps));
	if (!m->maps)
		return -ENOMEM;
	for (i = 0; i < m->nr_rawmaps; i++) {
		const struct cap_mapping *c = &m->rawmaps[i].rec;
		struct model_map *mp = &m->maps[i];

		mp->time = c->time;
		mp->start = c->start;
		mp->end = c->end;
		mp->pgoff = c->pgoff;
		mp->pid = c->pid;
		mp->seq = m->rawmaps[i].seq;
		mp->epoch = epoch_of(m, c->pid, c->time);
		err = dso_for(m, c, &mp->dso);
		if (err)
			return err;
	}
	m->nr_maps = m->nr_rawmaps;
	free(m->rawmaps);
	m->rawmaps = NULL;
	qsort(m->maps, m->nr_maps, sizeof(*m->maps), cmp_map);
	return model_index_runs(m, &m->map_ids, m->nr_maps, map_key);
}

static int build_ksymtab(struct model *m)
{
	size_t i;
	int err;

	err = ksymtab__new(&m->ksymtab);
	for (i = 0; !err && i < m->nr_ksyms; i++) {
		const struct model_ksym *k = &m->ksyms[i];
		const char *mod = k->module_id ? model__string(m, k->module_id) : NULL;

		err = ksymtab__add(m->ksymtab, k->addr, k->size, m->pool + k->name_off,
				   k->name_len, mod);
		if (err == -EINVAL)
			err = 0; /* a symbol the table refuses is just not named */
	}
	if (!err)
		err = ksymtab__finalize(m->ksymtab);
	free(m->ksyms);
	m->ksyms = NULL;
	m->nr_ksyms = 0;
	return err;
}

int model_finish(struct model *m)
{
	int err;

	if (m->nr_threads) /* qsort(NULL, 0) is undefined */
		qsort(m->threads, m->nr_threads, sizeof(*m->threads), cmp_thread);
	err = model_index_runs(m, &m->thread_ids, m->nr_threads, thread_key);
	if (err)
		return err;
	if (m->nr_execs)
		qsort(m->execs, m->nr_execs, sizeof(*m->execs), cmp_exec);
	err = model_index_runs(m, &m->exec_ids, m->nr_execs, exec_key);
	if (err)
		return err;
	err = build_maps(m);
	if (err)
		return err;
	if (m->nr_kmods)
		qsort(m->kmods, m->nr_kmods, sizeof(*m->kmods), cmp_kmod);
	return build_ksymtab(m);
}

const struct cap_header *model__header(const struct model *m)
{
	return &m->hdr;
}

bool model__recovered(const struct model *m)
{
	return m->recovered;
}

const char *model__loss_text(const struct model *m)
{
	return m->loss;
}

const struct cap_end *model__end(const struct model *m)
{
	return m->has_end ? &m->end : NULL;
}

const struct cap_trigger *model__trigger(const struct model *m)
{
	return m->has_trigger ? &m->trigger : NULL;
}

const struct cap_kernel *model__kernel(const struct model *m)
{
	return &m->kernel;
}

uint64_t model__offcpu_seen(const struct model *m, const struct cap_offcpu *e, uint64_t *from)
{
	return model_offcpu_seen(m, e, from);
}

uint64_t model__last_time(const struct model *m)
{
	uint64_t t = m->last_event;

	if (m->has_end && m->end.time > t)
		t = m->end.time;
	return t > m->hdr.start_time ? t : m->hdr.start_time;
}

uint64_t model__lost(const struct model *m, enum cap_kind kind,
		     enum cap_lost_reason reason)
{
	if ((unsigned)kind >= CAP_KIND_MAX || (unsigned)reason >= CAP_LOST_MAX)
		return 0;
	return m->lost.count[kind][reason];
}

const struct cap_lost_detail *model__lost_detail(const struct model *m)
{
	return &m->lost;
}

int model__stat(const struct model *m, size_t i, const char **key, uint64_t *value)
{
	if (i >= m->nr_stats)
		return -ENOENT;
	*key = model__string(m, m->stats[i].key_id);
	if (!*key)
		*key = "?";
	*value = m->stats[i].value;
	return 0;
}

const struct cap_offcpu *model__offcpu(const struct model *m, size_t *n)
{
	*n = m->streamed ? 0 : m->nr_offcpu;
	return m->offcpu;
}

const struct cap_cpu *model__cpu(const struct model *m, size_t *n)
{
	*n = m->streamed ? 0 : m->nr_cpu;
	return m->cpu;
}

const struct cap_bio *model__bio(const struct model *m, size_t *n)
{
	*n = m->nr_bio;
	return m->bio;
}

size_t model__nr_events(const struct model *m, enum cap_kind kind)
{
	switch (kind) {
	case CAP_KIND_OFFCPU:
		return m->nr_offcpu;
	case CAP_KIND_CPU:
		return m->nr_cpu;
	case CAP_KIND_BIO:
		return m->nr_bio;
	case CAP_KIND_WAKEUP:
		return m->nr_wakeups;
	default:
		return 0;
	}
}

int model_pool_add(struct model *m, const void *data, size_t len, uint64_t *off)
{
	size_t need = m->pool_len + len + 1;

	if (ARRAY_RESERVE(m->pool, m->pool_cap, need))
		return -ENOMEM;
	memcpy(m->pool + m->pool_len, data, len);
	m->pool[m->pool_len + len] = '\0';
	*off = m->pool_len;
	m->pool_len = need;
	return 0;
}

const char *model__string(const struct model *m, uint32_t id)
{
	const uint64_t *v = idmap__find(&m->strings, id, 0);

	return v ? m->pool + *v : NULL;
}

int model__stack(const struct model *m, uint32_t id, const uint64_t **ips)
{
	const uint64_t *v;

	*ips = NULL;
	if (id == CAP_STACK_NONE)
		return 0;
	v = idmap__find(&m->stacks, id, 0);
	if (!v)
		return -ENOENT;
	if (*v & 0xff) /* an empty stack may come before any ips were stored */
		*ips = m->ips + (*v >> 8);
	return *v & 0xff;
}

/* The THREAD record of tid at time: the latest at or before it, else the
 * earliest; NULL when tid has none. */
static const struct model_thread *thread_at(const struct model *m, uint32_t tid,
					    uint64_t time)
{
	const uint64_t *v = idmap__find(&m->thread_ids, tid, 0);
	const struct model_thread *t;
	uint32_t lo, hi;

	if (!v)
		return NULL;
	t = m->threads + RANGE_START(*v);
	lo = 0;
	hi = RANGE_COUNT(*v);
	while (lo < hi) { /* first record after time */
		uint32_t mid = lo + (hi - lo) / 2;

		if (t[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &t[lo ? lo - 1 : 0];
}

uint32_t model__comm_id(const struct model *m, uint32_t tid, uint64_t time)
{
	const struct model_thread *t = thread_at(m, tid, time);

	return t ? t->comm : 0;
}

uint32_t model__comm_span(const struct model *m, uint32_t tid, uint64_t time, uint64_t *from,
			  uint64_t *to)
{
	const uint64_t *v = idmap__find(&m->thread_ids, tid, 0);
	const struct model_thread *t = thread_at(m, tid, time), *first, *end;

	*from = 0;
	*to = UINT64_MAX;
	if (!t)
		return 0;
	first = m->threads + RANGE_START(*v);
	end = first + RANGE_COUNT(*v);
	/* thread_at() takes the last record at or before time, else the first */
	if (t > first)
		*from = t->time;
	if (t + 1 < end)
		*to = t[1].time;
	return t->comm;
}

/* A record of the same process that knows its namespace ids, nearest to
 * t among tid's records [first, end): a thread's ids never change, and a
 * record written after the thread was gone holds 0 (FORMAT.md §4.4). */
static const struct model_thread *ns_known(const struct model_thread *first,
					   const struct model_thread *end,
					   const struct model_thread *t)
{
	size_t i = t - first, n = end - first, d;

	for (d = 0; d <= i || i + d < n; d++) {
		if (d <= i && first[i - d].pid == t->pid && first[i - d].ns_tid)
			return &first[i - d];
		if (i + d < n && first[i + d].pid == t->pid && first[i + d].ns_tid)
			return &first[i + d];
	}
	return NULL;
}

bool model__ns_ids(const struct model *m, uint32_t tid, uint64_t time, uint32_t *ns_pid,
		   uint32_t *ns_tid)
{
	const struct model_thread *t = thread_at(m, tid, time), *first;
	const uint64_t *v = idmap__find(&m->thread_ids, tid, 0);

	*ns_pid = *ns_tid = 0;
	if (!t || !v)
		return false;
	first = m->threads + RANGE_START(*v);
	t = ns_known(first, first + RANGE_COUNT(*v), t);
	if (!t)
		return false;
	*ns_pid = t->ns_pid;
	*ns_tid = t->ns_tid;
	return true;
}

const char *model__comm_name(const struct model *m, uint32_t comm_id)
{
	return comm_id < m->nr_comms ? m->comms[comm_id].name : m->comms[0].name;
}

const uint32_t *model__bio_comms(const struct model *m)
{
	return m->bio_comm;
}

size_t model__nr_comms(const struct model *m)
{
	return m->nr_comms;
}

bool model__is_kthread(const struct model *m, uint32_t tid)
{
	const uint64_t *v = idmap__find(&m->thread_ids, tid, 0);
	uint32_t i;

	if (!tid)
		return true;
	if (!v)
		return false;
	for (i = 0; i < RANGE_COUNT(*v); i++) {
		if (m->threads[RANGE_START(*v) + i].flags & CAP_THREAD_KERNEL)
			return true;
	}
	return false;
}

static const struct model_map *own_map(const struct model *m, uint32_t pid,
				       uint32_t epoch, uint64_t time, uint64_t ip)
{
	const uint64_t *v = idmap__find(&m->map_ids, (uint64_t)pid << 32 | epoch, 0);
	const struct model_map *mp, *before = NULL, *after = NULL;
	uint32_t i;

	if (!v)
		return NULL;
	mp = m->maps + RANGE_START(*v);
	for (i = 0; i < RANGE_COUNT(*v); i++) {
		if (ip < mp[i].start || ip >= mp[i].end)
			continue;
		if (mp[i].time <= time)
			before = &mp[i]; /* sorted by time: the last one wins */
		else if (!after)
			after = &mp[i];
	}
	return before ? before : after;
}

const struct model_map *model__find_map(const struct model *m, uint32_t pid,
					uint64_t time, uint64_t ip)
{
	const struct model_map *mp;
	const uint64_t *f;
	int depth;

	for (depth = 0; depth < FORK_DEPTH_MAX; depth++) {
		uint32_t epoch = epoch_of(m, pid, time);

		mp = own_map(m, pid, epoch, time, ip);
		if (mp || epoch)
			return mp;
		/* not exec'd since fork: the parent's mappings at fork time */
		f = idmap__find(&m->forks, pid, 0);
		if (!f)
			return NULL;
		pid = m->forks_v[*f].ppid;
		if (m->forks_v[*f].time < time)
			time = m->forks_v[*f].time;
	}
	return NULL;
}

const struct model_dso *model__dso(const struct model *m, uint32_t idx)
{
	return idx < m->nr_dsos ? &m->dsos[idx] : NULL;
}

uint32_t model__exec_epoch(const struct model *m, uint32_t pid, uint64_t time)
{
	return epoch_of(m, pid, time);
}

const struct ksymtab *model__ksymtab(const struct model *m)
{
	return m->ksymtab;
}

_Static_assert(offsetof(struct model_kmod, base) == 0, "ranges__after() reads base first");

const char *model__kmod(const struct model *m, uint64_t addr, uint64_t *offset)
{
	size_t lo = ranges__after(m->kmods, m->nr_kmods, sizeof(*m->kmods), addr);
	const struct model_kmod *k;
	const char *name;

	if (!lo)
		return NULL;
	k = &m->kmods[lo - 1];
	if (addr - k->base >= k->size)
		return NULL;
	name = model__string(m, k->name_id);
	if (offset)
		*offset = addr - k->base;
	return name;
}

const char *model__blockdev(const struct model *m, uint32_t major, uint32_t minor)
{
	const uint64_t *v = idmap__find(&m->bdev_ids, (uint64_t)major << 32 | minor, 0);

	return v ? m->bdevs[*v].name : NULL;
}
