// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stkrec script: every event of a capture in time order (src/cmd_report.c
 * holds the shared option parsing and the view call). */
#include "src/commands.h"
#include "src/report_cli.h"

int cmd_script(int argc, char **argv)
{
	return report_cli_main(argc, argv, true);
}
