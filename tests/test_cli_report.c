// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `stkrec report` and `stkrec script` as a user runs them: exit codes,
 * one-line diagnostics, usage errors, and the same bytes as the library
 * golden files. Runs $STKREC (default build/stkrec).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/util_report.h"

static char *cap, *out_path, *err_path;
static const char *bin;

static void setup(void)
{
	bin = getenv("STKREC") ? getenv("STKREC") : "build/stkrec";
	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	cap = rc_tmpname("cli");
	out_path = rc_tmpname("out");
	err_path = rc_tmpname("err");
	cr_assert_eq(rc_write_scene(cap, NULL), 0);
}

static void teardown(void)
{
	if (!cap)
		return;
	unlink(cap);
	unlink(out_path);
	unlink(err_path);
	free(cap);
	free(out_path);
	free(err_path);
	cap = NULL;
}

/* Run "stkrec ARGS" (args may use %1$s for the scene capture); exit code. */
static int sh(const char *args)
{
	char cmd[2048], a[1024];
	int st;

	snprintf(a, sizeof(a), args, cap);
	snprintf(cmd, sizeof(cmd), "TZ=UTC %s %s >%s 2>%s", bin, a, out_path, err_path);
	st = system(cmd);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static char *out(void)
{
	return rc_slurp(out_path, NULL);
}

static char *err(void)
{
	return rc_slurp(err_path, NULL);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

TestSuite(report_cli, .init = setup, .fini = teardown);

Test(report_cli, unreadable_is_4_with_one_line)
{
	char *e;

	cr_assert_eq(sh("report -i /nonexistent/x.cap"), 4);
	e = err();
	cr_assert_str_eq(e, "stkrec: /nonexistent/x.cap: No such file or directory\n");
	free(e);
	cr_assert_eq(sh("script -i /etc/hostname"), 4);
	e = err();
	cr_assert_eq(lines(e), 1, "%s", e);
	cr_assert(!strncmp(e, "stkrec: /etc/hostname: ", 23), "%s", e);
	free(e);
}

Test(report_cli, recovered_is_3_with_output_and_warning)
{
	struct rc_opts o = { .truncate = true };
	char *s, *e;

	cr_assert_eq(rc_write_scene(cap, &o), 0);
	cr_assert_eq(sh("report -i %1$s"), 3);
	s = out();
	e = err();
	cr_assert_not_null(strstr(s, "# WARNING: output is partial: "));
	cr_assert_not_null(strstr(s, "[k] hrtimer_nanosleep"));
	cr_assert_eq(lines(e), 1, "%s", e);
	cr_assert(!strncmp(e, "stkrec: warning: ", 17), "%s", e);
	cr_assert_not_null(strstr(e, "output is partial"));
	free(s);
	free(e);
	cr_assert_eq(sh("script -i %1$s -e offcpu"), 3);
}

Test(report_cli, usage_errors_are_2)
{
	static const char *const bad[] = {
		"report --no-such-option", "report -i", "report -u -k", "report -U -K",
		"report --top-waits --biotop", "report --folded --top-waits",
		"report -p abc", "report -p 1,", "report -m x", "report --json",
		"report -d", "report --biotop 0", "report --biotop 1 0", "report extra",
		"report -e disk", "report --sort comm,comm", "report --time 9,1 -i %1$s",
		"report --time bogus", "report -m 10 -M 5", "report --folded -g",
		"script -g", "script --top-waits", "script -r 5",
	};
	size_t i;
	char *e;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(sh(bad[i]), 2, "'%s' should be a usage error", bad[i]);
		e = err();
		cr_assert_not_null(strstr(e, "Try 'stkrec "), "%s: %s", bad[i], e);
		free(e);
	}
}

Test(report_cli, help_with_examples)
{
	char *s;

	cr_assert_eq(sh("report -h"), 0);
	s = out();
	cr_assert_not_null(strstr(s, "examples:"));
	cr_assert_not_null(strstr(s, "--pid"));
	free(s);
	cr_assert_eq(sh("script -h"), 0);
	s = out();
	cr_assert_not_null(strstr(s, "examples:"));
	free(s);
}

static void same_as_golden(const char *args, const char *golden)
{
	const char *src = getenv("STKREC_SRCDIR");
	char path[512], *want, *got;

	snprintf(path, sizeof(path), "%s/tests/golden/%s", src ? src : ".", golden);
	cr_assert_eq(sh(args), 0);
	want = rc_slurp(path, NULL);
	got = out();
	cr_assert_not_null(want);
	cr_assert_str_eq(got, want);
	free(want);
	free(got);
}

Test(report_cli, outputs_match_golden)
{
	char *e;

	same_as_golden("report -i %1$s", "report_perf.txt");
	same_as_golden("report -i %1$s -g -e offcpu", "report_perf_g.txt");
	/* both off-CPU and CPU present: a note says which one is folded */
	same_as_golden("report -i %1$s --folded", "report_folded.txt");
	e = err();
	cr_assert_str_eq(e, "stkrec: warning: folded: off-CPU time shown; "
			    "'-e cpu' gives the CPU samples\n");
	free(e);
	same_as_golden("report -i %1$s -f -d -a --pid -e offcpu", "report_folded_dap.txt");
	same_as_golden("report -i %1$s --top-waits", "report_topwaits.txt");
	same_as_golden("report -i %1$s --top-waits --json -r 2", "report_topwaits.json");
	same_as_golden("report -i %1$s --biotop", "report_biotop.txt");
	same_as_golden("script -i %1$s", "report_script.txt");
	same_as_golden("script -i %1$s --folded", "report_script_folded.txt");
}

Test(report_cli, default_input_file)
{
	char dir[] = "/tmp/stkrec-cli-XXXXXX", cmd[1024], path[64], *got, *want, *e;
	int st;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp %s %s/stkrec.cap && cd %s && TZ=UTC %s%s report "
		 "--folded -e cpu >out 2>err", cap, dir, dir, *bin == '/' ? "" : "$OLDPWD/",
		 bin);
	st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(path, sizeof(path), "%s/out", dir);
	got = rc_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/err", dir);
	e = rc_slurp(path, NULL);
	/* ./stkrec.cap read whole: the same bytes as with -i naming it */
	cr_assert_eq(sh("report -i %1$s --folded -e cpu"), 0);
	want = out();
	cr_assert_not_null(got);
	cr_assert_not_null(want);
	cr_assert_str_eq(want, "app-worker;app+0x1050;app+0x1200;libc.so.6+0x2345;"
			       "do_syscall_64;ext4_file_read_iter 1\n"
			       "app;app+0x1050;app+0x1100;libc.so.6+0x1234 2\n"
			       "kworker/0:1;do_syscall_64;ext4_file_read_iter 1\n");
	cr_assert_str_eq(got, want);
	cr_assert_str_eq(e, "");
	free(got);
	free(want);
	free(e);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* ---- a binary replaced since the recording --------------------------------- */

static const uint8_t old_build[20] = { 0x0b, 0x50, 0x1e, 0x7e }; /* no file has it */

/* The scene, its pid 500 running `exe` as recorded under another build. */
static void replaced_scene(const char *exe)
{
	struct rc_opts o = { .real_elf = exe, .real_elf_off = { 0x1000, 0x2000 },
			     .real_bid = old_build, .real_bid_size = 20 };

	cr_assert_eq(rc_write_scene(cap, &o), 0);
}

/* A capture whose one thread ran in two replaced objects, a then b. */
static void two_replaced(const char *a, const char *b)
{
	uint64_t ips[2] = { 0x401000, 0x501000 };
	struct cap_writer *w = rc_open(cap);

	cr_assert_not_null(w);
	cr_assert_eq(rc_string(w, 1, a) ?: rc_string(w, 2, b) ?:
		     rc_thread(w, RC_T0, 7, 7, 0, "two") ?:
		     rc_map(w, RC_T0, 7, 0x400000, 0x480000, 0, 1) ?:
		     rc_map(w, RC_T0, 7, 0x500000, 0x580000, 0, 2) ?:
		     cap_writer__stack(w, 1, CAP_STACK_USER, ips, 2) ?:
		     rc_cpu(w, RC_T0 + RC_MS, 7, 7, 1, CAP_STACK_NONE), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
}

Test(report_cli, replaced_binary_warns_by_default)
{
	char exe[PATH_MAX], want[3 * PATH_MAX], fold[3 * PATH_MAX], *s, *e, *base;

	cr_assert_not_null(realpath(bin, exe));
	base = strrchr(exe, '/') + 1;
	snprintf(fold, sizeof(fold), "realprog;%s+0x2000;%s+0x1000 2\n", base, base);
	/* the scene's own objects are missing, not mismatched: no warning */
	cr_assert_eq(sh("report -i %1$s"), 0);
	e = err();
	cr_assert_str_eq(e, "");
	free(e);
	replaced_scene(exe);
	snprintf(want, sizeof(want), "stkrec: warning: %s: %s did not match its recorded "
		 "build ID (frames shown as %s+0xOFFSET); see --symfs\n", cap, exe, base);
	cr_assert_eq(sh("report -i %1$s --folded -e cpu -p 500"), 0);
	s = out();
	e = err();
	cr_assert_str_eq(s, fold);
	cr_assert_str_eq(e, want);
	free(s);
	free(e);
	cr_assert_eq(sh("report -i %1$s"), 0);
	e = err();
	cr_assert_str_eq(e, want);
	free(e);
	cr_assert_eq(sh("script -i %1$s -p 500"), 0);
	e = err();
	cr_assert_str_eq(e, want);
	free(e);
	/* -v adds the statistics line after it */
	cr_assert_eq(sh("script -i %1$s -p 500 -v"), 0);
	e = err();
	cr_assert(!strncmp(e, want, strlen(want)), "%s", e);
	cr_assert_not_null(strstr(e + strlen(want), "1 build-ID mismatches"), "%s", e);
	cr_assert_eq(lines(e), 2, "%s", e);
	free(e);
}

Test(report_cli, replaced_binaries_counted_first_named)
{
	char a[PATH_MAX], b[PATH_MAX], want[3 * PATH_MAX], fold[PATH_MAX + 64], *s, *e;

	cr_assert_not_null(realpath(bin, a));
	cr_assert_not_null(realpath("/proc/self/exe", b));
	snprintf(fold, sizeof(fold), "two;%s+0x1000;%s+0x1000 1\n", strrchr(b, '/') + 1,
		 strrchr(a, '/') + 1);
	two_replaced(a, b);
	snprintf(want, sizeof(want), "stkrec: warning: %s: 2 files did not match their "
		 "recorded build IDs, %s the first (frames shown as module+0xOFFSET); "
		 "see --symfs\n", cap, a);
	cr_assert_eq(sh("report -i %1$s --folded"), 0);
	s = out();
	e = err();
	cr_assert_str_eq(s, fold);
	cr_assert_str_eq(e, want);
	free(s);
	free(e);
}

/* Filters that match nothing: one line on stderr, no empty tables, exit
 * 0; a JSON view still prints its (empty) document. */
Test(report_cli, no_match_is_one_line)
{
	static const char *const views[] = {
		"report -i %1$s -p 424242", "report -i %1$s --folded -p 424242",
		"report -i %1$s -g --comm nosuchcomm", "report -i %1$s --top-waits -t 424242",
		"report -i %1$s --biotop -p 424242", "script -i %1$s -p 424242",
		"script -i %1$s --folded --time 9999,",
	};
	char want[1024], *s, *e;
	size_t i;

	snprintf(want, sizeof(want), "stkrec: warning: %s: no events match the filters\n", cap);
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		cr_assert_eq(sh(views[i]), 0, "%s", views[i]);
		s = out();
		e = err();
		cr_assert_str_eq(s, "", "%s printed:\n%s", views[i], s);
		cr_assert_str_eq(e, want, "%s", views[i]);
		free(s);
		free(e);
	}
	cr_assert_eq(sh("report -i %1$s --top-waits --json -p 424242"), 0);
	s = out();
	cr_assert_str_eq(s, "[]\n");
	free(s);
}

/* -K on CPU samples taken in user mode (no kernel frames): the same
 * marker in every view, not "[unknown]" in one and nothing in another. */
Test(report_cli, kernel_only_marker_in_every_view)
{
	static const struct {
		const char *args, *has;
	} views[] = {
		{ "report -i %1$s -e cpu -K", "  [k] [no kernel frames]\n" },
		{ "report -i %1$s -e cpu -K -g", "  [k] [no kernel frames]\n" },
		{ "report -i %1$s -e cpu -K --folded", "\napp;[no kernel frames] 2\n" },
		{ "report -i %1$s -e cpu -K --svg -", "[no kernel frames]" },
		{ "script -i %1$s -e cpu -K -p 100", " [no kernel frames] ([unknown])\n" },
		{ "script -i %1$s -e cpu -K --folded -p 100", ": cpu: [no kernel frames]\n" },
	};
	char *s;
	size_t i;

	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		cr_assert_eq(sh(views[i].args), 0, "%s", views[i].args);
		s = out();
		cr_assert_not_null(strstr(s, views[i].has), "%s lacks '%s':\n%s", views[i].args,
				   views[i].has, s);
		free(s);
	}
}
