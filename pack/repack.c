// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec pack's rewrite: a capture copied record by record into a new
 * file with a new symbol pack. Events and definitions are appended as the
 * reader decoded them, which reproduces them exactly (a compact OFFCPU is
 * written compact again, blocks are cut anew); the old pack and the
 * STRINGs only it used are left behind; the new pack goes before END. The
 * new file is a temporary one beside the output, renamed over it once
 * finished, so the output is whole or untouched, and the input may be the
 * output.
 * `stkrec scrub` is the same rewrite with scrub.c's changes to each record
 * and the old pack kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pack/pack_int.h"

struct repack {
	struct packer *p;     /* NULL: scrub, the old pack kept */
	struct scrub *scrub;  /* or NULL */
	struct cap_writer *w;
	struct pack_rewrite *res;
	struct cap_end end;
	bool has_end;
	bool in_pack;         /* the old pack's first record was met */
};

/* The record as the file had it (scrubbed: its addresses or paths changed,
 * its fixed part as long). */
static int copy_record(struct repack *rp, const struct cap_record *rec)
{
	size_t fixed = cap_record_fixed_len(rec);
	struct cap_record tmp;
	int err;

	rp->res->records++;
	if (!rp->scrub)
		return cap_writer__append_record(rp->w, rec, fixed);
	tmp = *rec;
	err = scrub__record(rp->scrub, &tmp);
	return err ?: cap_writer__append_record(rp->w, &tmp, fixed);
}

static int on_record(struct repack *rp, const struct cap_record *r)
{
	switch (r->type) {
	case CAP_REC_BLOCK:
		return 0; /* the writer cuts blocks anew */
	case CAP_REC_PACK_OBJECT:
	case CAP_REC_PACK_SYMBOL:
	case CAP_REC_PACK_ADDR:
	case CAP_REC_PACK_JIT:
	case CAP_REC_PACK_INFO:
		rp->in_pack = rp->res->had_pack = true;
		return rp->p ? 0 : copy_record(rp, r);
	case CAP_REC_STRING:
		/* §4.18: the STRINGs after a pack's first record are its own,
		 * unless another record refers to them */
		if (rp->p && rp->in_pack && !pack_scan__referenced(rp->p, r->string.id))
			return 0;
		break;
	case CAP_REC_END:
		if (!rp->has_end)
			rp->end = r->end;
		rp->has_end = true;
		return 0;
	}
	return copy_record(rp, r);
}

/* Every record but the old pack and END, through rp->w. */
static int copy_all(struct repack *rp, struct cap_reader *r)
{
	const struct cap_read_stats *st;
	struct cap_record rec;
	int ret, err = 0;

	while (!err && (ret = cap_reader__next(r, &rec)) > 0)
		err = on_record(rp, &rec);
	if (err || ret < 0)
		return err ? err : ret;
	st = cap_reader__stats(r);
	if (st->unknown_records)
		return CAP_ERR_VERSION; /* a newer writer's: not ours to copy */
	rp->res->recovered = st->recovered;
	if (st->recovered)
		cap_reader__describe_loss(r, rp->res->loss, sizeof(rp->res->loss));
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The new pack through a fresh interner whose ids follow the capture's. */
static int write_pack(struct repack *rp)
{
	struct intern *in;
	int err;

	if (!rp->p) /* scrub: the old pack was copied */
		return rp->has_end ? cap_writer__append(rp->w, CAP_REC_END, &rp->end,
							 sizeof(rp->end), NULL, 0) : 0;
	err = intern__new(rp->w, &in);
	if (err)
		return err;
	err = intern__set_bases(in, &(struct intern_ids){ .string = rp->p->max_string });
	if (!err)
		err = pack__write(rp->p, rp->w, in, &rp->res->info);
	intern__free(in);
	if (!err && rp->has_end)
		err = cap_writer__append(rp->w, CAP_REC_END, &rp->end, sizeof(rp->end), NULL, 0);
	return err;
}

/* A temporary file in out's directory: private like every capture, the
 * input's mode notwithstanding. */
static int open_tmp(const char *out, char *tmp, size_t len)
{
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s", out) >= (int)sizeof(dir) ||
	    snprintf(tmp, len, "%s/.stkrec-pack-XXXXXX", dirname(dir)) >= (int)len)
		return -ENAMETOOLONG;
	return cap_file__create_tmp(tmp, 0);
}

static int rewrite(struct repack *rp, struct cap_reader *r, const char *out)
{
	struct cap_header h = *cap_reader__header(r);
	char tmp[PATH_MAX];
	uint64_t t0;
	int fd, err;

	fd = open_tmp(out, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	if (rp->scrub)
		scrub__header(rp->scrub->what, &h);
	err = cap_writer__fdopen(fd, &h, NULL, &rp->w);
	if (!err)
		err = copy_all(rp, r);
	t0 = mono_ns();
	if (!err)
		err = write_pack(rp);
	rp->res->pack_ns += mono_ns() - t0;
	if (!err)
		err = cap_writer__finish(rp->w);
	else
		cap_writer__free(rp->w);
	if (!err && rename(tmp, out))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* The capture at in, for a rewrite: one this version reads whole. */
static int open_in(const char *in, struct cap_reader **r)
{
	int err = cap_reader__open(in, r);

	if (err)
		return err;
	if (cap_reader__header(*r)->minor > CAP_VERSION_MINOR) {
		cap_reader__close(*r);
		return CAP_ERR_VERSION;
	}
	return 0;
}

int pack__rewrite(const char *in, const char *out, const struct pack_opts *o,
		  struct pack_rewrite *res)
{
	struct repack rp = { .res = res };
	struct cap_reader *r;
	uint32_t scrubbed;
	uint64_t t0;
	int err;

	memset(res, 0, sizeof(*res));
	err = open_in(in, &r);
	if (err)
		return err;
	scrubbed = cap_reader__header(r)->features & (CAP_FEAT_SCRUBBED | CAP_FEAT_SCRUBBED_PATHS);
	t0 = mono_ns();
	err = pack__new(o, &rp.p);
	if (!err)
		err = pack__scan(rp.p, in);
	res->pack_ns = mono_ns() - t0;
	if (!err)
		err = rewrite(&rp, r, out);
	pack__free(rp.p);
	cap_reader__close(r);
	/* a scrubbed capture stays so: the new pack may name what was
	 * scrubbed (a home directory in a source path) */
	if (!err && scrubbed) {
		struct pack_rewrite again;

		err = pack__scrub(out, out, scrubbed, &again);
	}
	return err;
}

int pack__scrub(const char *in, const char *out, uint32_t what, struct pack_rewrite *res)
{
	struct scrub *s = calloc(1, sizeof(*s));
	struct repack rp = { .res = res, .scrub = s };
	struct cap_reader *r;
	int err;

	memset(res, 0, sizeof(*res));
	if (!s)
		return -ENOMEM;
	s->what = what;
	err = open_in(in, &r);
	if (!err) {
		err = rewrite(&rp, r, out);
		cap_reader__close(r);
	}
	free(s);
	return err;
}
