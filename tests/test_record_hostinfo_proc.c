// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Host information the recorder writes so captures symbolize offline, part
 * 2: /proc maps and threads (record/procmaps.c) and the perf side band
 * (record/sideband.c), with real processes: the test's own, a program whose
 * file was deleted while it runs, and programs that live 300 ms.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/intern.h"
#include "record/procmaps.h"
#include "record/sideband.h"
#include "tests/util_hostinfo.h"

/* A capture in hostinfo_tmpdir with the real intern on it. */
struct capture {
	char path[PATH_MAX];
	struct cap_writer *w;
	struct intern *in;
};

static void cap_start(struct capture *c)
{
	struct cap_header h = hostinfo_header();

	snprintf(c->path, sizeof(c->path), "%s/capture.stkrec", hostinfo_tmpdir);
	cr_assert_eq(cap_writer__open(c->path, &h, NULL, &c->w), 0);
	cr_assert_eq(intern__new(c->w, &c->in), 0);
}

static void cap_finish_read(struct capture *c, struct hostinfo_readback *rb)
{
	intern__free(c->in);
	hostinfo_finish_read(c->w, c->path, rb);
}

static bool is_root(void)
{
	return geteuid() == 0;
}

TestSuite(hostinfo_procmaps, .init = hostinfo_mk_tmpdir, .fini = hostinfo_rm_tmpdir);
TestSuite(hostinfo_sideband, .init = hostinfo_mk_tmpdir, .fini = hostinfo_rm_tmpdir);

/* ---- /proc maps ---- */

static const struct cap_mapping *find_mapping(const struct hostinfo_readback *rb, uint32_t pid,
					      const char *path, uint32_t flags)
{
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_mapping *m = &rb->v[i].rec.mapping;

		if (rb->v[i].rec.type == CAP_REC_MAPPING && m->pid == pid &&
		    (m->flags & flags) == flags && !strcmp(hostinfo_rb_string(rb, m->path_id), path))
			return m;
	}
	return NULL;
}

static const struct cap_thread *find_thread(const struct hostinfo_readback *rb, uint32_t tid,
					    uint32_t flags)
{
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_thread *t = &rb->v[i].rec.thread;

		if (rb->v[i].rec.type == CAP_REC_THREAD && t->tid == tid &&
		    (t->flags & flags) == flags)
			return t;
	}
	return NULL;
}

static size_t count_pid_mappings(const struct hostinfo_readback *rb, uint32_t pid)
{
	size_t i, n = 0;

	for (i = 0; i < rb->n; i++)
		n += rb->v[i].rec.type == CAP_REC_MAPPING && rb->v[i].rec.mapping.pid == pid;
	return n;
}

static size_t count_time_mappings(const struct hostinfo_readback *rb, uint32_t pid,
				  uint64_t time)
{
	size_t i, n = 0;

	for (i = 0; i < rb->n; i++)
		n += rb->v[i].rec.type == CAP_REC_MAPPING && rb->v[i].rec.mapping.pid == pid &&
		     rb->v[i].rec.mapping.time == time;
	return n;
}

static void assert_buildid(const struct cap_mapping *m, const char *file)
{
	uint8_t want[20];
	int n = hostinfo_readelf_buildid(file, want);

	cr_assert_gt(n, 0, "%s has a build ID", file);
	cr_assert_eq(m->build_id_size, n, "%s", file);
	cr_assert_arr_eq(m->build_id, want, (size_t)n, "%s", file);
}

/* Path of the first executable file mapping of ours whose path has `part`. */
static bool own_mapping(const char *part, char *path, size_t len, uint64_t *start,
			uint64_t *end)
{
	char line[PATH_MAX + 128], perms[5], file[PATH_MAX];
	unsigned long long s, e;
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert_not_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %4s %*s %*s %*s %4095s", &s, &e, perms, file) < 3)
			continue;
		if (perms[2] == 'x' && file[0] == '/' && strstr(file, part)) {
			snprintf(path, len, "%s", file);
			*start = s;
			*end = e;
			found = true;
		}
	}
	fclose(f);
	return found;
}

Test(hostinfo_procmaps, scan_all_threads_and_own_mappings)
{
	char exe[PATH_MAX], libc[PATH_MAX], comm[32] = "";
	uint32_t self = (uint32_t)getpid();
	const struct cap_mapping *m;
	const struct cap_thread *t;
	struct procmaps *pm;
	struct hostinfo_readback rb;
	struct capture cap;
	uint64_t s, e;
	FILE *f;
	int n;

	if (!is_root())
		cr_skip_test("reading every process's maps needs root");
	cr_assert_gt(readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
	exe[readlink("/proc/self/exe", exe, sizeof(exe) - 1)] = '\0';
	cr_assert(own_mapping("libc.so", libc, sizeof(libc), &s, &e));
	f = fopen("/proc/self/comm", "r");
	cr_assert_not_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';

	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	n = procmaps__scan_all(pm, 12345);
	cr_assert_gt(n, 2);
	cr_assert(procmaps__known(pm, self));
	cr_assert_eq(procmaps__nr_known(pm), (size_t)n);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);

	m = find_mapping(&rb, self, exe, CAP_MAP_FROM_PROC);
	cr_assert_not_null(m, "MAPPING for %s", exe);
	cr_assert_eq(m->time, 12345);
	assert_buildid(m, exe);
	m = find_mapping(&rb, self, libc, CAP_MAP_FROM_PROC);
	cr_assert_not_null(m, "MAPPING for %s", libc);
	cr_assert_eq(m->start, s);
	cr_assert_eq(m->end, e);
	assert_buildid(m, libc);
	m = find_mapping(&rb, self, "[vdso]", CAP_MAP_FROM_PROC | CAP_MAP_ANON);
	cr_assert_not_null(m, "[vdso] flagged anonymous");
	cr_assert_eq(m->build_id_size, 0);

	t = find_thread(&rb, self, 0);
	cr_assert_not_null(t);
	cr_assert_eq(t->pid, self);
	cr_assert_str_eq(t->comm, comm);
	cr_assert_eq(t->flags, 0);
	t = find_thread(&rb, 2, CAP_THREAD_KERNEL); /* kthreadd */
	cr_assert_not_null(t, "kthreadd flagged as a kernel thread");
	cr_assert_str_eq(t->comm, "kthreadd");
	cr_assert_eq(count_pid_mappings(&rb, 2), 0);
	hostinfo_rb_free(&rb);
}

Test(hostinfo_procmaps, ensure_reads_once_and_caches_build_ids)
{
	uint32_t self = (uint32_t)getpid();
	struct procmaps *pm;
	struct hostinfo_readback rb;
	struct capture cap;
	uint64_t reads;
	size_t first;

	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_not(procmaps__known(pm, self));
	cr_assert_eq(procmaps__ensure(pm, self, 1), 0);
	cr_assert(procmaps__known(pm, self));
	reads = procmaps__buildid_reads(pm);
	cr_assert_gt(reads, 1, "executable and libc read");
	cr_assert_eq(procmaps__ensure(pm, self, 2), 0); /* known: no-op */
	cr_assert_eq(procmaps__nr_known(pm), 1);
	/* after exec the maps are read again, build IDs come from the cache */
	procmaps__exec(pm, self, 3);
	cr_assert_not(procmaps__known(pm, self));
	cr_assert_eq(procmaps__ensure(pm, self, 4), 0);
	cr_assert_eq(procmaps__buildid_reads(pm), reads);
	/* an event older than the exec the side band saw: the maps read now
	 * are the new image's, valid from the exec on */
	procmaps__exec(pm, self, 100);
	cr_assert_eq(procmaps__ensure(pm, self, 50), 0);
	procmaps__forget(pm, self);
	cr_assert_eq(procmaps__nr_known(pm), 0);
	cr_assert_eq(procmaps__ensure(pm, 0x3ffffff0u, 5), -ESRCH);
	cr_assert_eq(procmaps__nr_known(pm), 0);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	first = count_time_mappings(&rb, self, 1);
	cr_assert_gt(first, 0);
	cr_assert_eq(count_time_mappings(&rb, self, 4), first, "read again after exec");
	cr_assert_eq(count_time_mappings(&rb, self, 100), first, "stamped with the exec");
	cr_assert_eq(count_pid_mappings(&rb, self), 3 * first);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_THREAD), 0, "the drain names threads");
	hostinfo_rb_free(&rb);
}

/* The pid set keeps exactly the pids added and not forgotten (linear
 * probing with backward-shift deletion): every pid up to pid_max is asked. */
Test(hostinfo_procmaps, forget_keeps_the_others)
{
	uint32_t *pids = NULL, pid, pid_max = 0;
	struct hostinfo_readback rb;
	struct procmaps *pm;
	struct capture cap;
	size_t n = 0, i;
	FILE *f;

	if (!is_root())
		cr_skip_test("scanning all processes needs root");
	f = fopen("/proc/sys/kernel/pid_max", "r");
	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%u", &pid_max), 1);
	fclose(f);
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_gt(procmaps__scan_all(pm, 1), 10);
	pids = calloc(procmaps__nr_known(pm), sizeof(*pids));
	for (pid = 1; pid <= pid_max; pid++)
		if (procmaps__known(pm, pid))
			pids[n++] = pid;
	cr_assert_eq(n, procmaps__nr_known(pm));
	for (i = 0; i < n; i += 2)
		procmaps__forget(pm, pids[i]);
	cr_assert_eq(procmaps__nr_known(pm), n / 2);
	for (i = 0; i < n; i++)
		cr_assert_eq(procmaps__known(pm, pids[i]), i % 2 == 1, "pid %u", pids[i]);
	for (i = 1; i < n; i += 2)
		procmaps__forget(pm, pids[i]);
	cr_assert_eq(procmaps__nr_known(pm), 0);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	hostinfo_rb_free(&rb);
	free(pids);
}

static pid_t spawn(const char *prog)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait until pid has exec'd prog (its maps show it). */
static void wait_mapped(pid_t pid, const char *prog)
{
	char path[64], line[PATH_MAX + 128];
	int tries;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (tries = 0; tries < 200; tries++) {
		FILE *f = fopen(path, "r");
		bool found = false;

		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, prog) != NULL;
		if (f)
			fclose(f);
		if (found)
			return;
		usleep(10000);
	}
	cr_assert_fail("%s never mapped in %d", prog, (int)pid);
}

/* A deleted executable is still read through /proc/PID/map_files. */
Test(hostinfo_procmaps, deleted_executable)
{
	const struct cap_mapping *m;
	char prog[PATH_MAX];
	uint8_t want[20];
	struct procmaps *pm;
	struct hostinfo_readback rb;
	struct capture cap;
	pid_t child;

	if (!is_root())
		cr_skip_test("/proc/PID/map_files needs root");
	hostinfo_build_prog("deleted", "-Wl,--build-id=sha1", 3000, prog, sizeof(prog));
	cr_assert_eq(hostinfo_readelf_buildid(prog, want), 20);
	child = spawn(prog);
	wait_mapped(child, prog);
	cr_assert_eq(unlink(prog), 0);
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_eq(procmaps__ensure(pm, (uint32_t)child, 7), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	m = find_mapping(&rb, (uint32_t)child, prog, CAP_MAP_FROM_PROC);
	cr_assert_not_null(m, "MAPPING for deleted %s, without \" (deleted)\"", prog);
	cr_assert_eq(m->build_id_size, 20);
	cr_assert_arr_eq(m->build_id, want, 20);
	hostinfo_rb_free(&rb);
}

Test(hostinfo_procmaps, add_fills_missing_build_id)
{
	struct cap_mapping in = { .time = 9, .pid = (uint32_t)getpid(),
				  .flags = CAP_MAP_FROM_SIDEBAND };
	const struct cap_mapping *m;
	char libc[PATH_MAX];
	struct procmaps *pm;
	struct hostinfo_readback rb;
	struct capture cap;
	uint8_t given[20];

	cr_assert(own_mapping("libc.so", libc, sizeof(libc), &in.start, &in.end));
	memset(given, 0xab, sizeof(given));
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_eq(procmaps__add(pm, &in, libc), 0);
	in.pid = 1000000; /* build ID from the kernel: kept, no file needed */
	in.build_id_size = 20;
	memcpy(in.build_id, given, 20);
	cr_assert_eq(procmaps__add(pm, &in, "/nonexistent/lib.so"), 0);
	in.pid = (uint32_t)getpid();
	in.build_id_size = 0;
	cr_assert_eq(procmaps__add(pm, &in, "//anon"), 0);
	cr_assert_not(procmaps__known(pm, (uint32_t)getpid()));
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);

	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_MAPPING), 3);
	m = find_mapping(&rb, (uint32_t)getpid(), libc, CAP_MAP_FROM_SIDEBAND);
	cr_assert_not_null(m);
	cr_assert_eq(m->time, 9);
	assert_buildid(m, libc);
	m = find_mapping(&rb, 1000000, "/nonexistent/lib.so", CAP_MAP_FROM_SIDEBAND);
	cr_assert_not_null(m);
	cr_assert_eq(m->build_id_size, 20);
	cr_assert_arr_eq(m->build_id, given, 20);
	m = find_mapping(&rb, (uint32_t)getpid(), "//anon", CAP_MAP_ANON);
	cr_assert_not_null(m);
	cr_assert_eq(m->build_id_size, 0);
	hostinfo_rb_free(&rb);
}

/* ---- perf side band ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct sideband *open_sideband(unsigned pages)
{
	int i, n = (int)sysconf(_SC_NPROCESSORS_ONLN), cpus[1024], err;
	struct sideband *sb = NULL;

	cr_assert(n > 0 && n <= 1024);
	for (i = 0; i < n; i++)
		cpus[i] = i;
	err = sideband__open(cpus, n, pages, 0, &sb);
	if (err == -EACCES || err == -EPERM || err == -ENOENT || err == -ENOSYS)
		cr_skip_test("perf_event_open unavailable: %s", strerror(-err));
	cr_assert_eq(err, 0, "sideband__open: %s", strerror(-err));
	return sb;
}

/* Run prog to its end, draining every 2 ms while it lives (drain_live) or
 * only once it has exited. */
static void run_and_drain(struct sideband *sb, struct capture *cap, struct procmaps *pm,
			  const char *prog, bool drain_live, pid_t *child)
{
	int status, got;

	*child = spawn(prog);
	while ((got = waitpid(*child, &status, WNOHANG)) == 0) {
		if (drain_live)
			cr_assert_geq(sideband__drain(sb, cap->w, pm), 0);
		usleep(2000);
	}
	cr_assert_eq(got, *child);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert_geq(sideband__drain(sb, cap->w, pm), 0);
}

static const struct cap_fork *find_fork(const struct hostinfo_readback *rb, uint32_t pid)
{
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_fork *f = &rb->v[i].rec.fork;

		if (rb->v[i].rec.type == CAP_REC_FORK && f->pid == pid && f->tid == pid)
			return f;
	}
	return NULL;
}

/* The exec'd program: THREAD(EXEC), FORK and its MAPPING with the right
 * build ID, all timed inside [t0, t1] of CLOCK_MONOTONIC. */
static void assert_short_lived(const struct hostinfo_readback *rb, const char *prog, pid_t child,
			       uint64_t t0, uint64_t t1)
{
	const struct cap_mapping *m;
	const struct cap_thread *t;
	const struct cap_fork *f;

	f = find_fork(rb, (uint32_t)child);
	cr_assert_not_null(f, "FORK of %d", (int)child);
	cr_assert_eq(f->ppid, (uint32_t)getpid());
	cr_assert(f->time >= t0 && f->time <= t1, "fork at %llu not in [%llu, %llu]",
		  (unsigned long long)f->time, (unsigned long long)t0,
		  (unsigned long long)t1);
	t = find_thread(rb, (uint32_t)child, CAP_THREAD_EXEC);
	cr_assert_not_null(t, "THREAD with EXEC for %d", (int)child);
	cr_assert_eq(t->pid, (uint32_t)child);
	cr_assert_str_eq(t->comm, strrchr(prog, '/') + 1);
	cr_assert(t->time >= f->time && t->time <= t1);
	m = find_mapping(rb, (uint32_t)child, prog, CAP_MAP_FROM_SIDEBAND);
	cr_assert_not_null(m, "MAPPING of %s", prog);
	cr_assert(m->time >= t->time && m->time <= t1);
	cr_assert((const void *)f < (const void *)t && (const void *)t < (const void *)m,
		  "FORK, exec THREAD, MAPPING in file order, whichever CPUs they ran on");
	cr_assert_eq(m->pgoff & 0xfff, 0);
	cr_assert_gt(m->end, m->start);
	assert_buildid(m, prog);
}

static void sideband_case(bool drain_live)
{
	char prog[PATH_MAX];
	struct procmaps *pm;
	struct sideband *sb;
	struct hostinfo_readback rb;
	struct capture cap;
	uint64_t t0, t1;
	pid_t child;

	hostinfo_build_prog("sb_prog", "-Wl,--build-id=sha1", 300, prog, sizeof(prog));
	sb = open_sideband(64);
	if (!drain_live && !sideband__has_build_id(sb))
		cr_skip_test("kernel gives no build IDs in MMAP2 (before 5.12)");
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	t0 = mono_ns();
	run_and_drain(sb, &cap, pm, prog, drain_live, &child);
	t1 = mono_ns();
	cr_assert_eq(sideband__lost(sb), 0);
	sideband__free(sb);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	cr_assert_gt(t1 - t0, 300000000ull);
	assert_short_lived(&rb, prog, child, t0, t1);
	hostinfo_rb_free(&rb);
}

Test(hostinfo_sideband, short_lived_process_drained_live)
{
	sideband_case(true);
}

/* Drained only after the process is gone: /proc has nothing left, the
 * kernel's build ID in MMAP2 is what makes it symbolizable. */
Test(hostinfo_sideband, process_gone_before_drain)
{
	sideband_case(false);
}

/* A one-page ring wraps many times (a run makes ~700 bytes of records);
 * records that straddle its end are copied whole, so every exec is seen.
 * Other work on the machine can overflow so small a ring: then the LOST
 * records must account for exactly what the kernel reported lost. */
#define WRAP_RUNS 24

static uint64_t lost_in_capture(const struct hostinfo_readback *rb)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_lost *l = &rb->v[i].rec.lost;

		if (rb->v[i].rec.type != CAP_REC_LOST)
			continue;
		cr_assert_eq(l->kind, CAP_KIND_SIDEBAND);
		cr_assert_eq(l->reason, CAP_LOST_SIDEBAND);
		n += l->count;
	}
	return n;
}

Test(hostinfo_sideband, small_ring_wraps)
{
	char prog[PATH_MAX];
	struct procmaps *pm;
	struct sideband *sb;
	struct hostinfo_readback rb;
	struct capture cap;
	pid_t child[WRAP_RUNS];
	uint64_t lost;
	int i, seen = 0;

	hostinfo_build_prog("wrap_prog", "-Wl,--build-id=sha1", 1, prog, sizeof(prog));
	sb = open_sideband(1);
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	for (i = 0; i < WRAP_RUNS; i++)
		run_and_drain(sb, &cap, pm, prog, true, &child[i]);
	lost = sideband__lost(sb);
	sideband__free(sb);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	for (i = 0; i < WRAP_RUNS; i++) {
		if (find_thread(&rb, (uint32_t)child[i], CAP_THREAD_EXEC) &&
		    find_mapping(&rb, (uint32_t)child[i], prog, CAP_MAP_FROM_SIDEBAND))
			seen++;
	}
	cr_assert_eq(lost_in_capture(&rb), lost);
	/* info, not a warning: Criterion's runner exits 1 after any warning,
	 * so a busy machine would fail `make test` with every test passed */
	if (lost)
		cr_log_info("busy machine: %llu side-band records lost, %d/%d runs seen",
			    (unsigned long long)lost, seen, WRAP_RUNS);
	else
		cr_assert_eq(seen, WRAP_RUNS);
	cr_assert_gt(seen, 0);
	hostinfo_rb_free(&rb);
}

Test(hostinfo_sideband, bad_arguments)
{
	struct sideband *sb = (void *)1;
	int cpu = 0;

	cr_assert_eq(sideband__open(&cpu, 1, 3, 0, &sb), CAP_ERR_INVAL);
	cr_assert_null(sb);
	cr_assert_eq(sideband__open(&cpu, 0, 4, 0, &sb), CAP_ERR_INVAL);
	cr_assert_eq(sideband__open(&cpu, 1, 0, 0, &sb), CAP_ERR_INVAL);
}

static const struct cap_mapping *nth_mapping(const struct hostinfo_readback *rb, int n)
{
	size_t i;

	for (i = 0; i < rb->n; i++)
		if (rb->v[i].rec.type == CAP_REC_MAPPING && n-- == 0)
			return &rb->v[i].rec.mapping;
	cr_assert_fail("no MAPPING #%d", n);
	return NULL;
}

/* Without a map_files entry (wrong range) the file is found under
 * /proc/PID/root, unless it was deleted: then the file now at that path is
 * another one and no build ID is better than a wrong one. */
Test(hostinfo_procmaps, add_root_fallback_and_deleted)
{
	struct cap_mapping in = { .time = 1, .start = 0x1000, .end = 0x2000,
				  .pid = (uint32_t)getpid(), .flags = CAP_MAP_FROM_SIDEBAND };
	const struct cap_mapping *m;
	char libc[PATH_MAX], deleted[PATH_MAX + 16];
	struct procmaps *pm;
	struct hostinfo_readback rb;
	struct capture cap;
	uint64_t s, e;

	cr_assert(own_mapping("libc.so", libc, sizeof(libc), &s, &e));
	snprintf(deleted, sizeof(deleted), "%s (deleted)", libc);
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_eq(procmaps__add(pm, &in, libc), 0);
	in.time = 2;
	cr_assert_eq(procmaps__add(pm, &in, deleted), 0);
	in.time = 3; /* the real range: map_files reaches even a deleted file */
	in.start = s;
	in.end = e;
	cr_assert_eq(procmaps__add(pm, &in, deleted), 0);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);

	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_MAPPING), 3);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_STRING), 1, "one path, suffix stripped");
	m = nth_mapping(&rb, 0);
	cr_assert_eq(m->time, 1);
	assert_buildid(m, libc);
	m = nth_mapping(&rb, 1);
	cr_assert_eq(m->time, 2);
	cr_assert_str_eq(hostinfo_rb_string(&rb, m->path_id), libc);
	cr_assert_eq(m->build_id_size, 0);
	m = nth_mapping(&rb, 2);
	cr_assert_eq(m->time, 3);
	assert_buildid(m, libc);
	hostinfo_rb_free(&rb);
}

/* A rename (prctl) is a THREAD record without the exec flag; the EXIT of
 * the process drops its state. */
Test(hostinfo_sideband, rename_and_exit)
{
	char src[PATH_MAX], prog[PATH_MAX], cmd[PATH_MAX * 3];
	const struct cap_thread *exec, *renamed = NULL;
	struct hostinfo_readback rb;
	struct procmaps *pm;
	struct sideband *sb;
	struct capture cap;
	pid_t child;
	size_t i;
	int status;

	snprintf(src, sizeof(src), "%s/renamer.c", hostinfo_tmpdir);
	snprintf(prog, sizeof(prog), "%s/renamer", hostinfo_tmpdir);
	hostinfo_write_file(src, "#include <sys/prctl.h>\n#include <time.h>\n"
			    "int main(void)\n{\n\tstruct timespec ts = { 0, 200000000 };\n\n"
			    "\tnanosleep(&ts, 0);\n\tprctl(PR_SET_NAME, \"renamed-x\");\n"
			    "\tnanosleep(&ts, 0);\n\treturn 0;\n}\n");
	snprintf(cmd, sizeof(cmd), "cc -O1 -o '%s' '%s'", prog, src);
	cr_assert_eq(system(cmd), 0);
	sb = open_sideband(64);
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	child = spawn(prog);
	wait_mapped(child, prog);
	cr_assert_eq(procmaps__ensure(pm, (uint32_t)child, mono_ns()), 0);
	cr_assert(procmaps__known(pm, (uint32_t)child));
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert_geq(sideband__drain(sb, cap.w, pm), 0);
	cr_assert_not(procmaps__known(pm, (uint32_t)child), "EXIT dropped the pid");
	sideband__free(sb);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	exec = find_thread(&rb, (uint32_t)child, CAP_THREAD_EXEC);
	cr_assert_not_null(exec);
	cr_assert_str_eq(exec->comm, "renamer");
	for (i = 0; i < rb.n; i++) {
		const struct cap_thread *t = &rb.v[i].rec.thread;

		if (rb.v[i].rec.type == CAP_REC_THREAD && t->tid == (uint32_t)child &&
		    !strcmp(t->comm, "renamed-x"))
			renamed = t;
	}
	cr_assert_not_null(renamed, "THREAD for the rename");
	cr_assert_eq(renamed->flags, 0);
	cr_assert_gt(renamed->time, exec->time + 150000000ull, "200 ms after the exec");
	hostinfo_rb_free(&rb);
}
