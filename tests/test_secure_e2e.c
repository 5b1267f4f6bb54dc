// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Captures that leak nothing they should not, end to end (issue 29): every
 * file record, pack and scrub create is private (0600, under umask 0
 * too), never written through a symlink; JIT maps trusted as perf trusts
 * them; a process's hostile name escaped in every text view; a scrubbed
 * capture reports as the original, without kernel addresses, hostname or
 * home paths.
 */
#include "tests/e2e_dir.h"
#include "tests/util_e2e.h"

static void setup(void)
{
	e2e_dir_setup("secure");
}

TestSuite(secure_e2e, .init = setup, .fini = e2e_dir_teardown, .timeout = 120);

static unsigned int mode_of(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(lstat(path, &st), 0, "no %s", path);
	cr_assert(S_ISREG(st.st_mode), "%s: not a regular file", path);
	return st.st_mode & 07777;
}

/* -o FILE (new, and one there before with 0666), every --switch-output
 * file, pack's output in place and to -o, all under umask 0. */
Test(secure_e2e, files_created_0600)
{
	char pat[PATH_MAX];
	glob_t g;
	size_t i;

	rl_need_bpf();
	workload("cpuburn", "cpuburn");
	sh("umask 0 && %s record -e cpu -F 99 -o a.cap -- bin/cpuburn 300 25 >/dev/null 2>&1",
	   rl_stkrec());
	cr_assert_eq(mode_of("a.cap"), 0600, "-o: %o", mode_of("a.cap"));
	sh("umask 0 && : > b.cap && chmod 0666 b.cap && %s record -e cpu -F 99 -o b.cap -- "
	   "bin/cpuburn 300 25 >/dev/null 2>&1", rl_stkrec());
	cr_assert_eq(mode_of("b.cap"), 0600, "-o over a 0666 file: %o", mode_of("b.cap"));
	sh("umask 0 && %s record -e cpu -F 99 --switch-output 1s -o sw.cap -- bin/cpuburn 2500 25 "
	   ">/dev/null 2>&1", rl_stkrec());
	snprintf(pat, sizeof(pat), "%s/sw.cap.*", dir);
	cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no --switch-output file");
	cr_assert_geq(g.gl_pathc, 2, "--switch-output wrote %zu files", g.gl_pathc);
	for (i = 0; i < g.gl_pathc; i++)
		cr_expect_eq(mode_of(g.gl_pathv[i] + strlen(dir) + 1), 0600, "%s",
			     g.gl_pathv[i]);
	globfree(&g);
	sh("chmod 0644 a.cap && umask 0 && %s pack a.cap -o p.cap 2>/dev/null && "
	   "%s pack a.cap 2>/dev/null", rl_stkrec(), rl_stkrec());
	cr_assert_eq(mode_of("p.cap"), 0600, "pack -o: %o", mode_of("p.cap"));
	cr_assert_eq(mode_of("a.cap"), 0600, "pack in place: %o", mode_of("a.cap"));
}

/* -o through a symlink: refused, its target untouched. */
Test(secure_e2e, output_not_through_a_symlink)
{
	struct res r;

	rl_need_bpf();
	workload("cpuburn", "cpuburn");
	sh("echo precious > target && ln -s target link.cap");
	r = stkrec("record -e cpu -F 99 -o link.cap -- bin/cpuburn 100 25");
	cr_assert_neq(r.code, 0, "record -o a symlink succeeded");
	res_free(&r);
	sh("test \"$(cat target)\" = precious");
}

/* Every byte of text is printable, a newline ending each line, or (tab)
 * one of the view's own tabs; what is left of it after its last newline
 * is nothing. */
static void expect_one_line_rows(const char *text, const char *what, bool tabs)
{
	const unsigned char *p;
	size_t n = strlen(text);

	for (p = (const unsigned char *)text; *p; p++) {
		if (*p == '\n' || (tabs && *p == '\t'))
			continue;
		cr_expect(*p >= 0x20 && *p != 0x7f, "%s: byte 0x%02x at %td:\n%s", what, *p,
			  (const char *)p - text, text);
		if (*p < 0x20 || *p == 0x7f)
			return;
	}
	cr_expect(!n || text[n - 1] == '\n', "%s: last line not ended", what);
}

/* A process named "ev\033[31mil\nX;Y 9", run from a binary whose path
 * holds an escape and a newline too: through every text view, each row
 * one line, the name escaped the same way everywhere. */
Test(secure_e2e, hostile_names_escaped_in_every_text_view)
{
	static const struct {
		const char *args;
		const char *want;   /* the name as the view prints it */
		bool tabs;
	} views[] = {
		{ "report -i e.cap", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap -g", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap -e cpu --sort comm,pid,dso,sym", "prog\\x1b[1mX\\x0aY", false },
		{ "report -i e.cap -e cpu --sort comm,dso,sym -g", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "script -i e.cap", "ev\\x1b[31mil\\x0aX;Y 9", true },
		{ "report -i e.cap --top-waits", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap --chain %d", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap --folded", "ev\\x1b[31mil X:Y 9;", false },
		{ "report -i e.cap --folded -e cpu --pid", "ev\\x1b[31mil X:Y 9-", false },
		{ "report -i e.cap --folded --wakers", "ev\\x1b[31mil X:Y 9", false },
		{ "diff -e offcpu f.cap e.cap", "ev\\x1b[31mil X:Y 9;", false },
		{ "diff -e cpu f.cap e.cap", "ev\\x1b[31mil X:Y 9;", false },
		{ "info e.cap", "prog\\x1b[1mX\\x0aY", false },
	};
	char args[256], *wout;
	struct res r;
	size_t i;
	int pid;

	rl_need_bpf();
	workload("evilname", "evilname");
	sh("cp bin/evilname \"bin/prog$(printf '\\033[1mX\\nY')\"");
	r = stkrec("record -e offcpu,cpu,wakeup -F 499 -o e.cap -- "
		   "\"bin/prog$(printf '\\033[1mX\\nY')\" 600");
	cr_assert_eq(r.code, 0, "record: %s", r.err);
	wout = r.out;
	free(r.err);
	pid = (int)e2e_value_of(wout, "pid");
	free(wout);
	free(record("-e offcpu,cpu -F 499 -o f.cap -- \"bin/prog$(printf '\\033[1mX\\nY')\" 200"));
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		snprintf(args, sizeof(args), views[i].args, pid);
		r = stkrec("%s", args);
		cr_expect_eq(r.code, 0, "%s: exit %d: %s", args, r.code, r.err);
		expect_one_line_rows(r.out, args, views[i].tabs);
		expect_has(r.out, views[i].want, args);
		cr_expect_null(strstr(r.out, "\nX;Y 9"), "%s: a forged row", args);
		res_free(&r);
	}
}

/* `record` of jitspin MODE into MODE.cap; its pid. The map it leaves in
 * /tmp is removed at once. */
static int record_jitspin(const char *mode)
{
	char args[128], *out;
	int pid;

	snprintf(args, sizeof(args), "-e cpu -F 499 -o %s.cap -- bin/jitspin %s 800", mode, mode);
	out = record(args);
	pid = (int)e2e_value_of(out, "pid");
	free(out);
	sh("rm -f /tmp/perf-%d.map /tmp/stkrec-jitspin-%d.real", pid, pid);
	cr_assert_gt(pid, 0);
	return pid;
}

/* perf's rules: a map another user planted for a root process, or a
 * symlink, is refused, counted and named in info; the process's own map
 * (the process dropped to nobody: its user's, not root's) names its code. */
Test(secure_e2e, jit_maps_trusted_as_perf_trusts_them)
{
	static const struct {
		const char *mode;
		const char *why;   /* NULL: used */
	} cases[] = {
		{ "nobody", "owned by neither the process's user nor root" },
		{ "symlink", "a symlink or not a regular file" },
		{ "self", NULL },
	};
	char want[256];
	struct res r;
	size_t i;
	int pid;

#ifndef __x86_64__
	cr_skip_test("jitspin's loop is x86-64 code");
#endif
	rl_need_bpf();
	workload("jitspin", "jitspin");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid = record_jitspin(cases[i].mode);
		r = stkrec("report -i %s.cap -e cpu --sort sym", cases[i].mode);
		cr_assert_eq(r.code, 0, "%s", r.err);
		if (cases[i].why)
			cr_expect_null(strstr(r.out, "jit_spin_loop"), "%s: map used:\n%s",
				       cases[i].mode, r.out);
		else
			expect_has(r.out, "[.] jit_spin_loop", cases[i].mode);
		res_free(&r);
		r = stkrec("info %s.cap", cases[i].mode);
		cr_assert_eq(r.code, 0, "%s", r.err);
		if (cases[i].why) {
			expect_has(r.out, "JIT maps refused: 1 ", cases[i].mode);
			snprintf(want, sizeof(want), "  pid %d (jitspin): /tmp/perf-%d.map %s\n", pid,
				 pid, cases[i].why);
			expect_has(r.out, want, cases[i].mode);
		} else {
			cr_expect_null(strstr(r.out, "JIT maps refused"), "%s", r.out);
		}
		res_free(&r);
	}
}
