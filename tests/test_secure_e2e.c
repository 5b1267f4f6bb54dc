// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Captures that leak nothing they should not, end to end (issue 29): every
 * file record, pack and scrub create is private (0600, under umask 0
 * too), never written through a symlink; JIT maps trusted as perf trusts
 * them; a process's hostile name escaped in every text view; a scrubbed
 * capture reports as the original, without kernel addresses, hostname or
 * home paths.
 */
#include "tests/e2e_dir.h"
#include "tests/util_e2e.h"
#include <inttypes.h>

static void setup(void)
{
	e2e_dir_setup("secure");
}

TestSuite(secure_e2e, .init = setup, .fini = e2e_dir_teardown, .timeout = 120);

static unsigned int mode_of(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(lstat(path, &st), 0, "no %s", path);
	cr_assert(S_ISREG(st.st_mode), "%s: not a regular file", path);
	return st.st_mode & 07777;
}

/* -o FILE (new, and one there before with 0666), every --switch-output
 * file, pack's and scrub's output in place and to -o, all under umask 0. */
Test(secure_e2e, files_created_0600)
{
	char pat[PATH_MAX];
	glob_t g;
	size_t i;

	rl_need_bpf();
	workload("cpuburn", "cpuburn");
	sh("umask 0 && %s record -e cpu -F 99 -o a.cap -- bin/cpuburn 300 25 >/dev/null 2>&1",
	   rl_stkrec());
	cr_assert_eq(mode_of("a.cap"), 0600, "-o: %o", mode_of("a.cap"));
	sh("umask 0 && : > b.cap && chmod 0666 b.cap && %s record -e cpu -F 99 -o b.cap -- "
	   "bin/cpuburn 300 25 >/dev/null 2>&1", rl_stkrec());
	cr_assert_eq(mode_of("b.cap"), 0600, "-o over a 0666 file: %o", mode_of("b.cap"));
	sh("umask 0 && %s record -e cpu -F 99 --switch-output 1s -o sw.cap -- bin/cpuburn 2500 25 "
	   ">/dev/null 2>&1", rl_stkrec());
	snprintf(pat, sizeof(pat), "%s/sw.cap.*", dir);
	cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no --switch-output file");
	cr_assert_geq(g.gl_pathc, 2, "--switch-output wrote %zu files", g.gl_pathc);
	for (i = 0; i < g.gl_pathc; i++)
		cr_expect_eq(mode_of(g.gl_pathv[i] + strlen(dir) + 1), 0600, "%s",
			     g.gl_pathv[i]);
	globfree(&g);
	sh("chmod 0644 a.cap && umask 0 && %s pack a.cap -o p.cap 2>/dev/null && "
	   "%s pack a.cap 2>/dev/null", rl_stkrec(), rl_stkrec());
	cr_assert_eq(mode_of("p.cap"), 0600, "pack -o: %o", mode_of("p.cap"));
	cr_assert_eq(mode_of("a.cap"), 0600, "pack in place: %o", mode_of("a.cap"));
	sh("chmod 0644 a.cap && umask 0 && %s scrub a.cap -o sc.cap 2>/dev/null && "
	   "%s scrub --paths a.cap -o a.cap 2>/dev/null", rl_stkrec(), rl_stkrec());
	cr_assert_eq(mode_of("sc.cap"), 0600, "scrub -o: %o", mode_of("sc.cap"));
	cr_assert_eq(mode_of("a.cap"), 0600, "scrub in place: %o", mode_of("a.cap"));
}

/* -o through a symlink: refused, its target untouched. */
Test(secure_e2e, output_not_through_a_symlink)
{
	struct res r;

	rl_need_bpf();
	workload("cpuburn", "cpuburn");
	sh("echo precious > target && ln -s target link.cap");
	r = stkrec("record -e cpu -F 99 -o link.cap -- bin/cpuburn 100 25");
	cr_assert_neq(r.code, 0, "record -o a symlink succeeded");
	res_free(&r);
	sh("test \"$(cat target)\" = precious");
}

/* Every byte of text is printable, a newline ending each line, or (tab)
 * one of the view's own tabs; what is left of it after its last newline
 * is nothing. */
static void expect_one_line_rows(const char *text, const char *what, bool tabs)
{
	const unsigned char *p;
	size_t n = strlen(text);

	for (p = (const unsigned char *)text; *p; p++) {
		if (*p == '\n' || (tabs && *p == '\t'))
			continue;
		cr_expect(*p >= 0x20 && *p != 0x7f, "%s: byte 0x%02x at %td:\n%s", what, *p,
			  (const char *)p - text, text);
		if (*p < 0x20 || *p == 0x7f)
			return;
	}
	cr_expect(!n || text[n - 1] == '\n', "%s: last line not ended", what);
}

/* A process named "ev\033[31mil\nX;Y 9", run from a binary whose path
 * holds an escape and a newline too: through every text view, each row
 * one line, the name escaped the same way everywhere. */
Test(secure_e2e, hostile_names_escaped_in_every_text_view)
{
	static const struct {
		const char *args;
		const char *want;   /* the name as the view prints it */
		bool tabs;
	} views[] = {
		{ "report -i e.cap", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap -g", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap -e cpu --sort comm,pid,dso,sym", "prog\\x1b[1mX\\x0aY", false },
		{ "report -i e.cap -e cpu --sort comm,dso,sym -g", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "script -i e.cap", "ev\\x1b[31mil\\x0aX;Y 9", true },
		{ "report -i e.cap --top-waits", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap --chain %d", "ev\\x1b[31mil\\x0aX;Y 9", false },
		{ "report -i e.cap --folded", "ev\\x1b[31mil X:Y 9;", false },
		{ "report -i e.cap --folded -e cpu --pid", "ev\\x1b[31mil X:Y 9-", false },
		{ "report -i e.cap --folded --wakers", "ev\\x1b[31mil X:Y 9", false },
		{ "diff -e offcpu f.cap e.cap", "ev\\x1b[31mil X:Y 9;", false },
		{ "diff -e cpu f.cap e.cap", "ev\\x1b[31mil X:Y 9;", false },
		{ "info e.cap", "prog\\x1b[1mX\\x0aY", false },
	};
	char args[256], *wout;
	struct res r;
	size_t i;
	int pid;

	rl_need_bpf();
	workload("evilname", "evilname");
	sh("cp bin/evilname \"bin/prog$(printf '\\033[1mX\\nY')\"");
	r = stkrec("record -e offcpu,cpu,wakeup -F 499 -o e.cap -- "
		   "\"bin/prog$(printf '\\033[1mX\\nY')\" 600");
	cr_assert_eq(r.code, 0, "record: %s", r.err);
	wout = r.out;
	free(r.err);
	pid = (int)e2e_value_of(wout, "pid");
	free(wout);
	free(record("-e offcpu,cpu -F 499 -o f.cap -- \"bin/prog$(printf '\\033[1mX\\nY')\" 200"));
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		snprintf(args, sizeof(args), views[i].args, pid);
		r = stkrec("%s", args);
		cr_expect_eq(r.code, 0, "%s: exit %d: %s", args, r.code, r.err);
		expect_one_line_rows(r.out, args, views[i].tabs);
		expect_has(r.out, views[i].want, args);
		cr_expect_null(strstr(r.out, "\nX;Y 9"), "%s: a forged row", args);
		res_free(&r);
	}
}

/* `record` of jitspin MODE into MODE.cap; its pid. The map it leaves in
 * /tmp is removed at once. */
static int record_jitspin(const char *mode)
{
	char args[128], *out;
	int pid;

	snprintf(args, sizeof(args), "-e cpu -F 499 -o %s.cap -- bin/jitspin %s 800", mode, mode);
	out = record(args);
	pid = (int)e2e_value_of(out, "pid");
	free(out);
	sh("rm -f /tmp/perf-%d.map /tmp/stkrec-jitspin-%d.real", pid, pid);
	cr_assert_gt(pid, 0);
	return pid;
}

/* jitspin in this test's directory, and BPF; skips where either cannot be. */
static void need_jitspin(void)
{
#ifndef __x86_64__
	cr_skip_test("jitspin's loop is x86-64 code");
#endif
	rl_need_bpf();
	workload("jitspin", "jitspin");
}

/* perf's rules: a map another user planted for a root process, or a
 * symlink, is refused, counted and named in info; the process's own map
 * (the process dropped to nobody: its user's, not root's) names its code. */
Test(secure_e2e, jit_maps_trusted_as_perf_trusts_them)
{
	static const struct {
		const char *mode;
		const char *why;   /* NULL: used */
	} cases[] = {
		{ "nobody", "owned by neither the process's user nor root" },
		{ "symlink", "a symlink or not a regular file" },
		{ "self", NULL },
	};
	char want[256];
	struct res r;
	size_t i;
	int pid;

	need_jitspin();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid = record_jitspin(cases[i].mode);
		r = stkrec("report -i %s.cap -e cpu --sort sym", cases[i].mode);
		cr_assert_eq(r.code, 0, "%s", r.err);
		if (cases[i].why)
			cr_expect_null(strstr(r.out, "jit_spin_loop"), "%s: map used:\n%s",
				       cases[i].mode, r.out);
		else
			expect_has(r.out, "[.] jit_spin_loop", cases[i].mode);
		res_free(&r);
		r = stkrec("info %s.cap", cases[i].mode);
		cr_assert_eq(r.code, 0, "%s", r.err);
		if (cases[i].why) {
			expect_has(r.out, "JIT maps refused: 1 ", cases[i].mode);
			snprintf(want, sizeof(want), "  pid %d (jitspin): /tmp/perf-%d.map %s\n", pid,
				 pid, cases[i].why);
			expect_has(r.out, want, cases[i].mode);
		} else {
			cr_expect_null(strstr(r.out, "JIT maps refused"), "%s", r.out);
		}
		res_free(&r);
	}
}

/* A small /proc file into buf; false when it cannot be read. */
static bool read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0;
}

/* The host pid of a process named comm that is pid 1 of its own PID
 * namespace and whose /tmp (its own) holds path: 0 after 30 s. */
static int ns_init_with(const char *comm, const char *path)
{
	char p[PATH_MAX], buf[4096], *ns;
	double end = rl_now() + 30;
	struct dirent *de;
	DIR *d;

	while (rl_now() < end) {
		d = opendir("/proc");
		while (d && (de = readdir(d))) {
			int pid = atoi(de->d_name);

			snprintf(p, sizeof(p), "/proc/%d/status", pid);
			if (pid <= 0 || !read_small(p, buf, sizeof(buf)))
				continue;
			ns = strstr(buf, "\nNSpid:");
			snprintf(p, sizeof(p), "Name:\t%s\n", comm);
			if (strncmp(buf, p, strlen(p)) || !ns || !strstr(ns, "\t1\n"))
				continue;
			snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path);
			if (!access(p, F_OK)) {
				closedir(d);
				return pid;
			}
		}
		if (d)
			closedir(d);
		usleep(20000);
	}
	return 0;
}

/* A process in its own mount and PID namespaces (a container) writes its
 * map in its own /tmp as perf-<its pid there>.map: read through
 * /proc/PID/root with that pid, not refused; the host's /tmp has no such
 * map. (The recorder also reads the map of any process that exits while it
 * records, traced or not: another test's jitspin of another user may be
 * refused in the same capture.) */
Test(secure_e2e, jit_map_read_through_the_process_root)
{
	struct res r;
	char who[64];
	int pid;

	need_jitspin();
	cr_assert_neq(access("/tmp/perf-1.map", F_OK), 0, "a /tmp/perf-1.map on the host");
	/* the binary from the working directory: the new /tmp hides dir */
	sh("unshare --mount --pid --fork sh -c 'mount -t tmpfs tmpfs /tmp && "
	   "exec ./bin/jitspin self 20000' >ns.out 2>&1 &");
	pid = ns_init_with("jitspin", "/tmp/perf-1.map");
	cr_assert_gt(pid, 0, "no jitspin with its own /tmp/perf-1.map in 30 s");
	r = stkrec("record -q -e cpu -F 499 -p %d -d 1.5 -o ns.cap", pid);
	kill(pid, SIGKILL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	res_free(&r);
	cr_assert_neq(access("/tmp/perf-1.map", F_OK), 0, "the map leaked to the host's /tmp");
	r = stkrec("report -i ns.cap -e cpu --sort sym");
	cr_assert_eq(r.code, 0, "%s", r.err);
	expect_has(r.out, "[.] jit_spin_loop", "the container's map");
	res_free(&r);
	r = stkrec("info ns.cap");
	snprintf(who, sizeof(who), "pid %d (jitspin)", pid);
	cr_expect_null(strstr(r.out, who), "%s", r.out);
	res_free(&r);
}

/* Through format/: no kernel address of the scrubbed capture at path is
 * one (offsets from _stext are far below 0xffffffff00000000). */
static void expect_no_kernel_address(const char *path)
{
	const uint64_t high = 0xffffffff00000000ull;
	struct cap_reader *r;
	struct cap_record rec;
	size_t kernel_ips = 0;
	uint16_t i;

	cr_assert_eq(cap_reader__open(path, &r), 0);
	cr_expect(cap_reader__header(r)->features & CAP_FEAT_SCRUBBED);
	while (cap_reader__next(r, &rec) == 1) {
		if (rec.type == CAP_REC_STACK && rec.stack.kind == CAP_STACK_KERNEL) {
			for (i = 0; i < rec.stack.nr; i++, kernel_ips++)
				cr_expect_lt(rec.ips[i], high, "kernel frame %" PRIx64, rec.ips[i]);
		} else if (rec.type == CAP_REC_KSYM) {
			cr_expect_lt(rec.ksym.addr, high, "KSYM %" PRIx64, rec.ksym.addr);
		} else if (rec.type == CAP_REC_KMOD) {
			cr_expect_lt(rec.kmod.base, high, "KMOD %" PRIx64, rec.kmod.base);
		} else if (rec.type == CAP_REC_KERNEL) {
			cr_expect_eq(rec.kernel.stext, 0);
			cr_expect_lt(rec.kernel.sched_text_start, high);
			cr_expect_lt(rec.kernel.lock_text_end, high);
		}
	}
	cr_expect_gt(kernel_ips, 0, "no kernel frame to check");
	cap_reader__close(r);
}

/* This boot's kernel text address as a hex dump or a log would print it:
 * the digits of the unscrubbed capture's _stext above its low 16 bits
 * (KASLR moves it by 2 MiB steps), "ffffffffa3c0" say. Any eight 'f's
 * would also match the capture's own bytes now and then. */
static void kernel_text_hex(const char *name, char *out, size_t n)
{
	char path[PATH_MAX];
	struct cap_reader *r;
	struct cap_record rec;
	uint64_t stext = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(cap_reader__open(path, &r), 0);
	while (!stext && cap_reader__next(r, &rec) == 1) {
		if (rec.type == CAP_REC_KERNEL)
			stext = rec.kernel.stext;
	}
	cap_reader__close(r);
	cr_assert_geq(stext, 0xffffffff00000000ull, "%s: no kernel text address", name);
	snprintf(out, n, "%012" PRIx64, stext >> 16);
}

/* The 48 bytes around raw[at], escaped, for a failure's message. */
static const char *bytes_around(const char *raw, size_t len, size_t at)
{
	static char out[256];
	size_t i = at > 24 ? at - 24 : 0, end = at + 24 < len ? at + 24 : len, o = 0;

	for (; i < end && o + 5 < sizeof(out); i++) {
		unsigned char c = raw[i];

		o += snprintf(out + o, sizeof(out) - o, c >= 32 && c < 127 ? "%c" : "\\x%02x", c);
	}
	return out;
}

/* The bytes of the capture at name and its decompressed bytes hold none of what[] (or,
 * present, all of them). */
static void expect_bytes(const char *name, const char *const *what, size_t n, bool present)
{
	char path[PATH_MAX], *raw;
	const char *at;
	size_t len, i;

	/* the header is a skippable frame, which zstd -d skips: the file too */
	sh("(cat %s && zstd -qdc %s) > %s.raw", name, name, name);
	snprintf(path, sizeof(path), "%s/%s.raw", dir, name);
	raw = rc_slurp(path, &len);
	cr_assert(raw && len > 1000, "%s: nothing decompressed", name);
	for (i = 0; i < n; i++) {
		at = memmem(raw, len, what[i], strlen(what[i]));
		cr_expect_eq(at != NULL, present, "%s: '%s' %s%s", name, what[i],
			     present ? "missing" : "found in: ",
			     at ? bytes_around(raw, len, at - raw) : "");
	}
	free(raw);
}

/* A capture recorded under a hostname of its own (a UTS namespace) from
 * a home directory: scrubbed, it reports the same (but for the header's
 * hostname and command line), with no kernel address, hostname or (with
 * --paths) home directory, even read where /proc/kallsyms is not. */
Test(secure_e2e, scrubbed_capture_reports_the_same)
{
	static const char *const views[] = {
		"report -i %s --symfs empty --folded",
		"report -i %s --symfs empty",
		"report -i %s --symfs empty --top-waits",
	};
	char home[] = "/home/stkrec-scrub-XXXXXX", path[PATH_MAX], args[256], *a, *s;
	char ktext[32];
	const char *secrets[] = { "stkrec-scrub-host", home, ktext };
	size_t i;
	struct res r;

	rl_need_bpf();
	if (!e2e_have("unshare") || !e2e_have("zstd"))
		cr_skip_test("needs unshare and zstd");
	cr_assert_not_null(mkdtemp(home));
	rl_workload("sleeper", path);
	sh("cp %s %s/sleeper", path, home);
	sh("unshare -u sh -c 'hostname stkrec-scrub-host && %s record -e offcpu,cpu -F 499 -o "
	   "a.cap -- %s/sleeper 500 10' >/dev/null 2>&1", rl_stkrec(), home);
	sh("rm -rf %s", home);
	r = stkrec("scrub a.cap -o s.cap");
	cr_assert_eq(r.code, 0, "scrub: %s", r.err);
	res_free(&r);
	r = stkrec("scrub --paths a.cap -o p.cap");
	cr_assert_eq(r.code, 0, "scrub --paths: %s", r.err);
	res_free(&r);
	cr_assert_eq(mode_of("s.cap"), 0600);
	cr_assert_eq(mode_of("p.cap"), 0600);
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		/* the default table's header names the host (on the
		 * "captured on" line; "hostname" with --header) and the
		 * command */
		snprintf(args, sizeof(args), views[i], "a.cap");
		sh("%s %s | grep -v '^# hostname\\|^# captured on\\|^# cmdline' > a.cmp",
		   rl_stkrec(), args);
		snprintf(args, sizeof(args), views[i], "s.cap");
		sh("unshare -m sh -c 'mount --bind /dev/null /proc/kallsyms && %s %s' | "
		   "grep -v '^# hostname\\|^# captured on\\|^# cmdline' > s.cmp", rl_stkrec(), args);
		snprintf(path, sizeof(path), "%s/a.cmp", dir);
		a = rc_slurp(path, NULL);
		snprintf(path, sizeof(path), "%s/s.cmp", dir);
		s = rc_slurp(path, NULL);
		cr_assert(a && s);
		cr_expect_gt(strlen(a), 100, "%s: nothing", views[i]);
		cr_expect_str_eq(s, a, "%s differs scrubbed:\n%s\n--- original:\n%s", views[i], s, a);
		free(a);
		free(s);
	}
	expect_no_kernel_address(strcat(strcpy(path, dir), "/s.cap"));
	expect_no_kernel_address(strcat(strcpy(path, dir), "/p.cap"));
	kernel_text_hex("a.cap", ktext, sizeof(ktext));
	expect_bytes("s.cap", secrets, 1, false);
	expect_bytes("s.cap", secrets + 2, 1, false);
	expect_bytes("p.cap", secrets, 3, false);
	expect_bytes("a.cap", secrets, 2, true); /* else the test proves nothing */
	r = stkrec("info p.cap");
	expect_has(r.out, "scrubbed:     yes (stkrec scrub)", "info");
	expect_has(r.out, "home directories replaced", "info");
	res_free(&r);
	/* pack keeps it scrubbed */
	r = stkrec("pack s.cap -o sp.cap");
	cr_assert_eq(r.code, 0, "pack: %s", r.err);
	res_free(&r);
	expect_no_kernel_address(strcat(strcpy(path, dir), "/sp.cap"));
	r = stkrec("info sp.cap");
	expect_has(r.out, "scrubbed:     yes (stkrec scrub)", "info after pack");
	res_free(&r);
}
