/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by tests/test_reliability*.c (header-only, as report_run.h): run
 * the stkrec binary and the workloads as child processes with a time bound,
 * capture their output, and read their exit status and peak RSS.
 */
#ifndef STKREC_TESTS_RELIABILITY_RUN_H
#define STKREC_TESTS_RELIABILITY_RUN_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "format/capture.h"

struct rl_run {
	int status;          /* wait status */
	bool timed_out;      /* killed by the time bound */
	long maxrss_kb;      /* peak RSS of the child */
	char out[8192];      /* head of stdout, for messages: rl_run_all() for all of it */
	char err[4096];      /* head of stderr */
	char hang[8192];     /* timed out: where each thread was (state, kernel stack) */
};

static inline const char *rl_env(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static inline const char *rl_stkrec(void)
{
	return rl_env("STKREC", "build/stkrec");
}

/* Scale of the long tests: STKREC_SOAK=1 (make soak) runs them in full. */
static inline bool rl_soak(void)
{
	return getenv("STKREC_SOAK") && atoi(getenv("STKREC_SOAK")) > 0;
}

static inline void rl_workload(const char *name, char *out)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", rl_env("STKREC_WORKLOADS", "build/workloads"), name);
	if (!realpath(rel, out))
		cr_skip_test("workload %s not built (make test-build)", rel);
}

static inline double rl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void rl_slurp_fd(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = 0;
}

/* All of fd (a child's output file) from its start, NUL-terminated, in
 * a buffer the caller frees, its length in *len when asked (binary
 * outputs hold NULs): outputs that differ past the head of rl_run.out (a
 * cut capture's script differs at its tail) compare whole. */
static inline char *rl_slurp_all(int fd, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;

	cr_assert_eq(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	cr_assert_not_null(buf);
	while (got < (size_t)st.st_size &&
	       (n = pread(fd, buf + got, st.st_size - got, got)) > 0)
		got += n;
	cr_assert_eq(got, (size_t)st.st_size, "short read of a child's output");
	buf[got] = 0;
	if (len)
		*len = got;
	return buf;
}

/* Append a small /proc file to buf (for a hang's post-mortem). */
static inline void rl_cat_proc(const char *path, char *buf, size_t len)
{
	size_t off = strlen(buf);
	ssize_t n;
	int fd;

	if (off + 1 >= len)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf + off, len - off - 1);
	buf[off + (n > 0 ? n : 0)] = 0;
	close(fd);
}

/* Each thread of pid: its stat line (state, CPU time) and kernel stack;
 * its children's pids appended to kids (space separated). */
static inline void rl_hang_threads(pid_t pid, struct rl_run *r, char *kids, size_t len)
{
	char path[300];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, de->d_name);
		rl_cat_proc(path, r->hang, sizeof(r->hang));
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, de->d_name);
		rl_cat_proc(path, r->hang, sizeof(r->hang));
		if (kids) {
			snprintf(path, sizeof(path), "/proc/%d/task/%s/children", pid, de->d_name);
			rl_cat_proc(path, kids, len);
		}
	}
	if (d)
		closedir(d);
}

/* Where each thread of a child that overran its time bound was, and each
 * thread of its children (a recorder's command), so that a hang seen once
 * in a CI log says which of them it was, and where. */
static inline void rl_hang_report(pid_t pid, struct rl_run *r)
{
	char kids[256] = "", *p, *end;
	long kid;

	r->hang[0] = 0;
	rl_hang_threads(pid, r, kids, sizeof(kids));
	for (p = kids; (kid = strtol(p, &end, 10)) > 0; p = end)
		rl_hang_threads((pid_t)kid, r, NULL, 0);
}

/* Wait for pid at most `timeout` seconds, then SIGKILL it. */
static inline int rl_wait(pid_t pid, double timeout, struct rl_run *r)
{
	double end = rl_now() + timeout;
	struct rusage ru;
	pid_t got;

	for (;;) {
		got = wait4(pid, &r->status, WNOHANG, &ru);
		if (got == pid)
			break;
		if (got < 0)
			return -1;
		if (rl_now() > end && !r->timed_out) {
			r->timed_out = true;
			rl_hang_report(pid, r);
			kill(pid, SIGKILL);
		}
		usleep(2000);
	}
	r->maxrss_kb = ru.ru_maxrss;
	return 0;
}

/* Start argv with stdout/stderr to temp files; stdin from /dev/null. */
/* rl_spawn() with child(arg) run in the child before exec (a non-zero
 * return: exit 126 there). */
static inline pid_t rl_spawn_with(char *const argv[], int *fo, int *fe, rlim_t as_limit,
				  int (*child)(void *), void *arg)
{
	char tmpl_o[] = "/tmp/stkrec-rl-out-XXXXXX", tmpl_e[] = "/tmp/stkrec-rl-err-XXXXXX";
	struct rlimit rl = { as_limit, as_limit };
	pid_t pid;

	*fo = mkstemp(tmpl_o);
	*fe = mkstemp(tmpl_e);
	cr_assert(*fo >= 0 && *fe >= 0);
	unlink(tmpl_o);
	unlink(tmpl_e);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);

		dup2(in, 0);
		dup2(*fo, 1);
		dup2(*fe, 2);
		if (as_limit)
			setrlimit(RLIMIT_AS, &rl);
		/* a test killed by its timeout runs no .fini: its loads and
		 * recorders must not outlive it and load the next tests */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (child && child(arg))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static inline pid_t rl_spawn(char *const argv[], int *fo, int *fe, rlim_t as_limit)
{
	return rl_spawn_with(argv, fo, fe, as_limit, NULL, NULL);
}

/* Run argv to completion within timeout seconds, under an address-space
 * limit of as_limit bytes (0: none); *all, when asked, all of its stdout
 * and *all_len its length (rl_slurp_all()). */
static inline void rl_run_all(char *const argv[], double timeout, rlim_t as_limit,
			      struct rl_run *r, char **all, size_t *all_len)
{
	int fo, fe;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	pid = rl_spawn(argv, &fo, &fe, as_limit);
	cr_assert_eq(rl_wait(pid, timeout, r), 0);
	rl_slurp_fd(fo, r->out, sizeof(r->out));
	rl_slurp_fd(fe, r->err, sizeof(r->err));
	if (all)
		*all = rl_slurp_all(fo, all_len);
	close(fo);
	close(fe);
}

static inline void rl_run(char *const argv[], double timeout, rlim_t as_limit,
			  struct rl_run *r)
{
	rl_run_all(argv, timeout, as_limit, r, NULL, NULL);
}

/* pid, a child not yet waited for, is still running (not a zombie). */
static inline bool rl_running(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* The line `stkrec record` prints on stderr once every program is
 * attached, before a held command runs (README, Usage). */
#define RL_RECORDING "stkrec: recording "

/* Where the whole line RL_RECORDING... starts in text, or NULL. */
static inline const char *rl_recording_line(const char *text)
{
	const char *p = text;

	while ((p = strstr(p, RL_RECORDING))) {
		if ((p == text || p[-1] == '\n') && strchr(p, '\n'))
			return p;
		p++;
	}
	return NULL;
}

/* Has the recorder whose stderr is the file fe said it is recording? Its
 * stderr so far into err, read with pread(): the file keeps every byte. */
static inline bool rl_said_recording(int fe, char *err, size_t len)
{
	rl_slurp_fd(fe, err, len);
	return rl_recording_line(err) != NULL;
}

/*
 * Wait until the recorder pid, started by rl_spawn() with its stderr in
 * the file fe, says it is recording: from then on events are recorded.
 * 120 s bounds a hang, not a speed (dwarf's load alone takes ~1.5 s, more
 * beside other tests); past it, or when the recorder exits first, the
 * test fails with the stderr so far (its first 16 KiB).
 */
static inline void rl_wait_recording(pid_t pid, int fe)
{
	static char err[16384];
	double end = rl_now() + 120;
	siginfo_t si;

	while (!rl_said_recording(fe, err, sizeof(err))) {
		si.si_pid = 0;
		if (!waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid)
			cr_assert_fail("the recorder exited before it said '%s': %s", RL_RECORDING,
				       err);
		if (rl_now() > end) {
			kill(pid, SIGKILL);
			cr_assert_fail("the recorder did not say '%s' in 120 s: %s", RL_RECORDING,
				       err);
		}
		usleep(2000);
	}
}

/* Exit code, or 128 + signal. */
static inline int rl_code(const struct rl_run *r)
{
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	return 128 + WTERMSIG(r->status);
}

/* Lines in s. */
static inline int rl_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Lines of text exactly equal to line (given without its newline). */
static inline int rl_count_line(const char *text, const char *line)
{
	size_t len = strlen(line);
	const char *p = text;
	int n = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		n += l == len && !strncmp(p, line, len);
		p += l + (nl != NULL);
	}
	return n;
}

/* Lines of text that contain s. */
static inline int rl_count_lines_with(const char *text, const char *s)
{
	const char *p = text;
	int n = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		const char *hit = strstr(p, s);

		n += hit && hit < p + l;
		p += l + (nl != NULL);
	}
	return n;
}

/* tests/workloads/burst, two threads ping-ponging over a pipe until
 * killed: the load of the recording tests. burst receives its path. */
static inline pid_t rl_start_burst(char *burst)
{
	char *argv[] = { burst, "pipe", "2", "0", NULL };
	int fo, fe;
	pid_t pid;

	rl_workload("burst", burst);
	pid = rl_spawn(argv, &fo, &fe, 0);
	close(fo);
	close(fe);
	return pid;
}

/* SIGKILL and reap *pid, if a process was started there. */
static inline void rl_kill(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

/* The stderr of a recorder that stopped on an error: the line that said
 * it was recording, the summary every recording ends with (a "stkrec:
 * recorded" line and indented ones), then the error, which must be the
 * one line `want` and nothing else. */
static inline void rl_assert_one_error_line(const char *err, const char *want)
{
	const char *p = err;
	int other = 0;

	cr_assert_eq(rl_count_line(err, want), 1, "want once: '%s', stderr:\n%s", want, err);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (strncmp(p, want, l) && strncmp(p, "stkrec: recorded ", 17) &&
		    strncmp(p, "stkrec: recording ", 18) && *p != ' ')
			other++;
		p += l + (nl != NULL);
	}
	cr_assert_eq(other, 0, "lines besides the summary and the error:\n%s", err);
}

/* Worst case of one block, compressed (FORMAT.md §5.3): the writer keeps
 * this much room free, and may stop this much short of --max-size. */
static inline uint64_t rl_block_worst_case(void)
{
	return ZSTD_compressBound(CAP_DEFAULT_BLOCK_SIZE + 0xffff + 64) + CAP_WRITER_END_RESERVE;
}

/* Skip unless this host can record (root, BPF loads). */
static inline void rl_need_bpf(void)
{
	static int ok = -1; /* per test process */
	char cap[] = "/tmp/stkrec-rl-probe-XXXXXX";
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", cap, "-e", "offcpu",
			 "-d", "0.1", NULL };
	struct rl_run r;
	int fd;

	if (geteuid() != 0)
		cr_skip_test("recording needs root");
	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s (set STKREC)", rl_stkrec());
	if (ok < 0) {
		fd = mkstemp(cap);
		cr_assert_geq(fd, 0);
		close(fd);
		rl_run(argv, 30, 0, &r);
		unlink(cap);
		ok = rl_code(&r) == 0 || !strstr(r.err, "cannot load the BPF");
	}
	if (!ok)
		cr_skip_test("BPF cannot load here");
}

/* This kernel's release is maj.min or later: what a test expects of the
 * kernel, known apart from the recorder's own probes (the code under test). */
static inline bool rl_kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	uname(&u);
	sscanf(u.release, "%d.%d", &a, &b);
	return a > maj || (a == maj && b >= min);
}

/* Why record --call-graph dwarf cannot run here (x86-64, Linux 5.17+),
 * or NULL: record's default is then dwarf, else fp. */
static inline const char *rl_no_dwarf(void)
{
	static char why[128];
	struct utsname u;

#ifndef __x86_64__
	return "--call-graph dwarf unwinds on x86-64 only";
#endif
	if (rl_kernel_at_least(5, 17))
		return NULL;
	uname(&u);
	snprintf(why, sizeof(why), "--call-graph dwarf needs Linux 5.17+, this is %s", u.release);
	return why;
}

static inline void rl_need_dwarf(void)
{
	if (rl_no_dwarf())
		cr_skip_test("%s", rl_no_dwarf());
}

/* The burst load's pinger in read(), folded, as record's default walks
 * it: from glibc's .eh_frame the whole chain; by frame pointers (no
 * dwarf here) glibc's functions have none and hide the thread function. */
static inline const char *rl_burst_read_chain(void)
{
	return rl_no_dwarf() ? "burst;start_thread;__read" :
			       "burst;__GI___clone3;start_thread;pinger;__read;";
}

/* stkrec ARGS... -i CAP to its end (exit 0 asserted): its stdout, in a
 * buffer the next call reuses. */
static inline char *rl_stkrec_on(const char *cap, char *const args[])
{
	char *argv[24] = { (char *)rl_stkrec() };
	static struct rl_run r;
	int i, n = 1;

	for (i = 0; args[i] && n < 21; i++)
		argv[n++] = args[i];
	argv[n++] = "-i";
	argv[n++] = (char *)cap;
	argv[n] = NULL;
	rl_run(argv, 60, 0, &r);
	cr_assert_eq(rl_code(&r), 0, "stkrec %s: exit %d: %s", args[0], rl_code(&r), r.err);
	return r.out;
}

#endif
