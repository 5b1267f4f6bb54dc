// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end, `record --call-graph dwarf`: the real recorder on workloads
 * built without frame pointers (tests/workloads/nofp_*, see the Makefile)
 * and on Debian's python3.11, each stack read back with `stkrec script
 * --folded -U` and checked against the whole chain of functions the
 * program calls. The chains are those `perf record --call-graph dwarf`
 * shows for the same programs, with stkrec's names for glibc's aliases:
 * at one address stkrec names the global symbol, then the weak, then the
 * local one, each group by name (sym/elfsym.c), where perf prints another
 * (__GI___nanosleep, ___pthread_mutex_lock, __libc_pwrite64, clone3).
 * perf also shows glibc's inlined functions (lll_mutex_lock_optimized,
 * futex_wait), which stkrec shows only with --inline.
 *
 * Most workloads are recorded in both modes: dwarf must unwind >= 95% of the
 * events whole, and the default mode (frame pointers) < 5% of them, so the
 * tests prove that dwarf makes the difference. One test compares with perf
 * itself. Skips, visibly, without root or BPF (and perf, python3.11).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <regex.h>
#include <linux/bpf.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include "bpf/stkrec.h"
#include "tests/reliability_run.h"
#include "tests/util_report.h"

#define SHARE_WHOLE 95 /* percent of events unwound whole in dwarf mode */
#define SHARE_CUT 5    /* at most this percent of them in fp mode */
#define HZ "499"       /* CPU samples a second */

/* The chains, outermost first (perf script of each workload, names as
 * above). A thread's stack goes on up to clone3, main's to _start. */
#define BURN_CHAIN "start_thread;t_burn;outer;middle;inner"
#define NAP_CHAIN "start_thread;t_nap;waiter;nap;__nanosleep;clock_nanosleep"
#define LOCK_CHAIN "start_thread;t_lock;lock_wait;__pthread_mutex_lock;__GI___lll_lock_wait"
#define DLOPEN_CHAIN "__libc_start_call_main;main;run_lib;lib_outer;lib_burn"
#define EXEC_CHAIN "__libc_start_call_main;main;start_child;child_burn;child_step"
#define WRITE_CHAIN "__libc_start_call_main;main;write_all;write_block;__libc_pwrite"
/* python3.11's main() tail-calls Py_BytesMain: no main frame. The frames
 * between PyRun_StringFlags and PyEval_EvalCode are static functions of a
 * stripped binary (python3.11+0x...). */
#define PY_MAIN \
	"__libc_start_call_main;Py_BytesMain;Py_RunMain;PyRun_SimpleStringFlags;PyRun_StringFlags"
#define PY_EVAL "_PyEval_EvalFrameDefault"

#define PYTHON "/usr/bin/python3.11"
/* Debian's node: V8's JIT code and its embedded builtins (in the node
 * binary, with no CFI) keep frame pointers; the C++ around them has CFI. */
#define NODE "/usr/bin/node"
#define NODE_MAIN "__libc_start_call_main;node::Start(int, char**)"
/* The burners run for 2 s of their own CPU time, not of the clock: beside
 * a load they get as many samples, later. */
static const char node_loop[] =
	"function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s; }\n"
	"const t0 = process.cpuUsage();\n"
	"const used = () => { const u = process.cpuUsage(t0); return u.user + u.system; };\n"
	"while (used() < 2e6) hot(100000);\n";
static const char py_loop[] =
	"import time\n"
	"def work(n):\n"
	"    x = 0\n"
	"    for i in range(n):\n"
	"        x += i * i\n"
	"    return x\n"
	"def spin(s):\n"
	"    end = time.process_time() + s\n"
	"    while time.process_time() < end:\n"
	"        work(10000)\n"
	"def nap(n):\n"
	"    for _ in range(n):\n"
	"        time.sleep(0.01)\n"
	"spin(2)\n"
	"nap(100)\n";

static char *cap, *perf_data;

static void setup(void)
{
	cap = rc_tmpname("unwind");
	perf_data = rc_tmpname("unwind-perf");
	cr_assert(cap && perf_data);
}

static void teardown(void)
{
	unlink(cap);
	unlink(perf_data);
	free(cap);
	free(perf_data);
}

TestSuite(record_unwind, .init = setup, .fini = teardown, .timeout = 120);

/* --- running things ---------------------------------------------------- */

/* All of a file, from its start, as a string. */
static char *slurp_fd(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *s = malloc(len + 1);
	ssize_t n;

	cr_assert_not_null(s);
	n = pread(fd, s, len, 0);
	s[n > 0 ? n : 0] = 0;
	return s;
}

/* Run argv within timeout seconds; its whole stdout, malloc()ed. */
static char *run_all(char *const argv[], double timeout, struct rl_run *r)
{
	int fo, fe;
	pid_t pid;
	char *out;

	memset(r, 0, sizeof(*r));
	pid = rl_spawn(argv, &fo, &fe, 0);
	cr_assert_eq(rl_wait(pid, timeout, r), 0);
	out = slurp_fd(fo);
	rl_slurp_fd(fe, r->err, sizeof(r->err));
	close(fo);
	close(fe);
	cr_assert(!r->timed_out, "%s timed out", argv[0]);
	return out;
}

/* stkrec record -o CAP -F HZ -e EVENTS [--call-graph dwarf] -- CMD...;
 * dwarf false: the default, frame pointers. */
/* mode: --call-graph MODE, or NULL for record's default (dwarf) */
static void record_mode(const char *mode, const char *events, char *const cmd[])
{
	char *argv[32] = { (char *)rl_stkrec(), "record", "-o", cap, "-F", HZ, "-e",
			   (char *)events };
	int i, n = 8;
	struct rl_run r;

	rl_need_bpf();
	if (!mode || !strcmp(mode, "dwarf"))
		rl_need_dwarf();
	if (mode) {
		argv[n++] = "--call-graph";
		argv[n++] = (char *)mode;
	}
	argv[n++] = "--";
	for (i = 0; cmd[i] && n < 31; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	free(run_all(argv, 90, &r));
	cr_assert_eq(rl_code(&r), 0, "stkrec record --call-graph %s -- %s: exit %d: %s",
		     mode ? mode : "(default)", cmd[0], rl_code(&r), r.err);
}

static void record(bool dwarf, const char *events, char *const cmd[])
{
	record_mode(dwarf ? "dwarf" : "fp", events, cmd);
}

/* --- counting stacks ---------------------------------------------------- */

/* Events counted, those whose stack passed, and the most common others. */
#define MAX_MISS 8
struct tally {
	unsigned n, hit;
	struct {
		char *stack;
		unsigned count;
	} miss[MAX_MISS];
	char text[2048]; /* the misses, for the failure message */
};

/* The frames of chain, in order, are the end of stack (';' between). */
static bool ends_with(const char *stack, const char *chain)
{
	size_t s = strlen(stack), c = strlen(chain);

	return s >= c && !strcmp(stack + s - c, chain) && (s == c || stack[s - c - 1] == ';');
}

/* The frames of chain, in order, are somewhere in stack. */
static bool contains(const char *stack, const char *chain)
{
	size_t c = strlen(chain);
	const char *p;

	for (p = strstr(stack, chain); p; p = strstr(p + 1, chain))
		if ((p == stack || p[-1] == ';') && (p[c] == 0 || p[c] == ';'))
			return true;
	return false;
}

static void note_miss(struct tally *t, const char *stack)
{
	int i;

	for (i = 0; i < MAX_MISS && t->miss[i].stack; i++) {
		if (!strcmp(t->miss[i].stack, stack)) {
			t->miss[i].count++;
			return;
		}
	}
	if (i < MAX_MISS) {
		t->miss[i].stack = strdup(stack);
		t->miss[i].count = 1;
	}
}

/* The misses, most common first, into t->text; frees them. */
static const char *misses(struct tally *t)
{
	size_t len = 0;
	int i, j, best;

	t->text[0] = 0;
	for (i = 0; i < MAX_MISS; i++) {
		for (best = -1, j = 0; j < MAX_MISS; j++)
			if (t->miss[j].stack &&
			    (best < 0 || t->miss[j].count > t->miss[best].count))
				best = j;
		if (best < 0)
			break;
		if (len < sizeof(t->text))
			len += snprintf(t->text + len, sizeof(t->text) - len, "\n  %u x %s",
					t->miss[best].count, t->miss[best].stack);
		free(t->miss[best].stack);
		t->miss[best].stack = NULL;
	}
	return t->text;
}

/* Which events of the capture: `stkrec script --folded -e KIND --comm COMM
 * [--state STATE]`; of those, the lines whose whole stack contains
 * kernel_has (NULL: all). */
struct sel {
	const char *kind, *comm;
	const char *state;      /* off-CPU task state mask, or NULL */
	const char *kernel_has; /* what the kernel stack must contain */
};

typedef bool (*stack_pred)(const char *stack, const char *chain);

/* stkrec script --folded of the selected events; user: -U. */
static char *script(const struct sel *s, bool user)
{
	char *argv[16] = { (char *)rl_stkrec(), "script", "-i", cap, "--folded", "-e",
			   (char *)s->kind, "--comm", (char *)s->comm };
	struct rl_run r;
	int n = 9;
	char *out;

	if (s->state) {
		argv[n++] = "--state";
		argv[n++] = (char *)s->state;
	}
	if (user)
		argv[n++] = "-U";
	argv[n] = NULL;
	out = run_all(argv, 60, &r);
	cr_assert_eq(rl_code(&r), 0, "stkrec script: exit %d: %s", rl_code(&r), r.err);
	return out;
}

/* The next line of *p (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **p)
{
	char *line = *p, *nl;

	if (!*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl)
		*nl++ = 0;
	*p = nl ? nl : line + strlen(line);
	return line;
}

/* The stack of a `script --folded` line of kind: what follows the
 * kind's fixed fields ("cpu: ", "offcpu: N us state S ", "bio: N bytes
 * OP DISK MAJ:MIN sector N lat N us "). Not the last space-separated
 * field: C++ names hold spaces. */
static char *stack_of(char *line, const char *kind)
{
	char tag[32];
	char *p;
	int skip = !strcmp(kind, "offcpu") ? 4 : !strcmp(kind, "bio") ? 10 : 0;

	snprintf(tag, sizeof(tag), ": %s: ", kind);
	p = strstr(line, tag);
	cr_assert_not_null(p, "not a %s line: %s", kind, line);
	for (p += strlen(tag); skip--; p++) {
		p = strchr(p, ' ');
		cr_assert_not_null(p, "a short %s line: %s", kind, line);
	}
	return p;
}

/* Each selected event's user stack (the rest of its -U line; a
 * stack not taken, "[Missed User Stack]", fails every predicate). Events
 * are chosen by their kernel stacks, which the user unwinder cannot
 * change: the same events in both modes. */
static void tally(const struct sel *s, stack_pred ok, const char *chain, struct tally *t)
{
	char *uout = script(s, true), *kout = s->kernel_has ? script(s, false) : NULL;
	char *up = uout, *kp = kout, *line, *kline = NULL, *stack;

	memset(t, 0, sizeof(*t));
	while ((line = next_line(&up))) {
		if (kout) {
			kline = next_line(&kp);
			cr_assert_not_null(kline, "stkrec script: fewer events without -U");
		}
		stack = stack_of(line, s->kind);
		if (kline && !strstr(kline, s->kernel_has))
			continue;
		t->n++;
		if (ok(stack, chain))
			t->hit++;
		else
			note_miss(t, stack);
	}
	free(uout);
	free(kout);
}

/* dwarf: >= SHARE_WHOLE% of at least min events pass; fp: < SHARE_CUT%.
 * The minimums are ~1/3 of what an idle machine records. */
static void expect_share(bool dwarf, const struct sel *s, stack_pred ok, const char *chain,
			 unsigned min)
{
	const char *how = ok == ends_with ? "end with" : "contain";
	struct tally t;

	tally(s, ok, chain, &t);
	cr_log_info("%s %s events of %s: %u of %u %s %s", dwarf ? "dwarf" : "fp", s->kind,
		    s->comm, t.hit, t.n, how, chain);
	cr_assert_geq(t.n, min, "%s: %u %s events of %s recorded, expected >= %u",
		      dwarf ? "dwarf" : "fp", t.n, s->kind, s->comm, min);
	if (dwarf)
		cr_assert_geq(t.hit * 100, t.n * SHARE_WHOLE,
			      "dwarf: %u of %u %s events of %s %s %s (need %d%%); the others:%s",
			      t.hit, t.n, s->kind, s->comm, how, chain, SHARE_WHOLE, misses(&t));
	else
		cr_assert_lt(t.hit * 100, t.n * SHARE_CUT,
			     "fp: %u of %u %s events of %s %s %s: frame pointers should not "
			     "see these frames (need < %d%%)", t.hit, t.n, s->kind, s->comm, how,
			     chain, SHARE_CUT);
	misses(&t);
}

/* fp mode still samples the right place: the innermost frame. */
static void expect_leaf(const struct sel *s, const char *leaf, unsigned min)
{
	struct tally t;

	tally(s, ends_with, leaf, &t);
	cr_assert_geq(t.n, min, "%u %s events of %s", t.n, s->kind, s->comm);
	cr_assert_geq(t.hit * 100, t.n * SHARE_WHOLE,
		      "%u of %u %s events of %s end in %s (need %d%%); the others:%s", t.hit, t.n,
		      s->kind, s->comm, leaf, SHARE_WHOLE, misses(&t));
	misses(&t);
}

/* --- the workloads, in both modes --------------------------------------- */

static void threads_cpu(bool dwarf)
{
	struct sel burn = { .kind = "cpu", .comm = "nofp-burn" };
	char wl[PATH_MAX];

	rl_workload("nofp_threads", wl);
	record(dwarf, "cpu", (char *[]){ wl, "3000", NULL });
	expect_share(dwarf, &burn, ends_with, BURN_CHAIN, 300);
	if (!dwarf)
		expect_leaf(&burn, "inner", 300);
}

static void threads_offcpu(bool dwarf)
{
	struct sel nap = { .kind = "offcpu", .comm = "nofp-nap", .state = "1" };
	struct sel lock = { .kind = "offcpu", .comm = "nofp-lock", .state = "1" };
	char wl[PATH_MAX];

	rl_workload("nofp_threads", wl);
	record(dwarf, "offcpu", (char *[]){ wl, "2000", "50", NULL });
	/* ~10 ms naps: ~190 of them; 50 ms holds: ~38 waits */
	expect_share(dwarf, &nap, ends_with, NAP_CHAIN, 100);
	expect_share(dwarf, &lock, ends_with, LOCK_CHAIN, 20);
	if (!dwarf) {
		expect_leaf(&nap, "clock_nanosleep", 100);
		expect_leaf(&lock, "__GI___lll_lock_wait", 20);
	}
}

/* The library is loaded 0.5 s after the recording started. */
static void dlopen_cpu(bool dwarf)
{
	struct sel s = { .kind = "cpu", .comm = "nofp_dlopen" };
	char wl[PATH_MAX], lib[PATH_MAX];

	rl_workload("nofp_dlopen", wl);
	rl_workload("nofp_lib.so", lib);
	record(dwarf, "cpu", (char *[]){ wl, lib, "500", "2000", NULL });
	expect_share(dwarf, &s, ends_with, DLOPEN_CHAIN, 200);
	if (!dwarf)
		expect_leaf(&s, "lib_burn", 200);
}

/* O_DIRECT writes of 64 KiB, each write one request: the block I/O
 * records carry the writer's stacks at submission, and its waits for the
 * writes (off-CPU, uninterruptible, in pwrite) have the same chain. */
static void odirect_io(bool dwarf)
{
	struct sel s = { .kind = "offcpu", .comm = "nofp_odirect", .state = "2",
			 .kernel_has = "_sys_pwrite64;" };
	struct sel bio = { .kind = "bio", .comm = "nofp_odirect" };
	struct sel bio_w = { .kind = "bio", .comm = "nofp_odirect",
			     .kernel_has = "_sys_pwrite64;" };
	char wl[PATH_MAX], path[PATH_MAX], *out;
	struct statfs fs;

	rl_workload("nofp_odirect", wl);
	if (statfs("/var/tmp", &fs) || fs.f_type == 0x01021994 /* TMPFS_MAGIC */)
		cr_skip_test("/var/tmp is not on a block device");
	snprintf(path, sizeof(path), "/var/tmp/stkrec-unwind-%d.tmp", getpid());
	record(dwarf, "offcpu,bio", (char *[]){ wl, path, "64", "65536", NULL });
	unlink(path);
	out = script(&bio, false);
	cr_assert_geq(rl_count_lines_with(out, ": bio: 65536 bytes W "), 32, "of 64 writes:\n%s",
		      out);
	free(out);
	expect_share(dwarf, &s, ends_with, WRITE_CHAIN, 32);
	expect_share(dwarf, &bio_w, ends_with, WRITE_CHAIN, 32);
	if (!dwarf) {
		expect_leaf(&s, "__libc_pwrite", 32);
		expect_leaf(&bio_w, "__libc_pwrite", 32);
	}
}

Test(record_unwind, dwarf_cpu_thread_through_start_thread)
{
	threads_cpu(true);
}

Test(record_unwind, fp_cpu_thread_is_cut)
{
	threads_cpu(false);
}

Test(record_unwind, dwarf_offcpu_nap_and_mutex)
{
	threads_offcpu(true);
}

Test(record_unwind, fp_offcpu_nap_and_mutex_are_cut)
{
	threads_offcpu(false);
}

Test(record_unwind, dwarf_library_dlopened_while_recording)
{
	dlopen_cpu(true);
}

Test(record_unwind, fp_library_dlopened_is_cut)
{
	dlopen_cpu(false);
}

Test(record_unwind, dwarf_odirect_write_stacks)
{
	odirect_io(true);
}

Test(record_unwind, fp_odirect_write_stacks_are_cut)
{
	odirect_io(false);
}

/* Samples in a signal handler: the stack crosses the signal frame
 * (__restore_rt, whose rule reads the registers the kernel saved) into the
 * function the signal interrupted, then on to main. */
static bool crosses_signal(const char *stack, const char *chain)
{
	return contains(stack, "__libc_start_call_main;main;looper;pause") &&
	       contains(stack, chain);
}

Test(record_unwind, dwarf_signal_frame_is_crossed)
{
	struct sel s = { .kind = "cpu", .comm = "nofp_signal" };
	char wl[PATH_MAX];

	rl_workload("nofp_signal", wl);
	record(true, "cpu", (char *[]){ wl, "2000", NULL });
	expect_share(true, &s, crosses_signal, "on_alarm;sig_burn", 40);
}

Test(record_unwind, fp_signal_frame_is_cut)
{
	struct sel s = { .kind = "cpu", .comm = "nofp_signal" };
	char wl[PATH_MAX];

	rl_workload("nofp_signal", wl);
	record(false, "cpu", (char *[]){ wl, "2000", NULL });
	expect_share(false, &s, crosses_signal, "on_alarm;sig_burn", 40);
}

/* A child that burns CPU, then execs another fp-less program in place:
 * the new image's tables replace the old ones in the same process. */
Test(record_unwind, dwarf_exec_child)
{
	struct sel child = { .kind = "cpu", .comm = "nofp_exec" };
	struct sel burn = { .kind = "cpu", .comm = "nofp-burn" };
	char wl[PATH_MAX], threads[PATH_MAX];

	rl_workload("nofp_exec", wl);
	rl_workload("nofp_threads", threads);
	record(true, "cpu", (char *[]){ wl, "1000", threads, "2000", NULL });
	expect_share(true, &child, ends_with, EXEC_CHAIN, 100);
	expect_share(true, &burn, ends_with, BURN_CHAIN, 200);
}

/* The whole system recorded; the workload started once the recorder says
 * it records (every program attached), so its tables come from its exec,
 * not from /proc at start. */
Test(record_unwind, dwarf_process_started_after_recording)
{
	char *rec[] = { (char *)rl_stkrec(), "record", "-o", cap, "-a", "-F", HZ, "-e", "cpu",
			"--call-graph", "dwarf", "-d", "60", NULL };
	struct sel burn = { .kind = "cpu", .comm = "nofp-burn" };
	char wl[PATH_MAX];
	struct rl_run r = { 0 }, w;
	int fo, fe;
	pid_t pid;

	rl_workload("nofp_threads", wl);
	rl_need_bpf();
	rl_need_dwarf();
	pid = rl_spawn(rec, &fo, &fe, 0);
	rl_wait_recording(pid, fe);
	free(run_all((char *[]){ wl, "2000", NULL }, 30, &w));
	cr_assert_eq(rl_code(&w), 0, "nofp_threads: %s", w.err);
	kill(pid, SIGINT);
	cr_assert_eq(rl_wait(pid, 60, &r), 0);
	rl_slurp_fd(fe, r.err, sizeof(r.err));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(&r), 0, "stkrec record -a: exit %d: %s", rl_code(&r), r.err);
	/* 2 s at 499 Hz: ~1000 samples on an idle machine */
	expect_share(true, &burn, ends_with, BURN_CHAIN, 200);
}

/* Debian's python3.11 (no frame pointers, stripped): CPU samples of the
 * interpreter loop and its time.sleep() waits reach main's caller through
 * the eval loop. */
static void python(bool dwarf)
{
	struct sel cpu = { .kind = "cpu", .comm = "python3.11" };
	struct sel sleep = { .kind = "offcpu", .comm = "python3.11", .state = "1",
			     .kernel_has = ";hrtimer_nanosleep;" };

	if (access(PYTHON, X_OK))
		cr_skip_test("no %s here", PYTHON);
	record(dwarf, "cpu,offcpu", (char *[]){ PYTHON, "-c", (char *)py_loop, NULL });
	expect_share(dwarf, &cpu, contains, PY_MAIN, 200);
	/* time.sleep(): clock_nanosleep, the leaf in both modes (fp: alone) */
	expect_share(dwarf, &sleep, contains, PY_MAIN, 40);
	if (dwarf) {
		expect_share(true, &cpu, contains, PY_EVAL, 200);
		expect_share(true, &sleep, contains, PY_EVAL, 40);
	}
}

Test(record_unwind, dwarf_python_loop_and_sleep)
{
	python(true);
}

Test(record_unwind, fp_python_is_cut)
{
	python(false);
}

/* The number after key (as "max_entries:") in fdinfo text, 0 if none. */
static unsigned long fdinfo_field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoul(p + strlen(key), NULL, 0) : 0;
}

/* The recorder's row chunks now (bpf/stkrec.h: 1 MiB arrays, mmap()able,
 * of 8-byte rows), from its fds' fdinfo; *big counts any larger array of
 * rows (the single 32 MiB one of before). */
static int row_chunks(pid_t pid, int *big)
{
	char dir[64], path[PATH_MAX], info[1024];
	unsigned long entries;
	struct dirent *d;
	int n = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", pid);
	dp = opendir(dir);
	if (!dp)
		return -1;
	while ((d = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		info[0] = 0;
		rl_cat_proc(path, info, sizeof(info));
		if (!strstr(info, "map_type:") ||
		    fdinfo_field(info, "map_type:") != BPF_MAP_TYPE_ARRAY ||
		    fdinfo_field(info, "value_size:") != 8 ||
		    !(fdinfo_field(info, "map_flags:") & BPF_F_MMAPABLE))
			continue;
		entries = fdinfo_field(info, "max_entries:");
		n += entries == STKREC_CFI_CHUNK_ROWS;
		*big += entries > STKREC_CFI_CHUNK_ROWS;
	}
	closedir(dp);
	return n;
}

/*
 * The kernel holds the rows the files need, by the mebibyte: while
 * python3.11 naps, the recorder holds ceil(rows / 128Ki) chunks of 1 MiB,
 * rows counted by `stkrec info` afterwards, and no array of rows larger
 * than a chunk. Python's 138k rows (Debian 12) cross a chunk's end, and
 * its stacks still unwind whole.
 */
Test(record_unwind, rows_held_by_the_mebibyte_as_files_need_them)
{
	char *rec[] = { (char *)rl_stkrec(), "record", "-o", cap, "-e", "offcpu", "--",
			PYTHON, "-c", (char *)py_loop, NULL };
	struct sel sleep = { .kind = "offcpu", .comm = "python3.11", .state = "1",
			     .kernel_has = ";hrtimer_nanosleep;" };
	char *info[] = { (char *)rl_stkrec(), "info", cap, NULL };
	int fo, fe, big = 0, most = 0, n;
	unsigned long files, rows;
	struct rl_run r = { 0 };
	const char *p;
	pid_t pid;

	if (access(PYTHON, X_OK))
		cr_skip_test("no %s here", PYTHON);
	rl_need_bpf();
	rl_need_dwarf();
	pid = rl_spawn(rec, &fo, &fe, 0);
	rl_wait_recording(pid, fe);
	while (rl_running(pid)) {
		n = row_chunks(pid, &big);
		most = n > most ? n : most;
		usleep(20000);
	}
	cr_assert_eq(rl_wait(pid, 60, &r), 0);
	rl_slurp_fd(fe, r.err, sizeof(r.err));
	close(fo);
	close(fe);
	cr_assert_eq(rl_code(&r), 0, "stkrec record: exit %d: %s", rl_code(&r), r.err);
	rl_run(info, 60, 0, &r);
	p = strstr(r.out, "unwind tables: ");
	cr_assert(p && sscanf(p, "unwind tables: %lu files, %lu rows", &files, &rows) == 2,
		  "no unwind tables line in:\n%s", r.out);
	cr_expect_gt(rows, STKREC_CFI_CHUNK_ROWS, "%lu rows fill one chunk: nothing crosses", rows);
	cr_expect_eq(most, (rows + STKREC_CFI_CHUNK_ROWS - 1) / STKREC_CFI_CHUNK_ROWS,
		     "%d chunks held for %lu rows of %lu files", most, rows, files);
	cr_expect_eq(big, 0, "%d arrays of rows larger than a chunk", big);
	expect_share(true, &sleep, contains, PY_MAIN, 40);
}

/* A hot JavaScript loop: CPU samples in JIT code (anonymous memory) and
 * in V8's builtins (code in node that no CFI covers) go on by frame
 * pointer, through the builtins, into the C++ frames that CFI describes,
 * up to main's caller. Before the builtins were followed, 98% of these
 * samples ended after the first builtin with the unknown frame. */
Test(record_unwind, dwarf_node_jit_through_frame_pointers)
{
	struct sel cpu = { .kind = "cpu", .comm = "node" };

	if (access(NODE, X_OK))
		cr_skip_test("no %s here", NODE);
	record(true, "cpu", (char *[]){ NODE, "-e", (char *)node_loop, NULL });
	expect_share(true, &cpu, contains, NODE_MAIN, 300);
}


/* --- the same program through perf --call-graph dwarf ------------------- */

/* Where name is on PATH, into out; false if nowhere. */
static bool on_path(const char *name, char *out, size_t len)
{
	const char *p = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";

	while (*p) {
		size_t n = strcspn(p, ":");

		snprintf(out, len, "%.*s/%s", (int)n, p, name);
		if (n && !access(out, X_OK))
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* One frame name as both tools can agree on it: a glibc alias without its
 * "__GI_" and leading underscores (perf: clone3, stkrec: __GI___clone3). */
static void norm_frame(const char *f, size_t n, char *out, size_t len)
{
	if (n > 5 && !strncmp(f, "__GI_", 5)) {
		f += 5;
		n -= 5;
	}
	while (n > 1 && *f == '_') {
		f++;
		n--;
	}
	snprintf(out, len, "%.*s", (int)n, f);
}

/* A folded stack (outermost first, ';'), each frame normalized. */
static void norm_stack(const char *stack, char *out, size_t len)
{
	char f[256];
	size_t o = 0;

	out[0] = 0;
	while (*stack && o < len) {
		size_t n = strcspn(stack, ";");

		norm_frame(stack, n, f, sizeof(f));
		o += snprintf(out + o, len - o, "%s%s", o ? ";" : "", f);
		stack += n + (stack[n] == ';');
	}
}

/* perf script's samples (frames "  ADDR SYM", innermost first; a blank
 * or a header line between samples) whose innermost frame is leaf: their
 * chains, outermost first, normalized, in a tally's miss list. */
static void perf_chains(char *out, const char *leaf, struct tally *t)
{
	char chain[4096], norm[4096], *frames[128], *line;
	int nf = 0, i;
	size_t o;

	memset(t, 0, sizeof(*t));
	do {
		line = next_line(&out);
		if (line && (*line == ' ' || *line == '\t')) {
			/* "\t    11f4 inner" */
			line += strspn(line, " \t");
			line += strcspn(line, " ");
			line += strspn(line, " ");
			if (nf < 128)
				frames[nf++] = line;
			continue;
		}
		/* the end of a sample */
		if (nf && !strcmp(frames[0], leaf)) {
			for (o = 0, i = nf - 1; i >= 0 && o < sizeof(chain); i--)
				o += snprintf(chain + o, sizeof(chain) - o, "%s%s", o ? ";" : "",
					      frames[i]);
			norm_stack(chain, norm, sizeof(norm));
			t->n++;
			note_miss(t, norm);
		}
		nf = 0;
	} while (line);
}

/* The most common chain of a tally's list. */
static const char *dominant(struct tally *t, unsigned *count)
{
	int i, best = 0;

	for (i = 1; i < MAX_MISS && t->miss[i].stack; i++)
		if (t->miss[i].count > t->miss[best].count)
			best = i;
	*count = t->miss[best].count;
	return t->miss[best].stack;
}

static void stkrec_vs(const char *want, struct tally *t)
{
	char norm[4096];
	char *argv[] = { (char *)rl_stkrec(), "script", "-i", cap, "--folded", "-U", "-e", "cpu",
			 "--comm", "nofp-burn", NULL };
	char *out, *line, *save, *stack;
	struct rl_run r;

	memset(t, 0, sizeof(*t));
	out = run_all(argv, 60, &r);
	cr_assert_eq(rl_code(&r), 0, "stkrec script: %s", r.err);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		stack = stack_of(line, "cpu");
		if (!ends_with(stack, "inner"))
			continue;
		norm_stack(stack, norm, sizeof(norm));
		t->n++;
		if (!strcmp(norm, want))
			t->hit++;
		else
			note_miss(t, norm);
	}
	free(out);
}

/* perf and stkrec, both unwinding with .eh_frame, agree on the stacks of
 * the samples of inner(): >= 90% of stkrec's are perf's usual chain. */
Test(record_unwind, dwarf_agrees_with_perf)
{
	char perf[PATH_MAX], wl[PATH_MAX], want[4096];
	char *prec[] = { perf, "record", "-q", "-B", "-o", perf_data, "--call-graph", "dwarf",
			 "-F", HZ, "-e", "cpu-clock:u", "--", wl, "2000", NULL };
	char *pscript[] = { perf, "script", "-i", perf_data, "-F", "comm,ip,sym", "--comms",
			    "nofp-burn", NULL };
	struct tally p, s;
	struct rl_run r;
	unsigned top;
	char *out = NULL;
	int tries;

	rl_workload("nofp_threads", wl);
	rl_need_bpf();
	rl_need_dwarf();
	if (!on_path("perf", perf, sizeof(perf)))
		cr_skip_test("no perf here (linux-perf)");
	free(run_all(prec, 90, &r));
	if (rl_code(&r))
		cr_skip_test("perf cannot record here: exit %d: %s", rl_code(&r), r.err);
	/* perf 6.1's script aborts at random in its build-ID code ("assertion
	 * failed at util/build-id.c"): a few tries, then skip, naming it */
	for (tries = 0; tries < 3; tries++) {
		out = run_all(pscript, 120, &r);
		if (!rl_code(&r))
			break;
		free(out);
		out = NULL;
	}
	if (!out)
		cr_skip_test("perf script failed 3 times (perf's own crash): %s", r.err);
	perf_chains(out, "inner", &p);
	free(out);
	cr_assert_geq(p.n, 200, "perf: %u samples of inner", p.n);
	snprintf(want, sizeof(want), "%s", dominant(&p, &top));
	cr_log_info("perf: %u of %u samples of inner: %s", top, p.n, want);
	misses(&p);
	/* perf itself unwound them: else there is nothing to compare with */
	cr_assert(ends_with(want, BURN_CHAIN), "perf's usual chain of inner: %s", want);

	record(true, "cpu", (char *[]){ wl, "2000", NULL });
	stkrec_vs(want, &s);
	cr_log_info("stkrec: %u of %u samples of inner: %s", s.hit, s.n, want);
	cr_assert_geq(s.n, 200, "stkrec: %u samples of inner", s.n);
	cr_assert_geq(s.hit * 100, s.n * 90,
		      "stkrec: %u of %u samples of inner are perf's chain %s (need 90%%); "
		      "the others:%s", s.hit, s.n, want, misses(&s));
	misses(&s);
}

/* --- what info says ------------------------------------------------------ */

/* info after record --call-graph MODE (NULL: the default) */
static void expect_info_mode(const char *mode, bool dwarf)
{
	char *argv[] = { (char *)rl_stkrec(), "info", cap, NULL };
	const char *want = dwarf ? "^call graph:[ \t]+dwarf( |$)" : "^call graph:[ \t]+fp( |$)";
	char wl[PATH_MAX];
	struct rl_run r;
	regex_t re;

	rl_workload("nofp_threads", wl);
	record_mode(mode, "cpu", (char *[]){ wl, "300", NULL });
	rl_run(argv, 60, 0, &r);
	cr_assert_eq(rl_code(&r), 0, "stkrec info: %s", r.err);
	/* "call graph:   dwarf (user stacks unwound in the kernel ...)" */
	cr_assert_eq(regcomp(&re, want, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
	cr_expect_eq(regexec(&re, r.out, 0, NULL, 0), 0, "no 'call graph: %s' line in:\n%s",
		     dwarf ? "dwarf" : "fp", r.out);
	regfree(&re);
}

Test(record_unwind, info_says_dwarf_by_default)
{
	expect_info_mode(NULL, true);
}

Test(record_unwind, info_says_fp_when_asked)
{
	expect_info_mode("fp", false);
}

/* -K takes no user stacks: the default walks none, loads no rows */
Test(record_unwind, kernel_stacks_only_is_fp)
{
	char wl[PATH_MAX];
	char *rec[] = { (char *)rl_stkrec(), "record", "-o", cap, "-K", "-e", "cpu", "--", wl,
			"300", NULL };
	char *argv[] = { (char *)rl_stkrec(), "info", cap, NULL };
	struct rl_run r;

	rl_workload("nofp_threads", wl);
	rl_need_bpf();
	rl_need_dwarf();
	free(run_all(rec, 90, &r));
	cr_assert_eq(rl_code(&r), 0, "stkrec record -K: %s", r.err);
	rl_run(argv, 60, 0, &r);
	cr_assert_eq(rl_code(&r), 0, "stkrec info: %s", r.err);
	cr_assert_not_null(strstr(r.out, "call graph:   fp"), "%s", r.out);
}

/* --- the workloads themselves ---------------------------------------------- */

/* No function of the workloads' chains sets up a frame pointer: %rbp may
 * be saved as any callee-saved register, never loaded with %rsp. */
static void expect_no_fp(const char *file, const char *const fns[])
{
	char objdump[PATH_MAX], path[PATH_MAX], cur[128] = "", pat[160], *out, *line, *save;
	char *argv[] = { objdump, "-d", "--no-show-raw-insn", path, NULL };
	struct rl_run r;
	int i, seen;

	if (!on_path("objdump", objdump, sizeof(objdump)))
		cr_skip_test("no objdump here (binutils)");
	rl_workload(file, path);
	out = run_all(argv, 60, &r);
	cr_assert_eq(rl_code(&r), 0, "objdump %s: %s", path, r.err);
	for (i = 0; fns[i]; i++) {
		snprintf(pat, sizeof(pat), "<%s>:", fns[i]);
		cr_assert_not_null(strstr(out, pat), "%s: no function %s", file, fns[i]);
	}
	seen = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%*x <%127[^>]>:", cur) == 1)
			continue;
		if (!strstr(line, "%rsp,%rbp"))
			continue;
		for (i = 0; fns[i]; i++)
			cr_assert_str_neq(cur, fns[i], "%s: %s sets up a frame pointer: %s", file,
					  cur, line);
		seen++;
	}
	free(out);
	cr_log_info("%s: %d frame pointer set-ups, none in the tested functions", file, seen);
}

Test(record_unwind, workloads_have_no_frame_pointer)
{
#ifndef __x86_64__
	cr_skip_test("checked on x86-64");
#endif
	expect_no_fp("nofp_threads", (const char *const[]){ "main", "t_burn", "outer", "middle",
		     "inner", "t_nap", "waiter", "nap", "t_hold", "hold", "t_lock", "lock_wait",
		     NULL });
	expect_no_fp("nofp_dlopen", (const char *const[]){ "main", "run_lib", "pause_ms", NULL });
	expect_no_fp("nofp_lib.so", (const char *const[]){ "lib_outer", "lib_burn", NULL });
	expect_no_fp("nofp_exec", (const char *const[]){ "main", "start_child", "child_burn",
		     "child_step", "reap", NULL });
	expect_no_fp("nofp_odirect", (const char *const[]){ "main", "write_all", "write_block",
		     NULL });
}
