// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python frames end to end: each workload of tests/workloads/py recorded
 * under each interpreter present (Debian's python3.11, pyenv's 3.8-3.13)
 * by the real recorder, and reported: the Python functions the workload's
 * ready line names (their def and last lines) stand in its stacks, inside
 * the native eval frames, with the line of the running instruction.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/util_e2e.h"
#include "tests/util_python.h"
#include "tests/util_report.h"

struct pyrec {
	const struct test_python *py;
	char cap[PATH_MAX];
	char *ready;      /* the workload's stdout */
};

static const char *stkrec_bin(void)
{
	return e2e_env("STKREC", "./build/stkrec");
}

/* Record SCRIPT.py (from $STKREC_WORKLOADS/py) run by interpreter i (with
 * its options pyopts, "" none) for the seconds given, with record options
 * ropts. */
static void py_record_with(struct pyrec *r, int i, const char *pyopts, const char *script,
			   const char *secs, const char *ropts)
{
	char name[128], launcher[PATH_MAX + 64];
	char *out = rc_tmpname("py-out"), *cap = rc_tmpname("py-cap");

	r->py = test_python_or_skip(i);
	cr_assert(out && cap);
	snprintf(r->cap, sizeof(r->cap), "%s", cap);
	free(cap);
	snprintf(name, sizeof(name), "py/%s.py", script);
	snprintf(launcher, sizeof(launcher), "%s %s", r->py->path, pyopts);
	e2e_record(stkrec_bin(), r->cap, ropts, launcher, name, secs, out);
	r->ready = rc_slurp(out, NULL);
	unlink(out);
	free(out);
	cr_assert(r->ready && !strncmp(r->ready, "ready ", 6), "%s %s: stdout '%s'", r->py->name,
		  script, r->ready ? r->ready : "");
}

static void py_record(struct pyrec *r, int i, const char *script, const char *secs,
		      const char *ropts)
{
	py_record_with(r, i, "", script, secs, ropts);
}

static void py_done(struct pyrec *r)
{
	unlink(r->cap);
	free(r->ready);
}

/* stdout of `stkrec ARGS -i CAP`, asserted to exit 0. */
static char *stkrec_on(const struct pyrec *r, const char *args)
{
	char *out = rc_tmpname("py-rep"), *text;
	int st;

	cr_assert_not_null(out);
	st = e2e_shell("%s %s -i %s >%s 2>&1", stkrec_bin(), args, r->cap, out);
	text = rc_slurp(out, NULL);
	unlink(out);
	free(out);
	cr_assert(text && st == 0, "%s: stkrec %s: exit %d: %s", r->py->name, args, st,
		  text ? text : "");
	return text;
}

/*
 * The capture's time (seconds from its start, as `script` and --time
 * count) of the first event of `kind` whose stack holds a Python frame.
 * The recorder walks a process's Python frames from when it has read its
 * interpreter (Debian's python3.11 with its -dbg package: DWARF, which
 * takes from 0.2 s to over a second on a busy host); shares of named
 * events count from there, the interpreter's start before it being native
 * frames only.
 */
static double first_python_event(const struct pyrec *r, const char *kind)
{
	char args[64], *text, *line, *save = NULL;
	double t = -1, at = -1;

	snprintf(args, sizeof(args), "script -e %s", kind);
	text = stkrec_on(r, args);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *colon = strstr(line, ": ");

		if (line[0] != '\t' && colon) {
			const char *p = colon;

			while (p > line && p[-1] != ' ')
				p--;
			at = strtod(p, NULL);
		} else if (line[0] == '\t' && strstr(line, ".py:") && at >= 0) {
			t = at;
			break;
		}
	}
	free(text);
	cr_assert_geq(t, 0, "%s: no %s event names a Python function", r->py->name, kind);
	return t;
}

/* `report ARGS` over the events from the first that names Python on. */
static char *report_named(const struct pyrec *r, const char *kind, const char *args)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "report %s --time %.6f,", args,
		 first_python_event(r, kind) - 1e-6);
	return stkrec_on(r, buf);
}

/* The value of one folded line (its last field). */
static unsigned long long folded_value(const char *line, const char *end)
{
	const char *sp = end;

	while (sp > line && sp[-1] != ' ')
		sp--;
	return strtoull(sp, NULL, 10);
}

struct tally {
	unsigned long long all, hit;
};

/* Over the folded lines that match `among` (all when NULL), the value of
 * those that also match `want` (extended regexes). */
static struct tally tally(const char *folded, const char *among, const char *want)
{
	struct tally t = { 0 };
	regex_t ra, rw;
	const char *l = folded, *nl;
	char *line;

	cr_assert_eq(regcomp(&rw, want, REG_EXTENDED | REG_NOSUB), 0, "%s", want);
	cr_assert_eq(regcomp(&ra, among ? among : ".", REG_EXTENDED | REG_NOSUB), 0);
	for (; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			nl = l + strlen(l);
		line = strndup(l, nl - l);
		if (!regexec(&ra, line, 0, NULL, 0)) {
			unsigned long long v = folded_value(line, line + strlen(line));

			t.all += v;
			if (!regexec(&rw, line, 0, NULL, 0))
				t.hit += v;
		}
		free(line);
		if (!*nl)
			break;
	}
	regfree(&ra);
	regfree(&rw);
	return t;
}

/* "FUNC \(SCRIPT.py:(a|b|...)\)": FUNC at one of its lines (its def line to
 * its last, from the ready line; body: the lines after the def line). */
static void lines_of(char *buf, size_t len, const struct pyrec *r, const char *script,
		     const char *func, bool body)
{
	char key[64];
	long long first, last, l;
	size_t n;

	snprintf(key, sizeof(key), "%s_line", func);
	first = e2e_value_of(r->ready, key);
	snprintf(key, sizeof(key), "%s_last", func);
	last = strstr(r->ready, key) ? e2e_value_of(r->ready, key) : first;
	first += body;
	n = snprintf(buf, len, "%s \\(%s\\.py:(", func, script);
	for (l = first; l <= last && n < len; l++)
		n += snprintf(buf + n, len - n, "%s%lld", l > first ? "|" : "", l);
	snprintf(buf + n, len - n, ")\\)");
}

static void at_lines(char *buf, size_t len, const struct pyrec *r, const char *script,
		     const char *func)
{
	lines_of(buf, len, r, script, func, false);
}

/* A CPU loop two calls deep: the samples that ran Python code (an eval
 * frame in the stack), from the first one the recorder walked on, name
 * handle, at a line of its body, called by serve, called by main, each at
 * the line of its call: at least 90% of them (the rest is the
 * interpreter's start, whose Python frames are the import system's). */
static void cpu_two_deep(int i)
{
	char main_re[256], serve_re[256], handle_re[512], want[1400];
	struct pyrec r;
	struct tally t;
	char *folded;

	py_record(&r, i, "cpu2deep", "3", "-q -e cpu -F 499");
	lines_of(main_re, sizeof(main_re), &r, "cpu2deep", "main", true);
	lines_of(serve_re, sizeof(serve_re), &r, "cpu2deep", "serve", true);
	lines_of(handle_re, sizeof(handle_re), &r, "cpu2deep", "handle", true);
	snprintf(want, sizeof(want), ";%s;(.*;)?%s;(.*;)?%s(;| )", main_re, serve_re, handle_re);
	folded = report_named(&r, "cpu", "--folded -e cpu");
	t = tally(folded, "_PyEval_EvalFrameDefault", want);
	cr_assert_geq(t.hit, 20, "%s: %llu of %llu samples name main, serve, handle:\n%s",
		      r.py->name, t.hit, t.all, folded);
	cr_assert_geq(t.hit * 10, t.all * 9, "%s: %llu of %llu samples name main, serve, handle",
		      r.py->name, t.hit, t.all);
	free(folded);
	py_done(&r);
}

/* Three threads blocked three ways: each one's off-CPU time (its own
 * thread, -t) lies almost all (90%) under its Python function. */
static void waits_named(int i)
{
	static const char *const who[] = { "napper", "locker", "reader" };
	char re[512], args[128], key[32];
	struct pyrec r;
	struct tally t;
	char *folded;
	int k;

	py_record(&r, i, "waits", "3", "-q -e offcpu");
	for (k = 0; k < 3; k++) {
		snprintf(key, sizeof(key), "%s_tid", who[k]);
		snprintf(args, sizeof(args), "--folded -e offcpu -t %lld",
			 e2e_value_of(r.ready, key));
		at_lines(re, sizeof(re), &r, "waits", who[k]);
		folded = report_named(&r, "offcpu", args);
		t = tally(folded, NULL, re);
		cr_assert_gt(t.all, 0, "%s: %s never waited", r.py->name, who[k]);
		cr_assert_geq(t.hit * 10, t.all * 9, "%s: %s: %llu of %llu us named:\n%.3000s",
			      r.py->name, who[k], t.hit, t.all, folded);
		free(folded);
	}
	py_done(&r);
}

/* Two threads, two stacks: alpha's samples (from the first one walked)
 * name alpha_leaf under alpha, beta's beta_leaf under beta, never the
 * other's. */
static void two_threads(int i)
{
	char a[256], al[256], b[256], bl[256], want[600], args[128];
	const char *tid[] = { "alpha_tid", "beta_tid" };
	struct pyrec r;
	struct tally t, other;
	char *folded;
	int k;

	py_record(&r, i, "twothreads", "3", "-q -e cpu -F 499");
	at_lines(a, sizeof(a), &r, "twothreads", "alpha");
	at_lines(al, sizeof(al), &r, "twothreads", "alpha_leaf");
	at_lines(b, sizeof(b), &r, "twothreads", "beta");
	at_lines(bl, sizeof(bl), &r, "twothreads", "beta_leaf");
	for (k = 0; k < 2; k++) {
		snprintf(args, sizeof(args), "--folded -e cpu -t %lld",
			 e2e_value_of(r.ready, tid[k]));
		folded = report_named(&r, "cpu", args);
		snprintf(want, sizeof(want), "%s;(.*;)?%s", k ? b : a, k ? bl : al);
		t = tally(folded, "_PyEval_EvalFrameDefault", want);
		other = tally(folded, NULL, k ? "alpha" : "beta");
		cr_assert_geq(t.hit, 5, "%s: %s: %llu of %llu samples:\n%.3000s", r.py->name, tid[k],
			      t.hit, t.all, folded);
		cr_assert_geq(t.hit * 10, t.all * 9, "%s: %s: %llu of %llu samples", r.py->name,
			      tid[k], t.hit, t.all);
		cr_assert_eq(other.hit, 0, "%s: %s shows the other thread's functions",
			     r.py->name, tid[k]);
		free(folded);
	}
	py_done(&r);
}

/* Recursion 200 deep: stacks cut at the recorder's 64 Python frames end
 * with the marker, or (3.8-3.10: a native eval frame a call) at the 127
 * frames of a stack with the unknown frame, and info counts them. */
static void deep_recursion(int i)
{
	char bottom[256], want[400];
	struct pyrec r;
	struct tally t;
	char *folded, *info;

	py_record(&r, i, "recurse", "2", "-q -e cpu -F 499");
	at_lines(bottom, sizeof(bottom), &r, "recurse", "bottom");
	folded = stkrec_on(&r, "report --folded -e cpu");
	snprintf(want, sizeof(want), "(^[^;]*;\\[unknown\\];|\\[python: more frames\\];)(.*;)?"
		 "dive \\(recurse\\.py:[0-9]+\\);(.*;)?%s", bottom);
	t = tally(folded, bottom, want);
	cr_assert_geq(t.hit, 5, "%s: %llu of %llu samples in bottom are cut with the marker",
		      r.py->name, t.hit, t.all);
	cr_assert_eq(t.hit, t.all, "%s: %llu of %llu samples in bottom are cut with the marker",
		     r.py->name, t.hit, t.all);
	info = stkrec_on(&r, "info");
	cr_assert(!strstr(info, "python stacks cut: offcpu 0, cpu 0,"), "%s: %s", r.py->name,
		  info);
	free(info);
	free(folded);
	py_done(&r);
}

/* A script deleted while it runs, reported after: its functions named
 * from the capture alone. */
static void deleted_script(int i)
{
	const struct test_python *p = test_python_or_skip(i);
	char dir[] = "/tmp/stkrec-pydel-XXXXXX", src[PATH_MAX], dst[PATH_MAX + 16];
	char cap[PATH_MAX + 16], out[PATH_MAX + 16], *ready, *folded, *rep = rc_tmpname("r");
	struct tally t;
	int st;

	if (geteuid() != 0)
		cr_skip_test("recording needs root");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/py/deleted.py", e2e_env("STKREC_WORKLOADS", "build/workloads"));
	snprintf(dst, sizeof(dst), "%s/deleted.py", dir);
	snprintf(cap, sizeof(cap), "%s/cap", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	cr_assert_eq(e2e_shell("cp %s %s", src, dst), 0);
	/* the script goes as soon as it is running, long before the recording ends */
	st = e2e_shell("%s record -q -e cpu -F 499 -o %s -- %s %s 3 >%s 2>&1 & "
		       "while ! grep -q ready %s 2>/dev/null; do sleep 0.05; done; rm %s; wait",
		       stkrec_bin(), cap, p->path, dst, out, out, dst);
	cr_assert_eq(st, 0);
	cr_assert_neq(access(dst, F_OK), 0, "the script is still there");
	ready = rc_slurp(out, NULL);
	cr_assert(ready && strstr(ready, "crunch_line="), "%s", ready ? ready : "");
	st = e2e_shell("%s report --folded -e cpu -i %s >%s 2>&1", stkrec_bin(), cap, rep);
	folded = rc_slurp(rep, NULL);
	cr_assert(st == 0 && folded);
	t = tally(folded, "_PyEval_EvalFrameDefault",
		  "main \\(deleted\\.py:[0-9]+\\);(.*;)?job \\(deleted\\.py:[0-9]+\\);(.*;)?"
		  "crunch \\(deleted\\.py:[0-9]+\\)");
	cr_assert_geq(t.hit, 20, "%s: %llu of %llu samples named:\n%.3000s", p->name, t.hit, t.all,
		      folded);
	e2e_shell("rm -rf %s; rm -f %s", dir, rep);
	free(rep);
	free(ready);
	free(folded);
}

/* Python called back from C (libc's qsort through ctypes): native frames
 * stand between sort_it and cmp_cb. */
static void c_extension(int i)
{
	char sort_re[256], cmp_re[256], want[700];
	struct pyrec r;
	struct tally t;
	char *folded;

	py_record(&r, i, "cext", "3", "-q -e cpu -F 499");
	at_lines(sort_re, sizeof(sort_re), &r, "cext", "sort_it");
	at_lines(cmp_re, sizeof(cmp_re), &r, "cext", "cmp_cb");
	snprintf(want, sizeof(want), "%s;(.*;)?[^;]*ffi[^;]*;(.*;)?(qsort|msort)[^;]*;(.*;)?%s",
		 sort_re, cmp_re);
	folded = stkrec_on(&r, "report --folded -e cpu");
	t = tally(folded, cmp_re, want);
	cr_assert_geq(t.hit, 10, "%s: %llu of %llu samples in cmp_cb show qsort and libffi "
		      "between it and sort_it:\n%.3000s", r.py->name, t.hit, t.all, folded);
	cr_assert_geq(t.hit * 10, t.all * 9, "%s: %llu of %llu samples in cmp_cb", r.py->name,
		      t.hit, t.all);
	free(folded);
	py_done(&r);
}

TEST_PER_PYTHON(python_cpu, cpu_two_deep)
TEST_PER_PYTHON(python_waits, waits_named)
TEST_PER_PYTHON(python_threads, two_threads)
TEST_PER_PYTHON(python_recursion, deep_recursion)
TEST_PER_PYTHON(python_deleted, deleted_script)
TEST_PER_PYTHON(python_cext, c_extension)

/* Python 3.12's -X perf trampoline (a native frame "py::FUNC:FILE" from the
 * process's perf map per Python call) against stkrec's own frames, on the
 * same samples: where the trampoline names hot_a or hot_b, so do stkrec's
 * frames, at a line of that function (90% at least: the trampoline's frame
 * is pushed a little before the Python frame, and popped after it). */
static void perf_trampoline(int i)
{
	static const char *const fn[] = { "hot_a", "hot_b" };
	char ours[256], tramp[128];
	struct pyrec r;
	struct tally t;
	char *folded;
	int k;

	if (i < 5)
		cr_skip_test("-X perf needs Python 3.12 or later");
	py_record_with(&r, i, "-X perf", "perftramp", "3", "-q -e cpu -F 499");
	cr_assert(strstr(r.ready, " perf=1 "), "%s: -X perf not active: %s", r.py->name, r.ready);
	folded = stkrec_on(&r, "report --folded -e cpu");
	for (k = 0; k < 2; k++) {
		at_lines(ours, sizeof(ours), &r, "perftramp", fn[k]);
		snprintf(tramp, sizeof(tramp), ";py::%s:[^;]*perftramp\\.py;", fn[k]);
		t = tally(folded, tramp, ours);
		cr_assert_geq(t.hit, 20, "%s: %s: %llu of %llu trampoline samples named by stkrec:"
			      "\n%.3000s", r.py->name, fn[k], t.hit, t.all, folded);
		cr_assert_geq(t.hit * 10, t.all * 9, "%s: %s: %llu of %llu trampoline samples",
			      r.py->name, fn[k], t.hit, t.all);
	}
	free(folded);
	py_done(&r);
}

Test(python_perf_trampoline, pyenv_3_12) { perf_trampoline(5); }
Test(python_perf_trampoline, pyenv_3_13) { perf_trampoline(6); }

/* The exports: speedscope's frames of a Python call are its function,
 * file and line (pprof's are the same rframe fields). */
Test(python_exports, speedscope_frames_are_functions_with_file_and_line)
{
	char *json, want[PATH_MAX + 96], path[PATH_MAX];
	struct pyrec r;

	py_record(&r, 0, "cpu2deep", "2", "-q -e cpu -F 499");
	cr_assert_not_null(realpath(e2e_env("STKREC_WORKLOADS", "build/workloads"), path));
	json = stkrec_on(&r, "report --speedscope -");
	snprintf(want, sizeof(want), "{\"name\":\"handle\",\"file\":\"%s/py/cpu2deep.py\",\"line\":",
		 path);
	cr_assert_not_null(strstr(json, want), "%s: no %s in %.2000s", r.py->name, want, json);
	free(json);
	py_done(&r);
}

/* `stkrec scrub` and `stkrec pack` copy the code objects (PY_CODE) whole:
 * their captures name the Python frames as the recording does. */
Test(python_exports, scrubbed_and_repacked_name_the_same)
{
	static const char *const cmds[] = { "scrub %s -o %s", "pack %s -o %s" };
	char cmd[2 * PATH_MAX + 32], *want, *got;
	struct pyrec r, copy;
	size_t i;

	py_record(&r, 0, "cpu2deep", "2", "-q -e cpu -F 499");
	want = stkrec_on(&r, "report --folded -e cpu");
	cr_assert_not_null(strstr(want, "handle (cpu2deep.py:"), "%.2000s", want);
	copy = r;
	cr_assert_lt(strlen(r.cap) + 5, sizeof(copy.cap));
	strcat(copy.cap, ".copy");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		unlink(copy.cap);
		snprintf(cmd, sizeof(cmd), cmds[i], r.cap, copy.cap);
		cr_assert_eq(e2e_shell("%s %s >/dev/null 2>&1", stkrec_bin(), cmd), 0, "stkrec %s",
			     cmd);
		got = stkrec_on(&copy, "report --folded -e cpu");
		cr_assert_str_eq(got, want, "stkrec %s", cmd);
		free(got);
	}
	unlink(copy.cap);
	free(want);
	py_done(&r);
}

/* A recording of one command reads no other process's interpreter: a
 * Python program running beside it is neither tracked nor counted. */
Test(python_scope, a_python_beside_a_command_is_not_read)
{
	struct pyrec r = { .py = test_python_or_skip(0) };
	char *bg = rc_tmpname("py-bg"), *out = rc_tmpname("py-out"), *info;
	int i;

	cr_assert(bg && out);
	cr_assert_eq(e2e_shell("%s %s/py/cpu2deep.py 20 >%s 2>&1 &", r.py->path,
			       e2e_env("STKREC_WORKLOADS", "build/workloads"), bg), 0);
	for (i = 0; i < 600 && !(r.ready && strstr(r.ready, "ready ")); i++) {
		free(r.ready);
		usleep(50000);
		r.ready = rc_slurp(bg, NULL);
	}
	cr_assert(r.ready && strstr(r.ready, "ready "), "the Python program beside did not start");
	snprintf(r.cap, sizeof(r.cap), "%s", out);
	strcat(r.cap, ".cap");
	e2e_record(stkrec_bin(), r.cap, "-q -e cpu,offcpu", "", "sleeper", "300", out);
	e2e_shell("kill %lld", e2e_value_of(r.ready, "pid"));
	info = stkrec_on(&r, "info");
	cr_assert_not_null(strstr(info, "python:       0 processes, 0 of a version not read"),
			   "%s", info);
	free(info);
	unlink(bg);
	unlink(out);
	free(bg);
	free(out);
	py_done(&r);
}

/* A CPython this recorder does not read (pyenv's 3.7): native frames only,
 * never wrong ones, and the process counted once. */
Test(python_unsupported, pyenv_3_7_native_frames_counted)
{
	struct test_python p37;
	char name[PATH_MAX], *out = rc_tmpname("py37"), *cap = rc_tmpname("py37cap");
	char *folded, *info, *rep = rc_tmpname("py37rep");
	int st;

	test_python_pyenv(3, 7, &p37);
	if (!p37.path[0])
		cr_skip_test("%s", p37.why);
	snprintf(name, sizeof(name), "py/cpu2deep.py");
	e2e_record(stkrec_bin(), cap, "-q -e cpu -F 499", p37.path, name, "2", out);
	st = e2e_shell("%s report --folded -e cpu -i %s >%s 2>&1", stkrec_bin(), cap, rep);
	folded = rc_slurp(rep, NULL);
	cr_assert(st == 0 && folded);
	cr_assert_not_null(strstr(folded, "_PyEval_EvalFrameDefault"), "%.2000s", folded);
	cr_assert_null(strstr(folded, ".py:"), "a Python frame from 3.7: %.2000s", folded);
	st = e2e_shell("%s info %s >%s 2>&1", stkrec_bin(), cap, rep);
	info = rc_slurp(rep, NULL);
	cr_assert(st == 0 && info);
	cr_assert_not_null(strstr(info, "python:       0 processes, 1 of a version not read"),
			   "%s", info);
	unlink(out);
	unlink(cap);
	unlink(rep);
	free(out);
	free(cap);
	free(rep);
	free(folded);
	free(info);
}

/* The libpythons a process may load without starting Python: Debian's
 * (perf and gdb link it) and its debug build. */
static const char *const embedded_libpython[] = {
	"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
	"/usr/lib/x86_64-linux-gnu/libpython3.11d.so.1.0",
};

/* A program that loads a libpython and never starts it (perf, gdb) runs
 * no Python: its stacks are native, with no "[python: ...]" marker and
 * none counted as cut, while the recorder still reads its interpreter. */
Test(python_scope, libpython_never_started_is_no_python)
{
	static const struct test_python none = { .name = "pyidle" };
	struct pyrec r = { .py = &none };
	char *out = rc_tmpname("pyidle"), *cap = rc_tmpname("pyidle-cap");
	char args[PATH_MAX + 16], *folded, *info;
	const char *lib = NULL;
	size_t i;

	cr_assert(out && cap);
	for (i = 0; i < sizeof(embedded_libpython) / sizeof(*embedded_libpython) && !lib; i++)
		if (!access(embedded_libpython[i], R_OK))
			lib = embedded_libpython[i];
	if (!lib)
		cr_skip_test("no libpython3.11 here (make deps installs it with gdb)");
	snprintf(args, sizeof(args), "%s 1000", lib);
	snprintf(r.cap, sizeof(r.cap), "%s", cap);
	e2e_record(stkrec_bin(), r.cap, "-q -e offcpu", "", "pyidle", args, out);
	info = stkrec_on(&r, "info");
	cr_assert_not_null(strstr(info, "python:       1 processes, 0 of a version not read"),
			   "the interpreter of %s not read: %s", lib, info);
	cr_assert_not_null(strstr(info, "python stacks cut: offcpu 0, cpu 0, bio 0"), "%s", info);
	folded = stkrec_on(&r, "report --folded");
	cr_assert_not_null(strstr(folded, "main;pyidle_nap;"), "%.2000s", folded);
	cr_assert_null(strstr(folded, "[python"), "a Python marker: %.2000s", folded);
	unlink(out);
	free(out);
	free(cap);
	free(folded);
	free(info);
	py_done(&r);
}
