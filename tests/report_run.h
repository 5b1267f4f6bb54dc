/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the report test files (header-only: tests/util_*.c are linked
 * into every test binary, and these need the report library).
 */
#ifndef STKREC_TESTS_REPORT_RUN_H
#define STKREC_TESTS_REPORT_RUN_H

#include <criterion/criterion.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "report/filter.h"
#include "report/model.h"
#include "report/resolve.h"
#include "report/views.h"
#include "tests/util_report.h"

typedef int (*view_fn)(struct report_ctx *ctx, FILE *out);

static char *cap_path;
static struct model *model;

static inline void setup(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	cap_path = rc_tmpname("test");
	cr_assert_not_null(cap_path);
	cr_assert_eq(rc_write_scene(cap_path, NULL), 0);
	cr_assert_eq(model__load(cap_path, &model), 0);
}

static inline void teardown(void)
{
	model__free(model);
	unlink(cap_path);
	free(cap_path);
}

/* Run a view with filter f (bound here; NULL: none), options o and symbol
 * options so (NULL: the defaults) into out. */
static inline void run_into(view_fn fn, struct filter *f, const struct report_opts *o,
			    const struct symbolizer_opts *so, FILE *out)
{
	struct report_ctx ctx = { .model = model, .filter = f };
	struct filter none = { 0 };

	if (!f)
		ctx.filter = f = &none;
	if (o)
		ctx.opts = *o;
	cr_assert_eq(filter__bind(f, model), 0);
	cr_assert_eq(resolver__new(model, so, &ctx.res), 0);
	cr_assert_eq(fn(&ctx, out), 0);
	resolver__free(ctx.res);
	if (f == &none)
		filter__free(&none);
}

/* Run a view with filter f (bound here) and options o; output as a string. */
static inline char *run(view_fn fn, struct filter *f, const struct report_opts *o)
{
	FILE *out = tmpfile();
	char *buf;
	long len;

	cr_assert_not_null(out);
	run_into(fn, f, o, NULL, out);
	len = ftell(out);
	buf = malloc(len + 1);
	cr_assert(len >= 0 && buf);
	rewind(out);
	cr_assert_eq(fread(buf, 1, len, out), (size_t)len);
	buf[len] = '\0';
	fclose(out);
	return buf;
}

static inline void golden(const char *name, const char *got)
{
	const char *src = getenv("STKREC_SRCDIR");
	char path[512], *want;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/golden/%s", src ? src : ".", name);
	if (getenv("STKREC_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		cr_assert_not_null(f, "cannot write %s", path);
		fputs(got, f);
		fclose(f);
	}
	want = rc_slurp(path, NULL);
	cr_assert_not_null(want, "missing golden file %s", path);
	cr_assert_str_eq(got, want, "%s differs:\n--- got\n%s", name, got);
	free(want);
}

/* Every folded line: frames without spaces-only names, then one number. */
static inline void check_folded_format(const char *text)
{
	regex_t re;
	const char *p = text;
	char line[4096];

	cr_assert_eq(regcomp(&re, "^[^; ][^;]*(;[^;]+)* [0-9]+$", REG_EXTENDED | REG_NOSUB), 0);
	while (*p) {
		size_t n = strcspn(p, "\n");

		cr_assert_lt(n, sizeof(line));
		memcpy(line, p, n);
		line[n] = '\0';
		cr_assert_eq(regexec(&re, line, 0, NULL, 0), 0, "bad folded line: %s", line);
		p += n + (p[n] == '\n');
	}
	regfree(&re);
}

static inline int strcount(const char *s, char c)
{
	int n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/* stdout and stderr of "stkrec ARGS" ($STKREC, default build/stkrec; the
 * test skips without it); the exit status in *status. */
static inline char *cli_raw(const char *args, int *status)
{
	const char *bin = getenv("STKREC") ? getenv("STKREC") : "build/stkrec";
	char cmd[2048], *buf = NULL;
	size_t len = 0;
	FILE *p, *mem;
	int c;

	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	snprintf(cmd, sizeof(cmd), "TZ=UTC %s %s 2>&1", bin, args);
	p = popen(cmd, "r");
	mem = open_memstream(&buf, &len);
	cr_assert(p && mem);
	while ((c = fgetc(p)) != EOF)
		fputc(c, mem);
	fclose(mem);
	c = pclose(p);
	*status = WIFEXITED(c) ? WEXITSTATUS(c) : -1;
	return buf;
}

/* The same of "stkrec ARGS -i CAPTURE", the suite's capture. */
static inline char *cli(const char *args, int *status)
{
	char full[1024];

	snprintf(full, sizeof(full), "%s -i %s", args, cap_path);
	return cli_raw(full, status);
}

/* The lines of s starting with prefix, concatenated. */
static inline char *lines_with(const char *s, const char *prefix)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	const char *p = s, *e;

	cr_assert_not_null(mem);
	for (; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		if (!strncmp(p, prefix, strlen(prefix)))
			fprintf(mem, "%.*s\n", (int)(e - p), p);
	}
	fclose(mem);
	return buf;
}

#endif /* STKREC_TESTS_REPORT_RUN_H */
