// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record/threads.c: a THREAD record is due exactly when a tid is new or its
 * name or process changed, across table growth. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "record/recorder_int.h"

static struct thread_table t;

static void setup(void)
{
	cr_assert_eq(threads__init(&t), 0);
}

static void teardown(void)
{
	threads__free(&t);
}

TestSuite(record_threads, .init = setup, .fini = teardown);

static const char *comm(const char *s)
{
	static char buf[STKREC_COMM_LEN];

	memset(buf, 0, sizeof(buf));
	snprintf(buf, sizeof(buf), "%s", s);
	return buf;
}

Test(record_threads, new_same_renamed)
{
	cr_assert(threads__changed(&t, 100, 100, comm("bash")));
	cr_assert_not(threads__changed(&t, 100, 100, comm("bash")));
	cr_assert(threads__changed(&t, 100, 100, comm("make")));
	cr_assert_not(threads__changed(&t, 100, 100, comm("make")));
	cr_assert(threads__changed(&t, 101, 100, comm("make")));
	cr_assert_eq(t.tab.nr, 2);
}

Test(record_threads, pid_change_is_a_change)
{
	/* a recycled tid in another process */
	cr_assert(threads__changed(&t, 7, 7, comm("a")));
	cr_assert(threads__changed(&t, 7, 9, comm("a")));
	cr_assert_not(threads__changed(&t, 7, 9, comm("a")));
}

Test(record_threads, only_the_first_16_bytes_count)
{
	char a[STKREC_COMM_LEN] = "0123456789abcde", b[STKREC_COMM_LEN] = "0123456789abcdX";

	cr_assert(threads__changed(&t, 1, 1, a));
	cr_assert(threads__changed(&t, 1, 1, b));
	cr_assert_not(threads__changed(&t, 1, 1, b));
}

Test(record_threads, growth_keeps_every_entry)
{
	char name[STKREC_COMM_LEN];
	uint32_t tid;

	for (tid = 1; tid <= 50000; tid++) {
		snprintf(name, sizeof(name), "t%u", tid);
		cr_assert(threads__changed(&t, tid * 3, tid, comm(name)));
	}
	cr_assert_eq(t.tab.nr, 50000);
	cr_assert_geq(t.tab.cap, 100000u); /* at most half full */
	for (tid = 1; tid <= 50000; tid++) {
		snprintf(name, sizeof(name), "t%u", tid);
		cr_assert_not(threads__changed(&t, tid * 3, tid, comm(name)), "tid %u", tid * 3);
	}
}
