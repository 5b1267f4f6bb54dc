// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The growable array of util/array.h. */
#include <stdint.h>
#include <stdlib.h>
#include "util/array.h"

#define ARRAY_MIN 16u

int array__grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : ARRAY_MIN;
	void *np;

	if (need <= *cap)
		return 0;
	if (!elem)
		return -EINVAL;
	if (need > SIZE_MAX / elem)
		return -ENOMEM;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap > SIZE_MAX / elem)
		ncap = need;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}
