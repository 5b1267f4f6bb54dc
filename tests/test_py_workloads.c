// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Python workloads ($STKREC_WORKLOADS/py/NAME.py, tests/workloads/py)
 * under each interpreter present: each prints its one ready line (its pid,
 * the tids of its threads, each function's def and last line), its threads
 * are in the state the line promises, and it exits 0 by itself at the end
 * of the seconds it was given. The recorder's tests rely on exactly that.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/reliability_run.h"
#include "tests/util_e2e.h"
#include "tests/util_python.h"

#define RUN_SECONDS "5"

struct pyrun {
	const char *name;   /* NAME.py */
	const char *xopt;   /* an -X option, or NULL */
	char path[PATH_MAX];
	pid_t pid;
	int fo, fe;
	char ready[2048];   /* the ready line, without its newline */
};

static const char *const scripts[] = {
	"cpu2deep", "waits", "twothreads", "recurse", "deleted", "cext", "perftramp",
};
#define NSCRIPTS (sizeof(scripts) / sizeof(scripts[0]))

static void start(const struct test_python *p, struct pyrun *r)
{
	char *argv[6], **a = argv;

	*a++ = (char *)p->path;
	if (r->xopt) {
		*a++ = "-X";
		*a++ = (char *)r->xopt;
	}
	*a++ = r->path;
	*a++ = RUN_SECONDS;
	*a = NULL;
	r->pid = rl_spawn(argv, &r->fo, &r->fe, 0);
}

/* Wait for the ready line (30 s: a busy host), which must come first. */
static void wait_ready(const struct test_python *p, struct pyrun *r)
{
	double end = rl_now() + 30;
	char out[2048], err[2048], *nl;

	for (;;) {
		rl_slurp_fd(r->fo, out, sizeof(out));
		nl = strchr(out, '\n');
		if (nl)
			break;
		if (!rl_running(r->pid) || rl_now() > end) {
			rl_slurp_fd(r->fe, err, sizeof(err));
			cr_assert_fail("%s %s: no ready line; stdout '%s', stderr '%s'", p->name,
				       r->name, out, err);
		}
		usleep(5000);
	}
	*nl = 0;
	snprintf(r->ready, sizeof(r->ready), "%s", out);
	cr_assert_eq(strncmp(out, "ready pid=", 10), 0, "%s %s: first line '%s'", p->name,
		     r->name, out);
}

/* The number after " KEY=" in the ready line; -1 when absent. */
static long long field(const struct pyrun *r, const char *key)
{
	char pat[64];
	const char *f;

	snprintf(pat, sizeof(pat), " %s=", key);
	f = strstr(r->ready, pat);
	return f ? atoll(f + strlen(pat)) : -1;
}

/* Line n of the script (1-based), into buf. */
static void script_line(const char *path, long long n, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	long long k;

	cr_assert_not_null(f, "%s", path);
	buf[0] = 0;
	for (k = 1; k <= n && fgets(buf, len, f); k++)
		if (k < n)
			buf[0] = 0;
	fclose(f);
}

/* Each NAME_line=N names the line of `def NAME(`, each NAME_last a later
 * line; each NAME_tid a thread of the process, tid its main thread. */
static void check_fields(const struct test_python *p, const struct pyrun *r)
{
	char key[128], line[512], want[140];
	const char *s = r->ready + strlen("ready");
	long long v;
	int n, defs = 0;

	cr_assert_eq(field(r, "pid"), r->pid, "%s %s: '%s'", p->name, r->name, r->ready);
	cr_assert_eq(field(r, "tid"), r->pid, "%s %s: the main thread's tid", p->name, r->name);
	for (; sscanf(s, " %127[a-z_0-9]=%lld%n", key, &v, &n) == 2; s += n) {
		size_t kl = strlen(key);

		if (kl > 4 && !strcmp(key + kl - 4, "_tid")) {
			snprintf(line, sizeof(line), "/proc/%d/task/%lld", r->pid, v);
			cr_assert_eq(access(line, F_OK), 0, "%s %s: %s=%lld is no thread of %d",
				     p->name, r->name, key, v, r->pid);
		} else if (kl > 5 && !strcmp(key + kl - 5, "_line")) {
			key[kl - 5] = 0;
			script_line(r->path, v, line, sizeof(line));
			snprintf(want, sizeof(want), "def %s(", key);
			cr_assert_not_null(strstr(line, want), "%s %s: line %lld is '%s', not %s",
					   p->name, r->name, v, line, want);
			defs++;
			strcat(key, "_last");
			cr_assert(field(r, key) < 0 || field(r, key) > v, "%s %s: %s before its def",
				  p->name, r->name, key);
		}
	}
	cr_assert_eq(*s, 0, "%s %s: cannot read '%s' of '%s'", p->name, r->name, s, r->ready);
	cr_assert_geq(defs, 2, "%s %s: '%s'", p->name, r->name, r->ready);
}

/* A thread's /proc/PID/task/TID/FILE, its first 255 bytes. */
static void task_file(const struct pyrun *r, long long tid, const char *file, char *buf)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/%d/task/%lld/%s", r->pid, tid, file);
	buf[0] = 0;
	rl_cat_proc(path, buf, 256);
}

/* A thread's time on a CPU so far, in ns (schedstat). */
static long long task_cpu_ns(const struct pyrun *r, long long tid)
{
	char buf[256];

	task_file(r, tid, "schedstat", buf);
	return atoll(buf);
}

/* waits: napper, locker and reader each seen asleep (S) in 100 looks, 10
 * ms apart, and each on a CPU for less than 60 ms of 300: they block, they
 * do not spin (a thread that waits for the GIL sleeps too). */
static void check_sleepers(const struct test_python *p, const struct pyrun *r)
{
	static const char *const who[] = { "napper_tid", "locker_tid", "reader_tid" };
	long long cpu[3];
	bool slept[3] = { false };
	char buf[256], *paren;
	int look, k;

	for (k = 0; k < 3; k++)
		cpu[k] = task_cpu_ns(r, field(r, who[k]));
	for (look = 0; look < 100 && !(slept[0] && slept[1] && slept[2]); look++) {
		for (k = 0; k < 3; k++) {
			task_file(r, field(r, who[k]), "stat", buf);
			paren = strrchr(buf, ')');
			slept[k] |= paren && paren[1] == ' ' && paren[2] == 'S';
		}
		usleep(10000);
	}
	cr_assert(slept[0] && slept[1] && slept[2], "%s waits: asleep: napper %d, locker %d, "
		  "reader %d", p->name, slept[0], slept[1], slept[2]);
	usleep(300000);
	for (k = 0; k < 3; k++) {
		long long ran = task_cpu_ns(r, field(r, who[k])) - cpu[k];

		cr_assert_lt(ran, 60000000, "%s waits: %s ran %lld ns", p->name, who[k], ran);
	}
}

/* twothreads: alpha and beta each on a CPU for 20 ms at least, within 4 s
 * (the host may be busy, and one GIL is theirs to share). */
static void check_burners(const struct test_python *p, const struct pyrun *r)
{
	long long a = field(r, "alpha_tid"), b = field(r, "beta_tid");
	double end = rl_now() + 4;

	cr_assert_neq(a, b);
	while ((task_cpu_ns(r, a) < 20000000 || task_cpu_ns(r, b) < 20000000) && rl_now() < end)
		usleep(10000);
	cr_assert(task_cpu_ns(r, a) >= 20000000 && task_cpu_ns(r, b) >= 20000000,
		  "%s twothreads: on a CPU for %lld and %lld ns in 4 s", p->name,
		  task_cpu_ns(r, a), task_cpu_ns(r, b));
}

static void check_one(const struct test_python *p, struct pyrun *r)
{
	wait_ready(p, r);
	check_fields(p, r);
	if (!strcmp(r->name, "waits"))
		check_sleepers(p, r);
	else if (!strcmp(r->name, "twothreads"))
		check_burners(p, r);
	else if (!strcmp(r->name, "recurse"))
		cr_assert_eq(field(r, "depth"), 200);
	else if (!strcmp(r->name, "perftramp"))
		cr_assert_eq(field(r, "perf"), r->xopt != NULL, "%s %s -X %s: '%s'", p->name,
			     r->name, r->xopt ? r->xopt : "-", r->ready);
	if (!strcmp(r->name, "deleted")) {
		cr_assert_eq(unlink(r->path), 0, "%s", r->path);
		*strrchr(r->path, '/') = 0;
		cr_assert_eq(rmdir(r->path), 0, "%s", r->path);
	}
}

static pid_t perf_pid; /* the -X perf run, whose /tmp/perf-PID.map stays */

/* Remove the -X perf run's map; killed first when not reaped (a reaped
 * pid is no longer ours to kill). */
static void remove_perf_map(bool reaped)
{
	char map[64];

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", perf_pid);
	if (!reaped)
		rl_kill(&perf_pid);
	perf_pid = 0;
	unlink(map);
}

/* The end: exit 0 by itself, within its seconds and a margin. */
static void check_exit(const struct test_python *p, struct pyrun *r)
{
	struct rl_run res = { 0 };
	char err[2048];

	cr_assert_eq(rl_wait(r->pid, 60, &res), 0);
	if (r->pid == perf_pid)
		remove_perf_map(true);
	rl_slurp_fd(r->fe, err, sizeof(err));
	cr_assert(!res.timed_out && rl_code(&res) == 0, "%s %s: exit %d%s: %s", p->name, r->name,
		  rl_code(&res), res.timed_out ? " (killed after 60 s)" : "", err);
	close(r->fo);
	close(r->fe);
}

/* NAME.py from $STKREC_WORKLOADS/py; deleted.py copied to a directory of
 * its own first, as the recorder's test deletes it from there. */
static char tmpdir[] = "/tmp/stkrec-pywl-XXXXXX";

/* After each test, passed or failed: no directory, no perf map left. */
static void cleanup(void)
{
	if (strcmp(tmpdir + strlen(tmpdir) - 6, "XXXXXX"))
		e2e_shell("rm -rf '%s'", tmpdir);
	if (perf_pid > 0)
		remove_perf_map(false);
}

static void locate(struct pyrun *r)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/py/%s.py", rl_env("STKREC_WORKLOADS", "build/workloads"),
		 r->name);
	if (!realpath(rel, r->path))
		cr_skip_test("workload %s not built (make test-build)", rel);
	if (strcmp(r->name, "deleted"))
		return;
	cr_assert_not_null(mkdtemp(tmpdir));
	cr_assert_eq(e2e_shell("cp '%s' '%s/'", r->path, tmpdir), 0);
	snprintf(r->path, sizeof(r->path), "%s/deleted.py", tmpdir);
}

/* Every workload under interpreter i at once, and perftramp under -X perf
 * too from 3.12. */
static void run_all(int i)
{
	const struct test_python *p = test_python_or_skip(i);
	struct pyrun runs[NSCRIPTS + 1] = { 0 };
	size_t n = 0, k;

	for (k = 0; k < NSCRIPTS; k++) {
		runs[n].name = scripts[k];
		locate(&runs[n++]);
	}
	if (p->minor >= 12) {
		runs[n] = runs[NSCRIPTS - 1];
		runs[n++].xopt = "perf";
	}
	for (k = 0; k < n; k++)
		start(p, &runs[k]);
	if (runs[n - 1].xopt)
		perf_pid = runs[n - 1].pid;
	for (k = 0; k < n; k++)
		check_one(p, &runs[k]);
	for (k = 0; k < n; k++)
		check_exit(p, &runs[k]);
	cr_log_info("%s: %zu runs, e.g. %s", p->name, n, runs[0].ready);
}

TestSuite(py_workloads, .timeout = 180, .fini = cleanup);

TEST_PER_PYTHON(py_workloads, run_all)
