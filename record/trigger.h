/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What asks a flight recorder for a dump (trigger.c): SIGUSR2, a wait of at
 * least --trigger's DURATION, the end without --trigger; and when the dump
 * is due (--post after the first trigger). Throttling lives here too:
 * triggers that come while a dump is pending join it, and past
 * --max-dumps they are counted and ignored. A leaf: events.c reports each
 * wait, flight.c takes the dumps. Private to record/.
 */
#ifndef STKREC_RECORD_TRIGGER_H
#define STKREC_RECORD_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>
#include "format/capture.h"

struct triggers;
struct record_opts;

/* hang_ns: how long past DURATION a wait still open is a hang. */
int triggers__new(const struct record_opts *o, uint64_t hang_ns, struct triggers **out);
void triggers__free(struct triggers *t);
/* An OFFCPU just written (whole, or open at a file's end) by a thread
 * named comm; waits begun before since (the attach) are no hang. */
void triggers__wait(struct triggers *t, const struct cap_offcpu *o, const char *comm,
		    uint64_t since, uint64_t now);
void triggers__signal(struct triggers *t, uint64_t now);
/* The recording's end: a trigger when no --trigger was given. */
void triggers__end(struct triggers *t, uint64_t now);
bool triggers__pending(const struct triggers *t);
/* Is the pending dump due at now (its --post over)? */
bool triggers__due(const struct triggers *t, uint64_t now);
/* The pending dump's trigger and the thread's name; it is started. */
void triggers__take(struct triggers *t, struct cap_trigger *trig, char comm[16]);
/* Dumps started so far; triggers ignored past --max-dumps. */
unsigned triggers__dumps(const struct triggers *t);
uint64_t triggers__ignored(const struct triggers *t);
bool triggers__exhausted(const struct triggers *t); /* --max-dumps started */

#endif
