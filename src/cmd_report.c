// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec report / stkrec script: parse options, load the capture, bind the
 * filters (src/report_cli.c), pick the view and print to stdout.
 * Diagnostics go to stderr here and only here; the views return codes.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/filter.h"
#include "report/model.h"
#include "report/resolve.h"
#include "report/views.h"
#include "src/commands.h"
#include "src/input.h"
#include "src/log.h"
#include "src/record_opts.h"
#include "src/report_cli.h"
#include "src/util.h"

#define DEFAULT_INPUT "stkrec.cap"

/*
 * The views, one row each, in the order `report -h` lists them: the
 * defaults (report's tables, script's lines), then a view per option (the
 * exports last, under their heading). The row is all `report` needs: the
 * option, its help, how it writes, the function. A new view is its
 * report/view_NAME.c and a row here.
 */
#define VIEW_FILE     0x1 /* writes FILE ('-': stdout), created once loaded */
#define VIEW_EXPORT   0x2 /* a file for other viewers, listed under Exports */
#define VIEW_CPU_TIME 0x4 /* CPU samples as time: the recording's period */
#define VIEW_STREAM   0x8 /* groups the events as it reads them (agg__collect) */

struct view_row {
	const char *opt;   /* its long option; NULL: a command's default */
	int has_arg;       /* the option's: FILE, TID|PID */
	int letter;        /* its short option too, or 0 */
	unsigned flags;
	int (*fn)(struct report_ctx *ctx, FILE *out);
	const char *help;  /* its lines of `report -h`, its modifiers' after */
};

enum { VIEW_REPORT, VIEW_SCRIPT }; /* the defaults' rows */

static const struct view_row views[] = {
	[VIEW_REPORT] = { .fn = view_perf, .flags = VIEW_STREAM, .help =
		"  --header              the whole header: host, version, every recorder\n"
		"                        counter (also with -v)\n"
		"  -g, --call-graph      callers under each row (percent of the kind's total)\n"
		"  -s, --sort KEYS       columns among comm,pid,dso,sym,wait,usym,cgroup,\n"
		"                        container (default comm,dso,sym; off-CPU\n"
		"                        comm,wait,usym, with -g comm,dso,sym); cgroup is\n"
		"                        the path, container RUNTIME:ID (docker:3f4e5a6b7c8d,\n"
		"                        pod:UID, systemd:UNIT, machine:NAME; - for none)\n" },
	[VIEW_SCRIPT] = { .fn = view_script },
	{ "folded", no_argument, 'f', VIEW_STREAM, view_folded,
		"  -f, --folded          folded stacks for flamegraph.pl: comm;outer;...;inner\n"
		"                        VALUE (off-CPU: us, CPU: samples; off-CPU is shown\n"
		"                        when both are present unless -e cpu)\n"
		"    -d, --delimited     a \"-\" frame between user and kernel frames\n"
		"    -a, --annotations   \"_[k]\" after kernel frame names\n"
		"    --pid               first frame \"comm-PID\" (stackcollapse-perf --pid\n"
		"                        style) instead of \"comm\"\n"
		"    --wakers            offwaketime's folded stacks (record -e wakeup):\n"
		"                        waiter frames;--;waker frames innermost first;\n"
		"                        waker name[;[io DISK OP SIZE]], off-CPU us\n" },
	{ "top-waits", no_argument, 0, VIEW_STREAM, view_topwaits,
		"  --top-waits           longest off-CPU wait per (pid, stack), its count,\n"
		"                        total and wall-clock time, and (-e wakeup) who\n"
		"                        woke it; -r limits rows\n"
		"    --json              the same as a JSON array\n" },
	{ "chain", required_argument, 0, 0, view_chain,
		"  --chain TID|PID       the chain of waits behind the longest wait of a\n"
		"                        thread (or process): who woke it, what that\n"
		"                        waker waited on just before, ...; -r hops (5)\n" },
	{ "biotop", no_argument, 0, 0, view_biotop,
		"  --biotop [INTERVAL [COUNT]]  block I/O by process per INTERVAL seconds of\n"
		"                        capture time (default 1); D: R read, W write,\n"
		"                        F flush, D discard, ? other; AVGms: issue->complete\n"
		"    -r, --maxrows N     rows per table (default 20; top-waits: all)\n" },
	{ "svg", required_argument, 0, VIEW_FILE | VIEW_STREAM, view_svg,
		"  --svg FILE            interactive flame graph of the folded stacks (block\n"
		"                        I/O bytes per comm, submitter stack and disk with\n"
		"                        -e bio) into FILE, '-':\n"
		"                        stdout. Opens in a browser: click zooms, Ctrl-F\n"
		"                        searches\n"
		"    --icicle            root at the top, stacks growing down\n" },
	{ "pprof", required_argument, 0, VIEW_FILE | VIEW_EXPORT | VIEW_CPU_TIME | VIEW_STREAM,
	  view_pprof,
		"  --pprof FILE          gzip-compressed profile.proto for go tool pprof,\n"
		"                        Pyroscope, Parca: samples per stack and thread,\n"
		"                        labels comm, pid, tid (and cgroup, container_id,\n"
		"                        pod_uid where known); CPU time at the recorded\n"
		"                        rate (the capture's, or its command line's)\n" },
	{ "speedscope", required_argument, 0, VIEW_FILE | VIEW_EXPORT | VIEW_CPU_TIME,
	  view_speedscope,
		"  --speedscope FILE     speedscope JSON: per thread, off-CPU waits and block\n"
		"                        I/O as timelines, CPU samples as a sampled profile\n" },
	{ "chrome-trace", required_argument, 0, VIEW_FILE | VIEW_EXPORT, view_chrome,
		"  --chrome-trace FILE   Trace Event Format JSON for ui.perfetto.dev and\n"
		"                        chrome://tracing: a track per thread (off-CPU\n"
		"                        intervals, CPU samples) and per block device\n" },
};

#define NVIEWS (sizeof(views) / sizeof(views[0]))

struct cli {
	const char *cmd;
	bool script;
	const char *input;
	const struct view_row *view;
	bool view_set;
	struct report_common com;
	struct report_opts opts;
	const char *out_path; /* of the file views */
	unsigned report_only; /* report-only options seen (bit per option) */
	unsigned folded_only;
};

/* report's own options: the views' modifiers, then an option per view
 * (OPT_VIEWS + its row). */
enum {
	OPT_PID_FRAME = REPORT_COMMON_OPT_END, OPT_JSON, OPT_ICICLE, OPT_WAKERS, OPT_HEADER,
	OPT_VIEWS,
};

/* The options but the views'. */
static const struct option long_opts[] = {
	REPORT_COMMON_OPTS,
	OPTS_HELP,
	{ "input", required_argument, NULL, 'i' },
	{ "delimited", no_argument, NULL, 'd' },
	{ "annotations", no_argument, NULL, 'a' },
	{ "pid", no_argument, NULL, OPT_PID_FRAME },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "maxrows", required_argument, NULL, 'r' },
	{ "sort", required_argument, NULL, 's' },
	{ "call-graph", no_argument, NULL, 'g' },
	{ "icicle", no_argument, NULL, OPT_ICICLE },
	{ "wakers", no_argument, NULL, OPT_WAKERS },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ 0 },
};

#define NLONG (sizeof(long_opts) / sizeof(long_opts[0]) - 1)

static int view_opt(size_t i)
{
	return views[i].letter ? views[i].letter : OPT_VIEWS + (int)i;
}

/* long_opts and the views' options, {0}-terminated, into all. */
static void report_options(struct option all[NLONG + NVIEWS + 1])
{
	size_t i, n = NLONG;

	memcpy(all, long_opts, NLONG * sizeof(*all));
	for (i = 0; i < NVIEWS; i++)
		if (views[i].opt)
			all[n++] = (struct option){ views[i].opt, views[i].has_arg, NULL, view_opt(i) };
	all[n] = (struct option){ 0 };
}

static const char input_help[] =
	"Capture:\n"
	"  -e, --event KIND,...  offcpu, cpu, bio, wakeup (default: all in the capture)\n"
	"  -i, --input FILE      capture to read (default " DEFAULT_INPUT "); '-': standard\n"
	"                        input, read once (a file named '-': ./-)\n";

static void usage_report(FILE *f)
{
	bool exports = false;
	size_t i;

	fputs("usage: stkrec report [-i FILE] [view] [filters] [symbol options]\n\n"
	      "Symbolize a capture offline and summarize it.\n\n"
	      "Views (default: perf-style tables of self overhead per event kind; off-CPU\n"
	      "rows by where threads waited: the kernel function outside the scheduler,\n"
	      "as ps's WCHAN, and the user function outside the C library; kernel\n"
	      "threads idle throughout the recording in one line after it, -k lists them):\n",
	      f);
	for (i = 0; i < NVIEWS; i++) {
		if ((views[i].flags & VIEW_EXPORT) && !exports) {
			fputs("Exports for other viewers (FILE, '-': stdout; every filter "
			      "applies):\n", f);
			exports = true;
		}
		if (views[i].help)
			fputs(views[i].help, f);
	}
	fprintf(f, "\n%s%s\n"
		   "Missing stacks show as [Missed User Stack] / [Missed Kernel Stack] (not\n"
		   "taken) or [lost stack] (definition lost with a damaged block).\n\n"
		   "Exit status: 0 ok, 2 bad usage, 3 capture damaged (output partial),\n"
		   "4 capture unreadable.\n\n"
		   "examples:\n"
		   "    stkrec report                        # perf-style tables of stkrec.cap\n"
		   "    stkrec report -i x.cap -g -e offcpu  # off-CPU table with call graphs\n"
		   "    stkrec report --folded | flamegraph.pl > offcpu.svg\n"
		   "    stkrec report --folded -e cpu -d -a  # CPU flame graph input, annotated\n"
		   "    stkrec report --top-waits -m 10000   # waits of 10 ms or more\n"
		   "    stkrec report --top-waits --json -p 185\n"
		   "    stkrec report --biotop 5 10          # 5 second tables, 10 of them\n"
		   "    stkrec report --time 2.5,4 --comm nginx  # a window, one program\n"
		   "    stkrec report --symfs /srv/rootfs    # binaries copied from the target\n"
		   "    stkrec report -e cpu --svg cpu.svg   # CPU flame graph\n"
		   "    stkrec report --pprof x.pb.gz && go tool pprof -top x.pb.gz\n"
		   "    stkrec report -p 185 --chrome-trace x.json   # open in ui.perfetto.dev\n"
		   "    ssh prod stkrec record -o - -d 30 | stkrec report -i -  # over ssh\n",
		input_help, report_common_help);
}

static void usage_script(FILE *f)
{
	fprintf(f, "usage: stkrec script [-i FILE] [--folded] [filters] [symbol options]\n\n"
		   "Print every event in time order, one line each:\n"
		   "  COMM PID/TID [CPU] SECONDS: offcpu: US us state 0xSTATE [open:WHICH]\n"
		   "  COMM PID/TID [CPU] SECONDS: cpu:\n"
		   "  COMM PID/TID [---] SECONDS: bio: BYTES bytes OP DISK MAJ:MIN sector N lat US us\n"
		   "then the stack innermost first, one \"\\t    ADDR NAME (OBJECT)\" line per\n"
		   "frame and a blank line (perf script style); block I/O: the submitter's\n"
		   "stacks when it submitted the request, where recorded. SECONDS count from\n"
		   "the capture start; OP is R, W, F (flush), D (discard) or ?. A wait the\n"
		   "recording did not see whole is marked open:start (it began before the\n"
		   "capture: its SECONDS are negative; open:start? when the kernel did not\n"
		   "say when), open:end (still waiting at the end) or open:both.\n\n"
		   "  -f, --folded          the stack on the same line, outermost first,\n"
		   "                        frames separated by ';'\n\n"
		   "%s%s\n"
		   "examples:\n"
		   "    stkrec script                        # everything in stkrec.cap\n"
		   "    stkrec script -e bio | awk '$6 == \"bio:\"'\n"
		   "    stkrec script --folded -p 185 -m 1000 | grep futex\n"
		   "    ssh prod cat /var/tmp/x.cap | stkrec script -i -  # standard input\n",
		input_help, report_common_help);
}

static int parse_sort(const char *s, struct report_opts *o)
{
	static const char *const names[SORT_MAX] = { "comm", "pid", "dso", "sym", "wait", "usym",
						     "cgroup", "container" };
	char *dup = strdup(s), *tok, *save = NULL;
	unsigned seen = 0;
	int k, err = 0;

	if (!dup)
		return -ENOMEM;
	o->nsort = 0;
	for (tok = strtok_r(dup, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < SORT_MAX && strcmp(tok, names[k]); k++)
			;
		if (k == SORT_MAX || (seen & (1u << k)))
			err = -EINVAL;
		else
			o->sort[o->nsort++] = k;
		seen |= 1u << k;
	}
	free(dup);
	return err || !o->nsort ? -EINVAL : 0;
}

/* "choose one of --folded, ... and --chrome-trace": the views' options,
 * those without a value first. */
static int view_conflict(const char *cmd)
{
	const char *names[NVIEWS];
	char msg[512];
	size_t i, n = 0, len;

	for (i = 0; i < NVIEWS; i++)
		if (views[i].opt && views[i].has_arg == no_argument)
			names[n++] = views[i].opt;
	for (i = 0; i < NVIEWS; i++)
		if (views[i].opt && views[i].has_arg != no_argument)
			names[n++] = views[i].opt;
	len = snprintf(msg, sizeof(msg), "choose one of");
	for (i = 0; i < n && len < sizeof(msg); i++)
		len += snprintf(msg + len, sizeof(msg) - len, "%s--%s",
				!i ? " " : i + 1 < n ? ", " : " and ", names[i]);
	log_usage_error(cmd, "%s", msg);
	return -EINVAL;
}

static int set_view(struct cli *c, const struct view_row *v)
{
	if (c->view_set && c->view != v)
		return view_conflict(c->cmd);
	c->view = v;
	c->view_set = true;
	return 0;
}

/* The view opt selects (and its value): 0, -EINVAL, or 1 when opt selects
 * none. */
static int opt_view(struct cli *c, int opt, const char *arg)
{
	const struct view_row *v = NULL;
	uint64_t id;
	size_t i;

	for (i = 0; i < NVIEWS && !v; i++)
		if (views[i].opt && view_opt(i) == opt)
			v = &views[i];
	if (!v)
		return 1;
	if (c->script && v->fn == view_folded) { /* script's lines, folded */
		c->opts.script_folded = true;
		return 0;
	}
	c->report_only |= 1;
	if (v->flags & VIEW_FILE)
		c->out_path = arg;
	if (v->fn == view_chain) {
		if (parse_u64(arg, 1, UINT32_MAX, &id))
			return report_bad_value(c->cmd, "--chain", arg);
		c->opts.chain_id = id;
	}
	return set_view(c, v);
}

/* The views' modifiers: 0, -EINVAL, or 1 when opt is not one of them. */
static int opt_modifier(struct cli *c, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'd':
		c->opts.delimited = true;
		break;
	case 'a':
		c->opts.annotate = true;
		break;
	case OPT_PID_FRAME:
		c->opts.with_pid = true;
		break;
	case OPT_ICICLE:
		c->report_only |= 1;
		c->opts.icicle = true;
		return 0;
	case OPT_WAKERS:
		c->opts.wakers = true;
		break;
	case OPT_JSON:
		c->opts.json = true;
		c->report_only |= 1;
		return 0;
	case 'r':
		if (parse_u64(arg, 1, UINT32_MAX, &v))
			return report_bad_value(c->cmd, "-r", arg);
		c->opts.max_rows = v;
		c->report_only |= 1;
		return 0;
	case 's':
		c->report_only |= 1;
		return parse_sort(arg, &c->opts) ? report_bad_value(c->cmd, "--sort", arg) : 0;
	case 'g':
		c->opts.callgraph = true;
		c->report_only |= 1;
		return 0;
	case OPT_HEADER:
		c->opts.header = true;
		c->report_only |= 1;
		return 0;
	default:
		return 1;
	}
	c->folded_only |= 1; /* -d, -a, --pid, --wakers */
	c->report_only |= 1;
	return 0;
}

static int parse_opt(struct cli *c, int opt, const char *arg)
{
	int ret = report_common_opt(&c->com, opt, arg);

	if (ret <= 0)
		return ret;
	ret = opt_view(c, opt, arg);
	if (ret <= 0)
		return ret;
	ret = opt_modifier(c, opt, arg);
	if (ret <= 0)
		return ret;
	if (opt == 'i') {
		c->input = arg;
		return 0;
	}
	log_usage_error(c->cmd, "unknown option");
	return -EINVAL;
}

static int parse_biotop_args(struct cli *c, int argc, char **argv)
{
	uint64_t v;

	if (argc > 2 || (argc && c->view->fn != view_biotop)) {
		log_usage_error(c->cmd, "unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	if (argc >= 1) {
		if (parse_seconds(argv[0], &v) || v < 1000000) /* at least 1 ms */
			return report_bad_value(c->cmd, "INTERVAL", argv[0]);
		c->opts.interval_ns = v;
	}
	if (argc == 2) {
		if (parse_u64(argv[1], 1, UINT32_MAX, &v))
			return report_bad_value(c->cmd, "COUNT", argv[1]);
		c->opts.count = v;
	}
	return 0;
}

static int check_combinations(struct cli *c)
{
	const char *bad = NULL;

	if (c->script && c->report_only)
		bad = "that option belongs to 'stkrec report'";
	else if (c->folded_only && c->view->fn != view_folded)
		bad = "-d, -a, --pid and --wakers need --folded";
	else if (c->opts.json && c->view->fn != view_topwaits)
		bad = "--json needs --top-waits";
	else if (c->opts.icicle && c->view->fn != view_svg)
		bad = "--icicle needs --svg";
	else if ((c->opts.callgraph || c->opts.nsort) && c->view->fn != view_perf)
		bad = "-g and --sort apply to the default view only";
	else if (c->opts.header && c->view->fn != view_perf)
		bad = "--header applies to the default view only";
	if (bad) {
		log_usage_error(c->cmd, "%s", bad);
		return -EINVAL;
	}
	return report_common_check(&c->com);
}

static int parse_opt_cb(void *c, int opt, const char *arg)
{
	return parse_opt(c, opt, arg);
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	struct option opts[NLONG + NVIEWS + 1];
	int err;

	report_options(opts);
	c->input = DEFAULT_INPUT;
	c->view = &views[c->script ? VIEW_SCRIPT : VIEW_REPORT];
	err = report_getopt(c->cmd, argc, argv, ":hi:" REPORT_COMMON_SHORT "fdar:s:g", opts,
			    parse_opt_cb, c);
	c->opts.srcline = c->com.sym.srclines;
	if (err)
		return err;
	err = parse_biotop_args(c, argc - optind, argv + optind);
	return err ? err : check_combinations(c);
}

/* --svg, --pprof, ... FILE: the file is created only once the capture has
 * loaded. The exports write hundreds of megabytes in small pieces: a large
 * buffer makes that a few thousand write(2)s. */
static int write_file(struct cli *c, struct report_ctx *ctx)
{
	FILE *f = strcmp(c->out_path, "-") ? fopen(c->out_path, "w") : stdout;
	int err;

	if (!f)
		return -errno;
	if (f != stdout)
		setvbuf(f, NULL, _IOFBF, 1u << 20);
	errno = 0;
	err = c->view->fn(ctx, f);
	if (!err && ferror(f)) /* a write failed: its errno, as fclose's would be */
		err = errno ? -errno : -EIO;
	if (f != stdout && fclose(f) && !err)
		err = -errno;
	return err;
}

/* The CPU time one sample stands for: the rate the capture holds (FORMAT.md
 * §3.1, 1.3), else the recording's -F HZ or -c NS, read back by record's
 * own parser from the command line an older capture keeps. 0 when it is
 * not a line `stkrec record` takes here (-C of a CPU this host lacks, a
 * line cut at 1023 bytes), or the samples were taken on a clock this
 * version does not know. */
static uint64_t recorded_period(const struct model *m)
{
	const struct cap_header *h = model__header(m);
	char *dup, *argv[520], *save = NULL, *tok;
	char why[256];
	struct record_opts o;
	uint64_t period = 0;
	int argc = 0;

	if (h->sample_clock != CAP_CLOCK_NONE)
		return h->sample_clock == CAP_CLOCK_CPU ?
		       cap_sample_period(h->sample_flags, h->sample_rate) : 0;
	dup = strdup(h->cmdline);
	if (!dup)
		return 0;
	tok = strtok_r(dup, " ", &save);
	if (tok && !strcmp(tok, "stkrec")) /* as record writes it */
		while ((tok = strtok_r(NULL, " ", &save)) && argc < 519)
			argv[argc++] = tok;
	argv[argc] = NULL;
	if (argc && !strcmp(argv[0], "record")) {
		if (record_opts__parse(argc, argv, &o, why, sizeof(why)) == 0)
			period = cap_sample_period(o.period ? 0 : CAP_SAMPLE_FREQ,
						   o.period ? o.period : o.freq);
		record_opts__free(&o);
	}
	free(dup);
	return period;
}

static void set_cpu_period(struct cli *c, struct report_ctx *ctx)
{
	if (!(c->view->flags & VIEW_CPU_TIME) ||
	    !filter__kind(&c->com.flt, CAP_KIND_CPU) ||
	    !model__nr_events(ctx->model, CAP_KIND_CPU))
		return;
	ctx->opts.cpu_period_ns = recorded_period(ctx->model);
	if (!ctx->opts.cpu_period_ns)
		log_warn("%s: no sampling rate in the capture's command line ('%s'): CPU "
			 "samples are counted, without CPU time", input__name(c->input),
			 model__header(ctx->model)->cmdline);
	else
		log_debug(1, "%s: one CPU sample stands for %" PRIu64 " ns", input__name(c->input),
			  ctx->opts.cpu_period_ns);
}

static int run_view(struct cli *c, struct report_ctx *ctx)
{
	if (c->view->flags & VIEW_FILE)
		return write_file(c, ctx);
	/* one unit per folded file: off-CPU wins, say so */
	if (c->view->fn == view_folded && filter__kind(&c->com.flt, CAP_KIND_OFFCPU) &&
	    filter__kind(&c->com.flt, CAP_KIND_CPU) &&
	    model__nr_events(ctx->model, CAP_KIND_OFFCPU) &&
	    model__nr_events(ctx->model, CAP_KIND_CPU))
		log_warn("folded: off-CPU time shown; '-e cpu' gives the CPU samples");
	if (c->view->fn == view_chain)
		ctx->opts.chain_hops = c->opts.max_rows;
	return c->view->fn(ctx, stdout);
}

/* -v: what the unwinder could not unwind (--call-graph dwarf), and which
 * Python stacks were cut (FORMAT.md §4.24) */
static void unwind_stats(const char *path, const struct model *m)
{
	uint64_t v[CAP_STAT_MAX] = { 0 }, value;
	uint32_t feat = model__header(m)->features;
	const char *key;
	size_t i;
	int k;

	for (i = 0; model__stat(m, i, &key, &value) == 0; i++) {
		k = cap_stat_key_of(key);
		if (k >= 0)
			v[k] += value;
	}
	if (feat & CAP_FEAT_PYTHON)
		log_debug(1, "%s: python stacks cut: offcpu %" PRIu64 ", cpu %" PRIu64 ", bio %"
			  PRIu64 ", wakeup %" PRIu64 "; frames whose code was not read %" PRIu64,
			  path, v[CAP_STAT_PY_CUT_OFFCPU], v[CAP_STAT_PY_CUT_CPU],
			  v[CAP_STAT_PY_CUT_BIO], v[CAP_STAT_PY_CUT_WAKEUP],
			  v[CAP_STAT_PY_CODES_UNREAD]);
	if (!(feat & CAP_FEAT_DWARF_UNWIND))
		return;
	log_debug(1, "%s: call graph dwarf: user stacks truncated: offcpu %" PRIu64 ", cpu %"
		  PRIu64 ", bio %" PRIu64 "; by frame pointers before their tables: offcpu %"
		  PRIu64 ", cpu %" PRIu64 ", bio %" PRIu64, path, v[CAP_STAT_UNWIND_TRUNC_OFFCPU],
		  v[CAP_STAT_UNWIND_TRUNC_CPU], v[CAP_STAT_UNWIND_TRUNC_BIO],
		  v[CAP_STAT_UNWIND_NO_TABLES_OFFCPU], v[CAP_STAT_UNWIND_NO_TABLES_CPU],
		  v[CAP_STAT_UNWIND_NO_TABLES_BIO]);
}

static int report_run(struct cli *c)
{
	struct report_ctx ctx = { .filter = &c->com.flt, .opts = c->opts };
	struct model *m = NULL;
	struct resolver *res = NULL;
	int err, ret;

	/* the off-CPU and CPU events read again from the file, not held:
	 * memory for what the view groups, not for the events (--wakers joins
	 * each wait to its waker, which needs them held) */
	c->com.load.stream_events = (c->view->flags & VIEW_STREAM) && !c->opts.wakers;
	/* ... and grouped as they are first read, so that a view that takes
	 * them whole reads the file once */
	c->com.load.group_events = c->com.load.stream_events;
	ret = report_common_load(&c->com, c->input, &m);
	if (ret)
		return ret;
	ret = EXIT_FAIL;
	err = resolver__new(m, &c->com.sym, &res);
	if (err) {
		log_error("symbolizer: %s", cap_strerror(err));
		goto out;
	}
	ctx.model = m;
	ctx.res = res;
	ctx.opts.header |= log_verbosity > 0; /* -v: perf's --header */
	set_cpu_period(c, &ctx);
	if (filter__none_match(&c->com.flt, m)) {
		/* one line, not empty tables; JSON and files stay documents */
		log_warn("%s: no events match the filters", c->input);
		err = c->opts.json || c->out_path ? run_view(c, &ctx) : 0;
	} else {
		err = run_view(c, &ctx);
	}
	if (!err && fflush(stdout))
		err = -errno;
	if (err == -ENOENT && c->view->fn == view_chain) {
		log_error("%s: no off-CPU wait of thread or process %" PRIu32 " matches",
			  input__name(c->input), c->opts.chain_id);
		goto out;
	}
	if (err) {
		log_error("%s: %s", c->out_path ? c->out_path : c->cmd, cap_strerror(err));
		goto out;
	}
	report_common_sym_stats(input__name(c->input), res);
	unwind_stats(input__name(c->input), m);
	ret = EXIT_OK;
	if (model__recovered(m)) {
		log_warn("%s: output is partial: %s", input__name(c->input),
			 model__loss_text(m));
		ret = EXIT_RECOVERED;
	}
out:
	resolver__free(res);
	model__free(m);
	return ret;
}

int report_cli_main(int argc, char **argv, bool script)
{
	struct cli c = { .cmd = script ? "script" : "report", .script = script };
	int err, ret;

	c.com.cmd = c.cmd;
	err = parse_args(&c, argc, argv);
	if (err) {
		filter__free(&c.com.flt);
		if (err < 0)
			return EXIT_USAGE;
		if (script)
			usage_script(stdout);
		else
			usage_report(stdout);
		return EXIT_OK;
	}
	ret = report_run(&c);
	filter__free(&c.com.flt);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	return report_cli_main(argc, argv, false);
}
