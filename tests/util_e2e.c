// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <criterion/criterion.h>
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/util_e2e.h"
#include "tests/util_report.h"

#define CHROMIUM "/usr/bin/chromium"

const char *e2e_env(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

int e2e_shell(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	cr_assert_geq(st, 0);
	st = system(cmd);
	free(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool e2e_have(const char *cmd)
{
	return e2e_shell("command -v %s >/dev/null 2>&1", cmd) == 0;
}

void e2e_record(const char *bin, const char *cap, const char *ropts, const char *launcher,
		const char *name, const char *args, const char *out_path)
{
	char rel[PATH_MAX], wl[PATH_MAX], *err_path, *err;
	int st;

	if (geteuid() != 0)
		cr_skip_test("recording needs root");
	if (access(bin, X_OK))
		cr_skip_test("no stkrec binary at %s", bin);
	snprintf(rel, sizeof(rel), "%s/%s", e2e_env("STKREC_WORKLOADS", "build/workloads"), name);
	if (!realpath(rel, wl))
		cr_skip_test("workload %s not built (make test-build)", rel);
	err_path = rc_tmpname("e2e-err");
	cr_assert_not_null(err_path);
	st = e2e_shell("%s record -o %s %s -- %s %s %s >%s 2>%s", bin, cap, ropts, launcher, wl,
		       args, out_path, err_path);
	err = rc_slurp(err_path, NULL);
	unlink(err_path);
	free(err_path);
	if (st == 1 && err && (strstr(err, "cannot load the BPF") || strstr(err, "has no BTF")))
		cr_skip_test("BPF cannot load here: %s", err);
	cr_assert_eq(st, 0, "record failed: %s", err ? err : "");
	free(err);
}

long long e2e_value_of(const char *text, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", key);
	p = strstr(text, pat);
	cr_assert_not_null(p, "no %s in '%s'", key, text);
	return atoll(p + strlen(pat));
}

long e2e_readme_count(const char *phrase)
{
	char path[PATH_MAX], *text, *hit, *p;
	long n = 0, scale = 1;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/README.md", e2e_env("STKREC_SRCDIR", "."));
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s (STKREC_SRCDIR?)", path);
	text = calloc(1, 1 << 20);
	cr_assert_not_null(text);
	len = fread(text, 1, (1 << 20) - 1, f);
	fclose(f);
	cr_assert_lt(len, (1 << 20) - 1, "%s: over 1 MiB", path);
	hit = strstr(text, phrase);
	cr_assert_not_null(hit, "%s: no '%s'", path, phrase);
	cr_assert_null(strstr(hit + 1, phrase), "%s: '%s' more than once", path, phrase);
	for (p = hit - 1; p >= text && (isdigit((unsigned char)*p) || *p == ','); p--) {
		if (*p == ',')
			continue;
		n += (*p - '0') * scale;
		scale *= 10;
	}
	cr_assert_gt(scale, 1, "%s: no number before '%s'", path, phrase);
	free(text);
	return n;
}

const char *e2e_browser_dir(void)
{
	static char dir[PATH_MAX];

	if (access(CHROMIUM, X_OK) != 0)
		cr_skip_test("chromium not installed (Debian package chromium)");
	if (!e2e_have("node"))
		cr_skip_test("node not installed (Debian package nodejs)");
	snprintf(dir, sizeof(dir), "%s/tests/browser", e2e_env("STKREC_SRCDIR", "."));
	/* node_modules is not committed: install the locked packages once */
	if (e2e_shell("test -d '%s/node_modules/playwright-core' -a "
		      "-d '%s/node_modules/speedscope'", dir, dir) == 0)
		return dir;
	if (!e2e_have("npm"))
		cr_skip_test("npm not installed: cannot install tests/browser's packages");
	cr_assert_eq(e2e_shell("npm ci --prefix '%s' --no-audit --no-fund >/dev/null 2>&1", dir),
		     0, "npm ci in %s failed", dir);
	return dir;
}
