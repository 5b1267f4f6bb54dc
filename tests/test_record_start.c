// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end: the line `stkrec record` prints once every program is
 * attached (README, Usage). It is printed once; a workload started after
 * it is recorded from its first wait on; a held command runs after it (its
 * output follows the line); -q leaves it out. tests/workloads/blocker
 * says when (CLOCK_MONOTONIC) its thread blocks in its one nap.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/reliability_run.h"
#include "tests/util_report.h"

#define NAP_MS "300"

static char *cap;

static void setup(void)
{
	cap = rc_tmpname("start");
	cr_assert_not_null(cap);
}

static void teardown(void)
{
	unlink(cap);
	free(cap);
}

TestSuite(record_start, .init = setup, .fini = teardown, .timeout = 240);

/* The blocker's "blocked NS TID" line in text. */
static void blocked_at(const char *text, uint64_t *ns, uint32_t *tid)
{
	const char *p = strstr(text, "blocked ");
	unsigned long long v;
	unsigned t;

	cr_assert(p && sscanf(p, "blocked %llu %u", &v, &t) == 2, "no 'blocked' line in: %s",
		  text);
	*ns = v;
	*tid = t;
}

/* The nap of tid in the capture: its one OFFCPU record, whole (not open at
 * the start: it began after the programs were attached). On failure, what
 * the capture held of tid (each wait's ms and open flags) and its losses. */
static void assert_nap_recorded(uint64_t blocked_ns, uint32_t tid)
{
	struct cap_offcpu nap = { 0 };
	struct cap_record rec;
	struct cap_reader *r;
	int ret, n = 0, all = 0;
	uint64_t lost = 0;
	char waits[512] = "";
	size_t len = 0;

	cr_assert_eq(cap_reader__open(cap, &r), 0);
	while ((ret = cap_reader__next(r, &rec)) == 1) {
		if (rec.type == CAP_REC_LOST)
			lost += rec.lost.count;
		if (rec.type != CAP_REC_OFFCPU)
			continue;
		all++;
		if (rec.offcpu.tid != tid)
			continue;
		if (len < sizeof(waits) - 32)
			len += snprintf(waits + len, sizeof(waits) - len, " %.1f/%#x",
					rec.offcpu.duration / 1e6, rec.offcpu.open);
		if (rec.offcpu.duration >= 100000000ull) {
			nap = rec.offcpu;
			n++;
		}
	}
	cr_assert_eq(ret, 0);
	cap_reader__close(r);
	cr_assert_eq(n, 1, "%d waits of 100 ms or more of tid %u: its " NAP_MS " ms nap, "
		     "begun after the line, must be recorded once (its waits, ms/open:%s; "
		     "%d off-CPU records in all, %llu events lost)", n, tid, waits, all,
		     (unsigned long long)lost);
	cr_assert_eq(nap.open, 0, "open %#x: begun before the programs were attached", nap.open);
	cr_assert_geq(nap.start, blocked_ns, "it switched out after it said it blocked");
}

/* The recorder's stderr: the line once, and the summary after it. */
static const char *assert_said_once(const char *err)
{
	const char *line = rl_recording_line(err), *sum = strstr(err, "stkrec: recorded ");

	cr_assert_eq(rl_count_lines_with(err, RL_RECORDING), 1, "want one '%s' line: %s",
		     RL_RECORDING, err);
	cr_assert_not_null(line, "%s", err);
	cr_assert(sum && sum > line, "the summary after the line: %s", err);
	return line;
}

/* The whole system recorded; the workload started once the recorder said
 * it records: its nap is in the capture whole. A line printed before the
 * attach (dwarf's load takes ~1.5 s) would let the nap pass unrecorded. */
Test(record_start, workload_started_after_the_line_is_recorded)
{
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-a", "-e", "offcpu",
			 "-m", "100000", NULL };
	char wl[PATH_MAX], *wargv[] = { wl, "nap", NAP_MS, NULL };
	struct rl_run r = { 0 }, w = { 0 };
	uint64_t blocked_ns;
	uint32_t tid;
	int fo, fe, wo, we;
	pid_t rec, pid;

	rl_workload("blocker", wl);
	rl_need_bpf();
	rec = rl_spawn(argv, &fo, &fe, 0);
	rl_wait_recording(rec, fe);
	pid = rl_spawn(wargv, &wo, &we, 0);
	cr_assert_eq(rl_wait(pid, 60, &w), 0);
	rl_slurp_fd(wo, w.out, sizeof(w.out));
	close(wo);
	close(we);
	kill(rec, SIGINT);
	cr_assert_eq(rl_wait(rec, 60, &r), 0);
	rl_slurp_fd(fe, r.err, sizeof(r.err));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(&r), 0, "stkrec record: exit %d: %s", rl_code(&r), r.err);
	cr_assert_eq(rl_code(&w), 0, "blocker: exit %d", rl_code(&w));
	assert_said_once(r.err);
	blocked_at(w.out, &blocked_ns, &tid);
	assert_nap_recorded(blocked_ns, tid);
}

/* In the child before exec: its standard output into its stderr's file, so
 * a held command's output lands in the same file as the recorder's line. */
static int stdout_to_stderr(void *arg)
{
	return dup2(STDERR_FILENO, STDOUT_FILENO) < 0;
}

/* `record [-q] -- blocker nap MS`, stdout and stderr in one file, to its
 * end (exit 0 asserted). */
static void record_blocker(bool quiet, struct rl_run *r)
{
	char wl[PATH_MAX];
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-e", "offcpu", "-q", "--",
			 wl, "nap", NAP_MS, NULL };
	int fo, fe;
	pid_t pid;

	if (!quiet)
		memmove(&argv[6], &argv[7], 5 * sizeof(argv[0])); /* no -q */
	rl_workload("blocker", wl);
	rl_need_bpf();
	memset(r, 0, sizeof(*r));
	pid = rl_spawn_with(argv, &fo, &fe, 0, stdout_to_stderr, NULL);
	cr_assert_eq(rl_wait(pid, 120, r), 0);
	rl_slurp_fd(fe, r->err, sizeof(r->err));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(r), 0, "stkrec record: exit %d: %s", rl_code(r), r->err);
}

/* A held command runs once the line is out: what it prints comes after
 * the line, and its nap is recorded whole. */
Test(record_start, command_runs_after_the_line)
{
	struct rl_run r;
	const char *line;
	uint64_t blocked_ns;
	uint32_t tid;

	record_blocker(false, &r);
	line = assert_said_once(r.err);
	cr_assert(strstr(r.err, "blocked ") > line, "the command printed before the line: %s",
		  r.err);
	blocked_at(r.err, &blocked_ns, &tid);
	assert_nap_recorded(blocked_ns, tid);
}

/* -q: neither the line nor the summary; the command's output still. */
Test(record_start, quiet_says_nothing)
{
	struct rl_run r;
	uint64_t blocked_ns;
	uint32_t tid;

	record_blocker(true, &r);
	cr_assert_eq(rl_count_lines_with(r.err, RL_RECORDING), 0, "%s", r.err);
	cr_assert_null(strstr(r.err, "stkrec: recorded "), "%s", r.err);
	blocked_at(r.err, &blocked_ns, &tid);
	assert_nap_recorded(blocked_ns, tid);
}
