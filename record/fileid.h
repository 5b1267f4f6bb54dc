/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A mapped file as the recorder's per-file caches know it (build IDs in
 * procmaps.c, CFI rows in unwind.c): device, inode, size and mtime, so
 * that a library mapped by a thousand processes is read once, and a file
 * rewritten in place is another file. Keys for util/hashtab.h tables.
 */
#ifndef STKREC_RECORD_FILEID_H
#define STKREC_RECORD_FILEID_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include "util/hashtab.h"

struct file_id {
	uint64_t dev, ino, size, mtime_ns;
};

static inline void file_id__from_stat(struct file_id *id, const struct stat *st)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
		       (uint64_t)st->st_mtim.tv_nsec;
}

/* Files differ mostly in their inode, sometimes only in their mtime: each
 * field is mixed in, so all four reach the upper half the table uses. */
static inline uint64_t file_id__hash(const struct file_id *id)
{
	return hashtab__mix(id->dev ^ hashtab__mix(id->ino ^ hashtab__mix(id->size ^
			    hashtab__mix(id->mtime_ns))));
}

/* The equality of tables whose entries begin with their struct file_id. */
static inline bool file_id__eq(const void *ent, const void *key)
{
	return !memcmp(ent, key, sizeof(struct file_id));
}

#endif
