// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end, the kept user walks (bpf/unwind.bpf.h): a thread's switch-out
 * or wakeup takes its user stack from its previous walk of that kind when
 * every stack word that walk read still holds its value. The stacks must
 * stay exact:
 *   - tests/workloads/nofp_callers naps through two callers whose naps
 *     enter the kernel with the same registers; the thread's name says
 *     whose each nap is, and no nap may show the other caller;
 *   - under STKREC_TEST_UCACHE=verify each kept stack is walked again in
 *     the kernel and compared, on a pipe ping-pong and on Python threads;
 *   - STKREC_TEST_UCACHE=off and --call-graph fp keep none.
 * Skips, visibly, without root, BPF or dwarf (and python3.11).
 */
#include <criterion/criterion.h>
#include "tests/reliability_run.h"
#include "tests/util_report.h"

#define NAPS 2000
#define PYTHON "/usr/bin/python3.11"
#define NOT_DIFFERED "test: 0 kept user stacks differed from a new walk"

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

/* unwind_cached.KIND of the capture's info --json. */
static long kept(const char *kind)
{
	char *args[] = { "info", "--json", NULL }, key[64], *p;

	snprintf(key, sizeof(key), "\"unwind_cached\":{");
	p = strstr(rl_stkrec_on(cap, args), key);
	cr_assert_not_null(p, "info --json has no unwind_cached");
	snprintf(key, sizeof(key), "\"%s\":", kind);
	p = strstr(p, key);
	cr_assert_not_null(p);
	return atol(p + strlen(key));
}

/* Off-CPU intervals of thread name comm whose user stack has caller, and
 * those with the other one (which must be none), from script --folded. */
static void naps_of(const char *comm, const char *caller, const char *other, long *mine,
		    long *wrong)
{
	char *argv[] = { (char *)rl_stkrec(), "script", "-i", cap, "--folded", "-U", "-e",
			 "offcpu", "--comm", (char *)comm, NULL };
	char *out, *line, *save;
	struct rl_run r;
	size_t len;

	rl_run_all(argv, 60, 0, &r, &out, &len);
	cr_assert_eq(rl_code(&r), 0, "stkrec script: exit %d: %s", rl_code(&r), r.err);
	cr_assert_not_null(out);
	*mine = *wrong = 0;
	/* one line per interval, its stack last */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, other))
			(*wrong)++;
		else if (strstr(line, caller))
			(*mine)++;
	}
	free(out);
}

Test(record_ucache, callers_apart_where_the_registers_are_the_same)
{
	char wl[PATH_MAX], naps[16];
	char *args[] = { "-e", "offcpu", "--", wl, naps, "100", NULL };
	long a, b, a_wrong, b_wrong, k;
	struct rl_run r;

	rl_workload("nofp_callers", wl);
	snprintf(naps, sizeof(naps), "%d", NAPS);
	record(args, &r);
	naps_of("callers-a", ";caller_a;nap_us;", ";caller_b;", &a, &a_wrong);
	naps_of("callers-b", ";caller_b;nap_us;", ";caller_a;", &b, &b_wrong);
	k = kept("offcpu");
	cr_assert_eq(a_wrong + b_wrong, 0,
		     "%ld naps of caller_a shown in caller_b, %ld of caller_b in caller_a "
		     "(%ld stacks kept)", a_wrong, b_wrong, k);
	/* every nap switches out once, unless preempted past its timer */
	cr_assert_geq(a, NAPS / 4, "%ld naps of caller_a", a);
	cr_assert_geq(b, NAPS / 4, "%ld naps of caller_b", b);
	/* the second nap of each pair: NAPS / 2 less the preempted */
	cr_assert_geq(k, NAPS / 8, "%ld stacks kept of %ld naps", k, a + b);
}

/* STKREC_TEST_UCACHE=verify record ARGS: no kept stack differed, and
 * some switch-outs (and, with wakeups, wakeups) were given kept stacks. */
static void verified(char *const args[], bool wakeups)
{
	struct rl_run r;

	setenv("STKREC_TEST_UCACHE", "verify", 1);
	record(args, &r);
	cr_assert(strstr(r.err, NOT_DIFFERED), "%s", r.err);
	cr_assert_gt(kept("offcpu"), 0);
	if (wakeups)
		cr_assert_gt(kept("wakeup"), 0);
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
