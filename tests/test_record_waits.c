// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end: waits open at the start or the stop of a recording
 * (bpf/waits.bpf.h, record/waits.c, FORMAT.md §4.11), and the off-CPU
 * table ranked by wait site. tests/workloads/blocker says when (CLOCK_
 * MONOTONIC) its thread "blk-waiter" blocked and woke; the capture's
 * OFFCPU records of that thread are read back with the format reader and
 * checked against it, then the views (--top-waits text and JSON, script,
 * --folded, --open-waits) against the records.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <inttypes.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/reliability_run.h"
#include "tests/util_report.h"

/* How far a wait's start may be from when the workload said it blocked:
 * the scheduler's clock of a wait found at the start is a tick (4 ms at
 * HZ=250) stale at most, and the workload itself may be preempted between
 * saying so and blocking when other tests load the machine. */
#define SINCE_SLACK_NS 50000000ull

static char *cap;

static void setup(void)
{
	cap = rc_tmpname("waits");
	cr_assert_not_null(cap);
}

static void teardown(void)
{
	unlink(cap);
	free(cap);
}

TestSuite(record_waits, .init = setup, .fini = teardown, .timeout = 120);

/* --- the workload -------------------------------------------------------- */

struct blocker {
	pid_t pid;
	int fo, fe;
	uint64_t blocked_ns, woke_ns;
	uint32_t tid;
};

/* Its "WHAT NS TID" line, waiting up to 10 s for it. */
static bool said(struct blocker *b, const char *what, uint64_t *ns)
{
	char out[4096], *p;
	double end = rl_now() + 10;
	unsigned long long v;
	unsigned tid;

	do {
		rl_slurp_fd(b->fo, out, sizeof(out));
		p = strstr(out, what);
		if (p && sscanf(p + strlen(what), " %llu %u", &v, &tid) == 2) {
			*ns = v;
			b->tid = tid;
			return true;
		}
		usleep(10000);
	} while (rl_now() < end);
	return false;
}

static void blocker_start(struct blocker *b, const char *mode, const char *ms)
{
	char wl[PATH_MAX];
	char *argv[] = { wl, (char *)mode, (char *)ms, NULL };

	rl_workload("blocker", wl);
	rl_need_bpf();
	memset(b, 0, sizeof(*b));
	b->pid = rl_spawn(argv, &b->fo, &b->fe, 0);
}

static void blocker_stop(struct blocker *b)
{
	struct rl_run r = { 0 };

	kill(b->pid, SIGKILL);
	rl_wait(b->pid, 10, &r);
	close(b->fo);
	close(b->fe);
}

/* --- the recorder -------------------------------------------------------- */

/* stkrec record -o cap -e offcpu ARGS... into argv[24]. */
static void record_argv(char *const args[], char *argv[24])
{
	char *head[] = { (char *)rl_stkrec(), "record", "-o", cap, "-e", "offcpu" };
	int i, n = 6;

	memcpy(argv, head, sizeof(head));
	for (i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
}

/* The recorder to its end. */
static void record(char *const args[])
{
	char *argv[24];
	struct rl_run r;

	record_argv(args, argv);
	rl_run(argv, 60, 0, &r);
	cr_assert_eq(rl_code(&r), 0, "stkrec record: exit %d: %s", rl_code(&r), r.err);
}

/* The recorder in the background, recording once this returns. */
struct recording {
	pid_t pid;
	int fo, fe;
};

static void record_start(char *const args[], struct recording *rec)
{
	char *argv[24];

	record_argv(args, argv);
	rec->pid = rl_spawn(argv, &rec->fo, &rec->fe, 0);
	rl_wait_recording(rec->pid, rec->fe);
}

/* Ctrl-C, and its end (exit 0 asserted). */
static void record_stop(struct recording *rec)
{
	struct rl_run r = { 0 };

	kill(rec->pid, SIGINT);
	cr_assert_eq(rl_wait(rec->pid, 60, &r), 0);
	rl_slurp_fd(rec->fe, r.err, sizeof(r.err));
	close(rec->fo);
	close(rec->fe);
	cr_assert_eq(rl_code(&r), 0, "stkrec record: exit %d: %s", rl_code(&r), r.err);
}

static void record_pid(const struct blocker *b, const char *seconds)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", b->pid);
	record((char *[]){ "-p", pid, "-d", (char *)seconds, NULL });
}

static void record_pid_start(const struct blocker *b, struct recording *rec)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", b->pid);
	record_start((char *[]){ "-p", pid, NULL }, rec);
}

/* The capture's OFFCPU records of tid, its header and its END time. */
#define MAX_WAITS 4096
struct waits {
	struct cap_offcpu w[MAX_WAITS];
	int n;
	uint64_t start_ns, end_ns;
};

static void read_waits_of(const char *path, uint32_t tid, struct waits *out)
{
	struct cap_reader *r;
	struct cap_record rec;
	int ret;

	memset(out, 0, sizeof(*out));
	cr_assert_eq(cap_reader__open(path, &r), 0);
	out->start_ns = cap_reader__header(r)->start_time;
	while ((ret = cap_reader__next(r, &rec)) == 1) {
		if (rec.type == CAP_REC_END)
			out->end_ns = rec.end.time;
		if (rec.type == CAP_REC_OFFCPU && rec.offcpu.tid == tid && out->n < MAX_WAITS)
			out->w[out->n++] = rec.offcpu;
	}
	cr_assert_eq(ret, 0);
	cr_assert(!cap_reader__stats(r)->recovered);
	cap_reader__close(r);
	cr_assert_neq(out->end_ns, 0, "no END record");
}

static void read_waits(uint32_t tid, struct waits *out)
{
	read_waits_of(cap, tid, out);
}

/* Microseconds as the views round them. */
static uint64_t us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* --- a thread blocked through the whole recording ------------------------- */

/* The user stack of a thread found waiting, read from its memory where
 * the kernel can (bpf_copy_from_user_task(): x86-64, Linux 5.18+, told by
 * the release, not by the recorder's probe under test): with frame
 * pointers, the caller of the function that called the C library's read()
 * (the workload has them, libc not); unwound from .eh_frame, the whole
 * chain. */
static const char *waiting_ustack(bool dwarf)
{
#ifdef __x86_64__
	if (rl_kernel_at_least(5, 18))
		return dwarf ? ";start_thread;waiter;blk_pipe_wait;__read;" :
			       " start_thread;waiter;__read;";
#endif
	return " open:both [Missed User Stack];";
}

/* One wait, open at both ends: from when blk-waiter blocked (as the kernel
 * keeps it) to the END record, its kernel stack in pipe_read, its user
 * stack where it can be read; every view shows it (for its thread: a -a
 * recording also holds the blk-waiters of tests running beside it),
 * weighed by the whole recording. */
static void blocked_through(bool system_wide, bool dwarf)
{
	struct blocker b;
	struct waits w;
	const struct cap_offcpu *o;
	char *s, line[128], pid[16], tid[16];

	blocker_start(&b, "pipe", NULL);
	cr_assert(said(&b, "blocked", &b.blocked_ns), "the blocker did not block");
	usleep(300000);
	snprintf(pid, sizeof(pid), "%d", b.pid);
	snprintf(tid, sizeof(tid), "%d", b.tid);
	if (dwarf)
		rl_need_dwarf();
	if (system_wide)
		record((char *[]){ "-a", "-d", "2", "--call-graph", dwarf ? "dwarf" : "fp", NULL });
	else
		record((char *[]){ "-p", pid, "-d", "2", "--call-graph", dwarf ? "dwarf" : "fp",
				   NULL });
	read_waits(b.tid, &w);
	blocker_stop(&b);

	cr_assert_eq(w.n, 1, "%d waits of blk-waiter, expected 1 open at both ends", w.n);
	o = &w.w[0];
	cr_assert_eq(o->open, CAP_OFFCPU_OPEN_START | CAP_OFFCPU_OPEN_END, "open %#x", o->open);
	cr_assert_eq(o->start + o->duration, w.end_ns, "it ends at the END record");
	cr_assert_lt(o->start, w.start_ns, "it began before the recording");
	cr_assert_leq(absdiff(o->start, b.blocked_ns), SINCE_SLACK_NS,
		      "began %" PRIu64 " ns from when it blocked", absdiff(o->start, b.blocked_ns));

	/* the views: the part seen is the whole recording */
	s = rl_stkrec_on(cap, (char *[]){ "report", "--top-waits", "-t", tid, NULL });
	snprintf(line, sizeof(line), " %12" PRIu64 " %12" PRIu64 "  ",
		 us(w.end_ns - w.start_ns), us(w.end_ns - w.start_ns));
	cr_assert_not_null(strstr(s, line), "top-waits, want%s:\n%s", line, s);
	cr_assert_eq(rl_count_lines_with(s, "  open both"), 1, "%s", s);
	cr_assert_not_null(strstr(s, "pipe_read\n"), "%s", s);
	s = rl_stkrec_on(cap, (char *[]){ "report", "--top-waits", "--json", "-t", tid,
				   NULL });
	cr_assert_not_null(strstr(s, "\"open\": \"both\", \"began\": \""), "%s", s);
	s = rl_stkrec_on(cap, (char *[]){ "script", "--folded", "-t", tid, NULL });
	cr_assert_eq(rl_lines(s), 1, "%s", s);
	cr_assert_not_null(strstr(s, waiting_ustack(dwarf)), "want %s in:\n%s",
			   waiting_ustack(dwarf), s);
	s = rl_stkrec_on(cap, (char *[]){ "report", "--folded", "-t", tid, NULL });
	snprintf(line, sizeof(line), "pipe_read %" PRIu64 "\n", us(w.end_ns - w.start_ns));
	cr_assert_eq(rl_lines(s), 1, "%s", s);
	cr_assert_not_null(strstr(s, line), "folded, want ...%s%s", line, s);
}

Test(record_waits, blocked_through_the_recording_pid)
{
	blocked_through(false, false);
}

Test(record_waits, blocked_through_the_recording_system_wide)
{
	blocked_through(true, false);
}

Test(record_waits, blocked_through_the_recording_dwarf)
{
	blocked_through(false, true);
}

/* --- a wait that began before the recording and ends in it ----------------- */

Test(record_waits, began_before_and_woke_during)
{
	struct recording rec;
	struct blocker b;
	struct waits w;
	const struct cap_offcpu *o;
	char *s;

	/* a nap the test ends (SIGUSR1) once the recorder says it records */
	blocker_start(&b, "nap", "100000");
	cr_assert(said(&b, "blocked", &b.blocked_ns), "the blocker did not block");
	usleep(300000);
	record_pid_start(&b, &rec);
	kill(b.pid, SIGUSR1);
	cr_assert(said(&b, "woke", &b.woke_ns), "the blocker did not wake");
	record_stop(&rec);
	read_waits(b.tid, &w);
	blocker_stop(&b);

	cr_assert_geq(w.n, 1);
	o = &w.w[0];
	cr_assert_eq(o->open, CAP_OFFCPU_OPEN_START, "open %#x", o->open);
	cr_assert_lt(o->start, w.start_ns);
	cr_assert_leq(absdiff(o->start, b.blocked_ns), SINCE_SLACK_NS,
		      "began %" PRIu64 " ns from when it blocked", absdiff(o->start, b.blocked_ns));
	/* it ended where the thread ran again, as any wait: before it said so */
	cr_assert_leq(o->start + o->duration, b.woke_ns);
	cr_assert_leq(b.woke_ns - (o->start + o->duration), SINCE_SLACK_NS);
	s = rl_stkrec_on(cap, (char *[]){ "script", "--comm", "blk-waiter", "--open-waits", NULL });
	cr_assert_eq(rl_count_lines_with(s, "offcpu: "), 1, "%s", s);
	cr_assert_not_null(strstr(s, " open:start\n"), "the start as the kernel kept it:\n%s", s);
	cr_assert_not_null(strstr(s, "hrtimer_nanosleep"), "%s", s);
}

/* --- a wait still open at Ctrl-C ------------------------------------------ */

Test(record_waits, blocked_during_and_open_at_the_stop)
{
	struct recording rec;
	struct blocker b;
	struct waits w;
	const struct cap_offcpu *o;

	/* the user threads of the whole system, the blocker started once the
	 * recorder says it records: its naps and its last wait are all in */
	rl_need_bpf();
	record_start((char *[]){ "-a", "-u", NULL }, &rec);
	blocker_start(&b, "later", "200");
	cr_assert(said(&b, "blocked", &b.blocked_ns), "the blocker did not block");
	usleep(700000);
	record_stop(&rec);
	read_waits(b.tid, &w);
	blocker_stop(&b);

	cr_assert_geq(w.n, 2, "its 1 ms naps, then the wait");
	o = &w.w[w.n - 1];
	cr_assert_eq(o->open, CAP_OFFCPU_OPEN_END, "open %#x", o->open);
	cr_assert_eq(o->start + o->duration, w.end_ns);
	cr_assert_geq(o->start, b.blocked_ns, "seen switching out, after it said so");
	cr_assert_leq(o->start - b.blocked_ns, SINCE_SLACK_NS);
	/* every nap began and ended in the recording */
	for (int i = 0; i < w.n - 1; i++)
		cr_assert_eq(w.w[i].open, 0, "wait %d of %d", i, w.n);
}

/* --- a stopped process ------------------------------------------------------ */

Test(record_waits, stopped_process_state_t)
{
	struct blocker b;
	struct waits w;
	char *s, want[64];

	blocker_start(&b, "pipe", NULL);
	cr_assert(said(&b, "blocked", &b.blocked_ns), "the blocker did not block");
	kill(b.pid, SIGSTOP);
	usleep(300000);
	record_pid(&b, "1");
	read_waits(b.tid, &w);
	kill(b.pid, SIGCONT);
	blocker_stop(&b);

	cr_assert_eq(w.n, 1);
	cr_assert_eq(w.w[0].open, CAP_OFFCPU_OPEN_START | CAP_OFFCPU_OPEN_END);
	cr_assert_eq(w.w[0].state & 0xff, 0x4, "__TASK_STOPPED, state %#x", w.w[0].state);
	s = rl_stkrec_on(cap, (char *[]){ "script", "--comm", "blk-waiter", NULL });
	snprintf(want, sizeof(want), " state %#x open:both\n", w.w[0].state);
	cr_assert_not_null(strstr(s, want), "%s", s);
	cr_assert_not_null(strstr(s, "do_signal_stop"), "%s", s);
}

/* --- the off-CPU table ranked by wait site --------------------------------- */

static bool has_row(const char *table, const char *pattern)
{
	regex_t re;
	bool hit;

	cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
	hit = regexec(&re, table, 0, NULL, 0) == 0;
	regfree(&re);
	return hit;
}

/* The nanosleep, mutex and pipe waits of the three workloads as rows of
 * their own, by the kernel function they waited in (6.1 and 6.18 name
 * the futex and pipe ones differently) and the user function that
 * called: with frame pointers, the caller of the function that called
 * the C library's wrapper (which has none; mode "fp"), unwound from the
 * CFI the function itself (mode NULL, record's default: dwarf). */
static void wait_site_rows(const char *mode, const char *const rows[], size_t nr)
{
	char sleeper[PATH_MAX], mutex[PATH_MAX], pipe_[PATH_MAX], script[3 * PATH_MAX + 64];
	char *s;
	size_t i;

	rl_workload("sleeper", sleeper);
	rl_workload("mutexwait", mutex);
	rl_workload("pipewait", pipe_);
	rl_need_bpf();
	if (!mode)
		rl_need_dwarf();
	snprintf(script, sizeof(script), "%s 1000 10 & %s 4 10 10 & %s 20 30 & wait", sleeper,
		 mutex, pipe_);
	if (mode)
		record((char *[]){ "--call-graph", (char *)mode, "--", "/bin/sh", "-c", script,
				   NULL });
	else
		record((char *[]){ "--", "/bin/sh", "-c", script, NULL });
	s = rl_stkrec_on(cap, (char *[]){ "report", NULL });
	cr_assert(has_row(s, "^# Overhead +Command +Wait site +User symbol$"), "%s", s);
	for (i = 0; i < nr; i++)
		cr_assert(has_row(s, rows[i]), "no row %s in:\n%s", rows[i], s);
	/* -g keeps perf's rows by the innermost frame */
	s = rl_stkrec_on(cap, (char *[]){ "report", "-g", NULL });
	cr_assert_not_null(strstr(s, "[k] __schedule\n"), "%s", s);
}

Test(record_waits, offcpu_table_by_wait_site)
{
	static const char *const rows[] = {
		"sleeper-nap +\\[k\\] hrtimer_nanosleep +\\[\\.\\] sleeper_nap$",
		"pipe-reader +\\[k\\] (anon_)?pipe_read +\\[\\.\\] pipe_reader_wait$",
		"mutex-worker +\\[k\\] futex_(do_wait|wait_queue) +\\[\\.\\] wait_lock$",
		"mutex-worker +\\[k\\] hrtimer_nanosleep +\\[\\.\\] hold_lock$",
	};

	wait_site_rows(NULL, rows, sizeof(rows) / sizeof(rows[0]));
}

Test(record_waits, offcpu_table_by_wait_site_fp)
{
	static const char *const rows[] = {
		"sleeper-nap +\\[k\\] hrtimer_nanosleep +\\[\\.\\] sleeper_loop$",
		"pipe-reader +\\[k\\] (anon_)?pipe_read +\\[\\.\\] pipe_reader_loop$",
		"mutex-worker +\\[k\\] futex_(do_wait|wait_queue) +\\[\\.\\] worker$",
		"mutex-worker +\\[k\\] hrtimer_nanosleep +\\[\\.\\] worker$",
	};

	wait_site_rows("fp", rows, sizeof(rows) / sizeof(rows[0]));
}

/* --- each --switch-output file ------------------------------------------- */

/* Every file of a switched recording sees the blocked thread whole: one
 * wait, open at both ends, from its own start to its own END. */
Test(record_waits, each_switched_file_has_the_open_wait)
{
	char pid[16], pattern[PATH_MAX + 8], *files[8];
	struct blocker b;
	struct waits w;
	size_t i, n;
	glob_t g;

	blocker_start(&b, "pipe", NULL);
	cr_assert(said(&b, "blocked", &b.blocked_ns), "the blocker did not block");
	snprintf(pid, sizeof(pid), "%d", b.pid);
	record((char *[]){ "-p", pid, "-d", "2.5", "--switch-output", "1s", NULL });
	snprintf(pattern, sizeof(pattern), "%s.*", cap);
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0);
	n = g.gl_pathc;
	cr_assert(n >= 2 && n <= 8, "%zu files", n);
	for (i = 0; i < n; i++)
		files[i] = strdup(g.gl_pathv[i]);
	globfree(&g);
	for (i = 0; i < n; i++) {
		read_waits_of(files[i], b.tid, &w);
		unlink(files[i]);
		cr_assert_eq(w.n, 1, "%s: %d waits", files[i], w.n);
		cr_assert_eq(w.w[0].open, CAP_OFFCPU_OPEN_START | CAP_OFFCPU_OPEN_END, "%s",
			     files[i]);
		cr_assert_eq(w.w[0].start + w.w[0].duration, w.end_ns, "%s", files[i]);
		cr_assert_lt(w.w[0].start, w.start_ns, "%s", files[i]);
		free(files[i]);
	}
	blocker_stop(&b);
}
