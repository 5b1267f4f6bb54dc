/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `stkrec report` and `stkrec script` share their option parsing and their
 * load/symbolize/print path (src/cmd_report.c). */
#ifndef STKREC_SRC_REPORT_CLI_H
#define STKREC_SRC_REPORT_CLI_H

#include <stdbool.h>

/* argv[0] is the command name; script selects `stkrec script`. Returns the
 * process exit code. */
int report_cli_main(int argc, char **argv, bool script);

#endif
