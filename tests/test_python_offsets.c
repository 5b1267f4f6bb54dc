// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python/ on interpreter files: which are CPython and of which version,
 * where their offsets come from, the table pinned field by field against
 * DWARF (and 3.13's _Py_DebugOffsets against DWARF too), the eval
 * function's ranges, and the files refused (not CPython, a version not
 * read).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "python/python.h"
#include "tests/util_e2e.h"
#include "tests/util_python.h"

/* The file of interpreter tp that holds CPython: pyenv's libpythonX.Y.so.1.0
 * beside its bin/, Debian's python3.11 itself. */
static void interp_file(const struct test_python *tp, const char *abi, char *out, size_t len)
{
	char bin[sizeof(tp->path)];

	if (strncmp(tp->name, "pyenv", 5)) {
		snprintf(out, len, "%s", tp->path);
		return;
	}
	snprintf(bin, sizeof(bin), "%s", tp->path);
	snprintf(out, len, "%s/lib/libpython%d.%d%s.so.1.0", dirname(dirname(bin)), tp->major,
		 tp->minor, abi);
}

static struct py_interp *open_from(const char *path, enum py_source src, int *err)
{
	struct py_opts o = { .sources = 1u << src };
	struct py_interp *pi = NULL;

	*err = py_interp__open(path, &o, &pi, NULL);
	return pi;
}

/* Every field of a and b equal, named in the message. */
static void expect_same(const struct py_offsets *a, const struct py_offsets *b, const char *what)
{
	const char *name;
	uint16_t va, vb;
	int i;

	for (i = 0; !py_offsets__field(a, i, &name, &va); i++) {
		py_offsets__field(b, i, &name, &vb);
		cr_expect_eq(va, vb, "%s: %s: %d vs %d", what, name, va == STKREC_PY_NONE ? -1 : va,
			     vb == STKREC_PY_NONE ? -1 : vb);
	}
	cr_assert_gt(i, 20, "py_offsets__field named %d fields", i);
}

static int all_pythons[TEST_PYTHONS] = { 0, 1, 2, 3, 4, 5, 6 };

ParameterizedTestParameters(python_offsets, table_is_dwarf)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

/* The table as the DWARF of the build says, field by field. */
ParameterizedTest(int *i, python_offsets, table_is_dwarf)
{
	const struct test_python *tp = test_python_or_skip(*i);
	struct py_interp *dw, *tab;
	char path[PATH_MAX], what[PATH_MAX + 64];
	int err;

	interp_file(tp, "", path, sizeof(path));
	dw = open_from(path, PY_SRC_DWARF, &err);
	if (err == -ENOENT && *i == 0)
		cr_skip_test("%s: no DWARF for %s: the python3.11-dbg of its very version "
			     "(make deps) has it", tp->name, path);
	cr_assert_eq(err, 0, "%s: DWARF of %s: %s", tp->name, path, strerror(-err));
	tab = open_from(path, PY_SRC_TABLE, &err);
	cr_assert_eq(err, 0, "%s: table for %s: %s", tp->name, path, strerror(-err));
	cr_assert_eq(py_interp__source(dw), PY_SRC_DWARF);
	cr_assert_eq(py_interp__source(tab), PY_SRC_TABLE);
	snprintf(what, sizeof(what), "%s (%s): table vs DWARF", tp->name, path);
	expect_same(py_interp__offsets(tab), py_interp__offsets(dw), what);
	py_interp__free(dw);
	py_interp__free(tab);
}

Test(python_offsets, debug_offsets_are_dwarf)
{
	const struct test_python *tp = test_python_or_skip(6);
	struct py_interp *dw, *dbg;
	char path[PATH_MAX];
	int err;

	interp_file(tp, "", path, sizeof(path));
	dbg = open_from(path, PY_SRC_DEBUG_OFFSETS, &err);
	cr_assert_eq(err, 0, "%s: _Py_DebugOffsets of %s: %s", tp->name, path, strerror(-err));
	dw = open_from(path, PY_SRC_DWARF, &err);
	cr_assert_eq(err, 0, "%s: DWARF of %s: %s", tp->name, path, strerror(-err));
	expect_same(py_interp__offsets(dbg), py_interp__offsets(dw),
		    "3.13: _Py_DebugOffsets vs DWARF");
	py_interp__free(dw);
	py_interp__free(dbg);
}

ParameterizedTestParameters(python_offsets, default_source)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

/*
 * All sources allowed: 3.13 gives its _Py_DebugOffsets, pyenv's builds
 * their DWARF, Debian's stripped python3.11 its debug file's DWARF or the
 * table. The version is the file's; the BPF side gets the version's ways.
 */
ParameterizedTest(int *i, python_offsets, default_source)
{
	const struct test_python *tp = test_python_or_skip(*i);
	struct py_interp *pi = NULL, *dw;
	struct stkrec_pyproc pp;
	struct py_version v;
	char path[PATH_MAX];
	enum py_source want;
	int err;

	interp_file(tp, "", path, sizeof(path));
	err = py_interp__open(path, NULL, &pi, &v);
	cr_assert_eq(err, 0, "%s: %s: %s", tp->name, path, strerror(-err));
	cr_assert(v.major == 3 && v.minor == tp->minor, "%s: version %d.%d", tp->name, v.major,
		  v.minor);
	cr_assert_eq(v.hex != 0, tp->minor >= 11, "%s: Py_Version %#x", tp->name, v.hex);
	dw = open_from(path, PY_SRC_DWARF, &err);
	want = tp->minor == 13 ? PY_SRC_DEBUG_OFFSETS : dw ? PY_SRC_DWARF : PY_SRC_TABLE;
	cr_assert_eq(py_interp__source(pi), want, "%s: source %s", tp->name,
		     py_source_name(py_interp__source(pi)));
	py_interp__pyproc(pi, 0x10000, &pp);
	cr_assert_eq(pp.runtime, py_interp__addrs(pi)->runtime + 0x10000);
	cr_assert_eq(pp.tid_kind, tp->minor >= 11 ? STKREC_PY_TID_NATIVE : STKREC_PY_TID_PTHREAD);
	cr_assert_eq(pp.instr_kind, tp->minor >= 11 ? STKREC_PY_INSTR_PTR : STKREC_PY_INSTR_INT);
	cr_assert_eq(pp.entry_kind, tp->minor >= 12 ? STKREC_PY_ENTRY_SHIM
				    : tp->minor == 11 ? STKREC_PY_ENTRY_FLAG
						      : STKREC_PY_ENTRY_EACH);
	cr_assert_eq(pp.cf_frame == STKREC_PY_NONE, tp->minor < 11 || tp->minor > 12);
	cr_assert_eq(pp.fr_entry == STKREC_PY_NONE, tp->minor < 11);
	py_interp__free(dw);
	py_interp__free(pi);
}

ParameterizedTestParameters(python_offsets, eval_ranges)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

/* _PyEval_EvalFrameDefault's range, and its .cold part where the
 * .symtab has one (pyenv's 3.11 and 3.12 builds do). */
ParameterizedTest(int *i, python_offsets, eval_ranges)
{
	const struct test_python *tp = test_python_or_skip(*i);
	struct py_range r[PY_EVAL_RANGES];
	struct py_interp *pi = NULL;
	char path[PATH_MAX];
	int n;

	interp_file(tp, "", path, sizeof(path));
	cr_assert_eq(py_interp__open(path, NULL, &pi, NULL), 0, "%s", path);
	n = py_interp__eval_ranges(pi, r);
	cr_assert(n == 1 || n == 2, "%s: %d ranges", tp->name, n);
	cr_assert_lt(r[0].start, r[0].end);
	cr_assert_gt(r[0].end - r[0].start, 4096, "%s: the eval loop is larger", tp->name);
	if (*i == 4 || *i == 5)
		cr_assert_eq(n, 2, "%s: no _PyEval_EvalFrameDefault.cold", tp->name);
	if (n == 2)
		cr_assert(r[1].start < r[1].end &&
				  (r[1].end <= r[0].start || r[1].start >= r[0].end),
			  "%s: .cold %#lx-%#lx", tp->name, (unsigned long)r[1].start,
			  (unsigned long)r[1].end);
	py_interp__free(pi);
}

/* Not CPython: a shell, a text file, pyenv's bin/python3.8 (which links
 * libpython3.8.so, where CPython is), a missing file. */
Test(python_offsets, not_cpython)
{
	const struct test_python *tp = test_python(1);
	struct py_interp *pi = (void *)1;
	char script[PATH_MAX];

	cr_assert_eq(py_interp__open("/bin/sh", NULL, &pi, NULL), PY_ENOTPY);
	cr_assert_null(pi);
	snprintf(script, sizeof(script), "%s/tests/workloads/py/frames.py",
		 e2e_env("STKREC_SRCDIR", "."));
	cr_assert_eq(py_interp__open(script, NULL, &pi, NULL), -ENOEXEC, "%s", script);
	cr_assert_eq(py_interp__open("/nonexistent/python3.11", NULL, &pi, NULL), -ENOENT);
	if (tp->path[0])
		cr_assert_eq(py_interp__open(tp->path, NULL, &pi, NULL), PY_ENOTPY, "%s", tp->path);
	else
		cr_log_warn("%s: %s", tp->name, tp->why);
}

/* CPython 3.7 and 3.6 (pyenv's): PY_EVERSION, with the version. */
static void unsupported(int minor)
{
	struct py_version v = { 0 };
	struct test_python tp;
	struct py_interp *pi;
	char path[PATH_MAX];

	test_python_pyenv(3, minor, &tp);
	if (!tp.path[0])
		cr_skip_test("%s", tp.why);
	interp_file(&tp, "m", path, sizeof(path));
	cr_assert_eq(py_interp__open(path, NULL, &pi, &v), PY_EVERSION, "%s", path);
	cr_assert(v.major == 3 && v.minor == minor, "%s: %d.%d", path, v.major, v.minor);
	cr_assert_eq(py_interp__open(tp.path, NULL, &pi, &v), PY_ENOTPY, "%s", tp.path);
}

Test(python_offsets, cpython_3_7_refused)
{
	unsupported(7);
}

Test(python_offsets, cpython_3_6_refused)
{
	unsupported(6);
}

Test(python_offsets, name_version)
{
	static const struct {
		const char *path;
		int major, minor; /* 0: not a CPython name */
	} cases[] = {
		{ "/usr/bin/python3.11", 3, 11 },
		{ "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", 3, 11 },
		{ "/root/.pyenv/versions/3.7.16/lib/libpython3.7m.so.1.0", 3, 7 },
		{ "python3.10", 3, 10 },
		{ "python3.13t", 3, 13 },
		{ "python3.11d", 3, 11 },
		{ "libpython2.7.so", 2, 7 },
		{ "/usr/bin/python3", 0, 0 },
		{ "/usr/bin/python", 0, 0 },
		{ "libpython3.so", 0, 0 },
		{ "/opt/mypython3.11", 0, 0 },
		{ "/usr/lib/python3.11/lib-dynload/x.so", 0, 0 },
		{ "python3.", 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct py_version v = { 0 };
		bool named = py_name_version(cases[i].path, &v);

		cr_expect_eq(named, cases[i].major != 0, "%s", cases[i].path);
		if (named)
			cr_expect(v.major == cases[i].major && v.minor == cases[i].minor,
				  "%s: %d.%d", cases[i].path, v.major, v.minor);
	}
}
