// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python/ on live interpreters: tests/workloads/py/frames.py runs on each
 * CPython present (Debian's python3.11, pyenv's 3.8-3.13); its threads and
 * frames are walked as the BPF walker will walk them (tests/util_pywalk.c,
 * through struct stkrec_pyproc alone) and each code object is read
 * through python/: each thread's innermost frames are named, with the
 * script's path and def lines, and their instruction offsets fall in
 * their code.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "python/python.h"
#include "tests/util_python.h"
#include "tests/util_pywalk.h"

struct walk_ctx {
	const struct test_python *tp;
	pid_t pid;
	struct pywalk_proc proc;
	struct stkrec_pyproc pp;
	char script[PATH_MAX];
};

/* One frame read back: its code object is the one walked (stamp), its
 * offset falls in its code. Returns its offset. */
static int32_t check_code(const struct walk_ctx *w, const struct pywalk_frame *f, const char *what,
			  struct py_code *c)
{
	int32_t off = 0;
	int err;

	err = py_interp__read_code(w->proc.pi, w->pid, w->proc.bias, f->code, c);
	cr_assert_eq(err, 0, "%s: %s: code object %#lx unread: %s", w->tp->name, what,
		     (unsigned long)f->code, strerror(-err));
	cr_assert_eq(c->stamp, f->stamp, "%s: %s (%s): stamp %#x, walked %#x", w->tp->name, what,
		     c->qualname, c->stamp, f->stamp);
	err = py_interp__offset(w->proc.pi, f->lasti, c->code_size, &off);
	cr_assert_eq(err, 0, "%s: %s (%s): lasti %u outside its %u bytes of code", w->tp->name,
		     what, c->qualname, f->lasti, c->code_size);
	return off;
}

/* The thread's two innermost frames are inner_fn then outer_fn of the
 * script, running, the first called_inline of them called by a Python
 * CALL (worker() is called by threading's Thread.run through
 * CALL_FUNCTION_EX, its own eval call in 3.11 and 3.12); every frame
 * walked reads back. */
static void check_thread(const struct walk_ctx *w, uint64_t key, const char *thread,
			 const char *inner_fn, const char *outer_fn, int called_inline)
{
	const char *want[2] = { inner_fn, outer_fn };
	struct pywalk_frame f[STKREC_MAX_PYSTACK];
	int n, k;

	n = pywalk_thread(w->pid, &w->pp, key, f, STKREC_MAX_PYSTACK);
	cr_assert_geq(n, 3, "%s: %s thread (key %#lx): %d frames", w->tp->name, thread,
		      (unsigned long)key, n);
	cr_assert(f[n - 1].entry, "%s: %s thread: outermost frame not an entry", w->tp->name,
		  thread);
	for (k = 0; k < n; k++) {
		char what[64], def[64];
		struct py_code c;
		int32_t off;

		snprintf(what, sizeof(what), "%s thread frame %d", thread, k);
		off = check_code(w, &f[k], what, &c);
		if (k < 2) {
			snprintf(def, sizeof(def), "def %s(", want[k]);
			cr_expect_str_eq(c.qualname, want[k], "%s: %s", w->tp->name, what);
			cr_expect_str_eq(c.filename, w->script, "%s: %s", w->tp->name, what);
			cr_expect_eq(c.firstlineno, pywalk_line_of(w->script, def), "%s: %s (%s)",
				     w->tp->name, what, c.qualname);
			cr_expect_geq(off, 0, "%s: %s (%s) not started", w->tp->name, what,
				      c.qualname);
			cr_expect_gt(c.linetable_len, 0, "%s: %s: no line table", w->tp->name,
				     what);
			/* from 3.11 a Python call runs in its caller's eval call */
			if (k < called_inline)
				cr_expect_eq(f[k].entry, w->tp->minor < 11, "%s: %s (%s): entry %d",
					     w->tp->name, what, c.qualname, f[k].entry);
		}
		py_code__release(&c);
	}
}

/* What a PyThreadState holds of the thread: its tid, or pthread_self(),
 * which must be the fs base the BPF walker reads. */
static uint64_t thread_key(const struct walk_ctx *w, pid_t tid, unsigned long long ident)
{
	uint64_t base = 0;
	int err;

	if (w->pp.tid_kind == STKREC_PY_TID_NATIVE)
		return tid;
	err = pywalk_fs_base(tid, &base);
	if (err == -EOPNOTSUPP)
		cr_skip_test("%s: pthread_self() is the fs base on x86-64 only", w->tp->name);
	cr_assert_eq(err, 0, "%s: fs base of %d: %s", w->tp->name, tid, strerror(-err));
	cr_assert_eq(base, ident, "%s: thread %d: fs base %#lx, get_ident() %#llx", w->tp->name,
		     tid, (unsigned long)base, ident);
	return base;
}

static void walk(int i)
{
	unsigned long long main_id, worker_id;
	struct walk_ctx w = { .tp = test_python_or_skip(i) };
	const struct py_version *v;
	int main_tid, worker_tid, err;
	uint64_t main_key, worker_key;
	char line[256];

	w.pid = pywalk_start(w.tp->path, "frames.py", w.script, sizeof(w.script), line,
			     sizeof(line), 120);
	cr_assert_eq(sscanf(line, "ready main=%llu:%d worker=%llu:%d", &main_id, &main_tid,
			    &worker_id, &worker_tid), 4, "%s: \"%s\"", w.tp->name, line);
	err = pywalk_attach(w.pid, &w.proc);
	cr_assert_eq(err, 0, "%s: no CPython found in the process: %s", w.tp->name, strerror(-err));
	v = py_interp__version(w.proc.pi);
	cr_assert(v->major == w.tp->major && v->minor == w.tp->minor, "%s: %s says %d.%d",
		  w.tp->name, w.proc.path, v->major, v->minor);
	py_interp__pyproc(w.proc.pi, w.proc.bias, &w.pp);
	main_key = thread_key(&w, main_tid, main_id);
	worker_key = thread_key(&w, worker_tid, worker_id);
	check_thread(&w, main_key, "main", "inner", "outer", 2);
	check_thread(&w, worker_key, "worker", "wait_lock", "worker", 1);
	py_interp__free(w.proc.pi);
	pywalk_stop(w.pid);
}

TEST_PER_PYTHON(python_walk, walk, .timeout = 180)
