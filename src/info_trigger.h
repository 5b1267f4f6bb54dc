/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `stkrec info`'s lines of a flight recorder's dump (src/cmd_info.c): the
 * file's TRIGGER (FORMAT.md §4.26, format 1.6): which dump of its recording
 * it is, what made the recorder write it, and the window it holds. Fed one
 * record at a time as info reads the file.
 */
#ifndef STKREC_SRC_INFO_TRIGGER_H
#define STKREC_SRC_INFO_TRIGGER_H

#include <stdbool.h>
#include "format/capture.h"

struct info_trigger {
	struct cap_trigger t; /* the file's first TRIGGER */
	bool has;             /* the file is a dump */
};

/* Keep rec when it is the file's first TRIGGER. */
void info_trigger__add(struct info_trigger *it, const struct cap_record *rec);
/* "flight recorder: ..." and its indented lines; nothing for a file that
 * is not a dump. comm: the name of the trigger's thread (a wait's), or
 * NULL. */
void info_trigger__print_text(const struct info_trigger *it, const struct cap_header *h,
			      const char *comm);
/* "\"trigger\":{...}," (nothing for a file that is not a dump). */
void info_trigger__print_json(const struct info_trigger *it, const char *comm);

#endif
