// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* PLACEHOLDER: replaced by the real command. */
#include "src/commands.h"
#include "src/log.h"

int cmd_report(int argc, char **argv)
{
	log_error("report: not built yet");
	return EXIT_FAIL;
}
