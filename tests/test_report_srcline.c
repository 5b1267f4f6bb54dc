// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --srcline in the aggregated views, on a program the test compiles (-O0,
 * so each statement has its own addresses): the table splits a function's
 * rows by line, -g, --folded and --top-waits (text and JSON) put
 * "func prog.c:LINE" on every user frame, kernel frames stay bare, and
 * nothing changes without opts.srcline. The stacks point at addresses that
 * the program's own DWARF line table gives for known lines.
 */
#include <fcntl.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <sys/wait.h>
#include "tests/report_run.h"

/* leaf_fn's statements on lines 3 and 5; caller_fn calls it on line 9 */
static const char prog_src[] =
	"__attribute__((noinline)) int leaf_fn(int x)\n"	/* 1 */
	"{\n"
	"\tint y = x * 3;\n"				/* 3 */
	"\ty += x / 7;\n"
	"\treturn y + 1;\n"				/* 5 */
	"}\n"
	"__attribute__((noinline)) int caller_fn(int x)\n"
	"{\n"
	"\treturn leaf_fn(x) + 2;\n"			/* 9 */
	"}\n"
	"int main(int argc, char **argv) { (void)argv; return caller_fn(argc); }\n";

static char dir[] = "/tmp/stkrec-srcline-XXXXXX";
static char exe[sizeof(dir) + 8];

/* File offset of the lowest address of prog.c's line; 0 if none. */
static uint64_t line_offset(Dwarf *dw, int line)
{
	Dwarf_Off off = 0, next;
	size_t hsize, i, n;
	uint64_t best = UINT64_MAX;
	Dwarf_Lines *lines;
	Dwarf_Die cu;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_getsrclines(&cu, &lines, &n) == 0) {
			for (i = 0; i < n; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				const char *f = dwarf_linesrc(l, NULL, NULL);
				Dwarf_Addr a;
				int ln;

				if (!dwarf_lineno(l, &ln) && ln == line && f &&
				    strstr(f, "/prog.c") && !dwarf_lineaddr(l, &a) && a < best)
					best = a;
			}
		}
		off = next;
	}
	return best == UINT64_MAX ? 0 : rc_elf_offset(dwarf_getelf(dw), best);
}

static uint8_t bid[20];

/* Compile the program; the scene's pid 500 runs it (see util_report.h). */
static void compile(struct rc_opts *o)
{
	char src[sizeof(dir) + 16], cmd[512];
	const void *id;
	Dwarf *dw;
	FILE *f;
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	snprintf(exe, sizeof(exe), "%s/prog", dir);
	f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs(prog_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O0 -g -Wl,--build-id -o %s %s", exe, src);
	if (system(cmd) != 0)
		cr_skip_test("no C compiler to build the test program");
	elf_version(EV_CURRENT);
	fd = open(exe, O_RDONLY);
	dw = dwarf_begin(fd, DWARF_C_READ);
	cr_assert_not_null(dw);
	o->real_elf = exe;
	o->real_elf_off[0] = line_offset(dw, 3);
	/* a return address: one past the call's first byte (caller - 1) */
	o->real_elf_off[1] = line_offset(dw, 9) + 1;
	o->real_elf_off[2] = line_offset(dw, 5);
	cr_assert(o->real_elf_off[0] && o->real_elf_off[1] > 1 && o->real_elf_off[2]);
	o->real_bid_size = dwelf_elf_gnu_build_id(dwarf_getelf(dw), &id);
	cr_assert_eq(o->real_bid_size, 20);
	memcpy(bid, id, 20);
	o->real_bid = bid;
	dwarf_end(dw);
	close(fd);
}

static void srcline_setup(void)
{
	struct rc_opts o = { 0 };

	setenv("TZ", "UTC", 1);
	tzset();
	compile(&o);
	cap_path = rc_tmpname("srcline");
	cr_assert_eq(rc_write_scene(cap_path, &o), 0);
	cr_assert_eq(model__load(cap_path, &model), 0);
}

static void srcline_teardown(void)
{
	char cmd[128];

	teardown();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* fn on pid 500's events of kinds, resolved with source lines; the view's
 * opts.srcline as given. */
static char *run_src(view_fn fn, unsigned kinds, struct report_opts o, bool srcline)
{
	struct symbolizer_opts so = { .srclines = true };
	struct filter f = { .kinds = kinds, .pids = malloc(sizeof(uint32_t)), .npids = 1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	f.pids[0] = 500;
	o.srcline = srcline;
	out = open_memstream(&buf, &len);
	cr_assert_not_null(out);
	run_into(fn, &f, &o, &so, out);
	fclose(out);
	filter__free(&f);
	return buf;
}

/* The view's output from its first line starting with `from`. */
static const char *from(const char *s, const char *line)
{
	const char *p = strstr(s, line);

	cr_assert_not_null(p, "no '%s' in:\n%s", line, s);
	return p;
}

TestSuite(report_srcline, .init = srcline_setup, .fini = srcline_teardown);

Test(report_srcline, table_row_per_line)
{
	char *s = run_src(view_perf, 1u << CAP_KIND_CPU, (struct report_opts){ 0 }, true);
	char *plain = run_src(view_perf, 1u << CAP_KIND_CPU, (struct report_opts){ 0 }, false);

	cr_assert_str_eq(from(s, "# Samples"),
		"# Samples: 3 of event 'cpu'\n"
		"# Event count (samples): 3\n"
		"#\n"
		"# Overhead  Command   Shared Object  Symbol\n"
		"# ........  ........  .............  ....................\n"
		"#\n"
		"    66.67%  realprog  prog           [.] leaf_fn prog.c:3\n"
		"    33.33%  realprog  prog           [.] leaf_fn prog.c:5\n");
	/* without --srcline: one row per function, as before */
	cr_assert_str_eq(from(plain, "# Overhead"),
		"# Overhead  Command   Shared Object  Symbol\n"
		"# ........  ........  .............  ...........\n"
		"#\n"
		"   100.00%  realprog  prog           [.] leaf_fn\n");
	free(s);
	free(plain);
}

Test(report_srcline, call_graph)
{
	struct report_opts o = { .callgraph = true };
	char *s = run_src(view_perf, 1u << CAP_KIND_CPU, o, true);

	cr_assert_str_eq(from(s, "    66.67%"),
		"    66.67%  realprog  prog           [.] leaf_fn prog.c:3\n"
		"            |\n"
		"            ---leaf_fn prog.c:3\n"
		"               caller_fn prog.c:9\n"
		"\n"
		"    33.33%  realprog  prog           [.] leaf_fn prog.c:5\n"
		"            |\n"
		"            ---leaf_fn prog.c:5\n"
		"               caller_fn prog.c:9\n"
		"\n");
	free(s);
}

Test(report_srcline, folded_user_frames_only)
{
	struct report_opts o = { .annotate = true };
	char *cpu = run_src(view_folded, 1u << CAP_KIND_CPU, o, true);
	char *off = run_src(view_folded, 1u << CAP_KIND_OFFCPU, o, true);

	check_folded_format(cpu);
	cr_assert_str_eq(cpu, "realprog;caller_fn prog.c:9;leaf_fn prog.c:3 2\n"
			      "realprog;caller_fn prog.c:9;leaf_fn prog.c:5 1\n");
	/* kernel frames have no line: "_[k]" only */
	cr_assert_str_eq(off, "realprog;caller_fn prog.c:9;leaf_fn prog.c:3;do_syscall_64_[k];"
			      "__x64_sys_nanosleep_[k];hrtimer_nanosleep_[k];do_nanosleep_[k];"
			      "schedule_[k];__schedule_[k] 2000\n");
	free(cpu);
	free(off);
}

Test(report_srcline, topwaits_text_and_json)
{
	struct report_opts json = { .json = true };
	char *s = run_src(view_topwaits, 0, (struct report_opts){ 0 }, true);
	char *j = run_src(view_topwaits, 0, json, true);

	cr_assert_str_eq(s,
		"PID     COMM               COUNT     TOTAL_us       MAX_us  MAX_TIME\n"
		"500     realprog               1         2000         2000  "
		"2026-01-02T03:04:06.320000+00:00\n"
		"        __schedule\n        schedule\n        do_nanosleep\n"
		"        hrtimer_nanosleep\n        __x64_sys_nanosleep\n        do_syscall_64\n"
		"        --\n"
		"        leaf_fn prog.c:3\n"
		"        caller_fn prog.c:9\n\n");
	cr_assert_str_eq(j,
		"[\n  {\"comm\": \"realprog\", \"pid\": 500, \"max_tid\": 500, \"count\": 1, "
		"\"total_us\": 2000, \"max_us\": 2000, "
		"\"max_time\": \"2026-01-02T03:04:06.320000+00:00\", \"stack\": "
		"[\"caller_fn prog.c:9\", \"leaf_fn prog.c:3\", \"do_syscall_64\", "
		"\"__x64_sys_nanosleep\", \"hrtimer_nanosleep\", \"do_nanosleep\", "
		"\"schedule\", \"__schedule\"]}\n]\n");
	free(s);
	free(j);
}

/* The command line passes --srcline to the views. */
Test(report_srcline, cli_flag_reaches_views)
{
	const char *bin = getenv("STKREC") ? getenv("STKREC") : "build/stkrec";
	char cmd[1024], *outp = rc_tmpname("srcline-out"), *s;

	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	snprintf(cmd, sizeof(cmd), "%s report -i %s --folded -e cpu -p 500 --srcline >%s",
		 bin, cap_path, outp);
	cr_assert_eq(system(cmd), 0);
	s = rc_slurp(outp, NULL);
	cr_assert_str_eq(s, "realprog;caller_fn prog.c:9;leaf_fn prog.c:3 2\n"
			    "realprog;caller_fn prog.c:9;leaf_fn prog.c:5 1\n");
	free(s);
	unlink(outp);
	free(outp);
}
