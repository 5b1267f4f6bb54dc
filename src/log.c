// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include "src/log.h"

int log_verbosity;

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "stkrec: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_debug(int level, const char *fmt, ...)
{
	va_list ap;

	if (log_verbosity < level)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "stkrec %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'stkrec %s -h' for more information.\n", cmd);
	va_end(ap);
}
