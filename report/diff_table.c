// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The default output of `stkrec diff`: both captures described, then the
 * functions (self: the innermost frame) and the stacks that changed most,
 * growth first, then shrinkage. What "most" means follows the values shown:
 *
 *   - B not normalized: the change B - A first, then the change in share;
 *   - B normalized to A's total (B - A is then the change in share, scaled):
 *     the change in share first, then the change of the raw values.
 *
 * A row grew (or shrank) by the sign of the first key that is not zero, so
 * a row whose share held while its value changed (one process doing 4x the
 * work) is still shown; only rows equal on both keys are left out. Shares
 * are exact fractions compared as integers, so the order never depends on
 * rounding; last come the names, bytewise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/diff_int.h"
#include "util/escape.h"

#define DIFF_DEFAULT_ROWS 10

struct diff_rank {
	const struct diff_row *row;
	__int128 key[2]; /* signed: the primary and the secondary change */
};

static uint64_t nonzero(uint64_t v)
{
	return v ? v : 1;
}

static double share(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

static __int128 abs128(__int128 v)
{
	return v < 0 ? -v : v;
}

/* +1 grew, -1 shrank, 0 unchanged: the sign of the first nonzero key. */
static int direction(const struct diff_rank *r)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (r->key[i])
			return r->key[i] > 0 ? 1 : -1;
	}
	return 0;
}

/* Within one direction: the larger change first, key by key, then names. */
static int cmp_rank(const void *pa, const void *pb)
{
	const struct diff_rank *a = pa, *b = pb;
	uint32_t la = a->row->len, lb = b->row->len;
	int i, c;

	for (i = 0; i < 2; i++) {
		if (abs128(a->key[i]) != abs128(b->key[i]))
			return abs128(a->key[i]) > abs128(b->key[i]) ? -1 : 1;
	}
	c = memcmp(a->row->name, b->row->name, la < lb ? la : lb);
	return c ? c : la < lb ? -1 : la > lb;
}

static void print_row(const struct diff *d, const struct diff_row *r, FILE *out)
{
	uint64_t ta = d->side[DIFF_A].total, tb = d->side[DIFF_B].total;
	double sa = share(r->a, ta), sb = share(r->b_raw, tb);
	char pct[32];

	if (r->a)
		snprintf(pct, sizeof(pct), "%+.1f%%",
			 100.0 * ((double)r->b - (double)r->a) / (double)r->a);
	else
		snprintf(pct, sizeof(pct), "new");
	fprintf(out, "%12" PRIu64 " %12" PRIu64 " %+12" PRId64 " %9s %7.2f%% %7.2f%% %+9.2f",
		r->a, r->b, (int64_t)(r->b - r->a), pct, sa, sb, sb - sa);
	if (d->normalized)
		fprintf(out, " %12" PRIu64, r->b_raw);
	fputs("  ", out);
	esc__fwrite(r->name, r->len, out);
	fputc('\n', out);
}

/* The two keys of a row (see the top of the file). */
static void rank_keys(const struct diff *d, const struct diff_row *r, struct diff_rank *rk)
{
	uint64_t ta = nonzero(d->side[DIFF_A].total), tb = nonzero(d->side[DIFF_B].total);
	/* share B - share A, times totalA * totalB */
	__int128 share = (__int128)r->b_raw * ta - (__int128)r->a * tb;
	__int128 raw = (__int128)r->b_raw - (__int128)r->a;

	rk->row = r;
	rk->key[0] = d->normalized ? share : raw;
	rk->key[1] = d->normalized ? raw : share;
}

/* Rows that grew (most first), then rows that shrank (most first). */
static int print_ranked(const struct diff *d, const struct diff_row *rows, size_t n,
			uint32_t max, FILE *out)
{
	struct diff_rank *rk = malloc((n ? n : 1) * sizeof(*rk)), t;
	size_t i, ngrew = 0, nshrank = 0;

	if (!rk)
		return -ENOMEM;
	/* grew at the front, shrank at the back, unchanged dropped */
	for (i = 0; i < n; i++) {
		rank_keys(d, &rows[i], &t);
		if (direction(&t) > 0)
			rk[ngrew++] = t;
		else if (direction(&t) < 0)
			rk[n - ++nshrank] = t;
	}
	qsort(rk, ngrew, sizeof(*rk), cmp_rank);
	qsort(rk + n - nshrank, nshrank, sizeof(*rk), cmp_rank);
	fprintf(out, "grew:\n");
	for (i = 0; i < ngrew && i < max; i++)
		print_row(d, rk[i].row, out);
	fprintf(out, "shrank:\n");
	for (i = 0; i < nshrank && i < max; i++)
		print_row(d, rk[n - nshrank + i].row, out);
	free(rk);
	return 0;
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	int c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);

	return c ? c : a->len < b->len ? -1 : a->len > b->len;
}

/* Self per function: the stacks' innermost frames, merged by name. */
static int diff_functions(const struct diff *d, struct diff_row **out, size_t *nout)
{
	struct diff_row *f = malloc((d->nrows ? d->nrows : 1) * sizeof(*f));
	size_t i, n = 0;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < d->nrows; i++) {
		const struct diff_row *r = &d->rows[i];
		const char *semi = memrchr(r->name, ';', r->len);

		f[i] = *r;
		if (semi) {
			f[i].name = semi + 1;
			f[i].len = r->len - (uint32_t)(semi + 1 - r->name);
		}
	}
	if (d->nrows)
		qsort(f, d->nrows, sizeof(*f), cmp_name);
	for (i = 0; i < d->nrows; i++) {
		if (n && !cmp_name(&f[n - 1], &f[i])) {
			f[n - 1].a += f[i].a;
			f[n - 1].b_raw += f[i].b_raw;
			f[n - 1].b += f[i].b;
		} else {
			f[n++] = f[i];
		}
	}
	*out = f;
	*nout = n;
	return 0;
}

static void print_capture(const struct diff *d, const char *tag,
			  const struct diff_capture *c, FILE *out)
{
	fprintf(out, "# %s: %s: host %s, kernel %s, start %s, span %" PRIu64 ".%03" PRIu64
		" s, %zu %s, total %" PRIu64 " %s\n",
		tag, c->label, c->host, c->release, c->start, c->span_ns / 1000000000,
		c->span_ns % 1000000000 / 1000000, c->events, diff_kind_events(d->kind),
		c->total, diff__unit(d));
}

static void print_header(const struct diff *d, FILE *out)
{
	uint64_t ta = d->side[DIFF_A].total, tb = d->side[DIFF_B].total;

	fprintf(out, "# stkrec diff: %s, values in %s\n", diff_kind_events(d->kind),
		diff__unit(d));
	if (d->note)
		fprintf(out, "# %s\n", d->note);
	print_capture(d, "A", &d->side[DIFF_A], out);
	print_capture(d, "B", &d->side[DIFF_B], out);
	if (d->normalized)
		fprintf(out, "# B normalized to A's total (B values x%.4f): %s\n",
			(double)ta / (double)tb,
			d->norm == DIFF_NORM_ON ? "--normalize" :
			"the totals differ by more than 2x (--no-normalize: raw values)");
	else if (diff_totals_apart(ta, tb))
		fprintf(out, "# the totals differ by more than 2x; B not normalized "
			     "(--no-normalize)\n");
	fprintf(out, "# Share: of the side's total; Delta pp: share B - share A in "
		     "percentage points\n");
	if (d->normalized)
		fprintf(out, "# Rows: largest Delta pp first, then largest change of the raw "
			     "values (B raw - A); unchanged rows left out\n");
	else
		fprintf(out, "# Rows: largest Change (B - A) first, then largest Delta pp; "
			     "unchanged rows left out\n");
}

static void print_columns(const struct diff *d, const char *what, FILE *out)
{
	fprintf(out, "%12s %12s %12s %9s %8s %8s %9s", "A", "B", "Change", "Change%",
		"Share A", "Share B", "Delta pp");
	if (d->normalized)
		fprintf(out, " %12s", "B raw");
	fprintf(out, "  %s\n", what);
}

int diff__write_table(const struct diff *d, uint32_t max_rows, FILE *out)
{
	bool bio;
	struct diff_row *funcs = NULL;
	size_t nfuncs = 0;
	int err;

	if (!d || !d->joined || !out)
		return -EINVAL;
	bio = d->kind == CAP_KIND_BIO;
	max_rows = max_rows ? max_rows : DIFF_DEFAULT_ROWS;
	err = diff_functions(d, &funcs, &nfuncs);
	if (err)
		return err;
	print_header(d, out);
	fprintf(out, "\n%s:\n", bio ? "Disks" : "Functions (self: the innermost frame)");
	print_columns(d, bio ? "Disk" : "Function", out);
	err = print_ranked(d, funcs, nfuncs, max_rows, out);
	if (!err) {
		fprintf(out, "\n%s:\n", bio ? "Processes and disks" : "Stacks");
		print_columns(d, bio ? "Comm;disk" : "Stack", out);
		err = print_ranked(d, d->rows, d->nrows, max_rows, out);
	}
	free(funcs);
	return err ?: ferror(out) ? -EIO : 0;
}
