// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record/pystack.c: Python calls placed inside the eval frames that run
 * them. Native frames are small numbers, eval frames 100-199; Python
 * frames are CAP_PYFRAME(code, 0) with code = a letter. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "bpf/stkrec.h"
#include "format/capture.h"
#include "record/pystack.h"

static bool is_eval(void *arg, uint64_t ip)
{
	return ip >= 100 && ip < 200;
}

#define PY(c) CAP_PYFRAME(c, 0)

/* The merged stack as text, innermost first: natives as numbers, eval
 * frames as E, Python frames as their letter, markers as [cut]/[?]. */
static const char *merged(const uint64_t *nat, int nn, const uint64_t *py, int np,
			  uint64_t entry, uint64_t cut, int max)
{
	static char buf[512];
	struct pystack_in in = {
		.native = nat, .nn = nn, .py = py, .np = np, .entry = entry, .cut = cut,
		.is_eval = is_eval,
	};
	uint64_t out[128];
	bool trunc;
	int n = pystack__merge(&in, out, max, &trunc), i;
	size_t len = 0;

	buf[0] = 0;
	for (i = 0; i < n; i++) {
		uint64_t ip = out[i];

		if (ip == STKREC_UNWIND_MARKER)
			len += snprintf(buf + len, sizeof(buf) - len, "[?]");
		else if (CAP_IS_PYFRAME(ip) && !CAP_PYFRAME_CODE(ip))
			len += snprintf(buf + len, sizeof(buf) - len, "[cut]");
		else if (CAP_IS_PYFRAME(ip))
			len += snprintf(buf + len, sizeof(buf) - len, "%c", CAP_PYFRAME_CODE(ip));
		else if (is_eval(NULL, ip))
			len += snprintf(buf + len, sizeof(buf) - len, "E");
		else
			len += snprintf(buf + len, sizeof(buf) - len, "%d", (int)ip);
		if (i < n - 1)
			len += snprintf(buf + len, sizeof(buf) - len, " ");
	}
	if (trunc)
		snprintf(buf + len, sizeof(buf) - len, " (truncated)");
	return buf;
}

/* 3.11+: one eval call runs several Python frames (entry on the outermost). */
Test(pystack, calls_inside_their_eval_frames)
{
	uint64_t nat[] = { 1, 100, 2, 101, 3 };
	uint64_t py[] = { PY('c'), PY('b'), PY('a') };

	/* c and b run in the inner eval call (b is its entry), a in the outer */
	cr_assert_str_eq(merged(nat, 5, py, 3, 0x2 | 0x4, 0, 128), "1 c b E 2 a E 3");
}

/* 3.8-3.10: every frame its own eval call. */
Test(pystack, each_frame_its_own_call)
{
	uint64_t nat[] = { 1, 100, 100, 100, 9 };
	uint64_t py[] = { PY('c'), PY('b'), PY('a') };

	cr_assert_str_eq(merged(nat, 5, py, 3, 0x7, 0, 128), "1 c E b E a E 9");
}

/* A sample in the eval function's prologue: its call has no frame yet; the
 * calls pair with the eval frames from the outermost. */
Test(pystack, eval_frame_without_a_call_yet)
{
	uint64_t nat[] = { 100, 5, 100, 9 };
	uint64_t py[] = { PY('a') };

	cr_assert_str_eq(merged(nat, 4, py, 1, 0x1, 0, 128), "E 5 a E 9");
}

/* More calls than eval frames seen (an eval frame in code no symbol
 * covers): the innermost eval frame takes the calls left over. */
Test(pystack, more_calls_than_eval_frames)
{
	uint64_t nat[] = { 7, 100, 9 };
	uint64_t py[] = { PY('b'), PY('a') };

	cr_assert_str_eq(merged(nat, 3, py, 2, 0x3, 0, 128), "7 b a E 9");
}

/* A native stack the unwinder could not finish: paired from the innermost,
 * the outer calls after it. */
Test(pystack, native_stack_cut)
{
	uint64_t nat[] = { 1, 100, STKREC_UNWIND_MARKER };
	uint64_t py[] = { PY('b'), PY('a') };

	cr_assert_str_eq(merged(nat, 3, py, 2, 0x3, 0, 128), "1 b E [?] a");
}

/* A Python stack cut at the depth limit: the marker after its outermost
 * frame, the eval frames beyond it bare. */
Test(pystack, python_stack_cut)
{
	uint64_t nat[] = { 1, 100, 100, 100, 9 };
	uint64_t py[] = { PY('c'), PY('b') };
	uint64_t cut = CAP_PYFRAME(0, CAP_PY_MARK_DEPTH);

	cr_assert_str_eq(merged(nat, 5, py, 2, 0x3, cut, 128), "1 c E b [cut] E E 9");
}

/* A thread state that could not be read: the marker where the innermost
 * Python call would be. */
Test(pystack, unreadable_thread)
{
	uint64_t nat[] = { 1, 100, 9 };
	uint64_t cut = CAP_PYFRAME(0, CAP_PY_MARK_UNREADABLE);

	cr_assert_str_eq(merged(nat, 3, NULL, 0, 0, cut, 128), "1 [cut] E 9");
}

/* No eval frame at all (a C thread): Python frames, if any, after. */
Test(pystack, no_eval_frames)
{
	uint64_t nat[] = { 1, 2 };
	uint64_t py[] = { PY('a') };

	cr_assert_str_eq(merged(nat, 2, NULL, 0, 0, 0, 128), "1 2");
	cr_assert_str_eq(merged(nat, 2, py, 1, 0x1, 0, 128), "1 2 a");
}

/* A merged stack over the limit ends with the unknown frame. */
Test(pystack, longer_than_max)
{
	uint64_t nat[] = { 1, 100, 9 };
	uint64_t py[] = { PY('c'), PY('b'), PY('a') };

	cr_assert_str_eq(merged(nat, 3, py, 3, 0x4, 0, 4), "1 c b [?] (truncated)");
	cr_assert_str_eq(merged(nat, 3, py, 3, 0x4, 0, 6), "1 c b a E 9");
}
