// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Bad command lines, table-driven over every command: unknown options,
 * missing values, out-of-range numbers and conflicting flags all exit 2
 * with one line naming the problem and one line pointing at -h, nothing on
 * stdout, before anything is opened or loaded. And the exit codes are the
 * documented ones.
 *
 * The binary runs as nobody when the tests run as root, from an empty
 * directory: a bad `record` line that got past the parser then stops at
 * the privilege check (exit 1) instead of recording, and a bad `report`
 * line at the missing default capture (exit 4), so either shows as a
 * wrong exit code rather than passing or hanging.
 */
#include "tests/reliability_run.h"
#include "tests/util_capgen.h"
#include "tests/util_e2e.h"

enum bad_kind { UNKNOWN, MISSING, RANGE, CONFLICT, OTHER, NR_KINDS };

static const char *const kind_names[] = { "unknown option", "missing value",
					  "out-of-range number", "conflicting flags", "other" };

struct bad_cmd {
	enum bad_kind kind;
	const char *args[9]; /* "@" is a readable capture */
	const char *msg;     /* in the first line of stderr */
};

static const struct bad_cmd cases[] = {
	/* record */
	{ UNKNOWN, { "record", "--bogus" }, "unknown option '--bogus'" },
	{ UNKNOWN, { "record", "-x" }, "unknown option '-x'" },
	{ UNKNOWN, { "record", "-xU" }, "unknown option '-x'" },
	{ MISSING, { "record", "-F" }, "option '-F' requires a value" },
	{ MISSING, { "record", "--max-size" }, "option '--max-size' requires a value" },
	{ MISSING, { "record", "-e", "cpu", "-o" }, "option '-o' requires a value" },
	{ RANGE, { "record", "-F", "0" }, "-F: '0' is out of range [1, 100000]" },
	{ RANGE, { "record", "-F", "1000001" }, "-F: '1000001' is out of range" },
	{ RANGE, { "record", "-c", "0" }, "-c: '0' is out of range" },
	{ RANGE, { "record", "--state", "4294967296" }, "--state: '4294967296' is out of range" },
	{ RANGE, { "record", "--stack-storage-size", "4194305" }, "'4194305' is out of range" },
	{ RANGE, { "record", "--ringbuf-size", "2G" }, "--ringbuf-size: '2G' is not in [64K, 1G]" },
	{ RANGE, { "record", "--max-size", "1K" }, "--max-size: '1K' is not in [64K, 1024G]" },
	{ RANGE, { "record", "-C", "99999" }, "-C: CPU 99999 does not exist" },
	{ OTHER, { "record", "-d", "-1" }, "-d: '-1' is not a positive number of seconds" },
	{ OTHER, { "record", "--ringbuf-size", "3M" }, "is not a power of 2" },
	{ OTHER, { "record", "-e", "disk" }, "event kinds are offcpu, cpu, bio, wakeup" },
	/* record -e and report -e: one parser, the same strings refused */
	{ OTHER, { "record", "-e", "offcpu," }, "-e: 'offcpu,': event kinds are" },
	{ OTHER, { "record", "-e", ",cpu" }, "-e: ',cpu': event kinds are" },
	{ OTHER, { "record", "-e", "offcpu,,cpu" }, "-e: 'offcpu,,cpu': event kinds are" },
	{ OTHER, { "record", "-e", "" }, "-e: '': event kinds are" },
	{ CONFLICT, { "record", "-p", "1", "-t", "2" }, "mutually exclusive" },
	{ CONFLICT, { "record", "-u", "-k" }, "-p, -t, -u and -k are mutually exclusive" },
	{ CONFLICT, { "record", "-a", "-p", "1" }, "-a and -p/-t are mutually exclusive" },
	{ CONFLICT, { "record", "-F", "99", "-c", "100" }, "-F and -c are mutually exclusive" },
	{ CONFLICT, { "record", "-U", "-K" }, "-U and -K are mutually exclusive" },
	{ CONFLICT, { "record", "-m", "9", "-M", "3" }, "-m 9 is greater than -M 3" },
	{ CONFLICT, { "record", "--max-size", "1M", "--switch-output", "10s" },
	  "--max-size and --switch-output are mutually exclusive" },
	{ CONFLICT, { "record", "-t", "5", "--", "true" }, "a COMMAND and -p/-t" },
	/* standard output is one capture; a terminal there is refused in
	 * reliability_pipe::terminal_refused (it needs a terminal) */
	{ CONFLICT, { "record", "-o", "-", "--switch-output", "10s" },
	  "--switch-output writes FILE.<timestamp> files: not with -o - (standard output)" },
	/* report */
	{ UNKNOWN, { "report", "--bogus" }, "unknown option '--bogus'" },
	{ UNKNOWN, { "report", "-x" }, "unknown option '-x'" },
	/* inside a bundle: the option, not the word before it */
	{ UNKNOWN, { "report", "-xu" }, "unknown option '-x'" },
	{ UNKNOWN, { "report", "-v", "-ux" }, "unknown option '-x'" },
	{ MISSING, { "report", "-r" }, "missing value for option '-r'" },
	{ MISSING, { "report", "-i" }, "missing value for option '-i'" },
	{ MISSING, { "report", "--sort" }, "missing value for option '--sort'" },
	{ RANGE, { "report", "-r", "0" }, "invalid value for -r: '0'" },
	{ RANGE, { "report", "-r", "4294967296" }, "invalid value for -r: '4294967296'" },
	{ RANGE, { "report", "-r", "-5" }, "invalid value for -r: '-5'" },
	/* an empty list item: refused as record refuses it */
	{ RANGE, { "report", "-p", "1,,2" }, "invalid value for -p: '1,,2'" },
	{ RANGE, { "script", "-t", ",5" }, "invalid value for -t: ',5'" },
	{ RANGE, { "report", "--biotop", "0" }, "invalid value for INTERVAL: '0'" },
	{ RANGE, { "report", "--biotop", "1", "0" }, "invalid value for COUNT: '0'" },
	{ RANGE, { "report", "--max-memory", "1" }, "invalid value for --max-memory: '1'" },
	{ RANGE, { "report", "--state", "4294967296" }, "invalid value for --state" },
	{ RANGE, { "report", "-m", "18446744073709552" }, "invalid value for -m" },
	{ OTHER, { "report", "-e", "disk" }, "invalid value for -e: 'disk'" },
	{ OTHER, { "report", "-e", "offcpu," }, "invalid value for -e: 'offcpu,'" },
	{ OTHER, { "report", "-e", ",cpu" }, "invalid value for -e: ',cpu'" },
	{ OTHER, { "report", "-e", "offcpu,,cpu" }, "invalid value for -e: 'offcpu,,cpu'" },
	{ OTHER, { "report", "-e", "" }, "invalid value for -e: ''" },
	{ OTHER, { "report", "--biotop", "1", "2", "3" }, "unexpected argument '1'" },
	{ CONFLICT, { "report", "-f", "--top-waits" }, "choose one of" },
	{ CONFLICT, { "report", "--svg", "x.svg", "--biotop" }, "choose one of" },
	{ CONFLICT, { "report", "-u", "-k" }, "-k conflicts with -u" },
	{ CONFLICT, { "report", "-U", "-K" }, "-K conflicts with -U" },
	{ CONFLICT, { "report", "-m", "9", "-M", "3" }, "-M is below -m" },
	{ CONFLICT, { "report", "--json" }, "--json needs --top-waits" },
	{ CONFLICT, { "report", "--icicle" }, "--icicle needs --svg" },
	{ CONFLICT, { "report", "-d" }, "-d, -a, --pid and --wakers need --folded" },
	{ CONFLICT, { "report", "-g", "--folded" }, "-g and --sort apply to the default view" },
	/* START after END can only be told once the capture gives the day */
	{ CONFLICT, { "report", "--time", "5,1", "-i", "@" }, "--time: START is after END" },
	/* script */
	{ UNKNOWN, { "script", "--bogus" }, "unknown option '--bogus'" },
	{ UNKNOWN, { "script", "-x" }, "unknown option '-x'" },
	{ UNKNOWN, { "script", "-xv" }, "unknown option '-x'" },
	{ MISSING, { "script", "-i" }, "missing value for option '-i'" },
	{ MISSING, { "script", "--time" }, "missing value for option '--time'" },
	{ RANGE, { "script", "--max-memory", "1K" }, "invalid value for --max-memory: '1K'" },
	{ RANGE, { "script", "--state", "4294967296" }, "invalid value for --state" },
	{ RANGE, { "script", "-M", "18446744073709552" }, "invalid value for -M" },
	{ OTHER, { "script", "-e", "nope" }, "invalid value for -e: 'nope'" },
	{ OTHER, { "script", "x.cap" }, "unexpected argument 'x.cap'" },
	{ CONFLICT, { "script", "-u", "-k" }, "-k conflicts with -u" },
	{ CONFLICT, { "script", "-U", "-K" }, "-K conflicts with -U" },
	{ CONFLICT, { "script", "-m", "9", "-M", "3" }, "-M is below -m" },
	{ CONFLICT, { "script", "-r", "5" }, "that option belongs to 'stkrec report'" },
	{ CONFLICT, { "script", "--top-waits" }, "that option belongs to 'stkrec report'" },
	{ CONFLICT, { "script", "--time", "5,1", "-i", "@" }, "--time: START is after END" },
	/* info: no option takes a number, so no out-of-range case */
	{ UNKNOWN, { "info", "--bogus" }, "unknown option '--bogus'" },
	{ UNKNOWN, { "info", "-x", "a.cap" }, "unknown option '-x'" },
	{ UNKNOWN, { "info", "-jx", "a.cap" }, "unknown option '-x'" },
	{ MISSING, { "info", "-i" }, "option '-i' requires a value" },
	{ MISSING, { "info", "--json", "--input" }, "option '--input' requires a value" },
	{ CONFLICT, { "info", "-i", "a.cap", "b.cap" }, "unexpected argument 'b.cap'" },
	{ OTHER, { "info" }, "missing capture file" },
	{ OTHER, { "info", "a.cap", "b.cap" }, "unexpected argument 'b.cap'" },
	/* diff: A and B do not exist, so a line that got through exits 4 */
	{ UNKNOWN, { "diff", "--bogus", "a", "b" }, "unknown option '--bogus'" },
	{ UNKNOWN, { "diff", "-x", "a", "b" }, "unknown option '-x'" },
	{ UNKNOWN, { "diff", "-xu", "a", "b" }, "unknown option '-x'" },
	{ MISSING, { "diff", "-r" }, "missing value for option '-r'" },
	{ MISSING, { "diff", "a", "b", "--svg" }, "missing value for option '--svg'" },
	{ RANGE, { "diff", "-r", "0", "a", "b" }, "invalid value for -r: '0'" },
	{ RANGE, { "diff", "-r", "4294967296", "a", "b" }, "invalid value for -r: '4294967296'" },
	{ RANGE, { "diff", "--max-memory", "1", "a", "b" }, "invalid value for --max-memory" },
	{ RANGE, { "diff", "--state", "4294967296", "a", "b" }, "invalid value for --state" },
	{ OTHER, { "diff", "a" }, "two captures needed" },
	{ OTHER, { "diff" }, "two captures needed" },
	{ OTHER, { "diff", "a", "b", "c" }, "more than two captures" },
	{ CONFLICT, { "diff", "-f", "--svg", "x.svg", "a", "b" }, "choose one of --folded and --svg" },
	{ CONFLICT, { "diff", "-n", "--no-normalize", "a", "b" },
	  "--normalize conflicts with --no-normalize" },
	{ CONFLICT, { "diff", "-e", "cpu,offcpu", "a", "b" }, "diff compares one kind" },
	{ CONFLICT, { "diff", "-r", "5", "-f", "a", "b" }, "-r applies to the table only" },
	{ CONFLICT, { "diff", "--icicle", "a", "b" }, "--icicle needs --svg" },
	{ CONFLICT, { "diff", "-u", "-k", "a", "b" }, "-k conflicts with -u" },
	{ CONFLICT, { "diff", "-m", "9", "-M", "3", "a", "b" }, "-M is below -m" },
	{ CONFLICT, { "diff", "--time", "5,1", "@", "@" }, "--time: START is after END" },
	{ CONFLICT, { "diff", "-", "-" }, "A and B cannot both be '-'" },
	/* pack: no option takes a number and none conflicts with another; a
	 * line that got through would read a.cap, absent: exit 4 */
	{ UNKNOWN, { "pack", "--bogus", "a.cap" }, "unknown option '--bogus'" },
	{ UNKNOWN, { "pack", "a.cap", "-x" }, "unknown option '-x'" },
	{ UNKNOWN, { "pack", "-vx", "a.cap" }, "unknown option '-x'" },
	{ MISSING, { "pack", "a.cap", "-o" }, "missing value for option '-o'" },
	{ MISSING, { "pack", "a.cap", "--symfs" }, "missing value for option '--symfs'" },
	{ MISSING, { "pack", "--debug-dir" }, "missing value for option '--debug-dir'" },
	{ OTHER, { "pack" }, "missing capture file" },
	{ OTHER, { "pack", "-v" }, "missing capture file" },
	{ OTHER, { "pack", "a.cap", "b.cap" }, "unexpected argument 'b.cap'" },
	{ OTHER, { "pack", "-o", "", "a.cap" }, "-o: empty file name" },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))
/* README.md's words after the count of the table */
#define README_CASES " cases over record, report, script, info, diff and pack"

static const char *const commands[] = { "record", "report", "script", "info", "diff", "pack" };
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static char dir[] = "/tmp/stkrec-relc-XXXXXX";
static char cap[PATH_MAX];

/* An empty working directory and a capture, both readable by nobody. */
static void setup(void)
{
	struct capgen_opts o = { .events = 4 };

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(cap, sizeof(cap), "%s/cwd", dir);
	cr_assert_eq(mkdir(cap, 0755), 0);
	snprintf(cap, sizeof(cap), "%s/a.cap", dir);
	cr_assert_eq(capgen_write(cap, &o, NULL), 0);
	cr_assert_eq(chmod(cap, 0644), 0);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* rl_run(), from dir/cwd and as nobody when root. */
/* In the child: an empty directory, and nobody's rights when root. */
static int as_nobody(void *cwd)
{
	return chdir(cwd) || (geteuid() == 0 && (setgid(65534) || setuid(65534)));
}

static void run_cli(char *const argv[], struct rl_run *r)
{
	char cwd[PATH_MAX];
	int fo, fe;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	snprintf(cwd, sizeof(cwd), "%s/cwd", dir);
	pid = rl_spawn_with(argv, &fo, &fe, 0, as_nobody, cwd);
	cr_assert_eq(rl_wait(pid, 20, r), 0);
	rl_slurp_fd(fo, r->out, sizeof(r->out));
	rl_slurp_fd(fe, r->err, sizeof(r->err));
	close(fo);
	close(fe);
}

/* "stkrec ARGS", for messages. */
static const char *cmdline(const struct bad_cmd *c)
{
	static char buf[256];
	int i, n = snprintf(buf, sizeof(buf), "stkrec");

	for (i = 0; i < 8 && c->args[i]; i++)
		n += snprintf(buf + n, sizeof(buf) - n, " %s", c->args[i]);
	return buf;
}

/* Exit 2, nothing on stdout, and on stderr exactly two lines: the problem,
 * prefixed with the command, then the usage hint. */
static void check_bad(const struct bad_cmd *c)
{
	char *argv[11] = { (char *)rl_stkrec() }, prefix[64], hint[80];
	const char *nl;
	struct rl_run r;
	int i;

	for (i = 0; i < 8 && c->args[i]; i++)
		argv[i + 1] = strcmp(c->args[i], "@") ? (char *)c->args[i] : cap;
	run_cli(argv, &r);
	snprintf(prefix, sizeof(prefix), "stkrec %s: ", c->args[0]);
	snprintf(hint, sizeof(hint), "Try 'stkrec %s -h' for more information.\n", c->args[0]);
	nl = strchr(r.err, '\n');
	cr_expect_eq(rl_code(&r), 2, "%s (%s): exit %d: %s", cmdline(c), kind_names[c->kind],
		     rl_code(&r), r.err);
	cr_expect_str_eq(r.out, "", "%s: printed on stdout", cmdline(c));
	cr_expect_eq(rl_lines(r.err), 2, "%s: not two lines: '%s'", cmdline(c), r.err);
	cr_expect(!strncmp(r.err, prefix, strlen(prefix)), "%s: '%s' does not start '%s'",
		  cmdline(c), r.err, prefix);
	cr_expect(nl && strstr(r.err, c->msg) && strstr(r.err, c->msg) < nl,
		  "%s: first line of '%s' lacks '%s'", cmdline(c), r.err, c->msg);
	cr_expect(nl && !strcmp(nl + 1, hint), "%s: second line is not '%s': '%s'", cmdline(c),
		  hint, r.err);
}

/* The table itself: every command has a case of every kind (info and pack
 * take no number: none of their options has a value to put out of range;
 * no option of pack conflicts with another). */
Test(reliability_cli, every_command_every_kind)
{
	int seen[NR_COMMANDS][NR_KINDS] = { { 0 } };
	size_t i, k;

	for (i = 0; i < NR_CASES; i++) {
		for (k = 0; k < NR_COMMANDS && strcmp(cases[i].args[0], commands[k]); k++)
			;
		cr_assert_lt(k, NR_COMMANDS, "case %zu: no command '%s'", i, cases[i].args[0]);
		seen[k][cases[i].kind]++;
	}
	for (i = 0; i < NR_COMMANDS; i++) {
		for (k = 0; k < OTHER; k++) {
			if (!strcmp(commands[i], "info") && k == RANGE)
				continue;
			if (!strcmp(commands[i], "pack") && (k == RANGE || k == CONFLICT))
				continue;
			cr_expect_gt(seen[i][k], 0, "no %s case for %s", kind_names[k], commands[i]);
		}
	}
}

Test(reliability_cli, bad_command_lines_exit_2, .init = setup, .fini = teardown)
{
	size_t i;

	/* the README says how many: that number is this table's */
	cr_assert_eq(e2e_readme_count(README_CASES), (long)NR_CASES, "README.md: %ld%s; the table "
		     "holds %zu", e2e_readme_count(README_CASES), README_CASES, NR_CASES);
	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	for (i = 0; i < NR_CASES; i++)
		check_bad(&cases[i]);
}

Test(reliability_cli, help_and_unknown_command)
{
	char *argv[4] = { (char *)rl_stkrec() };
	struct rl_run r;
	size_t i;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	for (i = 0; i < NR_COMMANDS; i++) {
		argv[1] = (char *)commands[i];
		argv[2] = "-h";
		rl_run(argv, 20, 0, &r);
		cr_expect_eq(rl_code(&r), 0, "%s -h", commands[i]);
		cr_expect(strstr(r.out, "usage: stkrec "), "%s -h: %s", commands[i], r.out);
		cr_expect_str_eq(r.err, "", "%s -h", commands[i]);
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
