/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A reference walker of CPython's threads and frames, in user space, for
 * the Python tests: it reads a live process as bpf/ does, through struct
 * stkrec_pyproc alone (python/ fills it), so that the tests pin what the
 * BPF walker relies on. Also: starting tests/workloads/py/ scripts and
 * finding a process's interpreter file the way the recorder does.
 */
#ifndef STKREC_TESTS_UTIL_PYWALK_H
#define STKREC_TESTS_UTIL_PYWALK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/python.h"

struct pywalk_frame {
	uint64_t code; /* the code object */
	uint32_t lasti;
	uint32_t stamp;
	bool entry;    /* STKREC_PYFRAME_ENTRY: outermost of its eval call */
};

/*
 * The Python frames of the thread whose PyThreadState holds key (its
 * native_thread_id or thread_id, by p->tid_kind), innermost first: at most
 * max. Returns how many, -ESRCH when no thread state holds key, or the
 * -errno of a read.
 */
int pywalk_thread(pid_t pid, const struct stkrec_pyproc *p, uint64_t key, struct pywalk_frame *f,
		  int max);

/* The thread's fs base, which glibc's pthread_self() is on x86-64 and
 * the BPF walker reads for STKREC_PY_TID_PTHREAD (ptrace: the thread stops
 * for the read). -EOPNOTSUPP on other machines. */
int pywalk_fs_base(pid_t tid, uint64_t *base);

/* A process's CPython: the first mapped file that py_name_version() names
 * and py_interp__open() reads, and its load bias. */
struct pywalk_proc {
	struct py_interp *pi;
	uint64_t bias;
	char path[4096];
};
/* 0, or PY_ENOTPY when no mapping is CPython (or the open's error). */
int pywalk_attach(pid_t pid, struct pywalk_proc *out);

/*
 * Start interpreter python on tests/workloads/py/<script> (absolute path in
 * script_path) and wait up to timeout_s for its "ready" line, copied into
 * line. The child dies with the test (PR_SET_PDEATHSIG). Returns its pid.
 */
pid_t pywalk_start(const char *python, const char *script, char *script_path, size_t path_len,
		   char *line, size_t line_len, int timeout_s);
/* SIGKILL and reap. */
void pywalk_stop(pid_t pid);

/* The line number of the first line of path that starts with prefix
 * ("def inner("), 0 when none. */
int pywalk_line_of(const char *path, const char *prefix);

#endif /* STKREC_TESTS_UTIL_PYWALK_H */
