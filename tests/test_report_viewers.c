// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Wakeups in the viewers, end to end on workloads recorded with -e wakeup:
 * the Chrome trace's wakeup slices and flows against `stkrec script` and
 * `report --chain` (read back by tests/export_lines.py, which binds each
 * flow as Perfetto does and redoes the model's join), and the size of the
 * speedscope file per wait. Without root, python3 or chromium a test says
 * so and skips.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/util_e2e.h"
#include "tests/util_report.h"

static const char *bin;
static char dir[] = "/tmp/stkrec-viewers-XXXXXX";
static char cap[sizeof(dir) + 16];
static char *wout; /* the workload's output */

static void setup(void)
{
	bin = e2e_env("STKREC", "build/stkrec");
	if (access(bin, X_OK))
		cr_skip_test("no stkrec binary at %s", bin);
	if (!e2e_have("python3"))
		cr_skip_test("python3 not installed (Debian package python3)");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cap, sizeof(cap), "%s/cap", dir);
	wout = NULL;
}

static void teardown(void)
{
	free(wout);
	e2e_shell("rm -rf %s", dir);
	strcpy(dir + strlen(dir) - 6, "XXXXXX");
}

TestSuite(viewers_e2e, .init = setup, .fini = teardown);

static void record(const char *name, const char *args)
{
	char out[sizeof(dir) + 16];

	snprintf(out, sizeof(out), "%s/wout", dir);
	e2e_record(bin, cap, "-e offcpu,wakeup", "", name, args, out);
	wout = rc_slurp(out, NULL);
	cr_assert_not_null(wout);
}

/* tests/export_lines.py ARGS into dir/NAME; its exit status. */
static int lines(const char *name, const char *args)
{
	return e2e_shell("python3 %s/tests/export_lines.py %s > %s/%s",
			 e2e_env("STKREC_SRCDIR", "."), args, dir, name);
}

/* The file dir/name as a string. */
static char *slurp(const char *name)
{
	char path[sizeof(dir) + 32];
	char *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = rc_slurp(path, NULL);
	cr_assert_not_null(s, "%s", path);
	return s;
}

/* diff -u dir/a dir/b: no difference, and a not empty */
static void same(const char *a, const char *b)
{
	cr_assert_eq(e2e_shell("test -s %s/%s && diff -u %s/%s %s/%s > %s/diff", dir, a, dir, a,
			       dir, b, dir), 0, "%s and %s differ:\n%s", a, b, slurp("diff"));
}

/* The tid of the thread named comm in script's output. */
static long tid_of(const char *script, const char *comm)
{
	char key[32];
	const char *p;
	long pid, tid;

	snprintf(key, sizeof(key), " %s ", comm);
	p = strstr(script, key);
	cr_assert(p && sscanf(p + strlen(key), " %ld/%ld", &pid, &tid) == 2, "no %s in:\n%s",
		  comm, script);
	return tid;
}

/* The waits of wk-a on wk-b on wk-c on a timer: every wakeup is a slice
 * on its waker's track (script's wakeup lines, one for one), each that
 * ended a wait is one flow to that wait's end, and --chain's hops are the
 * flows and args.waited, hop by hop. */
Test(viewers_e2e, chrome_trace_draws_each_wakeup_of_wakechain, .timeout = 120)
{
	char args[256], *s;
	long a;

	record("wakechain", "chain 5");
	cr_assert_eq(e2e_shell("%s script -i %s --folded > %s/script && "
			       "%s report -i %s --chrome-trace %s/trace.json 2>/dev/null",
			       bin, cap, dir, bin, cap, dir), 0);
	snprintf(args, sizeof(args), "chrome %s/trace.json | LC_ALL=C sort", dir);
	cr_assert_eq(lines("export", args), 0, "the trace's events or flows: %s",
		     slurp("export"));
	snprintf(args, sizeof(args), "stripped %s/script | LC_ALL=C sort", dir);
	cr_assert_eq(lines("script.s", args), 0);
	same("export", "script.s");
	/* each pipe write and each timer that ended a wait, exactly */
	snprintf(args, sizeof(args), "flows %s/trace.json", dir);
	cr_assert_eq(lines("flows", args), 0);
	s = slurp("flows");
	cr_assert(strstr(s, "\nwk-b -> wk-a: 5\n") && strstr(s, "\nwk-c -> wk-b: 5\n"), "%s", s);
	cr_assert_not_null(strstr(s, "\n[hardirq] -> wk-c: "), "%s", s);
	free(s);
	/* --chain of wk-a: wk-b, then wk-c, then the timer */
	s = slurp("script");
	a = tid_of(s, "wk-a");
	free(s);
	cr_assert_eq(e2e_shell("%s report -i %s --chain %ld > %s/chain", bin, cap, a, dir), 0);
	snprintf(args, sizeof(args), "chainref %s/chain", dir);
	cr_assert_eq(lines("chain.ref", args), 0);
	snprintf(args, sizeof(args), "chain %s/trace.json %ld", dir, a);
	cr_assert_eq(lines("chain.trace", args), 0);
	same("chain.trace", "chain.ref");
	s = slurp("chain.ref");
	cr_assert(strstr(s, " by wk-b ") && strstr(s, " by wk-c ") && strstr(s, " by [hardirq]\n"),
		  "%s", s);
	free(s);
}

/* Its size in bytes over its waits in script's output, as README.md
 * measures it: pipewait 200 5's ~590 waits were 988 bytes each as evented
 * profiles, 47 as weighted samples. */
Test(viewers_e2e, speedscope_holds_a_wait_in_200_bytes, .timeout = 120)
{
	char args[256], *s, *p;
	long waits = 0, bytes;

	record("pipewait", "200 5");
	cr_assert_eq(e2e_shell("%s script -i %s --folded > %s/script && "
			       "%s report -i %s --speedscope %s/ss.json 2>/dev/null",
			       bin, cap, dir, bin, cap, dir), 0);
	snprintf(args, sizeof(args), "speedscope %s/ss.json | LC_ALL=C sort", dir);
	cr_assert_eq(lines("export", args), 0, "%s", slurp("export"));
	snprintf(args, sizeof(args), "script %s/script | LC_ALL=C sort", dir);
	cr_assert_eq(lines("script.s", args), 0);
	same("export", "script.s");
	s = slurp("script");
	for (p = s; (p = strstr(p, ": offcpu: ")); p++)
		waits++;
	free(s);
	s = slurp("ss.json");
	bytes = strlen(s);
	free(s);
	cr_assert_geq(waits, 400, "pipewait 200 5 waited %ld times", waits);
	cr_assert_leq(bytes, 200 * waits, "%ld bytes for %ld waits: %ld a wait", bytes, waits,
		      bytes / waits);
}

/* speedscope's own page opens the waits of a thread as a profile of its
 * own and finds the function it waited in. */
Test(viewers_e2e, speedscope_opens_the_pipe_waits, .timeout = 300)
{
	const char *browser = e2e_browser_dir();
	char *s;
	long long pid;
	long tid;
	int rc;

	record("pipewait", "50 5");
	pid = e2e_value_of(wout, "pid");
	cr_assert_eq(e2e_shell("%s script -i %s --folded > %s/script && "
			       "%s report -i %s -p %lld --speedscope %s/ss.json 2>/dev/null",
			       bin, cap, dir, bin, cap, pid, dir), 0);
	s = slurp("script");
	tid = tid_of(s, "pipe-reader");
	free(s);
	rc = e2e_shell("node '%s/speedscope_check.js' %s/ss.json %s/shot.png "
		       "--expect 'pipe-reader %lld/%ld: off-CPU=pipe_reader_wait' > %s/log 2>&1",
		       browser, dir, dir, pid, tid, dir);
	cr_assert_eq(rc, 0, "speedscope checks failed:\n%s", slurp("log"));
}
