// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report/diff on synthetic captures: two "builds" whose kernel symbols sit
 * at different addresses (stacks must match by name), exact tables, folded
 * output, normalization (automatic, forced, refused), filters applied to
 * both sides, off-CPU and block I/O units, and the differential SVG.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report/diff.h"
#include "report/flamegraph.h"
#include "tests/util_report.h"

#define APP 10
#define OTHER 20

enum { F_LOOP, F_HELPER, F_A, F_B, F_C, F_SCHED, F_NR };

static const char *const fnames[F_NR] = {
	"work_loop", "helper", "func_a", "func_b", "func_c", "schedule",
};

/* CPU samples per stack: [func_a], [func_b], [func_c], [helper;func_c]
 * (under work_loop), then off-CPU us in schedule under func_a. */
struct spec {
	uint64_t kbase;            /* where this build's kernel symbols are */
	unsigned cpu[4];
	unsigned off_us;
	unsigned other;            /* CPU samples of pid OTHER in func_a */
	unsigned bio_kb[2];        /* KiB written by app to sda and sdb */
};

static char *paths[2];

static uint64_t ip(const struct spec *s, int f)
{
	return s->kbase + (uint64_t)f * 0x100 + 0x10;
}

static int write_stacks(struct cap_writer *w, const struct spec *s)
{
	uint64_t k[4][3] = {
		{ ip(s, F_A), ip(s, F_LOOP) }, { ip(s, F_B), ip(s, F_LOOP) },
		{ ip(s, F_C), ip(s, F_LOOP) }, { ip(s, F_C), ip(s, F_HELPER), ip(s, F_LOOP) },
	};
	uint64_t sched[3] = { ip(s, F_SCHED), ip(s, F_A), ip(s, F_LOOP) };
	int i, err = 0;

	for (i = 0; !err && i < F_NR; i++)
		err = rc_ksym(w, s->kbase + (uint64_t)i * 0x100, 0x100, fnames[i], 0);
	for (i = 0; !err && i < 4; i++)
		err = cap_writer__stack(w, i + 1, CAP_STACK_KERNEL, k[i], i == 3 ? 3 : 2);
	return err ?: cap_writer__stack(w, 5, CAP_STACK_KERNEL, sched, 3);
}

static int write_bio(struct cap_writer *w, uint64_t t, uint32_t minor, unsigned kb)
{
	struct cap_bio b = { .issue_time = t, .complete_time = t + RC_MS, .bytes = kb * 1024,
			     .tid = APP, .pid = APP, .major = 8, .minor = minor,
			     .op = CAP_BIO_WRITE, .comm = "app" };

	return kb ? cap_writer__append(w, CAP_REC_BIO, &b, sizeof(b), NULL, 0) : 0;
}

static int write_events(struct cap_writer *w, const struct spec *s)
{
	struct cap_blockdev sda = { .major = 8, .minor = 0, .name = "sda" };
	struct cap_blockdev sdb = { .major = 8, .minor = 16, .name = "sdb" };
	uint64_t t = RC_T0 + RC_MS;
	unsigned i, j;
	int err;

	err = cap_writer__append(w, CAP_REC_BLOCKDEV, &sda, sizeof(sda), NULL, 0) ?:
	      cap_writer__append(w, CAP_REC_BLOCKDEV, &sdb, sizeof(sdb), NULL, 0) ?:
	      write_bio(w, t, 0, s->bio_kb[0]) ?: write_bio(w, t, 16, s->bio_kb[1]);
	for (i = 0; !err && i < 4; i++)
		for (j = 0; !err && j < s->cpu[i]; j++)
			err = rc_cpu(w, t++, APP, APP, CAP_STACK_NONE, i + 1);
	for (j = 0; !err && j < s->other; j++)
		err = rc_cpu(w, t++, OTHER, OTHER, CAP_STACK_NONE, 1);
	/* two intervals whose ns only round to the total together */
	if (!err && s->off_us)
		err = rc_offcpu(w, t, s->off_us * 1000ull - 400, APP, APP, 1, 0, 5) ?:
		      rc_offcpu(w, t + RC_MS, 400, APP, APP, 1, 0, 5);
	return err;
}

static void write_cap(const char *path, const struct spec *s)
{
	struct cap_writer *w = rc_open(path);

	cr_assert_not_null(w);
	cr_assert_eq(write_stacks(w, s) ?:
		     rc_thread(w, RC_T0, APP, APP, 0, "app") ?:
		     rc_thread(w, RC_T0, OTHER, OTHER, 0, "other") ?:
		     write_events(w, s), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
}

static void setup(void)
{
	setenv("TZ", "UTC", 1);
	paths[0] = rc_tmpname("diffa");
	paths[1] = rc_tmpname("diffb");
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
}

/* Diff the two captures with filter template f (may be NULL). */
static struct diff *run_diff(const struct spec *a, const struct spec *b, enum cap_kind kind,
			     const struct filter *f, enum diff_norm norm)
{
	const struct spec *s[2] = { a, b };
	struct diff *d;
	int i;

	cr_assert_eq(diff__new(kind, &d), 0);
	for (i = 0; i < 2; i++) {
		struct filter flt = f ? *f : (struct filter){ 0 };
		struct report_ctx ctx = { .filter = &flt };
		struct model *m;

		write_cap(paths[i], s[i]);
		cr_assert_eq(model__load(paths[i], &m), 0);
		ctx.model = m;
		cr_assert_eq(filter__bind(&flt, m), 0);
		cr_assert_eq(resolver__new(m, NULL, &ctx.res), 0);
		cr_assert_eq(diff__add(d, i, i ? "b.cap" : "a.cap", &ctx), 0);
		resolver__free(ctx.res);
		free(flt.comm_ok);
		free(flt.cgroup_ok);
		model__free(m);
	}
	cr_assert_eq(diff__join(d, norm), 0);
	return d;
}

typedef int (*writer_fn)(const struct diff *d, FILE *out);

static int table10(const struct diff *d, FILE *out)
{
	return diff__write_table(d, 0, out);
}

static int svg_flame(const struct diff *d, FILE *out)
{
	return diff__write_svg(d, false, out);
}

static char *output(const struct diff *d, writer_fn fn)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert_not_null(out);
	cr_assert_eq(fn(d, out), 0);
	fclose(out);
	return buf;
}

/* The two builds: symbols 0x1000 apart, the CPU split flipped. */
static const struct spec build_a = { .kbase = 0xffffffff81000000ull, .cpu = { 25, 75, 10, 0 },
				     .off_us = 3000, .other = 7, .bio_kb = { 64, 0 } };
static const struct spec build_b = { .kbase = 0xffffffff81001000ull, .cpu = { 75, 25, 5, 5 },
				     .off_us = 1000, .other = 7, .bio_kb = { 16, 48 } };

TestSuite(diff_report, .init = setup, .fini = teardown);

Test(diff_report, folded_matches_by_name_across_builds)
{
	struct filter f = { .kinds = 1u << CAP_KIND_CPU };
	struct diff *d = run_diff(&build_a, &build_b, CAP_KIND_CPU, &f, DIFF_NORM_AUTO);
	char *s = output(d, diff__write_folded);

	cr_assert_str_eq(s,
		"app;work_loop;func_a 25 75\n"
		"app;work_loop;func_b 75 25\n"
		"app;work_loop;func_c 10 5\n"
		"app;work_loop;helper;func_c 0 5\n"
		"other;work_loop;func_a 7 7\n");
	cr_expect_eq(diff__total(d, DIFF_A), 117);
	cr_expect_eq(diff__total(d, DIFF_B), 117);
	cr_expect_eq(diff__nr_stacks(d), 5);
	cr_expect(!diff__normalized(d));
	cr_expect_str_eq(diff__unit(d), "samples");
	free(s);
	diff__free(d);
}

Test(diff_report, table_exact)
{
	struct filter f = { .pids = (uint32_t[]){ APP }, .npids = 1 };
	struct diff *d = run_diff(&build_a, &build_b, CAP_KIND_CPU, &f, DIFF_NORM_AUTO);
	char *s = output(d, table10);

	/* -p applies to both sides: pid OTHER's samples are gone; func_c,
	 * 10 = 10 self in both, is in neither direction */
	cr_assert_str_eq(s,
		"# stkrec diff: CPU samples, values in samples\n"
		"# A: a.cap: host testhost, kernel 6.18.0-test, start "
		"2026-01-02T03:04:05.000000+00:00, span 0.003 s, 117 CPU samples, "
		"total 110 samples\n"
		"# B: b.cap: host testhost, kernel 6.18.0-test, start "
		"2026-01-02T03:04:05.000000+00:00, span 0.002 s, 117 CPU samples, "
		"total 110 samples\n"
		"# Share: of the side's total; Delta pp: share B - share A in percentage points\n"
		"# Rows: largest Change (B - A) first, then largest Delta pp; unchanged rows "
		"left out\n"
		"\n"
		"Functions (self: the innermost frame):\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp  Function\n"
		"grew:\n"
		"          25           75          +50   +200.0%   22.73%   68.18%    +45.45  func_a\n"
		"shrank:\n"
		"          75           25          -50    -66.7%   68.18%   22.73%    -45.45  func_b\n"
		"\n"
		"Stacks:\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp  Stack\n"
		"grew:\n"
		"          25           75          +50   +200.0%   22.73%   68.18%    +45.45  app;work_loop;func_a\n"
		"           0            5           +5       new    0.00%    4.55%     +4.55  app;work_loop;helper;func_c\n"
		"shrank:\n"
		"          75           25          -50    -66.7%   68.18%   22.73%    -45.45  app;work_loop;func_b\n"
		"          10            5           -5    -50.0%    9.09%    4.55%     -4.55  app;work_loop;func_c\n");
	free(s);
	diff__free(d);
}

static const struct spec a_only_app = { .kbase = 0xffffffff81000000ull,
					.cpu = { 25, 75, 10, 0 } };

Test(diff_report, normalization_automatic_past_2x)
{
	struct spec b3 = { .kbase = 0xffffffff81002000ull, .cpu = { 225, 75, 15, 15 } };
	struct diff *d = run_diff(&a_only_app, &b3, CAP_KIND_CPU, NULL, DIFF_NORM_AUTO);
	char *s = output(d, diff__write_folded), *t = output(d, table10);

	cr_expect(diff__normalized(d));
	cr_expect_eq(diff__total(d, DIFF_B), 330, "totals stay raw");
	/* B scaled by 110/330: the same picture as B at A's size */
	cr_assert_str_eq(s,
		"app;work_loop;func_a 25 75\n"
		"app;work_loop;func_b 75 25\n"
		"app;work_loop;func_c 10 5\n"
		"app;work_loop;helper;func_c 0 5\n");
	cr_expect_not_null(strstr(t, "\n# B normalized to A's total (B values x0.3333): the "
				     "totals differ by more than 2x (--no-normalize: raw values)\n"));
	/* normalized: B raw in a column of its own */
	cr_expect_not_null(strstr(t, "\n          25           75          +50   +200.0%   "
				     "22.73%   68.18%    +45.45          225  func_a\n"), "%s", t);
	free(s);
	free(t);
	diff__free(d);
}

Test(diff_report, normalization_refused)
{
	struct spec b3 = { .kbase = 0xffffffff81002000ull, .cpu = { 225, 75, 15, 15 } };
	struct diff *d = run_diff(&a_only_app, &b3, CAP_KIND_CPU, NULL, DIFF_NORM_OFF);
	char *s = output(d, diff__write_folded), *t = output(d, table10);

	cr_expect(!diff__normalized(d));
	cr_assert_str_eq(s,
		"app;work_loop;func_a 25 225\n"
		"app;work_loop;func_b 75 75\n"
		"app;work_loop;func_c 10 15\n"
		"app;work_loop;helper;func_c 0 15\n");
	cr_expect_not_null(strstr(t, "\n# the totals differ by more than 2x; B not normalized "
				     "(--no-normalize)\n"));
	/* shares do not depend on normalization; the changes do */
	cr_expect_not_null(strstr(t, "\n          25          225         +200   +800.0%   "
				     "22.73%   68.18%    +45.45  func_a\n"), "%s", t);
	cr_expect_not_null(strstr(t, "\n          75           75           +0     +0.0%   "
				     "68.18%   22.73%    -45.45  func_b\n"), "%s", t);
	free(s);
	free(t);
	diff__free(d);
}

Test(diff_report, normalization_forced_rounds)
{
	struct spec b = { .kbase = 0xffffffff81002000ull, .cpu = { 75, 25, 5, 5 }, .other = 10 };
	struct diff *d = run_diff(&a_only_app, &b, CAP_KIND_CPU, NULL, DIFF_NORM_ON);
	char *s = output(d, diff__write_folded), *t = output(d, table10);

	/* x110/120, rounded half up: 68.75 -> 69, 22.92 -> 23, 4.58 -> 5, 9.17 -> 9 */
	cr_assert_str_eq(s,
		"app;work_loop;func_a 25 69\n"
		"app;work_loop;func_b 75 23\n"
		"app;work_loop;func_c 10 5\n"
		"app;work_loop;helper;func_c 0 5\n"
		"other;work_loop;func_a 0 9\n");
	cr_expect_not_null(strstr(t, "\n# B normalized to A's total (B values x0.9167): "
				     "--normalize\n"), "%s", t);
	/* func_a self: 25 -> 69 + 9 = 78 scaled; its share of B's raw 120 is
	 * 85 = 70.83%, 48.11 points more than 25 of 110 */
	cr_expect_not_null(strstr(t, "\n          25           78          +53   +212.0%   "
				     "22.73%   70.83%    +48.11           85  func_a\n"), "%s", t);
	free(s);
	free(t);
	diff__free(d);
}

/* Everything 4x: no share moves, every value does. Normalized (automatic
 * past 2x) the rows come by the change of the raw values; raw, by B - A. */
static const struct spec all_4x = { .kbase = 0xffffffff81002000ull,
				    .cpu = { 100, 300, 40, 0 } };

Test(diff_report, shares_held_values_grew_normalized)
{
	struct diff *d = run_diff(&a_only_app, &all_4x, CAP_KIND_CPU, NULL, DIFF_NORM_AUTO);
	char *t = output(d, table10);

	cr_assert_str_eq(strstr(t, "# B normalized"),
		"# B normalized to A's total (B values x0.2500): the totals differ by more "
		"than 2x (--no-normalize: raw values)\n"
		"# Share: of the side's total; Delta pp: share B - share A in percentage points\n"
		"# Rows: largest Delta pp first, then largest change of the raw values "
		"(B raw - A); unchanged rows left out\n"
		"\n"
		"Functions (self: the innermost frame):\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp"
		"        B raw  Function\n"
		"grew:\n"
		"          75           75           +0     +0.0%   68.18%   68.18%     +0.00"
		"          300  func_b\n"
		"          25           25           +0     +0.0%   22.73%   22.73%     +0.00"
		"          100  func_a\n"
		"          10           10           +0     +0.0%    9.09%    9.09%     +0.00"
		"           40  func_c\n"
		"shrank:\n"
		"\n"
		"Stacks:\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp"
		"        B raw  Stack\n"
		"grew:\n"
		"          75           75           +0     +0.0%   68.18%   68.18%     +0.00"
		"          300  app;work_loop;func_b\n"
		"          25           25           +0     +0.0%   22.73%   22.73%     +0.00"
		"          100  app;work_loop;func_a\n"
		"          10           10           +0     +0.0%    9.09%    9.09%     +0.00"
		"           40  app;work_loop;func_c\n"
		"shrank:\n");
	free(t);
	diff__free(d);
}

Test(diff_report, shares_held_values_grew_raw)
{
	struct diff *d = run_diff(&a_only_app, &all_4x, CAP_KIND_CPU, NULL, DIFF_NORM_OFF);
	char *t = output(d, table10);

	cr_assert_str_eq(strstr(t, "# Rows"),
		"# Rows: largest Change (B - A) first, then largest Delta pp; unchanged rows "
		"left out\n"
		"\n"
		"Functions (self: the innermost frame):\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp"
		"  Function\n"
		"grew:\n"
		"          75          300         +225   +300.0%   68.18%   68.18%     +0.00"
		"  func_b\n"
		"          25          100          +75   +300.0%   22.73%   22.73%     +0.00"
		"  func_a\n"
		"          10           40          +30   +300.0%    9.09%    9.09%     +0.00"
		"  func_c\n"
		"shrank:\n"
		"\n"
		"Stacks:\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp"
		"  Stack\n"
		"grew:\n"
		"          75          300         +225   +300.0%   68.18%   68.18%     +0.00"
		"  app;work_loop;func_b\n"
		"          25          100          +75   +300.0%   22.73%   22.73%     +0.00"
		"  app;work_loop;func_a\n"
		"          10           40          +30   +300.0%    9.09%    9.09%     +0.00"
		"  app;work_loop;func_c\n"
		"shrank:\n");
	free(t);
	diff__free(d);
}

/* Without normalization the order is B - A's: a row whose share fell while
 * its value held is still shown, after the rows whose value moved. */
Test(diff_report, raw_order_then_share)
{
	struct spec b3 = { .kbase = 0xffffffff81002000ull, .cpu = { 225, 75, 15, 15 } };
	struct diff *d = run_diff(&a_only_app, &b3, CAP_KIND_CPU, NULL, DIFF_NORM_OFF);
	char *t = output(d, table10);

	cr_assert_str_eq(strstr(t, "Functions"),
		"Functions (self: the innermost frame):\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp"
		"  Function\n"
		"grew:\n"
		"          25          225         +200   +800.0%   22.73%   68.18%    +45.45"
		"  func_a\n"
		"          10           30          +20   +200.0%    9.09%    9.09%     +0.00"
		"  func_c\n"
		"shrank:\n"
		"          75           75           +0     +0.0%   68.18%   22.73%    -45.45"
		"  func_b\n"
		"\n"
		"Stacks:\n"
		"           A            B       Change   Change%  Share A  Share B  Delta pp"
		"  Stack\n"
		"grew:\n"
		"          25          225         +200   +800.0%   22.73%   68.18%    +45.45"
		"  app;work_loop;func_a\n"
		"           0           15          +15       new    0.00%    4.55%     +4.55"
		"  app;work_loop;helper;func_c\n"
		"          10           15           +5    +50.0%    9.09%    4.55%     -4.55"
		"  app;work_loop;func_c\n"
		"shrank:\n"
		"          75           75           +0     +0.0%   68.18%   22.73%    -45.45"
		"  app;work_loop;func_b\n");
	free(t);
	diff__free(d);
}

Test(diff_report, folded_leaves_out_stacks_zero_after_scaling)
{
	struct spec b = { .kbase = 0xffffffff81002000ull, .cpu = { 1000, 3000, 400, 1 } };
	struct diff *d = run_diff(&a_only_app, &b, CAP_KIND_CPU, NULL, DIFF_NORM_AUTO);
	char *s = output(d, diff__write_folded);

	/* x110/4401: helper;func_c's 1 sample scales to 0.025, "0 0": left out */
	cr_assert_str_eq(s,
		"app;work_loop;func_a 25 25\n"
		"app;work_loop;func_b 75 75\n"
		"app;work_loop;func_c 10 10\n");
	cr_expect_eq(diff__nr_zero_stacks(d), 1);
	cr_expect_eq(diff__nr_stacks(d), 4);
	free(s);
	diff__free(d);
}

Test(diff_report, offcpu_microseconds_summed_then_rounded)
{
	struct filter f = { .kinds = 1u << CAP_KIND_OFFCPU };
	struct diff *d = run_diff(&build_a, &build_b, CAP_KIND_OFFCPU, &f, DIFF_NORM_OFF);
	char *s = output(d, diff__write_folded);

	cr_assert_str_eq(s, "app;work_loop;func_a;schedule 3000 1000\n");
	cr_expect_str_eq(diff__unit(d), "us");
	free(s);
	diff__free(d);
}

Test(diff_report, bio_bytes_per_comm_and_disk)
{
	struct filter f = { .kinds = 1u << CAP_KIND_BIO };
	struct diff *d = run_diff(&build_a, &build_b, CAP_KIND_BIO, &f, DIFF_NORM_AUTO);
	char *s = output(d, diff__write_folded), *t = output(d, table10);

	cr_assert_str_eq(s, "app;sda 65536 16384\napp;sdb 0 49152\n");
	cr_expect_str_eq(diff__unit(d), "bytes");
	cr_expect_not_null(strstr(t, "# stkrec diff: block I/O requests, values in bytes\n"));
	cr_expect_not_null(strstr(t, "\nDisks:\n"));
	cr_expect_not_null(strstr(t, "\nProcesses and disks:\n"));
	cr_expect_not_null(strstr(t, "\n           0        49152       +49152       new    "
				     "0.00%   75.00%    +75.00  sdb\n"), "%s", t);
	free(s);
	free(t);
	diff__free(d);
}

Test(diff_report, rows_capped_per_direction)
{
	struct filter f = { .pids = (uint32_t[]){ APP }, .npids = 1 };
	struct diff *d = run_diff(&build_a, &build_b, CAP_KIND_CPU, &f, DIFF_NORM_AUTO);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	const char *stacks;

	cr_assert_eq(diff__write_table(d, 1, out), 0);
	fclose(out);
	stacks = strstr(buf, "\nStacks");
	cr_assert_not_null(stacks);
	cr_expect_null(strstr(stacks, "helper;func_c"), "second growth row cut");
	cr_expect_null(strstr(stacks, "  app;work_loop;func_c\n"), "second shrink row cut");
	cr_expect_not_null(strstr(stacks, "  app;work_loop;func_b\n"));
	free(buf);
	diff__free(d);
}

Test(diff_report, api_misuse)
{
	struct diff *d;
	struct report_ctx ctx = { 0 };

	cr_expect_eq(diff__new(CAP_KIND_SIDEBAND, &d), -EINVAL);
	cr_assert_eq(diff__new(CAP_KIND_CPU, &d), 0);
	cr_expect_eq(diff__add(d, DIFF_B, "b", &ctx), -EINVAL, "A comes first");
	cr_expect_eq(diff__join(d, DIFF_NORM_AUTO), -EINVAL, "nothing added");
	cr_expect_eq(diff__write_folded(d, stdout), -EINVAL, "not joined");
	diff__free(d);
	diff__free(NULL);
}

TestSuite(svg_diff, .init = setup, .fini = teardown);

Test(svg_diff, differential_colours_and_widths)
{
	struct filter f = { .pids = (uint32_t[]){ APP }, .npids = 1 };
	struct diff *d = run_diff(&build_a, &build_b, CAP_KIND_CPU, &f, DIFF_NORM_AUTO);
	char *s = output(d, svg_flame), path[] = "/tmp/stkrec-diff-svg-XXXXXX", cmd[128];
	const char *fa, *fb;
	int fd;

	cr_expect_not_null(strstr(s, "Differential Flame Graph"));
	cr_expect_not_null(strstr(s, "A a.cap (host testhost, 110 samples) -&gt; B b.cap"));
	fa = strstr(s, "<title>func_a (");
	fb = strstr(s, "<title>func_b (");
	cr_assert(fa && fb, "%s", s);
	/* grew: red (255, c, c); shrank: blue (c, c, 255) */
	cr_expect_not_null(strstr(fa, "fill=\"rgb(255,"));
	cr_expect(strstr(fa, "fill=\"rgb(255,") < strstr(fa, "</g>"));
	cr_expect(strstr(fb, ",255)\"") && strstr(fb, ",255)\"") < strstr(fb, "</g>"));
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
	free(s);
	diff__free(d);
	/* last, so that without xmllint every check above has run */
	if (system("command -v xmllint >/dev/null 2>&1")) {
		unlink(path);
		cr_skip_test("checking the SVG is well-formed needs xmllint (libxml2-utils)");
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	cr_expect_eq(system(cmd), 0, "xmllint rejected the SVG");
	unlink(path);
}

/* view_svg on the shared scene of tests/util_report.c */
static char *scene_svg(unsigned kinds, bool icicle)
{
	struct filter f = { .kinds = kinds };
	struct report_ctx ctx = { .filter = &f, .opts = { .icicle = icicle } };
	struct model *m;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	cr_assert_eq(rc_write_scene(paths[0], NULL), 0);
	cr_assert_eq(model__load(paths[0], &m), 0);
	ctx.model = m;
	cr_assert_eq(filter__bind(&f, m), 0);
	cr_assert_eq(resolver__new(m, NULL, &ctx.res), 0);
	out = open_memstream(&buf, &len);
	cr_assert_not_null(out);
	cr_assert_eq(view_svg(&ctx, out), 0);
	fclose(out);
	resolver__free(ctx.res);
	filter__free(&f);
	model__free(m);
	return buf;
}

TestSuite(svg_report, .init = setup, .fini = teardown);

Test(svg_report, kind_title_unit_and_palette)
{
	char *off = scene_svg(0, false), *cpu = scene_svg(1u << CAP_KIND_CPU, true);
	char *bio = scene_svg(1u << CAP_KIND_BIO, false);
	const char *p;

	/* off-CPU wins when present, as with --folded: us, blues */
	cr_expect_not_null(strstr(off, ">Off-CPU Time Flame Graph<"));
	cr_expect_not_null(strstr(off, "host testhost, 2026-01-02T03:04:05.000000+00:00 + "
				       "3.000 s, 10 off-CPU intervals"));
	p = strstr(off, "<title>do_nanosleep (4,600 us");
	cr_assert_not_null(p, "%s", off);
	cr_expect_not_null(strstr(p, "fill=\"rgb("));
	cr_expect_null(strstr(cpu, "Off-CPU"));
	cr_expect_not_null(strstr(cpu, ">CPU Flame Graph<"));
	cr_expect_not_null(strstr(cpu, "<title>ext4_file_read_iter (1 samples"), "%s", cpu);
	cr_expect_not_null(strstr(bio, ">Block I/O Flame Graph<"));
	/* 1 MiB discarded by fstrim on sda */
	cr_expect_not_null(strstr(bio, "<title>fstrim (1,048,576 bytes"), "%s", bio);
	free(off);
	free(cpu);
	free(bio);
}

/* A label of wide glyphs ("vm_mmap" in a diff of real captures) must still
 * fit its box: 'm' counts a whole font size, not the 0.59 average. */
Test(svg_report, wide_glyph_labels_fit)
{
	const char *wide[] = { "mmmmmmmmmmmmmmmmmmmm" }, *rest[] = { "z" };
	struct flame_opts o = { .width = 1020 };
	struct flame *f;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert_not_null(out);
	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, wide, 1, 20), 0);	/* 200 px */
	cr_assert_eq(flame__add(f, rest, 1, 80), 0);
	cr_assert_eq(flame__write_svg(f, &o, out), 0);
	fclose(out);
	/* (200 - 6) px = 1616 hundredths of 12 px: 14 m (1400) and ".." (118) */
	cr_expect_not_null(strstr(buf, ">mmmmmmmmmmmmmm..</text>"), "%s", buf);
	free(buf);
	flame__free(f);
}
