// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "bpf/stkrec.h"
#include "record/pystack.h"

#define MAX_SEGS 64
/* every native frame, every Python frame and a marker */
#define MAX_MERGED (2 * STKREC_MAX_STACK + STKREC_MAX_PYSTACK + 2)

struct merge {
	uint64_t out[MAX_MERGED];
	int n;
};

static void put(struct merge *m, uint64_t ip)
{
	if (m->n < MAX_MERGED)
		m->out[m->n++] = ip;
}

/* The Python calls: seg[k] is the first frame of call k (innermost first),
 * seg[nseg] == np. The frames after the last entry frame (a stack cut
 * before its outermost call) are a call of their own. */
static int segments(const struct pystack_in *in, int *seg)
{
	int k = 0, i;

	seg[0] = 0;
	for (i = 0; i < in->np && k < MAX_SEGS; i++)
		if ((in->entry >> i & 1) || i == in->np - 1)
			seg[++k] = i + 1;
	return k;
}

static void put_seg(struct merge *m, const struct pystack_in *in, const int *seg, int k,
		    int nseg)
{
	int i;

	for (i = seg[k]; i < seg[k + 1]; i++)
		put(m, in->py[i]);
	if (k == nseg - 1 && in->cut)
		put(m, in->cut);
}

int pystack__merge(const struct pystack_in *in, uint64_t *out, int max, bool *truncated)
{
	struct merge m;
	int seg[MAX_SEGS + 1], nseg = segments(in, seg), nev = 0, j, i, k, d;
	bool ncut = in->nn > 0 && in->native[in->nn - 1] == STKREC_UNWIND_MARKER;
	bool inner = in->cut || ncut;

	m.n = 0;
	for (i = 0; i < in->nn; i++)
		nev += in->is_eval(in->arg, in->native[i]);
	/* eval frame j (innermost first) runs call j + d */
	d = inner ? 0 : nseg - nev;
	for (i = 0, j = 0; i < in->nn; i++) {
		if (in->is_eval(in->arg, in->native[i])) {
			/* the innermost eval frame takes the calls no frame has */
			for (k = j ? j + d : 0; k <= j + d && k < nseg; k++)
				put_seg(&m, in, seg, k, nseg);
			if (!nseg && !j && in->cut)
				put(&m, in->cut);
			j++;
		}
		put(&m, in->native[i]);
	}
	/* the calls no eval frame ran: all of them when there is none */
	for (k = nev && nev + d > 0 ? nev + d : 0; k < nseg; k++)
		put_seg(&m, in, seg, k, nseg);
	if (!nseg && !nev && in->cut)
		put(&m, in->cut);
	*truncated = m.n > max;
	if (*truncated) {
		m.n = max;
		if (max > 0)
			m.out[max - 1] = STKREC_UNWIND_MARKER;
	}
	memcpy(out, m.out, m.n * sizeof(*out));
	return m.n;
}
