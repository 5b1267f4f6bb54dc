/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * JIT maps: the /tmp/perf-PID.map files that Node (--perf-basic-prof),
 * Java agents, Python 3.12 (-X perf), LuaJIT and .NET write, one line per
 * piece of generated code: "START SIZE NAME" (hexadecimal). The recorder
 * reads a process's map when it exits and, for those still running, when a
 * file closes, and keeps the entries in memory until the file's symbol pack
 * takes those that cover addresses hit (FORMAT.md §4.21): a map deleted
 * by its process or cleaned from /tmp later is not lost.
 *
 * Memory stays bounded: past JITMAPS_MAX_BYTES of entries kept, the maps
 * of further processes are not kept, and counted.
 */
#ifndef STKREC_PACK_JITMAP_H
#define STKREC_PACK_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/capture.h"

#define JITMAPS_MAX_BYTES (64u << 20)

struct jitmaps;

/* One entry: [start, start + size) named name (name_len bytes, no NUL). */
struct jit_entry {
	uint64_t start;
	uint64_t size;
	const char *name;
	uint32_t name_len;
};

int jitmaps__new(struct jitmaps **out);
void jitmaps__free(struct jitmaps *jm);
/* Forget every map (a new capture file starts). */
void jitmaps__clear(struct jitmaps *jm);

/* A map not trusted (FORMAT.md §4.15). */
struct jit_refused {
	uint32_t pid;
	enum cap_jit_refusal why;
};

/*
 * Read pid's map at `time`: ROOT/tmp/perf-PID.map, or with root NULL the
 * live process's, trusted as perf trusts it: a regular file (not through a
 * symlink), owned by the process's user or root, read in the process's
 * own /tmp (/proc/PID/root/tmp/perf-NSPID.map) when it runs in another
 * mount namespace. Returns 1 when kept, 0 when there is none, -EPERM when
 * refused (kept in the refused list), -E2BIG past the memory bound (not
 * kept, counted), or another -errno. Lines that are not "START SIZE NAME"
 * (hex) or whose name is longer than 4096 bytes are skipped.
 */
int jitmaps__read(struct jitmaps *jm, const char *root, uint32_t pid, uint64_t time);
/* Parse a map from memory (what jitmaps__read() does with the file). */
int jitmaps__parse(struct jitmaps *jm, uint32_t pid, uint64_t time, const char *buf,
		   size_t len);
/* Keep one entry of pid's map read at `time` (a pack being rewritten
 * carries its entries over); entries of one map are added in its order. */
int jitmaps__add(struct jitmaps *jm, uint32_t pid, uint64_t time, const struct jit_entry *e);

/* Whether pid has a map kept. */
bool jitmaps__has(const struct jitmaps *jm, uint32_t pid);
/*
 * For each map of pid that has an entry containing addr, its entry written
 * last (the code the runtime placed there last): fn(ctx, map time, entry
 * index, entry) with an index unique among all maps. Returns the number of
 * calls, or fn's first negative return.
 */
int jitmaps__lookup(struct jitmaps *jm, uint32_t pid, uint64_t addr,
		    int (*fn)(void *ctx, uint64_t time, size_t idx, const struct jit_entry *e),
		    void *ctx);

/* The maps refused since the last jitmaps__clear_refused(), one per pid
 * (jitmaps__clear() keeps them: they are written with the file's STATs). */
size_t jitmaps__nr_refused(const struct jitmaps *jm);
const struct jit_refused *jitmaps__refused(const struct jitmaps *jm, size_t i);
void jitmaps__clear_refused(struct jitmaps *jm);

/*
 * Roots of live processes in other mount namespaces (a container's), so
 * that the map of one gone before jitmaps__read() ran is still read where
 * it wrote it. Kept apart from struct jitmaps, which each capture file
 * has its own of: a process outlives files.
 */
#define JITROOTS_MAX 256 /* roots held open at once: one fd each */
struct jitroots;
int jitroots__new(struct jitroots **out);
void jitroots__free(struct jitroots *jr);
/* pid is new: hold its root if it runs in another mount namespace. 1 held,
 * 0 not (ours, known already, or JITROOTS_MAX held), -errno (gone). */
int jitroots__watch(struct jitroots *jr, uint32_t pid);
/* pid exited: its map into jm as jitmaps__read() would have read it alive,
 * and its root let go. -ENOENT when its root was not held. */
int jitroots__read(struct jitroots *jr, struct jitmaps *jm, uint32_t pid, uint64_t time);

/* Maps not kept because of the memory bound; lines skipped. */
uint64_t jitmaps__dropped(const struct jitmaps *jm);
uint64_t jitmaps__bad_lines(const struct jitmaps *jm);

#endif
