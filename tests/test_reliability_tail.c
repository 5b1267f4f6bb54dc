// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A --switch-output file's tail (its pack and END, record/output.c) runs
 * on a niced thread beside the drain; when the next switch must wait for
 * it, it runs at the drain's priority. Beside CPU hogs, a niced tail the
 * drain waited for took seconds, and the ring buffer overflowed meanwhile.
 * Watched from /proc: the recorder's main thread blocked in a futex (the
 * join) while a "stkrec-tail" thread is still at nice 10 for 20 ms or more
 * fails the test.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/reliability_run.h"

#define HOGS_PER_CPU 3
#define SAMPLE_US 5000
#define STREAK_MAX 4 /* samples: 20 ms */

static char dir[] = "/tmp/stkrec-tail-XXXXXX";
static char burst[PATH_MAX];
static pid_t load_pid, hogs[64];
static int nr_hogs;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	int i;

	rl_kill(&load_pid);
	for (i = 0; i < nr_hogs; i++)
		rl_kill(&hogs[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* Busy loops at the test's own priority, HOGS_PER_CPU on each CPU. */
static void start_hogs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN) * HOGS_PER_CPU;

	for (nr_hogs = 0; nr_hogs < n && nr_hogs < 64; nr_hogs++) {
		hogs[nr_hogs] = fork();
		cr_assert_geq(hogs[nr_hogs], 0);
		if (!hogs[nr_hogs]) {
			/* never outliving the test, even one killed */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			alarm(120);
			for (;;)
				;
		}
	}
}

/* The first line of /proc/PID/task/TID/FILE into buf ("" if gone). */
static void task_file(pid_t pid, const char *tid, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", pid, tid, file);
	rl_cat_proc(path, buf, len);
	buf[strcspn(buf, "\n")] = 0;
}

/* Whether a tail thread of pid is at nice 10 now. */
static bool tail_niced(pid_t pid)
{
	char path[64], buf[1024], *p;
	struct dirent *e;
	bool niced = false;
	int i;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && !niced && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		task_file(pid, e->d_name, "comm", buf, sizeof(buf));
		if (strcmp(buf, "stkrec-tail"))
			continue;
		task_file(pid, e->d_name, "stat", buf, sizeof(buf));
		p = strrchr(buf, ')'); /* fields after the name: state is 3 */
		for (i = 3; p && i <= 19; i++)
			p = strchr(p + 1, ' ');
		niced = p && atoi(p + 1) == 10;
	}
	if (d)
		closedir(d);
	return niced;
}

Test(reliability_tail, the_drain_never_waits_for_a_niced_tail, .init = setup,
     .fini = teardown, .timeout = 300)
{
	char cap[PATH_MAX], tid[16], wchan[128];
	int fo, fe, streak = 0, worst = 0, waits = 0;
	struct rl_run r = { 0 };
	siginfo_t si;
	pid_t pid;

	rl_need_bpf();
	load_pid = rl_start_burst(burst);
	start_hogs();
	snprintf(cap, sizeof(cap), "%s/t.cap", dir);
	{
		char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-a", "-e",
				 "offcpu,cpu", "--switch-output", "1s", "-d", "4", NULL };

		pid = rl_spawn(argv, &fo, &fe, 0);
	}
	snprintf(tid, sizeof(tid), "%d", pid);
	for (;;) {
		si.si_pid = 0;
		if (!waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid)
			break;
		task_file(pid, tid, "wchan", wchan, sizeof(wchan));
		if (!strncmp(wchan, "futex", 5) && tail_niced(pid)) {
			waits++;
			streak++;
			worst = streak > worst ? streak : worst;
		} else {
			streak = 0;
		}
		usleep(SAMPLE_US);
	}
	rl_wait(pid, 60, &r);
	rl_slurp_fd(fe, r.err, sizeof(r.err));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert_lt(worst, STREAK_MAX, "the drain waited %d ms at a stretch (%d ms in all) "
		     "for a tail still at nice 10: %s", worst * SAMPLE_US / 1000,
		     waits * SAMPLE_US / 1000, r.err);
}
