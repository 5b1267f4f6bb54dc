// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Self-contained captures, end to end: the real recorder on the workloads
 * copied into a directory of their own, then that directory deleted and
 * every view run with an empty --symfs (no binary at all, libc included):
 * the output is byte for byte what it was with the binaries there. A
 * binary replaced since is named from the pack, with a note; Node's JIT
 * code is named after its /tmp/perf-PID.map is gone; --no-pack then
 * `stkrec pack` gives the same output as a packed recording and leaves the
 * events alone; a damaged pack is damage like any other (exit 3), the
 * events still read; each --switch-output file has its own pack.
 */
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include "format/capture.h"
#include "tests/e2e_dir.h"

static void setup(void)
{
	e2e_dir_setup("packe2e");
}

TestSuite(pack_e2e, .init = setup, .fini = e2e_dir_teardown, .timeout = 120);

/* Every view, with and without the binaries, the same to the byte. */
Test(pack_e2e, workloads_named_when_no_binary_is_left)
{
	static const struct {
		const char *args;
		const char *names[3];
	} views[] = {
		{ "report -i a.cap --folded", { "sleeper_loop", "pipe_reader_loop" } },
		{ "report -i a.cap -e cpu --sort sym", { "[.] burn_a", "[.] burn_b" } },
		{ "report -i a.cap --top-waits", { "sleeper_loop", "pipe_reader_loop" } },
		{ "report -i a.cap -e cpu --svg -", { "burn_a", "burn_b", "burn_loop" } },
		{ "diff -e cpu a.cap b.cap", { "burn_a", "burn_b" } },
	};
	const size_t n = sizeof(views) / sizeof(views[0]);
	char *before[sizeof(views) / sizeof(views[0])], *after;
	struct res r;
	size_t i, k;

	workload("sleeper", "sleeper");
	workload("cpuburn", "cpuburn");
	workload("mutexwait", "mutexwait");
	workload("pipewait", "pipewait");
	free(record("-e offcpu,cpu -F 499 -o a.cap -- sh -c 'bin/sleeper 300 10; "
		    "bin/cpuburn 500 25; bin/mutexwait 3 4 5; bin/pipewait 10 20'"));
	free(record("-e cpu -F 499 -o b.cap -- bin/cpuburn 500 75"));
	for (i = 0; i < n; i++) {
		before[i] = view(views[i].args, NULL);
		for (k = 0; k < 3 && views[i].names[k]; k++)
			expect_has(before[i], views[i].names[k], views[i].args);
	}
	sh("rm -rf bin");
	for (i = 0; i < n; i++) {
		after = view(views[i].args, "empty");
		cr_assert_str_eq(after, before[i], "%s --symfs empty differs", views[i].args);
		free(after);
		free(before[i]);
	}
	/* -v: every name from the pack, none from a file */
	r = stkrec("report -i a.cap -e cpu -v --symfs empty");
	cr_assert_eq(r.code, 0);
	expect_has(r.err, "0 objects found", "-v");
	expect_has(r.err, "addresses named: 0 from files, ", "-v");
	res_free(&r);
}

Test(pack_e2e, replaced_binary_named_from_the_pack_with_a_note)
{
	struct res r;

	workload("cpuburn", "prog");
	free(record("-e cpu -F 499 -o a.cap -- bin/prog 500 25"));
	free(record("--no-pack -e cpu -F 499 -o b.cap -- bin/prog 500 25"));
	workload("sleeper", "prog"); /* another build ID at the same path */
	r = stkrec("report -i a.cap -e cpu --sort sym");
	cr_assert_eq(r.code, 0, "%s", r.err);
	expect_has(r.out, "[.] burn_a\n", "packed");
	expect_has(r.out, "[.] burn_b\n", "packed");
	expect_has(r.err, "/bin/prog on this host differs from the recorded one (another "
			  "build ID): its frames are named from the capture's symbol pack", "note");
	res_free(&r);
	/* without a pack, as before: offsets, and the file named */
	r = stkrec("report -i b.cap -e cpu --sort sym");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect_null(strstr(r.out, "burn_"), "%s", r.out);
	expect_has(r.out, "[.] prog+0x", "unpacked");
	expect_has(r.err, "/bin/prog did not match its recorded build ID", "unpacked note");
	res_free(&r);
}

/* Lines of text holding both a and b. */
static int lines_with_both(const char *text, const char *a, const char *b)
{
	const char *p = text, *nl;
	char line[4096];
	size_t l;
	int n = 0;

	for (; *p; p += l + (nl != NULL)) {
		nl = strchr(p, '\n');
		l = nl ? (size_t)(nl - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)l, p);
		n += strstr(line, a) && strstr(line, b);
	}
	return n;
}

Test(pack_e2e, node_jit_named_after_its_perf_map_is_gone)
{
	char map[64], want[64], *wout;
	struct res r;
	int pid;

	if (access("/usr/bin/node", X_OK))
		cr_skip_test("no /usr/bin/node (Debian's nodejs)");
	sh("printf '%%s\\n' 'function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) "
	   "s += Math.sqrt(i) * Math.sin(i); return s; }' 'const t = Date.now(); let s = 0;' "
	   "'while (Date.now() - t < 1500) s += hotLoop(100000);' "
	   "'console.log(\"pid=\" + process.pid, s > 0);' > hot.js");
	wout = record("-e cpu -F 499 -o n.cap -- /usr/bin/node --perf-basic-prof hot.js");
	cr_assert(sscanf(wout, "pid=%d", &pid) == 1, "%s", wout);
	free(wout);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	cr_assert_eq(unlink(map), 0, "node wrote no %s", map);
	r = stkrec("report -i n.cap -e cpu --sort dso,sym --symfs empty");
	cr_assert_eq(r.code, 0, "%s", r.err);
	snprintf(want, sizeof(want), "perf-%d.map", pid);
	cr_assert_gt(rl_count_lines_with(r.out, "JS:*hotLoop "), 0, "%s", r.out);
	/* every row of hotLoop in the map (other JS functions may be
	 * sampled too, in rows of their own) */
	cr_assert_eq(rl_count_lines_with(r.out, "JS:*hotLoop "),
		     lines_with_both(r.out, "JS:*hotLoop ", want), "JIT frames not in %s:\n%s",
		     want, r.out);
	res_free(&r);
	r = stkrec("info n.cap");
	cr_assert_eq(r.code, 0);
	cr_assert(strstr(r.out, " JIT entries, ") && !strstr(r.out, ", 0 JIT entries, "),
		  "%s", r.out);
	res_free(&r);
}

/* The map read when node exits: cleaned from /tmp a second later, while
 * the recording goes on, its entries are still in the pack. */
Test(pack_e2e, node_map_read_at_its_exit)
{
	struct res r;

	if (access("/usr/bin/node", X_OK))
		cr_skip_test("no /usr/bin/node (Debian's nodejs)");
	sh("printf '%%s\\n' 'function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) "
	   "s += Math.sqrt(i) * Math.sin(i); return s; }' 'const t = Date.now(); let s = 0;' "
	   "'while (Date.now() - t < 1200) s += hotLoop(100000);' "
	   "'console.log(\"pid=\" + process.pid, s > 0);' > hot.js");
	free(record("-e cpu -F 499 -o n.cap -- sh -c '/usr/bin/node --perf-basic-prof hot.js "
		    ">node.out; sleep 1; P=$(sed -n \"s/^pid=\\([0-9]*\\).*/\\1/p\" node.out); "
		    "rm /tmp/perf-$P.map && sleep 1'"));
	r = stkrec("report -i n.cap -e cpu --sort sym");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_gt(rl_count_lines_with(r.out, "JS:*hotLoop "), 0, "%s", r.out);
	res_free(&r);
}

static const char *const same_views[] = {
	"report -i %s --folded", "report -i %s -e cpu --sort sym -g", "report -i %s --top-waits",
};
#define NR_SAME (sizeof(same_views) / sizeof(same_views[0]))

static char *view_of(const char *fmt, const char *cap, const char *symfs)
{
	char args[256];

	snprintf(args, sizeof(args), fmt, cap);
	return view(args, symfs);
}

/* Each of same_views on cap, with an empty --symfs, is what want holds. */
static void same_without_binaries(const char *cap, char *const *want, const char *when)
{
	char *a;
	size_t i;

	for (i = 0; i < NR_SAME; i++) {
		a = view_of(same_views[i], cap, "empty");
		cr_assert_str_eq(a, want[i], "%s: %s", when, same_views[i]);
		free(a);
	}
}

/* A capture recorded with --no-pack and packed later reads as a packed
 * recording; `stkrec pack` changes no event, and keeps what a pack it
 * replaces named when the binaries are gone. */
Test(pack_e2e, no_pack_then_pack_reads_as_packed)
{
	char *before[NR_SAME], *s1, *s2;
	struct res r;
	size_t i;

	workload("sleeper", "sleeper");
	workload("cpuburn", "cpuburn");
	free(record("--no-pack -e offcpu,cpu -F 499 -o a.cap -- sh -c 'bin/sleeper 300 10; "
		    "bin/cpuburn 500 25'"));
	r = stkrec("info a.cap");
	expect_has(r.out, "symbol pack:  none", "info");
	res_free(&r);
	for (i = 0; i < NR_SAME; i++)
		before[i] = view_of(same_views[i], "a.cap", NULL);
	s1 = view("script -i a.cap", NULL);
	r = stkrec("pack a.cap -o b.cap");
	cr_assert_eq(r.code, 0, "%s", r.err);
	expect_has(r.err, "stkrec: packed b.cap: ", "pack");
	res_free(&r);
	s2 = view("script -i b.cap", NULL);
	cr_assert_str_eq(s2, s1, "the events changed");
	sh("rm -rf bin");
	same_without_binaries("b.cap", before, "packed");
	/* refreshed where the binaries are gone: the old pack still names them */
	r = stkrec("pack b.cap");
	cr_assert_eq(r.code, 0, "%s", r.err);
	expect_has(r.err, "stkrec: repacked b.cap: ", "repack");
	res_free(&r);
	same_without_binaries("b.cap", before, "after the refresh");
	for (i = 0; i < NR_SAME; i++)
		free(before[i]);
	free(s1);
	free(s2);
}

/* The recorder's pack and `stkrec pack`'s, of the same capture: the same
 * records counted, the same output. */
Test(pack_e2e, recorder_pack_same_as_pack_command)
{
	char *p[NR_SAME], *jp, *jq, *pp, *pq;
	struct res r;
	size_t i;

	workload("cpuburn", "cpuburn");
	workload("sleeper", "sleeper");
	free(record("-e offcpu,cpu -F 499 -o p.cap -- sh -c 'bin/sleeper 200 10; "
		    "bin/cpuburn 400 25'"));
	r = stkrec("pack p.cap -o q.cap");
	cr_assert_eq(r.code, 0, "%s", r.err);
	res_free(&r);
	jp = view("info --json p.cap", NULL);
	jq = view("info --json q.cap", NULL);
	pp = strstr(jp, "\"pack\":{");
	pq = strstr(jq, "\"pack\":{");
	cr_assert(pp && pq, "%s", jp);
	*strchr(pp, '}') = *strchr(pq, '}') = 0;
	/* the bytes differ by the STRINGs each can share with what precedes */
	*strstr(pp, ",\"bytes\"") = *strstr(pq, ",\"bytes\"") = 0;
	cr_assert_str_eq(pq, pp);
	for (i = 0; i < NR_SAME; i++)
		p[i] = view_of(same_views[i], "p.cap", NULL);
	sh("rm -rf bin");
	same_without_binaries("q.cap", p, "stkrec pack's");
	same_without_binaries("p.cap", p, "the recorder's");
	for (i = 0; i < NR_SAME; i++)
		free(p[i]);
	free(jp);
	free(jq);
}

/* File offset of the frame that holds the first pack record. */
static uint64_t pack_frame(const char *cap)
{
	char path[PATH_MAX];
	struct cap_record rec;
	struct cap_reader *rd;
	uint64_t off = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, cap);
	cr_assert_eq(cap_reader__open(path, &rd), 0);
	while (!off && cap_reader__next(rd, &rec) == 1) {
		if (rec.type == CAP_REC_PACK_OBJECT)
			off = rec.file_offset;
	}
	cap_reader__close(rd);
	cr_assert_gt(off, 0, "no pack in %s", cap);
	return off;
}

/* Every bit of the byte at off of the file name in the test's directory inverted. */
static void flip_byte(const char *name, uint64_t off)
{
	char path[PATH_MAX];
	unsigned char c;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(pread(fd, &c, 1, off), 1, "%s: no byte at %" PRIu64, path, off);
	c ^= 0xff;
	cr_assert_eq(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

static const char *samples_line(const char *text)
{
	const char *p = strstr(text, "# Samples: ");

	cr_assert_not_null(p, "%s", text);
	return p;
}

/* A pack whose block is damaged, or cut off, is damage like any other: the
 * output is partial (exit 3) and every event still reads. */
Test(pack_e2e, damaged_or_cut_pack_is_damage_events_still_read)
{
	char *good, want[64];
	uint64_t off;
	struct res r;
	int i;

	workload("cpuburn", "cpuburn");
	free(record("-e cpu -F 499 -o p.cap -- bin/cpuburn 400 25"));
	good = view("report -i p.cap -e cpu --sort sym", NULL);
	snprintf(want, sizeof(want), "%.40s", samples_line(good));
	off = pack_frame("p.cap");
	/* a byte of the pack's frame flipped, every bit of it (writing 0xff
	 * there changed nothing when the byte was 0xff): its checksum fails */
	sh("cp p.cap d.cap");
	flip_byte("d.cap", off + 40);
	/* the file cut inside the pack's frame */
	sh("cp p.cap t.cap && truncate -s %llu t.cap", (unsigned long long)off + 30);
	for (i = 0; i < 2; i++) {
		r = stkrec("report -i %s -e cpu --sort sym", i ? "t.cap" : "d.cap");
		cr_assert_eq(r.code, 3, "%s", r.err);
		expect_has(r.err, "output is partial", i ? "cut" : "damaged");
		expect_has(r.err, i ? "inside block" : "damaged block", "the loss named");
		cr_assert(!strncmp(samples_line(r.out), want, strlen(want)), "%s\nwant %s",
			  r.out, want);
		expect_has(r.out, "[.] burn_a\n", "named from the binary");
		res_free(&r);
		r = stkrec("info %s", i ? "t.cap" : "d.cap");
		cr_assert_eq(r.code, 3, "%s", r.out);
		res_free(&r);
	}
	free(good);
}

/* --switch-output: every file has its own pack, complete for its events. */
Test(pack_e2e, switch_output_files_each_packed)
{
	char *before[8];
	glob_t g;
	char pat[PATH_MAX], *a, *name;
	size_t i, nfiles;
	struct res r;

	workload("cpuburn", "cpuburn");
	free(record("-e cpu -F 499 --switch-output 1s -o sw.cap -- bin/cpuburn 2500 25"));
	snprintf(pat, sizeof(pat), "%s/sw.cap.*", dir);
	cr_assert_eq(glob(pat, 0, NULL, &g), 0);
	nfiles = g.gl_pathc < 8 ? g.gl_pathc : 8;
	cr_assert_geq(nfiles, 2);
	for (i = 0; i < nfiles; i++) {
		name = strrchr(g.gl_pathv[i], '/') + 1;
		r = stkrec("info --json %s", name);
		cr_assert_eq(r.code, 0, "%s", r.err);
		expect_has(r.out, "\"pack\":{\"binaries\":", name);
		expect_has(r.out, "\"complete\":true", name);
		res_free(&r);
		before[i] = view_of("report -i %s -e cpu --sort sym", name, NULL);
	}
	sh("rm -rf bin");
	for (i = 0; i < nfiles; i++) {
		name = strrchr(g.gl_pathv[i], '/') + 1;
		a = view_of("report -i %s -e cpu --sort sym", name, "empty");
		cr_assert_str_eq(a, before[i], "%s", name);
		free(a);
		free(before[i]);
	}
	globfree(&g);
}
