/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Two captures compared for one event kind. Each side is folded by
 * view_fold() (the lines `report --folded` prints: off-CPU microseconds,
 * CPU samples, block I/O bytes per "comm;disk"), so stacks match by their
 * symbolized names and captures from two hosts or builds compare by
 * function. The sides are joined by stack, and per function (the innermost
 * frame, self) by name; B may be scaled to A's total (difffolded.pl -n).
 *
 * Use: diff__new(), diff__add() for side A then B (each with its own bound
 * filter and resolver), diff__join(), then any of the writers.
 */
#ifndef STKREC_REPORT_DIFF_H
#define STKREC_REPORT_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/views.h"

struct diff;

enum diff_side { DIFF_A = 0, DIFF_B = 1 };

enum diff_norm {
	DIFF_NORM_AUTO,	/* on when one total is more than twice the other */
	DIFF_NORM_ON,	/* --normalize */
	DIFF_NORM_OFF,	/* --no-normalize */
};

/* Totals differing by more than this factor switch DIFF_NORM_AUTO on. */
#define DIFF_AUTO_NORM_RATIO 2

/* kind: CAP_KIND_OFFCPU, CAP_KIND_CPU or CAP_KIND_BIO. 0, -EINVAL, -ENOMEM. */
int diff__new(enum cap_kind kind, struct diff **out);
void diff__free(struct diff *d);

/* Fold one side: label names it in the output (usually the file name),
 * ctx has the side's model, bound filter and resolver. Each side once, A
 * first. 0, -EINVAL or -ENOMEM. */
int diff__add(struct diff *d, enum diff_side side, const char *label,
	      struct report_ctx *ctx);
/* A line for the table's header, after the first ("# " and a newline
 * added), e.g. how the kind was chosen; copied, the last one kept. 0,
 * -EINVAL or -ENOMEM. */
int diff__set_note(struct diff *d, const char *note);
/* Join the sides and decide the normalization. 0, -EINVAL or -ENOMEM. */
int diff__join(struct diff *d, enum diff_norm norm);

/* Sum of a side's values, as folded (B before normalization). */
uint64_t diff__total(const struct diff *d, enum diff_side side);
/* Distinct stacks over both sides. */
size_t diff__nr_stacks(const struct diff *d);
bool diff__normalized(const struct diff *d);
/* Unit of the values: "us", "samples" or "bytes". */
const char *diff__unit(const struct diff *d);

/* Header, then the functions and the stacks whose share changed most:
 * up to max_rows that grew and max_rows that shrank (0: 10 each). */
int diff__write_table(const struct diff *d, uint32_t max_rows, FILE *out);
/* "stack countA countB" per stack in bytewise order (difffolded.pl's
 * output; countB normalized when diff__normalized()). Stacks whose two
 * values are 0 (rounded: off-CPU ns to us, B scaled to A's total) are left
 * out; diff__nr_zero_stacks() counts them. */
int diff__write_folded(const struct diff *d, FILE *out);
size_t diff__nr_zero_stacks(const struct diff *d);
/* Differential flame graph: widths from B (normalized when
 * diff__normalized()), red where a frame grew, blue where it shrank. */
int diff__write_svg(const struct diff *d, bool icicle, FILE *out);

#endif /* STKREC_REPORT_DIFF_H */
