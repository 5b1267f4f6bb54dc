// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* util/array.c: doubling from 16, contents kept, sizes that overflow
 * refused with everything left as it was. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/array.h"

Test(util_array, grow_doubles_from_16)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	cr_assert_eq(array__grow((void **)&v, &cap, 1, sizeof(*v)), 0);
	cr_assert_eq(cap, 16);
	cr_assert_eq(array__grow((void **)&v, &cap, 16, sizeof(*v)), 0);
	cr_assert_eq(cap, 16, "enough room: no change");
	cr_assert_eq(array__grow((void **)&v, &cap, 17, sizeof(*v)), 0);
	cr_assert_eq(cap, 32);
	cr_assert_eq(array__grow((void **)&v, &cap, 1000, sizeof(*v)), 0);
	cr_assert_eq(cap, 1024);
	free(v);
}

Test(util_array, push_keeps_every_item)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t i = 0; i < 100000; i++)
		cr_assert_eq(ARRAY_PUSH(v, n, cap, i * 3), 0);
	cr_assert_eq(n, 100000);
	cr_assert_geq(cap, n);
	for (uint32_t i = 0; i < 100000; i++)
		cr_assert_eq(v[i], i * 3, "item %u", i);
	free(v);
}

Test(util_array, reserve_with_a_narrow_capacity)
{
	uint8_t *v = NULL, cap = 0;
	uint32_t n32 = 0, *w = NULL;

	cr_assert_eq(ARRAY_RESERVE(v, cap, 200), 0);
	cr_assert_eq(cap, 255, "256 does not fit in a uint8_t: 255 is recorded");
	cr_assert_eq(ARRAY_RESERVE(v, cap, 255), 0);
	cr_assert_eq(ARRAY_RESERVE(v, cap, 256), -ENOMEM);
	cr_assert_eq(cap, 255, "unchanged");
	free(v);
	cr_assert_eq(ARRAY_RESERVE(w, n32, (size_t)UINT32_MAX + 1), -ENOMEM);
	cr_assert_null(w);
	cr_assert_eq(n32, 0);
}

Test(util_array, refuses_sizes_that_overflow)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	cr_assert_eq(array__grow((void **)&v, &cap, 4, sizeof(*v)), 0);
	v[3] = 77;
	cr_assert_eq(array__grow((void **)&v, &cap, SIZE_MAX / 8 + 1, sizeof(*v)),
		     -ENOMEM);
	cr_assert_eq(array__grow((void **)&v, &cap, SIZE_MAX, 1), -ENOMEM);
	cr_assert_eq(ARRAY_RESERVE(v, cap, SIZE_MAX / 4), -ENOMEM);
	cr_assert_eq(cap, 16, "unchanged");
	cr_assert_eq(v[3], 77);
	cr_assert_eq(array__grow((void **)&v, &cap, 32, 0), -EINVAL);
	free(v);
}
