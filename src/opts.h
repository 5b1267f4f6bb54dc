/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The long options more than one command takes, each defined once: rows
 * for their getopt_long() tables, and the values of those without a
 * letter. A command's table is these rows and its own; its own values
 * start at OPT_OWN. What an option does is each command's own parsing. */
#ifndef STKREC_SRC_OPTS_H
#define STKREC_SRC_OPTS_H

#include <getopt.h>

enum {
	OPT_STATE = 256, OPT_SYMFS, OPT_DEBUG_DIR,
	OPT_OWN, /* a command's own from here */
};

#define OPTS_HELP { "help", no_argument, NULL, 'h' }
#define OPTS_OUTPUT { "output", required_argument, NULL, 'o' }
#define OPTS_VERBOSE { "verbose", no_argument, NULL, 'v' }

/* Which threads, stacks, waits and kinds: record records, report shows. */
#define OPTS_TASKS \
	{ "tid", required_argument, NULL, 't' }, \
	{ "user-threads-only", no_argument, NULL, 'u' }, \
	{ "kernel-threads-only", no_argument, NULL, 'k' }, \
	{ "user-stacks-only", no_argument, NULL, 'U' }, \
	{ "kernel-stacks-only", no_argument, NULL, 'K' }, \
	{ "min-block-time", required_argument, NULL, 'm' }, \
	{ "max-block-time", required_argument, NULL, 'M' }, \
	{ "state", required_argument, NULL, OPT_STATE }, \
	{ "event", required_argument, NULL, 'e' }

/* Where the recorded binaries and their debug files are: the commands
 * that name frames (report, script, diff, pack). */
#define OPTS_SYMBOLS \
	{ "symfs", required_argument, NULL, OPT_SYMFS }, \
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR }

#endif
