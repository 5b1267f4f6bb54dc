// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Replays the fuzz corpus and every saved fuzz regression through the
 * reader ($STKREC_SRCDIR, default "."). Files named valid-* must read
 * cleanly; everything else must be refused or read without crashing. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n ? n : 1);    /* exact size: ASan builds catch overreads */
	cr_assert_eq(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

static void replay_one(const char *path, const char *name)
{
	struct cap_record rec;
	struct cap_reader *r;
	char msg[512];
	uint64_t n = 0;
	size_t len;
	uint8_t *buf = load(path, &len);
	int err, ret;

	err = cap_reader__open_mem(buf, len, &r);
	if (!strncmp(name, "valid-", 6))
		cr_assert_eq(err, 0, "%s: %s", name, cap_strerror(err));
	if (!strncmp(name, "bad-magic", 9) || !strncmp(name, "random", 6))
		cr_assert_eq(err, CAP_ERR_BAD_MAGIC, "%s", name);
	if (!err) {
		while ((ret = cap_reader__next(r, &rec)) == 1) {
			n++;
			if (rec.type == CAP_REC_STACK)
				cr_assert_leq(rec.stack.nr, CAP_MAX_STACK_DEPTH);
			if (rec.tail)
				cr_assert_eq(rec.tail[rec.tail_len], 0);
		}
		cr_assert_eq(ret, 0, "%s", name);
		cap_reader__describe_loss(r, msg, sizeof(msg));
		if (!strncmp(name, "valid-", 6)) {
			cr_assert_not(cap_reader__stats(r)->recovered, "%s: %s", name, msg);
			cr_assert_gt(n, 0);
		}
		cr_assert_leq(cap_reader__stats(r)->bytes_skipped, len);
		cap_reader__close(r);
	}
	free(buf);
}

static int replay_dir(const char *sub)
{
	const char *src = getenv("STKREC_SRCDIR") ? getenv("STKREC_SRCDIR") : ".";
	char dir[512], path[1024];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/%s", src, sub);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		replay_one(path, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

Test(format_replay, fuzz_corpus)
{
	int n = replay_dir("tests/fuzz/corpus/fuzz_reader");

	cr_assert_geq(n, 10, "corpus not found (STKREC_SRCDIR?): %d files", n);
}

Test(format_replay, fuzz_regressions)
{
	int n = replay_dir("tests/fuzz/regressions");

	cr_assert_geq(n, 0, "tests/fuzz/regressions missing (STKREC_SRCDIR?)");
}
