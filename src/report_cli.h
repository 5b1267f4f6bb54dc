/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the commands that read captures share (src/report_cli.c): `stkrec
 * report`, `script` and `diff` the filter and symbol options and the
 * loading (struct report_common); `pack` the symbol options' parser; they,
 * `scrub` and `info` the option loop. `report` and `script` are one
 * command (src/cmd_report.c). */
#ifndef STKREC_SRC_REPORT_CLI_H
#define STKREC_SRC_REPORT_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include "report/filter.h"
#include "report/model.h"
#include "report/resolve.h"
#include "src/opts.h"

/* `stkrec report` or, with script, `stkrec script` (src/cmd_report.c):
 * argv[0] is the command name. Returns the process exit code. */
int report_cli_main(int argc, char **argv, bool script);

/* Report-time filters and symbol options, as every reading command takes
 * them. */
struct report_common {
	const char *cmd;            /* for messages: "report", "diff", ... */
	struct filter flt;
	struct symbolizer_opts sym;
	struct model_opts load;
};

/* getopt letters of the shared options. */
#define REPORT_COMMON_SHORT "p:t:m:M:ukUKe:v"
/* Values of the shared long options without a letter; a command's own
 * start at REPORT_COMMON_OPT_END. */
enum {
	OPT_COMM = OPT_OWN, OPT_TIME, OPT_OPEN_WAITS, OPT_INLINE, OPT_SRCLINE,
	OPT_MAX_MEMORY, OPT_PYTHON, OPT_CGROUP, REPORT_COMMON_OPT_END,
};
/* The shared long options, rows for a command's getopt_long() table. */
#define REPORT_COMMON_OPTS \
	OPTS_TASKS, OPTS_SYMBOLS, OPTS_VERBOSE, \
	{ "comm", required_argument, NULL, OPT_COMM }, \
	{ "cgroup", required_argument, NULL, OPT_CGROUP }, \
	{ "time", required_argument, NULL, OPT_TIME }, \
	{ "open-waits", no_argument, NULL, OPT_OPEN_WAITS }, \
	{ "inline", no_argument, NULL, OPT_INLINE }, \
	{ "srcline", no_argument, NULL, OPT_SRCLINE }, \
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY }, \
	{ "python", required_argument, NULL, OPT_PYTHON }
/* getopt_long over argv, each option to fn(arg, opt, optarg) until one
 * fails. 0, 1 after -h (which shortopts must hold), -EINVAL after an unknown
 * option or a missing value (printed, naming cmd), or fn's error. */
int report_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
		  const struct option *opts, int (*fn)(void *arg, int opt, const char *val),
		  void *arg);
/* After report_getopt() (or getopt): the capture a command reads, *in
 * when an option set it, else the one argument left; 0, or -EINVAL
 * (printed) for none or more. */
int report_one_input(const char *cmd, int argc, char **argv, const char **in);
/* "invalid value for OPT: 'VAL'" as cmd's usage error; -EINVAL. */
int report_bad_value(const char *cmd, const char *opt, const char *val);
/* Handle one shared option: 0, -EINVAL (usage error printed), or 1 when
 * opt is not one of them. */
int report_common_opt(struct report_common *c, int opt, const char *arg);
/* The symbol options (--symfs, --debug-dir, --inline, --srcline) and -v,
 * as report_common_opt() takes them and pack too: 0, or 1 when opt is
 * not one of them. */
int report_sym_opt(struct symbolizer_opts *s, int opt, const char *arg);
/* Checks across the shared options after parsing: 0 or -EINVAL (printed). */
int report_common_check(struct report_common *c);
/* Help text of the shared options, without -e and -i. */
extern const char report_common_help[];

/* Load path with c->load and bind c->flt to it, printing any error.
 * Returns 0 (the model in *m) or the exit code to return. */
int report_common_load(struct report_common *c, const char *path, struct model **m);
/* Symbolization statistics on stderr with -v; always a warning when
 * objects of the capture at path stayed unnamed because the files found
 * had other build IDs. */
void report_common_sym_stats(const char *path, const struct resolver *res);

#endif
