// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end through the report: the real recorder on the test workloads,
 * then `stkrec report` / `stkrec script` on the capture, checked against
 * what the workloads know (their names, wall time, work split and bytes).
 * Skips, visibly, without root or BPF.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/util_e2e.h"
#include "tests/util_report.h"

static char *cap, *out_path;
static const char *bin;

static void setup(void)
{
	bin = e2e_env("STKREC", "build/stkrec");
	cap = rc_tmpname("e2e");
	out_path = rc_tmpname("e2e-out");
}

static void teardown(void)
{
	unlink(cap);
	unlink(out_path);
	free(cap);
	free(out_path);
}

/* Record `workload ARGS` with record options ropts; the workload's stdout
 * is returned. Skips when recording cannot work here. */
static char *record(const char *ropts, const char *name, const char *args)
{
	char *out;

	e2e_record(bin, cap, ropts, "", name, args, out_path);
	out = rc_slurp(out_path, NULL);
	cr_assert_not_null(out);
	return out;
}

/* Run `stkrec CMD -i CAP ARGS` and return its stdout (exit status 0). */
static char *report(const char *cmd, const char *args)
{
	char line[PATH_MAX * 2];
	int st;

	snprintf(line, sizeof(line), "%s %s -i %s %s >%s", bin, cmd, cap, args, out_path);
	st = system(line);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "'%s' failed", line);
	return rc_slurp(out_path, NULL);
}

TestSuite(report_e2e, .init = setup, .fini = teardown);

Test(report_e2e, sleeper_folded_names_and_time)
{
	char *wout = record("-e offcpu", "sleeper", "600 10"), *s, *p, args[64];
	long long tid = e2e_value_of(wout, "tid"), wall = e2e_value_of(wout, "wall_ns");
	unsigned long long sum = 0;
	bool named = false;

	snprintf(args, sizeof(args), "--folded -t %lld", tid);
	s = report("report", args);
	for (p = s; *p; p = strchr(p, '\n') + 1) {
		char *nl = strchr(p, '\n'), *sp = nl;

		cr_assert_not_null(nl);
		while (sp > p && sp[-1] != ' ')
			sp--;
		sum += strtoull(sp, NULL, 10);
		/* renamed just after it started: its first naps may carry the old name */
		cr_assert(!strncmp(p, "sleeper-nap;", 12) || !strncmp(p, "sleeper;", 8),
			  "%.*s", (int)(nl - p), p);
		/* user frames named through the capture's mappings and build IDs */
		if (memmem(p, nl - p, "sleeper_loop", 12) && memmem(p, nl - p, ";schedule", 9))
			named = true;
	}
	cr_assert(named, "no stack through sleeper_loop and schedule:\n%s", s);
	/* asleep almost all of its wall time: off-CPU sum within 80%..105% */
	cr_assert_geq(sum * 1000, (unsigned long long)wall * 8 / 10, "sum %llu us, wall %lld ns",
		      sum, wall);
	cr_assert_leq(sum * 1000, (unsigned long long)wall * 105 / 100, "sum %llu us, wall %lld ns",
		      sum, wall);
	free(s);
	free(wout);
}

Test(report_e2e, cpuburn_perf_view_split)
{
	char *wout = record("-e cpu -F 499", "cpuburn", "1500 25"), *s, *a, *b, args[64];
	double pa, pb;

	snprintf(args, sizeof(args), "-p %lld --sort sym", e2e_value_of(wout, "pid"));
	s = report("report", args);
	a = strstr(s, "[.] burn_a\n");
	b = strstr(s, "[.] burn_b\n");
	cr_assert(a && b, "%s", s);
	while (a > s && a[-1] != '\n')
		a--;
	while (b > s && b[-1] != '\n')
		b--;
	pa = atof(a);
	pb = atof(b);
	/* 25% of the work units in burn_a: about a third of burn_b's samples */
	cr_assert(pb > pa * 2 && pb < pa * 5, "burn_a %.2f%%, burn_b %.2f%%\n%s", pa, pb, s);
	free(s);
	free(wout);
}

Test(report_e2e, odirect_script_bytes_exact)
{
	char target[] = "/var/tmp/stkrec-e2e-odirectXXXXXX", args[PATH_MAX], *wout, *s, *line;
	unsigned long long data = 0, n;
	double t, last_data = 0, first_meta = 1e30;
	unsigned ndata = 0, nmeta = 0;
	char op;
	int fd = mkstemp(target);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(args, sizeof(args), "%s 32 65536", target);
	wout = record("-e bio", "odirect", args);
	snprintf(args, sizeof(args), "-e bio -p %lld", e2e_value_of(wout, "pid"));
	s = report("script", args);
	/* "COMM PID/TID [---] SECONDS: bio: BYTES bytes OP DISK ...", then the
	 * submitter's stack, one tab-indented line per frame */
	for (line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		const char *q = strstr(line, "] ");

		if (line[0] == '\t')
			continue;

		cr_assert(q && sscanf(q + 2, "%lf: bio: %llu bytes %c", &t, &n, &op) == 3,
			  "%s", line);
		if (op != 'W')
			continue;
		if (n == 65536) {
			ndata++;
			data += n;
			last_data = t > last_data ? t : last_data;
			continue;
		}
		/* anything else written is what the fsync after the last
		 * pwrite added: file system blocks of metadata and journal */
		nmeta++;
		first_meta = t < first_meta ? t : first_meta;
		cr_assert(n > 0 && n < 65536 && n % 4096 == 0, "not a data write: %s", line);
	}
	/* each synchronous 64 KiB O_DIRECT pwrite is one request of its own */
	cr_assert_eq(ndata, 32, "%u requests of 64 KiB", ndata);
	cr_assert_eq(data, (unsigned long long)e2e_value_of(wout, "bytes"));
	cr_assert(!nmeta || first_meta >= last_data,
		  "metadata at %.6f before the last data write at %.6f", first_meta, last_data);
	unlink(target);
	free(s);
	free(wout);
}
