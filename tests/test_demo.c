// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `make demo`: demo/run.sh, the script the Makefile runs, run here on the
 * binary under test. Its sections come in order, each under its heading;
 * the off-CPU table starts with the workload's rows, before any kernel
 * thread's; every function the workload waits or burns in is named
 * (tests/workloads/demo.c, py/demo.py), and the longest wait's waker is
 * the lock's holder.
 */
#include <criterion/criterion.h>
#include "tests/e2e_dir.h"

TestSuite(demo, .timeout = 120);

/* The text of section `heading` (up to the next heading), or "" */
static char *section(const char *out, const char *heading)
{
	const char *s = strstr(out, heading), *e;

	if (!s)
		return strdup("");
	e = strstr(s + 1, "\n=== ");
	return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

/* The off-CPU table's rows (lines with '%' after "event 'offcpu'"),
 * NUL-separated in place; how many. */
static int offcpu_rows(char *text, char **rows, int max)
{
	char *p = strstr(text, "of event 'offcpu'"), *save = NULL, *line;
	int n = 0;

	if (!p)
		return 0;
	for (line = strtok_r(p, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "of event 'cpu'") || strstr(line, "of event 'bio'"))
			break;
		if (line[0] != '#' && strchr(line, '%'))
			rows[n++] = line;
	}
	return n;
}

static bool workload_row(const char *row)
{
	return strstr(row, "  demo") || strstr(row, "  python3 ");
}

Test(demo, sections_in_order_workload_first_functions_named)
{
	static const char *const headings[] = {
		"=== Recording the demo workload",
		"=== Where did the threads wait, and where did they burn CPU?",
		"=== Which wait was the longest, and who ended it?",
		"=== Who did the disk I/O?",
		"=== Where did the waits go, as a picture?",
	};
	char script[PATH_MAX], wl[PATH_MAX], *out, *tables, *top, *rows[512];
	const char *p, *prev = NULL;
	int i, n, first_kthread;
	struct res r;

	rl_need_bpf();
	rl_workload("demo", wl);
	rl_workload("py/demo.py", wl);
	snprintf(wl, sizeof(wl), "%s", rl_env("STKREC_WORKLOADS", "build/workloads"));
	snprintf(script, sizeof(script), "%s/demo/run.sh", rl_env("STKREC_SRCDIR", "."));
	e2e_dir_setup("demo");
	sh("%s %s %s %s > demo.out 2>&1", script, rl_stkrec(), wl, dir);
	r = stkrec("info demo.cap"); /* the capture is whole */
	cr_expect_eq(r.code, 0, "%s", r.err);
	res_free(&r);
	snprintf(script, sizeof(script), "%s/demo.out", dir);
	out = rc_slurp(script, NULL);
	cr_assert_not_null(out);
	for (i = 0; i < (int)(sizeof(headings) / sizeof(headings[0])); i++) {
		p = strstr(out, headings[i]);
		cr_assert(p && p > prev, "heading '%s' missing or out of order:\n%s", headings[i],
			  out);
		prev = p;
	}
	cr_expect(strstr(out, "wrote ") && strstr(out, "/demo.svg: open it in a browser"));

	/* the off-CPU table: the workload's rows first, no kernel thread before */
	tables = section(out, headings[1]);
	n = offcpu_rows(tables, rows, 512);
	cr_assert_geq(n, 6, "off-CPU table:\n%s", out);
	for (i = 0; i < 6; i++)
		cr_expect(workload_row(rows[i]), "row %d is not the workload's: %s", i, rows[i]);
	for (first_kthread = 0; first_kthread < n; first_kthread++)
		if (strstr(rows[first_kthread], "[kernel thread]"))
			break;
	for (i = first_kthread; i < n; i++)
		cr_expect(!workload_row(rows[i]), "workload row %d after a kernel thread: %s", i,
			  rows[i]);
	free(tables);

	/* each role by its function, in the tables */
	expect_has(out, "demo-waiter   [k] futex_do_wait", "lock waiter");
	expect_has(out, "[.] wait_for_lock", "lock waiter");
	expect_has(out, "[.] read_pipe", "pipe reader");
	expect_has(out, "[k] anon_pipe_read", "pipe reader");
	expect_has(out, "[.] nap", "sleeper");
	expect_has(out, "[.] write_pipe", "pipe writer");
	expect_has(out, "[.] crunch_numbers", "CPU table");
	expect_has(out, "[.] poll_queue", "the Python function");

	/* the longest wait is the lock's, woken by its holder */
	top = section(out, headings[2]);
	expect_has(top, "demo-waiter", "top-waits");
	expect_has(top, "wait_for_lock", "top-waits");
	expect_has(top, "woken by demo ", "top-waits");
	expect_has(top, "<- hold_lock", "top-waits");
	free(top);

	if (strstr(out, "refuses O_DIRECT")) {
		e2e_dir_teardown();
		free(out);
		cr_skip_test("the filesystem of %s refuses O_DIRECT: no direct I/O to check", dir);
	}
	expect_has(out, "[.] direct_write", "O_DIRECT");
	expect_has(out, "[.] direct_read", "O_DIRECT");
	top = section(out, headings[3]);
	expect_has(top, "demo-dio         W", "biotop");
	expect_has(top, "demo-dio         R", "biotop");
	free(top);
	free(out);
	e2e_dir_teardown();
}
