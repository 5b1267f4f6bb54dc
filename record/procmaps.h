/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Process memory maps and build IDs: what report needs to symbolize user
 * stacks offline. Executable file mappings are written as MAPPING records
 * (path interned as a STRING), each with the build ID read from the mapped
 * ELF's notes (via /proc/PID/map_files or /proc/PID/root for containers).
 */
#ifndef STKREC_RECORD_PROCMAPS_H
#define STKREC_RECORD_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include "format/capture.h"
#include "format/intern.h"

struct procmaps;

/*
 * Told of every executable file mapping procmaps writes (with the mapped
 * file open on fd for the call), of a process that exec'd or exited (its
 * mappings are gone) and of a new process (it has its parent's): what the
 * unwinder's tables follow; and of a process that exited (exit, after
 * gone): when the symbol pack reads its JIT map. Any member may be NULL.
 */
struct procmaps_sink {
	int (*map)(void *ctx, const struct cap_mapping *m, int fd, const char *path);
	void (*gone)(void *ctx, uint32_t pid);
	int (*fork)(void *ctx, uint32_t parent, uint32_t child);
	void (*exit)(void *ctx, uint32_t pid);
	void *ctx;
};

int procmaps__new(struct cap_writer *w, struct intern *in, struct procmaps **out);
void procmaps__free(struct procmaps *pm);

/* Scan every process in /proc at start: THREAD records for every thread
 * (comm, kernel-thread flag) and MAPPING records for every process. */
int procmaps__scan_all(struct procmaps *pm, uint64_t now);
/* First event from pid: if its maps are not yet written, read
 * /proc/PID/maps now (a no-op returning -ESRCH when the process is gone).
 * The MAPPINGs are stamped `now`, or the exec time procmaps__exec() was
 * given if that is later (the maps read are then the new image's): drain
 * the side band before the events to make the most of it. */
int procmaps__ensure(struct procmaps *pm, uint32_t pid, uint64_t now);
/* A mapping seen by the side band. Fills in the build ID from the file when
 * the kernel did not give one. path is NUL-terminated. */
int procmaps__add(struct procmaps *pm, const struct cap_mapping *m, const char *path);
/* The process exec'd at `now`: its old mappings are gone; its next event
 * reads the maps again. */
void procmaps__exec(struct procmaps *pm, uint32_t pid, uint64_t now);
bool procmaps__known(const struct procmaps *pm, uint32_t pid);
/* The process exited (side band EXIT of its leader): drop its state. */
void procmaps__forget(struct procmaps *pm, uint32_t pid);
/* A new process (side band FORK of a leader): tells the sink. */
int procmaps__fork(struct procmaps *pm, uint32_t parent, uint32_t child);
void procmaps__set_sink(struct procmaps *pm, const struct procmaps_sink *sink);
/* Processes with state kept, and build IDs read from files (cache misses):
 * statistics, and what tests check to see memory stays bounded. */
size_t procmaps__nr_known(const struct procmaps *pm);
uint64_t procmaps__buildid_reads(const struct procmaps *pm);

#endif
