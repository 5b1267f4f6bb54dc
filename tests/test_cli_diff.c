// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `stkrec diff` and `stkrec report --svg` as a user runs them: usage errors,
 * exit codes, and, end to end, the real recorder on cpuburn with its CPU
 * split flipped between two captures (25/75, then 75/25): diff must find
 * burn_a grown and burn_b shrunk by about 50 points. The flame graphs of
 * those captures and of the sleeper's off-CPU time are checked by xmllint
 * and in headless Chromium (tests/browser/flame_check.js). Recording skips,
 * visibly, without root or BPF; the browser checks without chromium/node.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/util_e2e.h"
#include "tests/util_report.h"

/* cpuburn's samples are its CPU time: run ahead of any other load on the
 * machine, so that both captures have samples enough to show the split */
#define NICE "nice -n -10"

static char *caps[2], *out_path, *err_path, svg_path[PATH_MAX];
static const char *bin;

static void setup(void)
{
	bin = e2e_env("STKREC", "build/stkrec");
	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	caps[0] = rc_tmpname("cdiffa");
	caps[1] = rc_tmpname("cdiffb");
	out_path = rc_tmpname("cdiff-out");
	err_path = rc_tmpname("cdiff-err");
	/* the browser shows a file as SVG by its name */
	snprintf(svg_path, sizeof(svg_path), "%s.svg", out_path);
}

static void teardown(void)
{
	char *all[] = { caps[0], caps[1], out_path, err_path };

	if (svg_path[0])
		unlink(svg_path);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (all[i])
			unlink(all[i]);
		free(all[i]);
	}
	caps[0] = caps[1] = out_path = err_path = NULL;
}

/* "stkrec ARGS" with stdout and stderr kept; the exit status. */
static int run(const char *args)
{
	return e2e_shell("TZ=UTC %s %s >%s 2>%s", bin, args, out_path, err_path);
}

static char *out(void)
{
	char *s = rc_slurp(out_path, NULL);

	cr_assert_not_null(s);
	return s;
}

static char *err(void)
{
	char *s = rc_slurp(err_path, NULL);

	cr_assert_not_null(s);
	return s;
}


static void assert_xml(const char *path)
{
	if (!e2e_have("xmllint"))
		cr_skip_test("xmllint not installed (Debian libxml2-utils)");
	cr_assert_eq(e2e_shell("xmllint --noout %s", path), 0, "xmllint rejected %s", path);
}

/* ---- synthetic captures: usage and exit codes ---------------------------- */

TestSuite(diff_cli, .init = setup, .fini = teardown);

Test(diff_cli, help_and_usage_errors)
{
	char args[PATH_MAX * 3], *s;

	cr_assert_eq(rc_write_scene(caps[0], NULL), 0);
	cr_assert_eq(rc_write_scene(caps[1], NULL), 0);
	cr_assert_eq(run("diff -h"), 0);
	s = out();
	cr_expect_not_null(strstr(s, "usage: stkrec diff"));
	cr_expect_not_null(strstr(s, "examples:"));
	cr_expect_not_null(strstr(s, "--no-normalize"));
	free(s);
	cr_expect_eq(run("diff"), 2);
	snprintf(args, sizeof(args), "diff %s", caps[0]);
	cr_expect_eq(run(args), 2, "one capture");
	snprintf(args, sizeof(args), "diff -e cpu,offcpu %s %s", caps[0], caps[1]);
	cr_expect_eq(run(args), 2, "two kinds");
	s = err();
	cr_expect_not_null(strstr(s, "one kind"), "%s", s);
	free(s);
	snprintf(args, sizeof(args), "diff --normalize --no-normalize %s %s", caps[0], caps[1]);
	cr_expect_eq(run(args), 2);
	snprintf(args, sizeof(args), "diff --folded --svg x.svg %s %s", caps[0], caps[1]);
	cr_expect_eq(run(args), 2);
	snprintf(args, sizeof(args), "diff --icicle %s %s", caps[0], caps[1]);
	cr_expect_eq(run(args), 2);
	snprintf(args, sizeof(args), "diff --bogus %s %s", caps[0], caps[1]);
	cr_expect_eq(run(args), 2);
	cr_expect_eq(run("report --icicle"), 2, "--icicle needs --svg");
}

Test(diff_cli, unreadable_4_damaged_3)
{
	struct rc_opts cut = { .truncate = true };
	char args[PATH_MAX * 3], *s;

	cr_assert_eq(rc_write_scene(caps[0], NULL), 0);
	cr_assert_eq(rc_write_scene(caps[1], &cut), 0);
	snprintf(args, sizeof(args), "diff %s /nonexistent/b.cap", caps[0]);
	cr_expect_eq(run(args), 4);
	s = err();
	cr_expect_not_null(strstr(s, "/nonexistent/b.cap"), "%s", s);
	free(s);
	snprintf(args, sizeof(args), "diff -e offcpu %s %s", caps[0], caps[1]);
	cr_expect_eq(run(args), 3);
	s = err();
	cr_expect_not_null(strstr(s, "output is partial"), "%s", s);
	free(s);
	s = out();
	cr_expect_not_null(strstr(s, "# stkrec diff: off-CPU intervals, values in us\n"), "%s", s);
	free(s);
}

/* A capture against itself: every stack on both sides, nothing changed. */
Test(diff_cli, same_capture_folded_and_default_kind)
{
	char args[PATH_MAX * 3], *s, *line;
	int n = 0;

	cr_assert_eq(rc_write_scene(caps[0], NULL), 0);
	snprintf(args, sizeof(args), "diff --folded %s %s", caps[0], caps[0]);
	cr_assert_eq(run(args), 0);
	s = out();
	/* no CPU samples in both? the scene has them: CPU by default */
	cr_expect_not_null(strstr(s, "app;app+0x1050;app+0x1100;libc.so.6+0x1234 2 2\n"), "%s", s);
	for (line = strtok(s, "\n"); line; line = strtok(NULL, "\n"), n++) {
		char *b = strrchr(line, ' '), *a;

		cr_assert_not_null(b);
		*b++ = '\0';
		a = strrchr(line, ' ');
		cr_assert_not_null(a);
		cr_expect_str_eq(a + 1, b, "%s", line);
	}
	cr_expect_eq(n, 3);
	free(s);
	snprintf(args, sizeof(args), "diff -e bio %s %s", caps[0], caps[0]);
	cr_assert_eq(run(args), 0);
	s = out();
	cr_expect_not_null(strstr(s, "\ngrew:\nshrank:\n"), "nothing changed:\n%s", s);
	free(s);
}

/* A binary replaced since B was recorded: B's frames stay module+offset,
 * and diff says so for B alone. */
Test(diff_cli, replaced_binary_warns_for_its_capture)
{
	static const uint8_t old_build[20] = { 0x0b, 0x50, 0x1e, 0x7e };
	struct rc_opts o = { .real_bid = old_build, .real_bid_size = 20,
			     .real_elf_off = { 0x1000, 0x2000 } };
	char exe[PATH_MAX], args[PATH_MAX * 3], want[PATH_MAX * 3], *e;

	cr_assert_not_null(realpath(bin, exe));
	o.real_elf = exe;
	cr_assert_eq(rc_write_scene(caps[0], NULL), 0);
	cr_assert_eq(rc_write_scene(caps[1], &o), 0);
	snprintf(args, sizeof(args), "diff -e cpu --folded %s %s", caps[0], caps[1]);
	cr_assert_eq(run(args), 0);
	snprintf(want, sizeof(want), "stkrec: warning: %s: %s did not match its recorded "
		 "build ID (frames shown as %s+0xOFFSET); see --symfs\n", caps[1], exe,
		 strrchr(exe, '/') + 1);
	e = err();
	cr_expect_str_eq(e, want);
	free(e);
}

static void write_bio(struct cap_writer *w, uint32_t minor, uint32_t bytes)
{
	struct cap_bio b = { .issue_time = RC_T0, .complete_time = RC_T0 + RC_MS,
			     .bytes = bytes, .tid = 10, .pid = 10, .major = 8, .minor = minor,
			     .op = CAP_BIO_WRITE, .comm = "app" };

	cr_assert_eq(cap_writer__append(w, CAP_REC_BIO, &b, sizeof(b), NULL, 0), 0);
}

/* A capture of `kb` KiB written by app to sda (if kb), sdb_bytes to sdb
 * (if any) and `samples` CPU samples (no stacks); nothing else. */
static void write_some(const char *path, unsigned kb, unsigned samples, unsigned sdb_bytes)
{
	struct cap_blockdev sda = { .major = 8, .minor = 0, .name = "sda" };
	struct cap_blockdev sdb = { .major = 8, .minor = 16, .name = "sdb" };
	struct cap_writer *w = rc_open(path);
	unsigned i;

	cr_assert_not_null(w);
	cr_assert_eq(rc_thread(w, RC_T0, 10, 10, 0, "app") ?:
		     cap_writer__append(w, CAP_REC_BLOCKDEV, &sda, sizeof(sda), NULL, 0) ?:
		     cap_writer__append(w, CAP_REC_BLOCKDEV, &sdb, sizeof(sdb), NULL, 0), 0);
	if (kb)
		write_bio(w, 0, kb * 1024);
	if (sdb_bytes)
		write_bio(w, 16, sdb_bytes);
	for (i = 0; i < samples; i++)
		cr_assert_eq(rc_cpu(w, RC_T0 + i, 10, 10, CAP_STACK_NONE, CAP_STACK_NONE), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
}

static void write_only(const char *path, unsigned kb, unsigned samples)
{
	write_some(path, kb, samples, 0);
}

/* The first two lines of the output, and stderr, of `stkrec diff ARGS A B`. */
static void expect_diff(const char *args, const char *head, const char *errs)
{
	char cmd[PATH_MAX * 3], *s, *e;

	snprintf(cmd, sizeof(cmd), "diff %s %s %s", args, caps[0], caps[1]);
	cr_assert_eq(run(cmd), 0, "%s", cmd);
	s = out();
	e = err();
	cr_expect(!strncmp(s, head, strlen(head)), "%s:\n%s", cmd, s);
	cr_expect_str_eq(e, errs, "%s", cmd);
	free(s);
	free(e);
}

Test(diff_cli, default_kind_is_one_with_events)
{
	/* block I/O only: bio, not an empty off-CPU table */
	write_only(caps[0], 64, 0);
	write_only(caps[1], 256, 0);
	expect_diff("", "# stkrec diff: block I/O requests, values in bytes\n"
		    "# kind: bio, the first of cpu, offcpu, bio with events in both captures "
		    "(-e chooses)\n", "");
	expect_diff("--folded", "app;sda 65536 65536\n",
		    "stkrec: warning: diff: B normalized to A's total (B values x0.2500): the "
		    "totals differ by more than 2x (--no-normalize: raw values)\n");
	/* -e as given: no line about the choice */
	expect_diff("-e bio", "# stkrec diff: block I/O requests, values in bytes\n# A: ", "");
	/* CPU in both wins over bio in both */
	write_only(caps[0], 64, 3);
	write_only(caps[1], 64, 3);
	expect_diff("", "# stkrec diff: CPU samples, values in samples\n# kind: cpu, ", "");
	/* nothing in both: the first in either */
	write_only(caps[0], 0, 3);
	write_only(caps[1], 64, 0);
	expect_diff("", "# stkrec diff: CPU samples, values in samples\n"
		    "# kind: cpu, no kind has events in both captures: the first of cpu, "
		    "offcpu, bio in either (-e chooses)\n", "");
}

Test(diff_cli, nothing_to_compare_is_noted)
{
	write_only(caps[0], 0, 0);
	write_only(caps[1], 0, 0);
	expect_diff("", "# stkrec diff: CPU samples, values in samples\n"
		    "# kind: cpu, neither capture has events (-e chooses)\n",
		    "stkrec: warning: diff: neither capture has cpu events: nothing to compare\n");
	write_only(caps[0], 64, 0);
	write_only(caps[1], 64, 0);
	expect_diff("-e offcpu", "# stkrec diff: off-CPU intervals, values in us\n# A: ",
		    "stkrec: warning: diff: neither capture has offcpu events: nothing to "
		    "compare\n");
	expect_diff("-p 999 --folded", "",
		    "stkrec: warning: diff: no bio events of either capture pass the filters: "
		    "nothing to compare\n");
}

/* B 1024x A: B's 512 bytes to sdb scale to 0.5 byte, rounded down to
 * "app;sdb 0 0", which is left out, and the note says so. */
Test(diff_cli, folded_normalized_drops_zero_stacks)
{
	write_some(caps[0], 1, 0, 0);
	write_some(caps[1], 1024, 0, 512);
	expect_diff("--folded", "app;sda 1024 1024\n",
		    "stkrec: warning: diff: B normalized to A's total (B values x0.0010): the "
		    "totals differ by more than 2x (--no-normalize: raw values); 1 stack 0 on "
		    "both sides left out\n");
	expect_diff("--folded --no-normalize", "app;sda 1024 1048576\napp;sdb 0 512\n", "");
	/* asked for: no note */
	expect_diff("--folded -n", "app;sda 1024 1024\n", "");
}

TestSuite(svg_cli, .init = setup, .fini = teardown);

Test(svg_cli, report_svg_to_stdout_and_file)
{
	char args[PATH_MAX * 3], *s;

	cr_assert_eq(rc_write_scene(caps[0], NULL), 0);
	snprintf(args, sizeof(args), "report -i %s --svg -", caps[0]);
	cr_assert_eq(run(args), 0);
	s = out();
	cr_expect_not_null(strstr(s, "Off-CPU Time Flame Graph"));
	cr_expect_not_null(strstr(s, "host testhost, 2026-01-02T03:04:05.000000+00:00 + "
				     "3.000 s, 10 off-CPU intervals"), "%.2000s", s);
	cr_expect_not_null(strstr(s, "do_nanosleep"));
	free(s);
	snprintf(args, sizeof(args), "report -i %s -e cpu --svg %s --icicle", caps[0], caps[1]);
	cr_assert_eq(run(args), 0);
	s = rc_slurp(caps[1], NULL);
	cr_assert_not_null(s);
	cr_expect_not_null(strstr(s, "CPU Flame Graph"));
	cr_expect_not_null(strstr(s, "ext4_file_read_iter"));
	free(s);
	assert_xml(caps[1]);
	snprintf(args, sizeof(args), "report -i %s -e bio --svg -", caps[0]);
	cr_assert_eq(run(args), 0);
	s = out();
	cr_expect_not_null(strstr(s, "Block I/O Flame Graph"));
	cr_expect_not_null(strstr(s, "<title>fstrim ("), "%.3000s", s);
	free(s);
	snprintf(args, sizeof(args), "report -i %s --svg /nonexistent/x.svg", caps[0]);
	cr_expect_eq(run(args), 1);
}

/* ---- the real recorder ----------------------------------------------------- */

struct frow {
	long long a, b, change;
	char pct[32];
	double sa, sb, dpp;
};

/* The row of name in the table after heading; false when absent. */
static bool find_row(const char *text, const char *heading, const char *name, struct frow *r)
{
	const char *sec = strstr(text, heading), *end, *p;
	char key[128];

	if (!sec)
		return false;
	end = strstr(sec + 1, "\n\n");
	snprintf(key, sizeof(key), "  %s\n", name);
	p = strstr(sec, key);
	if (!p || (end && p > end))
		return false;
	while (p > sec && p[-1] != '\n')
		p--;
	return sscanf(p, "%lld %lld %lld %31s %lf%% %lf%% %lf", &r->a, &r->b, &r->change,
		      r->pct, &r->sa, &r->sb, &r->dpp) == 7;
}

/* Sum of the last field of every line of `stkrec ARGS` (report --folded). */
static unsigned long long folded_sum(const char *args)
{
	unsigned long long sum = 0;
	char *s, *line;

	cr_assert_eq(run(args), 0, "%s", args);
	s = out();
	for (line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
		sum += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	free(s);
	return sum;
}

static void check_split(const char *table)
{
	struct frow a, b;

	cr_assert(find_row(table, "\nFunctions", "burn_a", &a), "%s", table);
	cr_assert(find_row(table, "\nFunctions", "burn_b", &b), "%s", table);
	/* 25% -> 75% of the work units: about +50 and -50 points */
	cr_expect(a.dpp > 30 && a.dpp < 70, "burn_a %+.2f pp\n%s", a.dpp, table);
	cr_expect(b.dpp < -30 && b.dpp > -70, "burn_b %+.2f pp\n%s", b.dpp, table);
	/* signs hold raw or normalized (2x apart at most when raw) */
	cr_expect(a.change > 0 && a.b > a.a, "burn_a %lld -> %lld", a.a, a.b);
	cr_expect(b.change < 0 && b.a > b.b, "burn_b %lld -> %lld", b.a, b.b);
	cr_expect(a.sa > 10 && a.sa < 40 && a.sb > 60 && a.sb < 90, "burn_a %.2f%% -> %.2f%%",
		  a.sa, a.sb);
	cr_expect(a.pct[0] == '+' && atof(a.pct + 1) > 100, "burn_a %s", a.pct);
	cr_expect(b.pct[0] == '-' && atof(b.pct + 1) > 40, "burn_b %s", b.pct);
}

/* --folded: "stack a b" lines whose sums are each capture's folded total. */
static void check_folded(void)
{
	unsigned long long sa = 0, sb = 0, fa, fb, burn[2][2] = { { 0 } };
	char args[PATH_MAX * 3], *s, *line, *pb, *pa;

	snprintf(args, sizeof(args), "report -i %s --folded -e cpu --comm cpuburn", caps[0]);
	fa = folded_sum(args);
	snprintf(args, sizeof(args), "report -i %s --folded -e cpu --comm cpuburn", caps[1]);
	fb = folded_sum(args);
	snprintf(args, sizeof(args), "diff --folded --no-normalize --comm cpuburn %s %s",
		 caps[0], caps[1]);
	cr_assert_eq(run(args), 0);
	s = out();
	for (line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		pb = strrchr(line, ' ');
		cr_assert_not_null(pb, "%s", line);
		*pb++ = '\0';
		pa = strrchr(line, ' ');
		cr_assert(pa && pa[1] >= '0' && pa[1] <= '9' && !strchr(pa, ';'), "%s", line);
		*pa++ = '\0';
		cr_assert(!strncmp(line, "cpuburn;", 8), "%s", line);
		sa += strtoull(pa, NULL, 10);
		sb += strtoull(pb, NULL, 10);
		for (int i = 0; i < 2; i++) {
			size_t n = strlen(line);

			if (n > 7 && !strcmp(line + n - 7, i ? ";burn_b" : ";burn_a")) {
				burn[i][0] += strtoull(pa, NULL, 10);
				burn[i][1] += strtoull(pb, NULL, 10);
			}
		}
	}
	cr_expect_eq(sa, fa, "A: diff %llu, report --folded %llu", sa, fa);
	cr_expect_eq(sb, fb, "B: diff %llu, report --folded %llu", sb, fb);
	/* 999 Hz for at most 1.5 s of one busy thread; far fewer when other
	 * work takes the CPUs, but enough to see a 25/75 split */
	cr_expect(sa >= 20 && sa < 1700 && sb >= 20 && sb < 1700, "totals %llu %llu", sa, sb);
	/* shares: burn_a about 25% of A and 75% of B, burn_b the reverse */
	cr_expect(burn[0][0] * 100 < sa * 40 && burn[0][1] * 100 > sb * 60 &&
		  burn[1][0] * 100 > sa * 60 && burn[1][1] * 100 < sb * 40,
		  "burn_a %llu/%llu -> %llu/%llu, burn_b %llu -> %llu", burn[0][0], sa,
		  burn[0][1], sb, burn[1][0], burn[1][1]);
	free(s);
}

TestSuite(diff_e2e, .init = setup, .fini = teardown);

Test(diff_e2e, cpuburn_split_flipped, .timeout = 120)
{
	char args[PATH_MAX * 3], *s;

	e2e_record(bin, caps[0], "-e cpu -F 999", NICE, "cpuburn", "1500 25", out_path);
	e2e_record(bin, caps[1], "-e cpu -F 999", NICE, "cpuburn", "1500 75", out_path);
	snprintf(args, sizeof(args), "diff --comm cpuburn %s %s", caps[0], caps[1]);
	cr_assert_eq(run(args), 0);
	s = out();
	cr_expect(!strncmp(s, "# stkrec diff: CPU samples, values in samples\n", 46), "%s", s);
	check_split(s);
	free(s);
	check_folded();
}

/* ---- flame graphs of real captures in a browser ----------------------------- */

/* flame_check.js on svg: expected frames, zoom on click; screenshots are
 * kept in $STKREC_SHOTS when set. */
static void browser_check(const char *svg, const char *tag, const char *args)
{
	const char *keep = getenv("STKREC_SHOTS"), *dir = e2e_browser_dir();
	char tmp[] = "/tmp/stkrec-diffshot-XXXXXX", png[PATH_MAX];
	int rc;

	cr_assert_not_null(mkdtemp(tmp));
	snprintf(png, sizeof(png), "%s/%s.png", keep && *keep ? keep : tmp, tag);
	rc = e2e_shell("node '%s/flame_check.js' %s %s %s > %s/log 2>&1", dir, svg, png, args,
		       tmp);
	if (rc != 0)
		e2e_shell("cat %s/log", tmp);
	cr_assert_eq(rc, 0, "browser checks of %s failed", tag);
	cr_expect_eq(access(png, R_OK), 0, "screenshot written");
	e2e_shell("rm -rf %s", tmp);
}

static void expect_in_file(const char *path, const char *const *words, int n)
{
	char *s = rc_slurp(path, NULL);

	cr_assert_not_null(s, "%s", path);
	for (int i = 0; i < n; i++)
		cr_expect_not_null(strstr(s, words[i]), "no '%s' in %s", words[i], path);
	free(s);
}

TestSuite(svg_e2e, .init = setup, .fini = teardown);

Test(svg_e2e, cpu_and_diff_flame_graphs_in_chromium, .timeout = 600)
{
	static const char *const cpu_words[] = { "CPU Flame Graph", "<title>burn_a (",
						 "<title>burn_b (", " CPU samples</text>" };
	static const char *const diff_words[] = { "Differential Flame Graph",
						  "<title>burn_a (", "<title>burn_b (" };
	char args[PATH_MAX * 3];

	e2e_record(bin, caps[0], "-e cpu -F 999", NICE, "cpuburn", "1000 25", out_path);
	e2e_record(bin, caps[1], "-e cpu -F 999", NICE, "cpuburn", "1000 75", out_path);
	snprintf(args, sizeof(args), "report -i %s --svg %s", caps[0], svg_path);
	cr_assert_eq(run(args), 0);
	assert_xml(svg_path);
	expect_in_file(svg_path, cpu_words, 4);
	browser_check(svg_path, "cpu", "--expect burn_a --expect burn_b --click burn_a");
	snprintf(args, sizeof(args), "diff --comm cpuburn --svg %s %s %s", svg_path, caps[0],
		 caps[1]);
	cr_assert_eq(run(args), 0);
	assert_xml(svg_path);
	expect_in_file(svg_path, diff_words, 3);
	browser_check(svg_path, "diff", "--expect burn_a --expect burn_b --click burn_a");
}

Test(svg_e2e, offcpu_flame_graph_in_chromium, .timeout = 300)
{
	/* sleeper_nap calls into libc without a frame pointer: frame-pointer
	 * unwinding skips it, as perf would; its callers are there */
	static const char *const words[] = { "Off-CPU Time Flame Graph", "<title>sleeper_loop (",
					     "<title>sleeper_thread (", " off-CPU intervals</text>",
					     "<title>do_nanosleep (" };
	char args[PATH_MAX * 3];

	e2e_record(bin, caps[0], "-e offcpu", "", "sleeper", "600 10", out_path);
	snprintf(args, sizeof(args), "report -i %s --svg %s", caps[0], svg_path);
	cr_assert_eq(run(args), 0);
	assert_xml(svg_path);
	expect_in_file(svg_path, words, 5);
	browser_check(svg_path, "offcpu", "--expect sleeper_loop --expect sleeper_thread"
		      " --click sleeper_loop");
}
