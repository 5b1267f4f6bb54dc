// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Captures through pipes, end to end: `record -o -` into a pipe that
 * `report -i -` reads while a load runs; a reader that goes away (the
 * recorder stops, as on a failed write); stdin cut at random offsets (the
 * same exit and output as the same bytes in a file: 3 and what arrived);
 * a terminal refused on either side; diff with one side on stdin; a file
 * named '-'; COMMAND's output kept out of the capture; --max-size on a
 * pipe; and the reader's memory on a long stdin.
 */
#include <errno.h>
#include "format/capture.h"
#include "tests/reliability_run.h"
#include "tests/util_capgen.h"

static char dir[] = "/tmp/stkrec-pipe-XXXXXX";
static char burst[PATH_MAX];
static pid_t load_pid;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	rl_kill(&load_pid);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(reliability_pipe, .init = setup, .fini = teardown, .timeout = 300);

static void start_load(void)
{
	load_pid = rl_start_burst(burst);
}

/* rl_spawn_with(): the child in arg's directory. */
static int in_dir(void *arg)
{
	return chdir(arg);
}

/* A child's standard input and output, when >= 0 (rl_spawn_with()). */
struct redirect {
	int in, out;
};

static int redirect(void *arg)
{
	struct redirect *rd = arg;

	return (rd->in >= 0 && dup2(rd->in, 0) < 0) || (rd->out >= 0 && dup2(rd->out, 1) < 0);
}

/* argv with the given stdin and stdout (fds made close-on-exec, so that a
 * pipe end lives only where it is meant to); stderr to r->err at the end. */
static pid_t spawn(char *const argv[], int in, int out, int *fo, int *fe)
{
	struct redirect rd = { in, out };

	return rl_spawn_with(argv, fo, fe, 0, redirect, &rd);
}

/* *all, when asked: all of its stdout (rl_slurp_all()). */
static void finish_run_all(pid_t pid, int fo, int fe, double timeout, struct rl_run *r,
			   char **all)
{
	memset(r, 0, sizeof(*r));
	cr_assert_eq(rl_wait(pid, timeout, r), 0);
	rl_slurp_fd(fo, r->out, sizeof(r->out));
	rl_slurp_fd(fe, r->err, sizeof(r->err));
	if (all)
		*all = rl_slurp_all(fo, NULL);
	close(fo);
	close(fe);
}

static void finish_run(pid_t pid, int fo, int fe, double timeout, struct rl_run *r)
{
	finish_run_all(pid, fo, fe, timeout, r, NULL);
}

/* A process writing buf into fd in chunks of 1..8192 bytes, now and then
 * pausing: the way bytes come over ssh. */
static pid_t feeder(int fd, const uint8_t *buf, size_t len, unsigned seed)
{
	pid_t pid = fork();
	size_t off = 0, k;

	cr_assert_geq(pid, 0);
	if (pid)
		return pid;
	while (off < len) {
		k = 1 + rand_r(&seed) % 8192;
		k = k < len - off ? k : len - off;
		if (write(fd, buf + off, k) != (ssize_t)k)
			_exit(1);
		off += k;
		if (!(rand_r(&seed) % 16))
			usleep(1000);
	}
	_exit(0);
}

/* argv with buf on its standard input, through a pipe; *all as
 * finish_run_all(). */
static void run_stdin_all(char *const argv[], const uint8_t *buf, size_t len, struct rl_run *r,
			  char **all)
{
	int p[2], fo, fe, st;
	pid_t pid, feed;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = spawn(argv, p[0], -1, &fo, &fe);
	close(p[0]);
	feed = feeder(p[1], buf, len, len);
	close(p[1]);
	finish_run_all(pid, fo, fe, 120, r, all);
	cr_assert_eq(waitpid(feed, &st, 0), feed);
}

static void run_stdin(char *const argv[], const uint8_t *buf, size_t len, struct rl_run *r)
{
	run_stdin_all(argv, buf, len, r, NULL);
}

static void put(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* s with every `from` replaced by `to`, in place (buf holds the result). */
static void replace(char *s, size_t size, const char *from, const char *to)
{
	char out[8192], *p = s, *hit;
	size_t n = 0;

	while ((hit = strstr(p, from)) && n + (hit - p) + strlen(to) < sizeof(out)) {
		memcpy(out + n, p, hit - p);
		n += hit - p;
		memcpy(out + n, to, strlen(to));
		n += strlen(to);
		p = hit + strlen(from);
	}
	snprintf(out + n, sizeof(out) - n, "%s", p);
	snprintf(s, size, "%s", out);
}

/* s with every `from` replaced by `to`, whatever its length: a new string. */
static char *replaced(const char *s, const char *from, const char *to)
{
	size_t n = 0, lf = strlen(from), lt = strlen(to);
	const char *p, *hit;
	char *out, *o;

	for (p = s; (hit = strstr(p, from)); p = hit + lf)
		n++;
	out = o = malloc(strlen(s) + n * lt + 1);
	cr_assert_not_null(out);
	for (p = s; (hit = strstr(p, from)); p = hit + lf) {
		memcpy(o, p, hit - p);
		o += hit - p;
		memcpy(o, to, lt);
		o += lt;
	}
	strcpy(o, p);
	return out;
}

/* All of what fd gives until its end, with the time its bytes kept coming. */
struct received {
	uint8_t *buf;
	size_t len, cap;
};

static void receive(int fd, struct received *rc, size_t stop_after)
{
	ssize_t n;

	while (rc->len < stop_after) {
		if (rc->len + 65536 > rc->cap) {
			rc->cap = (rc->len + 65536) * 2;
			rc->buf = realloc(rc->buf, rc->cap);
			cr_assert_not_null(rc->buf);
		}
		n = read(fd, rc->buf + rc->len, 65536);
		if (n <= 0)
			break;
		rc->len += n;
	}
}

/* ---- record -o - | report -i - -------------------------------------------- */

/* Whole blocks in what came so far; *end, when asked: the END record came. */
static int blocks_in(const struct received *rc, bool *end)
{
	struct cap_record x;
	struct cap_reader *r;
	int n = 0;

	if (end)
		*end = false;
	if (cap_reader__open_mem(rc->buf, rc->len, &r))
		return 0;
	while (cap_reader__next(r, &x) == 1) {
		n += x.type == CAP_REC_BLOCK;
		if (end && x.type == CAP_REC_END)
			*end = true;
	}
	cap_reader__close(r);
	return n;
}

static bool has_block(const struct received *rc)
{
	return blocks_in(rc, NULL) > 0;
}

/* Offset just past the block that ends first, in a complete capture. */
static uint64_t first_block_end(const uint8_t *buf, size_t len)
{
	struct cap_record rec;
	struct cap_reader *r;
	uint64_t end = 0;

	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	while (!end && cap_reader__next(r, &rec) == 1) {
		if (rec.type == CAP_REC_BLOCK && rec.block.seq == 1)
			end = rec.file_offset;
	}
	cap_reader__close(r);
	cr_assert_gt(end, 0, "fewer than two blocks");
	return end;
}

/*
 * The recorder writes into a pipe the test relays to `report --folded -i -`
 * (keeping the bytes), while the load runs. The report names the load's
 * frames, and is byte for byte the report of the same bytes as a file; the
 * first block came while the recording went on: before the recorder
 * exited, with no END record yet, and blocks came after it.
 */
Test(reliability_pipe, record_to_a_pipe_read_by_report)
{
	char pidarg[16], cap[PATH_MAX];
	char *rec_argv[] = { (char *)rl_stkrec(), "record", "-o", "-", "--no-pack",
			 "-a", "-e", "offcpu,cpu",
			     "-F", "999", "-d", "4", NULL };
	char *rep_argv[] = { (char *)rl_stkrec(), "report", "--folded", "-p", pidarg, "-i", "-",
			     NULL };
	char *file_argv[] = { (char *)rl_stkrec(), "report", "--folded", "-p", pidarg, "-i", cap,
			      NULL };
	static struct rl_run rr, pr, fr;
	struct received rc = { 0 };
	int a[2], b[2], rfo, rfe, pfo, pfe, total, first_blocks = 0;
	bool end_then = true, rec_alive = false;
	uint64_t block0_end = 0;
	pid_t rec, rep;
	ssize_t n;

	rl_need_bpf();
	start_load();
	snprintf(pidarg, sizeof(pidarg), "%d", load_pid);
	cr_assert_eq(pipe2(a, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(b, O_CLOEXEC), 0);
	rec = spawn(rec_argv, -1, a[1], &rfo, &rfe);
	rep = spawn(rep_argv, b[0], -1, &pfo, &pfe);
	close(a[1]);
	close(b[0]);
	/* a report that fails early is an assertion below, not a SIGPIPE here */
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		size_t before = rc.len;

		receive(a[0], &rc, rc.len + 1);
		if (rc.len == before)
			break;
		n = write(b[1], rc.buf + before, rc.len - before);
		cr_assert_eq(n, (ssize_t)(rc.len - before), "report gone: %s", strerror(errno));
		if (!first_blocks) {
			/* the recorder's state first: it may exit meanwhile */
			rec_alive = rl_running(rec);
			first_blocks = blocks_in(&rc, &end_then);
		}
	}
	signal(SIGPIPE, SIG_DFL);
	close(a[0]);
	close(b[1]);
	finish_run(rec, rfo, rfe, 120, &rr);
	finish_run(rep, pfo, pfe, 120, &pr);
	cr_assert_eq(rl_code(&rr), 0, "record: %s", rr.err);
	cr_assert(strstr(rr.err, "wrote <stdout>: "), "%s", rr.err);
	cr_assert_eq(rl_code(&pr), 0, "report: %s", pr.err);
	cr_assert(strstr(pr.out, rl_burst_read_chain()), "%s", pr.out);
	cr_assert_not(strstr(pr.out, "[unknown]"), "%s", pr.out);
	/* the same bytes in a file: the same report, and a complete capture */
	snprintf(cap, sizeof(cap), "%s/piped.cap", dir);
	put(cap, rc.buf, rc.len);
	rl_run(file_argv, 120, 0, &fr);
	cr_assert_eq(rl_code(&fr), 0, "%s", fr.err);
	cr_assert_str_eq(pr.out, fr.out);
	cr_assert_str_eq(pr.err, fr.err);
	block0_end = first_block_end(rc.buf, rc.len);
	total = blocks_in(&rc, NULL);
	cr_log_info("%zu bytes piped: %d blocks, the first %d of them while the recorder ran",
		    rc.len, total, first_blocks);
	/* blocks close every second of the recorder's clock (FORMAT.md
	 * §5.2): the first one came while the 4 s recording went on, not
	 * with its end */
	cr_assert_gt(first_blocks, 0);
	cr_assert(rec_alive, "the recorder had exited when block 0 (to byte %lu) came",
		  (unsigned long)block0_end);
	cr_assert_not(end_then, "block 0 came with the END record");
	cr_assert_gt(total, first_blocks, "no block came after the first %d", first_blocks);
	free(rc.buf);
}

/* ---- the reader goes away ---------------------------------------------------- */


/*
 * The reader reads for `after` s (and until a block came: the recorder is
 * in its loop by then), then closes its end: the recorder stops (a hang
 * bound of 60 s; how soon is make bench's to measure), with exit 1 and the
 * failed-write line; what arrived reads as a capture cut after its last
 * block (info: 3). Returns the delay.
 */
static double reader_goes_away(char *const argv[], double after)
{
	static const char want[] = "stkrec: record: cannot write '<stdout>': Broken pipe (the "
				   "capture ends at its last complete block)";
	char *info_argv[] = { (char *)rl_stkrec(), "info", "-", NULL };
	struct received rc = { 0 };
	static struct rl_run r, ir;
	struct cap_reader *cr;
	struct cap_record x;
	double closed_at, delay;
	int a[2], fo, fe;
	pid_t pid;

	cr_assert_eq(pipe2(a, O_CLOEXEC), 0);
	pid = spawn(argv, -1, a[1], &fo, &fe);
	close(a[1]);
	cr_assert_eq(fcntl(a[0], F_SETFL, O_NONBLOCK), 0);
	closed_at = rl_now() + after;
	while (rl_now() < closed_at || !has_block(&rc)) {
		receive(a[0], &rc, rc.len + 1);
		cr_assert_lt(rl_now(), closed_at + 60, "no block in 60 s");
		usleep(10000);
	}
	close(a[0]);
	closed_at = rl_now();
	finish_run(pid, fo, fe, 60, &r);
	delay = rl_now() - closed_at;
	cr_assert_not(r.timed_out, "the recorder did not stop: %s", r.hang);
	cr_assert_eq(rl_code(&r), 1, "exit %d: %s", rl_code(&r), r.err);
	rl_assert_one_error_line(r.err, want);
	cr_assert_eq(cap_reader__open_mem(rc.buf, rc.len, &cr), 0);
	while (cap_reader__next(cr, &x) == 1)
		;
	cr_assert(cap_reader__stats(cr)->recovered);
	cr_assert_eq(cap_reader__stats(cr)->bad_blocks, 0);
	cap_reader__close(cr);
	run_stdin(info_argv, rc.buf, rc.len, &ir);
	cr_assert_eq(rl_code(&ir), 3, "%s", ir.err);
	free(rc.buf);
	return delay;
}

/* Under load: the next block's write fails (EPIPE), or the pipe says its
 * reader went, whichever comes first. */
Test(reliability_pipe, reader_gone_stops_a_busy_recording)
{
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", "-", "--no-pack",
			 "-a", "-e", "offcpu,cpu",
			 "-d", "60", NULL };
	double delay;

	rl_need_bpf();
	start_load();
	delay = reader_goes_away(argv, 3);
	cr_log_info("stopped %.3f s after its reader went", delay);
}

/*
 * A process asleep: blocks go out once a second or less (the side band's
 * records of other processes), and the reader goes at a random moment in
 * between. The pipe itself says its reader went (EPOLLERR), so the
 * recorder stops then, not at its next block (up to a second later, or
 * never on a host where nothing happens): the test bounds the hang, make
 * bench (section 10) times the stop.
 */
Test(reliability_pipe, reader_gone_noticed_between_writes)
{
	char *sleeper[] = { "/bin/sleep", "1000", NULL }, pidarg[16];
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", "-", "--no-pack",
			 "-p", pidarg, "-e", "offcpu",
			 "-d", "60", NULL };
	unsigned seed = time(NULL);
	double worst = 0, d;
	int i, fo, fe;

	rl_need_bpf();
	load_pid = rl_spawn(sleeper, &fo, &fe, 0);
	close(fo);
	close(fe);
	snprintf(pidarg, sizeof(pidarg), "%d", load_pid);
	for (i = 0; i < 4; i++) {
		d = reader_goes_away(argv, 1 + rand_r(&seed) % 1000 / 1000.0);
		worst = d > worst ? d : worst;
	}
	cr_log_info("4 readers gone: the recorder stopped within %.3f s each time", worst);
}

/* ---- stdin cut at random offsets ----------------------------------------------- */

/* The views every cut goes through; "-" is the capture. */
static const char *const views[][5] = {
	{ "info", "-", NULL },
	{ "info", "--json", "-", NULL },
	{ "report", "-i", "-", NULL },
	{ "report", "--folded", "-i", "-", NULL },
	{ "report", "--top-waits", "-i", "-", NULL },
	{ "script", "-i", "-", NULL },
};
#define NR_VIEWS (sizeof(views) / sizeof(views[0]))

/* View v of buf on stdin, and of the same bytes in a file: the same exit,
 * output and messages, but for the name; returns the exit. */
static int stdin_as_file(size_t v, const uint8_t *buf, size_t len, const char *what)
{
	char *argv[8] = { (char *)rl_stkrec() }, *fargv[8] = { (char *)rl_stkrec() }, path[PATH_MAX];
	char *s_all, *f_all, *f_named;
	static struct rl_run s, f;
	int i;

	snprintf(path, sizeof(path), "%s/cut.cap", dir);
	put(path, buf, len);
	for (i = 0; views[v][i]; i++) {
		argv[i + 1] = (char *)views[v][i];
		fargv[i + 1] = strcmp(views[v][i], "-") ? (char *)views[v][i] : path;
	}
	run_stdin_all(argv, buf, len, &s, &s_all);
	rl_run_all(fargv, 120, 0, &f, &f_all, NULL);
	cr_assert(WIFEXITED(s.status), "%s: stkrec %s on stdin: signal %d", what, views[v][0],
		  WTERMSIG(s.status));
	replace(f.err, sizeof(f.err), path, "<stdin>");
	cr_assert_eq(rl_code(&s), rl_code(&f), "%s: stkrec %s %s: %d from stdin, %d from a file: "
		     "%s", what, views[v][0], views[v][1], rl_code(&s), rl_code(&f), s.err);
	/* all of it: a cut capture's output differs at its tail, if at all */
	f_named = replaced(f_all, path, "<stdin>");
	cr_assert_str_eq(s_all, f_named, "%s: stkrec %s %s (%zu and %zu bytes)", what,
			 views[v][0], views[v][1], strlen(s_all), strlen(f_named));
	cr_assert_str_eq(s.err, f.err, "%s: stkrec %s %s", what, views[v][0], views[v][1]);
	free(s_all);
	free(f_all);
	free(f_named);
	return rl_code(&s);
}

/* Cuts at random offsets past the header: exit 3 with what arrived on
 * stdout and a warning; one in the header: 4; all of it: 0. */
static void random_cuts(const uint8_t *buf, size_t len)
{
	uint64_t hdr_end = 8 + *(const uint32_t *)(buf + 4);
	int i, n = rl_soak() ? 200 : 12, code;
	unsigned seed = time(NULL), seed0 = seed;
	char what[64];
	size_t v, cut;

	for (i = 0; i < n + 2; i++) {
		cut = i == n ? hdr_end / 2 : i == n + 1 ? len :
		      hdr_end + rand_r(&seed) % (len - hdr_end);
		snprintf(what, sizeof(what), "cut at %zu of %zu (seed %u)", cut, len, seed0);
		for (v = 0; v < NR_VIEWS; v++) {
			code = stdin_as_file(v, buf, cut, what);
			cr_assert_eq(code, cut == len ? 0 : cut < hdr_end ? 4 : 3, "%s: stkrec %s "
				     "%s: %d", what, views[v][0], views[v][1], code);
		}
	}
	cr_log_info("%d cuts of %zu bytes through %zu views, each as from a file (seed %u)",
		    n + 2, len, NR_VIEWS, seed0);
}

Test(reliability_pipe, stdin_cut_at_random_offsets)
{
	struct capgen_opts o = { .block_size = 512, .events = 300 };
	uint8_t *buf;
	size_t len;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	cr_assert_eq(capgen_write_mem(&o, &buf, &len, NULL), 0);
	random_cuts(buf, len);
	free(buf);
}

/* The same on a capture the recorder wrote into a pipe. */
Test(reliability_pipe, recorded_stdin_cut_at_random_offsets)
{
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", "-", "--no-pack",
			 "-F", "99", "--", burst,
			 "pipe", "1", "0.5", NULL };
	struct received rc = { 0 };
	struct rl_run r;
	int a[2], fo, fe;
	pid_t pid;

	rl_need_bpf();
	rl_workload("burst", burst);
	cr_assert_eq(pipe2(a, O_CLOEXEC), 0);
	pid = spawn(argv, -1, a[1], &fo, &fe);
	close(a[1]);
	receive(a[0], &rc, SIZE_MAX);
	close(a[0]);
	finish_run(pid, fo, fe, 60, &r);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	random_cuts(rc.buf, rc.len);
	free(rc.buf);
}

/* ---- a terminal -------------------------------------------------------------- */

/* `script` runs cmd on a pseudo-terminal from dir: its exit and output. */
static void on_tty(const char *cmd, struct rl_run *r)
{
	char *argv[] = { "/usr/bin/script", "-qefc", (char *)cmd, "/dev/null", NULL };
	int fo, fe;
	pid_t pid;

	if (access(argv[0], X_OK))
		cr_skip_test("no %s (util-linux) for a terminal", argv[0]);
	pid = rl_spawn_with(argv, &fo, &fe, 0, in_dir, dir);
	finish_run(pid, fo, fe, 60, r);
}

Test(reliability_pipe, terminal_refused)
{
	static const struct {
		const char *args, *cmd, *msg;
	} cases[] = {
		{ "record -o - -d 1", "record", "stkrec record: -o -: standard output is a "
		  "terminal, and a capture is binary: redirect it (> FILE, | stkrec report -i -) "
		  "or use -o FILE" },
		{ "report -i -", "report", "stkrec report: '-' reads a capture from standard "
		  "input, which is a terminal: pipe one in, or name a file" },
		{ "script -i -", "script", "stkrec script: '-' reads a capture from" },
		{ "info -", "info", "stkrec info: '-' reads a capture from" },
		{ "diff - a.cap", "diff", "stkrec diff: '-' reads a capture from" },
	};
	char cmd[PATH_MAX + 64], hint[80], path[PATH_MAX];
	static struct rl_run r;
	size_t i;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s %s", rl_stkrec(), cases[i].args);
		on_tty(cmd, &r);
		snprintf(hint, sizeof(hint), "Try 'stkrec %s -h' for more information.",
			 cases[i].cmd);
		/* the terminal's lines end in \r\n */
		replace(r.out, sizeof(r.out), "\r\n", "\n");
		cr_expect_eq(rl_code(&r), 2, "%s: exit %d: %s", cases[i].args, rl_code(&r), r.out);
		cr_expect_eq(rl_lines(r.out), 2, "%s: '%s'", cases[i].args, r.out);
		cr_expect(!strncmp(r.out, cases[i].msg, strlen(cases[i].msg)), "%s: '%s'",
			  cases[i].args, r.out);
		cr_expect_eq(rl_count_line(r.out, hint), 1, "%s: '%s'", cases[i].args, r.out);
	}
	snprintf(path, sizeof(path), "%s/-", dir);
	cr_assert_eq(access(path, F_OK), -1, "a file named '-' was written");
}

/* ---- diff with one side on stdin ----------------------------------------------- */

Test(reliability_pipe, diff_one_side_from_stdin)
{
	struct capgen_opts oa = { .events = 8 }, ob = { .events = 40, .block_size = 512 };
	char a[PATH_MAX], b[PATH_MAX];
	char *ab[] = { (char *)rl_stkrec(), "diff", a, b, NULL };
	char *sb[] = { (char *)rl_stkrec(), "diff", "-", b, NULL };
	char *as[] = { (char *)rl_stkrec(), "diff", a, "-", NULL };
	static struct rl_run r0, r1, r2;
	uint8_t *ba, *bb;
	size_t la, lb;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	snprintf(a, sizeof(a), "%s/a.cap", dir);
	snprintf(b, sizeof(b), "%s/b.cap", dir);
	cr_assert_eq(capgen_write_mem(&oa, &ba, &la, NULL), 0);
	cr_assert_eq(capgen_write_mem(&ob, &bb, &lb, NULL), 0);
	put(a, ba, la);
	put(b, bb, lb);
	rl_run(ab, 60, 0, &r0);
	cr_assert_eq(rl_code(&r0), 0, "%s", r0.err);
	run_stdin(sb, ba, la, &r1);
	run_stdin(as, bb, lb, &r2);
	cr_assert_eq(rl_code(&r1), 0, "%s", r1.err);
	cr_assert_eq(rl_code(&r2), 0, "%s", r2.err);
	cr_assert(strstr(r1.out, "# A: <stdin>: "), "%s", r1.out);
	cr_assert(strstr(r2.out, "# B: <stdin>: "), "%s", r2.out);
	replace(r1.out, sizeof(r1.out), "<stdin>", a);
	replace(r2.out, sizeof(r2.out), "<stdin>", b);
	cr_assert_str_eq(r1.out, r0.out);
	cr_assert_str_eq(r2.out, r0.out);
	/* a side cut short on the way: 3, and the warning names it */
	run_stdin(sb, ba, la - 100, &r1);
	cr_assert_eq(rl_code(&r1), 3, "%s", r1.err);
	cr_assert(strstr(r1.err, "stkrec: warning: <stdin>: output is partial: "), "%s", r1.err);
	free(ba);
	free(bb);
}

/* ---- a file named '-' ---------------------------------------------------------- */

Test(reliability_pipe, file_named_dash_is_a_file)
{
	struct capgen_opts oa = { .events = 8 }, ob = { .events = 40 };
	char *dash[] = { "./-", NULL }, path[PATH_MAX];
	char *info_file[] = { (char *)rl_stkrec(), "info", dash[0], NULL };
	char *info_stdin[] = { (char *)rl_stkrec(), "info", "-", NULL };
	static struct rl_run r1, r2;
	uint8_t *ba, *bb;
	size_t la, lb;
	int fo, fe;
	pid_t pid;

	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	cr_assert_eq(capgen_write_mem(&oa, &ba, &la, NULL), 0);
	cr_assert_eq(capgen_write_mem(&ob, &bb, &lb, NULL), 0);
	snprintf(path, sizeof(path), "%s/-", dir);
	put(path, ba, la);
	pid = rl_spawn_with(info_file, &fo, &fe, 0, in_dir, dir);
	finish_run(pid, fo, fe, 60, &r1);
	run_stdin(info_stdin, bb, lb, &r2);
	cr_assert_eq(rl_code(&r1), 0, "%s", r1.err);
	cr_assert_eq(rl_code(&r2), 0, "%s", r2.err);
	cr_assert(strstr(r1.out, "capture:      ./-\n"), "%s", r1.out);
	cr_assert(strstr(r1.out, "events:       offcpu 8, cpu 8, bio 8, wakeup 0\n"), "%s", r1.out);
	cr_assert(strstr(r2.out, "capture:      <stdin>\n"), "%s", r2.out);
	cr_assert(strstr(r2.out, "events:       offcpu 40, cpu 40, bio 40, wakeup 0\n"), "%s", r2.out);
	free(ba);
	free(bb);
}

/* `record -o ./-` writes a file named '-', nothing on stdout. */
Test(reliability_pipe, record_to_a_file_named_dash)
{
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", "./-", "-e", "offcpu", "-d", "0.5",
			 NULL }, path[PATH_MAX];
	static struct rl_run r;
	struct stat st;
	int fo, fe;
	pid_t pid;

	rl_need_bpf();
	pid = rl_spawn_with(argv, &fo, &fe, 0, in_dir, dir);
	finish_run(pid, fo, fe, 60, &r);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	cr_assert(strstr(r.err, "wrote ./-: "), "%s", r.err);
	snprintf(path, sizeof(path), "%s/-", dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_gt(st.st_size, 0);
}

/* ---- COMMAND, --max-size --------------------------------------------------------- */

/* Recorded into a pipe to its end: its bytes, the recorder's run. */
static void record_piped(char *const argv[], struct received *rc, struct rl_run *r)
{
	int a[2], fo, fe;
	pid_t pid;

	cr_assert_eq(pipe2(a, O_CLOEXEC), 0);
	pid = spawn(argv, -1, a[1], &fo, &fe);
	close(a[1]);
	receive(a[0], rc, SIZE_MAX);
	close(a[0]);
	finish_run(pid, fo, fe, 240, r);
}

/* The END record of a capture in memory, which must read complete. */
static struct cap_end end_of(const struct received *rc)
{
	struct cap_end end = { .reason = 99 };
	struct cap_record x;
	struct cap_reader *r;

	cr_assert_eq(cap_reader__open_mem(rc->buf, rc->len, &r), 0);
	while (cap_reader__next(r, &x) == 1)
		if (x.type == CAP_REC_END)
			end = x.end;
	cr_assert_not(cap_reader__stats(r)->recovered);
	cap_reader__close(r);
	return end;
}

/* What COMMAND prints goes to stderr, not into the capture; and it runs
 * with SIGPIPE as it would (the recorder ignores it, exec would not reset
 * an ignored signal). */
Test(reliability_pipe, command_output_goes_to_stderr)
{
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", "-", "--no-pack",
			 "-e", "offcpu", "--", "/bin/sh",
			 "-c", "echo hello-from-$((6 * 7)); grep SigIgn /proc/self/status", NULL };
	struct received rc = { 0 };
	static struct rl_run r;
	unsigned long long ign = 1;
	const char *sig;

	rl_need_bpf();
	record_piped(argv, &rc, &r);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert_eq(end_of(&rc).reason, CAP_STOP_COMMAND);
	/* the header holds the command line, not what the command printed */
	cr_assert_null(memmem(rc.buf, rc.len, "hello-from-42", 13));
	cr_assert_eq(rl_count_line(r.err, "hello-from-42"), 1, "%s", r.err);
	sig = strstr(r.err, "SigIgn:");
	cr_assert(sig && sscanf(sig, "SigIgn: %llx", &ign) == 1, "%s", r.err);
	cr_assert_eq(ign & (1ull << (SIGPIPE - 1)), 0, "SIGPIPE ignored: %llx", ign);
	free(rc.buf);
}

/* A pipe gets no symbol pack (the pack reads the file back): record says
 * so in one line, and `stkrec pack -` adds one to what arrived, the
 * events unchanged. */
Test(reliability_pipe, pipe_gets_no_pack_and_pack_adds_one)
{
	char wl[PATH_MAX], in[PATH_MAX + 16], out[PATH_MAX + 16];
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", "-", "-e", "cpu", "--", wl, "300",
			 NULL };
	char *pack[] = { (char *)rl_stkrec(), "pack", "-", "-o", out, NULL };
	char *info[] = { (char *)rl_stkrec(), "info", out, NULL };
	char *script_in[] = { (char *)rl_stkrec(), "script", "-i", in, NULL };
	char *script_out[] = { (char *)rl_stkrec(), "script", "-i", out, NULL };
	static struct rl_run r, a, b;
	struct received rc = { 0 };
	char *all_in, *all_out;

	rl_workload("cpuburn", wl);
	rl_need_bpf();
	record_piped(argv, &rc, &r);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert_eq(rl_count_line(r.err, "stkrec: warning: record: -o -: no symbol pack on a "
				       "pipe; where the binaries are, 'stkrec pack - -o FILE' "
				       "adds one to what arrives"), 1, "%s", r.err);
	snprintf(in, sizeof(in), "%s/in.cap", dir);
	snprintf(out, sizeof(out), "%s/out.cap", dir);
	put(in, rc.buf, rc.len);
	run_stdin(pack, rc.buf, rc.len, &r);
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	rl_run(info, 30, 0, &r);
	cr_assert_not_null(strstr(r.out, "symbol pack:  "), "%s", r.out);
	cr_assert_null(strstr(r.out, "symbol pack:  none"), "%s", r.out);
	rl_run_all(script_in, 30, 0, &a, &all_in, NULL);
	rl_run_all(script_out, 30, 0, &b, &all_out, NULL);
	cr_assert_eq(rl_code(&a), 0, "script of what arrived: exit %d: %s", rl_code(&a), a.err);
	cr_assert_eq(rl_code(&b), 0, "script of it packed: exit %d: %s", rl_code(&b), b.err);
	cr_assert_gt(strlen(all_in), 0);
	cr_assert_str_eq(all_in, all_out, "script: %zu and %zu bytes", strlen(all_in),
			 strlen(all_out));
	free(all_in);
	free(all_out);
	free(rc.buf);
}

/* --max-size with -o -: the bytes written to the pipe, as for a file. */
Test(reliability_pipe, max_size_bounds_the_pipe)
{
	char *argv[] = { (char *)rl_stkrec(), "record", "-o", "-", "--no-pack",
			 "-a", "-e", "offcpu,cpu", "-F",
			 "999", "--max-size", "1M", NULL };
	struct received rc = { 0 };
	static struct rl_run r;

	rl_need_bpf();
	start_load();
	record_piped(argv, &rc, &r);
	cr_assert_not(r.timed_out, "--max-size 1M: no stop");
	cr_assert_eq(rl_code(&r), 0, "%s", r.err);
	cr_assert(strstr(r.err, "(size limit)"), "%s", r.err);
	cr_log_info("--max-size 1M on a pipe: %zu bytes", rc.len);
	cr_assert_leq(rc.len, 1u << 20);
	cr_assert_geq(rc.len, (1u << 20) - rl_block_worst_case());
	cr_assert_eq(end_of(&rc).reason, CAP_STOP_MAX_SIZE);
	free(rc.buf);
}

/* ---- memory ----------------------------------------------------------------------- */

/* A process writing a capture's header, the trailer magic if asked, then
 * 0xa5 bytes to `len` in all, into fd: made as it goes, so that no process
 * forked from the test maps it (a child's peak RSS counts its pages before
 * its exec). */
static pid_t long_feeder(int fd, const uint8_t *hdr, size_t hdr_len, bool magic, size_t len)
{
	static uint8_t chunk[65536];
	uint32_t tm = CAP_SKIP_MAGIC_TRAILER;
	pid_t pid = fork();
	size_t off, k;

	cr_assert_geq(pid, 0);
	if (pid)
		return pid;
	memset(chunk, 0xa5, sizeof(chunk));
	if (write(fd, hdr, hdr_len) != (ssize_t)hdr_len || (magic && write(fd, &tm, 4) != 4))
		_exit(1);
	for (off = hdr_len + 4 * magic; off < len; off += k) {
		k = len - off < sizeof(chunk) ? len - off : sizeof(chunk);
		if (write(fd, chunk, k) != (ssize_t)k)
			_exit(1);
	}
	_exit(0);
}

/* info of a header and then `len` bytes on stdin, a trailer magic first if
 * asked: exit 3, peak RSS below max_kb. */
static void long_stdin(size_t len, bool magic, long max_kb)
{
	struct capgen_opts o = { .events = 1 };
	char *argv[] = { (char *)rl_stkrec(), "info", "-", NULL };
	static struct rl_run r;
	int p[2], fo, fe, st;
	pid_t pid, feed;
	uint8_t *cap;
	size_t clen;

	cr_assert_eq(capgen_write_mem(&o, &cap, &clen, NULL), 0);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = spawn(argv, p[0], -1, &fo, &fe);
	close(p[0]);
	feed = long_feeder(p[1], cap, 8 + *(uint32_t *)(cap + 4), magic, len);
	close(p[1]);
	finish_run(pid, fo, fe, 120, &r);
	cr_assert_eq(waitpid(feed, &st, 0), feed);
	cr_log_info("%zu MiB on stdin%s: info exit %d, peak RSS %ld kB", len >> 20,
		    magic ? ", a trailer magic first" : "", rl_code(&r), r.maxrss_kb);
	cr_assert_eq(rl_code(&r), 3, "%s", r.err);
	cr_assert_lt(r.maxrss_kb, max_kb);
	free(cap);
}

/* The stream reader holds a frame, or 64 MiB past a trailer magic: never
 * the whole input (FORMAT.md §5.6, §7). */
Test(reliability_pipe, stdin_memory_is_bounded)
{
	if (access(rl_stkrec(), X_OK))
		cr_skip_test("no stkrec binary at %s", rl_stkrec());
	long_stdin(256u << 20, false, 32 * 1024);
	long_stdin(256u << 20, true, 112 * 1024);
}
