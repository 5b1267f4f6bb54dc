// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The exports (report --pprof, --speedscope, --chrome-trace), read back by
 * the tools people open them with: pprof's file by `go tool pprof`
 * (Debian's golang-go), whose tables must be the report's; speedscope's in
 * speedscope's own page in headless Chromium (tests/browser); both JSON
 * files turned back into `stkrec script --folded` lines by
 * tests/export_lines.py, which must be script's own, event for event.
 * Exact values on the synthetic scene (tests/util_report.h), the real
 * recorder on the workloads end to end (the protobuf writer alone:
 * test_report_pbwrite.c). Without go, python3, chromium or root, a test
 * says so and skips.
 */
#include <ctype.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include "tests/report_run.h"
#include "tests/util_e2e.h"

#define PERIOD 1000000 /* 1 ms a CPU sample, in the scene */

static char *files[4]; /* scratch files of a test */

/* ---- helpers: files, tools ----------------------------------------------------- */

static const char *srcdir(void)
{
	return e2e_env("STKREC_SRCDIR", ".");
}

/* Run a view of the loaded model into path. */
static void export_file(view_fn fn, struct filter *f, const struct report_opts *o,
			const struct symbolizer_opts *so, const char *path)
{
	FILE *out = fopen(path, "w");

	cr_assert_not_null(out, "%s", path);
	run_into(fn, f, o, so, out);
	cr_assert_eq(fclose(out), 0);
}

/* stdout of a shell command as a string; its exit status must be 0. */
static char *output_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *output_of(const char *fmt, ...)
{
	char *cmd, *path = rc_tmpname("out"), *s;
	va_list ap;
	int st;

	va_start(ap, fmt);
	cr_assert_geq(vasprintf(&cmd, fmt, ap), 0);
	va_end(ap);
	st = e2e_shell("%s > %s", cmd, path);
	s = rc_slurp(path, NULL);
	cr_assert(st == 0 && s, "'%s' failed (%d):\n%s", cmd, st, s ? s : "");
	unlink(path);
	free(path);
	free(cmd);
	return s;
}

static void need_go(void)
{
	if (!e2e_have("go"))
		cr_skip_test("go not installed (Debian package golang-go): no go tool pprof");
}

static void need_python(void)
{
	if (!e2e_have("python3"))
		cr_skip_test("python3 not installed (Debian package python3)");
}

/* `go tool pprof ARGS FILE` */
static char *pprof(const char *args, const char *file)
{
	need_go();
	return output_of("go tool pprof %s %s 2>/dev/null", args, file);
}

/* tests/export_lines.py MODE FILE into out, sorted; script's CPU samples
 * weigh period. */
static void lines(const char *mode, const char *file, const char *out,
			 unsigned long long period)
{
	need_python();
	cr_assert_eq(e2e_shell("PERIOD=%llu python3 %s/tests/export_lines.py %s %s > %s.u && "
			       "LC_ALL=C sort %s.u > %s && rm %s.u", period, srcdir(),
			       mode, file, out, out, out, out),
		     0, "export_lines.py %s %s failed", mode, file);
}


/* The two files hold the same lines (and some). */
static void same_lines(const char *a, const char *b)
{
	char *diff = rc_tmpname("diff"), *d;
	int st = e2e_shell("diff -u %s %s > %s", a, b, diff);
	size_t n = 0;

	d = rc_slurp(diff, NULL);
	cr_assert_eq(st, 0, "%s and %s differ:\n%.4000s", a, b, d ? d : "");
	free(d);
	d = rc_slurp(a, &n);
	cr_assert_gt(n, 0, "%s is empty", a);
	free(d);
	unlink(diff);
	free(diff);
}

/* The export at path, read back by export_lines.py (mode "chrome" or
 * "speedscope"), against script --folded's output at script. */
static void read_back(const char *mode, const char *path, const char *script,
		      unsigned long long period)
{
	lines(mode, path, files[2], period);
	lines(strcmp(mode, "chrome") ? "script" : "stripped", script, files[3], period);
	same_lines(files[2], files[3]);
}

/* Every string of want[0..n) in the file at path. */
static void expect_in(const char *path, const char *const *want, size_t n)
{
	char *s = rc_slurp(path, NULL);
	size_t i;

	cr_assert_not_null(s, "%s", path);
	for (i = 0; i < n; i++)
		cr_assert_not_null(strstr(s, want[i]), "no\n%s\nin\n%s", want[i], s);
	free(s);
}

/* ---- pprof's tables against the report's ---------------------------------------- */

struct toprow {
	char name[256];
	uint64_t value;  /* pprof: the flat value */
	char pct[16];    /* report: the percentage as printed */
};

/* The rows "PCT%  [k] NAME" of the report's table of kind (--sort sym). */
static int report_rows(const char *text, const char *kind, struct toprow *rows, int max)
{
	char head[64];
	const char *p;
	int n = 0;

	snprintf(head, sizeof(head), " of event '%s'\n", kind);
	p = strstr(text, head);
	cr_assert_not_null(p, "no %s table in:\n%s", kind, text);
	p = strstr(p, "# ........");
	cr_assert_not_null(p);
	p = strchr(strchr(p, '\n') + 1, '\n') + 1; /* past "#" */
	while (*p && *p != '#' && *p != '\n' && n < max) {
		const char *sym = strstr(p, "] "), *nl = strchr(p, '\n');

		cr_assert(sym && nl && sym < nl, "bad row in:\n%s", p);
		cr_assert_eq(sscanf(p, " %15[0-9.]", rows[n].pct), 1);
		snprintf(rows[n].name, sizeof(rows[n].name), "%.*s", (int)(nl - sym - 2), sym + 2);
		n++;
		p = nl + 1;
	}
	return n;
}

/* The rows of `go tool pprof -top` with a flat value; *total their sum. */
static int pprof_rows(const char *text, struct toprow *rows, int max, uint64_t *total)
{
	const char *p = strstr(text, "      flat  flat%");
	unsigned long long v;
	char *end;
	int n = 0, at, len;

	cr_assert_not_null(p, "no table in:\n%s", text);
	*total = 0;
	for (p = strchr(p, '\n') + 1; *p && n < max; p = strchr(p, '\n') + 1) {
		const char *nl = strchr(p, '\n');

		/* FLAT[UNIT] flat% sum% cum cum% NAME */
		v = strtoull(p, &end, 10);
		while (isalpha((unsigned char)*end))
			end++;
		at = -1;
		sscanf(end, " %*s %*s %*s %*s %n", &at);
		if (!v || at < 0)
			continue;
		rows[n].value = v;
		len = nl - end - at;
		/* pprof marks a function inlined where the sample is */
		if (len > 9 && !memcmp(end + at + len - 9, " (inline)", 9))
			len -= 9;
		snprintf(rows[n].name, sizeof(rows[n].name), "%.*s", len, end + at);
		*total += v;
		n++;
	}
	return n;
}

/* VALUE of the report's line "# Event count (...): VALUE" of kind */
static uint64_t event_count(const char *report, const char *kind)
{
	char head[64];
	const char *p;

	snprintf(head, sizeof(head), " of event '%s'\n# Event count (", kind);
	p = strstr(report, head);
	cr_assert_not_null(p, "%s", report);
	p = strstr(p, "): ");
	return strtoull(p + 3, NULL, 10);
}

/* pprof's flat values and the report's self overhead per function: the
 * same total, the same functions, in the same order, with the same
 * percentages. */
static void compare_top(const char *report, const char *kind, const char *top)
{
	static struct toprow r[512], q[512];
	int nr = report_rows(report, kind, r, 512), nq, i;
	uint64_t total;
	char pct[16];

	nq = pprof_rows(top, q, 512, &total);
	cr_assert_gt(nr, 0);
	/* off-CPU: the report's total is in us */
	cr_assert_eq(strcmp(kind, "offcpu") ? total : view_ns_to_us(total),
		     event_count(report, kind), "totals of %s:\n%s\n%s", kind, report, top);
	cr_assert_eq(nr, nq, "%d report rows, %d pprof rows:\n%s\n%s", nr, nq, report, top);
	for (i = 0; i < nr; i++) {
		/* as the report computes it */
		snprintf(pct, sizeof(pct), "%.2f", total ? 100.0 * q[i].value / total : 0.0);
		cr_assert_str_eq(pct, r[i].pct, "row %d: pprof %s %s%%, report %s %s%%", i,
				 q[i].name, pct, r[i].name, r[i].pct);
		/* ties may come in another order: the names of each value agree */
		if ((i && q[i - 1].value == q[i].value) ||
		    (i + 1 < nr && q[i + 1].value == q[i].value))
			continue;
		cr_assert_str_eq(q[i].name, r[i].name, "row %d:\n%s\n%s", i, report, top);
	}
}

/* ---- the scene ------------------------------------------------------------------ */

static void scene_setup(void)
{
	int i;

	setup();
	for (i = 0; i < 4; i++)
		files[i] = rc_tmpname("export");
}

static void scene_teardown(void)
{
	int i;

	for (i = 0; i < 4; i++) {
		unlink(files[i]);
		free(files[i]);
	}
	teardown();
}

TestSuite(export_scene, .init = scene_setup, .fini = scene_teardown);

static const struct report_opts period_opts = { .cpu_period_ns = PERIOD };
static const struct report_opts sym_opts = { .sort = { SORT_SYM }, .nsort = 1 };

Test(export_scene, pprof_read_by_go_tool_pprof)
{
	char *raw, *top, *rep = run(view_perf, NULL, &sym_opts), *p;

	export_file(view_pprof, NULL, &period_opts, NULL, files[0]);
	raw = pprof("-raw", files[0]);
	/* the capture's time, its span and the sampling period */
	cr_assert_not_null(strstr(raw, "PeriodType: cpu nanoseconds\nPeriod: 1000000\n"
				       "Time: 2026-01-02 03:04:05 +0000 UTC\nDuration: 3s\n"), "%s",
			   raw);
	cr_assert_not_null(strstr(raw, "\nwaits/count offcpu/nanoseconds[dflt] samples/count "
				       "cpu/nanoseconds ios/count bio/bytes\n"), "%s", raw);
	/* app's two naps in one sample, with its labels */
	p = strstr(raw, "\n          2    4000000          0          0          0          0: ");
	cr_assert_not_null(p, "%s", raw);
	cr_assert_not_null(strstr(p, "\n                comm:[app]\n                "
				     "pid:[100] tid:[100]\n"), "%s", p);
	/* a request: its disk the innermost frame, its op a label */
	cr_assert_not_null(strstr(raw, "          0          0          0          0          2"
				       "      12288: "), "%s", raw);
	cr_assert_not_null(strstr(raw, "comm:[app] op:[R]\n"), "%s", raw);
	/* mappings with build IDs (pprof merges the scene's, which share one) */
	cr_assert_not_null(strstr(raw, ": 0x400000/0x402000/0x0 " RC_ROOT "/usr/bin/app "
				       "deadbeef0102030405060708090a0b0c0d0e0f10 [FN]\n"), "%s", raw);
	cr_assert_not_null(strstr(raw, ": 0xffffffff81001020/0xffffffff81009031/0x0 "
				       "[kernel.kallsyms]  [FN]\n"), "%s", raw);
	free(raw);
	/* the report's tables, kind by kind */
	top = pprof("-top -nodefraction=0 -nodecount=100000 -unit=ns -sample_index=offcpu",
		    files[0]);
	compare_top(rep, "offcpu", top);
	cr_assert_not_null(strstr(top, "Total samples = 10300899ns"), "%s", top);
	cr_assert_eq(event_count(rep, "offcpu"), view_ns_to_us(10300899));
	free(top);
	top = pprof("-top -nodefraction=0 -nodecount=100000 -sample_index=samples", files[0]);
	compare_top(rep, "cpu", top);
	cr_assert_not_null(strstr(top, "Total samples = 4 \n"), "%s", top);
	free(top);
	top = pprof("-top -nodefraction=0 -unit=ns -sample_index=cpu", files[0]);
	cr_assert_not_null(strstr(top, "Total samples = 4000000ns"), "%s", top);
	free(top);
	top = pprof("-top -nodefraction=0 -unit=B -sample_index=bio", files[0]);
	cr_assert_eq(event_count(rep, "bio"), 1081344);
	cr_assert_not_null(strstr(top, "Total samples = 1081344B"), "%s", top);
	cr_assert_not_null(strstr(top, "\n  1077248B 99.62% 99.62%   1077248B 99.62%  sda\n"),
			   "%s", top);
	free(top);
	free(rep);
}

Test(export_scene, pprof_filters_and_unknown_period)
{
	struct filter f = { .min_ns = 1000000, .pids = malloc(sizeof(uint32_t)), .npids = 1 };
	struct report_opts o = { 0 };
	char *raw, *top;

	f.pids[0] = RC_APP_PID;
	export_file(view_pprof, &f, &o, NULL, files[0]);
	/* pid 100's waits of 1 ms or more: 1 + 3 + 2.5 + 1.500499 ms */
	top = pprof("-top -nodefraction=0 -unit=ns -sample_index=offcpu", files[0]);
	cr_assert_not_null(strstr(top, "Total samples = 8000499ns"), "%s", top);
	free(top);
	/* no period: CPU samples counted, no CPU time, no period type */
	raw = pprof("-raw", files[0]);
	cr_assert_not_null(strstr(raw, "\nwaits/count offcpu/nanoseconds[dflt] samples/count "
				       "ios/count bio/bytes\n"), "%s", raw);
	cr_assert_not_null(strstr(raw, "\nPeriodType:  \nPeriod: 0\n"), "%s", raw);
	cr_assert_null(strstr(raw, "pid:[200]"), "%s", raw);
	free(raw);
	filter__free(&f);
}

/* The loaded capture exported by fn (mode "chrome" or "speedscope") with
 * filter f, read back, against its script --folded with f. */
static void export_is_script(view_fn fn, const char *mode, struct filter *f)
{
	struct report_opts o = { .script_folded = true };

	export_file(fn, f, &period_opts, NULL, files[0]);
	export_file(view_script, f, &o, NULL, files[1]);
	read_back(mode, files[0], files[1], PERIOD);
}

Test(export_scene, chrome_trace_is_script)
{
	static const char *const want[] = {
		/* a wait named by its innermost user frame, times in us since the start */
		"\n{\"ph\":\"X\",\"cat\":\"offcpu\",\"name\":\"libc.so.6+0x1234\","
		"\"pid\":100,\"tid\":100,\"ts\":100000.000,\"dur\":1000.000,"
		"\"args\":{\"state\":1,\"cpu\":0,\"stack\":[\"app+0x1050\", "
		"\"app+0x1100\", \"libc.so.6+0x1234\", \"do_syscall_64\", "
		"\"__x64_sys_nanosleep\", \"hrtimer_nanosleep\", "
		"\"do_nanosleep\", \"schedule\", \"__schedule\"]}},\n",
		/* no user frames (a kernel thread; a user stack not taken): the kernel's */
		"\"name\":\"__schedule\",\"pid\":200,\"tid\":200,"
		"\"ts\":1500000.000,\"dur\":500.000,\"args\":{\"state\":2,",
		"\"name\":\"__schedule\",\"pid\":100,\"tid\":100,"
		"\"ts\":2500000.000,\"dur\":1500.499,",
		/* a CPU sample: an instant on its thread */
		"\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu\",\"name\":"
		"\"ext4_file_read_iter\",\"pid\":100,\"tid\":101,\"ts\":400000.000,"
		"\"args\":{\"cpu\":1,\"stack\":[\"app+0x1050\", ",
		/* pid 400 was sh, then exec'd app2: its track says app2 (its
		 * last name), the event under sh says sh */
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":400,"
		"\"tid\":400,\"args\":{\"name\":\"app2\"}}",
		"\"ts\":500000.000,\"dur\":200.000,\"args\":{\"state\":1,"
		"\"cpu\":0,\"comm\":\"sh\",\"stack\":",
		"\"ts\":2000000.000,\"dur\":300.000,\"args\":{\"state\":1,"
		"\"cpu\":0,\"stack\":",
		/* a request, issue to completion, on its device's track */
		"\n{\"ph\":\"b\",\"cat\":\"bio\",\"name\":\"sda\",\"id\":0,"
		"\"pid\":1073741824,\"tid\":1073741824,\"ts\":100000.000,"
		"\"args\":{\"op\":\"R\",\"bytes\":4096,\"dev\":\"8:0\","
		"\"sector\":2048,\"error\":0,\"comm\":\"app\",\"pid\":100,"
		"\"tid\":100,\"stack\":[]}},\n{\"ph\":\"e\",\"cat\":\"bio\","
		"\"name\":\"sda\",\"id\":0,\"pid\":1073741824,\"tid\":1073741824,"
		"\"ts\":102000.000}",
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1073741824,"
		"\"tid\":1073741824,\"args\":{\"name\":\"sda (8:0)\"}}",
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1073741825,"
		"\"tid\":1073741825,\"args\":{\"name\":\"8:16 (8:16)\"}}",
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,"
		"\"tid\":100,\"args\":{\"name\":\"app\"}}",
	};

	export_is_script(view_chrome, "chrome", NULL);
	expect_in(files[0], want, sizeof(want) / sizeof(want[0]));
}

Test(export_scene, speedscope_is_script)
{
	static const char *const want[] = {
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"exporter\":\"stkrec ",
		/* a thread's waits in time order, each weighing its ns, the
		 * frames shared */
		"\n{\"type\":\"sampled\",\"name\":\"app 100/100: off-CPU\","
		"\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":5500499,"
		"\"samples\":[[0,1,2,3,4,5,6,7,8],[0,1,2,3,4,5,6,7,8],[9,3,10,7,8]],"
		"\"weights\":[1000000,3000000,1500499]}",
		/* its requests by issue, weighing their latency, the disk innermost */
		"\"name\":\"app 100/100: block I/O\",\"unit\":\"nanoseconds\","
		"\"startValue\":0,\"endValue\":9000000,\"samples\":[[11],[11],[11],[12]],"
		"\"weights\":[2000000,4000000,1000000,2000000]}",
		/* its CPU samples, weighing the period */
		"\n{\"type\":\"sampled\",\"name\":\"app 100/100: CPU\","
		"\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":2000000,"
		"\"samples\":[",
		"],\"weights\":[1000000,1000000]}",
		/* pid 400, sh then app2, is named as it ended */
		"\"name\":\"app2 400/400: off-CPU\"",
		"\"name\":\"app 100/100: block I/O\"",
		"{\"name\":\"sda\",\"file\":\"block device\"}",
	};

	export_is_script(view_speedscope, "speedscope", NULL);
	expect_in(files[0], want, sizeof(want) / sizeof(want[0]));
}

Test(export_scene, filters_apply_to_the_json_exports)
{
	struct filter f = { .min_ns = 500000, .pids = malloc(sizeof(uint32_t)), .npids = 1 };
	struct filter g = { 0 };
	int round;

	f.pids[0] = RC_APP_PID;
	cr_assert_eq(filter__parse_time(&g, "0.35,1.45"), 0);
	for (round = 0; round < 2; round++) {
		export_is_script(view_chrome, "chrome", round ? &g : &f);
		export_is_script(view_speedscope, "speedscope", round ? &g : &f);
	}
	filter__free(&f);
	filter__free(&g);
}

/* A thread's requests in flight together: speedscope weighs each by its
 * latency, in one profile; Chrome's async spans each have their own id. */
Test(export_scene, overlapping_requests_are_weighed_each)
{
	static const uint64_t span[3][2] = { { 0, 10 }, { 5, 15 }, { 12, 20 } };
	struct cap_blockdev bd = { .major = 8, .minor = 0, .name = "sda" };
	struct cap_writer *w = rc_open(files[0]);
	char *s;
	int i;

	cr_assert_not_null(w);
	cr_assert_eq(rc_thread(w, RC_T0, 700, 700, 0, "dd"), 0);
	cr_assert_eq(cap_writer__append(w, CAP_REC_BLOCKDEV, &bd, sizeof(bd), NULL, 0), 0);
	for (i = 0; i < 3; i++) {
		struct cap_bio b = { .issue_time = RC_T0 + span[i][0] * RC_MS,
				     .complete_time = RC_T0 + span[i][1] * RC_MS,
				     .sector = 8 * i, .bytes = 4096, .tid = 700, .pid = 700,
				     .major = 8, .minor = 0, .op = CAP_BIO_WRITE, .comm = "dd" };

		cr_assert_eq(cap_writer__append(w, CAP_REC_BIO, &b, sizeof(b), NULL, 0), 0);
	}
	cr_assert_eq(cap_writer__finish(w), 0);
	model__free(model);
	cr_assert_eq(model__load(files[0], &model), 0);
	export_is_script(view_speedscope, "speedscope", NULL);
	s = rc_slurp(files[0], NULL);
	cr_assert_not_null(strstr(s, "\"name\":\"dd 700/700: block I/O\",\"unit\":\"nanoseconds\","
				     "\"startValue\":0,\"endValue\":28000000,\"samples\":[[0],[0],[0]],"
				     "\"weights\":[10000000,10000000,8000000]}],"), "%s", s);
	cr_assert_not_null(strstr(s, "\"frames\":[\n{\"name\":\"sda\",\"file\":\"block device\"}]}}"),
			   "%s", s);
	free(s);
	export_is_script(view_chrome, "chrome", NULL);
}

/* Waits the recording did not see whole: pprof weighs the part seen, as
 * the report; Chrome keeps the whole interval and says which ends were
 * missed, as script. */
Test(export_scene, waits_open_at_the_start_or_stop)
{
	static const struct { uint64_t start, dur; uint32_t open; } w[] = {
		{ RC_T0 - 500 * RC_MS, RC_S, CAP_OFFCPU_OPEN_START },
		{ RC_T0 + 2 * RC_S, RC_S, CAP_OFFCPU_OPEN_END },
		{ RC_T0 + RC_S, 250 * RC_MS, 0 },
	};
	static const char *const want[] = {
		"\"ts\":-500000.000,\"dur\":1000000.000,\"args\":{\"state\":2,\"open\":1,",
		"\"ts\":2000000.000,\"dur\":1000000.000,\"args\":{\"state\":2,\"open\":2,",
		"\"ts\":1000000.000,\"dur\":250000.000,\"args\":{\"state\":2,\"cpu\":0,",
	};
	struct cap_writer *w_ = rc_open(files[0]);
	char *rep, *top;
	size_t i;

	cr_assert_not_null(w_);
	cr_assert_eq(rc_thread(w_, RC_T0, 700, 700, 0, "waiter"), 0);
	for (i = 0; i < 3; i++) {
		struct cap_offcpu o = { .start = w[i].start, .duration = w[i].dur, .tid = 700,
					.pid = 700, .state = 2, .open = w[i].open };

		cr_assert_eq(cap_writer__append(w_, CAP_REC_OFFCPU, &o, sizeof(o), NULL, 0), 0);
	}
	cr_assert_eq(cap_writer__finish(w_), 0);
	model__free(model);
	cr_assert_eq(model__load(files[0], &model), 0);
	export_is_script(view_chrome, "chrome", NULL);
	expect_in(files[0], want, 3);
	export_is_script(view_speedscope, "speedscope", NULL);
	/* 0.5 s of the first seen, then 1 s and 0.25 s */
	export_file(view_pprof, NULL, &period_opts, NULL, files[0]);
	rep = run(view_perf, NULL, &sym_opts);
	top = pprof("-top -nodefraction=0 -unit=ns -sample_index=offcpu", files[0]);
	cr_assert_not_null(strstr(top, "Total samples = 1750000000ns"), "%s", top);
	compare_top(rep, "offcpu", top);
	free(top);
	free(rep);
}

/* ---- inlined functions --------------------------------------------------------- */

static char inl_dir[] = "/tmp/stkrec-export-inl-XXXXXX";
static char inl_bid_hex[41];

/* The file offset of a symbol of the ELF at path. */
static uint64_t symbol_offset(const char *path, const char *sym)
{
	char *s = output_of("nm %s | awk '$3 == \"%s\" { print $1 }'", path, sym);
	uint64_t vaddr = strtoull(s, NULL, 16), off;
	int fd = open(path, O_RDONLY);
	Elf *e;

	cr_assert(vaddr && fd >= 0, "no %s in %s", sym, path);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	off = rc_elf_offset(e, vaddr);
	elf_end(e);
	close(fd);
	free(s);
	return off;
}

/* tests/symfix/inline.c built (-O2: inlined), run by the scene's pid 500:
 * its user stack 13 is a sample inside inl_helper (inlined into
 * inl_outer) called from inside inl_leaf (in inl_mid, in inl_deep). */
static void inline_setup(void)
{
	static uint8_t bid[20];
	struct rc_opts o = { 0 };
	char exe[sizeof(inl_dir) + 8];
	const void *id;
	int fd;
	Elf *e;

	setenv("TZ", "UTC", 1);
	tzset();
	cr_assert_not_null(mkdtemp(inl_dir));
	snprintf(exe, sizeof(exe), "%s/inl", inl_dir);
	if (e2e_shell("cc -O2 -g -fPIE -pie -Wl,--build-id -o %s %s/tests/symfix/inline.c", exe,
		      srcdir()))
		cr_skip_test("no C compiler to build tests/symfix/inline.c");
	o.real_elf = exe;
	o.real_elf_off[0] = symbol_offset(exe, "symfix_inl_mark");
	o.real_elf_off[1] = symbol_offset(exe, "symfix_deep_mark") + 1; /* a return address */
	fd = open(exe, O_RDONLY);
	e = elf_begin(fd, ELF_C_READ, NULL);
	o.real_bid_size = dwelf_elf_gnu_build_id(e, &id);
	cr_assert_eq(o.real_bid_size, 20);
	memcpy(bid, id, 20);
	o.real_bid = bid;
	elf_end(e);
	close(fd);
	for (fd = 0; fd < 20; fd++)
		snprintf(inl_bid_hex + 2 * fd, 3, "%02x", bid[fd]);
	cap_path = rc_tmpname("inline");
	cr_assert_eq(rc_write_scene(cap_path, &o), 0);
	cr_assert_eq(model__load(cap_path, &model), 0);
	files[0] = rc_tmpname("export");
}

static void inline_teardown(void)
{
	unlink(files[0]);
	free(files[0]);
	teardown();
	e2e_shell("rm -rf %s", inl_dir);
}

TestSuite(export_inline, .init = inline_setup, .fini = inline_teardown);

/* The line of tests/symfix/inline.c that carries marker. */
static int marker_line(const char *marker)
{
	char *s = output_of("grep -n %s %s/tests/symfix/inline.c", marker, srcdir());
	int line = atoi(s);

	cr_assert_gt(line, 0, "no %s", marker);
	free(s);
	return line;
}

/* With --inline, a location holds the inlined functions as lines, the
 * function they are in last; pprof's table is the report's. */
Test(export_inline, inlined_functions_are_lines_of_one_location)
{
	struct symbolizer_opts so = { .inlines = true, .srclines = true };
	struct filter f = { .pids = malloc(sizeof(uint32_t)), .npids = 1 };
	struct report_opts o = { .cpu_period_ns = PERIOD, .srcline = true };
	struct report_opts so_sym = { .sort = { SORT_SYM }, .nsort = 1 };
	char *raw, *top, *rep, want[3 * PATH_MAX], src[PATH_MAX - 64];
	FILE *out;
	size_t len = 0;

	snprintf(src, sizeof(src), "%s/tests/symfix/inline.c", srcdir());
	f.pids[0] = 500;
	export_file(view_pprof, &f, &o, &so, files[0]);
	raw = pprof("-raw", files[0]);
	/* inl_helper inlined at the sample's address into inl_outer */
	snprintf(want, sizeof(want), " M=1 inl_helper %s:%d s=0\n             inl_outer %s:%d s=0\n",
		 src, marker_line("INL_BODY_LINE"), src, marker_line("INL_CALL_LINE"));
	cr_assert_not_null(strstr(raw, want), "no\n%s\nin\n%s", want, raw);
	/* a return address in inl_leaf, inlined into inl_mid, into inl_deep */
	snprintf(want, sizeof(want), " M=1 inl_leaf %s:%d s=0\n             inl_mid %s:%d s=0\n"
		 "             inl_deep %s:%d s=0\n", src, marker_line("DEEP_LEAF_LINE"), src,
		 marker_line("DEEP_MID_CALL"), src, marker_line("DEEP_OUTER_CALL"));
	cr_assert_not_null(strstr(raw, want), "no\n%s\nin\n%s", want, raw);
	/* its mapping: the program, its build ID, named with lines */
	snprintf(want, sizeof(want), "/inl %s [FN][FL][LN]\n", inl_bid_hex);
	cr_assert_not_null(strstr(raw, want), "no\n%s\nin\n%s", want, raw);
	free(raw);
	/* the report with the same symbol options: same table */
	out = open_memstream(&rep, &len);
	cr_assert_not_null(out);
	run_into(view_perf, &f, &so_sym, &so, out);
	fclose(out);
	top = pprof("-top -nodefraction=0 -nodecount=100000 -sample_index=samples", files[0]);
	compare_top(rep, "cpu", top);
	free(top);
	top = pprof("-top -nodefraction=0 -nodecount=100000 -unit=ns -sample_index=offcpu",
		    files[0]);
	compare_top(rep, "offcpu", top);
	free(top);
	free(rep);
	filter__free(&f);
}

/* ---- the command line ------------------------------------------------------------ */

static const char *bin;

static void cli_setup(void)
{
	bin = e2e_env("STKREC", "build/stkrec");
	if (access(bin, X_OK))
		cr_skip_test("no stkrec binary at %s", bin);
	scene_setup();
}

/* `stkrec report -i SCENE ARGS`: its exit status; stdout in files[2],
 * stderr in files[3]. */
static int report_cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int report_cli(const char *fmt, ...)
{
	char *args;
	va_list ap;
	int st;

	va_start(ap, fmt);
	cr_assert_geq(vasprintf(&args, fmt, ap), 0);
	va_end(ap);
	st = e2e_shell("TZ=UTC %s report -i %s %s >%s 2>%s", bin, cap_path, args, files[2],
		       files[3]);
	free(args);
	return st;
}

static void expect_file(const char *path, const char *want)
{
	char *s = rc_slurp(path, NULL);

	cr_assert_not_null(s);
	cr_assert_str_eq(s, want);
	free(s);
}

TestSuite(export_cli, .init = cli_setup, .fini = scene_teardown);

Test(export_cli, a_bad_path_is_one_line_and_exit_1)
{
	static const char *const opts[] = { "--pprof", "--speedscope", "--chrome-trace" };
	char line[PATH_MAX + 64];
	size_t i;

	for (i = 0; i < 3; i++) {
		cr_assert_eq(report_cli("%s /nonexistent-stkrec-dir/x", opts[i]), 1, "%s", opts[i]);
		expect_file(files[2], "");
		expect_file(files[3], "stkrec: /nonexistent-stkrec-dir/x: No such file or directory\n");
		cr_assert_eq(report_cli("%s /tmp", opts[i]), 1, "%s", opts[i]);
		expect_file(files[3], "stkrec: /tmp: Is a directory\n");
		/* a full disk, found at a write or at close */
		cr_assert_eq(report_cli("%s /dev/full", opts[i]), 1, "%s", opts[i]);
		expect_file(files[3], "stkrec: /dev/full: No space left on device\n");
	}
	/* one file view at a time, and each needs its FILE */
	cr_assert_eq(report_cli("--pprof %s --chrome-trace %s", files[0], files[1]), 2);
	expect_file(files[3], "stkrec report: choose one of --folded, --top-waits, --biotop, "
			      "--chain, --svg, --pprof, --speedscope and --chrome-trace\n"
			      "Try 'stkrec report -h' for more information.\n");
	/* filters that match nothing: the one line, and still a document */
	for (i = 0; i < 3; i++) {
		unlink(files[0]);
		cr_assert_eq(report_cli("%s %s -p 424242", opts[i], files[0]), 0, "%s", opts[i]);
		snprintf(line, sizeof(line), "stkrec: warning: %s: no events match the filters\n",
			 cap_path);
		expect_file(files[3], line);
		cr_assert_eq(access(files[0], R_OK), 0, "%s wrote no file", opts[i]);
	}
	unlink(files[0]);
	cr_assert_eq(report_cli("--speedscope"), 2);
	expect_file(files[3], "stkrec report: missing value for option '--speedscope'\n"
			      "Try 'stkrec report -h' for more information.\n");
	cr_assert_neq(access(files[0], F_OK), 0, "no file made on a usage error");
}

Test(export_cli, dash_writes_to_stdout_and_filters_apply)
{
	char *s;

	need_python();
	cr_assert_eq(report_cli("--chrome-trace - -e bio -p %d", RC_APP_PID), 0);
	cr_assert_eq(e2e_shell("python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); "
			       "sys.exit(sum(e[\"ph\"] == \"b\" for e in d[\"traceEvents\"]) != 4)' %s",
			       files[2]), 0, "not the 4 requests of pid 100 as JSON on stdout");
	cr_assert_eq(report_cli("--pprof - -e offcpu -t %d", RC_WORKER_TID), 0);
	s = rc_slurp(files[2], NULL);
	cr_assert((unsigned char)s[0] == 0x1f && (unsigned char)s[1] == 0x8b, "not gzip");
	free(s);
	s = pprof("-top -nodefraction=0 -unit=ns", files[2]);
	/* app-worker's waits: 2.5 ms + 400 ns + 0.7 ms */
	cr_assert_not_null(strstr(s, "Total samples = 3200400ns"), "%s", s);
	free(s);
}

/* One CPU sample stands for the recording's period: its -F or -c, read
 * back from the capture's command line. */
Test(export_cli, the_sampling_period_comes_from_the_command_line)
{
	static const struct { const char *cmdline, *period; } c[] = {
		{ "stkrec record -a -d 3", "Period: 20408163\n" },   /* the default, 49 Hz */
		{ "stkrec record -e cpu -F 999 -o x.cap -- sleep 1", "Period: 1001001\n" },
		{ "stkrec record --count 250000 -a", "Period: 250000\n" },
		{ "stkrec record -F 7 -a", "Period: 142857143\n" },  /* rounded */
		{ "stkrec record -C 99999 -F 99 -a", "Period: 0\n" }, /* no such CPU here */
		{ "perf record -F 99 -a", "Period: 0\n" },
	};
	struct rc_opts o = { 0 };
	char *raw, *err;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		o.cmdline = c[i].cmdline;
		cr_assert_eq(rc_write_scene(cap_path, &o), 0);
		cr_assert_eq(report_cli("--pprof %s", files[0]), 0, "%s", c[i].cmdline);
		raw = pprof("-raw", files[0]);
		cr_assert_not_null(strstr(raw, c[i].period), "%s: %s", c[i].cmdline, raw);
		err = rc_slurp(files[3], NULL);
		if (!strcmp(c[i].period, "Period: 0\n"))
			cr_assert(strstr(err, ": no sampling rate in the capture's command line") &&
				  !strchr(strchr(err, '\n') + 1, '\n'), "%s", err);
		else
			cr_assert_str_eq(err, "");
		free(err);
		free(raw);
	}
}

/* ---- end to end: the real recorder on the workloads --------------------------------- */

static char *wout; /* the workload's output */

static void e2e_setup(void)
{
	cli_setup();
	wout = NULL;
}

static void e2e_teardown(void)
{
	free(wout);
	scene_teardown();
}

/* Record `workload ARGS` over the scene's capture file. */
static void record(const char *ropts, const char *name, const char *args)
{
	e2e_record(bin, cap_path, ropts, "", name, args, files[2]);
	free(wout);
	wout = rc_slurp(files[2], NULL);
	cr_assert_not_null(wout);
}

/* stdout of `stkrec CMD -i CAPTURE ARGS` (exit status 0) */
static char *stkrec(const char *cmd, const char *args)
{
	return output_of("%s %s -i %s %s 2>/dev/null", bin, cmd, cap_path, args);
}

/* pprof's -top of sample index `index` against the report's table of
 * kind, both with the filters args. */
static void pprof_is_report(const char *args, const char *kind, const char *index)
{
	char opts[512], *rep, *top;

	snprintf(opts, sizeof(opts), "%s --pprof %s", args, files[0]);
	free(stkrec("report", opts));
	snprintf(opts, sizeof(opts), "%s --sort sym", args);
	rep = stkrec("report", opts);
	snprintf(opts, sizeof(opts), "-top -nodefraction=0 -nodecount=100000 -unit=ns "
		 "-sample_index=%s", index);
	top = pprof(opts, files[0]);
	compare_top(rep, kind, top);
	free(top);
	free(rep);
}

/* The JSON exports with the filters args, read back, against script's. */
static void json_is_script(const char *args, unsigned long long period)
{
	char opts[512], *s;
	FILE *f;

	snprintf(opts, sizeof(opts), "--folded %s", args);
	s = stkrec("script", opts);
	cr_assert_gt(strlen(s), 0, "no events for '%s'", args);
	f = fopen(files[1], "w");
	cr_assert(f && fputs(s, f) >= 0 && !fclose(f));
	free(s);
	snprintf(opts, sizeof(opts), "%s --chrome-trace %s", args, files[0]);
	free(stkrec("report", opts));
	read_back("chrome", files[0], files[1], period);
	snprintf(opts, sizeof(opts), "%s --speedscope %s", args, files[0]);
	free(stkrec("report", opts));
	read_back("speedscope", files[0], files[1], period);
}

TestSuite(export_e2e, .init = e2e_setup, .fini = e2e_teardown);

Test(export_e2e, pprof_is_the_report_for_cpuburn, .timeout = 120)
{
	char args[64], *top;

	record("-e cpu,offcpu -F 499", "cpuburn", "1500 25");
	snprintf(args, sizeof(args), "-p %lld", e2e_value_of(wout, "pid"));
	pprof_is_report(args, "cpu", "samples");
	/* CPU time at the recorded rate: 1 s / 499 a sample */
	top = pprof("-raw", files[0]);
	cr_assert_not_null(strstr(top, "\nPeriod: 2004008\n"), "%s", top);
	free(top);
	pprof_is_report("-e cpu", "cpu", "samples");
}

/* Replace the command line in the header of the capture at path by line,
 * padded with spaces to its length; the header's CRC made to agree. */
static void set_cmdline(const char *path, const char *line)
{
	struct cap_file_header fh;
	uint32_t size, crc;
	size_t len;
	uint8_t *b = (uint8_t *)rc_slurp(path, &len);
	FILE *f;

	cr_assert(b && len > 8 + sizeof(fh));
	memcpy(&size, b + 4, 4);
	memcpy(&fh, b + 8, sizeof(fh));
	cr_assert_leq(strlen(line), fh.cmdline_len);
	memset(b + 8 + fh.fixed_size, ' ', fh.cmdline_len);
	memcpy(b + 8 + fh.fixed_size, line, strlen(line));
	crc = cap_crc32(0, b + 8, size - 4);
	memcpy(b + 8 + size - 4, &crc, 4);
	f = fopen(path, "w");
	cr_assert(f && fwrite(b, 1, len, f) == len && !fclose(f));
	free(b);
}

/* The capture keeps its rate (FORMAT.md §3.1, 1.3): with a command line no
 * `stkrec record` here takes (-C of a CPU this host lacks), a CPU sample
 * still stands for 1 s / 97, and nothing is said; info names the rate. */
Test(export_e2e, the_sampling_period_comes_from_the_capture, .timeout = 120)
{
	char *raw, *err, *info;

	record("-e cpu -F 97", "cpuburn", "600 25");
	set_cmdline(cap_path, "stkrec record -C 99999 -F 7 -a");
	info = stkrec("info", "");
	cr_assert_not_null(strstr(info, "\ncommand:      stkrec record -C 99999 -F 7 -a"),
			   "%s", info);
	cr_assert_not_null(strstr(info, "\nsampling:     cpu-clock at 97 Hz\n"), "%s", info);
	free(info);
	free(output_of("%s report -i %s --pprof %s 2>%s", bin, cap_path, files[0], files[3]));
	err = rc_slurp(files[3], NULL);
	cr_assert_str_eq(err, "");
	free(err);
	raw = pprof("-raw", files[0]);
	cr_assert_not_null(strstr(raw, "\nPeriod: 10309278\n"), "%s", raw);
	free(raw);
}

Test(export_e2e, pprof_is_the_report_for_sleeper_waits, .timeout = 120)
{
	char args[64];

	record("-e offcpu", "sleeper", "600 10");
	snprintf(args, sizeof(args), "-t %lld -m 1000", e2e_value_of(wout, "tid"));
	pprof_is_report(args, "offcpu", "offcpu");
	pprof_is_report("", "offcpu", "offcpu");
}

Test(export_e2e, json_exports_are_script_for_sleeper, .timeout = 120)
{
	char args[64];

	record("-e offcpu,cpu -F 199", "sleeper", "400 10");
	json_is_script("", 5025126);
	snprintf(args, sizeof(args), "-p %lld -m 5000", e2e_value_of(wout, "pid"));
	json_is_script(args, 5025126);
}

Test(export_e2e, json_exports_are_script_for_odirect, .timeout = 120)
{
	char target[] = "/var/tmp/stkrec-export-odirectXXXXXX", args[PATH_MAX];
	int fd = mkstemp(target);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(args, sizeof(args), "%s 16 65536", target);
	record("-e bio", "odirect", args);
	unlink(target);
	snprintf(args, sizeof(args), "-p %lld", e2e_value_of(wout, "pid"));
	json_is_script(args, 1);
	json_is_script("", 1);
}

/* speedscope's own page opens the file: the threads' profiles, and their
 * functions in the Sandwich view. */
static void speedscope_shows(const char *expect)
{
	const char *dir = e2e_browser_dir();
	char tmp[] = "/tmp/stkrec-speedscope-XXXXXX";
	int rc;

	cr_assert_not_null(mkdtemp(tmp));
	rc = e2e_shell("node '%s/speedscope_check.js' %s %s/shot.png %s > %s/log 2>&1", dir,
		       files[0], tmp, expect, tmp);
	if (rc != 0)
		e2e_shell("cat %s/log", tmp);
	cr_assert_eq(rc, 0, "speedscope checks failed: %s", expect);
	cr_expect_eq(e2e_shell("test -s %s/shot.png", tmp), 0, "screenshot written");
	e2e_shell("rm -rf %s", tmp);
}

Test(export_e2e, speedscope_opens_the_file, .timeout = 300)
{
	char args[PATH_MAX], expect[512];
	long long pid, tid;

	record("-e offcpu", "sleeper", "300 10");
	pid = e2e_value_of(wout, "pid");
	tid = e2e_value_of(wout, "tid");
	snprintf(args, sizeof(args), "-p %lld --speedscope %s", pid, files[0]);
	free(stkrec("report", args));
	/* its thread renamed itself: named as it ended */
	snprintf(expect, sizeof(expect), "--expect 'sleeper-nap %lld/%lld: off-CPU=sleeper_loop'",
		 pid, tid);
	speedscope_shows(expect);
	record("-e cpu -F 499", "cpuburn", "500 25");
	pid = e2e_value_of(wout, "pid");
	snprintf(args, sizeof(args), "-p %lld --speedscope %s", pid, files[0]);
	free(stkrec("report", args));
	snprintf(expect, sizeof(expect), "--expect 'cpuburn %lld/%lld: CPU=burn_a' "
		 "--expect 'cpuburn %lld/%lld: CPU=burn_b'", pid, pid, pid, pid);
	speedscope_shows(expect);
}
