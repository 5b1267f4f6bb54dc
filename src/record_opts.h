/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `stkrec record` command line: parsing and validation that need no
 * privileges (so they are unit-tested), and the usage text. */
#ifndef STKREC_SRC_RECORD_OPTS_H
#define STKREC_SRC_RECORD_OPTS_H

#include <stddef.h>
#include <stdio.h>
#include "record/record.h"

#define RECORD_OPTS_HELP 1

/*
 * Parse argv (argv[0] is "record") into o, which is initialized here.
 * Returns 0, RECORD_OPTS_HELP for -h/--help, or a negative code with a
 * one-line reason in err (no "stkrec:" prefix). o->command points into argv.
 */
int record_opts__parse(int argc, char **argv, struct record_opts *o,
		       char *err, size_t errlen);
/* Free what parsing allocated (pid and tid lists). */
void record_opts__free(struct record_opts *o);
/* "offcpu,cpu,bio" into RECORD_EV_* bits; -EINVAL names nothing. */
int record_opts__parse_events(const char *s, unsigned *mask);
void record_opts__usage(FILE *f);

#endif
