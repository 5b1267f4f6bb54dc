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

#endif /* STKREC_TESTS_REPORT_RUN_H */
