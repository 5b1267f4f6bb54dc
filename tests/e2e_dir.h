/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the end-to-end test files that run the stkrec binary in a
 * directory of their own (header-only, as reliability_run.h): the
 * directory, stkrec and shell commands run there, the workloads copied in.
 */
#ifndef STKREC_TESTS_E2E_DIR_H
#define STKREC_TESTS_E2E_DIR_H

#include <glob.h>
#include <stdarg.h>
#include "format/capture.h"
#include "tests/reliability_run.h"
#include "tests/util_report.h"

static char dir[64]; /* /tmp/stkrec-TAG-XXXXXX */

/* A new directory /tmp/stkrec-TAG-XXXXXX, with bin/ and empty/ in it. */
static inline void e2e_dir_setup(const char *tag)
{
	char cmd[PATH_MAX];

	snprintf(dir, sizeof(dir), "/tmp/stkrec-%s-XXXXXX", tag);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bin %s/empty", dir, dir);
	cr_assert_eq(system(cmd), 0);
}

static inline void e2e_dir_teardown(void)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

struct res {
	int code;
	char *out;
	char *err;
};

/* `cd DIR && stkrec ARGS`: exit code, whole stdout and stderr. */
static inline struct res stkrec(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline struct res stkrec(const char *fmt, ...)
{
	char args[2048], cmd[4096];
	struct res r;
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd %s && %s %s >%s/out 2>%s/err", dir, rl_stkrec(), args,
		 dir, dir);
	st = system(cmd);
	r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	snprintf(cmd, sizeof(cmd), "%s/out", dir);
	r.out = rc_slurp(cmd, NULL);
	snprintf(cmd, sizeof(cmd), "%s/err", dir);
	r.err = rc_slurp(cmd, NULL);
	cr_assert(r.out && r.err);
	return r;
}

static inline void res_free(struct res *r)
{
	free(r->out);
	free(r->err);
}

static inline void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "cd %s && ", dir);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The workload `name` copied to DIR/bin/as. */
static inline void workload(const char *name, const char *as)
{
	char path[PATH_MAX];

	rl_workload(name, path);
	sh("cp %s bin/%s", path, as);
}

/* stkrec record ARGS must succeed; its stdout (the workload's) returned. */
static inline char *record(const char *args)
{
	struct res r;

	rl_need_bpf();
	r = stkrec("record %s", args);
	cr_assert_eq(r.code, 0, "record %s: %s", args, r.err);
	free(r.err);
	return r.out;
}

/* stkrec ARGS: exit 0, its stdout. */
static inline char *view(const char *args, const char *symfs)
{
	struct res r = stkrec("%s%s", args, symfs ? " --symfs empty" : "");

	cr_assert_eq(r.code, 0, "%s: exit %d: %s", args, r.code, r.err);
	free(r.err);
	return r.out;
}

static inline void expect_has(const char *text, const char *what, const char *where)
{
	cr_expect(strstr(text, what), "%s: no '%s' in:\n%s", where, what, text);
}

#endif /* STKREC_TESTS_E2E_DIR_H */
