// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Python tests' reference walker and helpers; see util_pywalk.h. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/util_e2e.h"
#include "tests/util_pywalk.h"

#define MAX_THREADS 256 /* thread states followed before giving up */

static int rd(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int rd64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return rd(pid, addr, v, 8);
}

/* The thread state whose ts_tid holds key. */
static int find_tstate(pid_t pid, const struct stkrec_pyproc *p, uint64_t key, uint64_t *ts)
{
	uint64_t interp, k;
	int err, i;

	err = rd64(pid, p->runtime + p->rt_interp, &interp);
	if (!err)
		err = rd64(pid, interp + p->is_threads, ts);
	for (i = 0; !err && *ts && i < MAX_THREADS; i++) {
		err = rd64(pid, *ts + p->ts_tid, &k);
		if (!err && k == key)
			return 0;
		if (!err)
			err = rd64(pid, *ts + p->ts_next, ts);
	}
	return err ? err : -ESRCH;
}

/* One frame into f, unless it is a shim (then the frame before it, inner,
 * is the outermost of its eval call). 1: a frame, 0: a shim. */
static int one_frame(pid_t pid, const struct stkrec_pyproc *p, uint64_t frame,
		     struct pywalk_frame *f, struct pywalk_frame *inner)
{
	bool ptr = p->instr_kind == STKREC_PY_INSTR_PTR;
	uint8_t entry = 0;
	uint64_t instr = 0, name;
	int32_t firstlineno;
	int err;

	if (p->entry_kind != STKREC_PY_ENTRY_EACH) {
		err = rd(pid, frame + p->fr_entry, &entry, 1);
		if (err)
			return err;
	}
	if (p->entry_kind == STKREC_PY_ENTRY_SHIM && entry == STKREC_PY_OWNED_BY_CSTACK) {
		if (inner)
			inner->entry = true;
		return 0;
	}
	err = rd64(pid, frame + p->fr_code, &f->code);
	if (!err)
		err = rd(pid, frame + p->fr_instr, &instr, ptr ? 8 : 4);
	if (!err)
		err = rd(pid, f->code + p->co_firstlineno, &firstlineno, 4);
	if (!err)
		err = rd64(pid, f->code + p->co_name, &name);
	if (err)
		return err;
	f->lasti = ptr ? (uint32_t)(instr - f->code) : (uint32_t)instr;
	f->stamp = stkrec_py_stamp(firstlineno, name);
	f->entry = p->entry_kind == STKREC_PY_ENTRY_EACH ||
		   (p->entry_kind == STKREC_PY_ENTRY_FLAG && entry);
	return 1;
}

int pywalk_thread(pid_t pid, const struct stkrec_pyproc *p, uint64_t key, struct pywalk_frame *f,
		  int max)
{
	uint64_t ts, frame;
	int err, n = 0, steps;

	err = find_tstate(pid, p, key, &ts);
	if (!err)
		err = rd64(pid, ts + p->ts_frame, &frame);
	if (!err && p->cf_frame != STKREC_PY_NONE && frame)
		err = rd64(pid, frame + p->cf_frame, &frame);
	for (steps = 0; !err && frame && n < max && steps < 2 * max; steps++) {
		memset(&f[n], 0, sizeof(f[n]));
		err = one_frame(pid, p, frame, &f[n], n ? &f[n - 1] : NULL);
		if (err > 0) {
			n++;
			err = 0;
		}
		if (!err)
			err = rd64(pid, frame + p->fr_back, &frame);
	}
	return err ? err : n;
}

int pywalk_fs_base(pid_t tid, uint64_t *base)
{
#ifdef __x86_64__
	struct user_regs_struct regs;
	int st, err = 0;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		return -errno;
	if (waitpid(tid, &st, __WALL) != tid || ptrace(PTRACE_GETREGS, tid, 0, &regs))
		err = errno ? -errno : -EIO;
	else
		*base = regs.fs_base;
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return err;
#else
	(void)tid;
	(void)base;
	return -EOPNOTSUPP;
#endif
}

int pywalk_attach(pid_t pid, struct pywalk_proc *out)
{
	char maps[64], line[4096 + 128], path[4096];
	int err = PY_ENOTPY;
	FILE *f;

	memset(out, 0, sizeof(*out));
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		unsigned long start, pgoff;
		struct py_version v;

		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &start, &pgoff, path) != 3 ||
		    !py_name_version(path, &v))
			continue;
		if (py_interp__open(path, NULL, &out->pi, NULL))
			continue;
		err = py_interp__bias(out->pi, start, pgoff, &out->bias);
		if (err) {
			py_interp__free(out->pi);
			out->pi = NULL;
			continue;
		}
		snprintf(out->path, sizeof(out->path), "%s", path);
	}
	fclose(f);
	return err;
}

/* Read one line from fd within timeout_s. */
static bool read_line(int fd, char *line, size_t len, int timeout_s)
{
	size_t n = 0;
	time_t end = time(NULL) + timeout_s;

	while (n + 1 < len && time(NULL) < end) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		char c;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if (read(fd, &c, 1) != 1)
			break;
		if (c == '\n') {
			line[n] = 0;
			return true;
		}
		line[n++] = c;
	}
	line[n] = 0;
	return false;
}

pid_t pywalk_start(const char *python, const char *script, char *script_path, size_t path_len,
		   char *line, size_t line_len, int timeout_s)
{
	char rel[PATH_MAX];
	int pfd[2];
	pid_t pid;

	snprintf(rel, sizeof(rel), "%s/tests/workloads/py/%s", e2e_env("STKREC_SRCDIR", "."),
		 script);
	cr_assert_not_null(realpath(rel, script_path), "%s: %s (STKREC_SRCDIR?)", rel,
			   strerror(errno));
	cr_assert_lt(strlen(script_path), path_len);
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(python, python, script_path, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (!read_line(pfd[0], line, line_len, timeout_s)) {
		close(pfd[0]);
		pywalk_stop(pid);
		cr_assert_fail("%s %s: no ready line in %d s (got \"%s\")", python, script_path,
			       timeout_s, line);
	}
	close(pfd[0]);
	return pid;
}

void pywalk_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int pywalk_line_of(const char *path, const char *prefix)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (!strncmp(line, prefix, strlen(prefix))) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}
