// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A flight recorder's dump: the segments that cover the window, each a
 * complete capture held in a memfd, merged into one file (FORMAT.md
 * §4.26). Their ids need no renumbering: each segment's interner went on
 * from the last one's ids (intern__set_bases()). Of each segment the
 * merge keeps every definition, and the events that ended inside the
 * window; of the segments' closing records it keeps the LOSTs and the
 * last segment's waits still open and STATs (the window's own counts in
 * place of the segment's), then writes the TRIGGER, the symbol pack and
 * END. Events that ended before the window are left out: not lost, and not
 * counted as lost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "pack/pack.h"
#include "record/dump.h"

#define DUMP_NICE 10      /* the drain, not the dump, gets the CPU first */
#define LOST_SLACK_NS 1000000000ull /* LOSTs are written about every second */
#define MAX_STAT_KEYS 256

struct stat_key_id {
	uint32_t id;
	int key; /* enum cap_stat_key, or -1 */
};

struct merge {
	struct dump_job *j;
	struct cap_writer *w;
	bool first, last;     /* the segment: the oldest, the one at the dump */
	uint64_t latest;      /* the latest event end met so far */
	uint64_t counts[CAP_STAT_MAX]; /* the window's own STAT values */
	struct stat_key_id keys[MAX_STAT_KEYS]; /* the last segment's key strings */
	int nkeys;
	struct cap_stat stats[MAX_STAT_KEYS];   /* ... and its STATs */
	int nstats;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* An event's kind and the time it ended (it is recorded then); -1: not an
 * event. */
static int event_end(const struct cap_record *r, uint64_t *end)
{
	switch (r->type) {
	case CAP_REC_OFFCPU:
		*end = r->offcpu.start + r->offcpu.duration;
		return CAP_KIND_OFFCPU;
	case CAP_REC_CPU:
		*end = r->cpu.time;
		return CAP_KIND_CPU;
	case CAP_REC_BIO:
		*end = r->bio.complete_time;
		return CAP_KIND_BIO;
	case CAP_REC_WAKEUP:
		*end = r->wakeup.time;
		return CAP_KIND_WAKEUP;
	}
	return -1;
}

static const enum cap_stat_key kind_stat[CAP_KIND_MAX] = {
	[CAP_KIND_OFFCPU] = CAP_STAT_EVENTS_OFFCPU,
	[CAP_KIND_CPU] = CAP_STAT_EVENTS_CPU,
	[CAP_KIND_BIO] = CAP_STAT_EVENTS_BIO,
	[CAP_KIND_SIDEBAND] = CAP_STAT_MAX,
	[CAP_KIND_WAKEUP] = CAP_STAT_EVENTS_WAKEUP,
};

/*
 * An event of the window, or nothing. A wait a segment closed on open is
 * written whole by the next one: only the last segment's open waits (those
 * still open at the dump) stay. A wait that began before the window is
 * open at its start, as in a file of that length; one that began inside
 * it is not, whatever segment boundary it crossed.
 */
static int merge_event(struct merge *m, struct cap_record *r, int kind, uint64_t end)
{
	const uint64_t ws = m->j->trig.window_start;
	struct cap_offcpu *o = &r->offcpu;

	if (end < ws)
		return 0;
	if (kind == CAP_KIND_OFFCPU) {
		if ((o->open & CAP_OFFCPU_OPEN_END) && !m->last)
			return 0;
		if (o->start < ws || (o->open & CAP_OFFCPU_START_UNKNOWN))
			o->open |= CAP_OFFCPU_OPEN_START;
		else
			o->open &= ~CAP_OFFCPU_OPEN_START;
	}
	if (end > m->latest)
		m->latest = end;
	m->counts[kind_stat[kind]]++;
	m->j->events++;
	return cap_writer__append_record(m->w, r, cap_record_fixed_len(r));
}

/* The last segment's STAT key strings, to give the window's own counts. */
static void note_key(struct merge *m, const struct cap_record *r)
{
	int key;

	if (!m->last || m->nkeys >= MAX_STAT_KEYS || !r->tail)
		return;
	key = cap_stat_key_of(r->tail);
	if (key >= 0)
		m->keys[m->nkeys++] = (struct stat_key_id){ r->string.id, key };
}

static int stat_key(const struct merge *m, uint32_t id)
{
	int i;

	for (i = 0; i < m->nkeys; i++)
		if (m->keys[i].id == id)
			return m->keys[i].key;
	return -1;
}

static int merge_record(struct merge *m, struct cap_record *r)
{
	uint64_t end;
	int kind = event_end(r, &end);

	if (kind >= 0)
		return merge_event(m, r, kind, end);
	switch (r->type) {
	case CAP_REC_BLOCK:
	case CAP_REC_END:
	case CAP_REC_PACK_OBJECT:
	case CAP_REC_PACK_SYMBOL:
	case CAP_REC_PACK_ADDR:
	case CAP_REC_PACK_JIT:
	case CAP_REC_PACK_INFO:
		return 0; /* blocks cut anew; the dump's own pack and END */
	case CAP_REC_KERNEL:
	case CAP_REC_KMOD:
	case CAP_REC_BLOCKDEV:
		if (!m->first)
			return 0; /* each segment's are the first's again */
		break;
	case CAP_REC_STAT:
		if (m->last && m->nstats < MAX_STAT_KEYS)
			m->stats[m->nstats++] = r->stat;
		return 0;
	case CAP_REC_LOST:
		/* drops of the window: a LOST is written within a second */
		if (m->latest + LOST_SLACK_NS < m->j->trig.window_start)
			return 0;
		break;
	case CAP_REC_STRING:
		note_key(m, r);
		m->counts[CAP_STAT_STRINGS]++;
		break;
	case CAP_REC_STACK:
		m->counts[CAP_STAT_STACKS]++;
		break;
	case CAP_REC_THREAD:
		m->counts[CAP_STAT_THREADS]++;
		break;
	}
	return cap_writer__append_record(m->w, r, cap_record_fixed_len(r));
}

static int merge_segment(struct merge *m, const struct dump_seg *s)
{
	struct cap_reader *rd = NULL;
	struct cap_record rec;
	void *buf;
	int ret, err = 0;

	if (!s->size)
		return 0;
	buf = mmap(NULL, s->size, PROT_READ, MAP_SHARED, s->fd, 0);
	if (buf == MAP_FAILED)
		return -errno;
	err = cap_reader__open_mem(buf, s->size, &rd);
	while (!err && (ret = cap_reader__next(rd, &rec)) > 0)
		err = merge_record(m, &rec);
	if (!err && ret < 0)
		err = ret;
	cap_reader__close(rd);
	munmap(buf, s->size);
	return err;
}

/* The last segment's STATs, the window's own where it has them. */
static int write_stats(struct merge *m)
{
	struct cap_stat s;
	int i, key, err;

	m->counts[CAP_STAT_DURATION_NS] = m->j->trig.window_end - m->j->trig.window_start;
	m->counts[CAP_STAT_BYTES_RAW] = cap_writer__totals(m->w)->bytes_raw;
	for (i = 0; i < m->nstats; i++) {
		s = m->stats[i];
		key = stat_key(m, s.key_id);
		switch (key) {
		case CAP_STAT_EVENTS_OFFCPU:
		case CAP_STAT_EVENTS_CPU:
		case CAP_STAT_EVENTS_BIO:
		case CAP_STAT_EVENTS_WAKEUP:
		case CAP_STAT_STACKS:
		case CAP_STAT_STRINGS:
		case CAP_STAT_THREADS:
		case CAP_STAT_DURATION_NS:
		case CAP_STAT_BYTES_RAW:
			s.value = m->counts[key];
			break;
		}
		err = cap_writer__append(m->w, CAP_REC_STAT, &s, sizeof(s), NULL, 0);
		if (err < 0)
			return err;
	}
	return 0;
}

/* A pack that fails costs the pack, not the file (pack_err says). */
static void write_pack(struct dump_job *j, struct cap_writer *w)
{
	struct pack_opts o = { .jit = j->jm, .now = j->trig.window_end };
	struct packer *p = NULL;
	struct intern *in = NULL;
	int err;

	err = pack__new(&o, &p);
	if (!err)
		err = pack__scan(p, j->path);
	if (!err)
		err = intern__new(w, &in);
	if (!err)
		err = intern__set_bases(in, &j->ids);
	if (!err)
		err = pack__write(p, w, in, &j->pack_info);
	intern__free(in);
	pack__free(p);
	j->pack_err = err;
}

static int write_file(struct dump_job *j)
{
	struct cap_writer_opts wo = { .exclusive = true };
	struct merge *m = calloc(1, sizeof(*m));
	int i, err;

	if (!m)
		return -ENOMEM;
	m->j = j;
	err = cap_writer__open(j->path, &j->hdr, &wo, &m->w);
	for (i = 0; !err && i < j->nsegs; i++) {
		m->first = i == 0;
		m->last = i == j->nsegs - 1;
		err = merge_segment(m, &j->segs[i]);
	}
	if (!err)
		err = write_stats(m);
	if (!err)
		err = cap_writer__append(m->w, CAP_REC_TRIGGER, &j->trig, sizeof(j->trig), NULL, 0);
	if (!err)
		err = cap_writer__flush(m->w);
	if (!err && j->pack)
		write_pack(j, m->w);
	if (!err)
		err = cap_writer__append(m->w, CAP_REC_END, &j->end, sizeof(j->end), NULL, 0);
	j->bytes = m->w ? cap_writer__file_size(m->w) : 0;
	if (!err)
		err = cap_writer__finish_size(m->w, &j->bytes);
	else
		cap_writer__free(m->w);
	free(m);
	return err < 0 ? err : 0;
}

static void run(struct dump_job *j)
{
	j->err = write_file(j);
	j->done_ns = mono_ns();
	atomic_store(&j->done, true);
}

static void *dump_thread(void *arg)
{
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), DUMP_NICE);
	run(arg);
	return NULL;
}

void dump__start(struct dump_job *j)
{
	atomic_init(&j->done, false);
	j->threaded = !pthread_create(&j->thread, NULL, dump_thread, j);
	if (!j->threaded)
		run(j); /* no thread: here */
}

bool dump__done(struct dump_job *j)
{
	return atomic_load(&j->done);
}

int dump__join(struct dump_job *j)
{
	if (j->threaded)
		pthread_join(j->thread, NULL);
	j->threaded = false;
	return j->err;
}

void dump__free(struct dump_job *j)
{
	int i;

	if (!j)
		return;
	dump__join(j);
	for (i = 0; i < j->nsegs; i++)
		close(j->segs[i].fd);
	free(j->segs);
	jitmaps__free(j->jm);
	free(j);
}
