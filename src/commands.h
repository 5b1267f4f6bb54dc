/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The command table: each command parses its own options (argv[0] is the
 * command name) and returns the process exit code (see exit codes below). */
#ifndef STKREC_SRC_COMMANDS_H
#define STKREC_SRC_COMMANDS_H

/* Exit codes, documented in the README and `stkrec --help`. */
enum stkrec_exit {
	EXIT_OK = 0,          /* success */
	EXIT_FAIL = 1,        /* the command failed (error printed) */
	EXIT_USAGE = 2,       /* bad command line */
	EXIT_RECOVERED = 3,   /* capture read, but recovered with loss */
	EXIT_UNREADABLE = 4,  /* capture unreadable */
};

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_scrub(int argc, char **argv);

#endif
