// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Report on a synthetic capture of one million off-CPU events (50 threads,
 * 1,000 user and 1,000 kernel stacks of 12 frames): loading, the folded and
 * the perf-style views are timed and logged, not asserted. Speed is `make
 * bench`'s to measure, on a quiet host; here, sharing two CPUs with other
 * tests, only a hang is caught, by the test's time limit.
 */
#include <time.h>
#include "tests/report_run.h"

#define NEV 1000000u
#define NSTK 1000u
#define DEPTH 12

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_big(const char *path)
{
	struct cap_writer *w = rc_open(path);
	uint64_t ips[DEPTH];
	unsigned i, j;
	int err = 0;
	char name[32];

	if (!w)
		return -1;
	for (i = 0; !err && i < 100; i++) {
		snprintf(name, sizeof(name), "kfunc_%u", i);
		err = rc_ksym(w, 0xffffffff81000000ull + i * 0x100, 0x100, name, 0);
	}
	err = err ?: rc_string(w, 1, "/usr/bin/bigapp");
	for (i = 0; !err && i < 10; i++) {
		snprintf(name, sizeof(name), "worker-%u", i);
		err = rc_map(w, 0, 1000 + i, 0x400000, 0x800000, 0, 1);
		for (j = 0; !err && j < 5; j++)
			err = rc_thread(w, 0, 1000 + i * 5 + j, 1000 + i, 0, name);
	}
	for (i = 0; !err && i < NSTK; i++) {
		for (j = 0; j < DEPTH; j++)
			ips[j] = 0x400000 + ((i * 31 + j * 97) % 4096) * 16;
		err = cap_writer__stack(w, 1 + i, CAP_STACK_USER, ips, DEPTH);
		for (j = 0; j < DEPTH; j++)
			ips[j] = 0xffffffff81000000ull + ((i + j * 7) % 100) * 0x100 + 8;
		err = err ?: cap_writer__stack(w, 1 + NSTK + i, CAP_STACK_KERNEL, ips, DEPTH);
	}
	for (i = 0; !err && i < NEV; i++) {
		uint32_t tid = 1000 + i % 50;

		err = rc_offcpu(w, RC_T0 + i * 1000ull, 1000 + i % 777, tid, 1000 + (tid - 1000) / 5,
				1, 1 + (i * 7) % NSTK, 1 + NSTK + (i * 13) % NSTK);
	}
	if (err) {
		cap_writer__free(w);
		return err;
	}
	return cap_writer__finish(w);
}

/* a hang bound, not a speed: ~1 s on an idle host */
Test(report_speed, one_million_events_folded, .timeout = 300)
{
	char *path = rc_tmpname("big"), *s;
	struct model *m;
	struct filter f = { 0 };
	struct report_ctx ctx = { .filter = &f };
	double t0, t1, t2;
	size_t len = 0;
	FILE *out;

	cr_assert_eq(write_big(path), 0);
	t0 = now();
	cr_assert_eq(model__load(path, &m), 0);
	t1 = now();
	cr_assert_eq(model__nr_events(m, CAP_KIND_OFFCPU), NEV);
	ctx.model = m;
	cr_assert_eq(filter__bind(&f, m), 0);
	cr_assert_eq(resolver__new(m, NULL, &ctx.res), 0);
	s = NULL;
	out = open_memstream(&s, &len);
	cr_assert_eq(view_folded(&ctx, out), 0);
	fclose(out);
	t2 = now();
	cr_log_info("1M off-CPU events: load %.3f s (%.1f M events/s), folded %.3f s "
		    "(%.1f M events/s)", t1 - t0, NEV / (t1 - t0) / 1e6, t2 - t1,
		    NEV / (t2 - t1) / 1e6);
	out = fopen("/dev/null", "w");
	t1 = now();
	cr_assert_eq(view_perf(&ctx, out), 0);
	t0 = now();
	fclose(out);
	cr_log_info("perf-style view: %.3f s (%.1f M events/s)", t0 - t1, NEV / (t0 - t1) / 1e6);
	/* 1000 distinct (ustack, kstack) pairs in the event pattern, each seen by
	 * the threads whose comm it meets */
	cr_assert_gt(strcount(s, '\n'), 999);
	free(s);
	resolver__free(ctx.res);
	filter__free(&f);
	model__free(m);
	unlink(path);
	free(path);
}

TestSuite(report_speed);
