// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec diff A B: compare two captures for one event kind. The filter and
 * symbol options are report's (src/report_cli.h) and apply to both sides,
 * but for --cgroup-a and --cgroup-b, each side's own --cgroup (so that one
 * container can be compared with another); the comparison itself is
 * report/diff.h. Diagnostics go to stderr here.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/diff.h"
#include "src/commands.h"
#include "src/input.h"
#include "src/log.h"
#include "src/opts.h"
#include "src/report_cli.h"
#include "src/util.h"

enum diff_out { DIFF_OUT_TABLE, DIFF_OUT_FOLDED, DIFF_OUT_SVG };

struct diff_cli {
	struct report_common com;
	const char *arg[2];   /* as given: a path or "-" */
	const char *path[2];  /* as named in the output */
	enum diff_out output;
	bool output_set;
	const char *svg_path;
	bool icicle;
	enum diff_norm norm;
	uint32_t max_rows;
	struct model *m[2];
	struct filter side[2]; /* --cgroup-a, --cgroup-b: their patterns only */
	char *label[2];        /* "PATH (--cgroup-a P,...)" for the header */
};

enum {
	OPT_NORMALIZE = REPORT_COMMON_OPT_END, OPT_NO_NORMALIZE, OPT_SVG, OPT_ICICLE,
	OPT_CGROUP_A, OPT_CGROUP_B,
};

static const struct option diff_opts[] = {
	REPORT_COMMON_OPTS,
	OPTS_HELP,
	{ "folded", no_argument, NULL, 'f' },
	{ "normalize", no_argument, NULL, 'n' },
	{ "no-normalize", no_argument, NULL, OPT_NO_NORMALIZE },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "icicle", no_argument, NULL, OPT_ICICLE },
	{ "maxrows", required_argument, NULL, 'r' },
	{ "cgroup-a", required_argument, NULL, OPT_CGROUP_A },
	{ "cgroup-b", required_argument, NULL, OPT_CGROUP_B },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: stkrec diff [-e KIND] [output] [filters] [symbol options] A B\n\n"
		   "Compare two captures for one event kind: which functions and stacks\n"
		   "grew or shrank from A to B, in value and in share of the total. Stacks\n"
		   "match by their symbolized names, so captures of two hosts or builds\n"
		   "compare by function.\n\n"
		   "  -e, --event KIND      offcpu (us), cpu (samples) or bio (bytes per process\n"
		   "                        and disk); default: the first of cpu, offcpu, bio\n"
		   "                        with events in both captures, else in either (the\n"
		   "                        header says which)\n"
		   "Output (default: both captures described, then the functions (self: the\n"
		   "innermost frame) and the stacks that grew and shrank most, with A, B,\n"
		   "B - A, the change in %%, both shares and their difference in percentage\n"
		   "points, Delta pp. Rows rank by |B - A|, then by |Delta pp|; when B is\n"
		   "normalized, by |Delta pp|, then by the change of the raw values (shown as\n"
		   "\"B raw\"). The sign of the first of the two that is not 0 puts a row\n"
		   "under grew or shrank, so a row whose share held while its value changed\n"
		   "is shown; rows equal on both are left out):\n"
		   "  -r, --maxrows N       rows per direction and table (default 10)\n"
		   "  -f, --folded          \"stack countA countB\" per stack, sorted (the input\n"
		   "                        of flamegraph.pl, as difffolded.pl writes it);\n"
		   "                        stacks 0 on both sides after rounding left out\n"
		   "  --svg FILE            differential flame graph into FILE ('-': stdout):\n"
		   "                        widths from B, red grew, blue shrank\n"
		   "    --icicle            root at the top, stacks growing down\n"
		   "  -n, --normalize       scale B to A's total (difffolded.pl -n); on by\n"
		   "                        default when the totals differ by more than 2x\n"
		   "  --no-normalize        never scale B\n\n"
		   "Filters and symbol options apply to both captures. One of A and B may be\n"
		   "'-', standard input, read once (a file named '-': ./-).\n"
		   "  --cgroup-a PATTERN,...  --cgroup for A alone, in place of --cgroup\n"
		   "  --cgroup-b PATTERN,...  the same for B: A and B may be one capture,\n"
		   "                        to compare one container with another\n"
		   "%s\n"
		   "Exit status: 0 ok, 2 bad usage, 3 a capture damaged (output partial),\n"
		   "4 a capture unreadable.\n\n"
		   "examples:\n"
		   "    stkrec diff before.cap after.cap           # what changed, CPU or off-CPU\n"
		   "    stkrec diff -e offcpu -m 1000 old.cap new.cap  # waits of 1 ms or more\n"
		   "    stkrec diff --folded a.cap b.cap | flamegraph.pl > diff.svg\n"
		   "    stkrec diff --svg diff.svg a.cap b.cap     # the same, no Perl\n"
		   "    stkrec diff -e bio --comm postgres a.cap b.cap\n"
		   "    stkrec diff --cgroup-a 3f4e5a6b7c8d --cgroup-b 9a8b7c6d5e4f x.cap x.cap\n"
		   "    stkrec diff --no-normalize --time 5,15 a.cap b.cap\n"
		   "    ssh prod stkrec record -o - -d 30 | stkrec diff base.cap -\n",
		report_common_help);
}

static int set_output(struct diff_cli *c, enum diff_out o)
{
	if (c->output_set && c->output != o) {
		log_usage_error("diff", "choose one of --folded and --svg");
		return -EINVAL;
	}
	c->output = o;
	c->output_set = true;
	return 0;
}

static int parse_opt(struct diff_cli *c, int opt, const char *arg)
{
	uint64_t v;
	int ret = report_common_opt(&c->com, opt, arg);

	if (ret <= 0)
		return ret;
	switch (opt) {
	case 'f':
		return set_output(c, DIFF_OUT_FOLDED);
	case OPT_SVG:
		c->svg_path = arg;
		return set_output(c, DIFF_OUT_SVG);
	case OPT_ICICLE:
		c->icicle = true;
		return 0;
	case 'n':
	case OPT_NO_NORMALIZE:
		if (c->norm != DIFF_NORM_AUTO && c->norm != (opt == 'n' ? DIFF_NORM_ON :
								   DIFF_NORM_OFF)) {
			log_usage_error("diff", "--normalize conflicts with --no-normalize");
			return -EINVAL;
		}
		c->norm = opt == 'n' ? DIFF_NORM_ON : DIFF_NORM_OFF;
		return 0;
	case 'r':
		if (parse_u64(arg, 1, UINT32_MAX, &v))
			return report_bad_value("diff", "-r", arg);
		c->max_rows = v;
		return 0;
	case OPT_CGROUP_A:
	case OPT_CGROUP_B:
		return filter__add_cgroups(&c->side[opt == OPT_CGROUP_B], arg) ?
			report_bad_value("diff", opt == OPT_CGROUP_A ? "--cgroup-a" : "--cgroup-b",
					 arg) : 0;
	}
	log_usage_error("diff", "unknown option");
	return -EINVAL;
}

static int check_args(struct diff_cli *c, int argc, char **argv)
{
	unsigned k = c->com.flt.kinds;
	const char *bad = NULL;

	if (argc != 2)
		bad = argc < 2 ? "two captures needed: stkrec diff A B" : "more than two captures";
	else if (k && (k & (k - 1)))
		bad = "diff compares one kind: -e offcpu, cpu or bio";
	else if (c->icicle && c->output != DIFF_OUT_SVG)
		bad = "--icicle needs --svg";
	else if (c->max_rows && c->output != DIFF_OUT_TABLE)
		bad = "-r applies to the table only";
	else if (input__is_stdin(argv[0]) && input__is_stdin(argv[1]))
		bad = "standard input ('-') holds one capture: A and B cannot both be '-'";
	if (bad) {
		log_usage_error("diff", "%s", bad);
		return -EINVAL;
	}
	c->arg[0] = argv[0];
	c->arg[1] = argv[1];
	c->path[0] = input__name(argv[0]);
	c->path[1] = input__name(argv[1]);
	return report_common_check(&c->com);
}

static int parse_opt_cb(void *c, int opt, const char *arg)
{
	return parse_opt(c, opt, arg);
}

/* 0, 1 for -h, or -EINVAL (printed). */
static int parse_args(struct diff_cli *c, int argc, char **argv)
{
	int err = report_getopt("diff", argc, argv, ":h" REPORT_COMMON_SHORT "fnr:", diff_opts,
				parse_opt_cb, c);

	return err ?: check_args(c, argc - optind, argv + optind);
}

/* The default kind: the first of these with events in both captures, else
 * in either (CPU first, as the most common question is "where did the CPU
 * time go"). */
static const enum cap_kind kind_order[] = { CAP_KIND_CPU, CAP_KIND_OFFCPU, CAP_KIND_BIO };
#define NKINDS (sizeof(kind_order) / sizeof(kind_order[0]))

static bool has(const struct diff_cli *c, int side, enum cap_kind k)
{
	return model__nr_events(c->m[side], k) > 0;
}

/* -e's kind, else the default, with the header line saying how it was
 * chosen (note, DIFF_NOTE_MAX bytes). */
#define DIFF_NOTE_MAX 160
static enum cap_kind pick_kind(const struct diff_cli *c, char *note)
{
	static const char order[] = "the first of cpu, offcpu, bio";
	unsigned k = c->com.flt.kinds;
	size_t i;

	note[0] = '\0';
	if (k)
		return (enum cap_kind)__builtin_ctz(k);
	for (i = 0; i < NKINDS; i++) {
		if (has(c, 0, kind_order[i]) && has(c, 1, kind_order[i])) {
			snprintf(note, DIFF_NOTE_MAX, "kind: %s, %s with events in both "
				 "captures (-e chooses)", cap_kind_name(kind_order[i]), order);
			return kind_order[i];
		}
	}
	for (i = 0; i < NKINDS; i++) {
		if (has(c, 0, kind_order[i]) || has(c, 1, kind_order[i])) {
			snprintf(note, DIFF_NOTE_MAX, "kind: %s, no kind has events in both "
				 "captures: %s in either (-e chooses)",
				 cap_kind_name(kind_order[i]), order);
			return kind_order[i];
		}
	}
	snprintf(note, DIFF_NOTE_MAX, "kind: %s, neither capture has events (-e chooses)",
		 cap_kind_name(kind_order[0]));
	return kind_order[0];
}

/* Nothing to compare is not an error, but it must not pass unseen. */
static void warn_empty(const struct diff_cli *c, const struct diff *d, enum cap_kind k)
{
	if (!has(c, 0, k) && !has(c, 1, k))
		log_warn("diff: neither capture has %s events: nothing to compare",
			 cap_kind_name(k));
	else if (!diff__total(d, DIFF_A) && !diff__total(d, DIFF_B))
		log_warn("diff: no %s events of either capture pass the filters: nothing "
			 "to compare", cap_kind_name(k));
}

/* The side's --cgroup-a/-b patterns in place of the filter's --cgroup,
 * and back (a swap, done twice). */
static void swap_cgroups(struct filter *f, struct filter *side)
{
	struct filter t = *f;

	f->cgroups = side->cgroups, f->ncgroups = side->ncgroups;
	f->cgroups_cap = side->cgroups_cap;
	side->cgroups = t.cgroups, side->ncgroups = t.ncgroups;
	side->cgroups_cap = t.cgroups_cap;
}

/* The side as the output names it: its path, and its own patterns. */
static const char *side_label(struct diff_cli *c, int side)
{
	const struct filter *f = &c->side[side];
	size_t len = 0;
	FILE *mem;
	int i;

	if (!f->ncgroups)
		return c->path[side];
	if (c->label[side])
		return c->label[side];
	mem = open_memstream(&c->label[side], &len);
	if (!mem)
		return c->path[side];
	fprintf(mem, "%s (--cgroup-%c ", c->path[side], side ? 'b' : 'a');
	for (i = 0; i < f->ncgroups; i++)
		fprintf(mem, "%s%s", i ? "," : "", f->cgroups[i]);
	fputc(')', mem);
	return fclose(mem) ? c->path[side] : c->label[side];
}

/* Fold one side: the filter is bound to its model again first. */
static int add_side(struct diff_cli *c, struct diff *d, int side)
{
	struct report_ctx ctx = { .model = c->m[side], .filter = &c->com.flt,
				  .opts.srcline = c->com.sym.srclines };
	bool own = c->side[side].ncgroups > 0;
	int err;

	if (own)
		swap_cgroups(&c->com.flt, &c->side[side]);
	err = filter__bind(&c->com.flt, c->m[side]);
	if (own) /* bound: the flags per cgroup stay, the patterns go back */
		swap_cgroups(&c->com.flt, &c->side[side]);
	err = err ?: resolver__new(c->m[side], &c->com.sym, &ctx.res);
	if (!err)
		err = diff__add(d, side, side_label(c, side), &ctx);
	if (!err)
		report_common_sym_stats(c->path[side], ctx.res);
	resolver__free(ctx.res);
	return err;
}

/* --folded has no header: say what automatic normalization did. */
static void note_folded(const struct diff_cli *c, const struct diff *d)
{
	uint64_t ta = diff__total(d, DIFF_A), tb = diff__total(d, DIFF_B);
	size_t zero = diff__nr_zero_stacks(d);
	char dropped[96] = "";

	if (c->output != DIFF_OUT_FOLDED || c->norm != DIFF_NORM_AUTO || !diff__normalized(d))
		return;
	if (zero)
		snprintf(dropped, sizeof(dropped), "; %zu stack%s 0 on both sides left out",
			 zero, zero == 1 ? "" : "s");
	log_warn("diff: B normalized to A's total (B values x%.4f): the totals differ by "
		 "more than 2x (--no-normalize: raw values)%s", (double)ta / (double)tb, dropped);
}

static int write_out(struct diff_cli *c, const struct diff *d)
{
	FILE *f = stdout;
	int err;

	if (c->output == DIFF_OUT_SVG && strcmp(c->svg_path, "-")) {
		f = fopen(c->svg_path, "w");
		if (!f)
			return -errno;
	}
	if (c->output == DIFF_OUT_SVG)
		err = diff__write_svg(d, c->icicle, f);
	else if (c->output == DIFF_OUT_FOLDED)
		err = diff__write_folded(d, f);
	else
		err = diff__write_table(d, c->max_rows, f);
	if (!err)
		note_folded(c, d);
	if (f != stdout) {
		if (fclose(f) && !err)
			err = -errno;
	} else if (!err && fflush(stdout)) {
		err = -errno;
	}
	return err;
}

/* Fold both sides and join them into *d. */
static int diff_build(struct diff_cli *c, struct diff **d)
{
	char note[DIFF_NOTE_MAX];
	enum cap_kind k = pick_kind(c, note);
	int err;

	err = diff__new(k, d) ?: (note[0] ? diff__set_note(*d, note) : 0) ?:
	      add_side(c, *d, DIFF_A) ?: add_side(c, *d, DIFF_B) ?: diff__join(*d, c->norm);
	if (!err)
		warn_empty(c, *d, k);
	return err;
}

static int diff_run(struct diff_cli *c)
{
	struct diff *d = NULL;
	int i, err, ret = 0;

	/* each side's folded stacks grouped as read (a file's): memory for
	 * the stacks, not the events */
	c->com.load.stream_events = true;
	c->com.load.group_events = true;
	for (i = 0; i < 2 && !ret; i++)
		ret = report_common_load(&c->com, c->arg[i], &c->m[i]);
	if (ret)
		return ret;
	err = diff_build(c, &d) ?: write_out(c, d);
	diff__free(d);
	if (err) {
		log_error("%s: %s", c->output == DIFF_OUT_SVG ? c->svg_path : "diff",
			  cap_strerror(err));
		return EXIT_FAIL;
	}
	for (i = 0; i < 2; i++) {
		if (model__recovered(c->m[i])) {
			log_warn("%s: output is partial: %s", c->path[i],
				 model__loss_text(c->m[i]));
			ret = EXIT_RECOVERED;
		}
	}
	return ret;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cli c = { .com.cmd = "diff" };
	int err, ret;

	err = parse_args(&c, argc, argv);
	if (err) {
		filter__free(&c.com.flt);
		filter__free(&c.side[0]);
		filter__free(&c.side[1]);
		if (err == 1) {
			usage(stdout);
			return EXIT_OK;
		}
		return EXIT_USAGE;
	}
	ret = diff_run(&c);
	model__free(c.m[0]);
	model__free(c.m[1]);
	filter__free(&c.com.flt);
	filter__free(&c.side[0]);
	filter__free(&c.side[1]);
	free(c.label[0]);
	free(c.label[1]);
	return ret;
}
