// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Report-time filters: each one changes the folded output of the scene
 * (tests/util_report.c, listed below) exactly as expected.
 *
 *   E1  app-100        nanosleep  1000 us  +0.1 s  state 1
 *   E2  app-100        nanosleep  3000 us  +0.5 s  state 1
 *   E3  app-worker-100 futex      2500 us  +1.2 s  state 1  tid 101
 *   E4  kworker-200    worker      500 us  +1.5 s  state 2  kernel thread
 *   E5  app-worker-100 futex       0.4 us  +2.2 s  state 1  tid 101
 *   E6  app-100        futex  1500.499 us  +2.5 s  state 1  user stack missed
 *   E7  app-worker-100 [lost]      700 us  +2.6 s  state 0  tid 101
 *   E8  sh-400         nanosleep   200 us  +0.5 s  (before the exec at +1 s)
 *   E9  app2-400       nanosleep   300 us  +2.0 s
 *   E10 app-401        nanosleep   600 us  +0.3 s  (forked from 100)
 */
#include <inttypes.h>
#include "tests/report_run.h"

#define NANO_K ";do_syscall_64;__x64_sys_nanosleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule"
#define FUTEX_K ";do_syscall_64;futex_wait;schedule;__schedule"
#define APP_U ";app+0x1050;app+0x1100;libc.so.6+0x1234"
#define WORKER_U ";app+0x1050;app+0x1200;libc.so.6+0x2345"
#define KWORKER_K ";kthread;worker_thread;schedule;__schedule"

static const struct report_opts with_pid = { .with_pid = true };

static void expect(struct filter *f, const char *want)
{
	char *s = run(view_folded, f, &with_pid);

	cr_assert_str_eq(s, want);
	free(s);
	filter__free(f);
}

TestSuite(report_filter, .init = setup, .fini = teardown);

Test(report_filter, pid)
{
	struct filter f = { 0 };

	f.pids = malloc(sizeof(*f.pids));
	f.pids[0] = RC_EXEC_PID;
	f.npids = 1;
	expect(&f, "app2-400;app2+0x500" NANO_K " 300\n"
		   "sh-400;sh+0x500" NANO_K " 200\n");
}

Test(report_filter, tid)
{
	struct filter f = { 0 };

	f.tids = malloc(sizeof(*f.tids));
	f.tids[0] = RC_WORKER_TID;
	f.ntids = 1;
	expect(&f, "app-worker-100" WORKER_U ";[lost stack] 700\n"
		   "app-worker-100" WORKER_U FUTEX_K " 2500\n");
}

Test(report_filter, comm)
{
	struct filter f = { 0 };

	cr_assert_eq(filter__add_comms(&f, "kworker/0:1,sh"), 0);
	expect(&f, "kworker/0:1-200" KWORKER_K " 500\n"
		   "sh-400;sh+0x500" NANO_K " 200\n");
}

#define WINDOW_1_2 \
	"app-worker-100" WORKER_U FUTEX_K " 2500\n" \
	"app2-400;app2+0x500" NANO_K " 300\n" \
	"kworker/0:1-200" KWORKER_K " 500\n"

Test(report_filter, time_relative)
{
	struct filter f = { 0 };

	cr_assert_eq(filter__parse_time(&f, "1,2"), 0);
	expect(&f, WINDOW_1_2);
}

Test(report_filter, time_wall_clock)
{
	struct filter f = { 0 };

	/* the scene starts at 03:04:05 UTC */
	cr_assert_eq(filter__parse_time(&f, "03:04:06,03:04:07.0"), 0);
	expect(&f, WINDOW_1_2);
}

Test(report_filter, time_iso)
{
	struct filter f = { 0 };

	cr_assert_eq(filter__parse_time(&f, "2026-01-02T03:04:06Z,2026-01-02T04:04:07+01:00"), 0);
	expect(&f, WINDOW_1_2);
}

Test(report_filter, time_open_ends)
{
	struct filter f = { 0 };

	cr_assert_eq(filter__parse_time(&f, "2.55,"), 0);
	expect(&f, "app-worker-100" WORKER_U ";[lost stack] 700\n");
	cr_assert_eq(filter__parse_time(&f, ",0.2"), 0);
	expect(&f, "app-100" APP_U NANO_K " 1000\n");
}

Test(report_filter, time_parse_errors)
{
	struct filter f = { 0 };

	cr_assert_eq(filter__parse_time(&f, "abc"), -EINVAL);
	cr_assert_eq(filter__parse_time(&f, ","), -EINVAL);
	cr_assert_eq(filter__parse_time(&f, "25:00:00,"), -EINVAL);
	cr_assert_eq(filter__parse_time(&f, "1,2,3"), -EINVAL);
	cr_assert_eq(filter__parse_time(&f, "2026-13-02T03:04:06Z"), -EINVAL);
	cr_assert_eq(filter__parse_time(&f, "3,1"), 0);
	cr_assert_eq(filter__bind(&f, model), -EINVAL); /* START after END */
	filter__free(&f);
}

Test(report_filter, block_time_bounds)
{
	struct filter f = { .min_ns = 1000000, .max_ns = 2000000 };

	expect(&f, "app-100;[Missed User Stack]" FUTEX_K " 1500\n"
		   "app-100" APP_U NANO_K " 1000\n");
}

Test(report_filter, state)
{
	struct filter f = { .has_state = true, .state = 2 };

	expect(&f, "kworker/0:1-200" KWORKER_K " 500\n");
	f = (struct filter){ .has_state = true, .state = 0 };
	expect(&f, "app-worker-100" WORKER_U ";[lost stack] 700\n");
}

Test(report_filter, thread_kind)
{
	struct filter f = { .threads = FILTER_THREADS_KERNEL };
	char *s;

	expect(&f, "kworker/0:1-200" KWORKER_K " 500\n");
	f = (struct filter){ .threads = FILTER_THREADS_USER };
	s = run(view_folded, &f, &with_pid);
	cr_assert_null(strstr(s, "kworker"));
	cr_assert_eq(strcount(s, '\n'), 7);
	filter__free(&f);
	free(s);
}

Test(report_filter, stack_parts)
{
	struct filter f = { .stacks = FILTER_STACKS_USER, .pids = malloc(4), .npids = 1 };

	f.pids[0] = RC_APP_PID;
	expect(&f, "app-100;[Missed User Stack] 1500\n"
		   "app-100" APP_U " 4000\n"
		   "app-worker-100" WORKER_U " 3200\n");
	f = (struct filter){ .stacks = FILTER_STACKS_KERNEL, .pids = malloc(4), .npids = 1 };
	f.pids[0] = RC_APP_PID;
	expect(&f, "app-100" NANO_K " 4000\n"
		   "app-100" FUTEX_K " 1500\n"
		   "app-worker-100;[lost stack] 700\n"
		   "app-worker-100" FUTEX_K " 2500\n");
}

static int print_fold(void *arg, const char *stack, size_t len, uint64_t value)
{
	fprintf(arg, "%.*s %" PRIu64 "\n", (int)len, stack, value);
	return 0;
}

/* The block I/O that --svg -e bio draws: view_fold() of kind BIO. */
static int view_fold_bio(struct report_ctx *ctx, FILE *out)
{
	return view_fold(ctx, CAP_KIND_BIO, print_fold, out);
}

Test(report_filter, event_kind)
{
	struct filter f = { .kinds = 1u << CAP_KIND_BIO };
	char *s, *all;

	/* the scene's six requests, bytes per comm and disk (8:16 has no name) */
	s = run(view_fold_bio, &f, &with_pid);
	cr_assert_str_eq(s, "app;8:16 4096\n"
			    "app;sda 28672\n"
			    "fstrim;sda 1048576\n"
			    "kworker/0:1;sda 0\n");
	free(s);
	filter__free(&f);
	/* --folded -e bio alone folds those same requests (it printed
	 * nothing and exited 0 before) */
	f = (struct filter){ .kinds = 1u << CAP_KIND_BIO };
	expect(&f, "app;8:16 4096\n"
		   "app;sda 28672\n"
		   "fstrim;sda 1048576\n"
		   "kworker/0:1;sda 0\n");
	/* bio added to off-CPU changes nothing: off-CPU is what folds */
	all = run(view_folded, NULL, &with_pid);
	cr_assert_eq(strcount(all, '\n'), 8, "%s", all);
	f = (struct filter){ .kinds = 1u << CAP_KIND_BIO | 1u << CAP_KIND_OFFCPU };
	expect(&f, all);
	free(all);
	/* CPU alone: the CPU samples, in samples */
	f = (struct filter){ .kinds = 1u << CAP_KIND_CPU };
	expect(&f, "app-100" APP_U " 2\n"
		   "app-worker-100" WORKER_U ";do_syscall_64;ext4_file_read_iter 1\n"
		   "kworker/0:1-200;do_syscall_64;ext4_file_read_iter 1\n");
}
