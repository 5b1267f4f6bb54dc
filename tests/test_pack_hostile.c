// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `stkrec pack` on hostile input: every whole capture of the fuzz corpus
 * and every saved regression, packed. No input crashes it or makes it run
 * away; each exits with a documented code; and whatever it wrote holds the
 * events the input held, to the byte, as `stkrec script` prints them.
 */
#include <dirent.h>
#include "tests/reliability_run.h"
#include "tests/util_report.h"

static char dir[] = "/tmp/stkrec-packhostile-XXXXXX";

/* `timeout 20 stkrec ARGS`, stdout to dir/NAME; the exit code. */
static int run(const char *name, const char *args)
{
	char cmd[PATH_MAX * 6];
	int st;

	snprintf(cmd, sizeof(cmd), "timeout 20 %s %s >%s/%s 2>/dev/null", rl_stkrec(), args, dir,
		 name);
	st = system(cmd);
	cr_assert(WIFEXITED(st), "%s: killed by signal %d", cmd, WTERMSIG(st));
	return WEXITSTATUS(st);
}

static char *slurp(const char *name)
{
	char path[PATH_MAX];
	char *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = rc_slurp(path, NULL);
	cr_assert_not_null(s);
	return s;
}

/* One input: packed, and if packed, the same events as script shows them. */
static bool pack_one(const char *in)
{
	char args[PATH_MAX * 4], out[PATH_MAX];
	char *a, *b;
	int code;

	snprintf(out, sizeof(out), "%s/packed.cap", dir);
	unlink(out);
	snprintf(args, sizeof(args), "pack %s -o %s", in, out);
	code = run("pack.out", args);
	cr_assert(code == 0 || code == 1 || code == 3 || code == 4, "%s: exit %d", args, code);
	if (code != 0 && code != 3)
		return false;
	snprintf(args, sizeof(args), "script -i %s", in);
	run("a", args);
	snprintf(args, sizeof(args), "script -i %s", out);
	cr_assert_eq(run("b", args), 0, "%s: the packed capture is damaged", in);
	a = slurp("a");
	b = slurp("b");
	cr_assert_str_eq(b, a, "%s: events differ after pack", in);
	free(a);
	free(b);
	return true;
}

static void pack_dir(const char *sub, unsigned *files, unsigned *packed)
{
	char d[PATH_MAX], path[PATH_MAX * 2];
	struct dirent *de;
	DIR *dh;

	snprintf(d, sizeof(d), "%s/%s", rl_env("STKREC_SRCDIR", "."), sub);
	dh = opendir(d);
	cr_assert_not_null(dh, "%s (STKREC_SRCDIR?)", d);
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", d, de->d_name);
		*packed += pack_one(path);
		(*files)++;
	}
	closedir(dh);
}

Test(pack_hostile, fuzz_corpus_packed_or_refused, .timeout = 900)
{
	static const char *const subs[] = { "tests/fuzz/corpus/fuzz_reader",
					    "tests/fuzz/corpus/fuzz_report_views",
					    "tests/fuzz/regressions" };
	unsigned files = 0, packed = 0;
	char cmd[PATH_MAX];
	size_t i;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	cr_assert_not_null(mkdtemp(dir));
	for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		pack_dir(subs[i], &files, &packed);
	cr_log_info("%u inputs, %u packed", files, packed);
	cr_assert_gt(files, 400);
	cr_assert_gt(packed, 50, "most inputs are captures: few packed means pack refuses them");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}
