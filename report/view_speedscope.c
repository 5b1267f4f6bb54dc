// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * speedscope's file format (speedscope's file-format-schema.json, shipped
 * with its npm package): a shared frame table and, per thread, profiles:
 *
 *   - its off-CPU waits, "evented": at switch-out each frame of the stack
 *     opens, outermost first, and at switch-in they close, innermost first;
 *   - its block I/O requests, "evented" the same way from issue to
 *     completion: the submitter's stacks, then the disk as innermost frame;
 *   - its CPU samples, "sampled": a stack per sample, outermost first,
 *     weighing the sampling period (unit "none" and 1 when unknown).
 *
 * Times are nanoseconds since the capture start. An evented profile must
 * nest, so intervals of one thread that overlap (requests in flight
 * together) are put in lanes, a profile each ("block I/O #2"). A stack is
 * named once per (pid, exec, user stack, kernel stack), and events are
 * written as they are read from a sorted index: memory grows with the
 * events (16 bytes each) and the distinct stacks, the file as it goes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"
#include "util/array.h"

struct sframe {
	const char *name, *file;
	int line;
	uint32_t major, minor;  /* a disk frame: name NULL */
};

struct ss {
	const struct report_ctx *ctx;
	FILE *out;
	uint64_t t0;             /* capture start */
	uint64_t span;           /* capture start to its last time */
	bool first;              /* no profile written yet */
	struct idmap frame_ids;  /* (name, file-line id), disks (0, dev) -> index */
	struct idmap fl_ids;     /* (file, line) -> id */
	struct sframe *frames;
	size_t nframes, frames_cap;
	struct idmap stacks;     /* view_stack_key() -> offset << 16 | count */
	uint32_t *sidx;          /* frame indices of the stacks, outermost first */
	size_t nsidx, sidx_cap;
	struct rframe *fr;
	char *ebuf;              /* EBUF_SIZE: one interval's events */
	uint32_t *lane;          /* per event of a run */
	size_t lane_cap;
	uint64_t *lane_end;
	size_t nlanes, lanes_cap;
};

/* {"type":"O","frame":N,"at":T}, comma first: at most 1+20+20+6+21+1 bytes */
#define EVENT_MAX 72
#define EBUF_SIZE ((VIEW_MAX_FRAMES + 1) * EVENT_MAX)

static const struct rframe unknown_frame = { .name = "[unknown]", .dso = "[unknown]" };

static int frame_add(struct ss *ss, uint64_t a, uint64_t b, const struct sframe *f,
		     uint32_t *idx)
{
	uint64_t *v;
	int ret = idmap__upsert(&ss->frame_ids, a, b, ss->nframes, &v);

	if (ret < 0)
		return ret;
	*idx = *v;
	return ret ? ARRAY_PUSH(ss->frames, ss->nframes, ss->frames_cap, *f) : 0;
}

/* The frame table index of a named frame: its name, and its source file
 * and line with --srcline (a Python frame's always), else its object. */
static int frame_id(struct ss *ss, const struct rframe *fr, uint32_t *idx)
{
	bool src = (ss->ctx->opts.srcline || fr->python) && fr->srcfile;
	struct sframe f = { rframe_func(fr), src ? fr->srcfile : fr->dso, src ? fr->line : 0 };
	uint64_t *fl;
	int ret;

	ret = idmap__upsert(&ss->fl_ids, (uintptr_t)f.file, (uint32_t)f.line,
			    ss->fl_ids.t.nr, &fl);
	if (ret < 0)
		return ret;
	return frame_add(ss, (uintptr_t)f.name, *fl, &f, idx);
}

static int disk_frame(struct ss *ss, uint32_t major, uint32_t minor, uint32_t *idx)
{
	struct sframe f = { .major = major, .minor = minor };

	return frame_add(ss, 0, (uint64_t)major << 32 | minor, &f, idx);
}

/* The frame indices of an event's stacks, outermost first: *out (valid
 * until the next call), and the count returned (or -ENOMEM). */
static int stack_frames(struct ss *ss, const struct view_evinfo *ev, bool bio,
			const uint32_t **out)
{
	struct idmap_key k = view_stack_key(ss->ctx->model, ev);
	const struct rframe *fr = ss->fr;
	uint64_t *v;
	int i, n, err;

	*out = NULL;
	if (bio && !ev->ustack && !ev->kstack)
		return 0; /* no stack recorded: the disk alone */
	v = idmap__find(&ss->stacks, k.a, k.b);
	if (!v) {
		n = view_frames(ss->ctx, ev->pid, ev->start, ev->ustack, ev->kstack, ss->fr, NULL);
		if (!n) { /* the report's "[unknown]" row */
			fr = &unknown_frame;
			n = 1;
		}
		if (n < 0 || ARRAY_RESERVE(ss->sidx, ss->sidx_cap, ss->nsidx + n + 1))
			return n < 0 ? n : -ENOMEM;
		for (i = 0; i < n; i++) {
			err = frame_id(ss, &fr[n - 1 - i], &ss->sidx[ss->nsidx + i]);
			if (err)
				return err;
		}
		if (idmap__upsert(&ss->stacks, k.a, k.b, ss->nsidx << 16 | n, &v) < 0)
			return -ENOMEM;
		ss->nsidx += n;
	}
	*out = ss->sidx + (*v >> 16);
	return *v & 0xffff;
}

/* ---- profiles ------------------------------------------------------------- */

/* ns since the capture start, signed, at p; returns the end. */
static char *put_rel(const struct ss *ss, char *p, uint64_t t)
{
	if (t < ss->t0) {
		*p++ = '-';
		return view_put_u64(p, ss->t0 - t);
	}
	return view_put_u64(p, t - ss->t0);
}

/* Frames f[0..n) (outermost first), then the frame `inner` when >= 0,
 * opened ('O') at t outermost first, or closed ('C') innermost first:
 * built in ss->ebuf and written at once (these are most of the file). */
static void put_frame_events(struct ss *ss, const uint32_t *f, int n, int64_t inner,
			     char type, uint64_t t, bool *first)
{
	char at[32], *p = ss->ebuf, *ae = put_rel(ss, at, t);
	int i, k, total = n + (inner >= 0);

	for (i = 0; i < total; i++) {
		k = type == 'O' ? i : total - 1 - i;
		if (!*first)
			*p++ = ',';
		*first = false;
		memcpy(p, "{\"type\":\"O\",\"frame\":", 20);
		p[9] = type;
		p = view_put_u64(p + 20, k < n ? f[k] : (uint64_t)inner);
		memcpy(p, ",\"at\":", 6);
		memcpy(p + 6, at, ae - at);
		p += 6 + (ae - at);
		*p++ = '}';
	}
	fwrite_unlocked(ss->ebuf, 1, p - ss->ebuf, ss->out);
}

/* {"type":TYPE,"name":"COMM[ (CONTAINER)] PID/TID: WHAT[ #LANE]","unit":...,
 * and the opening of its events or samples. COMM is the thread's name at
 * its last event of the run (a thread renames itself early, if at all),
 * CONTAINER its container there (container__name()'s RUNTIME:ID), where
 * one is named. */
static void put_head(struct ss *ss, const struct view_event *run, size_t n, const char *type,
		     const char *what, size_t lane, size_t nlanes, const char *unit,
		     int64_t lo, int64_t hi)
{
	char name[128 + VIEW_CONTAINER_MAX], ctr[VIEW_CONTAINER_MAX];
	struct view_evinfo ev;

	view_event_info(ss->ctx, &run[n - 1], &ev);
	view_container(ss->ctx->model, ev.cgroup, ctr, NULL);
	snprintf(name, sizeof(name), "%s%s%s%s %" PRIu32 "/%" PRIu32 ": %s",
		 model__comm_name(ss->ctx->model, ev.comm), strcmp(ctr, "-") ? " (" : "",
		 strcmp(ctr, "-") ? ctr : "", strcmp(ctr, "-") ? ")" : "", ev.pid, ev.tid, what);
	if (nlanes > 1)
		snprintf(name + strlen(name), sizeof(name) - strlen(name), " #%zu", lane + 1);
	fprintf(ss->out, "%s\n{\"type\":\"%s\",\"name\":", ss->first ? "" : ",", type);
	view_json_str(ss->out, name, "");
	fprintf(ss->out, ",\"unit\":\"%s\",\"startValue\":%" PRId64 ",\"endValue\":%" PRId64
		",\"%s\":[", unit, lo, hi, *type == 'e' ? "events" : "samples");
	ss->first = false;
}

/* Lanes for the intervals v[0..n) (sorted by start): each goes to the
 * first lane free at its start. Returns the number of lanes, or -ENOMEM;
 * *hi gets the latest end. */
static int lanes(struct ss *ss, const struct view_event *v, size_t n, uint64_t *hi)
{
	struct view_evinfo ev;
	size_t i, l;

	if (ARRAY_RESERVE(ss->lane, ss->lane_cap, n))
		return -ENOMEM;
	ss->nlanes = 0;
	*hi = 0;
	for (i = 0; i < n; i++) {
		view_event_info(ss->ctx, &v[i], &ev);
		for (l = 0; l < ss->nlanes && ss->lane_end[l] > ev.start; l++)
			;
		if (l == ss->nlanes &&
		    ARRAY_PUSH(ss->lane_end, ss->nlanes, ss->lanes_cap, ev.end))
			return -ENOMEM;
		ss->lane_end[l] = ev.end;
		ss->lane[i] = l;
		*hi = ev.end > *hi ? ev.end : *hi;
	}
	return ss->nlanes;
}

static int put_interval(struct ss *ss, const struct view_event *e, bool *first)
{
	const struct model *m = ss->ctx->model;
	bool bio = e->kind == CAP_KIND_BIO;
	struct view_evinfo ev;
	const uint32_t *f;
	uint32_t disk = 0;
	size_t nev;
	int n, err = 0;

	view_event_info(ss->ctx, e, &ev);
	n = stack_frames(ss, &ev, bio, &f);
	if (n >= 0 && bio) {
		const struct cap_bio *b = model__bio(m, &nev) + e->idx;

		err = disk_frame(ss, b->major, b->minor, &disk);
	}
	if (n < 0 || err)
		return n < 0 ? n : err;
	put_frame_events(ss, f, n, bio ? (int64_t)disk : -1, 'O', ev.start, first);
	put_frame_events(ss, f, n, bio ? (int64_t)disk : -1, 'C', ev.end, first);
	return 0;
}

/* The intervals of one thread and kind, a profile per lane. */
static int put_evented(struct ss *ss, const struct view_event *v, size_t n)
{
	const char *what = v[0].kind == CAP_KIND_BIO ? "block I/O" : "off-CPU";
	struct view_evinfo ev;
	uint64_t hi;
	int64_t lo_rel, hi_rel;
	size_t i, l;
	bool first;
	int nl = lanes(ss, v, n, &hi), err = 0;

	if (nl < 0)
		return nl;
	view_event_info(ss->ctx, &v[0], &ev);
	lo_rel = ev.start < ss->t0 ? -(int64_t)(ss->t0 - ev.start) : 0;
	hi_rel = hi > ss->t0 + ss->span ? (int64_t)(hi - ss->t0) : (int64_t)ss->span;
	for (l = 0; !err && l < (size_t)nl; l++) {
		put_head(ss, v, n, "evented", what, l, nl, "nanoseconds", lo_rel, hi_rel);
		first = true;
		for (i = 0; !err && i < n; i++) {
			if (ss->lane[i] == l)
				err = put_interval(ss, &v[i], &first);
		}
		fputs("]}", ss->out);
	}
	return err;
}

/* The CPU samples of one thread: stacks, then their weights. */
static int put_sampled(struct ss *ss, const struct view_event *v, size_t n)
{
	uint64_t period = ss->ctx->opts.cpu_period_ns;
	char w[24], *we = view_put_u64(w, period ? period : 1);
	struct view_evinfo ev;
	const uint32_t *f;
	size_t i;
	int j, k;

	put_head(ss, v, n, "sampled", "CPU", 0, 1, period ? "nanoseconds" : "none", 0,
		 (int64_t)(n * (period ? period : 1)));
	for (i = 0; i < n; i++) {
		view_event_info(ss->ctx, &v[i], &ev);
		k = stack_frames(ss, &ev, false, &f);
		if (k < 0)
			return k;
		fputs_unlocked(i ? ",[" : "[", ss->out);
		for (j = 0; j < k; j++) {
			char buf[24], *p = buf;

			if (j)
				*p++ = ',';
			p = view_put_u64(p, f[j]);
			fwrite_unlocked(buf, 1, p - buf, ss->out);
		}
		putc_unlocked(']', ss->out);
	}
	fputs("],\"weights\":[", ss->out);
	for (i = 0; i < n; i++) {
		if (i)
			putc_unlocked(',', ss->out);
		fwrite_unlocked(w, 1, we - w, ss->out);
	}
	fputs("]}", ss->out);
	return 0;
}

/* ---- the file ------------------------------------------------------------- */

/* Threads, then kinds, then time (a request's issue). */
static int cmp_thread(const void *pa, const void *pb)
{
	const struct view_event *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static bool same_thread_kind(const struct view_event *a, const struct view_event *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->kind == b->kind;
}

static int put_profiles(struct ss *ss)
{
	const struct model *m = ss->ctx->model;
	struct view_event *v = NULL;
	size_t i, j, n = 0, nev;
	int err;

	err = view_events(ss->ctx, VIEW_EVENTS_STACKS, &v, &n);
	for (i = 0; !err && i < n; i++) { /* sort requests by issue */
		if (v[i].kind == CAP_KIND_BIO)
			v[i].time = (model__bio(m, &nev) + v[i].idx)->issue_time;
	}
	if (!err)
		qsort(v, n, sizeof(*v), cmp_thread);
	for (i = 0; !err && i < n; i = j) {
		for (j = i + 1; j < n && same_thread_kind(&v[i], &v[j]); j++)
			;
		if (v[i].kind == CAP_KIND_CPU)
			err = put_sampled(ss, v + i, j - i);
		else
			err = put_evented(ss, v + i, j - i);
	}
	free(v);
	return err;
}

static void put_frames(struct ss *ss)
{
	char buf[VIEW_DISK_MAX];
	size_t i;

	fputs("],\n\"shared\":{\"frames\":[", ss->out);
	for (i = 0; i < ss->nframes; i++) {
		const struct sframe *f = &ss->frames[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", ss->out);
		if (!f->name) {
			view_json_str(ss->out, view_disk(ss->ctx->model, f->major, f->minor, buf),
				      "");
			fputs(",\"file\":\"block device\"}", ss->out);
			continue;
		}
		view_json_str(ss->out, f->name, "");
		fputs(",\"file\":", ss->out);
		view_json_str(ss->out, f->file, "");
		if (f->line > 0)
			fprintf(ss->out, ",\"line\":%d", f->line);
		putc_unlocked('}', ss->out);
	}
	fputs("]}}\n", ss->out);
}

static void put_file_head(struct ss *ss)
{
	const struct model *m = ss->ctx->model;
	char when[64], name[200];

	view_fmt_walltime(m, ss->t0, when, sizeof(when));
	snprintf(name, sizeof(name), "%s %s", model__header(m)->hostname, when);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"stkrec " STKREC_VERSION "\",\"name\":", ss->out);
	view_json_str(ss->out, name, "");
	fputs(",\"activeProfileIndex\":0,\"profiles\":[", ss->out);
}

int view_speedscope(struct report_ctx *ctx, FILE *out)
{
	struct ss ss = { .ctx = ctx, .out = out, .first = true };
	int err;

	ss.t0 = model__header(ctx->model)->start_time;
	ss.span = model__last_time(ctx->model) - ss.t0;
	ss.fr = malloc(VIEW_MAX_FRAMES * sizeof(*ss.fr));
	ss.ebuf = malloc(EBUF_SIZE);
	if (!ss.fr || !ss.ebuf) {
		free(ss.fr);
		free(ss.ebuf);
		return -ENOMEM;
	}
	put_file_head(&ss);
	err = put_profiles(&ss);
	if (!err)
		put_frames(&ss);
	free(ss.fr);
	free(ss.ebuf);
	free(ss.frames);
	free(ss.sidx);
	free(ss.lane);
	free(ss.lane_end);
	idmap__fini(&ss.frame_ids);
	idmap__fini(&ss.fl_ids);
	idmap__fini(&ss.stacks);
	return err;
}
