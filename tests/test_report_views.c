// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Report views on the synthetic scene of tests/util_report.c: byte-exact
 * golden files (tests/golden/report_*.txt) plus exact values checked here.
 * STKREC_GOLDEN_UPDATE=1 rewrites the golden files (review the diff!).
 */
#include "tests/report_run.h"

TestSuite(report_views, .init = setup, .fini = teardown);

Test(report_views, folded_offcpu_golden)
{
	char *s = run(view_folded, NULL, NULL);

	check_folded_format(s);
	golden("report_folded.txt", s);
	/* E1 + E2 (pid 100) + E10 (pid 401, also "app"): 1000 + 3000 + 600 us */
	cr_assert_not_null(strstr(s, "app;app+0x1050;app+0x1100;libc.so.6+0x1234;"
				     "do_syscall_64;__x64_sys_nanosleep;hrtimer_nanosleep;"
				     "do_nanosleep;schedule;__schedule 4600\n"));
	/* 2,500,000 + 400 ns: summed, then rounded */
	cr_assert_not_null(strstr(s, ";futex_wait;schedule;__schedule 2500\n"));
	free(s);
}

Test(report_views, folded_delimited_annotated_pid_golden)
{
	struct report_opts o = { .delimited = true, .annotate = true, .with_pid = true };
	char *s = run(view_folded, NULL, &o);

	check_folded_format(s);
	golden("report_folded_dap.txt", s);
	cr_assert_not_null(strstr(s, "app-100;app+0x1050;app+0x1100;libc.so.6+0x1234;-;"
				     "do_syscall_64_[k];"));
	/* no delimiter when a part is missing (BCC profile -d) */
	cr_assert_not_null(strstr(s, "app-100;[Missed User Stack];do_syscall_64_[k];"));
	/* a kernel thread has no user part: no delimiter */
	cr_assert_not_null(strstr(s, "kworker/0:1-200;kthread_[k];worker_thread_[k];"
				     "schedule_[k];__schedule_[k] 500\n"));
	free(s);
}

Test(report_views, folded_missing_stacks)
{
	char *s = run(view_folded, NULL, NULL);

	/* E6: user stack not taken, like BCC profile */
	cr_assert_not_null(strstr(s, "app;[Missed User Stack];do_syscall_64;futex_wait;"
				     "schedule;__schedule 1500\n"));
	/* E7: kernel stack id never defined */
	cr_assert_not_null(strstr(s, "app-worker;app+0x1050;app+0x1200;libc.so.6+0x2345;"
				     "[lost stack] 700\n"));
	free(s);
}

Test(report_views, folded_cpu_samples)
{
	struct filter f = { .kinds = 1u << CAP_KIND_CPU };
	char *s = run(view_folded, &f, NULL);

	check_folded_format(s);
	/* sorted bytewise, as LC_ALL=C sort would: '-' < ';' */
	cr_assert_str_eq(s,
		"app-worker;app+0x1050;app+0x1200;libc.so.6+0x2345;do_syscall_64;"
		"ext4_file_read_iter 1\n"
		"app;app+0x1050;app+0x1100;libc.so.6+0x1234 2\n"
		"kworker/0:1;do_syscall_64;ext4_file_read_iter 1\n");
	filter__free(&f);
	free(s);
}

Test(report_views, exec_and_fork_mappings)
{
	struct report_opts o = { .with_pid = true };
	char *s = run(view_folded, NULL, &o);

	/* pid 400 before its exec runs sh, after it app2 (comm changes too) */
	cr_assert_not_null(strstr(s, "sh-400;sh+0x500;do_syscall_64;"));
	cr_assert_not_null(strstr(s, "app2-400;app2+0x500;do_syscall_64;"));
	/* pid 401 has no mapping of its own: inherited from its parent 100 */
	cr_assert_not_null(strstr(s, "app-401;app+0x1050;app+0x1100;libc.so.6+0x1234;"
				     "do_syscall_64;__x64_sys_nanosleep;hrtimer_nanosleep;"
				     "do_nanosleep;schedule;__schedule 600\n"));
	cr_assert_not_null(strstr(s, "app-100;app+0x1050;app+0x1100;libc.so.6+0x1234;"
				     "do_syscall_64;__x64_sys_nanosleep;hrtimer_nanosleep;"
				     "do_nanosleep;schedule;__schedule 4000\n"));
	free(s);
}

Test(report_views, topwaits_text_golden)
{
	char *s = run(view_topwaits, NULL, NULL);

	golden("report_topwaits.txt", s);
	/* longest first: E2 3000 us at 03:04:05.5 (start T0 + 0.5 s) */
	cr_assert(!strncmp(strchr(s, '\n') + 1,
			   "100     app                    2         4000         3000  "
			   "2026-01-02T03:04:05.500000+00:00\n", 93), "%s", s);
	free(s);
}

Test(report_views, topwaits_json_golden)
{
	struct report_opts o = { .json = true, .max_rows = 2 };
	char *s = run(view_topwaits, NULL, &o);

	golden("report_topwaits.json", s);
	cr_assert_not_null(strstr(s,
		"{\"comm\": \"app\", \"pid\": 100, \"max_tid\": 100, \"count\": 2, "
		"\"total_us\": 4000, \"max_us\": 3000, "
		"\"max_time\": \"2026-01-02T03:04:05.500000+00:00\", \"stack\": "
		"[\"app+0x1050\", \"app+0x1100\", \"libc.so.6+0x1234\", \"do_syscall_64\", "
		"\"__x64_sys_nanosleep\", \"hrtimer_nanosleep\", \"do_nanosleep\", "
		"\"schedule\", \"__schedule\"]}"));
	cr_assert_not_null(strstr(s, "\"count\": 2, \"total_us\": 2500, \"max_us\": 2500, "
				     "\"max_time\": \"2026-01-02T03:04:06.200000+00:00\""));
	cr_assert_eq(s[0], '[');
	cr_assert_str_eq(s + strlen(s) - 3, "\n]\n");
	free(s);
}

Test(report_views, biotop_golden)
{
	char *s = run(view_biotop, NULL, NULL);

	golden("report_biotop.txt", s);
	/* interval 1: two reads of app (4 + 8 KiB, 2 and 4 ms), a write, a flush */
	cr_assert_not_null(strstr(s, "100    app              W 8   0   sda          1      16   1.00\n"));
	cr_assert_not_null(strstr(s, "100    app              R 8   0   sda          2      12   3.00\n"));
	cr_assert_not_null(strstr(s, "200    kworker/0:1      F 8   0   sda          1       0   0.50\n"));
	/* interval 2: the discard of fstrim, and a write to an unnamed device */
	cr_assert_not_null(strstr(s, "300    fstrim           D 8   0   sda          1    1024  10.00\n"));
	cr_assert_not_null(strstr(s, "100    app              W 8   16  ?            1       4   2.00\n"));
	free(s);
}

Test(report_views, biotop_interval_count_rows)
{
	struct report_opts o = { .interval_ns = 2 * RC_S, .count = 1, .max_rows = 2 };
	char *s = run(view_biotop, NULL, &o);

	cr_assert_str_eq(s,
		"\n03:04:07 (capture time 2.000000 s)\n"
		"PID    COMM             D MAJ MIN DISK       I/O  Kbytes  AVGms\n"
		"300    fstrim           D 8   0   sda          1    1024  10.00\n"
		"100    app              W 8   0   sda          1      16   1.00\n");
	free(s);
}

Test(report_views, perf_golden)
{
	char *s = run(view_perf, NULL, NULL);

	golden("report_perf.txt", s);
	cr_assert_not_null(strstr(s, "# WARNING: 5 offcpu events lost (ring buffer full)\n"));
	cr_assert_not_null(strstr(s, "# WARNING: 2 cpu user stacks not taken\n"));
	/* off-CPU total 10,300,899 ns */
	cr_assert_not_null(strstr(s, "# Event count (off-CPU time): 10301 us\n"));
	free(s);
}

/* Events the kernel ran no program for are in the recorder stats, and the
 * header warns of them as of LOST records. */
Test(report_views, perf_warns_of_runs_not_made)
{
	static const struct {
		uint32_t id;
		const char *key;
		uint64_t value;
	} st[] = {
		{ 1, "bpf.skipped.bio", 0 },
		{ 2, "bio.missed_completions", 2 },
		{ 3, "bio.incomplete", 5 },
	};
	char *path = rc_tmpname("stats"), *s;
	struct cap_writer *w;
	size_t i;

	cr_assert_not_null(path);
	w = rc_open(path);
	cr_assert_not_null(w);
	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		struct cap_stat r = { .value = st[i].value, .key_id = st[i].id };

		cr_assert_eq(rc_string(w, st[i].id, st[i].key), 0);
		cr_assert_geq(cap_writer__append(w, CAP_REC_STAT, &r, sizeof(r), NULL, 0), 0);
	}
	cr_assert_eq(cap_writer__finish(w), 0);
	model__free(model);
	cr_assert_eq(model__load(path, &model), 0);
	s = run(view_perf, NULL, NULL);
	cr_assert_not_null(strstr(s, "# WARNING: 2 events not recorded, the kernel did not run "
				     "the recorder's program (bio.missed_completions)\n"), "%s", s);
	cr_assert_not_null(strstr(s, "# WARNING: 5 block requests not seen completing: in "
				     "flight at the end, or not recorded (bio.incomplete)\n"), "%s", s);
	cr_assert_null(strstr(s, "(bpf.skipped.bio)"), "%s", s);
	free(s);
	unlink(path);
	free(path);
}

Test(report_views, perf_callgraph_golden)
{
	struct report_opts o = { .callgraph = true };
	struct filter f = { .kinds = 1u << CAP_KIND_OFFCPU };
	char *s = run(view_perf, &f, &o);

	golden("report_perf_g.txt", s);
	filter__free(&f);
	free(s);
}

Test(report_views, perf_sort_pid_sym)
{
	struct report_opts o = { .sort = { SORT_PID, SORT_SYM }, .nsort = 2 };
	struct filter f = { .kinds = 1u << CAP_KIND_CPU };
	char *s = run(view_perf, &f, &o);

	golden("report_perf_sort.txt", s);
	filter__free(&f);
	free(s);
}

Test(report_views, script_golden)
{
	char *s = run(view_script, NULL, NULL);

	golden("report_script.txt", s);
	free(s);
}

Test(report_views, script_folded_golden)
{
	struct report_opts o = { .script_folded = true };
	char *s = run(view_script, NULL, &o);

	golden("report_script_folded.txt", s);
	free(s);
}

/* The wait site by the kernel's own ranges (KERNEL, FORMAT.md §4.7) where
 * the capture has them: a frame inside them is skipped whatever its name,
 * one outside is not; captures without them skip the scheduler by name
 * (perf_golden: hrtimer_nanosleep, futex_wait). */
Test(report_views, wait_site_by_kernel_ranges)
{
	static const struct { uint64_t addr; const char *name; } ks[] = {
		{ 0xffffffff81001000ull, "__schedule" }, { 0xffffffff81002000ull, "do_nanosleep" },
		{ 0xffffffff81003000ull, "hrtimer_nanosleep" }, { 0xffffffff81004000ull, "futex_wait" },
		{ 0xffffffff81005000ull, "do_syscall_64" },
	};
	static const uint64_t nap[] = { 0xffffffff81001010ull, 0xffffffff81002010ull,
					0xffffffff81003010ull, 0xffffffff81005010ull };
	static const uint64_t lock[] = { 0xffffffff81001010ull, 0xffffffff81004010ull,
					 0xffffffff81005010ull };
	struct cap_kernel k = { .sched_text_start = 0xffffffff81001000ull,
				.sched_text_end = 0xffffffff81003000ull,
				.lock_text_start = 0xffffffff81004000ull,
				.lock_text_end = 0xffffffff81004100ull };
	char *path = rc_tmpname("ranges"), *s;
	struct cap_writer *w;
	size_t i;

	cr_assert_not_null(path);
	w = rc_open(path);
	cr_assert_not_null(w);
	cr_assert_geq(cap_writer__append(w, CAP_REC_KERNEL, &k, sizeof(k), NULL, 0), 0);
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
		cr_assert_eq(rc_ksym(w, ks[i].addr, 0x100, ks[i].name, 0), 0);
	cr_assert_geq(cap_writer__stack(w, 1, CAP_STACK_KERNEL, nap, 4), 0);
	cr_assert_geq(cap_writer__stack(w, 2, CAP_STACK_KERNEL, lock, 3), 0);
	cr_assert_eq(rc_thread(w, RC_T0, 7, 7, 0, "waiter"), 0);
	cr_assert_eq(rc_offcpu(w, RC_T0 + RC_MS, 3000000, 7, 7, 1, CAP_STACK_NONE, 1), 0);
	cr_assert_eq(rc_offcpu(w, RC_T0 + 5 * RC_MS, 1000000, 7, 7, 1, CAP_STACK_NONE, 2), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
	model__free(model);
	cr_assert_eq(model__load(path, &model), 0);
	s = run(view_perf, NULL, NULL);
	cr_assert_not_null(strstr(s, "    75.00%  waiter   [k] hrtimer_nanosleep  [.] [unknown]\n"),
			   "%s", s);
	cr_assert_not_null(strstr(s, "    25.00%  waiter   [k] do_syscall_64      [.] [unknown]\n"),
			   "%s", s);
	free(s);
	unlink(path);
	free(path);
}
