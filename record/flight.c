// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flight recorder (record --flight-recorder SPAN): recording goes on as
 * always, into short segments held in memory instead of a file. Each
 * segment is a complete capture in a memfd, a quarter of SPAN long (a
 * time, or a size), whose interner goes on from the last one's ids; the
 * segments older than SPAN (plus --post) are dropped, so what is held
 * stays within SPAN and a segment. When a trigger's dump is due
 * (trigger.c), the segment being written is closed, and dump.c merges the
 * segments that cover [trigger - SPAN, now] into FILE.<timestamp> on a
 * thread of its own while recording goes on; --max-dumps stops recording
 * once that many files are written. A dump due while the last one's file
 * is still being written waits for it (the triggers meanwhile join it).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/mman.h>
#include "record/dump.h"
#include "record/recorder_int.h"
#include "util/array.h"

#define SEG_PARTS 4
#define SEG_MIN_NS (250 * 1000000ull)
#define SEG_MIN_BYTES (64u << 10)
#define HANG_SLACK_NS 1000000000ull /* a hang: past DURATION by this (size SPAN) */

struct held_seg {
	struct dump_seg s;
	uint64_t start, end; /* monotonic ns */
};

struct flight {
	uint64_t span_ns, span_bytes; /* the window: a time or a size */
	uint64_t seg_ns, seg_bytes;   /* a segment's */
	uint64_t post_ns;
	struct held_seg *segs;        /* oldest first */
	size_t nr, cap;
	uint64_t held, peak;          /* bytes of the segments held */
	struct triggers *trg;
	struct dump_job *job;         /* being written */
	char job_comm[16];
	bool stop;                    /* --max-dumps written */
};

/* An unwritable output directory fails before BPF, as a file would. */
static int check_output_dir(const char *output)
{
	char *copy = strdup(output);
	int err = 0;

	if (!copy)
		return -ENOMEM;
	if (access(dirname(copy), W_OK | X_OK))
		err = -errno;
	free(copy);
	return err;
}

int flight__new(const struct record_opts *o, struct flight **out, struct triggers **trg)
{
	struct flight *f;
	int err = check_output_dir(o->output);

	if (err)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->span_ns = o->flight_ns;
	f->span_bytes = o->flight_bytes;
	f->seg_ns = o->flight_ns / SEG_PARTS < SEG_MIN_NS ? SEG_MIN_NS : o->flight_ns / SEG_PARTS;
	f->seg_bytes = o->flight_bytes / SEG_PARTS < SEG_MIN_BYTES ? SEG_MIN_BYTES
								    : o->flight_bytes / SEG_PARTS;
	f->post_ns = o->post_ns;
	err = triggers__new(o, o->flight_ns ? f->seg_ns : HANG_SLACK_NS, &f->trg);
	if (err) {
		free(f);
		return err;
	}
	*out = f;
	*trg = f->trg;
	return 0;
}

static void drop_segment(struct flight *f, size_t i)
{
	close(f->segs[i].s.fd);
	f->held -= f->segs[i].s.size;
	memmove(&f->segs[i], &f->segs[i + 1], (f->nr - i - 1) * sizeof(*f->segs));
	f->nr--;
}

void flight__free(struct flight *f)
{
	if (!f)
		return;
	dump__free(f->job);
	while (f->nr)
		drop_segment(f, f->nr - 1);
	triggers__free(f->trg);
	free(f->segs);
	free(f);
}

/* The segment being written ends now and joins those held; the next one
 * opens unless the recording is ending. */
static int next_segment(struct recorder *r, uint64_t now, bool last)
{
	struct flight *f = r->fl;
	uint64_t size;
	int fd, err = recorder__close_segment(r, now, &size);

	fd = r->seg_fd;
	r->seg_fd = -1;
	if (!err && fd >= 0 && ARRAY_RESERVE(f->segs, f->cap, f->nr + 1))
		err = -ENOMEM;
	if (!err && fd >= 0) {
		f->segs[f->nr++] = (struct held_seg){ { fd, size }, r->file_start_ns, now };
		f->held += size;
		if (f->held > f->peak)
			f->peak = f->held;
	} else if (fd >= 0) {
		close(fd);
	}
	return last ? err : recorder__open_next(r, now, err);
}

static bool segment_due(const struct recorder *r, uint64_t now)
{
	const struct flight *f = r->fl;

	if (!r->w)
		return false;
	if (f->span_ns)
		return now - r->file_start_ns >= f->seg_ns;
	return cap_writer__file_size(r->w) >= f->seg_bytes;
}

/* Segments no dump can need any more: older than SPAN and --post (a
 * dump due now starts SPAN before its trigger), or past SPAN's bytes. */
static void evict(struct flight *f, uint64_t now)
{
	while (f->nr) {
		if (f->span_ns && f->segs[0].end + f->span_ns + f->post_ns >= now)
			break;
		if (!f->span_ns && f->held <= f->span_bytes)
			break;
		drop_segment(f, 0);
	}
}

/* The segments that reach into [ws, now], handed to the job (dups). */
static int take_segments(struct flight *f, struct dump_job *j, uint64_t *ws)
{
	size_t i, first = 0;

	while (first < f->nr && f->segs[first].end < *ws)
		first++;
	if (first == f->nr)
		return -ENODATA;
	if (f->segs[first].start > *ws)
		*ws = f->segs[first].start; /* no older one held */
	j->segs = calloc(f->nr - first, sizeof(*j->segs));
	if (!j->segs)
		return -ENOMEM;
	for (i = first; i < f->nr; i++) {
		j->segs[j->nsegs].fd = fcntl(f->segs[i].s.fd, F_DUPFD_CLOEXEC, 0);
		if (j->segs[j->nsegs].fd < 0)
			return -errno;
		j->segs[j->nsegs++].size = f->segs[i].s.size;
	}
	return 0;
}

/* The job for trig, from the segments held (the one being written
 * closed first). */
static int prepare_job(struct recorder *r, struct dump_job *j, const struct cap_trigger *trig,
		       uint64_t now)
{
	struct flight *f = r->fl;
	uint64_t ws = 0;
	int err;

	if (f->span_ns && trig->time > f->span_ns)
		ws = trig->time - f->span_ns;
	err = take_segments(f, j, &ws);
	if (err)
		return err;
	j->trig = *trig;
	j->trig.window_start = ws;
	j->trig.window_end = now;
	j->trig.post = f->post_ns;
	j->ids = r->ids;
	j->pack = r->jm != NULL;
	if (j->pack) { /* the JIT maps read so far are this dump's */
		j->jm = r->jm;
		r->jm = NULL;
		if (jitmaps__new(&r->jm))
			r->jm = NULL;
	}
	return recorder__dump_header(r, j, ws);
}

/* The pending dump: the segment being written ends now, and the file is
 * written beside the drain (at the end, here). */
static int start_dump(struct recorder *r, uint64_t now, bool last)
{
	struct flight *f = r->fl;
	struct dump_job *j = calloc(1, sizeof(*j));
	struct cap_trigger trig;
	int err;

	if (!j)
		return -ENOMEM;
	triggers__take(f->trg, &trig, f->job_comm);
	err = next_segment(r, now, last);
	if (!err)
		err = prepare_job(r, j, &trig, now);
	if (err) {
		dump__free(j);
		return err;
	}
	j->end = (struct cap_end){ .time = now, .reason = CAP_STOP_SWITCH, .status = -1 };
	if (last)
		j->end = (struct cap_end){ .time = now, .reason = r->stop,
					   .status = command__status(&r->cmd) };
	f->job = j;
	dump__start(j);
	return 0;
}

/* The dump's file is complete (or failed): said, and the job freed. */
static int finish_job(struct recorder *r)
{
	struct flight *f = r->fl;
	struct dump_job *j = f->job;
	int err = dump__join(j);
	struct record_dump d = {
		.path = j->path, .trigger = j->trig, .events = j->events,
		.bytes = j->bytes, .err = err,
	};

	d.latency_ns = j->done_ns - j->trig.time;
	memcpy(d.comm, f->job_comm, sizeof(d.comm));
	snprintf(r->path, sizeof(r->path), "%s", j->path);
	if (j->pack) {
		r->pack = j->pack_info;
		r->packs += !j->pack_err;
		r->pack_err = j->pack_err;
	}
	r->final_bytes = j->bytes;
	if (r->opts.on_dump)
		r->opts.on_dump(r->opts.progress_ctx, &d);
	f->job = NULL;
	dump__free(j);
	f->stop = triggers__exhausted(f->trg);
	return err;
}

int recorder__flight_tick(struct recorder *r, uint64_t now)
{
	struct flight *f = r->fl;
	int err = 0;

	if (r->dump_requested) {
		r->dump_requested = 0;
		triggers__signal(f->trg, now);
	}
	if (f->job && dump__done(f->job))
		err = finish_job(r);
	if (!err && triggers__due(f->trg, now) && !f->job)
		err = start_dump(r, now, false);
	else if (!err && segment_due(r, now))
		err = next_segment(r, now, false);
	evict(f, now);
	if (err)
		return err;
	return f->stop && !f->job;
}

/*
 * The end of recording: a dump waiting for its --post is written now, and
 * without --trigger the end is a trigger itself (as perf's --overwrite
 * writes its ring at exit); else the segments are dropped unwritten.
 */
int recorder__flight_end(struct recorder *r, uint64_t now)
{
	struct flight *f = r->fl;
	uint64_t size;
	int err = 0, e2;

	if (f->job)
		err = finish_job(r);
	triggers__end(f->trg, now);
	if (triggers__pending(f->trg))
		e2 = start_dump(r, now, true);
	else
		e2 = recorder__close_segment(r, now, &size);
	if (!e2 && f->job)
		e2 = finish_job(r);
	return err ? err : e2;
}

void recorder__flight_progress(const struct recorder *r, struct record_progress *p)
{
	const struct flight *f = r->fl;

	p->files = p->dumps = triggers__dumps(f->trg) - (f->job != NULL);
	p->triggers_ignored = triggers__ignored(f->trg);
	p->max_dumps_reached = f->stop;
	p->held_bytes = f->held;
	p->held_peak = f->peak;
	p->bytes = f->held;
}

void recorder__dump(struct recorder *r)
{
	r->dump_requested = 1;
}
