// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pack/jitmap: /tmp/perf-PID.map as runtimes write it (hex, perf's 0x
 * prefix too, names with spaces), lines that are not entries skipped and
 * counted, the entry written last winning where code was replaced, one
 * answer per map of a pid, a file under a --symfs root, and the memory
 * bound: a map that does not fit is not kept at all, the others stay.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pack/jitmap.h"

struct hit {
	uint64_t time;
	char name[64];
	uint64_t start, size;
};

static struct hit hits[8];
static int nhits;

static int collect(void *ctx, uint64_t time, size_t idx, const struct jit_entry *e)
{
	struct hit *h = &hits[nhits++];

	(void)ctx;
	(void)idx;
	h->time = time;
	h->start = e->start;
	h->size = e->size;
	snprintf(h->name, sizeof(h->name), "%.*s", (int)e->name_len, e->name);
	return 0;
}

static int lookup(struct jitmaps *jm, uint32_t pid, uint64_t addr)
{
	nhits = 0;
	return jitmaps__lookup(jm, pid, addr, collect, NULL);
}

static const char node_map[] =
	"251fdbc8aaf6 3e JS:~hotLoop /tmp/hot.js:1:17\n"
	"7f7a84005b80 1b0 JS:^hotLoop /tmp/hot.js:1:17\n"
	"0x7f7a840060c0 0x33c JS:*hotLoop /tmp/hot.js:1:17\n"
	"not an entry\n"
	"7f7a84007000 zz bad size\n"
	"7f7a84008000 10\n"
	"\n"
	"7f7a84006100 20 Builtin:Replaced\n"; /* inside *hotLoop, written later */

Test(record_jitmap, node_lines_and_replaced_code)
{
	struct jitmaps *jm;

	cr_assert_eq(jitmaps__new(&jm), 0);
	cr_assert_eq(jitmaps__parse(jm, 42, 1000, node_map, strlen(node_map)), 1);
	cr_assert_eq(jitmaps__bad_lines(jm), 3, "the blank line is not counted");
	cr_assert(jitmaps__has(jm, 42));
	cr_assert_not(jitmaps__has(jm, 43));
	cr_assert_eq(lookup(jm, 42, 0x7f7a840060c0), 1);
	cr_assert_str_eq(hits[0].name, "JS:*hotLoop /tmp/hot.js:1:17");
	cr_assert_eq(hits[0].time, 1000);
	cr_assert_eq(hits[0].size, 0x33c);
	cr_assert_eq(lookup(jm, 42, 0x7f7a84006110), 1);
	cr_assert_str_eq(hits[0].name, "Builtin:Replaced");
	cr_assert_eq(lookup(jm, 42, 0x7f7a84006120), 1, "past the later entry: the earlier one");
	cr_assert_str_eq(hits[0].name, "JS:*hotLoop /tmp/hot.js:1:17");
	cr_assert_eq(lookup(jm, 42, 0x7f7a840060c0 + 0x33c), 0, "the end is not in it");
	cr_assert_eq(lookup(jm, 42, 0x251fdbc8aaf6 + 0x3d), 1);
	cr_assert_str_eq(hits[0].name, "JS:~hotLoop /tmp/hot.js:1:17");
	cr_assert_eq(lookup(jm, 43, 0x7f7a840060c0), 0);
	jitmaps__free(jm);
}

/* A pid reused: each map answers for itself, the caller picks by time. */
Test(record_jitmap, one_answer_per_map_of_a_pid)
{
	static const char a[] = "1000 100 first\n", b[] = "1000 80 second\n";
	struct jit_entry e = { .start = 0x1040, .size = 8, .name = "added", .name_len = 5 };
	struct jitmaps *jm;

	cr_assert_eq(jitmaps__new(&jm), 0);
	cr_assert_eq(jitmaps__parse(jm, 7, 10, a, strlen(a)), 1);
	cr_assert_eq(jitmaps__parse(jm, 8, 10, a, strlen(a)), 1);
	cr_assert_eq(jitmaps__parse(jm, 7, 20, b, strlen(b)), 1);
	cr_assert_eq(jitmaps__add(jm, 7, 20, &e), 0);
	cr_assert_eq(lookup(jm, 7, 0x1010), 2);
	cr_assert_str_eq(hits[0].name, "second");
	cr_assert_eq(hits[0].time, 20);
	cr_assert_str_eq(hits[1].name, "first");
	cr_assert_eq(hits[1].time, 10);
	cr_assert_eq(lookup(jm, 7, 0x1044), 2);
	cr_assert_str_eq(hits[0].name, "added");
	cr_assert_eq(lookup(jm, 7, 0x1090), 1, "only the first map reaches 0x1090");
	e.size = 0;
	cr_assert_eq(jitmaps__add(jm, 7, 20, &e), -EINVAL);
	jitmaps__clear(jm);
	cr_assert_not(jitmaps__has(jm, 7));
	cr_assert_eq(lookup(jm, 7, 0x1010), 0);
	jitmaps__free(jm);
}

Test(record_jitmap, read_under_a_root)
{
	char root[] = "/tmp/stkrec-jitmap-XXXXXX", path[128];
	struct jitmaps *jm;
	FILE *f;

	cr_assert_not_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/tmp", root);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp/perf-99.map", root);
	f = fopen(path, "w");
	fputs(node_map, f);
	fclose(f);
	cr_assert_eq(jitmaps__new(&jm), 0);
	cr_assert_eq(jitmaps__read(jm, root, 99, 5), 1);
	cr_assert_eq(jitmaps__read(jm, root, 98, 5), 0, "no map: nothing, no error");
	cr_assert_eq(lookup(jm, 99, 0x7f7a840060c0), 1);
	/* a map larger than the bound is not even read */
	cr_assert_eq(truncate(path, JITMAPS_MAX_BYTES + 1), 0);
	cr_assert_eq(jitmaps__read(jm, root, 99, 6), -E2BIG);
	cr_assert_eq(jitmaps__dropped(jm), 1);
	cr_assert_eq(lookup(jm, 99, 0x7f7a840060c0), 1, "the map read before stays");
	unlink(path);
	snprintf(path, sizeof(path), "%s/tmp", root);
	rmdir(path);
	rmdir(root);
	jitmaps__free(jm);
}

/* Maps kept up to JITMAPS_MAX_BYTES: the one that would pass it is
 * dropped whole, those before it stay. */
Test(record_jitmap, memory_bound_drops_a_whole_map)
{
	const size_t name = 4000, line = 12 + 1 + 3 + 1 + name + 1;
	size_t n = JITMAPS_MAX_BYTES / (name + 64) - 100, i;
	char *buf = malloc(n * line + 1), *p = buf;
	struct jitmaps *jm;

	cr_assert_not_null(buf);
	for (i = 0; i < n; i++) {
		p += sprintf(p, "%012zx 100 ", 0x100000 + i * 0x100);
		memset(p, 'n', name);
		p += name;
		*p++ = '\n';
	}
	cr_assert_eq(jitmaps__new(&jm), 0);
	cr_assert_eq(jitmaps__parse(jm, 1, 1, buf, p - buf), 1);
	cr_assert_eq(jitmaps__parse(jm, 2, 1, buf, p - buf), -E2BIG);
	cr_assert_eq(jitmaps__dropped(jm), 1);
	cr_assert_eq(lookup(jm, 2, 0x100000), 0, "nothing of the dropped map");
	cr_assert_eq(lookup(jm, 1, 0x100000 + (n - 1) * 0x100), 1);
	cr_assert_eq(hits[0].size, 0x100);
	/* what the dropped map took is given back: two of its entries (more
	 * than the bytes its last one found free) still fit */
	cr_assert_eq(jitmaps__parse(jm, 3, 1, buf, 2 * line), 1);
	cr_assert_eq(lookup(jm, 3, 0x100100), 1);
	jitmaps__free(jm);
	free(buf);
}
