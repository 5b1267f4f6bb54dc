// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stkrec: one binary, a git-style command table. */
#include <stdio.h>
#include <string.h>
#include "src/commands.h"
#include "src/log.h"
#include "version.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "record", cmd_record, "Record off-CPU, CPU and block I/O events into a capture" },
	{ "report", cmd_report, "Symbolize a capture: perf-style, folded, top waits, biotop" },
	{ "script", cmd_script, "Print every event of a capture in time order" },
	{ "info", cmd_info, "Describe a capture: host, span, events, loss, blocks" },
	{ "diff", cmd_diff, "Compare two captures: what grew, what shrank; diff flame graphs" },
	{ "pack", cmd_pack, "Add or refresh a capture's symbol pack: names without the binaries" },
	{ "scrub", cmd_scrub, "Copy a capture for a bug report: no kernel addresses, host, command" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: stkrec [--version] [--help] <command> [<args>]\n\n"
		   "Record what threads wait on, burn CPU on, and what disk I/O they\n"
		   "cause, into one portable capture; explain it later, anywhere.\n\n"
		   "Commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "   %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nExit codes:\n"
		   "   0  success\n"
		   "   1  the command failed (the error says why)\n"
		   "   2  bad command line\n"
		   "   3  capture read, but it was damaged or truncated: output is partial\n"
		   "   4  capture unreadable\n"
		   "\nSee 'stkrec <command> -h' for a command's options and examples.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		/* STKREC_COMMIT: `git describe` at build time, "" outside git. */
		if (*STKREC_COMMIT)
			printf("stkrec %s (%s)\n", STKREC_VERSION, STKREC_COMMIT);
		else
			printf("stkrec %s\n", STKREC_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	}
	log_error("'%s' is not a stkrec command. See 'stkrec --help'.", argv[1]);
	return EXIT_USAGE;
}
