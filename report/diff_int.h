/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Internals shared by report/diff.c and report/diff_table.c. */
#ifndef STKREC_REPORT_DIFF_INT_H
#define STKREC_REPORT_DIFF_INT_H

#include "report/diff.h"

/* One folded stack of one side: its bytes are in the side's buffer. */
struct diff_line {
	size_t off;
	uint32_t len;
	uint64_t value;
};

struct diff_capture {
	bool added;
	char label[256];
	char host[65];
	char release[65];
	char start[64];        /* wall clock of the capture start */
	uint64_t span_ns;
	size_t events;         /* events of the kind in the capture */
	uint64_t total;        /* sum of the folded values (after filters) */
	char *buf;             /* stack bytes */
	size_t len, cap;
	struct diff_line *lines;
	size_t n, ncap;
};

/* A stack (or function) on both sides. */
struct diff_row {
	const char *name;      /* not NUL-terminated */
	uint32_t len;
	uint64_t a, b_raw, b;  /* b: b_raw normalized, or b_raw */
};

struct diff {
	enum cap_kind kind;
	struct diff_capture side[2];
	struct diff_row *rows; /* by stack, bytewise */
	size_t nrows;
	bool joined, normalized;
	enum diff_norm norm;
	char *note;            /* diff__set_note(), or NULL */
};

/* Both totals nonzero and one more than DIFF_AUTO_NORM_RATIO times the other. */
bool diff_totals_apart(uint64_t ta, uint64_t tb);
/* Names of the kind for the output. */
const char *diff_kind_events(enum cap_kind kind);

#endif /* STKREC_REPORT_DIFF_INT_H */
