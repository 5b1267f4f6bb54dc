// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flight recorder (record --flight-recorder SPAN): recording goes on as
 * always, into short segments held in memory instead of a file. Each
 * segment is a complete capture in a memfd, a quarter of SPAN long (a
 * time, or a size), whose interner goes on from the last one's ids; the
 * segments older than SPAN (plus --post) are dropped, so what is held
 * stays within SPAN and a segment. A trigger (SIGUSR2, a wait of at least
 * --trigger's DURATION, the end when no --trigger is set) asks for a dump:
 * --post later the segment being written is closed, and dump.c merges the
 * segments that cover [trigger - SPAN, now] into FILE.<timestamp> on a
 * thread of its own while recording goes on.
 *
 * Throttling: triggers that come while a dump waits for its --post, or
 * for the file of the last dump to be complete, join that dump (its
 * TRIGGER counts them); --max-dumps N stops recording once N files are
 * written. A wait still open when a segment closes triggers once it has
 * outlasted DURATION by a segment's length (1 s with a size SPAN): a thread
 * that hangs, not only one that came back; once.
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
#define HANGS 16 /* open waits that triggered, remembered */
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
	int cur_fd;                   /* the segment being written (a dup) */
	uint64_t cur_start;
	uint64_t held, peak;          /* bytes of the segments held */
	/* the dump waiting for its --post or for the last dump's file */
	bool pending;
	uint64_t due;
	struct cap_trigger trig;
	char comm[16];
	struct dump_job *job;         /* being written */
	char job_comm[16];
	unsigned dumps;
	uint64_t ignored;             /* triggers past --max-dumps */
	bool stop;                    /* --max-dumps reached */
	struct { uint32_t tid; uint64_t start; } hangs[HANGS];
	unsigned next_hang;
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

int flight__new(const struct record_opts *o, struct flight **out)
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
	f->cur_fd = -1;
	*out = f;
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
	if (f->cur_fd >= 0)
		close(f->cur_fd);
	free(f->segs);
	free(f);
}

int recorder__flight_fd(struct recorder *r, uint64_t now)
{
	struct flight *f = r->fl;
	int fd = memfd_create("stkrec-segment", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (f->cur_fd >= 0)
		close(f->cur_fd);
	f->cur_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->cur_fd < 0) {
		close(fd);
		return -errno;
	}
	f->cur_start = now;
	return fd;
}

int recorder__flight_keep(struct recorder *r, uint64_t size, uint64_t now)
{
	struct flight *f = r->fl;
	int fd = f->cur_fd;

	f->cur_fd = -1;
	if (fd < 0)
		return 0;
	if (ARRAY_RESERVE(f->segs, f->cap, f->nr + 1)) {
		close(fd);
		return -ENOMEM;
	}
	f->segs[f->nr++] = (struct held_seg){ { fd, size }, f->cur_start, now };
	f->held += size;
	if (f->held > f->peak)
		f->peak = f->held;
	return 0;
}

bool recorder__flight_due(const struct recorder *r, uint64_t now)
{
	const struct flight *f = r->fl;

	if (f->span_ns)
		return now - f->cur_start >= f->seg_ns;
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

static void trigger(struct recorder *r, const struct cap_trigger *t, const char *comm,
		    uint64_t now)
{
	struct flight *f = r->fl;

	if (f->stop)
		return;
	if (f->pending) {
		f->trig.triggers++;
		return;
	}
	if (r->opts.max_dumps && f->dumps >= r->opts.max_dumps) {
		f->ignored++;
		return;
	}
	f->pending = true;
	f->trig = *t;
	f->trig.triggers = 1;
	snprintf(f->comm, sizeof(f->comm), "%s", comm ? comm : "");
	f->due = (t->time > now ? t->time : now) + f->post_ns;
}

/* An open wait that triggered is remembered, so that neither the next
 * segment's nor its end triggers again. */
static bool hang_seen(struct flight *f, const struct cap_offcpu *o)
{
	unsigned i;

	for (i = 0; i < HANGS; i++)
		if (f->hangs[i].tid == o->tid && f->hangs[i].start == o->start)
			return true;
	return false;
}

void recorder__flight_wait(struct recorder *r, const struct cap_offcpu *o, const char *comm)
{
	struct flight *f = r->fl;
	struct cap_trigger t;

	if (!f || !r->opts.trigger_wait_ns || o->duration < r->opts.trigger_wait_ns ||
	    hang_seen(f, o))
		return;
	/* still open: a hang once it outlasts DURATION by a segment (a wait
	 * just past it is written whole when it ends, soon), if it began
	 * while recording (a thread idle since before, such as a kernel
	 * worker, is not hung) */
	if ((o->open & CAP_OFFCPU_OPEN_END) &&
	    (o->start < r->start_ns ||
	     o->duration < r->opts.trigger_wait_ns + (f->span_ns ? f->seg_ns : HANG_SLACK_NS)))
		return;
	if (o->open & CAP_OFFCPU_OPEN_END) {
		f->hangs[f->next_hang].tid = o->tid;
		f->hangs[f->next_hang].start = o->start;
		f->next_hang = (f->next_hang + 1) % HANGS;
	}
	t = (struct cap_trigger){
		.kind = CAP_TRIGGER_WAIT, .time = o->start + o->duration,
		.wait_start = o->start, .wait_duration = o->duration,
		.threshold = r->opts.trigger_wait_ns, .tid = o->tid, .pid = o->pid,
		.ustack = o->ustack, .kstack = o->kstack,
	};
	trigger(r, &t, comm, now_ns());
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

/* The job for the pending trigger, from the segments held (the one being
 * written closed first). */
static int prepare_job(struct recorder *r, struct dump_job *j, uint64_t now)
{
	struct flight *f = r->fl;
	uint64_t ws = 0;
	int err;

	if (f->span_ns && f->trig.time > f->span_ns)
		ws = f->trig.time - f->span_ns;
	err = take_segments(f, j, &ws);
	if (err)
		return err;
	j->trig = f->trig;
	j->trig.window_start = ws;
	j->trig.window_end = now;
	j->trig.post = f->post_ns;
	j->trig.dump = f->dumps + 1;
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

/* The pending dump: the segment being written ends now (the next one
 * opens unless the recording is ending), and the file is written beside
 * the drain. */
static int start_dump(struct recorder *r, uint64_t now, bool last)
{
	struct flight *f = r->fl;
	struct dump_job *j = calloc(1, sizeof(*j));
	int err;

	if (!j)
		return -ENOMEM;
	err = last ? recorder__close_segment(r, now) : recorder__switch_output(r, now);
	if (!err)
		err = prepare_job(r, j, now);
	if (err) {
		dump__free(j);
		return err;
	}
	j->end = (struct cap_end){ .time = now, .reason = CAP_STOP_SWITCH, .status = -1 };
	if (last)
		j->end = (struct cap_end){ .time = now, .reason = r->stop,
					   .status = command__status(&r->cmd) };
	f->pending = false;
	f->dumps++;
	memcpy(f->job_comm, f->comm, sizeof(f->job_comm));
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
	if (r->opts.max_dumps && f->dumps >= r->opts.max_dumps)
		f->stop = true;
	return d.err;
}

int recorder__flight_tick(struct recorder *r, uint64_t now)
{
	struct flight *f = r->fl;
	struct cap_trigger t = { .kind = CAP_TRIGGER_SIGNAL, .time = now };
	int err = 0;

	if (r->dump_requested) {
		r->dump_requested = 0;
		trigger(r, &t, NULL, now);
	}
	if (f->job && dump__done(f->job))
		err = finish_job(r);
	if (!err && f->pending && now >= f->due && !f->job)
		err = start_dump(r, now, false);
	else if (!err && recorder__flight_due(r, now))
		err = recorder__switch_output(r, now);
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
	struct cap_trigger t = { .kind = CAP_TRIGGER_END, .time = now };
	int err = 0, e2;

	if (f->job)
		err = finish_job(r);
	if (!r->opts.trigger_wait_ns)
		trigger(r, &t, NULL, now);
	if (f->pending)
		e2 = start_dump(r, now, true);
	else
		e2 = recorder__close_segment(r, now);
	if (!e2 && f->job)
		e2 = finish_job(r);
	return err ? err : e2;
}

void recorder__flight_progress(const struct recorder *r, struct record_progress *p)
{
	const struct flight *f = r->fl;

	p->files = p->dumps = f->dumps;
	p->triggers_ignored = f->ignored;
	p->max_dumps_reached = f->stop;
	p->held_bytes = f->held;
	p->held_peak = f->peak;
	p->bytes = f->held;
}

void recorder__dump(struct recorder *r)
{
	r->dump_requested = 1;
}
