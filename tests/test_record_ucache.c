// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end, the kept walks: a thread's switch-out or wakeup takes its
 * user stack from its previous walk of that kind when every stack word that
 * walk read still holds its value (bpf/unwind.bpf.h), and its kernel stack
 * likewise (bpf/kstack.bpf.h). The stacks must stay exact:
 *   - tests/workloads/nofp_callers naps through two callers whose naps
 *     enter the kernel with the same registers; the thread's name says
 *     whose each nap is, and no nap may show the other caller; naps of
 *     the two in turn are each found again (two kept walks per thread);
 *   - tests/workloads/kreads reads a pipe and a socket in turn: one
 *     syscall, two kernel stacks; no read may show the other's;
 *   - under STKREC_TEST_UCACHE=verify each kept stack is walked again in
 *     the kernel and compared, on a pipe ping-pong and on Python threads;
 *   - STKREC_TEST_UCACHE=off and --call-graph fp keep no user stack, off
 *     no kernel stack.
 * Skips, visibly, without root, BPF or dwarf (and python3.11).
 */
#include <criterion/criterion.h>
#include "tests/reliability_run.h"
#include "tests/util_report.h"

#define NAPS 2000
#define PYTHON "/usr/bin/python3.11"
#define NOT_DIFFERED "test: 0 kept user stacks differed from a new walk"
#define NOT_DIFFERED_K "test: 0 kept kernel stacks differed from a new walk"

static char *cap;

static void setup(void)
{
	cap = rc_tmpname("ucache");
	cr_assert(cap);
}

static void teardown(void)
{
	unlink(cap);
	free(cap);
}

TestSuite(record_ucache, .init = setup, .fini = teardown, .timeout = 180);

/* stkrec record -o CAP ARGS... (exit 0 asserted); its stderr in r. */
static void record(char *const args[], struct rl_run *r)
{
	char *argv[24] = { (char *)rl_stkrec(), "record", "-o", cap };
	int i, n = 4;

	rl_need_bpf();
	rl_need_dwarf();
	for (i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	rl_run(argv, 120, 0, r);
	cr_assert_eq(rl_code(r), 0, "stkrec record: exit %d: %s", rl_code(r), r->err);
}

/* WHAT.KIND of the capture's info --json (unwind_cached, kstack_cached). */
static long kept_of(const char *what, const char *kind)
{
	char *args[] = { "info", "--json", NULL }, key[64], *p;

	snprintf(key, sizeof(key), "\"%s\":{", what);
	p = strstr(rl_stkrec_on(cap, args), key);
	cr_assert_not_null(p, "info --json has no %s", what);
	snprintf(key, sizeof(key), "\"%s\":", kind);
	p = strstr(p, key);
	cr_assert_not_null(p);
	return atol(p + strlen(key));
}

/* User stacks from kept walks, of kind. */
static long kept(const char *kind)
{
	return kept_of("unwind_cached", kind);
}

/* Kernel stacks from kept walks, of kind. */
static long kkept(const char *kind)
{
	return kept_of("kstack_cached", kind);
}

/* Off-CPU intervals of thread name comm whose stack (user stacks only
 * with -U, else both) has mine, and those with other (which must be none),
 * of those whose stack has within (or all), from script --folded. */
static void waits_of(const char *comm, const char *stacks, const char *within, const char *mine,
		     const char *other, long *n, long *wrong)
{
	char *argv[] = { (char *)rl_stkrec(), "script", "-i", cap, "--folded", "-e", "offcpu",
			 "--comm", (char *)comm, (char *)stacks, NULL };
	char *out, *line, *save;
	struct rl_run r;
	size_t len;

	rl_run_all(argv, 60, 0, &r, &out, &len);
	cr_assert_eq(rl_code(&r), 0, "stkrec script: exit %d: %s", rl_code(&r), r.err);
	cr_assert_not_null(out);
	*n = *wrong = 0;
	/* one line per interval, its stack last */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (within && !strstr(line, within))
			continue;
		if (strstr(line, other))
			(*wrong)++;
		else if (strstr(line, mine))
			(*n)++;
	}
	free(out);
}

/* User stacks: intervals of comm through caller, and through other. */
static void naps_of(const char *comm, const char *caller, const char *other, long *mine,
		    long *wrong)
{
	waits_of(comm, "-U", NULL, caller, other, mine, wrong);
}

/* nofp_callers NAPS naps, TURN of each caller in turn: its naps of each
 * caller (none shown in the other's), and the user stacks kept. */
static long callers(const char *turn, long *a, long *b)
{
	char wl[PATH_MAX], naps[16];
	char *args[] = { "-e", "offcpu", "--", wl, naps, "100", (char *)turn, NULL };
	long a_wrong, b_wrong, k;
	struct rl_run r;

	rl_workload("nofp_callers", wl);
	snprintf(naps, sizeof(naps), "%d", NAPS);
	record(args, &r);
	naps_of("callers-a", ";caller_a;nap_us;", ";caller_b;", a, &a_wrong);
	naps_of("callers-b", ";caller_b;nap_us;", ";caller_a;", b, &b_wrong);
	k = kept("offcpu");
	cr_assert_eq(a_wrong + b_wrong, 0,
		     "%ld naps of caller_a shown in caller_b, %ld of caller_b in caller_a "
		     "(%ld stacks kept)", a_wrong, b_wrong, k);
	/* every nap switches out once, unless preempted past its timer */
	cr_assert_geq(*a, NAPS / 4, "%ld naps of caller_a", *a);
	cr_assert_geq(*b, NAPS / 4, "%ld naps of caller_b", *b);
	return k;
}

Test(record_ucache, callers_apart_where_the_registers_are_the_same)
{
	long a, b, k = callers("2", &a, &b);

	/* at least the second nap of each pair: NAPS / 2 less the preempted */
	cr_assert_geq(k, NAPS / 8, "%ld stacks kept of %ld naps", k, a + b);
}

/* Naps through caller_a and caller_b in turn, one each (a b a b ...):
 * a thread keeps two walks of its switch-outs, so every nap after the
 * first two finds its caller's; with one, none would. */
Test(record_ucache, callers_in_turn_both_kept)
{
	long a, b, k = callers("1", &a, &b);

	cr_assert_geq(k, NAPS / 2, "%ld stacks kept of %ld naps", k, a + b);
}

/*
 * Kernel stacks: tests/workloads/kreads reads a pipe and a socket in turn,
 * each read(2): the same syscall and the same start of the stack. No read
 * may show the other's kernel function, and most are given kept stacks.
 */
Test(record_ucache, kernel_stacks_apart_where_the_syscall_is_the_same)
{
	char wl[PATH_MAX], reads[16];
	char *args[] = { "-e", "offcpu", "--", wl, reads, "100", NULL };
	long p, s, p_wrong, s_wrong, k;
	struct rl_run r;

	rl_workload("kreads", wl);
	snprintf(reads, sizeof(reads), "%d", NAPS / 2);
	record(args, &r);
	/* anon_pipe_read (6.18) or pipe_read (6.1) */
	waits_of("kreads", NULL, ";read_pipe;", "pipe_read;", "unix_stream_read", &p, &p_wrong);
	waits_of("kreads", NULL, ";read_sock;", "unix_stream_read", "pipe_read;", &s, &s_wrong);
	k = kkept("offcpu");
	cr_assert_eq(p_wrong + s_wrong, 0,
		     "%ld pipe reads shown in the socket's kernel stack, %ld socket reads in the "
		     "pipe's (%ld kernel stacks kept)", p_wrong, s_wrong, k);
	/* every read blocks, but for the few the scheduler catches early */
	cr_assert_geq(p, NAPS / 4, "%ld pipe reads", p);
	cr_assert_geq(s, NAPS / 4, "%ld socket reads", s);
	cr_assert_geq(k, NAPS / 4, "%ld kernel stacks kept of %ld reads", k, p + s);
}

/* STKREC_TEST_UCACHE=verify record ARGS: no kept stack differed, and
 * some switch-outs (and, with wakeups, wakeups) were given kept stacks,
 * user and kernel. */
static void verified(char *const args[], bool wakeups)
{
	struct rl_run r;

	setenv("STKREC_TEST_UCACHE", "verify", 1);
	record(args, &r);
	cr_assert(strstr(r.err, NOT_DIFFERED), "%s", r.err);
	cr_assert(strstr(r.err, NOT_DIFFERED_K), "%s", r.err);
	cr_assert_gt(kept("offcpu"), 0);
	cr_assert_gt(kkept("offcpu"), 0);
	if (wakeups) {
		cr_assert_gt(kept("wakeup"), 0);
		cr_assert_gt(kkept("wakeup"), 0);
	}
}

Test(record_ucache, verified_on_a_pipe_ping_pong)
{
	char wl[PATH_MAX];
	char *args[] = { "-e", "offcpu,wakeup", "--", wl, "pipe", "1", "1", NULL };

	rl_workload("burst", wl);
	verified(args, true);
}

Test(record_ucache, verified_on_python_threads)
{
	char wl[PATH_MAX];
	char *args[] = { "-e", "offcpu,wakeup", "--", PYTHON, wl, "2", NULL };

	if (access(PYTHON, X_OK))
		cr_skip_test("no %s", PYTHON);
	/* its wakers alternate between two places (the feeder releases a
	 * lock, then writes a socket): no wakeup need repeat its last walk */
	rl_workload("py/waits.py", wl);
	verified(args, false);
}

static void none_kept(char *const args[])
{
	char wl[PATH_MAX];
	char *all[16];
	struct rl_run r;
	int i;

	rl_workload("burst", wl);
	for (i = 0; args[i]; i++)
		all[i] = args[i];
	all[i++] = "--";
	all[i++] = wl;
	all[i++] = "pipe";
	all[i++] = "1";
	all[i++] = "1";
	all[i] = NULL;
	record(all, &r);
	cr_assert_eq(kept("offcpu"), 0);
	cr_assert_eq(kept("wakeup"), 0);
}

Test(record_ucache, none_kept_when_turned_off)
{
	char *args[] = { "-e", "offcpu,wakeup", NULL };

	setenv("STKREC_TEST_UCACHE", "off", 1);
	none_kept(args);
	cr_assert_eq(kkept("offcpu"), 0);
	cr_assert_eq(kkept("wakeup"), 0);
}

/* Each half alone: the knob make bench measures them apart with. */
Test(record_ucache, user_or_kernel_alone)
{
	char wl[PATH_MAX];
	char *args[] = { "-e", "offcpu,wakeup", "--", wl, "pipe", "1", "1", NULL };
	struct rl_run r;

	rl_workload("burst", wl);
	setenv("STKREC_TEST_UCACHE", "kernel", 1);
	record(args, &r);
	cr_assert_eq(kept("offcpu"), 0);
	cr_assert_gt(kkept("offcpu"), 0);
	setenv("STKREC_TEST_UCACHE", "user", 1);
	record(args, &r);
	cr_assert_gt(kept("offcpu"), 0);
	cr_assert_eq(kkept("offcpu"), 0);
}

Test(record_ucache, none_kept_with_frame_pointers)
{
	char *args[] = { "-e", "offcpu,wakeup", "--call-graph", "fp", NULL };

	none_kept(args);
}

/*
 * Kept walks live in the tp_btf programs. Where the kernel has tp_btf those
 * must load: a verifier refusal falls back to raw_tp, which records right
 * but walks every stack, and says so. Seen on a 6.18 kernel whose JIT gives
 * programs no stack of their own: the switch program and its walk took 592
 * of the 512 bytes of BPF stack a call chain may use.
 */
Test(record_ucache, the_tp_btf_programs_load)
{
	char wl[PATH_MAX];
	char *args[] = { "-e", "offcpu,wakeup,cpu,bio", "--", wl, "pipe", "1", "1", NULL };
	struct rl_run r;

	rl_workload("burst", wl);
	record(args, &r);
	cr_assert_null(strstr(r.err, "refused the tp_btf programs"), "%s", r.err);
	cr_assert_gt(kept("offcpu"), 0);
}
