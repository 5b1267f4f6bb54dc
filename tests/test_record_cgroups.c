// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record/cgroups.c on a directory tree of its own (ids are inode numbers,
 * as a cgroup's on 64-bit): walked paths, one CGROUP record per id and
 * file, the kernel's mkdir/rmdir, a walk again for an id unknown. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "record/cgroups.h"
#include "tests/util_e2e.h"

static char dir[] = "/tmp/stkrec-cgtree-XXXXXX";
static char cap[] = "/tmp/stkrec-cgcap-XXXXXX";

static void setup(void)
{
	int fd = mkstemp(cap);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert(mkdtemp(dir));
	cr_assert_eq(e2e_shell("mkdir -p %s/a/b %s/c", dir, dir), 0);
}

static void teardown(void)
{
	e2e_shell("rm -rf %s", dir);
	unlink(cap);
}

TestSuite(record_cgroups, .init = setup, .fini = teardown);

static uint64_t ino(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return st.st_ino;
}

/* The CGROUP records of the capture, "ID FLAGS PATH;" each. */
static void read_back(char *out, size_t len)
{
	struct cap_reader *rd;
	struct cap_record r;
	size_t n = 0;

	out[0] = '\0';
	cr_assert_eq(cap_reader__open(cap, &rd), 0);
	while (cap_reader__next(rd, &r) > 0) {
		if (r.type != CAP_REC_CGROUP)
			continue;
		cr_assert_eq(r.cgroup.path_len, r.tail_len);
		n += snprintf(out + n, len - n, "%llu %u %s;", (unsigned long long)r.cgroup.id,
			      r.cgroup.flags, r.tail);
		cr_assert_lt(n, len);
	}
	cap_reader__close(rd);
}

Test(record_cgroups, one_record_per_id_and_file)
{
	struct cap_header hdr = { .major = CAP_VERSION_MAJOR, .ncpus = 1, .page_size = 4096 };
	uint64_t gone = 999999999, lost = 888888888;
	char want[1024], got[1024];
	struct cgroups *c;
	struct cap_writer *w;

	cr_assert_eq(cgroups__new(dir, &c), 0);
	cr_assert_eq(cap_writer__open(cap, &hdr, NULL, &w), 0);
	/* file 1: walked at the start, each once; 0 (no cgroup) never */
	cr_assert_eq(cgroups__ensure(c, w, 1, ino(""), 10), 0);
	cr_assert_eq(cgroups__ensure(c, w, 1, ino("/a/b"), 11), 0);
	cr_assert_eq(cgroups__ensure(c, w, 1, ino(""), 12), 0);
	cr_assert_eq(cgroups__ensure(c, w, 1, 0, 12), 0);
	/* made and removed while recording: its name kept, the removal told */
	cr_assert_eq(cgroups__note(c, gone, "/x/gone", 7, false, 13), 0);
	cr_assert_eq(cgroups__note(c, gone, "/x/gone", 7, true, 14), 0);
	cr_assert_eq(cgroups__ensure(c, w, 1, gone, 15), 0);
	/* made after the walk, its mkdir unseen: the next walk names it */
	cr_assert_eq(e2e_shell("mkdir %s/c/late", dir), 0);
	cr_assert_eq(cgroups__ensure(c, w, 1, ino("/c/late"), 16), 0);
	/* found nowhere: written without a path, counted once */
	cr_assert_eq(cgroups__ensure(c, w, 1, lost, 17), 0);
	cr_assert_eq(cgroups__unnamed(c), 1);
	/* file 2 stands alone: its own records */
	cr_assert_eq(cgroups__ensure(c, w, 2, ino("/a/b"), 18), 0);
	cr_assert_eq(cgroups__ensure(c, w, 2, lost, 19), 0);
	cr_assert_eq(cgroups__unnamed(c), 1);
	cr_assert_eq(cap_writer__finish(w), 0);
	cgroups__free(c);
	read_back(got, sizeof(got));
	snprintf(want, sizeof(want), "%llu 0 /;%llu 0 /a/b;%llu 1 /x/gone;%llu 0 /c/late;"
		 "%llu 0 ;%llu 0 /a/b;%llu 0 ;", (unsigned long long)ino(""),
		 (unsigned long long)ino("/a/b"), (unsigned long long)gone,
		 (unsigned long long)ino("/c/late"), (unsigned long long)lost,
		 (unsigned long long)ino("/a/b"), (unsigned long long)lost);
	cr_assert_str_eq(got, want);
}

/* -G's PATH must be a cgroup2 directory: this tree is not one. */
Test(record_cgroups, resolve_wants_cgroup2)
{
	uint32_t level;
	uint64_t id;

	cr_assert_eq(cgroups__resolve(dir, "/a/b", &level, &id), -ENOTDIR);
	cr_assert_eq(cgroups__resolve(dir, "/nope", &level, &id), -ENOENT);
	cr_assert_eq(cgroups__resolve(dir, "a", &level, &id), -ENOENT);
}
