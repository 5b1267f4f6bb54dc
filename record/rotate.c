// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --switch-output, as perf record's: the recording goes to FILE.<timestamp>
 * files, a new one every N seconds or past N bytes. Each file is a complete
 * capture on its own: it ends with LOST (the drops since the previous
 * file), STAT and an END record saying "output switched", and the next one
 * starts with its own header and every definition again (strings, stacks,
 * kernel symbols, block devices, threads and mappings, rescanned from
 * /proc), because the interners and tables start empty for it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "record/recorder_int.h"

/* FILE.YYYYmmddHHMMSSmmm (local time, as perf names them); a second file
 * within the same millisecond gets a -N suffix rather than replacing it. */
int record__set_path(struct recorder *r)
{
	char stamp[32], prev[sizeof(r->path)];
	struct timespec ts;
	struct tm tm;
	int n;

	if (!r->opts.switch_ns && !r->opts.switch_bytes) {
		n = snprintf(r->path, sizeof(r->path), "%s", r->opts.output);
		return n < (int)sizeof(r->path) ? 0 : -ENAMETOOLONG;
	}
	memcpy(prev, r->path, sizeof(prev));
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!localtime_r(&ts.tv_sec, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm))
		return -EINVAL;
	n = snprintf(r->path, sizeof(r->path), "%s.%s%03ld", r->opts.output, stamp,
		     ts.tv_nsec / 1000000);
	if (n >= (int)sizeof(r->path) - 16)
		return -ENAMETOOLONG;
	if (!strncmp(prev, r->path, n) && (prev[n] == 0 || prev[n] == '-'))
		snprintf(r->path + n, sizeof(r->path) - n, "-%u", r->files);
	return 0;
}

bool record__switch_due(const struct recorder *r, uint64_t now)
{
	if (r->opts.switch_ns && now - r->file_start_ns >= r->opts.switch_ns)
		return true;
	return r->opts.switch_bytes && cap_writer__file_size(r->w) >= r->opts.switch_bytes;
}

/* Close the current file as a complete capture. */
static int close_file(struct recorder *r, uint64_t now)
{
	int err = record__write_lost(r);

	if (!err)
		err = record__write_stats(r, now);
	if (!err)
		err = record__write_end(r, CAP_STOP_SWITCH, 0, now);
	if (!err)
		err = cap_writer__finish(r->w);
	else
		cap_writer__free(r->w);
	r->w = NULL;
	return err;
}

/* Drop what the old file defined: each table starts empty for the new one. */
static void forget_defs(struct recorder *r)
{
	procmaps__free(r->pm);
	r->pm = NULL;
	intern__free(r->in);
	r->in = NULL;
	threads__free(&r->threads);
	ksyms__new_file(r->ks);
}

static int open_file(struct recorder *r, uint64_t now, const char **step)
{
	struct cap_writer_opts wo = { .max_size = r->opts.max_size };
	struct cap_header h;
	int err;

	*step = "name the next file";
	err = record__set_path(r);
	if (err)
		return err;
	record__fill_header(r, &h);
	*step = "open output";
	err = cap_writer__open(r->path, &h, &wo, &r->w);
	if (err)
		return err;
	r->files++;
	r->file_start_ns = h.start_time;
	memcpy(r->events_base, r->events, sizeof(r->events_base));
	err = record__write_defs(r, step);
	if (!err)
		err = threads__init(&r->threads);
	if (err)
		return err;
	*step = "scan /proc";
	err = procmaps__new(r->w, r->in, &r->pm);
	if (!err)
		err = procmaps__scan_all(r->pm, now);
	return err < 0 ? err : 0;
}

int record__switch_output(struct recorder *r, uint64_t now)
{
	const char *step;
	int err;

	err = close_file(r, now);
	forget_defs(r);
	if (!err)
		err = open_file(r, now, &step);
	if (err && r->w) { /* half a file: what it holds is readable as is */
		cap_writer__free(r->w);
		r->w = NULL;
	}
	return err;
}
