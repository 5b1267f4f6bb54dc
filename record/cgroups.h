/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cgroup v2 ids and their paths (FORMAT.md §4.25): the hierarchy walked at
 * the start, the directories the kernel says were made or removed since
 * (bpf/cgroup.bpf.h), a walk again for an id still unknown; a CGROUP
 * record the first time an id shows up in each file.
 */
#ifndef STKREC_RECORD_CGROUPS_H
#define STKREC_RECORD_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/capture.h"

struct cgroups;

/* Where cgroup2 is mounted (/sys/fs/cgroup, /sys/fs/cgroup/unified on a
 * hybrid host), from /proc/self/mountinfo: 0, or -ENOENT when none is. */
int cgroups__find_mount(char *buf, size_t len);
/* PATH below the mount ("/system.slice") or in full
 * ("/sys/fs/cgroup/system.slice") to the cgroup's depth (the root 0) and
 * id: 0, -ENOENT, -ENOTDIR (not a cgroup directory). */
int cgroups__resolve(const char *mount, const char *path, uint32_t *level, uint64_t *id);

/* The hierarchy below mount, walked now. */
int cgroups__new(const char *mount, struct cgroups **out);
void cgroups__free(struct cgroups *c);
/* The kernel made (or removed) the directory id at path. */
int cgroups__note(struct cgroups *c, uint64_t id, const char *path, size_t len,
		  bool removed, uint64_t time);
/* A CGROUP record for id unless file already has one (files count from
 * 1); id 0 (none recorded) never. 0 or the writer's error. */
int cgroups__ensure(struct cgroups *c, struct cap_writer *w, unsigned file, uint64_t id,
		    uint64_t now);
/* Ids nobody could name (written with an empty path). */
uint64_t cgroups__unnamed(const struct cgroups *c);

#endif
