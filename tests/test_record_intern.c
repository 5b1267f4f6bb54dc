// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/intern.c: ids are dense, stable and collision-free; definitions
 * are written once, kernel stacks go through the hook first. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/intern.h"

static struct cap_writer *w;
static struct intern *in;
static char path[] = "/tmp/stkrec-intern-XXXXXX";

static void setup(void)
{
	struct cap_header hdr = { .major = CAP_VERSION_MAJOR, .ncpus = 1, .page_size = 4096 };
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(cap_writer__open(path, &hdr, NULL, &w), 0);
	cr_assert_eq(intern__new(w, &in), 0);
}

static void teardown(void)
{
	intern__free(in);
	cap_writer__free(w);
	unlink(path);
	strcpy(path, "/tmp/stkrec-intern-XXXXXX");
}

TestSuite(record_intern, .init = setup, .fini = teardown);

Test(record_intern, strings_dense_and_stable)
{
	uint32_t a, b, c, d;

	cr_assert_eq(intern__string(in, "libc.so.6", 9, &a), 0);
	cr_assert_eq(intern__string(in, "libc.so", 7, &b), 0);
	cr_assert_eq(intern__string(in, "libc.so.6", 9, &c), 0);
	cr_assert_eq(intern__string(in, "", 0, &d), 0);
	cr_assert_eq(a, 1);
	cr_assert_eq(b, 2);
	cr_assert_eq(c, 1);
	cr_assert_eq(d, 3);
	cr_assert_eq(intern__nr_strings(in), 3);
	/* one STRING record per new string, after the BLOCK record */
	cr_assert_eq(cap_writer__totals(w)->records, 1 + 3);
}

Test(record_intern, empty_stack_is_none)
{
	uint32_t id = 7;

	cr_assert_eq(intern__stack(in, CAP_STACK_USER, NULL, 0, &id), 0);
	cr_assert_eq(id, CAP_STACK_NONE);
	cr_assert_eq(intern__nr_stacks(in), 0);
}

Test(record_intern, kind_and_length_distinguish)
{
	uint64_t ips[3] = { 0x401000, 0x401100, 0x401200 };
	uint32_t u, k, u2, shorter;

	cr_assert_eq(intern__stack(in, CAP_STACK_USER, ips, 3, &u), 0);
	cr_assert_eq(intern__stack(in, CAP_STACK_KERNEL, ips, 3, &k), 0);
	cr_assert_eq(intern__stack(in, CAP_STACK_USER, ips, 2, &shorter), 0);
	cr_assert_eq(intern__stack(in, CAP_STACK_USER, ips, 3, &u2), 0);
	cr_assert_eq(u, 1);
	cr_assert_eq(k, 2);
	cr_assert_eq(shorter, 3);
	cr_assert_eq(u2, 1);
	cr_assert_eq(intern__nr_stacks(in), 3);
}

Test(record_intern, bad_arguments)
{
	uint64_t ips[128] = { 1 };
	uint32_t id;

	cr_assert_eq(intern__stack(in, 3, ips, 1, &id), CAP_ERR_INVAL);
	cr_assert_eq(intern__stack(in, CAP_STACK_USER, ips, 128, &id), CAP_ERR_INVAL);
	cr_assert_eq(intern__nr_stacks(in), 0);
}

struct hook_log {
	int calls;
	uint16_t last_nr;
	uint64_t last_ip0;
	uint64_t records_before;
};

static int hook(void *ctx, const uint64_t *ips, uint16_t nr)
{
	struct hook_log *log = ctx;

	log->calls++;
	log->last_nr = nr;
	log->last_ip0 = ips[0];
	log->records_before = cap_writer__totals(w)->records;
	return 0;
}

Test(record_intern, kstack_hook_once_per_new_kernel_stack)
{
	uint64_t k1[2] = { 0xffffffff81000010ull, 0xffffffff81000020ull };
	uint64_t k2[1] = { 0xffffffff81000030ull };
	struct hook_log log = {};
	uint32_t id;

	intern__set_kstack_hook(in, hook, &log);
	cr_assert_eq(intern__stack(in, CAP_STACK_KERNEL, k1, 2, &id), 0);
	cr_assert_eq(log.calls, 1);
	cr_assert_eq(log.last_nr, 2);
	cr_assert_eq(log.last_ip0, k1[0]);
	/* the hook runs before the STACK record is written */
	cr_assert_eq(log.records_before, 0);
	cr_assert_eq(cap_writer__totals(w)->records, 1 + 1); /* BLOCK + STACK */
	cr_assert_eq(intern__stack(in, CAP_STACK_KERNEL, k1, 2, &id), 0);
	cr_assert_eq(intern__stack(in, CAP_STACK_USER, k2, 1, &id), 0);
	cr_assert_eq(log.calls, 1);
	cr_assert_eq(intern__stack(in, CAP_STACK_KERNEL, k2, 1, &id), 0);
	cr_assert_eq(log.calls, 2);
}

static int failing_hook(void *ctx, const uint64_t *ips, uint16_t nr)
{
	return -EIO;
}

Test(record_intern, hook_failure_defines_nothing)
{
	uint64_t k[1] = { 0xffffffff81000010ull };
	uint32_t id = 0;

	intern__set_kstack_hook(in, failing_hook, NULL);
	cr_assert_eq(intern__stack(in, CAP_STACK_KERNEL, k, 1, &id), -EIO);
	cr_assert_eq(intern__nr_stacks(in), 0);
	intern__set_kstack_hook(in, NULL, NULL);
	cr_assert_eq(intern__stack(in, CAP_STACK_KERNEL, k, 1, &id), 0);
	cr_assert_eq(id, 1);
}

/* Many similar stacks (differing in one frame, as real ones do) across
 * several table growths: every id distinct, every lookup stable. */
Test(record_intern, many_stacks_no_collision)
{
	enum { N = 200000 };
	uint64_t ips[8] = { 0x7f0000001000ull, 0x7f0000002000ull, 0x401000, 0x401100,
			    0x401200, 0x401300, 0x401400, 0 };
	uint32_t id, i;

	for (i = 0; i < N; i++) {
		ips[7] = 0x400000 + i * 16;
		cr_assert_eq(intern__stack(in, CAP_STACK_USER, ips, 8, &id), 0);
		cr_assert_eq(id, i + 1);
	}
	for (i = 0; i < N; i += 997) {
		ips[7] = 0x400000 + i * 16;
		cr_assert_eq(intern__stack(in, CAP_STACK_USER, ips, 8, &id), 0);
		cr_assert_eq(id, i + 1);
	}
	cr_assert_eq(intern__nr_stacks(in), N);
}
