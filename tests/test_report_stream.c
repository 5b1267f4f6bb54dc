// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Views that group events as they read them (model_opts.stream_events):
 * the replay hands on exactly the events a held load keeps, in file order
 * and to where the load stopped; the default table, -g, --folded and
 * --svg read the same streamed or held; and `stkrec report`'s memory does
 * not grow with the events.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include "tests/report_run.h"
#include "tests/util_e2e.h"

TestSuite(report_stream, .init = setup, .fini = teardown);

/* What a replay handed on, in order. */
struct got {
	struct cap_offcpu off[64];
	struct cap_cpu cpu[64];
	size_t noff, ncpu, calls, stop_after;
};

static int keep_event(void *arg, const struct cap_offcpu *off, const struct cap_cpu *cpu)
{
	struct got *g = arg;

	cr_assert((off == NULL) != (cpu == NULL), "one of the two kinds per call");
	g->calls++;
	if (off && g->noff < 64)
		g->off[g->noff++] = *off;
	if (cpu && g->ncpu < 64)
		g->cpu[g->ncpu++] = *cpu;
	return g->stop_after && g->calls == g->stop_after ? 7 : 0;
}

static struct model *load_streamed_as(const char *path, uint64_t max_memory, bool grouped)
{
	struct model_opts o = { .stream_events = true, .group_events = grouped,
				.max_memory = max_memory };
	struct model *m;

	cr_assert_eq(model__load_opts(path, &o, &m), 0);
	cr_assert(model__streamed(m));
	return m;
}

static struct model *load_streamed(const char *path, uint64_t max_memory)
{
	return load_streamed_as(path, max_memory, false);
}

/* The streamed model of path replays exactly the held model's events. */
static void same_events(const char *path)
{
	struct model *held, *m = load_streamed(path, 0);
	const struct cap_offcpu *off;
	const struct cap_cpu *cpu;
	struct got g = { 0 };
	size_t noff, ncpu, n;

	cr_assert_eq(model__load(path, &held), 0);
	cr_assert_not(model__streamed(held));
	off = model__offcpu(held, &noff);
	cpu = model__cpu(held, &ncpu);
	cr_assert(noff > 0 && ncpu > 0 && noff <= 64 && ncpu <= 64);
	cr_assert_eq(model__nr_events(m, CAP_KIND_OFFCPU), noff);
	cr_assert_eq(model__nr_events(m, CAP_KIND_CPU), ncpu);
	cr_assert_eq(model__recovered(m), model__recovered(held));
	cr_assert_eq(model__last_time(m), model__last_time(held));
	/* nothing held */
	cr_assert_null(model__offcpu(m, &n));
	cr_assert_eq(n, 0);
	model__cpu(m, &n);
	cr_assert_eq(n, 0);
	cr_assert_eq(model__replay(m, keep_event, &g), 0);
	cr_assert_eq(g.noff, noff);
	cr_assert_eq(g.ncpu, ncpu);
	cr_assert_eq(memcmp(g.off, off, noff * sizeof(*off)), 0, "off-CPU intervals differ");
	cr_assert_eq(memcmp(g.cpu, cpu, ncpu * sizeof(*cpu)), 0, "CPU samples differ");
	cr_assert_eq(model__replay(held, keep_event, &g), -EINVAL);
	model__free(held);
	model__free(m);
}

Test(report_stream, replay_is_what_a_held_load_keeps)
{
	same_events(cap_path);
}

Test(report_stream, replay_of_a_cut_capture_stops_where_the_load_did)
{
	char *path = rc_tmpname("cut");
	struct rc_opts o = { .truncate = true };

	cr_assert_eq(rc_write_scene(path, &o), 0);
	same_events(path);
	unlink(path);
	free(path);
}

Test(report_stream, replay_stops_at_the_callbacks_word)
{
	struct model *m = load_streamed(cap_path, 0);
	struct got g = { .stop_after = 3 };

	cr_assert_eq(model__replay(m, keep_event, &g), 7);
	cr_assert_eq(g.calls, 3);
	model__free(m);
}

/* 200k CPU samples: held, they pass a 1 MiB limit and the load stops;
 * streamed, the tables stay under it and every sample is read. */
Test(report_stream, memory_does_not_grow_with_events)
{
	char *path = rc_tmpname("many");
	struct rc_opts o = { .extra_cpu = 200000 };
	struct model_opts held = { .max_memory = 1 << 20 };
	struct model *m;
	struct got g = { 0 };

	cr_assert_eq(rc_write_scene(path, &o), 0);
	cr_assert_eq(model__load_opts(path, &held, &m), 0);
	cr_assert(model__recovered(m));
	model__free(m);
	m = load_streamed(path, 1 << 20);
	cr_assert_not(model__recovered(m), "%s", model__loss_text(m));
	cr_assert_eq(model__nr_events(m, CAP_KIND_CPU), 200004);
	cr_assert_eq(model__replay(m, keep_event, &g), 0);
	cr_assert_eq(g.calls, 200004 + model__nr_events(m, CAP_KIND_OFFCPU));
	model__free(m);
	unlink(path);
	free(path);
}

/* A view's output with the suite's capture (cap_path) loaded streamed
 * (grouped: its events grouped as read too, model__groups()), through
 * filter f (NULL: none); *groups, when asked, whether the model had them. */
static char *run_streamed_as(view_fn fn, struct filter *f, const struct report_opts *o,
			     bool grouped, bool *groups)
{
	struct model *held = model;
	size_t n;
	char *out;

	model = load_streamed_as(cap_path, 0, grouped);
	if (groups)
		*groups = model__groups(model, &n) != NULL;
	out = run(fn, f, o);
	model__free(model);
	model = held;
	return out;
}

static char *run_streamed(view_fn fn, const struct report_opts *o)
{
	return run_streamed_as(fn, NULL, o, false, NULL);
}

Test(report_stream, views_read_the_same_streamed_or_held)
{
	struct report_opts g = { .callgraph = true };
	const struct {
		view_fn fn;
		const struct report_opts *o;
	} v[] = { { view_perf, NULL }, { view_perf, &g }, { view_folded, NULL },
		  { view_topwaits, NULL } };
	bool groups;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(*v); i++) {
		char *want = run(v[i].fn, NULL, v[i].o), *got = run_streamed(v[i].fn, v[i].o);
		char *grouped = run_streamed_as(v[i].fn, NULL, v[i].o, true, &groups);

		cr_assert(strlen(want) > 200, "view %zu: too little to compare: %s", i, want);
		cr_assert_str_eq(got, want, "view %zu differs streamed", i);
		/* pid 400 waits in stack 12 as sh, then as app2 after its exec:
		 * one group would have two names, so there are none */
		cr_assert_not(groups, "a group of two thread names kept");
		cr_assert_str_eq(grouped, want, "view %zu differs streamed and grouped", i);
		free(want);
		free(got);
		free(grouped);
	}
}

/*
 * Groups that views fold several of into one of theirs (model_group.c):
 * threads 101 and 102, both "waiter" of pid 100, wait in stack 10, 102
 * its longest (5 ms) first, then 101 as long: --top-waits (any name) and
 * the table (one name) merge the two threads' groups, and the longest
 * wait is 102's, the first. 103 is preempted in stack 11, 101 waits there
 * from before the start (open); CPU samples of all three; kernel thread
 * 200 sleeps idle all along (the table folds it); 104 is renamed after
 * its only group's events, so every group has one name.
 */
static int group_scene(const char *path)
{
	static const uint64_t u[] = { 0x401000, 0x402000 }, u2[] = { 0x403000, 0x402000 };
	const uint32_t both = CAP_OFFCPU_OPEN_START | CAP_OFFCPU_OPEN_END;
	struct cap_writer *w = rc_open(path);
	const uint64_t t = RC_T0 + RC_MS;
	struct cap_offcpu open = { .start = RC_T0 - 4 * RC_MS, .duration = 6 * RC_MS, .tid = 101,
				   .pid = 100, .state = 1, .ustack = 11, .kstack = CAP_STACK_NONE,
				   .open = CAP_OFFCPU_OPEN_START };
	struct cap_offcpu idle = { .start = RC_T0 - RC_S, .duration = 5 * RC_S, .tid = 200,
				   .pid = 200, .state = 1, .ustack = CAP_STACK_NONE,
				   .kstack = CAP_STACK_NONE, .open = both };
	int err;

	if (!w)
		return -EIO;
	err = rc_string(w, 1, "/usr/bin/app") ?: cap_writer__stack(w, 10, 1, u, 2) ?:
	      cap_writer__stack(w, 11, 1, u2, 2) ?: rc_thread(w, RC_T0, 101, 100, 0, "waiter") ?:
	      rc_thread(w, RC_T0, 102, 100, 0, "waiter") ?: rc_thread(w, RC_T0, 103, 100, 0, "other") ?:
	      rc_thread(w, RC_T0, 104, 100, 0, "early") ?:
	      rc_thread(w, RC_T0, 200, 200, CAP_THREAD_KERNEL, "kworker/1:0") ?:
	      rc_map(w, RC_T0, 100, 0x400000, 0x500000, 0, 1) ?:
	      rc_offcpu(w, t, RC_MS, 101, 100, 1, 10, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 2 * RC_MS, 5 * RC_MS, 102, 100, 1, 10, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 8 * RC_MS, 5 * RC_MS, 101, 100, 1, 10, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 9 * RC_MS, 3 * RC_MS, 103, 100, 0, 11, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 10 * RC_MS, 2 * RC_MS, 104, 100, 1, 11, CAP_STACK_NONE) ?:
	      cap_writer__append(w, CAP_REC_OFFCPU, &open, sizeof(open), NULL, 0) ?:
	      cap_writer__append(w, CAP_REC_OFFCPU, &idle, sizeof(idle), NULL, 0) ?:
	      rc_cpu(w, t + 14 * RC_MS, 101, 100, 10, CAP_STACK_NONE) ?:
	      rc_cpu(w, t + 15 * RC_MS, 102, 100, 10, CAP_STACK_NONE) ?:
	      rc_cpu(w, t + 16 * RC_MS, 103, 100, 11, CAP_STACK_NONE) ?:
	      rc_cpu(w, t + 17 * RC_MS, 101, 100, 10, CAP_STACK_NONE) ?:
	      rc_thread(w, t + 20 * RC_MS, 104, 100, 0, "late") ?:
	      rc_offcpu(w, t + 30 * RC_MS, 4 * RC_MS, 102, 100, 1, 11, CAP_STACK_NONE);
	if (err) {
		cap_writer__free(w);
		return err;
	}
	return cap_writer__finish(w);
}

/* Each grouping view, under each filter a group passes or fails whole
 * and under -m (which groups cannot take: the events are read again),
 * writes the same read from groups as held. */
Test(report_stream, views_read_the_same_from_groups)
{
	char *path = rc_tmpname("groups"), *held_path = cap_path;
	struct report_opts g = { .callgraph = true }, by_cg = { .sort = { SORT_CGROUP, SORT_COMM },
								   .nsort = 2 };
	const struct {
		view_fn fn;
		const struct report_opts *o;
	} v[] = { { view_perf, NULL }, { view_perf, &g }, { view_perf, &by_cg },
		  { view_folded, NULL }, { view_topwaits, NULL } };
	struct filter f[9] = { { 0 } };
	uint32_t pid = 100, tid = 101;
	struct model *held = model;
	bool groups;
	size_t i, k;

	cr_assert_eq(group_scene(path), 0);
	cap_path = path;
	cr_assert_eq(model__load(path, &model), 0);
	f[1].pids = &pid;
	f[1].npids = 1;
	f[2].tids = &tid;
	f[2].ntids = 1;
	cr_assert_eq(filter__add_comms(&f[3], "waiter"), 0);
	f[4].has_state = true; /* preempted only */
	f[5].open_only = true;
	f[6].threads = FILTER_THREADS_USER;
	f[7].stacks = FILTER_STACKS_KERNEL;
	f[8].min_ns = 2 * RC_MS;
	for (k = 0; k < sizeof(f) / sizeof(*f); k++) {
		for (i = 0; i < sizeof(v) / sizeof(*v); i++) {
			char *want = run(v[i].fn, &f[k], v[i].o);
			char *got = run_streamed_as(v[i].fn, &f[k], v[i].o, true, &groups);

			cr_assert(groups, "no groups");
			cr_assert_str_eq(got, want, "view %zu, filter %zu differs grouped", i, k);
			/* the longest of stack 10 is 102's, at 3 ms, not 101's at 9 */
			if (!k && v[i].fn == view_topwaits)
				cr_assert_not_null(strstr(want, "5000  2026-01-02T03:04:05.003000"),
						   "%s", want);
			free(want);
			free(got);
		}
	}
	for (k = 0; k < sizeof(f) / sizeof(*f); k++) {
		f[k].pids = NULL;
		f[k].tids = NULL;
		filter__free(&f[k]);
	}
	model__free(model);
	model = held;
	cap_path = held_path;
	unlink(path);
	free(path);
}

/* Thread 101 waits three times in stack 10, the longest (9 ms) ended by
 * 102's wakeup, one (4 ms) by 103's; the last (2 ms) has no wakeup
 * inside it. The longest wait of stack 11 (tid 102) no one woke. */
static int wake_scene(const char *path)
{
	static const uint64_t u[] = { 0x401000, 0x402000 }, u2[] = { 0x403000, 0x402000 };
	struct cap_writer *w = rc_open(path);
	const uint64_t t = RC_T0 + RC_MS;
	struct cap_wakeup wk[] = {
		{ .time = t + 8 * RC_MS, .tid = 101, .pid = 100, .waker_tid = 102, .waker_pid = 100,
		  .ustack = 11 },
		{ .time = t + 22 * RC_MS, .tid = 101, .pid = 100, .waker_tid = 103, .waker_pid = 100,
		  .ustack = 10 },
		{ .time = t + 40 * RC_MS, .tid = 102, .pid = 100, .waker_tid = 101, .waker_pid = 100,
		  .ustack = 10 }, /* after 102's waits: wakes none of them */
	};
	size_t i;
	int err;

	if (!w)
		return -EIO;
	err = rc_string(w, 1, "/usr/bin/app") ?: cap_writer__stack(w, 10, 1, u, 2) ?:
	      cap_writer__stack(w, 11, 1, u2, 2) ?: rc_thread(w, RC_T0, 101, 100, 0, "waiter") ?:
	      rc_thread(w, RC_T0, 102, 100, 0, "waker") ?: rc_thread(w, RC_T0, 103, 100, 0, "other") ?:
	      rc_map(w, RC_T0, 100, 0x400000, 0x500000, 0, 1) ?:
	      rc_offcpu(w, t, 9 * RC_MS, 101, 100, 1, 10, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 19 * RC_MS, 4 * RC_MS, 101, 100, 1, 10, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 30 * RC_MS, 2 * RC_MS, 101, 100, 1, 10, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 2 * RC_MS, 5 * RC_MS, 102, 100, 1, 11, CAP_STACK_NONE) ?:
	      rc_offcpu(w, t + 10 * RC_MS, RC_MS, 102, 100, 1, 11, CAP_STACK_NONE);
	for (i = 0; !err && i < sizeof(wk) / sizeof(*wk); i++)
		err = cap_writer__append(w, CAP_REC_WAKEUP, &wk[i], sizeof(wk[i]), NULL, 0);
	if (err) {
		cap_writer__free(w);
		return err;
	}
	return cap_writer__finish(w);
}

/* --top-waits names who woke each longest wait the same streamed (the
 * wakeup looked up for the copy a group keeps) as held (joined at load). */
Test(report_stream, top_waits_wakers_the_same_streamed_or_held)
{
	char *path = rc_tmpname("wake"), *held_path = cap_path, *want, *got;
	struct model *held = model;
	struct report_opts json = { .json = true };
	const struct report_opts *o[] = { NULL, &json };
	size_t i;

	cr_assert_eq(wake_scene(path), 0);
	cap_path = path;
	cr_assert_eq(model__load(path, &model), 0);
	for (i = 0; i < 2; i++) {
		want = run(view_topwaits, NULL, o[i]);
		got = run_streamed(view_topwaits, o[i]);
		cr_assert_str_eq(got, want, "--top-waits%s differs streamed", i ? " --json" : "");
		if (!i) {
			cr_assert_eq(strcount(want, '\n'), 10, "%s", want);
			cr_assert_not_null(strstr(want, "woken by waker 100/102"), "%s", want);
			cr_assert_null(strstr(want, "woken by other"), "not the longest: %s", want);
			cr_assert_null(strstr(want, "woken by waiter"), "after the waits: %s", want);
		}
		free(want);
		free(got);
	}
	model__free(model);
	model = held;
	cap_path = held_path;
	unlink(path);
	free(path);
}

/* The peak RSS in KiB of `stkrec ARGS` (its output thrown away). */
static long peak_kib(const char *bin, char *const argv[])
{
	struct rusage ru;
	int st;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(bin, argv);
		_exit(127);
	}
	cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s %s exit %d", bin, argv[1],
		  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return ru.ru_maxrss;
}

/* `stkrec report`, --folded, --svg, --top-waits, --pprof and `diff` of a
 * capture with itself, over 100k and 1M events (half waits, half CPU
 * samples): the peak RSS of the larger no more than 8 MiB over the
 * smaller's, where holding the 900k events more would take over 40 MB. */
Test(report_stream, report_memory_flat_from_100k_to_1m_events, .timeout = 120)
{
	const char *bin = getenv("STKREC") ? getenv("STKREC") : "build/stkrec";
	const unsigned n[2] = { 100000, 1000000 };
	static const char P[] = "CAPTURE";
	const char *views[][6] = {
		{ "report", "-i", P }, { "report", "-i", P, "--folded" },
		{ "report", "-i", P, "--svg", "/dev/null" }, { "report", "-i", P, "--top-waits" },
		{ "report", "-i", P, "--pprof", "/dev/null" }, { "diff", P, P },
	};
	char *path[2];
	long kib[2];
	size_t v, j;
	int i;

	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	for (i = 0; i < 2; i++) {
		struct rc_opts o = { .extra_cpu = n[i] / 2, .extra_offcpu = n[i] / 2 };

		path[i] = rc_tmpname("flat");
		cr_assert_eq(rc_write_scene(path[i], &o), 0);
	}
	for (v = 0; v < sizeof(views) / sizeof(*views); v++) {
		for (i = 0; i < 2; i++) {
			char *argv[8] = { (char *)bin };

			for (j = 0; j < 6 && views[v][j]; j++)
				argv[j + 1] = views[v][j] == P ? path[i] : (char *)views[v][j];
			kib[i] = peak_kib(bin, argv);
		}
		cr_log_info("%s %s: peak RSS %ld KiB at %u events, %ld KiB at %u", views[v][0],
			    views[v][3] ? views[v][3] : "", kib[0], n[0], kib[1], n[1]);
		cr_assert_leq(kib[1] - kib[0], 8192, "%s %s: %ld KiB at %u events, %ld KiB at %u",
			      views[v][0], views[v][3] ? views[v][3] : "", kib[0], n[0], kib[1],
			      n[1]);
	}
	for (i = 0; i < 2; i++) {
		unlink(path[i]);
		free(path[i]);
	}
}

/* filter__none_match() answers from the groups as from the events held,
 * for filters that match some events and for ones that match none. */
Test(report_stream, none_match_the_same_from_groups)
{
	const char *comms[] = { "waiter", "nosuch", "kworker/1:0", "late" };
	char *path = rc_tmpname("groups");
	struct model *held, *grouped;
	size_t i, n;

	cr_assert_eq(group_scene(path), 0);
	cr_assert_eq(model__load(path, &held), 0);
	grouped = load_streamed_as(path, 0, true);
	cr_assert_not_null(model__groups(grouped, &n));
	for (i = 0; i < sizeof(comms) / sizeof(*comms); i++) {
		struct filter a = { 0 }, b = { 0 };

		cr_assert_eq(filter__add_comms(&a, comms[i]), 0);
		cr_assert_eq(filter__add_comms(&b, comms[i]), 0);
		cr_assert_eq(filter__bind(&a, held), 0);
		cr_assert_eq(filter__bind(&b, grouped), 0);
		cr_assert_eq(filter__none_match(&b, grouped), filter__none_match(&a, held),
			     "--comm %s", comms[i]);
		/* "late" names 104 only after its waits: none match */
		cr_assert_eq(filter__none_match(&a, held), i == 1 || i == 3, "--comm %s",
			     comms[i]);
		filter__free(&a);
		filter__free(&b);
	}
	model__free(held);
	model__free(grouped);
	unlink(path);
	free(path);
}

/* Process 105 waits in stack 11 as sh, execs sh (the same name) and waits
 * there again: pprof keeps the two images apart, so one group would hold
 * two of its samples, and the model has no groups. */
static int exec_scene(const char *path)
{
	static const uint64_t u[] = { 0x401000, 0x402000 };
	struct cap_writer *w = rc_open(path);
	const uint64_t t = RC_T0 + RC_MS;
	int err;

	if (!w)
		return -EIO;
	err = rc_string(w, 1, RC_ROOT "/bin/sh") ?: cap_writer__stack(w, 11, 1, u, 2) ?:
	      rc_thread(w, RC_T0, 105, 105, 0, "sh") ?: rc_map(w, RC_T0, 105, 0x400000, 0x500000, 0, 1) ?:
	      rc_offcpu(w, t, 2 * RC_MS, 105, 105, 1, 11, CAP_STACK_NONE) ?:
	      rc_thread(w, t + 10 * RC_MS, 105, 105, CAP_THREAD_EXEC, "sh") ?:
	      rc_map(w, t + 10 * RC_MS, 105, 0x400000, 0x500000, 0, 1) ?:
	      rc_offcpu(w, t + 20 * RC_MS, 3 * RC_MS, 105, 105, 1, 11, CAP_STACK_NONE);
	if (err) {
		cap_writer__free(w);
		return err;
	}
	return cap_writer__finish(w);
}

Test(report_stream, no_groups_across_an_exec)
{
	struct model *m;
	char *path = rc_tmpname("exec");
	size_t n;

	cr_assert_eq(exec_scene(path), 0);
	m = load_streamed_as(path, 0, true);
	cr_assert_null(model__groups(m, &n));
	cr_assert_eq(n, 0);
	model__free(m);
	unlink(path);
	free(path);
}

/* Through the binary: each streamed view of a file writes the bytes the
 * same view writes from standard input (`-i -`, which holds the events),
 * of the suite's capture (its events read twice), of group_scene's
 * (read once, grouped) and of exec_scene's (read twice). */
Test(report_stream, file_and_stdin_give_the_same_bytes)
{
	const char *bin = getenv("STKREC") ? getenv("STKREC") : "build/stkrec";
	const char *views[] = { "", "-g", "--folded", "--top-waits", "--top-waits --json",
				"-e cpu", "--pprof -", "-m 2000", "--comm app,waiter,sh" };
	char *a = rc_tmpname("via-file"), *b = rc_tmpname("via-stdin"), *x, *y;
	char *caps[3] = { cap_path, rc_tmpname("groups"), rc_tmpname("exec") };
	size_t i, c, la, lb;

	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	cr_assert_eq(group_scene(caps[1]), 0);
	cr_assert_eq(exec_scene(caps[2]), 0);
	for (c = 0; c < 3; c++) {
		for (i = 0; i < sizeof(views) / sizeof(*views); i++) {
			cr_assert_eq(e2e_shell("%s report %s -i %s >%s 2>&1", bin, views[i],
					       caps[c], a), 0);
			cr_assert_eq(e2e_shell("%s report %s -i - <%s >%s 2>&1", bin, views[i],
					       caps[c], b), 0);
			x = rc_slurp(a, &la);
			y = rc_slurp(b, &lb);
			cr_assert(x && y && la > (c == 2 ? 20 : 100), "%s: %zu bytes", views[i], la);
			cr_assert(la == lb && !memcmp(x, y, la),
				  "report %s of %s: file and stdin differ", views[i], caps[c]);
			free(x);
			free(y);
		}
	}
	unlink(a);
	unlink(b);
	for (c = 1; c < 3; c++) {
		unlink(caps[c]);
		free(caps[c]);
	}
	free(a);
	free(b);
}
