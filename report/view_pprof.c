// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pprof's profile.proto (github.com/google/pprof, proto/profile.proto),
 * gzip-compressed, for `go tool pprof`, Grafana Pyroscope and Parca.
 *
 * Samples are the filtered events aggregated by (kind, pid, tid, comm,
 * user stack, kernel stack; block I/O also by disk and op), each with two
 * values of its kind: CPU samples and their CPU time (samples x the
 * sampling period), off-CPU waits and their nanoseconds (of a wait open at
 * the capture's start, the part seen, as the report), block I/O
 * requests and their bytes. comm, pid and tid are labels (block I/O adds
 * its op; an event with a known cgroup adds "cgroup", its path, and
 * where a container is named "container_id", its full ID, unit or machine
 * name, and "pod_uid"); a block request's disk is its innermost frame, as
 * in --folded.
 * Frames come from the resolver, as every view names them: a run of
 * inlined frames and the function they were inlined into is one location
 * with one line each. A user location's mapping is the process's mapping
 * of the file (its range, offset and build ID), a kernel location's the
 * kernel or its module.
 *
 * The file is written as it is built: protobuf lets a message's repeated
 * fields come in any order, so a string, function, location or mapping
 * goes out the first time a sample needs it, and only the id tables stay
 * in memory. Encoded by report/pbwrite (why not protobuf-c: README).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "report/container.h"
#include "report/pbwrite.h"
#include "report/views_int.h"
#include "util/array.h"
#include "util/hashtab.h"

/* profile.proto field numbers */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING,
       P_TIME = 9, P_DURATION, P_PERIOD_TYPE, P_PERIOD, P_COMMENT, P_DEFAULT_TYPE };
enum { VT_TYPE = 1, VT_UNIT };
enum { S_LOCATION = 1, S_VALUE, S_LABEL };
enum { L_KEY = 1, L_STR, L_NUM };
enum { M_ID = 1, M_START, M_LIMIT, M_OFFSET, M_FILE, M_BUILD_ID, M_HAS_FUNCTIONS,
       M_HAS_FILENAMES, M_HAS_LINES, M_HAS_INLINE };
enum { LOC_ID = 1, LOC_MAPPING, LOC_ADDRESS, LOC_LINE };
enum { LINE_FUNCTION = 1, LINE_LINE };
enum { F_ID = 1, F_NAME, F_SYSTEM_NAME, F_FILENAME };

#define ZBUF (64u << 10)
#define PP_FLUSH_AT (64u << 10) /* deflate the message buffer past this */

/* The value pair of each kind: a count, then an amount. */
static const char *const vt_names[CAP_KIND_SIDEBAND][2][2] = {
	[CAP_KIND_OFFCPU] = { { "waits", "count" }, { "offcpu", "nanoseconds" } },
	[CAP_KIND_CPU] = { { "samples", "count" }, { "cpu", "nanoseconds" } },
	[CAP_KIND_BIO] = { { "ios", "count" }, { "bio", "bytes" } },
};

/* An aggregated sample: the key, then the sums. */
struct psample {
	uint32_t kind, pid, tid, comm, ustack, kstack, major, minor, op;
	uint32_t epoch;
	uint64_t cgroup;
	uint64_t time;        /* the first event's: its stacks are named then */
	uint64_t count, total;
};
#define PSAMPLE_KEY offsetof(struct psample, time)

struct ploc_key {
	uint64_t ip;
	const char *name;     /* the outermost frame's: kernel names differ by it */
	uint64_t mapping;
	uint64_t caller;      /* user frames: named at ip - 1 */
};
struct ploc {
	struct ploc_key k;
	uint64_t id;
};

/* A kernel object's mapping: written last, spanning its addresses seen. */
struct pkmap {
	const char *dso;
	uint64_t lo, hi, id;
};

struct pprof {
	const struct report_ctx *ctx;
	FILE *out;
	z_stream z;
	unsigned char *zbuf;
	bool zinit;           /* deflateEnd() needed */
	struct pbuf pb;
	int slot[CAP_KIND_SIDEBAND]; /* first value index of a kind, or -1 */
	int nvalues;
	uint64_t period;
	struct idmap strings;  /* char * -> index */
	uint64_t nstrings;
	struct idmap funcs;    /* (name, file) -> id */
	uint64_t nfuncs;
	struct hashtab locs;   /* of struct ploc */
	uint64_t nlocs;
	struct idmap maps;     /* model_map * -> id */
	struct pkmap *kmaps;
	size_t nkmaps, kmaps_cap;
	uint64_t nmaps;
	struct hashtab samples; /* of struct psample */
	struct rframe *fr;
	uint64_t *ids;         /* location ids of one sample */
	uint64_t *fids;        /* function ids of one location */
};

/* ---- output: the message buffer through gzip ---------------------------- */

static int pp_deflate(struct pprof *pp, int flush)
{
	size_t have;
	int ret;

	if (pp->pb.err)
		return pp->pb.err;
	pp->z.next_in = pp->pb.b;
	pp->z.avail_in = pp->pb.len;
	do {
		pp->z.next_out = pp->zbuf;
		pp->z.avail_out = ZBUF;
		ret = deflate(&pp->z, flush);
		if (ret == Z_STREAM_ERROR)
			return -EIO;
		have = ZBUF - pp->z.avail_out;
		if (fwrite_unlocked(pp->zbuf, 1, have, pp->out) != have)
			return errno ? -errno : -EIO;
	} while (pp->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	pbuf__reset(&pp->pb);
	return 0;
}

static int pp_flush(struct pprof *pp)
{
	return pp->pb.len >= PP_FLUSH_AT ? pp_deflate(pp, Z_NO_FLUSH) : pp->pb.err;
}

/* ---- the tables: strings, functions, mappings, locations ---------------- */

/* A new string table entry (no lookup): its index. */
static uint64_t str_new(struct pprof *pp, const char *s)
{
	pb_str(&pp->pb, P_STRING, s);
	return pp->nstrings++;
}

/* The index of s, by its address (names live as long as the resolver). */
static uint64_t str_id(struct pprof *pp, const char *s)
{
	uint64_t *v;
	int ret = idmap__upsert(&pp->strings, (uintptr_t)s, 0, pp->nstrings, &v);

	if (ret < 0) {
		pp->pb.err = ret;
		return 0;
	}
	return ret ? str_new(pp, s) : *v;
}

/* A new function of these strings (file 0: none): its id. */
static uint64_t put_function(struct pprof *pp, uint64_t name, uint64_t file)
{
	size_t mark = pb_begin(&pp->pb, P_FUNCTION);

	pb_uint(&pp->pb, F_ID, ++pp->nfuncs);
	pb_uint(&pp->pb, F_NAME, name);
	pb_uint(&pp->pb, F_SYSTEM_NAME, name);
	if (file)
		pb_uint(&pp->pb, F_FILENAME, file);
	pb_end(&pp->pb, mark);
	return pp->nfuncs;
}

static uint64_t func_id(struct pprof *pp, const struct rframe *f)
{
	uint64_t *v, name;
	int ret;

	ret = idmap__upsert(&pp->funcs, (uintptr_t)rframe_func(f), (uintptr_t)f->srcfile,
			    pp->nfuncs + 1, &v);
	if (ret <= 0) {
		pp->pb.err = ret ?: pp->pb.err;
		return ret ? 0 : *v;
	}
	name = str_id(pp, rframe_func(f));
	return put_function(pp, name, f->srcfile ? str_id(pp, f->srcfile) : 0);
}

/* The string index of a build ID in hex, 0 ("") when there is none. */
static uint64_t build_id_str(struct pprof *pp, const uint8_t *bid, unsigned size)
{
	char hex[2 * 20 + 1];
	unsigned i;

	if (!size)
		return 0;
	for (i = 0; i < size && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	return str_new(pp, hex);
}

static void put_mapping(struct pprof *pp, const struct pkmap *km, uint64_t offset,
			uint64_t file, uint64_t bid)
{
	bool lines = pp->ctx->opts.srcline;
	size_t mark = pb_begin(&pp->pb, P_MAPPING);

	pb_uint(&pp->pb, M_ID, km->id);
	pb_uint(&pp->pb, M_START, km->lo);
	pb_uint(&pp->pb, M_LIMIT, km->hi);
	pb_uint(&pp->pb, M_OFFSET, offset);
	pb_uint(&pp->pb, M_FILE, file);
	if (bid)
		pb_uint(&pp->pb, M_BUILD_ID, bid);
	/* named here: pprof must not look for the binaries itself */
	pb_uint(&pp->pb, M_HAS_FUNCTIONS, 1);
	pb_uint(&pp->pb, M_HAS_FILENAMES, lines);
	pb_uint(&pp->pb, M_HAS_LINES, lines);
	pb_end(&pp->pb, mark);
}

/* The id of a user mapping, written when new. */
static uint64_t user_map_id(struct pprof *pp, const struct model_map *mp)
{
	const struct model_dso *d = model__dso(pp->ctx->model, mp->dso);
	uint64_t *v, file, bid;
	int ret;

	ret = idmap__upsert(&pp->maps, (uintptr_t)mp, 0, pp->nmaps + 1, &v);
	if (ret <= 0) {
		pp->pb.err = ret ?: pp->pb.err;
		return ret ? 0 : *v;
	}
	/* strings go before the message that names them */
	file = str_id(pp, d->anon ? "//anon" : d->path);
	bid = build_id_str(pp, d->build_id, d->build_id_size);
	put_mapping(pp, &(struct pkmap){ .lo = mp->start, .hi = mp->end, .id = ++pp->nmaps },
		    mp->pgoff, file, bid);
	return pp->nmaps;
}

/* The id of a kernel object's mapping (by its dso name), widened to ip. */
static uint64_t kernel_map_id(struct pprof *pp, const struct rframe *f)
{
	struct pkmap *km;
	size_t i;

	for (i = 0; i < pp->nkmaps && pp->kmaps[i].dso != f->dso; i++)
		;
	if (i == pp->nkmaps) {
		struct pkmap k = { f->dso, f->ip, f->ip + 1, ++pp->nmaps };

		if (ARRAY_PUSH(pp->kmaps, pp->nkmaps, pp->kmaps_cap, k)) {
			pp->pb.err = -ENOMEM;
			return 0;
		}
	}
	km = &pp->kmaps[i];
	km->lo = f->ip < km->lo ? f->ip : km->lo;
	km->hi = f->ip >= km->hi ? f->ip + 1 : km->hi;
	return km->id;
}

/* Kernel mappings go last, when their ranges are known. */
static void put_kernel_maps(struct pprof *pp)
{
	const struct cap_kernel *k = model__kernel(pp->ctx->model);
	uint64_t file, bid;
	size_t i;

	for (i = 0; i < pp->nkmaps; i++) {
		const struct pkmap *km = &pp->kmaps[i];
		bool vmlinux = !strcmp(km->dso, "[kernel.kallsyms]");

		file = str_id(pp, km->dso);
		bid = vmlinux ? build_id_str(pp, k->build_id, k->build_id_size) : 0;
		put_mapping(pp, km, 0, file, bid);
	}
}

/* The mapping id of a frame: 0 (none) for placeholders and user
 * addresses no mapping holds. */
static uint64_t frame_map(struct pprof *pp, const struct rframe *f, uint32_t pid,
			  uint64_t time)
{
	const struct model_map *mp;

	if (f->special)
		return 0;
	if (f->kernel)
		return kernel_map_id(pp, f);
	mp = model__find_map(pp->ctx->model, pid, time, f->ip);
	return mp ? user_map_id(pp, mp) : 0;
}

static bool ploc_eq(const void *ent, const void *key)
{
	return !memcmp(&((const struct ploc *)ent)->k, key, sizeof(struct ploc_key));
}

static void put_location(struct pprof *pp, const struct ploc *l, const struct rframe *fr,
			 int n)
{
	size_t mark, line;
	int i;

	for (i = 0; i < n; i++) /* functions (and their strings) first */
		pp->fids[i] = func_id(pp, &fr[i]);
	mark = pb_begin(&pp->pb, P_LOCATION);
	pb_uint(&pp->pb, LOC_ID, l->id);
	if (l->k.mapping)
		pb_uint(&pp->pb, LOC_MAPPING, l->k.mapping);
	pb_uint(&pp->pb, LOC_ADDRESS, l->k.ip);
	for (i = 0; i < n; i++) { /* innermost first: the last is the caller */
		line = pb_begin(&pp->pb, LOC_LINE);
		pb_uint(&pp->pb, LINE_FUNCTION, pp->fids[i]);
		if (fr[i].line > 0)
			pb_uint(&pp->pb, LINE_LINE, fr[i].line);
		pb_end(&pp->pb, line);
	}
	pb_end(&pp->pb, mark);
}

/* The location of key k: NULL with *id its id when known (or 0 and
 * pp->pb.err set without memory), else the new entry, its id given. */
static struct ploc *loc_new(struct pprof *pp, const struct ploc_key *k, uint64_t hash,
			    uint64_t *id)
{
	struct ploc *l;
	void *slot;
	int ret = hashtab__upsert(&pp->locs, hash, k, ploc_eq, &slot);

	*id = 0;
	if (ret < 0)
		pp->pb.err = ret;
	if (ret <= 0) {
		*id = ret ? 0 : ((struct ploc *)slot)->id;
		return NULL;
	}
	l = slot;
	l->k = *k;
	l->id = *id = ++pp->nlocs;
	return l;
}

/* The location of fr[0..n): frames inlined at one address, then the
 * function they are inlined into. A user address named as a return
 * address (caller) can name other lines than the same address sampled. */
static uint64_t loc_id(struct pprof *pp, const struct rframe *fr, int n, uint32_t pid,
		       uint64_t time, bool caller)
{
	const struct rframe *outer = &fr[n - 1];
	struct ploc_key k = { .ip = outer->ip, .name = outer->name, .caller = caller };
	const struct ploc *l;
	uint64_t id;

	k.mapping = frame_map(pp, outer, pid, time);
	l = loc_new(pp, &k, hashtab__mix(k.ip ^ hashtab__mix((uintptr_t)k.name ^ k.mapping << 1 ^
							     k.caller)), &id);
	if (l)
		put_location(pp, l, fr, n);
	return id;
}

/* A block request's disk: a location of its own, with no address. */
static uint64_t disk_loc_id(struct pprof *pp, uint32_t major, uint32_t minor)
{
	struct ploc_key k = { .ip = (uint64_t)major << 32 | minor, .caller = 2 };
	char buf[VIEW_DISK_MAX];
	size_t mark, line;
	uint64_t fid, id;

	if (!loc_new(pp, &k, hashtab__mix(k.ip ^ 2), &id))
		return id;
	/* a name made here has no lasting address: a function of its own */
	fid = put_function(pp, str_new(pp, view_disk(pp->ctx->model, major, minor, buf)), 0);
	mark = pb_begin(&pp->pb, P_LOCATION);
	pb_uint(&pp->pb, LOC_ID, id);
	line = pb_begin(&pp->pb, LOC_LINE);
	pb_uint(&pp->pb, LINE_FUNCTION, fid);
	pb_end(&pp->pb, line);
	pb_end(&pp->pb, mark);
	return id;
}

/* ---- samples ------------------------------------------------------------ */

static const struct rframe unknown_frame = {
	.name = "[unknown]", .dso = "[unknown]", .special = true,
};

/* The location ids of a sample into pp->ids, innermost first. */
static int sample_locs(struct pprof *pp, const struct psample *s)
{
	const struct rframe *fr = pp->fr;
	int i, j, nf, n = 0, user = 0;

	if (s->kind == CAP_KIND_BIO) {
		pp->ids[n++] = disk_loc_id(pp, s->major, s->minor);
		if (!s->ustack && !s->kstack)
			return n;
	}
	nf = view_frames(pp->ctx, s->pid, s->time, s->ustack, s->kstack, pp->fr, NULL);
	if (nf < 0)
		return nf;
	if (!nf && s->kind != CAP_KIND_BIO) /* the report's row "[unknown]" */
		pp->ids[n++] = loc_id(pp, &unknown_frame, 1, s->pid, s->time, false);
	for (i = 0; i < nf; i = j + 1) {
		for (j = i; j + 1 < nf && fr[j].inlined && fr[j + 1].ip == fr[j].ip; j++)
			;
		pp->ids[n++] = loc_id(pp, fr + i, j - i + 1, s->pid, s->time,
				      !fr[j].kernel && user++);
	}
	return n;
}

static void put_label(struct pprof *pp, uint64_t key, uint64_t str, uint64_t num)
{
	size_t mark = pb_begin(&pp->pb, S_LABEL);

	pb_uint(&pp->pb, L_KEY, key);
	if (str)
		pb_uint(&pp->pb, L_STR, str);
	else
		pb_uint(&pp->pb, L_NUM, num);
	pb_end(&pp->pb, mark);
}

/* "cgroup", "container_id" and "pod_uid" where known: what a fleet
 * profiler splits a profile by. The strings go out before the sample. */
static void cgroup_label_ids(struct pprof *pp, uint64_t cgroup, uint64_t ids[6])
{
	const struct container *c = model__cgroup_container(pp->ctx->model, cgroup);
	const char *path = model__cgroup_path(pp->ctx->model, cgroup);
	char buf[VIEW_CGROUP_MAX];

	memset(ids, 0, 6 * sizeof(*ids));
	if (!cgroup)
		return;
	ids[0] = str_id(pp, "cgroup");
	/* str_id() knows strings by address: the model's live as long, a
	 * name made here is a new entry (an id no CGROUP record names) */
	ids[1] = path ? str_id(pp, path) : str_new(pp, view_cgroup(pp->ctx->model, cgroup, buf));
	if (c && c->id[0]) {
		ids[2] = str_id(pp, "container_id");
		ids[3] = str_id(pp, c->id);
	}
	if (c && c->pod_uid[0]) {
		ids[4] = str_id(pp, "pod_uid");
		ids[5] = str_id(pp, c->pod_uid);
	}
}

static void put_cgroup_labels(struct pprof *pp, const uint64_t ids[6])
{
	int i;

	for (i = 0; i < 6; i += 2)
		if (ids[i])
			put_label(pp, ids[i], ids[i + 1], 0);
}

static int put_sample(struct pprof *pp, const struct psample *s)
{
	static const char *const ops[] = { "R", "W", "F", "D", "?" };
	uint64_t comm, kcomm, kpid, ktid, kop = 0, op = 0, cg[6];
	int n = sample_locs(pp, s), i, slot = pp->slot[s->kind];
	size_t mark, part;

	if (n < 0)
		return n;
	comm = str_id(pp, model__comm_name(pp->ctx->model, s->comm));
	kcomm = str_id(pp, "comm");
	kpid = str_id(pp, "pid");
	ktid = str_id(pp, "tid");
	if (s->kind == CAP_KIND_BIO) {
		kop = str_id(pp, "op");
		op = str_id(pp, ops[s->op < 4 ? s->op : 4]);
	}
	cgroup_label_ids(pp, s->cgroup, cg);
	mark = pb_begin(&pp->pb, P_SAMPLE);
	part = pb_begin(&pp->pb, S_LOCATION);
	for (i = 0; i < n; i++)
		pb_varint(&pp->pb, pp->ids[i]);
	pb_end(&pp->pb, part);
	part = pb_begin(&pp->pb, S_VALUE);
	for (i = 0; i < pp->nvalues; i++) {
		uint64_t v = 0;

		if (i == slot)
			v = s->count;
		else if (i == slot + 1)
			v = s->kind == CAP_KIND_CPU ? s->count * pp->period : s->total;
		pb_varint(&pp->pb, v);
	}
	pb_end(&pp->pb, part);
	put_label(pp, kcomm, comm, 0);
	put_label(pp, kpid, 0, s->pid);
	put_label(pp, ktid, 0, s->tid);
	if (kop)
		put_label(pp, kop, op, 0);
	put_cgroup_labels(pp, cg);
	pb_end(&pp->pb, mark);
	return pp_flush(pp);
}

static bool psample_eq(const void *ent, const void *key)
{
	return !memcmp(ent, key, PSAMPLE_KEY);
}

static uint64_t psample_hash(const struct psample *k)
{
	const uint32_t *w = (const uint32_t *)k;
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < PSAMPLE_KEY / sizeof(*w); i++)
		h = hashtab__mix(h ^ w[i]);
	return h;
}

/* n filtered events, the first at time first, into their sample: total
 * their amount, b their request (block I/O) or NULL. */
static int add_samples(struct pprof *pp, enum cap_kind kind, const struct view_evinfo *ev,
		       uint64_t first, uint64_t n, uint64_t total, const struct cap_bio *b)
{
	struct psample k = { .kind = kind }, *s;
	void *slot;
	int ret;

	k.pid = ev->pid, k.tid = ev->tid, k.comm = ev->comm;
	k.ustack = ev->ustack, k.kstack = ev->kstack;
	k.epoch = model__exec_epoch(pp->ctx->model, ev->pid, ev->start);
	k.cgroup = ev->cgroup;
	if (b)
		k.major = b->major, k.minor = b->minor, k.op = b->op;
	ret = hashtab__upsert(&pp->samples, psample_hash(&k), &k, psample_eq, &slot);
	if (ret < 0)
		return ret;
	s = slot;
	if (ret) {
		*s = k;
		s->time = first;
	}
	s->count += n;
	s->total += total;
	return 0;
}

/* One filtered event into its sample: value its amount. */
static int add_sample(struct pprof *pp, enum cap_kind kind, const struct view_evinfo *ev,
		      uint64_t value, const struct cap_bio *b)
{
	return add_samples(pp, kind, ev, ev->start, 1, value, b);
}

/* An interval weighs the part seen, as the report weighs it. */
static int add_offcpu(struct pprof *pp, const struct cap_offcpu *o)
{
	struct view_evinfo ev;
	uint64_t from;

	view_offcpu_info(pp->ctx, o, &ev);
	return add_sample(pp, CAP_KIND_OFFCPU, &ev, model__offcpu_seen(pp->ctx->model, o, &from),
			  NULL);
}

static int add_event(struct pprof *pp, const struct view_event *e)
{
	const struct model *m = pp->ctx->model;
	const struct cap_bio *b;
	struct view_evinfo ev;
	size_t n;

	if (e->kind == CAP_KIND_OFFCPU)
		return add_offcpu(pp, model__offcpu(m, &n) + e->idx);
	view_event_info(pp->ctx, e, &ev);
	if (e->kind != CAP_KIND_BIO)
		return add_sample(pp, e->kind, &ev, 1, NULL);
	b = model__bio(m, &n) + e->idx;
	return add_sample(pp, e->kind, &ev, b->bytes, b);
}

/* A streamed model's events of one kind (model__replay()), filtered as
 * view_events() filters them. */
struct pp_replay {
	struct pprof *pp;
	enum cap_kind kind;
};

static int replayed(void *arg, const struct cap_offcpu *off, const struct cap_cpu *cpu)
{
	struct pp_replay *r = arg;
	const struct report_ctx *ctx = r->pp->ctx;
	struct view_evinfo ev;

	if (off && r->kind == CAP_KIND_OFFCPU && filter__offcpu_event(ctx->filter, ctx->model, off))
		return add_offcpu(r->pp, off);
	if (cpu && r->kind == CAP_KIND_CPU && filter__cpu_event(ctx->filter, ctx->model, cpu)) {
		view_cpu_info(ctx, cpu, &ev);
		return add_sample(r->pp, CAP_KIND_CPU, &ev, 1, NULL);
	}
	return 0;
}

/* A model's group of kind (struct model_group), filtered as its events
 * would be: one of them, its longest wait or its first sample, stands for
 * them all (filter__groups()). */
static int add_group(struct pprof *pp, const struct model_group *g, enum cap_kind kind)
{
	const struct report_ctx *ctx = pp->ctx;
	const struct cap_offcpu *o = model__group_offcpu(g);
	struct view_evinfo ev;
	struct cap_cpu c;

	if (g->k.kind != kind)
		return 0;
	if (kind == CAP_KIND_OFFCPU) {
		if (!filter__offcpu_event(ctx->filter, ctx->model, o))
			return 0;
		view_offcpu_info(ctx, o, &ev);
	} else {
		model__group_cpu(g, &c);
		if (!filter__cpu_event(ctx->filter, ctx->model, &c))
			return 0;
		view_cpu_info(ctx, &c, &ev);
	}
	return add_samples(pp, kind, &ev, g->first_start, g->count, g->total, NULL);
}

/* A streamed model's events of kind: its groups where the filters take or
 * leave them whole, else read again. */
static int add_streamed_kind(struct pprof *pp, enum cap_kind kind)
{
	struct pp_replay r = { .pp = pp, .kind = kind };
	const struct model_group *g;
	size_t i, n;
	int err = 0;

	if (!filter__kind(pp->ctx->filter, kind))
		return 0;
	g = filter__groups(pp->ctx->filter, pp->ctx->model, &n);
	if (!g)
		return model__replay(pp->ctx->model, replayed, &r);
	for (i = 0; !err && i < n; i++)
		err = add_group(pp, &g[i], kind);
	return err;
}

/* The samples of a streamed model in view_events()'s order: its off-CPU
 * intervals, then CPU samples, then block I/O (held). */
static int add_streamed(struct pprof *pp)
{
	struct view_event *v = NULL;
	size_t i, n = 0;
	int err;

	err = add_streamed_kind(pp, CAP_KIND_OFFCPU) ?: add_streamed_kind(pp, CAP_KIND_CPU);
	if (!err)
		err = view_events(pp->ctx, 1u << CAP_KIND_BIO, &v, &n);
	for (i = 0; !err && i < n; i++)
		err = add_event(pp, &v[i]);
	free(v);
	return err;
}

static int put_samples(struct pprof *pp)
{
	struct view_event *v = NULL;
	struct psample *s;
	size_t i, n = 0, pos;
	int err;

	if (model__streamed(pp->ctx->model)) {
		err = add_streamed(pp);
	} else {
		err = view_events(pp->ctx, VIEW_EVENTS_STACKS, &v, &n);
		for (i = 0; !err && i < n; i++)
			err = add_event(pp, &v[i]);
		free(v);
	}
	if (err)
		return err;
	hashtab__for_each(&pp->samples, pos, s) {
		err = put_sample(pp, s);
		if (err)
			break;
	}
	return err;
}

/* ---- the profile around the samples -------------------------------------- */

static bool shown(const struct report_ctx *ctx, enum cap_kind kind)
{
	return filter__kind(ctx->filter, kind) && model__nr_events(ctx->model, kind);
}

static void put_value_type(struct pprof *pp, uint32_t field, const char *const vt[2])
{
	uint64_t type = str_id(pp, vt[0]), unit = str_id(pp, vt[1]);
	size_t mark = pb_begin(&pp->pb, field);

	pb_uint(&pp->pb, VT_TYPE, type);
	pb_uint(&pp->pb, VT_UNIT, unit);
	pb_end(&pp->pb, mark);
}

/* The sample types: per kind shown, its count, then its amount (CPU time
 * only when the sampling period is known). */
static void put_header(struct pprof *pp)
{
	int k, j, pairs;

	str_new(pp, ""); /* index 0 */
	for (k = 0; k < CAP_KIND_SIDEBAND; k++) {
		pp->slot[k] = -1;
		if (!shown(pp->ctx, k))
			continue;
		pp->slot[k] = pp->nvalues;
		pairs = k == CAP_KIND_CPU && !pp->period ? 1 : 2;
		for (j = 0; j < pairs; j++)
			put_value_type(pp, P_SAMPLE_TYPE, vt_names[k][j]);
		pp->nvalues += pairs;
	}
}

/* "host web1 (Linux 6.1.0 x86_64), stkrec 0.1.0: stkrec record -a -d 10" */
static void put_comment(struct pprof *pp)
{
	const struct cap_header *h = model__header(pp->ctx->model);
	char buf[1400];

	snprintf(buf, sizeof(buf), "host %s (Linux %s %s), stkrec %s: %s", h->hostname,
		 h->release, h->machine, h->version, h->cmdline);
	pb_uint(&pp->pb, P_COMMENT, str_new(pp, buf));
}

static void put_trailer(struct pprof *pp)
{
	const struct model *m = pp->ctx->model;
	const struct cap_header *h = model__header(m);
	int k = shown(pp->ctx, CAP_KIND_OFFCPU) ? CAP_KIND_OFFCPU :
		shown(pp->ctx, CAP_KIND_CPU) ? CAP_KIND_CPU : CAP_KIND_BIO;

	put_kernel_maps(pp);
	if (pp->slot[CAP_KIND_CPU] >= 0 && pp->period) {
		put_value_type(pp, P_PERIOD_TYPE, vt_names[CAP_KIND_CPU][1]);
		pb_uint(&pp->pb, P_PERIOD, pp->period);
	}
	pb_uint(&pp->pb, P_TIME, h->start_realtime);
	pb_uint(&pp->pb, P_DURATION, model__last_time(m) - h->start_time);
	put_comment(pp);
	/* as the report: off-CPU time first, else CPU time, else bytes */
	if (pp->slot[k] >= 0)
		pb_uint(&pp->pb, P_DEFAULT_TYPE,
			str_id(pp, vt_names[k][k == CAP_KIND_CPU && !pp->period ? 0 : 1][0]));
}

static int pp_open(struct pprof *pp)
{
	hashtab__init(&pp->locs, sizeof(struct ploc));
	hashtab__init(&pp->samples, sizeof(struct psample));
	pp->zbuf = malloc(ZBUF);
	pp->fr = malloc(VIEW_MAX_FRAMES * sizeof(*pp->fr));
	pp->ids = malloc((VIEW_MAX_FRAMES + 1) * sizeof(*pp->ids));
	pp->fids = malloc(VIEW_MAX_FRAMES * sizeof(*pp->fids));
	if (!pp->zbuf || !pp->fr || !pp->ids || !pp->fids)
		return -ENOMEM;
	/* windowBits 15 + 16: a gzip header and trailer, as pprof expects */
	if (deflateInit2(&pp->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	pp->zinit = true;
	return 0;
}

static void pp_close(struct pprof *pp)
{
	if (pp->zinit)
		deflateEnd(&pp->z);
	pbuf__free(&pp->pb);
	idmap__fini(&pp->strings);
	idmap__fini(&pp->funcs);
	idmap__fini(&pp->maps);
	hashtab__free(&pp->locs);
	hashtab__free(&pp->samples);
	free(pp->kmaps);
	free(pp->zbuf);
	free(pp->fr);
	free(pp->ids);
	free(pp->fids);
}

int view_pprof(struct report_ctx *ctx, FILE *out)
{
	struct pprof pp = { .ctx = ctx, .out = out, .period = ctx->opts.cpu_period_ns };
	int err;

	err = pp_open(&pp);
	if (!err) {
		put_header(&pp);
		err = put_samples(&pp);
	}
	if (!err) {
		put_trailer(&pp);
		err = pp_deflate(&pp, Z_FINISH);
	}
	pp_close(&pp);
	return err;
}
