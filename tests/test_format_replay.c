// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Replays the fuzz corpus, every saved fuzz regression and a set of named
 * seed captures through the reader ($STKREC_SRCDIR, default ".").
 *
 * `make fuzz` minimization renames corpus files to their hash and drops
 * those that add no coverage, so nothing here keys on a corpus file's name:
 * each input is classified by its content, from FORMAT.md alone (not by
 * the reader under test), and the reader must agree with the class. The
 * named seeds (valid, cut, damaged, refused) are generated here, each with
 * its exact expected outcome, where no minimization can rename or drop them.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

#define MAX_INDEX 64

/* What FORMAT.md says of an input, before any reader sees it. */
enum input_class {
	IN_EMPTY,       /* §3.3 step 1: CAP_ERR_EMPTY */
	IN_NOT_CAPTURE, /* §3.3 step 1: the magics differ: CAP_ERR_BAD_MAGIC */
	IN_SHORT,       /* §3.3 step 1: a beginning of the magics: CAP_ERR_TRUNCATED */
	IN_INTACT,      /* valid header and trailer, blocks tiling the space between */
	IN_OTHER,       /* the magics, then anything */
};

/* Where an intact capture's frames are. */
struct layout {
	size_t hdr_end, trailer;
	uint32_t nr;
	uint64_t off[MAX_INDEX], csize[MAX_INDEX];
};

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t crc(const uint8_t *p, size_t len)
{
	return crc32(0, p, len);	/* zlib's, not format/'s: §1 names it */
}

/* §5.1: a checksummed frame of the declared size, starting with BLOCK seq.
 * Byte 4 of a zstd frame (RFC 8878 §3.1.1.1.1): bit 2 the checksum flag,
 * bits 0-1 the dictionary ID size. */
static bool block_intact(const uint8_t *p, size_t csize, uint32_t usize, uint64_t seq)
{
	uint8_t *out;
	uint64_t got;
	bool ok;

	if (usize > CAP_MAX_BLOCK_SIZE || usize < 20 || csize < 6 ||
	    le32(p) != CAP_ZSTD_MAGIC || !(p[4] & 4) || (p[4] & 3) ||
	    ZSTD_getFrameContentSize(p, csize) != usize ||
	    ZSTD_findFrameCompressedSize(p, csize) != csize)
		return false;
	out = malloc(usize);
	cr_assert_not_null(out);
	ok = ZSTD_decompress(out, usize, p, csize) == usize &&
	     (out[0] | out[1] << 8) == CAP_REC_BLOCK && (out[2] | out[3] << 8) >= 20;
	memcpy(&got, out + 4, sizeof(got));
	free(out);
	return ok && got == seq;
}

/* §3.3 steps 2-6 and §6.4, then §6.2's index against the frames. */
static bool intact(const uint8_t *b, size_t len, struct layout *l)
{
	uint32_t n = le32(b + 4), fs, fixed, esize, i;
	const uint8_t *t, *e;

	if (n < 28 || n > CAP_MAX_HEADER_SIZE || len < 8 + (size_t)n ||
	    crc(b + 8, n - 4) != le32(b + 8 + n - 4) ||
	    b[16] != 1 || b[17] || (le32(b + 20) >> 16) || le32(b + 24) < 24 ||
	    (uint64_t)le32(b + 24) + le32(b + 28) > n - 4)
		return false;
	l->hdr_end = 8 + n;
	if (len < l->hdr_end + 152 || memcmp(b + len - 8, CAP_FOOTER_MAGIC, 8))
		return false;
	fs = le32(b + len - 16);
	if (fs < 152 || fs > len - l->hdr_end)
		return false;
	l->trailer = len - fs;
	t = b + l->trailer;
	fixed = le32(t + 16);
	esize = le32(t + 24);
	l->nr = le32(t + 20);
	if (le32(t) != CAP_SKIP_MAGIC_TRAILER || le32(t + 4) != fs - 8 ||
	    crc(t + 8, fs - 24) != le32(b + len - 12) || memcmp(t + 8, CAP_TRAILER_MAGIC, 8) ||
	    fixed < 128 || esize < 32 || l->nr > MAX_INDEX ||
	    (uint64_t)fixed + (uint64_t)l->nr * esize + 16 > fs - 8)
		return false;
	for (i = 0; i < l->nr; i++) {
		e = t + 8 + fixed + (size_t)i * esize;
		l->off[i] = i ? l->off[i - 1] + l->csize[i - 1] : l->hdr_end;
		l->csize[i] = le32(e + 8);
		if (le32(e) != l->off[i] || le32(e + 4) || l->csize[i] > l->trailer - l->off[i] ||
		    !block_intact(b + l->off[i], l->csize[i], le32(e + 12), i))
			return false;
	}
	return (l->nr ? l->off[l->nr - 1] + l->csize[l->nr - 1] : l->hdr_end) == l->trailer;
}

static enum input_class classify(const uint8_t *b, size_t len, struct layout *l)
{
	static const uint8_t magic[16] = { 0x53, 0x2a, 0x4d, 0x18, 0, 0, 0, 0,
					   'S', 'T', 'K', 'R', 'C', 'A', 'P', 0 };
	size_t i;

	if (!len)
		return IN_EMPTY;
	for (i = 0; i < len && i < sizeof(magic); i++) {
		if ((i < 4 || i >= 8) && b[i] != magic[i])
			return IN_NOT_CAPTURE;	/* bytes 4-7: the frame size */
	}
	if (len < sizeof(magic))
		return IN_SHORT;
	return intact(b, len, l) ? IN_INTACT : IN_OTHER;
}

/* What reading an input gave. */
struct outcome {
	int err;
	uint64_t records;	/* BLOCK records included */
	struct cap_read_stats st;
};

static void read_all(const uint8_t *buf, size_t len, const char *name, struct outcome *o)
{
	struct cap_record rec;
	struct cap_reader *r;
	char msg[512];
	int ret;

	memset(o, 0, sizeof(*o));
	o->err = cap_reader__open_mem(buf, len, &r);
	if (o->err)
		return;
	while ((ret = cap_reader__next(r, &rec)) == 1) {
		o->records++;
		if (rec.type == CAP_REC_STACK)
			cr_assert_leq(rec.stack.nr, CAP_MAX_STACK_DEPTH, "%s", name);
		if (rec.tail)
			cr_assert_eq(rec.tail[rec.tail_len], 0, "%s", name);
	}
	cr_assert_eq(ret, 0, "%s: %s", name, cap_strerror(ret));
	cap_reader__describe_loss(r, msg, sizeof(msg));
	cr_assert_lt(strlen(msg), sizeof(msg) - 1, "%s", name);
	o->st = *cap_reader__stats(r);
	cr_assert_leq(o->st.bytes_skipped, len, "%s", name);
	cap_reader__close(r);
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n ? n : 1);    /* exact size: ASan builds catch overreads */
	cr_assert_eq(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

/* Read one file and check the reader agrees with its class; the class. */
static enum input_class replay_one(const char *path, const char *name, struct outcome *o)
{
	struct layout l;
	size_t len;
	uint8_t *buf = load(path, &len);
	enum input_class c = classify(buf, len, &l);

	read_all(buf, len, name, o);
	switch (c) {
	case IN_EMPTY:
		cr_assert_eq(o->err, CAP_ERR_EMPTY, "%s: %s", name, cap_strerror(o->err));
		break;
	case IN_NOT_CAPTURE:
		cr_assert_eq(o->err, CAP_ERR_BAD_MAGIC, "%s: %s", name, cap_strerror(o->err));
		break;
	case IN_SHORT:
		cr_assert_eq(o->err, CAP_ERR_TRUNCATED, "%s: %s", name, cap_strerror(o->err));
		break;
	case IN_INTACT:
		/* every block read, nothing skipped, the trailer found */
		cr_assert_eq(o->err, 0, "%s: %s", name, cap_strerror(o->err));
		cr_assert(o->st.has_trailer, "%s", name);
		cr_assert_eq(o->st.blocks, l.nr, "%s", name);
		cr_assert_eq(o->st.bad_blocks, 0, "%s", name);
		cr_assert_eq(o->st.bytes_skipped, 0, "%s", name);
		cr_assert_eq(o->st.truncated_at, 0, "%s", name);
		/* so it reads cleanly unless a record inside is bad (§5.4) */
		cr_assert_eq(o->st.recovered, o->st.bad_records ||
			     memcmp(&o->st.counted, &o->st.trailer, sizeof(o->st.trailer)),
			     "%s", name);
		break;
	case IN_OTHER:
		/* the magics are right: a capture, whatever its state */
		cr_assert(o->err != CAP_ERR_BAD_MAGIC && o->err != CAP_ERR_EMPTY,
			  "%s: %s", name, cap_strerror(o->err));
		break;
	}
	free(buf);
	return c;
}

/* Files in dir, listed apart from the replay (dot files excepted). */
static size_t count_files(const char *dir)
{
	char pat[600];
	glob_t g;
	size_t n;

	snprintf(pat, sizeof(pat), "%s/*", dir);
	if (glob(pat, 0, NULL, &g))
		return 0;
	n = g.gl_pathc;
	globfree(&g);
	return n;
}

/* Replay every file of dir; per class counts in by_class. Returns files. */
static size_t replay_dir(const char *dir, size_t by_class[IN_OTHER + 1])
{
	char path[1024];
	struct outcome o;
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	cr_assert_not_null(d, "%s missing (STKREC_SRCDIR?)", dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		by_class[replay_one(path, de->d_name, &o)]++;
		n++;
	}
	closedir(d);
	return n;
}

static void src_path(char *buf, size_t len, const char *sub)
{
	const char *src = getenv("STKREC_SRCDIR") ? getenv("STKREC_SRCDIR") : ".";

	snprintf(buf, len, "%s/%s", src, sub);
}

/* Replay every file of a directory of the checkout; it must hold some. */
static void replay_all(const char *sub, size_t *c)
{
	size_t n, listed;
	char dir[512];

	src_path(dir, sizeof(dir), sub);
	listed = count_files(dir);
	n = replay_dir(dir, c);
	cr_assert_gt(listed, 0, "%s: no inputs (STKREC_SRCDIR?)", dir);
	cr_assert_eq(n, listed, "replayed %zu of the %zu files in %s", n, listed, dir);
}

Test(format_replay, fuzz_corpus)
{
	size_t c[IN_OTHER + 1] = { 0 };

	replay_all("tests/fuzz/corpus/fuzz_reader", c);
	cr_log_info("inputs: %zu empty, %zu not a capture, %zu short, %zu intact, %zu other",
		    c[IN_EMPTY], c[IN_NOT_CAPTURE], c[IN_SHORT], c[IN_INTACT], c[IN_OTHER]);
}

Test(format_replay, fuzz_regressions)
{
	size_t c[IN_OTHER + 1] = { 0 };

	replay_all("tests/fuzz/regressions", c);
}

/* ---- named seeds ---------------------------------------------------------- */

/* A seed and what reading it must give (the counts when err is 0). */
struct seed {
	const char *name;
	enum input_class class;
	const uint8_t *buf;
	size_t len;
	bool owned;             /* buf is this seed's to free */
	int err;
	bool recovered;
	bool part;              /* records: more than none, fewer than valid-small's */
	uint64_t records, blocks, bad_blocks, truncated_at;
};

/* The header with one u32 changed and its CRC made right again. */
static uint8_t *header_patched(const uint8_t *base, size_t len, size_t off, uint32_t v)
{
	uint8_t *b = malloc(len);
	uint32_t n = le32(base + 4), c;

	cr_assert_not_null(b);
	memcpy(b, base, len);
	memcpy(b + off, &v, sizeof(v));
	c = crc(b + 8, n - 4);
	memcpy(b + 8 + n - 4, &c, sizeof(c));
	return b;
}

static uint8_t *flipped(const uint8_t *base, size_t len, size_t off)
{
	uint8_t *b = malloc(len);

	cr_assert_not_null(b);
	memcpy(b, base, len);
	b[off] ^= 0x5a;
	return b;
}

static void write_seed(const char *dir, const struct seed *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, s->name);
	f = fopen(path, "wb");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(s->buf, 1, s->len, f), s->len);
	cr_assert_eq(fclose(f), 0);
}

static void check_seed(const char *dir, const struct seed *s, uint64_t all)
{
	char path[512];
	struct outcome o;

	snprintf(path, sizeof(path), "%s/%s", dir, s->name);
	cr_assert_eq(replay_one(path, s->name, &o), s->class, "%s", s->name);
	cr_assert_eq(o.err, s->err, "%s: %s", s->name, cap_strerror(o.err));
	if (s->err)
		return;
	cr_assert_eq(o.st.recovered, s->recovered, "%s", s->name);
	if (s->part)
		cr_assert(o.records > 0 && o.records < all, "%s: %lu records", s->name,
			  (unsigned long)o.records);
	else
		cr_assert_eq(o.records, s->records, "%s", s->name);
	cr_assert_eq(o.st.blocks, s->blocks, "%s", s->name);
	cr_assert_eq(o.st.bad_blocks, s->bad_blocks, "%s", s->name);
	cr_assert_eq(o.st.truncated_at, s->truncated_at, "%s", s->name);
}

#define RECORDS(info) ((info).records + (info).totals.blocks)	/* BLOCKs too */

Test(format_replay, named_seeds)
{
	struct capgen_opts small = { .min_blocks = 4 }, many = { .min_blocks = 16 },
			   no_end = { .no_end = true }, no_fin = { .no_finish = true };
	struct capgen_info is, im, ie, inf;
	uint8_t *vs, *vm, *ve, *nt, rnd[1306];
	size_t ls, lm, le, lnt, i, n, listed, c[IN_OTHER + 1] = { 0 };
	char dir[] = "/tmp/stkrec-seeds-XXXXXX", cmd[600];
	uint64_t x = 0x5eed;
	struct layout l;

	cr_assert_eq(capgen_write_mem(&small, &vs, &ls, &is), 0);
	cr_assert_eq(capgen_write_mem(&many, &vm, &lm, &im), 0);
	cr_assert_eq(capgen_write_mem(&no_end, &ve, &le, &ie), 0);
	cr_assert_eq(capgen_write_mem(&no_fin, &nt, &lnt, &inf), 0);
	cr_assert_eq(classify(vs, ls, &l), IN_INTACT);
	cr_assert_eq(l.nr, 4);
	for (i = 0; i < sizeof(rnd); i++) {	/* a fixed LCG: the same bytes each run */
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		rnd[i] = x >> 56;
	}
	rnd[0] = 0;	/* never the first magic byte */

	const struct seed seeds[] = {
		{ .name = "valid-small.stkrec", .class = IN_INTACT, .buf = vs, .len = ls,
		  .records = RECORDS(is), .blocks = 4 },
		{ .name = "valid-many-blocks.stkrec", .class = IN_INTACT, .buf = vm, .len = lm,
		  .records = RECORDS(im), .blocks = im.totals.blocks },
		{ .name = "valid-no-end.stkrec", .class = IN_INTACT, .buf = ve, .len = le,
		  .records = RECORDS(ie), .blocks = ie.totals.blocks },
		/* a killed recorder: every block, no trailer, "cut" at the end */
		{ .name = "no-trailer.stkrec", .class = IN_OTHER, .buf = nt, .len = lnt,
		  .recovered = true, .records = RECORDS(inf), .blocks = inf.totals.blocks,
		  .truncated_at = lnt },
		{ .name = "header-only.stkrec", .class = IN_OTHER, .buf = vs, .len = l.hdr_end,
		  .recovered = true, .truncated_at = l.hdr_end },
		/* cut inside block 2: blocks 0 and 1 read, the cut where 2 starts */
		{ .name = "trunc-mid-block.stkrec", .class = IN_OTHER, .buf = vs,
		  .len = l.off[2] + l.csize[2] / 2, .recovered = true, .part = true,
		  .blocks = 2, .truncated_at = l.off[2] },
		/* block 1 damaged: skipped whole, the others read */
		{ .name = "flip-block.stkrec", .class = IN_OTHER, .owned = true, .len = ls,
		  .buf = flipped(vs, ls, l.off[1] + l.csize[1] / 2), .recovered = true,
		  .part = true, .blocks = 3, .bad_blocks = 1 },
		/* a damaged footer: no trailer, every block still read */
		{ .name = "flip-footer.stkrec", .class = IN_OTHER, .owned = true, .len = ls,
		  .buf = flipped(vs, ls, ls - 1), .recovered = true, .records = RECORDS(is),
		  .blocks = 4 },
		{ .name = "major9.stkrec", .class = IN_OTHER, .owned = true, .len = ls,
		  .buf = header_patched(vs, ls, 16, 9 | 1u << 16), .err = CAP_ERR_VERSION },
		{ .name = "feature31.stkrec", .class = IN_OTHER, .owned = true, .len = ls,
		  .buf = header_patched(vs, ls, 20, 1u << 31), .err = CAP_ERR_FEATURE },
		{ .name = "bad-magic.stkrec", .class = IN_NOT_CAPTURE, .owned = true, .len = ls,
		  .buf = flipped(vs, ls, 8), .err = CAP_ERR_BAD_MAGIC },
		{ .name = "random.bin", .class = IN_NOT_CAPTURE, .buf = rnd, .len = sizeof(rnd),
		  .err = CAP_ERR_BAD_MAGIC },
		{ .name = "magic-prefix.bin", .class = IN_SHORT, .buf = vs, .len = 11,
		  .err = CAP_ERR_TRUNCATED },
		{ .name = "empty.bin", .class = IN_EMPTY, .buf = vs, .len = 0,
		  .err = CAP_ERR_EMPTY },
	};
	enum { NSEEDS = sizeof(seeds) / sizeof(seeds[0]) };

	cr_assert_not_null(mkdtemp(dir));
	for (i = 0; i < NSEEDS; i++)
		write_seed(dir, &seeds[i]);
	listed = count_files(dir);
	n = replay_dir(dir, c);
	cr_assert_eq(listed, NSEEDS);
	cr_assert_eq(n, NSEEDS, "replayed %zu of %d seeds", n, NSEEDS);
	cr_assert_eq(c[IN_INTACT], 3, "the three valid seeds, no other");
	for (i = 0; i < NSEEDS; i++)
		check_seed(dir, &seeds[i], RECORDS(is));
	for (i = 0; i < NSEEDS; i++) {
		if (seeds[i].owned)
			free((void *)seeds[i].buf);
	}
	free(vs);
	free(vm);
	free(ve);
	free(nt);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}
