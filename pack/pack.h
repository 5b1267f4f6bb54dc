/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The symbol pack (FORMAT.md §4.18-4.22): what a report needs to name a
 * capture's user frames on a host without its binaries. The packer takes a
 * capture's records (the recorder's as it writes its file, or those of a
 * file given to `stkrec pack`, read back), works out which (binary,
 * offset) and which JIT addresses its user stacks hit, names each with
 * sym/ -- the code `report` names frames with, so that the names are the
 * same -- and writes the PACK records.
 *
 * Memory grows with the capture's definitions (mappings, user stacks, the
 * distinct (process, stack) pairs of its events), not with its events;
 * an event costs a lookup of its pair.
 * Never prints; returns 0 or -errno / CAP_ERR_*.
 */
#ifndef STKREC_PACK_PACK_H
#define STKREC_PACK_PACK_H

#include <stdbool.h>
#include <stdint.h>
#include "format/capture.h"
#include "format/intern.h"
#include "pack/jitmap.h"
#include "sym/sym.h"

struct pack_opts {
	const char *symfs;     /* binaries, debug files and tmp/perf-PID.map
				* under this root; NULL: the host's own */
	const char *debug_dir; /* NULL: /usr/lib/debug (under symfs if set) */
	struct jitmaps *jit;   /* JIT maps kept while recording, or NULL */
	uint64_t now;          /* time of the JIT maps read now; 0 unknown */
	/* For a capture that has a pack already: called once, with the
	 * packer's symbolizer and JIT maps, to load the old pack; it then
	 * names what the files found now cannot. NULL: none. */
	int (*old_pack)(void *ctx, struct symbolizer *s, struct jitmaps *jm);
	void *old_pack_ctx;
};

struct packer;

int pack__new(const struct pack_opts *o, struct packer **out);
void pack__free(struct packer *p);
/* Read the capture at path (a file without trailer reads up to its last
 * complete block): every record, as pack__feed() takes them. */
int pack__scan(struct packer *p, const char *path);
/*
 * One record of the capture as its writer takes it, in the file's order:
 * cap_writer__append()'s arguments, as a tap (cap_writer__set_tap())
 * gets them. A packer fed every record of a file knows what pack__scan()
 * of it would, without reading it back, and writes the same pack. A
 * failure (-ENOMEM) is kept: later records are ignored and pack__write()
 * returns it.
 */
int pack__feed(struct packer *p, uint16_t type, const void *fixed, size_t fixed_len,
	       const void *tail, size_t tail_len);
/* pack_opts' jit and now, for a packer made before they were known (the
 * recorder's, fed from its file's start); jm NULL keeps the packer's own. */
void pack__set_jit(struct packer *p, struct jitmaps *jm, uint64_t now);
/* What the scanned or fed capture's stacks hit, named and written through
 * w, new strings through in, then PACK_INFO; *info gets what it holds. The
 * size limit (CAP_ERR_FULL) ends the pack early, counted: not an error. */
int pack__write(struct packer *p, struct cap_writer *w, struct intern *in,
		struct cap_pack_info *info);

/* What the packer holds of the capture so far: its definitions' entries
 * (strings, user stacks, mappings, processes, (process, stack) pairs,
 * STRING ids referred to) and the bytes their tables and arenas take. */
struct pack_usage {
	uint64_t entries;
	uint64_t bytes;
};
void pack__usage(const struct packer *p, struct pack_usage *u);

/* What pack__rewrite() did. */
struct pack_rewrite {
	struct cap_pack_info info;
	bool recovered;        /* in was damaged or cut: what it held is copied */
	char loss[512];        /* then, what was lost (the reader's words) */
	bool had_pack;         /* in had a pack, replaced */
	uint64_t records;      /* records copied */
	uint64_t pack_ns;      /* time spent on the pack itself */
};

/*
 * `stkrec pack`: in rewritten to out with a new pack: every record copied
 * as it is but the old pack and the STRINGs only it used; the pack goes
 * before END. Written to a temporary file in out's directory, renamed over
 * out once complete (out may be in). Refuses (CAP_ERR_VERSION) a capture
 * of a newer minor version or with records this version does not know.
 */
int pack__rewrite(const char *in, const char *out, const struct pack_opts *o,
		  struct pack_rewrite *res);

/*
 * `stkrec scrub`: in rewritten to out as pack__rewrite() does, its pack
 * kept, without what a capture attached to a bug report should not hold
 * (FORMAT.md §3.1 SCRUBBED): what is CAP_FEAT_SCRUBBED, and with
 * CAP_FEAT_SCRUBBED_PATHS in what, home directories. A scrubbed capture
 * scrubbed again is unchanged.
 */
int pack__scrub(const char *in, const char *out, uint32_t what, struct pack_rewrite *res);

#endif
