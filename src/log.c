// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include "format/capture.h"
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

/* The version fields of a capture's first bytes, as cap_file_version(). */
static int version_of(const char *path, const struct cap_stream *s, uint16_t *major,
		      uint16_t *minor, uint32_t *feat)
{
	if (s)
		return cap_stream__version(s, major, minor, feat);
	return cap_file_version(path, major, minor, feat);
}

void log_capture_error(const char *path, const struct cap_stream *s, int err)
{
	uint16_t major = 0, minor = 0;
	uint32_t feat = 0;

	if (err == CAP_ERR_VERSION && !version_of(path, s, &major, &minor, NULL)) {
		if (major > CAP_VERSION_MAJOR)
			log_error("%s: capture format %u.%u is newer than this stkrec's %u.%u "
				  "(upgrade stkrec to read it)", path, major, minor,
				  CAP_VERSION_MAJOR, CAP_VERSION_MINOR);
		else
			log_error("%s: capture format %u.%u does not exist (this stkrec reads "
				  "%u.x): not a capture, or a damaged one", path, major, minor,
				  CAP_VERSION_MAJOR);
	} else if (err == CAP_ERR_FEATURE && !version_of(path, s, NULL, NULL, &feat)) {
		log_error("%s: capture uses incompatible features 0x%08x this stkrec "
			  "does not know (upgrade stkrec)", path,
			  feat & CAP_FEAT_INCOMPAT_MASK & ~CAP_FEAT_KNOWN);
	} else {
		log_error("%s: %s", path, cap_strerror(err));
	}
}
