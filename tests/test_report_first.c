// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The first screen of `stkrec report` on a whole-system recording, as a
 * user runs it: the application's waits lead, kernel threads idle
 * throughout the recording are one line after the table (counted here
 * from `stkrec script` and checked against /proc), -k lists them, the
 * other views keep them; the header is short by default, whole with
 * --header or -v.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include "tests/e2e_dir.h"

#define NSLEEPERS 4
#define MAX_IDLE 4096 /* kernel threads */

TestSuite(report_first, .timeout = 120);

struct idle {
	uint32_t tid[MAX_IDLE];
	char comm[MAX_IDLE][64];
	int n;
};

/* One `script` line "COMM PID/TID [CPU] SECONDS: offcpu: US us state 0xS
 * open:both": a kernel thread idle throughout (the README's rule) adds its
 * tid once. */
static void idle_of_line(const char *line, struct idle *in)
{
	const char *p = strstr(line, ": offcpu: "), *st = strstr(line, " state 0x"), *id;
	unsigned long state;
	unsigned pid, tid;
	int i, len;

	if (!p || !st || !strstr(line, " open:both"))
		return;
	state = strtoul(st + 9, NULL, 16);
	if (!(state & 0x401)) /* TASK_INTERRUPTIBLE | TASK_NOLOAD */
		return;
	/* the "PID/TID" field: the last one before ": offcpu:" with a '/' */
	for (id = p; id > line && !(isdigit((unsigned char)id[0]) && id[-1] == ' ' &&
				     sscanf(id, "%u/%u", &pid, &tid) == 2);
	     id--)
		;
	cr_assert(id > line, "no PID/TID in: %s", line);
	for (i = 0; i < in->n; i++)
		if (in->tid[i] == tid)
			return;
	cr_assert_lt(in->n, MAX_IDLE);
	while (*line == ' ') /* the comm, padded */
		line++;
	for (len = id - line; len > 0 && line[len - 1] == ' '; len--)
		;
	snprintf(in->comm[in->n], sizeof(in->comm[0]), "%.*s", len, line);
	in->tid[in->n++] = tid;
}

/* A kernel thread by the kernel's own word (PF_KTHREAD in /proc/TID/stat),
 * or gone since. */
static bool kthread_or_gone(uint32_t tid)
{
	char path[64], buf[1024], *p;
	unsigned long flags;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return true;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	cr_assert_not_null(p);
	for (i = 0; i < 7 && p; i++) /* state ppid pgrp session tty tpgid flags */
		p = strchr(p + 1, ' ');
	cr_assert_not_null(p);
	flags = strtoul(p + 1, NULL, 10);
	return flags & 0x00200000;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

/* The off-CPU table's rows of a default report, in order. */
static int table_rows(char *text, char **rows, int max)
{
	char *p = strstr(text, "of event 'offcpu'"), *save = NULL, *line;
	int n = 0;

	cr_assert_not_null(p, "no off-CPU table:\n%s", text);
	for (line = strtok_r(p, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save))
		if (line[0] != '#' && strchr(line, '%'))
			rows[n++] = line;
	return n;
}

/* `record -a -d 2` while NSLEEPERS sleepers, started before it (one
 * thread each, "sleeper-nap" in sleeper_nap()), nap 100 ms at a time:
 * their one row weighs NSLEEPERS times the recording, more than any one
 * thread's waits can. (A recording of a command starts with it, and has
 * no wait open at its start: hence no command here.) */
static void record_whole_system(void)
{
	char sleeper[PATH_MAX];

	rl_need_bpf();
	rl_workload("sleeper", sleeper);
	e2e_dir_setup("first");
	sh("for i in $(seq %d); do %s 8000 100 >/dev/null & echo $! >> sleepers; done", NSLEEPERS,
	   sleeper);
	free(record("-a -q -d 2 --call-graph fp -e offcpu -o a.cap"));
	sh("kill $(cat sleepers)");
}

/* The kernel threads idle throughout a.cap, from `script -k`. */
static void idle_from_script(struct idle *in)
{
	char *out = view("script -k -e offcpu -i a.cap", NULL), *line, *save = NULL;

	in->n = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		idle_of_line(line, in);
	free(out);
}

Test(report_first, idle_kernel_threads_one_line_after_the_application)
{
	static struct idle in;
	static char *rows[16384];
	char *out, *copy, *folded, want[128], pat[96];
	const char *sum;
	int n, i, j, first_kthread;

	record_whole_system();
	idle_from_script(&in);
	cr_assert_gt(in.n, 0, "no kernel thread idle throughout: nothing to test");
	for (i = 0; i < in.n; i++)
		cr_expect(kthread_or_gone(in.tid[i]), "%s (%u) is not a kernel thread",
			  in.comm[i], in.tid[i]);

	out = view("report -e offcpu -i a.cap", NULL);
	snprintf(want, sizeof(want), "#\n# %d kernel thread%s idle throughout the recording, "
		 "not in this table: -k lists %s\n", in.n, in.n == 1 ? "" : "s",
		 in.n == 1 ? "it" : "them");
	sum = strstr(out, want);
	cr_assert_not_null(sum, "no '%s' in:\n%s", want, out);
	cr_expect_str_eq(sum, want, "the summary is not the last line");
	copy = strdup(out);
	n = table_rows(out, rows, 16384);
	for (first_kthread = 0; first_kthread < n; first_kthread++)
		if (strstr(rows[first_kthread], "[kernel thread]"))
			break;
	/* the workload's row (its naps; not its few preemptions) */
	for (i = 0; i < n; i++)
		if (strstr(rows[i], "sleeper-nap") && strstr(rows[i], "[k] hrtimer_nanosleep ") &&
		    strstr(rows[i], "[.] sleeper_"))
			break;
	cr_assert_lt(i, n, "no row of the sleepers' naps:\n%s", copy);
	cr_expect_lt(i, first_kthread, "the workload's row %d after a kernel thread's (row %d: "
		     "%s): %s", i, first_kthread, rows[first_kthread], rows[i]);
	free(copy);
	free(out);

	/* -k lists every one, with no user column and no summary; the folded
	 * stacks keep them */
	out = view("report -k -e offcpu -i a.cap", NULL);
	cr_expect_null(strstr(out, "idle throughout"), "-k lists, it does not count:\n%s", out);
	folded = view("report --folded -i a.cap", NULL);
	n = table_rows(out, rows, 16384);
	for (j = 0; j < n; j++)
		cr_expect(ends_with(rows[j], "  [kernel thread]"), "-k row: %s", rows[j]);
	for (i = 0; i < in.n; i++) {
		for (j = 0; j < n; j++) /* "  COMM  " in a row of -k */
			if (strstr(rows[j], in.comm[i]) && strstr(rows[j], "[kernel thread]"))
				break;
		cr_expect_lt(j, n, "-k has no row of %s (%u)", in.comm[i], in.tid[i]);
		snprintf(pat, sizeof(pat), "\n%s;", in.comm[i]);
		cr_expect(strstr(folded, pat) || !strncmp(folded, pat + 1, strlen(pat + 1)),
			  "--folded has no stack of %s", in.comm[i]);
	}
	free(out);
	free(folded);
	e2e_dir_teardown();
}

/* The default header: 5 lines between the rules, the counters only with
 * --header and -v. */
Test(report_first, header_short_by_default_whole_with_header_or_v)
{
	char sleeper[PATH_MAX], args[PATH_MAX + 128], *out, *full, *v, *p, *end;
	struct res r;
	int lines = 0;

	rl_need_bpf();
	rl_workload("sleeper", sleeper);
	e2e_dir_setup("header");
	snprintf(args, sizeof(args), "-q --call-graph fp -e offcpu -o a.cap -- %s 200 10", sleeper);
	free(record(args));
	out = view("report -e offcpu -i a.cap", NULL);
	cr_assert(!strncmp(out, "# ========\n", 11), "%s", out);
	end = strstr(out + 11, "# ========\n");
	cr_assert_not_null(end);
	for (p = out + 11; p < end; p = strchr(p, '\n') + 1)
		lines++;
	cr_expect_eq(lines, 5, "header:\n%.*s", (int)(end - out), out);
	cr_expect(!strncmp(out + 11, "# captured on    : ", 19), "%s", out);
	cr_expect(strstr(out, "\n# cmdline        : stkrec record -q --call-graph fp -e "
			      "offcpu -o a.cap -- "), "%s", out);
	cr_expect(strstr(out, "\n# duration       : "));
	cr_expect(strstr(out, "\n# events         : offcpu "));
	cr_expect(strstr(out, "\n# unwinding      : fp (frame pointers)\n# ========\n"), "%s", out);
	cr_expect_null(strstr(out, "recorder stats"));
	cr_expect_null(strstr(out, "# hostname"));

	full = view("report --header -e offcpu -i a.cap", NULL);
	v = view("report -v -e offcpu -i a.cap", NULL);
	cr_expect_str_eq(v, full, "-v prints the header --header does");
	expect_has(full, "\n# recorder stats : events.offcpu ", "--header");
	expect_has(full, " unwind.files ", "--header");
	expect_has(full, "\n# hostname       : ", "--header");
	expect_has(full, "\n# stkrec version : ", "--header");
	expect_has(full, "\n# unwinding      : fp (frame pointers)\n", "--header");
	/* the tables are the same */
	cr_expect_str_eq(strstr(full, "\n#\n# Samples:"), strstr(out, "\n#\n# Samples:"));
	free(out);
	free(full);
	free(v);
	r = stkrec("report --header --folded -i a.cap");
	cr_expect_eq(r.code, 2);
	expect_has(r.err, "--header applies to the default view only", "--header --folded");
	res_free(&r);
	e2e_dir_teardown();
}
