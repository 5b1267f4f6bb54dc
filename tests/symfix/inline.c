// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolizer fixture: an always_inline function inlined once into a noinline
 * one. The label symfix_inl_mark sits inside the inlined body, so tests can
 * find an address that belongs to the inlined instance. */
volatile int inl_sink;

static inline __attribute__((always_inline)) int inl_helper(int x)
{
	int y = x * 3 + inl_sink;

	inl_sink = y;
	__asm__ volatile("symfix_inl_mark:" ::: "memory");
	inl_sink = y * 7 + 1; /* INL_BODY_LINE */
	return inl_sink;
}

__attribute__((noinline)) int inl_outer(int x)
{
	int r = inl_sink + 2;

	r += inl_helper(x); /* INL_CALL_LINE */
	inl_sink = r;
	return r;
}

/* Two levels: inl_leaf inlined into inl_mid, inlined into inl_deep. */
static inline __attribute__((always_inline)) int inl_leaf(int x)
{
	inl_sink = x + 5;
	__asm__ volatile("symfix_deep_mark:" ::: "memory");
	inl_sink = inl_sink * 9 + x; /* DEEP_LEAF_LINE */
	return inl_sink;
}

static inline __attribute__((always_inline)) int inl_mid(int x)
{
	int v = inl_sink ^ x;

	v += inl_leaf(v); /* DEEP_MID_CALL */
	return v;
}

__attribute__((noinline)) int inl_deep(int x)
{
	int r = inl_mid(x + 1); /* DEEP_OUTER_CALL */

	inl_sink = r;
	return r;
}

int main(int argc, char **argv)
{
	return (inl_outer(argc) + inl_deep(argc)) & 1;
}
