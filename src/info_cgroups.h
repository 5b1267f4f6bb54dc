/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `stkrec info`'s cgroup listing (src/cmd_info.c): each cgroup a capture
 * names (CGROUP, format 1.5) or its events carry, with its container and
 * its events per kind. Fed one record at a time as info reads the file.
 */
#ifndef STKREC_SRC_INFO_CGROUPS_H
#define STKREC_SRC_INFO_CGROUPS_H

#include <stdbool.h>
#include "format/capture.h"
#include "util/hashtab.h"

struct info_cgroups {
	struct hashtab t;  /* of struct info_cgroup (info_cgroups.c) */
	bool any;          /* a CGROUP record, or an event with a cgroup id */
};

void info_cgroups__init(struct info_cgroups *c);
void info_cgroups__free(struct info_cgroups *c);
/* Count rec (an event) or keep its definition (CGROUP). Out of memory,
 * a cgroup goes uncounted. */
void info_cgroups__add(struct info_cgroups *c, const struct cap_record *rec);
/* A "cgroup:" line per cgroup, nothing when the capture has none. */
void info_cgroups__print_text(const struct info_cgroups *c);
/* "\"cgroups\":[...]," (nothing when the capture has none). */
void info_cgroups__print_json(const struct info_cgroups *c);

#endif
