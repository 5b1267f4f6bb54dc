// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Damaged and hostile captures through the user-facing commands (the
 * format tests cover the library): every truncation of a small capture,
 * bit flips in the header, blocks and trailer, empty files, random bytes,
 * a directory, a newer major version, huge declared lengths, every saved
 * fuzz regression and every file of the fuzz corpus. Each run is bounded
 * in time and address space, and may only exit 0 (clean), 3 (recovered)
 * or 4 (unreadable): never 1, never a signal. A refusal is one line on
 * stderr naming the file, and nothing on stdout; exit 3 comes with a
 * warning. Bit flips must give the exit their region calls for.
 */
#include <dirent.h>
#include <glob.h>
#include <zstd.h>
#include "format/capture.h"
#include "tests/reliability_run.h"
#include "tests/util_capgen.h"
#include "tests/util_e2e.h"

#define AS_LIMIT (1024ull << 20) /* the commands must work within 1 GiB */
#define RSS_LIMIT_KB (256 * 1024)
#define TIMEOUT 60 /* catches a hang, not a busy host */

static char dir[] = "/tmp/stkrec-relf-XXXXXX";
static char path[PATH_MAX];

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.cap", dir);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

static void put(const char *p, const void *buf, size_t len)
{
	FILE *f = fopen(p, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* The commands every hostile file goes through; "-" is the file. */
static const char *const views[][5] = {
	{ "info", "-", NULL },
	{ "info", "--json", "-", NULL },
	{ "report", "--folded", "-i", "-" },
	{ "report", "-i", "-", NULL },
	{ "report", "--top-waits", "-i", "-" },
	{ "report", "--biotop", "-i", "-" },
	{ "script", "-i", "-", NULL },
	{ "report", "--pprof", "/dev/stdout", "-i", "-" },
	{ "report", "--speedscope", "/dev/stdout", "-i", "-" },
	{ "report", "--chrome-trace", "/dev/stdout", "-i", "-" },
};
#define NR_VIEWS (sizeof(views) / sizeof(views[0]))

/* All of a stdout (binary for --pprof): rl_run.out holds only its head. */
struct whole {
	char *buf;
	size_t len;
};

/* Run view v on file p into *r, and all of its stdout into *all when
 * asked; returns its exit code, asserting the promises: exit 0, 3 or 4 in
 * time and memory; a refusal (4) is one line naming the file and prints
 * nothing else; a partial output (3) says so. */
static int run_view_r(size_t v, const char *p, const char *what, struct rl_run *r,
		      struct whole *all)
{
	char *argv[8] = { (char *)rl_stkrec() }, prefix[PATH_MAX + 16];
	int i, code;

	for (i = 0; i < 5 && views[v][i]; i++)
		argv[i + 1] = strcmp(views[v][i], "-") ? (char *)views[v][i] : (char *)p;
	argv[i + 1] = NULL;
	rl_run_all(argv, TIMEOUT, AS_LIMIT, r, all ? &all->buf : NULL, all ? &all->len : NULL);
	code = rl_code(r);
	cr_assert_not(r->timed_out, "%s: stkrec %s %s timed out", what, views[v][0],
		      views[v][1]);
	cr_assert(code == 0 || code == 3 || code == 4, "%s: stkrec %s %s exited %d: %s",
		  what, views[v][0], views[v][1], code, r->err);
	cr_assert_lt(r->maxrss_kb, RSS_LIMIT_KB, "%s: %ld kB", what, r->maxrss_kb);
	if (code == 4) {
		snprintf(prefix, sizeof(prefix), "stkrec: %s: ", p);
		cr_assert_eq(rl_lines(r->err), 1, "%s: stkrec %s %s: refusal not one line: '%s'",
			     what, views[v][0], views[v][1], r->err);
		cr_assert(!strncmp(r->err, prefix, strlen(prefix)),
			  "%s: refusal does not start '%s': '%s'", what, prefix, r->err);
		cr_assert_str_eq(r->out, "", "%s: stkrec %s %s: output with exit 4", what,
				 views[v][0], views[v][1]);
	}
	if (code == 3)
		cr_assert(strstr(r->err, "stkrec: warning: ") && strstr(r->err, p),
			  "%s: stkrec %s %s: exit 3 without a warning naming the file: '%s'",
			  what, views[v][0], views[v][1], r->err);
	return code;
}

static int run_view(size_t v, const char *p, const char *what)
{
	struct rl_run r;

	return run_view_r(v, p, what, &r, NULL);
}

static void all_views(const char *p, const char *what, int want)
{
	size_t v;
	int code;

	for (v = 0; v < NR_VIEWS; v++) {
		code = run_view(v, p, what);
		if (want >= 0)
			cr_assert_eq(code, want, "%s: stkrec %s %s: %d, want %d", what,
				     views[v][0], views[v][1], code, want);
	}
}

static uint8_t *small_capture(size_t *len)
{
	struct capgen_opts o = { .block_size = 256, .events = 12 };
	uint8_t *buf;

	cr_assert_eq(capgen_write_mem(&o, &buf, len, NULL), 0);
	return buf;
}

/* Every cut of buf (near both ends) or every step-th, through info and
 * report --folded; both exit codes 3 and 4 must show up. */
static void truncations(const uint8_t *buf, size_t len, size_t step)
{
	char what[64];
	int codes[5] = { 0 };
	size_t cut;

	for (cut = 0; cut <= len; cut += cut < 64 || len - cut < 64 ? 1 : step) {
		put(path, buf, cut);
		snprintf(what, sizeof(what), "cut at %zu of %zu", cut, len);
		codes[run_view(0, path, what)]++;
		codes[run_view(2, path, what)]++;
	}
	cr_log_info("%zu-byte capture, step %zu: exits 0: %d, 3: %d, 4: %d", len, step,
		    codes[0], codes[3], codes[4]);
	cr_assert_gt(codes[3], 0);
	cr_assert_gt(codes[4], 0);
}

Test(reliability_files, every_truncation, .init = setup, .fini = teardown, .timeout = 900)
{
	size_t len;
	uint8_t *buf = small_capture(&len);

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	truncations(buf, len, rl_soak() ? 1 : len / 300 + 1);
	free(buf);
}

/* The same on a capture the recorder wrote (a load of 0.3 s). */
Test(reliability_files, every_truncation_of_a_recording, .init = setup, .fini = teardown,
     .timeout = 1800)
{
	char burst[PATH_MAX], *argv[] = { (char *)rl_stkrec(), "record", "-o", path, "-F", "99",
					  "--", burst, "pipe", "1", "0.3", NULL };
	struct rl_run r;
	uint8_t *buf;
	size_t len;
	FILE *f;

	rl_need_bpf();
	rl_workload("burst", burst);
	rl_run(argv, 60, 0, &r);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	f = fopen(path, "rb");
	cr_assert_not_null(f);
	buf = malloc(1 << 20);
	len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	cr_assert_gt(len, 0);
	truncations(buf, len, rl_soak() ? 1 : len / 300 + 1);
	free(buf);
}

/*
 * Bit flips, with the exit each region must give (FORMAT.md):
 *  - header (§3.3): its CRC covers the payload, and a flip in the frame
 *    header breaks the magic, the size or the CRC's position: refused, 4;
 *  - blocks (§5.4): each frame carries a content checksum, so a flip that
 *    changes a block's content, or its frame's structure, makes it damaged:
 *    3, with a warning. zstd's checksum covers the decoded bytes, not their
 *    encoding: a flip zstd itself decodes to the same bytes (the frame
 *    header's unused bit, slack in the entropy tables) changes nothing
 *    anyone can read, and must give 0 and the clean file's output;
 *  - trailer (§6.4): CRC-checked and cross-checked against the footer; a
 *    damaged trailer is ignored and the file recovered: 3.
 */
struct flips {
	uint8_t *buf;
	size_t len, hdr_end, trl_start;
	uint8_t *content;         /* zstd's decoding of the clean blocks */
	size_t content_len;
	struct rl_run clean[NR_VIEWS];
	struct whole clean_all[NR_VIEWS]; /* all of each clean stdout */
	int codes[3][5];          /* per region, per exit */
};

enum { HEADER, BLOCKS, TRAILER };
static const char *const region_names[] = { "header", "blocks", "trailer" };

#define CONTENT_MAX (1u << 20)

/* What a reader that follows §5.1 can take from the block frames: 0 and
 * their decoded bytes, or -1 when one of them does not decode or lacks
 * what §5.1 requires of its header (RFC 8878 §3.1.1.1.1: content
 * checksum flag 0x04, no dictionary 0x03, reserved bit 0x08 clear, and a
 * content size). */
static int zstd_content(const struct flips *f, uint8_t *out, size_t *len)
{
	size_t pos = f->hdr_end, end = f->trl_start, csize, n;
	unsigned long long fcs;

	*len = 0;
	while (pos < end) {
		csize = ZSTD_findFrameCompressedSize(f->buf + pos, end - pos);
		if (ZSTD_isError(csize) || end - pos < 5 || (f->buf[pos + 4] & 0x0f) != 0x04)
			return -1;
		fcs = ZSTD_getFrameContentSize(f->buf + pos, csize);
		if (fcs == ZSTD_CONTENTSIZE_UNKNOWN || fcs == ZSTD_CONTENTSIZE_ERROR)
			return -1;
		n = ZSTD_decompress(out + *len, CONTENT_MAX - *len, f->buf + pos, csize);
		if (ZSTD_isError(n) || n != fcs)
			return -1;
		*len += n;
		pos += csize;
	}
	return 0;
}

static int region_of(const struct flips *f, size_t off)
{
	return off < f->hdr_end ? HEADER : off < f->trl_start ? BLOCKS : TRAILER;
}

/* Flip bit `bit` of byte off, run the views in vmask, expect each exit. */
static void flip(struct flips *f, size_t off, int bit, unsigned vmask)
{
	int region = region_of(f, off), want, code;
	char what[96];
	struct whole all;
	struct rl_run r;
	uint8_t *got;
	size_t v, n;

	f->buf[off] ^= 1u << bit;
	put(path, f->buf, f->len);
	want = region == HEADER ? 4 : 3;
	if (region == BLOCKS) {
		got = malloc(CONTENT_MAX);
		cr_assert_not_null(got);
		if (!zstd_content(f, got, &n) && n == f->content_len &&
		    !memcmp(got, f->content, n))
			want = 0;
		free(got);
	}
	f->buf[off] ^= 1u << bit;
	snprintf(what, sizeof(what), "%s: bit %d of byte %zu flipped", region_names[region], bit,
		 off);
	for (v = 0; v < NR_VIEWS; v++) {
		if (!(vmask & 1u << v))
			continue;
		code = run_view_r(v, path, what, &r, &all);
		f->codes[region][code]++;
		cr_assert_eq(code, want, "%s: stkrec %s %s: exit %d, want %d: %s", what,
			     views[v][0], views[v][1], code, want, r.err);
		/* all of it: script's output is past rl_run.out's 8 KiB */
		cr_assert(code || (all.len == f->clean_all[v].len &&
				   !memcmp(all.buf, f->clean_all[v].buf, all.len)),
			  "%s: stkrec %s %s: output differs (%zu and %zu bytes)", what,
			  views[v][0], views[v][1], all.len, f->clean_all[v].len);
		free(all.buf);
		if (code)
			continue;
		cr_assert_str_eq(r.err, f->clean[v].err, "%s", what);
	}
}

/* Every bit of bytes [from, from + n). */
static void flip_bytes(struct flips *f, size_t from, size_t n, unsigned vmask)
{
	size_t off;
	int bit;

	for (off = from; off < from + n; off++)
		for (bit = 0; bit < 8; bit++)
			flip(f, off, bit, vmask);
}

/* n offsets spread over [from, to), bit i % 8 of the i-th. */
static void flip_spread(struct flips *f, size_t from, size_t to, size_t n, unsigned vmask)
{
	size_t i;

	for (i = 0; i < n && i < to - from; i++)
		flip(f, from + (to - from) * i / n, i % 8, vmask);
}

Test(reliability_files, bit_flips, .init = setup, .fini = teardown, .timeout = 1800)
{
	struct flips f = { 0 };
	size_t v, frame, first_end, off;
	uint32_t hdr_size, trl_size;
	unsigned all = (1u << NR_VIEWS) - 1, edge = 1u << 0 | 1u << 2, soak = rl_soak();
	int r;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	f.buf = small_capture(&f.len);
	/* §2: the header is the first skippable frame; §6.3: the footer's
	 * frame_size gives where the trailer starts */
	memcpy(&hdr_size, f.buf + 4, 4);
	memcpy(&trl_size, f.buf + f.len - 16, 4);
	cr_assert(!memcmp(f.buf + f.len - 8, "STKRTAIL", 8));
	f.hdr_end = 8 + hdr_size;
	f.trl_start = f.len - trl_size;
	cr_assert_lt(f.hdr_end + 64, f.trl_start);
	f.content = malloc(CONTENT_MAX);
	cr_assert_not_null(f.content);
	cr_assert_eq(zstd_content(&f, f.content, &f.content_len), 0);
	first_end = f.hdr_end + ZSTD_findFrameCompressedSize(f.buf + f.hdr_end,
							      f.trl_start - f.hdr_end);
	cr_assert_lt(first_end, f.trl_start);
	put(path, f.buf, f.len);
	for (v = 0; v < NR_VIEWS; v++)
		cr_assert_eq(run_view_r(v, path, "clean", &f.clean[v], &f.clean_all[v]), 0);

	/* every bit of the structures, through info and report --folded:
	 * the header's frame header, payload magic and CRC; the first block
	 * frame's magic, descriptor, content size, the start of its first
	 * block header, its content checksum, and every frame's descriptor;
	 * the trailer's frame header, payload magic, first total, and footer */
	flip_bytes(&f, 0, 16, edge);
	flip_bytes(&f, f.hdr_end - 4, 4, edge);
	flip_bytes(&f, f.hdr_end, 8, edge);
	flip_bytes(&f, first_end - 4, 4, edge);
	for (frame = first_end; frame < f.trl_start; frame += ZSTD_findFrameCompressedSize(
			f.buf + frame, f.trl_start - frame))
		flip_bytes(&f, frame + 4, 1, 1);
	flip_bytes(&f, f.trl_start, 16, edge);
	flip_bytes(&f, f.trl_start + 8 + 24, 8, 1);
	flip_bytes(&f, f.len - 16, 16, edge);
	/* and anywhere, through every view; in the soak every bit of every
	 * byte through info, and one bit of each through report --folded */
	for (r = HEADER; r <= TRAILER; r++) {
		size_t from = r == HEADER ? 0 : r == BLOCKS ? f.hdr_end : f.trl_start;
		size_t to = r == HEADER ? f.hdr_end : r == BLOCKS ? f.trl_start : f.len;

		flip_spread(&f, from, to, r == BLOCKS ? 48 : 16, all);
	}
	for (off = 0; soak && off < f.len; off++) {
		flip_bytes(&f, off, 1, 1);
		flip(&f, off, off % 8, 1u << 2);
	}
	for (r = HEADER; r <= TRAILER; r++)
		cr_log_info("%s: exits 0: %d, 3: %d, 4: %d", region_names[r], f.codes[r][0],
			    f.codes[r][3], f.codes[r][4]);
	/* each region was hit, and a damaged block is the common case */
	cr_assert_gt(f.codes[HEADER][4], 0);
	cr_assert_gt(f.codes[BLOCKS][3], f.codes[BLOCKS][0]);
	cr_assert_gt(f.codes[TRAILER][3], 0);
	free(f.content);
	free(f.buf);
}

Test(reliability_files, hostile_files, .init = setup, .fini = teardown, .timeout = 300)
{
	uint8_t rnd[8192];
	size_t i, len;
	uint8_t *buf;
	unsigned seed = 1;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	put(path, "", 0);
	all_views(path, "empty file", 4);
	for (i = 0; i < sizeof(rnd); i++)
		rnd[i] = rand_r(&seed);
	put(path, rnd, sizeof(rnd));
	all_views(path, "random bytes", 4);
	all_views(dir, "a directory", 4);
	snprintf(path, sizeof(path), "%s/missing.cap", dir);
	all_views(path, "no such file", 4);
	snprintf(path, sizeof(path), "%s/x.cap", dir);
	buf = small_capture(&len);
	put(path, buf, 40); /* inside the header frame */
	all_views(path, "cut header", 4);
	free(buf);
}

/* Rewrite the header's fixed fields through `edit` and fix its CRC. */
static void patch_header(uint8_t *buf, void (*edit)(struct cap_file_header *))
{
	struct cap_file_header fh;
	uint32_t size, crc;

	memcpy(&size, buf + 4, 4);
	memcpy(&fh, buf + 8, sizeof(fh));
	edit(&fh);
	memcpy(buf + 8, &fh, sizeof(fh));
	crc = cap_crc32(0, buf + 8, size - 4);
	memcpy(buf + 8 + size - 4, &crc, 4);
}

static void major9(struct cap_file_header *fh)
{
	fh->major = 9;
}

Test(reliability_files, newer_major_version, .init = setup, .fini = teardown)
{
	char *argv[] = { (char *)rl_stkrec(), "info", path, NULL };
	struct rl_run r;
	size_t len;
	uint8_t *buf = small_capture(&len);

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	patch_header(buf, major9);
	put(path, buf, len);
	all_views(path, "major version 9", 4);
	rl_run(argv, TIMEOUT, AS_LIMIT, &r);
	cr_assert(strstr(r.err, "newer than this stkrec"), "%s", r.err);
	free(buf);
}

/* Every file of a directory of the checkout through every view; the
 * number of files run, or -1. */
static int replay(const char *d)
{
	char p[PATH_MAX + 256];
	struct dirent *de;
	int n = 0;
	DIR *dh;

	dh = opendir(d);
	if (!dh)
		return -1;
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", d, de->d_name);
		all_views(p, p, -1);
		n++;
	}
	closedir(dh);
	return n;
}

/* Files matching pattern (under the checkout), counted apart from replay(). */
static size_t count_files(const char *pattern)
{
	char pat[PATH_MAX];
	glob_t g;
	size_t n;

	snprintf(pat, sizeof(pat), "%s/%s", rl_env("STKREC_SRCDIR", "."), pattern);
	if (glob(pat, 0, NULL, &g))
		return 0;
	n = g.gl_pathc;
	globfree(&g);
	return n;
}

/* README.md's words after the count of the fuzz corpus */
#define README_CORPUS " files, through every command with its count asserted"

/* The saved regressions and the whole fuzz corpus (every target's), each
 * file through every view; the counts make sure none was left out. */
Test(reliability_files, fuzz_regressions_through_every_view, .timeout = 900)
{
	char d[PATH_MAX], sub[PATH_MAX + 256];
	size_t want_reg = count_files("tests/fuzz/regressions/*");
	size_t want_corpus = count_files("tests/fuzz/corpus/*/*");
	struct dirent *de;
	int n, corpus = 0;
	DIR *dh;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	snprintf(d, sizeof(d), "%s/tests/fuzz/regressions", rl_env("STKREC_SRCDIR", "."));
	n = replay(d);
	cr_assert_geq(n, 3, "%s: %d files (STKREC_SRCDIR?)", d, n);
	cr_assert_eq((size_t)n, want_reg, "regressions replayed: %d of %zu", n, want_reg);
	snprintf(d, sizeof(d), "%s/tests/fuzz/corpus", rl_env("STKREC_SRCDIR", "."));
	dh = opendir(d);
	cr_assert_not_null(dh, "%s", d);
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", d, de->d_name);
		n = replay(sub);
		cr_assert_geq(n, 0, "%s", sub);
		corpus += n;
	}
	closedir(dh);
	cr_log_info("regressions: %zu, corpus files replayed: %d of %zu", want_reg, corpus,
		    want_corpus);
	cr_assert_gt(corpus, 0);
	cr_assert_eq((size_t)corpus, want_corpus, "corpus replayed: %d of %zu", corpus,
		     want_corpus);
	/* the README says how many: that number is the corpus' */
	cr_assert_eq(e2e_readme_count(README_CORPUS), (long)want_corpus, "README.md: %ld%s; the "
		     "corpus holds %zu", e2e_readme_count(README_CORPUS), README_CORPUS,
		     want_corpus);
}
