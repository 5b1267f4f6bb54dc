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
