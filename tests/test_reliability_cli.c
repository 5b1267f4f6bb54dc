// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Bad command lines, table-driven over every command: unknown options,
 * missing values, out-of-range numbers and conflicting flags all exit 2
 * with one line naming the problem and one line pointing at -h, before
 * anything is opened or loaded. And the exit codes are the documented ones.
 */
#include "tests/reliability_run.h"

struct bad_cmd {
	const char *args[8];
	const char *msg; /* in the first line of stderr */
};

static const struct bad_cmd cases[] = {
	/* record */
	{ { "record", "--bogus" }, "unknown option '--bogus'" },
	{ { "record", "-x" }, "unknown option '-x'" },
	{ { "record", "-F" }, "option '-F' requires a value" },
	{ { "record", "--max-size" }, "option '--max-size' requires a value" },
	{ { "record", "-F", "0" }, "-F: '0' is out of range" },
	{ { "record", "-F", "1000001" }, "-F: '1000001' is out of range" },
	{ { "record", "-d", "-1" }, "-d: '-1' is not a positive number of seconds" },
	{ { "record", "--ringbuf-size", "3M" }, "is not a power of 2" },
	{ { "record", "--max-size", "1K" }, "--max-size: '1K' is not in [64K, 1024G]" },
	{ { "record", "-C", "99999" }, "-C: CPU 99999 does not exist" },
	{ { "record", "-e", "disk" }, "event kinds are offcpu, cpu, bio" },
	{ { "record", "-p", "1", "-t", "2" }, "mutually exclusive" },
	{ { "record", "-F", "99", "-c", "100" }, "-F and -c are mutually exclusive" },
	{ { "record", "-U", "-K" }, "-U and -K are mutually exclusive" },
	{ { "record", "-m", "9", "-M", "3" }, "-m 9 is greater than -M 3" },
	/* report */
	{ { "report", "--bogus" }, "unknown option '--bogus'" },
	{ { "report", "-r" }, "missing value for option '-r'" },
	{ { "report", "-r", "-5" }, "invalid value for -r: '-5'" },
	{ { "report", "-e", "disk" }, "invalid value for -e: 'disk'" },
	{ { "report", "--biotop", "0" }, "invalid value for INTERVAL: '0'" },
	{ { "report", "--max-memory", "1" }, "invalid value for --max-memory" },
	{ { "report", "-f", "--top-waits" }, "choose one of" },
	/* script */
	{ { "script", "--bogus" }, "unknown option '--bogus'" },
	{ { "script", "-i" }, "missing value for option '-i'" },
	{ { "script", "-e", "nope" }, "invalid value for -e: 'nope'" },
	/* info */
	{ { "info", "--bogus" }, "unknown option '--bogus'" },
	{ { "info", "-i" }, "option '-i' requires a value" },
	{ { "info" }, "missing capture file" },
	{ { "info", "a.cap", "b.cap" }, "unexpected argument 'b.cap'" },
};

static void check_bad(const struct bad_cmd *c)
{
	char *argv[10] = { (char *)rl_stkrec() }, prefix[64], hint[64];
	struct rl_run r;
	int i;

	for (i = 0; i < 8 && c->args[i]; i++)
		argv[i + 1] = (char *)c->args[i];
	rl_run(argv, 20, 0, &r);
	cr_expect_eq(rl_code(&r), 2, "stkrec %s %s: exit %d: %s", c->args[0], c->args[1],
		     rl_code(&r), r.err);
	snprintf(prefix, sizeof(prefix), "stkrec %s: ", c->args[0]);
	snprintf(hint, sizeof(hint), "\nTry 'stkrec %s -h' for more information.\n",
		 c->args[0]);
	cr_expect(!strncmp(r.err, prefix, strlen(prefix)), "'%s' does not start '%s'", r.err,
		  prefix);
	cr_expect(strstr(r.err, c->msg) && strstr(r.err, c->msg) < strchr(r.err, '\n'),
		  "stkrec %s %s: '%s' lacks '%s'", c->args[0], c->args[1], r.err, c->msg);
	cr_expect(strstr(r.err, hint), "no usage hint: '%s'", r.err);
	cr_expect_eq(rl_lines(r.err), 2, "not two lines: '%s'", r.err);
	cr_expect_str_eq(r.out, "", "a usage error printed on stdout");
}

Test(reliability_cli, bad_command_lines_exit_2)
{
	size_t i;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_bad(&cases[i]);
}

/* diff joins the table when this stkrec has it. */
Test(reliability_cli, diff_bad_command_lines_exit_2)
{
	static const struct bad_cmd diff_cases[] = {
		{ { "diff", "--bogus", "a", "b" }, "unknown option '--bogus'" },
		{ { "diff", "a" }, "two captures needed" },
		{ { "diff" }, "two captures needed" },
		{ { "diff", "-r" }, "missing value for option '-r'" },
		{ { "diff", "a", "b", "c" }, "more than two captures" },
	};
	char *argv[] = { (char *)rl_stkrec(), "diff", "-h", NULL };
	struct rl_run r;
	size_t i;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	rl_run(argv, 20, 0, &r);
	if (rl_code(&r) != 0)
		cr_skip_test("this stkrec has no diff command");
	for (i = 0; i < sizeof(diff_cases) / sizeof(diff_cases[0]); i++)
		check_bad(&diff_cases[i]);
}

Test(reliability_cli, help_and_unknown_command)
{
	static const char *const cmds[] = { "record", "report", "script", "info" };
	char *argv[4] = { (char *)rl_stkrec() };
	struct rl_run r;
	size_t i;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		argv[1] = (char *)cmds[i];
		argv[2] = "-h";
		rl_run(argv, 20, 0, &r);
		cr_expect_eq(rl_code(&r), 0, "%s -h", cmds[i]);
		cr_expect(strstr(r.out, "usage: stkrec "), "%s -h: %s", cmds[i], r.out);
	}
	argv[1] = "--help";
	argv[2] = NULL;
	rl_run(argv, 20, 0, &r);
	cr_expect_eq(rl_code(&r), 0);
	cr_expect(strstr(r.out, "3  capture read, but it was damaged"), "%s", r.out);
	cr_expect(strstr(r.out, "4  capture unreadable"), "%s", r.out);
	argv[1] = "frobnicate";
	rl_run(argv, 20, 0, &r);
	cr_expect_eq(rl_code(&r), 2);
	cr_expect_eq(rl_lines(r.err), 1, "%s", r.err);
	argv[1] = NULL;
	rl_run(argv, 20, 0, &r);
	cr_expect_eq(rl_code(&r), 2);
}
