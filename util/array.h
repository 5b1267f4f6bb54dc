/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One growable array for every layer: a pointer, a count and a capacity
 * kept by the caller, grown by doubling. array__grow() is the out-of-line
 * part; ARRAY_RESERVE() and ARRAY_PUSH() keep the common case (room left)
 * inline and type-safe, and work with a capacity of any unsigned type.
 * Their v, n and cap are lvalues evaluated more than once; need is
 * evaluated once, item at most once.
 */
#ifndef STKREC_UTIL_ARRAY_H
#define STKREC_UTIL_ARRAY_H

#include <errno.h>
#include <stddef.h>

/*
 * Room for need elements of elem bytes in *p, which has *cap: the capacity
 * doubles (from 16 elements) until it holds need. 0, or -ENOMEM when
 * realloc() fails or need * elem does not fit in a size_t (-EINVAL for an
 * elem of 0); *p and *cap are then unchanged.
 */
int array__grow(void **p, size_t *cap, size_t need, size_t elem);

/* Room for need elements in v (capacity cap, an unsigned integer of any
 * width): 0 or -ENOMEM, also when need exceeds what cap's type holds. */
#define ARRAY_RESERVE(v, cap, need)                                            \
	({                                                                     \
		size_t __need = (need);                                        \
		int __err = 0;                                                 \
		_Static_assert((__typeof__(cap))-1 > 0, "unsigned capacity");  \
		if (__need > (cap)) {                                          \
			size_t __max = (__typeof__(cap))-1;                    \
			size_t __cap = (cap);                                  \
			void *__p = (v);                                       \
			__err = __need > __max ? -ENOMEM :                     \
				array__grow(&__p, &__cap, __need, sizeof(*(v))); \
			if (!__err) {                                          \
				(v) = __p;                                     \
				(cap) = __cap < __max ? __cap : __max;         \
			}                                                      \
		}                                                              \
		__err;                                                         \
	})

/* Append item to v (n elements, capacity cap): 0 or -ENOMEM. */
#define ARRAY_PUSH(v, n, cap, item)                                            \
	({                                                                     \
		int __err = ARRAY_RESERVE(v, cap, (size_t)(n) + 1);            \
		if (!__err)                                                    \
			(v)[(n)++] = (item);                                   \
		__err;                                                         \
	})

#endif /* STKREC_UTIL_ARRAY_H */
