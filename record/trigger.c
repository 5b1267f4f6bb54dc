// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A flight recorder's triggers (trigger.h). A wait triggers when it ends
 * at least DURATION long, counted from the attach for a wait under way
 * then; one still open when a file closes triggers once
 * it has outlasted DURATION by hang_ns (a thread that hangs, not only one
 * that came back; a wait just past DURATION is written whole when it ends,
 * soon), if it began while recording (a kernel worker idle since boot is
 * not hung), and only once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "record/record.h"
#include "record/trigger.h"

#define HANGS 16 /* open waits that triggered, remembered */

struct triggers {
	uint64_t threshold;  /* --trigger wait>=DURATION, 0: none */
	uint64_t post, hang;
	unsigned max;        /* --max-dumps, 0: none */
	bool pending;
	uint64_t due;
	struct cap_trigger trig;
	char comm[16];
	unsigned dumps;      /* started */
	uint64_t ignored;
	struct { uint32_t tid; uint64_t start; } hangs[HANGS];
	unsigned next_hang;
};

int triggers__new(const struct record_opts *o, uint64_t hang_ns, struct triggers **out)
{
	struct triggers *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->threshold = o->trigger_wait_ns;
	t->post = o->post_ns;
	t->hang = hang_ns;
	t->max = o->max_dumps;
	*out = t;
	return 0;
}

void triggers__free(struct triggers *t)
{
	free(t);
}

bool triggers__exhausted(const struct triggers *t)
{
	return t->max && t->dumps >= t->max;
}

/* The first trigger starts a dump, due --post after it; the next ones
 * join it until it is taken. */
static void fire(struct triggers *t, const struct cap_trigger *trig, const char *comm,
		 uint64_t now)
{
	if (t->pending) {
		t->trig.triggers++;
		return;
	}
	if (triggers__exhausted(t)) {
		t->ignored++;
		return;
	}
	t->pending = true;
	t->trig = *trig;
	t->trig.triggers = 1;
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
	t->due = (trig->time > now ? trig->time : now) + t->post;
}

static bool hang_seen(const struct triggers *t, const struct cap_offcpu *o)
{
	unsigned i;

	for (i = 0; i < HANGS; i++)
		if (t->hangs[i].tid == o->tid && t->hangs[i].start == o->start)
			return true;
	return false;
}

void triggers__wait(struct triggers *t, const struct cap_offcpu *o, const char *comm,
		    uint64_t since, uint64_t now)
{
	uint64_t end = o->start + o->duration, from = o->start > since ? o->start : since;
	struct cap_trigger trig;

	/* the part seen while recording (a command held until the attach
	 * waited all along the programs' load: no trigger of its own) */
	if (!t->threshold || end < from + t->threshold || hang_seen(t, o))
		return;
	if (o->open & CAP_OFFCPU_OPEN_END) {
		if (o->start < since || o->duration < t->threshold + t->hang)
			return;
		t->hangs[t->next_hang].tid = o->tid;
		t->hangs[t->next_hang].start = o->start;
		t->next_hang = (t->next_hang + 1) % HANGS;
	}
	trig = (struct cap_trigger){
		.kind = CAP_TRIGGER_WAIT, .time = o->start + o->duration,
		.wait_start = o->start, .wait_duration = o->duration,
		.threshold = t->threshold, .tid = o->tid, .pid = o->pid,
		.ustack = o->ustack, .kstack = o->kstack,
	};
	fire(t, &trig, comm, now);
}

void triggers__signal(struct triggers *t, uint64_t now)
{
	struct cap_trigger trig = { .kind = CAP_TRIGGER_SIGNAL, .time = now };

	fire(t, &trig, NULL, now);
}

void triggers__end(struct triggers *t, uint64_t now)
{
	struct cap_trigger trig = { .kind = CAP_TRIGGER_END, .time = now };

	if (!t->threshold && !triggers__exhausted(t))
		fire(t, &trig, NULL, now);
}

bool triggers__pending(const struct triggers *t)
{
	return t->pending;
}

bool triggers__due(const struct triggers *t, uint64_t now)
{
	return t->pending && now >= t->due;
}

void triggers__take(struct triggers *t, struct cap_trigger *trig, char comm[16])
{
	*trig = t->trig;
	trig->dump = ++t->dumps;
	snprintf(comm, 16, "%s", t->comm);
	t->pending = false;
}

unsigned triggers__dumps(const struct triggers *t)
{
	return t->dumps;
}

uint64_t triggers__ignored(const struct triggers *t)
{
	return t->ignored;
}
