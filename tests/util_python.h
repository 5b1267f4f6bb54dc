/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CPython interpreters the Python tests run: Debian's python3.11 and
 * each pyenv build of 3.8 to 3.13 present. A test takes them by index and
 * skips, with the reason, where one is absent.
 */
#ifndef STKREC_TESTS_UTIL_PYTHON_H
#define STKREC_TESTS_UTIL_PYTHON_H

#include <stdbool.h>

struct test_python {
	const char *name;   /* "debian-3.11", "pyenv-3.8", ... */
	int major, minor;
	char path[700];     /* the interpreter, "" when absent */
	char why[1024];     /* why it is absent */
};

#define TEST_PYTHONS 7 /* debian-3.11, pyenv-3.8 ... pyenv-3.13 */

/* Interpreter i (0 .. TEST_PYTHONS-1): found or not (why says why). */
const struct test_python *test_python(int i);
/* The interpreter i, or a Criterion skip naming why it is absent. */
const struct test_python *test_python_or_skip(int i);

/* pyenv's newest build of major.minor, one the tests do not run (3.6,
 * 3.7: versions python/ does not read); out->path "" (why says why) when
 * absent. */
void test_python_pyenv(int major, int minor, struct test_python *out);

/* Test(suite, NAME, ...) calling fn(i) for each interpreter i, named as
 * test_python(i) names it ("pyenv-3.8": pyenv_3_8); the rest are Test()'s
 * options (.timeout = 180). */
#define TEST_PER_PYTHON(suite, fn, ...)                                              \
	Test(suite, debian_3_11, ##__VA_ARGS__) { fn(0); }                           \
	Test(suite, pyenv_3_8, ##__VA_ARGS__) { fn(1); }                             \
	Test(suite, pyenv_3_9, ##__VA_ARGS__) { fn(2); }                             \
	Test(suite, pyenv_3_10, ##__VA_ARGS__) { fn(3); }                            \
	Test(suite, pyenv_3_11, ##__VA_ARGS__) { fn(4); }                            \
	Test(suite, pyenv_3_12, ##__VA_ARGS__) { fn(5); }                            \
	Test(suite, pyenv_3_13, ##__VA_ARGS__) { fn(6); }

#endif /* STKREC_TESTS_UTIL_PYTHON_H */
