// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * speedscope's file format (speedscope's file-format-schema.json, shipped
 * with its npm package): a shared frame table and, per thread, profiles:
 *
 *   - its off-CPU waits, "sampled" with weights: a stack per wait,
 *     outermost first, weighing its duration in nanoseconds, in time order;
 *   - its block I/O requests the same way, by issue, weighing their
 *     latency: the submitter's stacks, then the disk as innermost frame;
 *   - its CPU samples, "sampled": a stack per sample, weighing the
 *     sampling period (unit "none" and 1 when unknown).
 *
 * speedscope's Time Order view lays the waits end to end on that clock,
 * each as long as it lasted (neighbours with one stack merge); frame
 * totals are exact. Where a wait happened on the wall clock is the
 * Chrome trace's to show: "evented" profiles, which open and close every
 * frame of every wait at its times, cost ~870 bytes a wait of the pipe
 * benchmark, and still ~420 with the outer frames a wait shares with the
 * one before it kept open (a thread alternating between two stacks shares
 * little), where a sample is its frame indices and a weight (~60 bytes).
 *
 * A stack is named once per (pid, exec, user stack, kernel stack), and
 * profiles are written as they are read from a sorted index: memory grows
 * with the events (16 bytes each) and the distinct stacks, the file as it
 * goes.
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
	bool first;              /* no profile written yet */
	struct idmap frame_ids;  /* (name, file-line id), disks (0, dev) -> index */
	struct idmap fl_ids;     /* (file, line) -> id */
	struct sframe *frames;
	size_t nframes, frames_cap;
	struct idmap stacks;     /* view_stack_key() -> offset << 16 | count */
	uint32_t *sidx;          /* frame indices of the stacks, outermost first */
	size_t nsidx, sidx_cap;
	struct rframe *fr;
};

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

static const char *const what[] = {
	[CAP_KIND_OFFCPU] = "off-CPU", [CAP_KIND_CPU] = "CPU", [CAP_KIND_BIO] = "block I/O",
};

/* {"type":"sampled","name":"COMM[ (CONTAINER)] PID/TID: WHAT","unit":...,
 * and the opening of its samples. COMM is the thread's name at its last
 * event of the run (a thread renames itself early, if at all), CONTAINER
 * its container there (container__name()'s RUNTIME:ID), where one is
 * named. */
static void put_head(struct ss *ss, const struct view_event *run, size_t n, const char *unit,
		     uint64_t total)
{
	char name[128 + VIEW_CONTAINER_MAX], ctr[VIEW_CONTAINER_MAX];
	struct view_evinfo ev;

	view_event_info(ss->ctx, &run[n - 1], &ev);
	view_container(ss->ctx->model, ev.cgroup, ctr, NULL);
	snprintf(name, sizeof(name), "%s%s%s%s %" PRIu32 "/%" PRIu32 ": %s",
		 model__comm_name(ss->ctx->model, ev.comm), strcmp(ctr, "-") ? " (" : "",
		 strcmp(ctr, "-") ? ctr : "", strcmp(ctr, "-") ? ")" : "", ev.pid, ev.tid,
		 what[run[0].kind]);
	fprintf(ss->out, "%s\n{\"type\":\"sampled\",\"name\":", ss->first ? "" : ",");
	view_json_str(ss->out, name, "");
	fprintf(ss->out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64
		",\"samples\":[", unit, total);
	ss->first = false;
}

/* What an event weighs: a wait's or a request's ns, a CPU sample's period
 * (1 when unknown). */
static uint64_t weight(const struct ss *ss, const struct view_event *e)
{
	uint64_t period = ss->ctx->opts.cpu_period_ns;
	struct view_evinfo ev;

	if (e->kind == CAP_KIND_CPU)
		return period ? period : 1;
	view_event_info(ss->ctx, e, &ev);
	return ev.end - ev.start;
}

/* "[F,F,...]" of an event: its stacks' frames, outermost first, then its
 * disk for a request. */
static int put_stack(struct ss *ss, const struct view_event *e, bool comma)
{
	bool bio = e->kind == CAP_KIND_BIO;
	struct view_evinfo ev;
	const uint32_t *f;
	char buf[24], *p;
	uint32_t disk;
	size_t nev;
	int j, k;

	view_event_info(ss->ctx, e, &ev);
	k = stack_frames(ss, &ev, bio, &f);
	if (k < 0)
		return k;
	fputs_unlocked(comma ? ",[" : "[", ss->out);
	for (j = 0; j < k; j++) {
		p = buf;
		if (j)
			*p++ = ',';
		p = view_put_u64(p, f[j]);
		fwrite_unlocked(buf, 1, p - buf, ss->out);
	}
	if (bio) {
		const struct cap_bio *b = model__bio(ss->ctx->model, &nev) + e->idx;

		if (disk_frame(ss, b->major, b->minor, &disk))
			return -ENOMEM;
		fprintf(ss->out, "%s%" PRIu32, k ? "," : "", disk);
	}
	putc_unlocked(']', ss->out);
	return 0;
}

/* The events of one thread and kind: stacks, then their weights. */
static int put_sampled(struct ss *ss, const struct view_event *v, size_t n)
{
	bool counted = v[0].kind == CAP_KIND_CPU && !ss->ctx->opts.cpu_period_ns;
	uint64_t total = 0;
	char w[24], *we;
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		total += weight(ss, &v[i]);
	put_head(ss, v, n, counted ? "none" : "nanoseconds", total);
	for (i = 0; i < n; i++) {
		err = put_stack(ss, &v[i], i);
		if (err)
			return err;
	}
	fputs("],\"weights\":[", ss->out);
	for (i = 0; i < n; i++) {
		if (i)
			putc_unlocked(',', ss->out);
		we = view_put_u64(w, weight(ss, &v[i]));
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
		err = put_sampled(ss, v + i, j - i);
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
	ss.fr = malloc(VIEW_MAX_FRAMES * sizeof(*ss.fr));
	if (!ss.fr)
		return -ENOMEM;
	put_file_head(&ss);
	err = put_profiles(&ss);
	if (!err)
		put_frames(&ss);
	free(ss.fr);
	free(ss.frames);
	free(ss.sidx);
	idmap__fini(&ss.frame_ids);
	idmap__fini(&ss.fl_ids);
	idmap__fini(&ss.stacks);
	return err;
}
