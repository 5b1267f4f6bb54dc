// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flight recorder end to end (record --flight-recorder): the real
 * recorder on tests/workloads/stall.c (short naps, long stalls, a child
 * process), its dumps read back by event times, not by the wall clock.
 * reliability_flight::memory_flat runs 20 s here and 30 min in make soak.
 * Every stall is 1.5 s against a 1 s threshold: on a busy host a 10 ms
 * nap's wakeup can wait for a CPU for most of a second.
 */
#include <inttypes.h>
#include "format/capture.h"
#include "tests/reliability_run.h"
#include "tests/util_python.h"

static char dir[] = "/tmp/stkrec-flight-XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* What a dump reads back as. */
struct dump {
	struct cap_trigger trig;
	int triggers;                /* TRIGGER records */
	bool has_end, recovered;
	uint32_t end_reason;
	uint64_t events, first_end, last_end; /* event ends: the earliest, latest */
	uint64_t stall_dur;          /* the trigger's wait, found among the OFFCPUs */
	uint32_t stall_open;         /* ... its open flags */
	uint64_t child_events;       /* events of a process but the trigger's */
	bool child_named;            /* a THREAD "stall-child" */
	uint64_t dup_ids;            /* STRING, STACK, PY_CODE ids defined twice */
	uint64_t after;              /* events that ended after the trigger */
};

/* Ids seen per definition type: the segments of a dump share one id space. */
static uint8_t ids_seen[3][1 << 20];

static void note_id(struct dump *d, int t, uint32_t id)
{
	if (id < sizeof(ids_seen[0]))
		d->dup_ids += ids_seen[t][id]++ > 0;
}

static uint64_t event_end(const struct cap_record *r)
{
	switch (r->type) {
	case CAP_REC_OFFCPU:
		return r->offcpu.start + r->offcpu.duration;
	case CAP_REC_CPU:
		return r->cpu.time;
	case CAP_REC_BIO:
		return r->bio.complete_time;
	case CAP_REC_WAKEUP:
		return r->wakeup.time;
	}
	return 0;
}

static void note(struct dump *d, const struct cap_record *r, uint32_t pid)
{
	uint64_t end = event_end(r);

	if (end) {
		d->events++;
		if (!d->first_end || end < d->first_end)
			d->first_end = end;
		if (end > d->last_end)
			d->last_end = end;
		d->child_events += r->type == CAP_REC_OFFCPU && r->offcpu.pid != pid;
		d->after += pid && end > d->trig.time;
	}
	if (r->type == CAP_REC_STRING)
		note_id(d, 0, r->string.id);
	if (r->type == CAP_REC_STACK)
		note_id(d, 1, r->stack.id);
	if (r->type == CAP_REC_PY_CODE)
		note_id(d, 2, r->py_code.id);
	if (r->type == CAP_REC_THREAD && !strcmp(r->thread.comm, "stall-child"))
		d->child_named = true;
	if (r->type == CAP_REC_END) {
		d->has_end = true;
		d->end_reason = r->end.reason;
	}
	if (r->type == CAP_REC_TRIGGER) {
		d->trig = r->trigger;
		d->triggers++;
	}
}

/* Two passes: the TRIGGER comes after the events it names. */
static void read_dump(const char *path, struct dump *d)
{
	struct cap_record rec;
	struct cap_reader *r;
	int pass;

	memset(d, 0, sizeof(*d));
	memset(ids_seen, 0, sizeof(ids_seen));
	for (pass = 0; pass < 2; pass++) {
		cr_assert_eq(cap_reader__open(path, &r), 0, "%s", path);
		while (cap_reader__next(r, &rec) == 1) {
			if (!pass) {
				if (rec.type == CAP_REC_TRIGGER || rec.type == CAP_REC_END)
					note(d, &rec, 0);
				continue;
			}
			if (rec.type != CAP_REC_TRIGGER && rec.type != CAP_REC_END)
				note(d, &rec, d->trig.pid);
			if (rec.type == CAP_REC_OFFCPU && rec.offcpu.tid == d->trig.tid &&
			    rec.offcpu.start == d->trig.wait_start) {
				d->stall_dur = rec.offcpu.duration;
				d->stall_open = rec.offcpu.open;
			}
		}
		d->recovered = cap_reader__stats(r)->recovered;
		cap_reader__close(r);
	}
	cr_assert_eq(d->dup_ids, 0, "%s: %" PRIu64 " ids defined twice", path, d->dup_ids);
}

/* FILE.<timestamp> files of base in dir, sorted. */
static int dumps_of(const char *base, char names[][PATH_MAX], int max)
{
	struct dirent **list;
	int i, n, got = 0;

	n = scandir(dir, &list, NULL, alphasort);
	cr_assert_geq(n, 0);
	for (i = 0; i < n; i++) {
		if (got < max && !strncmp(list[i]->d_name, base, strlen(base)) &&
		    list[i]->d_name[strlen(base)] == '.')
			snprintf(names[got++], PATH_MAX, "%s/%s", dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return got;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	while ((text = strstr(text, what))) {
		n++;
		text++;
	}
	return n;
}

/* stkrec record -o DIR/f.cap -e offcpu FLIGHT... -- stall 10 PLAN...,
 * started; its stderr in *fe. */
static pid_t start_flight(char **flight, char **plan, int *fo, int *fe)
{
	static char cap[PATH_MAX], stall[PATH_MAX];
	char *argv[40];
	int n = 0;

	rl_need_bpf();
	rl_workload("stall", stall);
	snprintf(cap, sizeof(cap), "%s/f.cap", dir);
	argv[n++] = (char *)rl_stkrec();
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = cap;
	argv[n++] = "-e";
	argv[n++] = "offcpu";
	while (*flight)
		argv[n++] = *flight++;
	argv[n++] = "--";
	argv[n++] = stall;
	argv[n++] = "10";
	while (*plan && n < 39)
		argv[n++] = *plan++;
	argv[n] = NULL;
	return rl_spawn(argv, fo, fe, 0);
}

static void run_flight(char **flight, char **plan, struct rl_run *r)
{
	int fo, fe;
	pid_t pid = start_flight(flight, plan, &fo, &fe);

	rl_wait(pid, 300, r); /* a hang bound */
	rl_slurp_fd(fe, r->err, sizeof(r->err));
	rl_slurp_fd(fo, r->out, sizeof(r->out));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(r), 0, "%s%s", r->err, r->timed_out ? r->hang : "");
}

/* report --folded of a dump names fn in its off-CPU stacks. */
static void assert_names(const char *path, const char *fn)
{
	char *argv[] = { (char *)rl_stkrec(), "report", "--folded", "-i", (char *)path, NULL };
	static struct rl_run r;
	char *all = NULL;
	size_t len;

	rl_run_all(argv, 120, 0, &r, &all, &len);
	cr_assert_eq(rl_code(&r), 0, "%s: %s", path, r.err);
	cr_assert(all && strstr(all, fn), "%s: no %s in\n%s", path, fn, r.out);
	free(all);
}

/* The dump's line on stderr counts what its file holds. */
static void assert_line_counts(const char *err, const struct dump *d)
{
	const char *p = strstr(err, " s window, ");
	unsigned long long said = 0;

	cr_assert(p && sscanf(p, " s window, %llu events", &said) == 1, "%s", err);
	cr_assert_eq(said, d->events, "%s", err);
}

Test(flight, one_stall_one_dump_with_the_span_before_it, .init = setup, .fini = teardown,
     .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "3s", "--trigger", "wait>=1s", NULL };
	char *plan[] = { "-5000", "+1500", "-3000", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	struct dump d;

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 1, "%s", r.err);
	cr_assert_eq(count_of(r.err, "stkrec: dump "), 1, "%s", r.err);
	cr_assert(strstr(r.err, "stkrec: dump 1: "), "%s", r.err);
	read_dump(names[0], &d);
	cr_assert(d.has_end && !d.recovered, "%s", names[0]);
	cr_assert_eq(d.triggers, 1);
	cr_assert_eq(d.trig.kind, CAP_TRIGGER_WAIT);
	cr_assert_eq(d.trig.dump, 1);
	cr_assert_eq(d.trig.tid, d.trig.pid, "the main thread stalls");
	cr_assert_geq(d.trig.wait_duration, 1500000000ull);
	cr_assert_eq(d.trig.time, d.trig.wait_start + d.trig.wait_duration);
	cr_assert_eq(d.trig.threshold, 1000000000ull);
	/* the stall, whole, and the 3 s before its end, nothing older */
	cr_assert_eq(d.stall_dur, d.trig.wait_duration);
	cr_assert_eq(d.stall_open, 0);
	cr_assert_eq(d.trig.window_start, d.trig.time - 3000000000ull);
	cr_assert_geq(d.first_end, d.trig.window_start, "an event older than the window");
	cr_assert_lt(d.first_end - d.trig.window_start, 1000000000ull,
		     "10 ms naps, yet the first event is %.3f s into the window",
		     (d.first_end - d.trig.window_start) / 1e9);
	cr_assert_geq(d.trig.window_end, d.trig.time);
	cr_assert_eq(d.end_reason, CAP_STOP_SWITCH);
	assert_names(names[0], "stall_long");
	assert_line_counts(r.err, &d);
	cr_log_info("dump: window %.3f s, %" PRIu64 " events, stall %.3f s", (d.trig.window_end -
		    d.trig.window_start) / 1e9, d.events, d.trig.wait_duration / 1e9);
}

/* With -e wakeup the dump holds who woke the trigger's wait: --chain on
 * its thread names the waker (the timer's interrupt ending the nap). */
Test(flight, chain_of_the_trigger_from_the_dump_alone, .init = setup, .fini = teardown,
     .timeout = 600)
{
	char *flight[] = { "-e", "offcpu,wakeup", "--flight-recorder", "3s", "--trigger",
			   "wait>=1s", NULL };
	char *plan[] = { "-3000", "+1500", "-1000", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 }, c;
	char tid[16];
	struct dump d;

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 1, "%s", r.err);
	read_dump(names[0], &d);
	snprintf(tid, sizeof(tid), "%u", d.trig.tid);
	{
		char *argv[] = { (char *)rl_stkrec(), "report", "--chain", tid, "-i", names[0],
				 NULL };

		rl_run(argv, 120, 0, &c);
	}
	cr_assert_eq(rl_code(&c), 0, "%s", c.err);
	/* hop 0 is the stall itself, woken by the timer that ended it */
	{
		char want[64];
		const char *p;
		double ms = 0;

		snprintf(want, sizeof(want), " 0  stall %u/%u waited ", d.trig.pid, d.trig.tid);
		p = strstr(c.out, want);
		cr_assert(p && sscanf(p + strlen(want), "%lf ms", &ms) == 1, "%s", c.out);
		cr_assert_geq(ms, 1500.0, "%s", c.out);
	}
	cr_assert(strstr(c.out, "in [k] hrtimer_nanosleep  [.] "), "%s", c.out);
	cr_assert(strstr(c.out, "by [hardirq]: hrtimer_wakeup"), "%s", c.out);
}

Test(flight, no_file_when_no_wait_is_that_long, .init = setup, .fini = teardown,
     .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "3s", "--trigger", "wait>=3s", NULL };
	char *plan[] = { "-2000", "+1500", "-1000", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 0, "%s", r.err);
	cr_assert_eq(access(names[0], F_OK), -1);
	cr_assert_eq(count_of(r.err, "stkrec: dump "), 0, "%s", r.err);
	cr_assert(strstr(r.err, "flight recorder: 0 dumps"), "%s", r.err);
}

/* Wait for the recorder's n-th dump line. */
static void wait_dump_line(pid_t pid, int fe, int n, char *err, size_t len)
{
	char want[32];
	double end = rl_now() + 120;

	snprintf(want, sizeof(want), "stkrec: dump %d: ", n);
	for (rl_slurp_fd(fe, err, len); !strstr(err, want); rl_slurp_fd(fe, err, len)) {
		cr_assert(rl_now() < end && rl_running(pid), "no '%s': %s", want, err);
		usleep(10000);
	}
}

Test(flight, sigusr2_twice_two_complete_dumps, .init = setup, .fini = teardown,
     .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "2s", "--trigger", "wait>=1h", NULL };
	char *plan[] = { "-60000", NULL };
	static char names[8][PATH_MAX], err[16384];
	struct rl_run r = { 0 };
	struct dump d;
	int i, fo, fe;
	pid_t pid = start_flight(flight, plan, &fo, &fe);

	rl_wait_recording(pid, fe);
	for (i = 1; i <= 2; i++) {
		usleep(500000);
		kill(pid, SIGUSR2);
		wait_dump_line(pid, fe, i, err, sizeof(err));
	}
	kill(pid, SIGINT);
	rl_wait(pid, 120, &r);
	rl_slurp_fd(fe, r.err, sizeof(r.err));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert_eq(dumps_of("f.cap", names, 8), 2, "%s", r.err);
	for (i = 0; i < 2; i++) {
		read_dump(names[i], &d);
		cr_assert(d.has_end && !d.recovered, "%s", names[i]);
		cr_assert_eq(d.trig.kind, CAP_TRIGGER_SIGNAL);
		cr_assert_eq(d.trig.dump, (uint32_t)i + 1);
		cr_assert_gt(d.events, 0);
		cr_assert_geq(d.first_end, d.trig.window_start);
		assert_names(names[i], "stall_nap");
	}
}

Test(flight, post_keeps_recording_after_the_trigger, .init = setup, .fini = teardown,
     .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "2s", "--trigger", "wait>=1s",
			   "--post", "1s", NULL };
	char *plan[] = { "-4000", "+1500", "-3000", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	struct dump d;

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 1, "%s", r.err);
	read_dump(names[0], &d);
	cr_assert_eq(d.trig.post, 1000000000ull);
	cr_assert_geq(d.trig.window_end, d.trig.time + d.trig.post);
	cr_assert_eq(d.trig.window_start, d.trig.time - 2000000000ull);
	/* the naps after the stall: 10 ms each, for a second (a few without
	 * --post, those the drain had before the dump) */
	cr_assert_geq(d.after, 20, "%" PRIu64 " events after the trigger, the last %.3f s after it",
		      d.after, ((double)d.last_end - d.trig.time) / 1e9);
}

Test(flight, max_dumps_stops_after_n, .init = setup, .fini = teardown, .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "2s", "--trigger", "wait>=1s",
			   "--max-dumps", "2", NULL };
	char *plan[] = { "-3000", "+1500", "-2500", "+1500", "-2500", "+1500", "-3000", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	struct dump d;
	int i;

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 2, "%s", r.err);
	cr_assert(strstr(r.err, "--max-dumps reached"), "%s", r.err);
	/* the recording stopped at the second: the third stall never ended */
	cr_assert_eq(count_of(r.out, "stall "), 2, "%s", r.out);
	for (i = 0; i < 2; i++) {
		read_dump(names[i], &d);
		cr_assert_eq(d.trig.dump, (uint32_t)i + 1);
		cr_assert_eq(d.trig.kind, CAP_TRIGGER_WAIT);
	}
}

Test(flight, process_born_and_gone_in_the_window_is_named, .init = setup, .fini = teardown,
     .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "3s", "--trigger", "wait>=1s", NULL };
	char *plan[] = { "-4000", "c", "-500", "+1500", "-500", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	struct dump d;

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 1, "%s", r.err);
	read_dump(names[0], &d);
	cr_assert(d.child_named, "no THREAD stall-child in %s", names[0]);
	cr_assert_gt(d.child_events, 0, "the child's naps");
	assert_names(names[0], "stall-child");
}

Test(flight, a_hang_triggers_while_it_lasts, .init = setup, .fini = teardown, .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "2s", "--trigger", "wait>=1s", NULL };
	char *plan[] = { "-3000", "+5000", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	struct dump d;

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 1, "once: %s", r.err);
	read_dump(names[0], &d);
	cr_assert_eq(d.trig.kind, CAP_TRIGGER_WAIT);
	cr_assert_geq(d.trig.wait_duration, 1000000000ull);
	cr_assert_lt(d.trig.wait_duration, 4000000000ull, "found while it lasted, not at its end");
	/* in the dump, still open at the dump's moment */
	cr_assert(d.stall_open & CAP_OFFCPU_OPEN_END, "open flags %u", d.stall_open);
	cr_assert_geq(d.stall_dur, d.trig.wait_duration);
}

/* /bin/sleep SECS, its pid also as text in pidarg (16 bytes). */
static pid_t start_sleeper(const char *secs, char *pidarg)
{
	char *argv[] = { "/bin/sleep", (char *)secs, NULL };
	int fo, fe;
	pid_t pid = rl_spawn(argv, &fo, &fe, 0);

	close(fo);
	close(fe);
	snprintf(pidarg, 16, "%d", pid);
	return pid;
}

/* A thread off CPU since before the recording (an idle worker, a daemon
 * asleep) is no hang: only waits begun while recording trigger while open. */
Test(flight, a_wait_begun_before_the_recording_is_no_hang, .init = setup, .fini = teardown,
     .timeout = 600)
{
	char cap[PATH_MAX], pidarg[16];
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	pid_t sleeper;

	rl_need_bpf();
	sleeper = start_sleeper("60", pidarg);
	snprintf(cap, sizeof(cap), "%s/f.cap", dir);
	{
		char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-e", "offcpu", "-p",
				 pidarg, "--flight-recorder", "1s", "--trigger", "wait>=500ms",
				 "-d", "3", NULL };

		rl_run(argv, 300, 0, &r);
	}
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert_eq(dumps_of("f.cap", names, 8), 0, "%s", r.err);
}

/* A wait under way at the start counts from the attach: a command held
 * until then, or a thread asleep since before, is not long by the time
 * it was off CPU before the recording. */
Test(flight, a_wait_counts_from_the_attach, .init = setup, .fini = teardown, .timeout = 600)
{
	char cap[PATH_MAX], pidarg[16];
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	pid_t sleeper, rec;
	int fo, fe;

	rl_need_bpf();
	sleeper = start_sleeper("4", pidarg);
	usleep(2000000); /* 2 s of its wait pass before the recording */
	snprintf(cap, sizeof(cap), "%s/f.cap", dir);
	{
		char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-e", "offcpu", "-p",
				 pidarg, "--call-graph", "fp", "--flight-recorder", "2s",
				 "--trigger", "wait>=2500ms", "-d", "4", NULL };

		rec = rl_spawn(argv, &fo, &fe, 0);
	}
	rl_wait_recording(rec, fe);
	if (!rl_running(sleeper)) {
		kill(rec, SIGKILL);
		rl_wait(rec, 30, &r);
		cr_skip_test("the recorder attached after the 4 s sleep ended: nothing to check");
	}
	rl_wait(rec, 120, &r);
	rl_slurp_fd(fe, r.err, sizeof(r.err));
	close(fo);
	close(fe);
	waitpid(sleeper, NULL, 0);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert_eq(dumps_of("f.cap", names, 8), 0, "%s", r.err);
}

Test(flight, without_trigger_the_end_dumps, .init = setup, .fini = teardown, .timeout = 600)
{
	char *flight[] = { "--flight-recorder", "2s", NULL };
	char *plan[] = { "-4000", NULL };
	static char names[8][PATH_MAX];
	struct rl_run r = { 0 };
	struct dump d;

	run_flight(flight, plan, &r);
	cr_assert_eq(dumps_of("f.cap", names, 8), 1, "%s", r.err);
	read_dump(names[0], &d);
	cr_assert_eq(d.trig.kind, CAP_TRIGGER_END);
	cr_assert_eq(d.end_reason, CAP_STOP_COMMAND);
	assert_line_counts(r.err, &d);
	cr_assert_eq(d.trig.window_start, d.trig.time - 2000000000ull);
	cr_assert_geq(d.first_end, d.trig.window_start);
	assert_names(names[0], "stall_nap");
}

Test(flight, options_refused_alone_or_together, .init = setup, .fini = teardown)
{
	static const char *const bad[][4] = {
		{ "--trigger", "wait>=1s", NULL },
		{ "--flight-recorder", "3s", "--switch-output", "1s" },
		{ "--flight-recorder", "3s", "-o", "-" },
		{ "--flight-recorder", "3s", "--trigger", "cpu>=1s" },
		{ "--flight-recorder", "0s", NULL },
	};
	struct rl_run r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { (char *)rl_stkrec(), "record", (char *)bad[i][0],
				 (char *)bad[i][1], (char *)bad[i][2], (char *)bad[i][3], NULL };

		rl_run(argv, 30, 0, &r);
		cr_assert_eq(rl_code(&r), 2, "%s %s: %d %s", bad[i][0], bad[i][1], rl_code(&r), r.err);
		/* the one error line, then the usage hint */
		cr_assert_eq(count_of(r.err, "\n"), 2, "%s", r.err);
		cr_assert(strstr(r.err, "Try 'stkrec record -h'"), "%s", r.err);
	}
}

/*
 * Python's code objects in every file of a recording: each segment (and
 * each --switch-output file) writes again the PY_CODE records its stacks
 * use. A new file's interner at the address of a freed one once left them
 * out: names from another file, or none ("[python: code not recorded]").
 * No file lacks a name; the files after the first (a dump: the one) name
 * both threads' leaves, at least two of them a leaf. Which file holds the
 * burn's start and end depends on the host's load: the first may end
 * before the interpreter was read, the last begin once a thread is done,
 * and a file holds what the drain read while it was open.
 */
static void python_files(const char *mode, const char *value, int want_files)
{
	const struct test_python *py;
	static char names[16][PATH_MAX], cap[PATH_MAX], script[PATH_MAX];
	bool alpha = false, beta = false;
	struct rl_run r = { 0 };
	int i, n, leafy = 0;
	char *all = NULL;
	size_t len;

	rl_need_bpf();
	py = test_python_or_skip(0);
	snprintf(script, sizeof(script), "%s/py/twothreads.py",
		 rl_env("STKREC_WORKLOADS", "build/workloads"));
	snprintf(cap, sizeof(cap), "%s/p.cap", dir);
	{
		/* no pack: a switch waits for the last file's, seconds for
		 * python3.11's DWARF on a busy host, and files are fewer */
		char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-e", "offcpu,cpu",
				 "--no-pack", (char *)mode, (char *)value, "--", (char *)py->path,
				 script, "7", NULL };

		rl_run(argv, 300, 0, &r);
	}
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	n = dumps_of("p.cap", names, 16);
	cr_assert_geq(n, want_files, "%s", r.err);
	for (i = 0; i < n; i++) {
		char *argv[] = { (char *)rl_stkrec(), "report", "--folded", "-i", names[i], NULL };
		static struct rl_run rr;
		bool a, b;

		rl_run_all(argv, 120, 0, &rr, &all, &len);
		cr_assert_eq(rl_code(&rr), 0, "%s: %s", names[i], rr.err);
		cr_assert_not(strstr(all, "code not recorded"), "%s:\n%s", names[i], all);
		a = strstr(all, "alpha_leaf (");
		b = strstr(all, "beta_leaf (");
		if (i > 0 || n == 1) {
			alpha |= a;
			beta |= b;
			leafy += a || b;
		}
		free(all);
	}
	cr_assert(alpha && beta, "%d files: alpha_leaf named %d, beta_leaf %d: %s", n, alpha, beta,
		  r.err);
	cr_assert_geq(leafy, n == 1 ? 1 : 2, "%d files, %d after the first name a leaf: %s", n,
		      leafy, r.err);
}

Test(python_segments, flight_dump_names_every_frame, .init = setup, .fini = teardown,
     .timeout = 600)
{
	python_files("--flight-recorder", "10s", 1);
}

Test(python_segments, switch_output_files_name_every_frame, .init = setup, .fini = teardown,
     .timeout = 600)
{
	python_files("--switch-output", "1s", 3);
}

/* Bytes the recorder holds: its RSS and its segments' memfds. */
static long held_kb(pid_t pid)
{
	char path[PATH_MAX], link[PATH_MAX], buf[4096];
	struct dirent *e;
	struct stat st;
	long kb = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	rl_cat_proc(path, buf, sizeof(buf));
	if (strstr(buf, "VmRSS:"))
		kb = atol(strstr(buf, "VmRSS:") + 6);
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char fd[PATH_MAX + 300];
		ssize_t n;

		snprintf(fd, sizeof(fd), "%s/%s", path, e->d_name);
		n = readlink(fd, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strstr(link, "memfd:stkrec-segment") && !stat(fd, &st))
			kb += st.st_size / 1024;
	}
	if (d)
		closedir(d);
	return kb;
}

/*
 * Memory stays flat at a steady event rate, however long: RSS and the
 * segments held, sampled every second (10 s in make soak, 30 min long),
 * grow by at most a tenth and 4 MiB past their peak of the first half.
 */
Test(reliability_flight, memory_flat, .init = setup, .fini = teardown, .timeout = 2400)
{
	double secs = rl_soak() ? 1800 : 20, every = rl_soak() ? 10 : 1;
	char cap[PATH_MAX], burst[PATH_MAX];
	long kb, first = 0, second = 0;
	struct rl_run r = { 0 };
	pid_t pid, load;
	int fo, fe;
	double t0;

	rl_need_bpf();
	load = rl_start_burst(burst);
	snprintf(cap, sizeof(cap), "%s/soak.cap", dir);
	{
		char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-a", "-e",
				 "offcpu,cpu", "--flight-recorder", "4s", NULL };

		pid = rl_spawn(argv, &fo, &fe, 0);
	}
	rl_wait_recording(pid, fe);
	t0 = rl_now();
	while (rl_now() - t0 < secs) {
		usleep(every * 1e6);
		kb = held_kb(pid);
		cr_assert_gt(kb, 0, "recorder gone");
		if (rl_now() - t0 < secs / 2)
			first = kb > first ? kb : first;
		else
			second = kb > second ? kb : second;
	}
	kill(pid, SIGINT);
	rl_wait(pid, 120, &r);
	rl_kill(&load);
	rl_slurp_fd(fe, r.err, sizeof(r.err));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_log_info("flight recorder over %.0f s: held at most %ld kB in the first half, %ld kB "
		    "in the second", secs, first, second);
	cr_assert_leq(second, first + first / 10 + 4096, "memory grew from %ld to %ld kB", first,
		      second);
}
