// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A flight recorder's dump for `stkrec info` (info_trigger.h): its TRIGGER
 * record as it was read (the reader refused one of an unknown kind or a
 * window that ends before it starts), in words. Times are seconds from
 * the capture's start, the window's start, and the window in wall clock as
 * info prints every time.
 */
#include <inttypes.h>
#include <stdio.h>
#include "report/views.h"
#include "src/info_trigger.h"
#include "src/util.h"
#include "util/escape.h"

void info_trigger__add(struct info_trigger *it, const struct cap_record *rec)
{
	if (rec->type != CAP_REC_TRIGGER || it->has)
		return; /* FORMAT.md §4.26: the first stands */
	it->t = rec->trigger;
	it->has = true;
}

/* a - b in seconds, negative when a is earlier */
static double secs(uint64_t a, uint64_t b)
{
	return (double)(int64_t)(a - b) / 1e9;
}

/* What made the recorder write the file. */
static void print_cause(const struct cap_trigger *t, const struct cap_header *h,
			const char *comm)
{
	switch (t->kind) {
	case CAP_TRIGGER_SIGNAL:
		printf("SIGUSR2 at %+.3f s\n", secs(t->time, h->start_time));
		return;
	case CAP_TRIGGER_END:
		printf("the recording's end (no --trigger)\n");
		return;
	}
	printf("wait >= %g ms: pid %" PRIu32 " tid %" PRIu32 " (", t->threshold / 1e6, t->pid,
	       t->tid);
	esc__fputs(comm ? comm : "?", stdout);
	printf(") off CPU %.1f ms from %+.3f s\n", t->wait_duration / 1e6,
	       secs(t->wait_start, h->start_time));
}

void info_trigger__print_text(const struct info_trigger *it, const struct cap_header *h,
			      const char *comm)
{
	const struct cap_trigger *t = &it->t;
	char from[48], to[48];

	if (!it->has)
		return;
	printf("flight recorder: dump %" PRIu32 " of the recording, ", t->dump);
	if (t->kind == CAP_TRIGGER_END)
		printf("written when it ended\n");
	else
		printf("written %.2f s after a trigger\n", secs(t->window_end, t->time));
	printf("  trigger:  ");
	print_cause(t, h, comm);
	fmt_walltime(h, t->window_start, from, sizeof(from));
	fmt_walltime(h, t->window_end, to, sizeof(to));
	printf("  window:   %.3f s, from %s to %s\n", secs(t->window_end, t->window_start), from,
	       to);
	if (t->triggers > 1)
		printf("  triggers covered: %" PRIu32 "\n", t->triggers);
}

void info_trigger__print_json(const struct info_trigger *it, const char *comm)
{
	const struct cap_trigger *t = &it->t;

	if (!it->has)
		return;
	printf("\"trigger\":{\"kind\":\"%s\",\"dump\":%" PRIu32 ",\"triggers\":%" PRIu32
	       ",\"time_ns\":%" PRIu64 ",\"window_start_ns\":%" PRIu64 ",\"window_end_ns\":%"
	       PRIu64 ",\"post_ns\":%" PRIu64, cap_trigger_kind_name(t->kind), t->dump,
	       t->triggers, t->time, t->window_start, t->window_end, t->post);
	if (t->kind == CAP_TRIGGER_WAIT) {
		printf(",\"threshold_ns\":%" PRIu64 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		       ",\"comm\":", t->threshold, t->pid, t->tid);
		if (comm) {
			putchar('"');
			view_json_chars(stdout, comm);
			putchar('"');
		} else {
			printf("null");
		}
		printf(",\"wait_start_ns\":%" PRIu64 ",\"wait_duration_ns\":%" PRIu64
		       ",\"ustack\":%" PRIu32 ",\"kstack\":%" PRIu32, t->wait_start,
		       t->wait_duration, t->ustack, t->kstack);
	}
	printf("},");
}
