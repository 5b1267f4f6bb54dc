/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Self-contained interactive SVG flame graphs, in the manner of Brendan
 * Gregg's flamegraph.pl, without Perl.
 *
 * Input is already-symbolized stacks: frames[0] is the outermost frame (the
 * root, usually the comm), frames[n - 1] the innermost. Identical frames
 * under the same parent merge; children are drawn in alphabetical (byte)
 * order. The output is one standalone SVG file: inline CSS and JavaScript
 * (hover details, click to zoom, regex search), and a correct static
 * picture with <title> tooltips when scripts are off.
 *
 * Independent of the rest of report/: nothing here knows about captures.
 */
#ifndef STKREC_REPORT_FLAMEGRAPH_H
#define STKREC_REPORT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Deepest stack accepted; deeper ones are refused with -E2BIG. */
#define FLAME_MAX_DEPTH 4096

struct flame;

enum flame_palette {
	FLAME_HOT,	/* CPU samples: red, orange, yellow */
	FLAME_BLUE,	/* off-CPU time: blues */
	FLAME_IO,	/* block I/O: greens */
	FLAME_DIFF,	/* differential: red grew, blue shrank, grey same */
};

struct flame_opts {
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* NULL or "": none (e.g. host, time span) */
	const char *unit;	/* NULL: "samples"; e.g. "us" */
	enum flame_palette palette;
	bool icicle;		/* root at the top, stacks grow down */
	int width;		/* pixels; <= 0: 1200 */
};

int flame__new(struct flame **out);
void flame__free(struct flame *f);

/*
 * Add one stack with its value (samples, microseconds, ...). n == 0 adds to
 * the root only. Returns 0, -EINVAL (NULL frame, n < 0), -E2BIG (n above
 * FLAME_MAX_DEPTH), -EOVERFLOW (total does not fit 64 bits) or -ENOMEM.
 */
int flame__add(struct flame *f, const char *const *frames, int n,
	       uint64_t value);

/*
 * Differential stack: value_a before, value_b after. Boxes are value_b
 * wide; with the FLAME_DIFF palette their colour encodes the change.
 */
int flame__add_diff(struct flame *f, const char *const *frames, int n,
		    uint64_t value_a, uint64_t value_b);

/* Total value (width of the root) and the number of distinct frames. */
uint64_t flame__total(const struct flame *f);
size_t flame__nodes(const struct flame *f);

/*
 * Write the SVG. Returns 0, -EINVAL (NULL argument) or -EIO if out had a
 * write error. An empty flame gives a valid SVG saying there is no data.
 * Widths below 100 px are raised to 100.
 */
int flame__write_svg(struct flame *f, const struct flame_opts *opts,
		     FILE *out);

#endif /* STKREC_REPORT_FLAMEGRAPH_H */
