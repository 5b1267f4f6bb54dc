/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A user stack with Python frames interleaved: each native frame of the
 * interpreter's eval function stands for the Python frames it runs, up to
 * the next entry frame (bpf/stkrec.h, struct stkrec_pyframe), and those
 * frames go right inside it. Pure: no state, no I/O.
 */
#ifndef STKREC_RECORD_PYSTACK_H
#define STKREC_RECORD_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>

struct pystack_in {
	const uint64_t *native; /* user frames, innermost first; a stack the
				 * unwinder could not finish ends with
				 * STKREC_UNWIND_MARKER */
	int nn;
	const uint64_t *py;     /* Python frames as capture frames (CAP_PYFRAME) */
	uint64_t entry;         /* bit i: py[i] is the outermost of its eval call */
	int np;                 /* <= 64 */
	uint64_t cut;           /* a CAP_PY_MARK_* frame when the Python stack
				 * was cut, else 0 */
	bool (*is_eval)(void *arg, uint64_t ip); /* a frame of the eval function? */
	void *arg;
};

/*
 * The merged stack into out (max frames): its length. Both stacks whole:
 * eval frames and Python calls are paired from the outermost (an eval frame
 * in its prologue, with no frame pushed yet, is then the innermost one
 * left without Python frames). Either one cut: paired from the innermost,
 * the Python calls left over go after the native frames, then the marker.
 * A stack longer than max ends with STKREC_UNWIND_MARKER; *truncated says
 * so.
 */
int pystack__merge(const struct pystack_in *in, uint64_t *out, int max, bool *truncated);

#endif /* STKREC_RECORD_PYSTACK_H */
