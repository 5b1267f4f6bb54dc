// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A file's blocks decompressed ahead on a thread (format/prefetch.c): a
 * file reader, and a second reader of it (cap_reader__reopen()), read
 * what a reader of the same bytes in memory (no thread) reads, record for
 * record, stats and loss text included, whole and damaged, whichever of
 * the thread and the scan decompressed each block. The thread
 * starts where the reader may use two CPUs, and not where it may use one.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "tests/stream_compare.h"
#include "tests/util_capgen.h"
#include "tests/util_report.h"

/* buf written to a file, read three ways: memory, the file, its reopen. */
static void check_same(const uint8_t *buf, size_t len, const char *what)
{
	char *path = rc_tmpname("prefetch");
	struct sc_reading a, b, c;
	struct cap_reader *r, *again;
	const char *diff;
	FILE *f;

	cr_assert_not_null(path);
	f = fopen(path, "w");
	cr_assert(f && fwrite(buf, 1, len, f) == len && !fclose(f));
	sc_read_mem(buf, len, &a);
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	b.version_err = c.version_err = a.version_err;
	b.major = c.major = a.major;
	b.minor = c.minor = a.minor;
	b.features = c.features = a.features;
	b.open_err = cap_reader__open(path, &r);
	cr_assert_eq(b.open_err, a.open_err, "%s: open %d, in memory %d", what, b.open_err,
		     a.open_err);
	if (!b.open_err) {
		c.open_err = cap_reader__reopen(r, &again);
		cr_assert_eq(c.open_err, 0, "%s: reopen %d", what, c.open_err);
		sc_read(again, &c); /* before r, whose mapping it reads */
		sc_read(r, &b);
		diff = sc_diff(&a, &b);
		cr_assert_null(diff, "%s: the file reads %s differently (%s; memory: %s)", what,
			       diff, b.loss, a.loss);
		diff = sc_diff(&a, &c);
		cr_assert_null(diff, "%s: its reopen reads %s differently (%s; memory: %s)", what,
			       diff, c.loss, a.loss);
	}
	unlink(path);
	free(path);
}

static uint8_t *many_blocks(size_t *len)
{
	struct capgen_opts o = { .block_size = 4096, .min_blocks = 600 };
	uint8_t *buf;

	cr_assert_eq(capgen_write_mem(&o, &buf, len, NULL), 0);
	/* over the size a reader starts its thread for (format/prefetch.c) */
	cr_assert_gt(*len, 300u << 10, "%zu bytes", *len);
	return buf;
}

Test(format_prefetch, whole_file_the_same)
{
	size_t len;
	uint8_t *buf = many_blocks(&len);

	check_same(buf, len, "whole");
	free(buf);
}

/* A byte with every bit flipped, at 97 places over the file (header,
 * frames, their checksums, the trailer): the thread meets damage the scan
 * resyncs from, and frames it decompressed that the scan skips. */
Test(format_prefetch, damaged_files_the_same, .timeout = 120)
{
	size_t len, i, at;
	uint8_t *buf = many_blocks(&len);
	char what[64];

	for (i = 0; i < 97; i++) {
		at = i * (len / 97) + i % 13;
		buf[at] ^= 0xff;
		snprintf(what, sizeof(what), "byte %zu of %zu flipped", at, len);
		check_same(buf, len, what);
		buf[at] ^= 0xff;
	}
	free(buf);
}

Test(format_prefetch, cut_files_the_same, .timeout = 120)
{
	size_t len, i;
	uint8_t *buf = many_blocks(&len);
	char what[64];

	for (i = 1; i < 40; i++) {
		snprintf(what, sizeof(what), "cut at %zu of %zu", len * i / 40, len);
		check_same(buf, len * i / 40, what);
	}
	free(buf);
}

/* the threads of this process (/proc/self/status) */
static int threads(void)
{
	char line[128];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	cr_assert_gt(n, 0);
	return n;
}

/* The threads a file reader of buf adds while it is open; buf's 600
 * blocks keep a thread waiting for free slots until the reader closes. */
static int reader_threads(const uint8_t *buf, size_t len)
{
	char *path = rc_tmpname("prefetch");
	struct cap_reader *r;
	int before, during;
	FILE *f;

	cr_assert_not_null(path);
	f = fopen(path, "w");
	cr_assert(f && fwrite(buf, 1, len, f) == len && !fclose(f));
	before = threads();
	cr_assert_eq(cap_reader__open(path, &r), 0);
	during = threads();
	cap_reader__close(r);
	unlink(path);
	free(path);
	return during - before;
}

Test(format_prefetch, a_thread_only_with_two_cpus)
{
	cpu_set_t set, one;
	size_t len;
	uint8_t *buf = many_blocks(&len);

	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	if (CPU_COUNT(&set) < 2)
		cr_skip_test("this process may use %d CPU: no second one to start a thread on",
			     CPU_COUNT(&set));
	cr_assert_eq(reader_threads(buf, len), 1, "two CPUs: the reader decompresses ahead");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cr_assert_eq(reader_threads(buf, len), 0, "one CPU: the scan decompresses inline");
	check_same(buf, len, "one CPU");
	free(buf);
}
