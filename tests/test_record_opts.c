// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `stkrec record` command line: parsing (no privileges needed), and the
 * binary's exit codes and messages for bad command lines and early errors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <limits.h>
#include <sys/stat.h>
#include "record/cgroups.h"
#include "src/commands.h"
#include "src/record_opts.h"
#include "tests/util_e2e.h"

#define ARGV(...) ((char *[]){ "record", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "record", __VA_ARGS__ }) / sizeof(char *)))

static struct record_opts o;
static char err[256];

static int parse(int argc, char **argv)
{
	err[0] = 0;
	return record_opts__parse(argc, argv, &o, err, sizeof(err));
}

#define PARSE(...) parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void fini(void)
{
	record_opts__free(&o);
}

TestSuite(record_opts, .fini = fini);

Test(record_opts, defaults)
{
	char *argv[] = { "record", NULL };

	cr_assert_eq(parse(1, argv), 0);
	cr_assert_str_eq(o.output, "stkrec.cap");
	cr_assert_eq(o.events, RECORD_EV_OFFCPU | RECORD_EV_CPU | RECORD_EV_BIO);
	cr_assert_eq(o.freq, 49);
	cr_assert_eq(o.period, 0);
	cr_assert_eq(o.cpu, -1);
	cr_assert_eq(o.min_us, 1);
	cr_assert_eq(o.state, -1);
	cr_assert_eq(o.ringbuf_size, 16u << 20);
	cr_assert_eq(o.storage_entries, 16384);
	cr_assert_eq(o.duration_ns, 0);
	cr_assert_eq(o.nr_pids, 0);
	cr_assert_eq(o.nr_tids, 0);
	cr_assert_null(o.command);
	cr_assert_not(o.idle);
	cr_assert_not(o.user_stacks_only || o.kernel_stacks_only);
	cr_assert_not(o.no_pack, "files are packed by default");
	cr_assert_eq(o.call_graph, RECORD_CG_DWARF, "dwarf by default");
	cr_assert_not(o.call_graph_set);
	cr_assert_not(o.quiet, "says when it records by default");
}

Test(record_opts, every_option)
{
	cr_assert_eq(PARSE("-o", "x.cap", "-e", "cpu,bio", "-p", "12,34", "-K", "-c", "1000000",
			   "-I", "-C", "0", "-m", "10", "-M", "5000", "--state", "2",
			   "--stack-storage-size", "1000", "--ringbuf-size", "64M", "-d", "1.5",
			   "--max-size", "2M", "-v", "-v", "-q"), 0, "%s", err);
	cr_assert_str_eq(o.output, "x.cap");
	cr_assert_eq(o.events, RECORD_EV_CPU | RECORD_EV_BIO);
	cr_assert_eq(o.nr_pids, 2);
	cr_assert_eq(o.pids[0], 12);
	cr_assert_eq(o.pids[1], 34);
	cr_assert(o.kernel_stacks_only);
	cr_assert_eq(o.period, 1000000);
	cr_assert(o.idle);
	cr_assert_eq(o.cpu, 0);
	cr_assert_eq(o.min_us, 10);
	cr_assert_eq(o.max_us, 5000);
	cr_assert_eq(o.state, 2);
	cr_assert_eq(o.storage_entries, 1000);
	cr_assert_eq(o.ringbuf_size, 64u << 20);
	cr_assert_eq(o.duration_ns, 1500000000ull);
	cr_assert_eq(o.max_size, 2u << 20);
	cr_assert_eq(o.verbose, 2);
	cr_assert(o.quiet);
}

Test(record_opts, long_forms_and_threads)
{
	cr_assert_eq(PARSE("--tid", "7", "--frequency", "99", "--user-stacks-only",
			   "--duration", "2", "--output", "y.cap"), 0, "%s", err);
	cr_assert_eq(o.nr_tids, 1);
	cr_assert_eq(o.tids[0], 7);
	cr_assert_eq(o.freq, 99);
	cr_assert(o.user_stacks_only);
	cr_assert_eq(o.duration_ns, 2000000000ull);
	cr_assert_str_eq(o.output, "y.cap");
	cr_assert_eq(PARSE("--quiet"), 0, "%s", err);
	cr_assert(o.quiet);
	cr_assert_eq(PARSE("--no-pack", "-e", "cpu"), 0, "%s", err);
	cr_assert(o.no_pack);
	cr_assert_eq(PARSE("--call-graph", "fp"), 0, "%s", err);
	cr_assert_eq(o.call_graph, RECORD_CG_FP);
	cr_assert(o.call_graph_set);
	cr_assert_eq(PARSE("--call-graph", "dwarf"), 0, "%s", err);
	cr_assert_eq(o.call_graph, RECORD_CG_DWARF);
	cr_assert(o.call_graph_set);
}

/* -G: each PATH below the cgroup2 mount or in full, to depth and id. */
Test(record_opts, cgroup_paths)
{
	char mount[PATH_MAX], sixteen[64] = "/", full[PATH_MAX + 2];
	struct stat st;
	int i;

	if (cgroups__find_mount(mount, sizeof(mount)))
		cr_skip_test("no cgroup2 file system mounted");
	cr_assert_eq(stat(mount, &st), 0);
	snprintf(full, sizeof(full), "%s/", mount);
	cr_assert_eq(PARSE("--cgroup", "/", "-G", full), 0, "%s", err);
	cr_assert_eq(o.nr_cgroups, 2); /* -G adds to the list */
	for (i = 0; i < 2; i++) {
		cr_assert_eq(o.cgroup_levels[i], 0);
		cr_assert_eq(o.cgroup_ids[i], st.st_ino);
	}
	for (i = 1; i < 16; i++)
		strcat(sixteen, ",/");
	cr_assert_eq(PARSE("-G", sixteen), 0, "%s", err);
	cr_assert_eq(o.nr_cgroups, 16);
	strcat(sixteen, ",/");
	cr_assert_eq(PARSE("-G", sixteen), -EINVAL);
	cr_assert_str_eq(err, "-G: more than 16 cgroups");
	cr_assert_eq(PARSE("-G", "system.slice"), -EINVAL);
	cr_assert_eq(PARSE("-G", ","), -EINVAL);
	cr_assert_str_eq(err, "-G: no cgroup given");
}

Test(record_opts, command_after_double_dash)
{
	char *argv[] = { "record", "-e", "offcpu", "--", "sleep", "-x", "1", NULL };

	cr_assert_eq(parse(7, argv), 0, "%s", err);
	cr_assert_not_null(o.command);
	cr_assert_str_eq(o.command[0], "sleep");
	cr_assert_str_eq(o.command[1], "-x"); /* the command's options stay its own */
	cr_assert_str_eq(o.command[2], "1");
	cr_assert_null(o.command[3]);
	cr_assert_eq(o.events, RECORD_EV_OFFCPU);
}

Test(record_opts, command_without_double_dash_stops_parsing)
{
	char *argv[] = { "record", "-u", "make", "-j2", NULL };

	cr_assert_eq(parse(4, argv), 0, "%s", err);
	cr_assert(o.user_threads);
	cr_assert_str_eq(o.command[0], "make");
	cr_assert_str_eq(o.command[1], "-j2");
}

Test(record_opts, help)
{
	cr_assert_eq(PARSE("-h"), RECORD_OPTS_HELP);
	cr_assert_eq(PARSE("-d", "1", "--help"), RECORD_OPTS_HELP);
}

Test(record_opts, all_with_command_is_system_wide)
{
	cr_assert_eq(PARSE("-a", "--", "true"), 0, "%s", err);
	cr_assert(o.all_cpus);
	cr_assert_str_eq(o.command[0], "true");
}

Test(record_opts, min_zero_and_min_equal_max)
{
	cr_assert_eq(PARSE("-m", "0", "-M", "0"), 0, "%s", err);
	cr_assert_eq(o.min_us, 0);
	cr_assert_eq(o.max_us, 0);
}

/* Each bad command line: rejected with a message naming the problem. */
struct bad {
	int argc;
	char **argv;
	const char *msg;
};

#define BAD(msg, ...) { ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), msg }

static struct bad bad_cases[] = {
	BAD("-F: '0' is out of range", "-F", "0"),
	BAD("-F: '-5' is not a number", "-F", "-5"),
	BAD("-F: 'abc' is not a number", "-F", "abc"),
	BAD("-F: '10x' is not a number", "-F", "10x"),
	BAD("-c: '0' is out of range", "-c", "0"),
	BAD("-e: 'offcpu,disk': event kinds are offcpu, cpu, bio, wakeup", "-e", "offcpu,disk"),
	BAD("-e: ',cpu'", "-e", ",cpu"),
	BAD("-e: ''", "-e", ""),
	BAD("-p, -t, -u and -k are mutually exclusive", "-p", "1", "-t", "2"),
	BAD("-p, -t, -u and -k are mutually exclusive", "-u", "-k"),
	BAD("-p, -t, -u and -k are mutually exclusive", "-p", "1", "-u"),
	BAD("-F and -c are mutually exclusive", "-F", "99", "-c", "1000"),
	BAD("-U and -K are mutually exclusive", "-U", "-K"),
	BAD("-m 10 is greater than -M 5", "-m", "10", "-M", "5"),
	BAD("-a and -p/-t are mutually exclusive", "-a", "-p", "1"),
	BAD("a COMMAND and -p/-t are mutually exclusive", "-t", "5", "--", "ls"),
	BAD("-p: 'x' is not a list of ids", "-p", "x"),
	BAD("-p: '1,,2' is not a list of ids", "-p", "1,,2"),
	BAD("-p: '0' is not a list of ids", "-p", "0"),
	BAD("-t: '1,' is not a list of ids", "-t", "1,"),
	BAD("-C: 'x' is not a number", "-C", "x"),
	BAD("-C: CPU 100000 does not exist", "-C", "100000"),
	BAD("-d: '0' is not a positive number of seconds", "-d", "0"),
	BAD("-d: 'soon' is not a positive number", "-d", "soon"),
	BAD("--ringbuf-size: '3M' is not a power of 2", "--ringbuf-size", "3M"),
	BAD("--ringbuf-size: '4K' is not in [64K, 1G]", "--ringbuf-size", "4K"),
	BAD("--ringbuf-size: 'big' is not a size", "--ringbuf-size", "big"),
	BAD("--stack-storage-size: '0' is out of range", "--stack-storage-size", "0"),
	BAD("--max-size: '1K' is not in [64K, 1024G]", "--max-size", "1K"),
	BAD("--max-size: 'lots' is not a size", "--max-size", "lots"),
	BAD("option '--max-size' requires a value", "--max-size"),
	BAD("--switch-output: '0s' is neither a time", "--switch-output", "0s"),
	BAD("--switch-output: '1K' is neither a time", "--switch-output", "1K"),
	BAD("--switch-output: '5x' is neither a time", "--switch-output", "5x"),
	BAD("--switch-output: '' is neither", "--switch-output", ""),
	BAD("--max-size and --switch-output are mutually exclusive", "--max-size", "1M",
	    "--switch-output", "10s"),
	BAD("--switch-output writes FILE.<timestamp> files: not with -o - (standard output)",
	    "-o", "-", "--switch-output", "10s"),
	BAD("--switch-output writes FILE.<timestamp> files: not with -o -", "--switch-output",
	    "1M", "-o", "-"),
	BAD("--state: '-1' is not a number", "--state", "-1"),
	BAD("-m: '1.5' is not a number", "-m", "1.5"),
	BAD("-o: empty file name", "-o", ""),
	BAD("unknown option '-x'", "-x"),
	BAD("unknown option '--frobnicate'", "--frobnicate"),
	BAD("option '-F' requires a value", "-F"),
	BAD("option '--state' requires a value", "--state"),
};
#define NR_BAD (sizeof(bad_cases) / sizeof(bad_cases[0]))
/* README.md's words after the count of bad_cases */
#define README_BAD " cases through the binary"

Test(record_opts, bad_command_lines)
{
	size_t i;

	for (i = 0; i < NR_BAD; i++) {
		cr_expect_eq(parse(bad_cases[i].argc, bad_cases[i].argv), -EINVAL, "case %zu (%s)", i,
			     bad_cases[i].msg);
		cr_expect(strstr(err, bad_cases[i].msg), "case %zu: got '%s', want '%s'", i, err,
			  bad_cases[i].msg);
		record_opts__free(&o);
	}
}

/* -o - is standard output to the parser too: src/ gives the fd, and a
 * file named '-' is ./- ; --max-size bounds it as a file. */
Test(record_opts, stdout_output)
{
	cr_assert_eq(PARSE("-o", "-", "--max-size", "1M"), 0, "%s", err);
	cr_assert_str_eq(o.output, "-");
	cr_assert_eq(o.output_fd, -1);
	cr_assert_eq(o.max_size, 1u << 20);
	record_opts__free(&o);
	cr_assert_eq(PARSE("-o", "./-", "--switch-output", "10s"), 0, "%s", err);
	cr_assert_str_eq(o.output, "./-");
}

Test(record_opts, switch_output_time_or_size)
{
	static const struct {
		const char *arg;
		uint64_t ns, bytes;
	} ok[] = {
		{ "10", 10000000000ull, 0 }, { "10s", 10000000000ull, 0 },
		{ "2m", 120000000000ull, 0 }, { "1h", 3600000000000ull, 0 },
		{ "64K", 0, 64u << 10 }, { "100M", 0, 100u << 20 }, { "1G", 0, 1u << 30 },
		{ "2MB", 0, 2u << 20 },
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert_eq(PARSE("--switch-output", (char *)ok[i].arg), 0, "%s: %s", ok[i].arg, err);
		cr_expect_eq(o.switch_ns, ok[i].ns, "%s", ok[i].arg);
		cr_expect_eq(o.switch_bytes, ok[i].bytes, "%s", ok[i].arg);
		record_opts__free(&o);
	}
}

Test(record_opts, parse_events)
{
	unsigned m = 0;

	cr_assert_eq(record_opts__parse_events("bio", &m), 0);
	cr_assert_eq(m, RECORD_EV_BIO);
	cr_assert_eq(record_opts__parse_events("cpu,offcpu,cpu", &m), 0);
	cr_assert_eq(m, RECORD_EV_CPU | RECORD_EV_OFFCPU);
	cr_assert_eq(record_opts__parse_events("CPU", &m), -EINVAL);
	cr_assert_eq(record_opts__parse_events("cpu,", &m), -EINVAL);
}

/* --- the binary -------------------------------------------------------- */

struct run {
	int status;
	char out[8192];
	char err[8192];
};

static const char *stkrec_bin(void)
{
	const char *p = getenv("STKREC");

	return p ? p : "build/stkrec";
}

static void slurp(int fd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off + 1 < len && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += n;
	buf[off] = 0;
}

/* Run stkrec with argv (NULL-terminated), as uid when uid >= 0. */
static void run(struct run *r, int uid, char *const argv[])
{
	char out[] = "/tmp/stkrec-opts-out-XXXXXX", errf[] = "/tmp/stkrec-opts-err-XXXXXX";
	int fo, fe, st;
	pid_t pid;

	if (access(stkrec_bin(), X_OK))
		cr_skip_test("no stkrec binary at %s (set STKREC)", stkrec_bin());
	fo = mkstemp(out);
	fe = mkstemp(errf);
	cr_assert(fo >= 0 && fe >= 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		if (uid >= 0 && (setgid(uid) || setuid(uid)))
			_exit(99);
		execv(stkrec_bin(), argv);
		_exit(98);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	r->status = WEXITSTATUS(st);
	lseek(fo, 0, SEEK_SET);
	lseek(fe, 0, SEEK_SET);
	slurp(fo, r->out, sizeof(r->out));
	slurp(fe, r->err, sizeof(r->err));
	close(fo);
	close(fe);
	unlink(out);
	unlink(errf);
}

#define RUN(r, uid, ...) run(r, uid, (char *[]){ (char *)stkrec_bin(), "record", __VA_ARGS__, NULL })

Test(record_opts, binary_help_on_stdout)
{
	struct run r;

	RUN(&r, -1, "-h");
	cr_assert_eq(r.status, EXIT_OK);
	cr_assert(strstr(r.out, "usage: stkrec record"), "%s", r.out);
	cr_assert(strstr(r.out, "examples:"));
	cr_assert_str_eq(r.err, "");
}

Test(record_opts, binary_usage_errors_exit_2)
{
	struct run r;

	RUN(&r, -1, "-F", "0");
	cr_assert_eq(r.status, EXIT_USAGE);
	cr_assert(strstr(r.err, "stkrec record: -F: '0' is out of range"), "%s", r.err);
	cr_assert(strstr(r.err, "Try 'stkrec record -h'"), "%s", r.err);
	RUN(&r, -1, "--bogus");
	cr_assert_eq(r.status, EXIT_USAGE);
	cr_assert(strstr(r.err, "unknown option '--bogus'"), "%s", r.err);
	RUN(&r, -1, "-e", "disk");
	cr_assert_eq(r.status, EXIT_USAGE);
	RUN(&r, -1, "-d");
	cr_assert_eq(r.status, EXIT_USAGE);
	cr_assert(strstr(r.err, "option '-d' requires a value"), "%s", r.err);
}

/* The parser's table through the binary: exit 2, nothing on stdout, and on
 * stderr exactly the parser's message and the usage hint. As nobody when
 * root, so a line the parser let through stops at the privilege check
 * (exit 1) instead of recording: none of these needs root to fail. */
Test(record_opts, binary_bad_command_lines)
{
	char *argv[16] = { (char *)stkrec_bin() }, want[512];
	struct run r;
	size_t i;
	int k;

	/* the README says how many: that number is this table's */
	cr_assert_eq(e2e_readme_count(README_BAD), (long)NR_BAD, "README.md: %ld%s; the table "
		     "holds %zu", e2e_readme_count(README_BAD), README_BAD, NR_BAD);
	for (i = 0; i < NR_BAD; i++) {
		cr_assert_eq(parse(bad_cases[i].argc, bad_cases[i].argv), -EINVAL, "%s",
			     bad_cases[i].msg);
		record_opts__free(&o);
		snprintf(want, sizeof(want), "stkrec record: %s\n"
			 "Try 'stkrec record -h' for more information.\n", err);
		for (k = 0; k < bad_cases[i].argc; k++)
			argv[k + 1] = bad_cases[i].argv[k];
		argv[k + 1] = NULL;
		run(&r, geteuid() == 0 ? 65534 : -1, argv);
		cr_expect_eq(r.status, EXIT_USAGE, "case %zu (%s): exit %d: %s", i,
			     bad_cases[i].msg, r.status, r.err);
		cr_expect_str_eq(r.err, want, "case %zu", i);
		cr_expect_str_eq(r.out, "", "case %zu: printed on stdout", i);
	}
}

Test(record_opts, binary_not_root_exit_1)
{
	struct run r;

	if (geteuid() != 0)
		cr_skip_test("needs root to drop to an unprivileged user");
	RUN(&r, 65534, "-d", "1", "-o", "/tmp/stkrec-opts-never.cap");
	cr_assert_eq(r.status, EXIT_FAIL, "%s", r.err);
	cr_assert(strstr(r.err, "needs root (or CAP_BPF and CAP_PERFMON)"), "%s", r.err);
	cr_assert_eq(access("/tmp/stkrec-opts-never.cap", F_OK), -1);
}

/* A pid that is not running now (pid_max bounds them). */
static unsigned free_pid(void)
{
	char path[64];
	unsigned p;

	for (p = 4000000; p > 300; p -= 7919) {
		snprintf(path, sizeof(path), "/proc/%u", p);
		if (access(path, F_OK))
			return p;
	}
	return 0;
}

Test(record_opts, binary_missing_pid_and_tid)
{
	char arg[16];
	struct run r;

	if (geteuid() != 0)
		cr_skip_test("the target check follows the privilege check: needs root");
	snprintf(arg, sizeof(arg), "%u", free_pid());
	RUN(&r, -1, "-p", arg, "-d", "1", "-o", "/tmp/stkrec-opts-never.cap");
	cr_assert_eq(r.status, EXIT_FAIL, "%s", r.err);
	cr_assert(strstr(r.err, "no process with PID"), "%s", r.err);
	RUN(&r, -1, "-t", arg, "-d", "1", "-o", "/tmp/stkrec-opts-never.cap");
	cr_assert_eq(r.status, EXIT_FAIL, "%s", r.err);
	cr_assert(strstr(r.err, "no thread with TID"), "%s", r.err);
	cr_assert_eq(access("/tmp/stkrec-opts-never.cap", F_OK), -1);
}

Test(record_opts, binary_unwritable_output)
{
	struct run r;

	if (geteuid() != 0)
		cr_skip_test("the output check follows the privilege check: needs root");
	RUN(&r, -1, "-d", "1", "-o", "/nonexistent-dir/x.cap");
	cr_assert_eq(r.status, EXIT_FAIL, "%s", r.err);
	cr_assert(strstr(r.err, "cannot write '/nonexistent-dir/x.cap'"), "%s", r.err);
}
