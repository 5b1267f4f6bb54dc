// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tests/util_python.h"

static struct test_python pythons[TEST_PYTHONS];
static bool looked;

/* pyenv's root: $PYENV_ROOT, else ~/.pyenv. */
static const char *pyenv_root(char *buf, size_t len)
{
	const char *r = getenv("PYENV_ROOT");
	const char *home = getenv("HOME");

	if (r && *r)
		return r;
	snprintf(buf, len, "%s/.pyenv", home && *home ? home : "/root");
	return buf;
}

/* The newest pyenv build of major.minor (versions/M.N.P/bin/pythonM.N). */
static void find_pyenv(struct test_python *p)
{
	char root[256], dir[300], best[300] = "";
	struct dirent *d;
	DIR *dp;
	int n = snprintf(best, sizeof(best), "%d.%d.", p->major, p->minor);

	snprintf(dir, sizeof(dir), "%s/versions", pyenv_root(root, sizeof(root)));
	dp = opendir(dir);
	if (!dp) {
		snprintf(p->why, sizeof(p->why), "no pyenv here (%s)", dir);
		return;
	}
	best[0] = 0;
	while ((d = readdir(dp))) {
		char want[16];
		int patch, best_patch = -1;

		snprintf(want, sizeof(want), "%d.%d.", p->major, p->minor);
		if (strncmp(d->d_name, want, n) || sscanf(d->d_name + n, "%d", &patch) != 1)
			continue;
		if (best[0])
			sscanf(best + n, "%d", &best_patch);
		if (patch > best_patch)
			snprintf(best, sizeof(best), "%s", d->d_name);
	}
	closedir(dp);
	if (!best[0]) {
		snprintf(p->why, sizeof(p->why), "pyenv has no %d.%d build in %s", p->major,
			 p->minor, dir);
		return;
	}
	snprintf(p->path, sizeof(p->path), "%s/%s/bin/python%d.%d", dir, best, p->major, p->minor);
	if (access(p->path, X_OK)) {
		snprintf(p->why, sizeof(p->why), "%s is not executable", p->path);
		p->path[0] = 0;
	}
}

static void look(void)
{
	static const char *names[TEST_PYTHONS] = {
		"debian-3.11", "pyenv-3.8", "pyenv-3.9", "pyenv-3.10",
		"pyenv-3.11", "pyenv-3.12", "pyenv-3.13",
	};
	int i;

	for (i = 0; i < TEST_PYTHONS; i++) {
		struct test_python *p = &pythons[i];

		p->name = names[i];
		p->major = 3;
		p->minor = i ? 7 + i : 11;
		if (i) {
			find_pyenv(p);
		} else if (!access("/usr/bin/python3.11", X_OK)) {
			snprintf(p->path, sizeof(p->path), "/usr/bin/python3.11");
		} else {
			snprintf(p->why, sizeof(p->why),
				 "no /usr/bin/python3.11 (Debian's python3.11 package)");
		}
	}
	looked = true;
}

const struct test_python *test_python(int i)
{
	if (!looked)
		look();
	return i >= 0 && i < TEST_PYTHONS ? &pythons[i] : NULL;
}

const struct test_python *test_python_or_skip(int i)
{
	const struct test_python *p = test_python(i);

	if (!p)
		cr_assert_fail("no test python %d", i);
	if (!p->path[0])
		cr_skip_test("%s: %s", p->name, p->why);
	return p;
}

void test_python_pyenv(int major, int minor, struct test_python *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "pyenv";
	out->major = major;
	out->minor = minor;
	find_pyenv(out);
}
