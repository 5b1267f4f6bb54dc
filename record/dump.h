/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A flight recorder's dump (flight.c decides when): the segments that
 * cover a window merged into one capture file, on a thread of its own.
 * Private to record/.
 */
#ifndef STKREC_RECORD_DUMP_H
#define STKREC_RECORD_DUMP_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "format/capture.h"
#include "format/intern.h"
#include "pack/jitmap.h"

/* A segment: a complete capture in a memfd, its ids continuing the last's. */
struct dump_seg {
	int fd;
	uint64_t size;
};

struct dump_job {
	/* in: owned by the job from dump__start() on */
	char path[PATH_MAX + 32];
	struct cap_header hdr;    /* start_time: the window's start */
	struct dump_seg *segs;    /* oldest first; the last ends at the dump */
	int nsegs;
	struct cap_trigger trig;
	struct intern_ids ids;    /* every id the segments use is at most these */
	bool pack;                /* end with a symbol pack */
	struct jitmaps *jm;       /* JIT maps for it, or NULL */
	struct cap_end end;
	/* out, once dump__done() */
	uint64_t events;          /* in the window */
	uint64_t bytes;           /* the file's */
	uint64_t done_ns;         /* monotonic: the file complete */
	struct cap_pack_info pack_info;
	int pack_err;
	int err;
	/* private */
	atomic_bool done;
	pthread_t thread;
	bool threaded;
};

/* Write the file (on a thread when one starts, else here). */
void dump__start(struct dump_job *j);
bool dump__done(struct dump_job *j);
/* Wait for the file; the job's err. */
int dump__join(struct dump_job *j);
/* Closes the segments' fds, frees the job (joined or never started). */
void dump__free(struct dump_job *j);

#endif
