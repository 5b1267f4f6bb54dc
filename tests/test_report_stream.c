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

static struct model *load_streamed(const char *path, uint64_t max_memory)
{
	struct model_opts o = { .stream_events = true, .max_memory = max_memory };
	struct model *m;

	cr_assert_eq(model__load_opts(path, &o, &m), 0);
	cr_assert(model__streamed(m));
	return m;
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

/* A view's output with the suite's capture loaded streamed. */
static char *run_streamed(view_fn fn, const struct report_opts *o)
{
	struct model *held = model;
	char *out;

	model = load_streamed(cap_path, 0);
	out = run(fn, NULL, o);
	model__free(model);
	model = held;
	return out;
}

Test(report_stream, views_read_the_same_streamed_or_held)
{
	struct report_opts g = { .callgraph = true };
	const struct {
		view_fn fn;
		const struct report_opts *o;
	} v[] = { { view_perf, NULL }, { view_perf, &g }, { view_folded, NULL } };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(*v); i++) {
		char *want = run(v[i].fn, NULL, v[i].o), *got = run_streamed(v[i].fn, v[i].o);

		cr_assert(strlen(want) > 200, "view %zu: too little to compare: %s", i, want);
		cr_assert_str_eq(got, want, "view %zu differs streamed", i);
		free(want);
		free(got);
	}
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

/* `stkrec report`, --folded and --svg over 100k and 1M events: the peak
 * RSS of the larger no more than 8 MiB over the smaller's, where holding
 * the 900k samples more would take over 40 MB. */
Test(report_stream, report_memory_flat_from_100k_to_1m_events, .timeout = 120)
{
	const char *bin = getenv("STKREC") ? getenv("STKREC") : "build/stkrec";
	const unsigned n[2] = { 100000, 1000000 };
	const char *views[] = { NULL, "--folded", "--svg" };
	char *path[2];
	long kib[2];
	size_t v;
	int i;

	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	for (i = 0; i < 2; i++) {
		struct rc_opts o = { .extra_cpu = n[i] };

		path[i] = rc_tmpname("flat");
		cr_assert_eq(rc_write_scene(path[i], &o), 0);
	}
	for (v = 0; v < sizeof(views) / sizeof(*views); v++) {
		for (i = 0; i < 2; i++) {
			char *argv[] = { (char *)bin, "report", "-e", "cpu", "-i", path[i],
					 (char *)views[v], views[v] && !strcmp(views[v], "--svg") ?
					 "/dev/null" : NULL, NULL };

			kib[i] = peak_kib(bin, argv);
		}
		cr_log_info("%s: peak RSS %ld KiB at %u events, %ld KiB at %u", views[v] ?
			    views[v] : "table", kib[0], n[0], kib[1], n[1]);
		cr_assert_leq(kib[1] - kib[0], 8192, "%s: %ld KiB at %u events, %ld KiB at %u",
			      views[v] ? views[v] : "table", kib[0], n[0], kib[1], n[1]);
	}
	for (i = 0; i < 2; i++) {
		unlink(path[i]);
		free(path[i]);
	}
}
