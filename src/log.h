/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one place that prints diagnostics. Libraries return codes; commands
 * explain them here, once, with the context they have. */
#ifndef STKREC_SRC_LOG_H
#define STKREC_SRC_LOG_H

#include <stdio.h>

extern int log_verbosity; /* 0 default, +1 per -v */

/* "stkrec: <message>\n" on stderr. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when log_verbosity >= level. */
void log_debug(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Error plus "Try 'stkrec CMD -h'." for bad command lines. */
void log_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct cap_stream;
/* Why the capture named `name` (the file at that path, or stream s when not
 * NULL) cannot be read (err from the reader), in one line that names the
 * versions or features involved. */
void log_capture_error(const char *name, const struct cap_stream *s, int err);

#endif
