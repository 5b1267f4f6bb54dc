// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Damaged and hostile captures through the user-facing commands (the
 * format tests cover the library): every truncation of a small capture,
 * bit flips in the header, blocks and trailer, empty files, random bytes,
 * a directory, a newer major version, huge declared lengths, and every
 * saved fuzz regression. Each run is bounded in time and address space,
 * and may only exit 0 (clean), 3 (recovered) or 4 (unreadable): never 1,
 * never a signal. A refusal is one line on stderr.
 */
#include <dirent.h>
#include "format/capture.h"
#include "tests/reliability_run.h"
#include "tests/util_capgen.h"

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
static const char *const views[][4] = {
	{ "info", "-", NULL },
	{ "info", "--json", "-", NULL },
	{ "report", "--folded", "-i", "-" },
	{ "report", "-i", "-", NULL },
	{ "report", "--top-waits", "-i", "-" },
	{ "report", "--biotop", "-i", "-" },
	{ "script", "-i", "-", NULL },
};
#define NR_VIEWS (sizeof(views) / sizeof(views[0]))

/* Run view v on file p; returns its exit code, asserting the promises. */
static int run_view(size_t v, const char *p, const char *what)
{
	char *argv[8] = { (char *)rl_stkrec() };
	struct rl_run r;
	int i, code;

	for (i = 0; i < 4 && views[v][i]; i++)
		argv[i + 1] = strcmp(views[v][i], "-") ? (char *)views[v][i] : (char *)p;
	argv[i + 1] = NULL;
	rl_run(argv, TIMEOUT, AS_LIMIT, &r);
	code = rl_code(&r);
	cr_assert_not(r.timed_out, "%s: stkrec %s %s timed out", what, views[v][0],
		      views[v][1]);
	cr_assert(code == 0 || code == 3 || code == 4, "%s: stkrec %s %s exited %d: %s",
		  what, views[v][0], views[v][1], code, r.err);
	cr_assert_lt(r.maxrss_kb, RSS_LIMIT_KB, "%s: %ld kB", what, r.maxrss_kb);
	if (code == 4)
		cr_assert_eq(rl_lines(r.err), 1, "%s: not one line: '%s'", what, r.err);
	if (code != 0)
		cr_assert(strstr(r.err, "stkrec: "), "%s: exit %d says nothing", what, code);
	return code;
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

/* One bit flipped at each of n offsets spread over [from, to). */
static void flips(uint8_t *buf, size_t len, size_t from, size_t to, int n, const char *part)
{
	char what[96];
	size_t off;
	int i, bit;

	for (i = 0; i < n; i++) {
		off = from + (to - from) * i / n;
		bit = i % 8;
		buf[off] ^= 1u << bit;
		put(path, buf, len);
		snprintf(what, sizeof(what), "%s: bit %d of byte %zu flipped", part, bit, off);
		all_views(path, what, -1);
		buf[off] ^= 1u << bit;
	}
}

Test(reliability_files, bit_flips, .init = setup, .fini = teardown, .timeout = 900)
{
	size_t len, hdr_end;
	uint8_t *buf = small_capture(&len);
	uint32_t hdr_size;
	int n = rl_soak() ? 64 : 8;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	/* §2: the header is the first skippable frame; the trailer frame and
	 * footer are the last bytes (over 64 of them) */
	memcpy(&hdr_size, buf + 4, 4);
	hdr_end = 8 + hdr_size;
	cr_assert_lt(hdr_end + 64, len);
	flips(buf, len, 0, hdr_end, n, "header");
	flips(buf, len, hdr_end, len - 64, n * 2, "blocks");
	flips(buf, len, len - 64, len, n, "trailer");
	free(buf);
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

/* Every file of a directory of the checkout through every view. */
static int replay(const char *sub, int max)
{
	char d[PATH_MAX], p[PATH_MAX + 256];
	struct dirent *de;
	int n = 0;
	DIR *dh;

	snprintf(d, sizeof(d), "%s/%s", rl_env("STKREC_SRCDIR", "."), sub);
	dh = opendir(d);
	if (!dh)
		return -1;
	while ((de = readdir(dh)) && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", d, de->d_name);
		all_views(p, p, -1);
		n++;
	}
	closedir(dh);
	return n;
}

Test(reliability_files, fuzz_regressions_through_every_view, .timeout = 600)
{
	int n;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	n = replay("tests/fuzz/regressions", 100000);
	cr_assert_geq(n, 3, "tests/fuzz/regressions not found (STKREC_SRCDIR?)");
	n = replay("tests/fuzz/corpus/fuzz_reader", rl_soak() ? 100000 : 40);
	cr_log_info("corpus files replayed: %d", n);
}
