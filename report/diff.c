// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Two captures' folded stacks joined by name, normalization, and the folded
 * and flame graph outputs of `stkrec diff` (the table is in diff_table.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/diff_int.h"
#include "report/flamegraph.h"
#include "util/array.h"

static const char *const diff_units[] = {
	[CAP_KIND_OFFCPU] = "us",
	[CAP_KIND_CPU] = "samples",
	[CAP_KIND_BIO] = "bytes",
};

static const char *const diff_events[] = {
	[CAP_KIND_OFFCPU] = "off-CPU intervals",
	[CAP_KIND_CPU] = "CPU samples",
	[CAP_KIND_BIO] = "block I/O requests",
};

const char *diff_kind_events(enum cap_kind kind)
{
	return diff_events[kind];
}

int diff__new(enum cap_kind kind, struct diff **out)
{
	struct diff *d;

	if (!out || (kind != CAP_KIND_OFFCPU && kind != CAP_KIND_CPU && kind != CAP_KIND_BIO))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->kind = kind;
	*out = d;
	return 0;
}

void diff__free(struct diff *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < 2; i++) {
		free(d->side[i].buf);
		free(d->side[i].lines);
	}
	free(d->rows);
	free(d->note);
	free(d);
}

int diff__set_note(struct diff *d, const char *note)
{
	char *copy;

	if (!d || !note || strchr(note, '\n'))
		return -EINVAL;
	copy = strdup(note);
	if (!copy)
		return -ENOMEM;
	free(d->note);
	d->note = copy;
	return 0;
}

struct diff_fold {
	struct diff_capture *c;
	enum cap_kind kind;
};

/* view_fold() callback: keep the line, in the unit of the output. */
static int diff_keep(void *arg, const char *stack, size_t len, uint64_t value)
{
	struct diff_fold *df = arg;
	struct diff_capture *c = df->c;
	int err;

	if (len > UINT32_MAX)
		return -E2BIG;
	if (df->kind == CAP_KIND_OFFCPU)
		value = view_ns_to_us(value);
	if (c->total > UINT64_MAX - value)
		return -EOVERFLOW;
	err = ARRAY_RESERVE(c->buf, c->cap, c->len + len) ?:
	      ARRAY_RESERVE(c->lines, c->ncap, c->n + 1);
	if (err)
		return err;
	memcpy(c->buf + c->len, stack, len);
	c->lines[c->n++] = (struct diff_line){ .off = c->len, .len = len, .value = value };
	c->len += len;
	c->total += value;
	return 0;
}

static void diff_describe(struct diff_capture *c, const char *label,
			  const struct model *m, enum cap_kind kind)
{
	const struct cap_header *h = model__header(m);

	snprintf(c->label, sizeof(c->label), "%s", label ? label : "");
	snprintf(c->host, sizeof(c->host), "%s", h->hostname);
	snprintf(c->release, sizeof(c->release), "%s", h->release);
	view_fmt_walltime(m, h->start_time, c->start, sizeof(c->start));
	c->span_ns = model__last_time(m) - h->start_time;
	c->events = model__nr_events(m, kind);
}

int diff__add(struct diff *d, enum diff_side side, const char *label,
	      struct report_ctx *ctx)
{
	struct diff_fold df;
	struct diff_capture *c;
	int err;

	if (!d || !ctx || (side != DIFF_A && side != DIFF_B) || d->side[side].added ||
	    (side == DIFF_B && !d->side[DIFF_A].added) || d->joined)
		return -EINVAL;
	c = &d->side[side];
	df = (struct diff_fold){ .c = c, .kind = d->kind };
	diff_describe(c, label, ctx->model, d->kind);
	err = filter__kind(ctx->filter, d->kind) ? view_fold(ctx, d->kind, diff_keep, &df) : 0;
	c->added = !err;
	return err;
}

/* Bytewise, shorter first on a common prefix: the order of view_fold(). */
static int cmp_bytes(const char *a, uint32_t la, const char *b, uint32_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);

	if (c)
		return c;
	return la < lb ? -1 : la > lb;
}

/* Merge the two sorted sides into d->rows. */
static int diff_merge(struct diff *d)
{
	const struct diff_capture *a = &d->side[DIFF_A], *b = &d->side[DIFF_B];
	size_t i = 0, j = 0;
	struct diff_row *r;
	int c;

	d->rows = calloc(a->n + b->n ? a->n + b->n : 1, sizeof(*d->rows));
	if (!d->rows)
		return -ENOMEM;
	while (i < a->n || j < b->n) {
		const struct diff_line *la = i < a->n ? &a->lines[i] : NULL;
		const struct diff_line *lb = j < b->n ? &b->lines[j] : NULL;

		c = !la ? 1 : !lb ? -1 :
		    cmp_bytes(a->buf + la->off, la->len, b->buf + lb->off, lb->len);
		r = &d->rows[d->nrows++];
		r->name = c <= 0 ? a->buf + la->off : b->buf + lb->off;
		r->len = c <= 0 ? la->len : lb->len;
		r->a = c <= 0 ? la->value : 0;
		r->b_raw = c >= 0 ? lb->value : 0;
		i += c <= 0;
		j += c >= 0;
	}
	return 0;
}

/* round(v * num / den) without overflow for 64-bit inputs. */
static uint64_t scale(uint64_t v, uint64_t num, uint64_t den)
{
	unsigned __int128 p = (unsigned __int128)v * num;

	p = (p + den / 2) / den;
	return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
}

bool diff_totals_apart(uint64_t ta, uint64_t tb)
{
	return ta && tb &&
	       ((unsigned __int128)ta > (unsigned __int128)tb * DIFF_AUTO_NORM_RATIO ||
		(unsigned __int128)tb > (unsigned __int128)ta * DIFF_AUTO_NORM_RATIO);
}

static bool diff_want_norm(const struct diff *d, enum diff_norm norm)
{
	uint64_t ta = d->side[DIFF_A].total, tb = d->side[DIFF_B].total;

	if (!ta || !tb || norm == DIFF_NORM_OFF)
		return false;
	return norm == DIFF_NORM_ON || diff_totals_apart(ta, tb);
}

int diff__join(struct diff *d, enum diff_norm norm)
{
	uint64_t ta, tb;
	size_t i;
	int err;

	if (!d || d->joined || !d->side[DIFF_A].added || !d->side[DIFF_B].added)
		return -EINVAL;
	err = diff_merge(d);
	if (err)
		return err;
	d->norm = norm;
	d->normalized = diff_want_norm(d, norm);
	ta = d->side[DIFF_A].total;
	tb = d->side[DIFF_B].total;
	for (i = 0; i < d->nrows; i++)
		d->rows[i].b = d->normalized ? scale(d->rows[i].b_raw, ta, tb) : d->rows[i].b_raw;
	d->joined = true;
	return 0;
}

uint64_t diff__total(const struct diff *d, enum diff_side side)
{
	return d && (side == DIFF_A || side == DIFF_B) ? d->side[side].total : 0;
}

size_t diff__nr_stacks(const struct diff *d)
{
	return d ? d->nrows : 0;
}

bool diff__normalized(const struct diff *d)
{
	return d && d->normalized;
}

const char *diff__unit(const struct diff *d)
{
	return d ? diff_units[d->kind] : "";
}

int diff__write_folded(const struct diff *d, FILE *out)
{
	size_t i;

	if (!d || !d->joined || !out)
		return -EINVAL;
	for (i = 0; i < d->nrows; i++) {
		const struct diff_row *r = &d->rows[i];

		if (!r->a && !r->b)
			continue; /* "stack 0 0" draws nothing and misleads */
		fwrite(r->name, 1, r->len, out);
		fprintf(out, " %" PRIu64 " %" PRIu64 "\n", r->a, r->b);
	}
	return ferror(out) ? -EIO : 0;
}

size_t diff__nr_zero_stacks(const struct diff *d)
{
	size_t i, n = 0;

	for (i = 0; d && d->joined && i < d->nrows; i++)
		n += !d->rows[i].a && !d->rows[i].b;
	return n;
}

/* Split a stack on ';' into frames (outermost first); line is scratch. */
static int split_frames(const struct diff_row *r, char *line, const char **frames)
{
	char *p;
	int n = 0;

	memcpy(line, r->name, r->len);
	line[r->len] = '\0';
	for (p = line; p; n++) {
		if (n == FLAME_MAX_DEPTH)
			return -E2BIG;
		frames[n] = p;
		p = strchr(p, ';');
		if (p)
			*p++ = '\0';
	}
	return n;
}

static int diff_flame(const struct diff *d, struct flame *f)
{
	const char **frames = malloc(FLAME_MAX_DEPTH * sizeof(*frames));
	char *line = NULL;
	size_t i, longest = 0;
	int n = 0;

	for (i = 0; i < d->nrows; i++)
		longest = d->rows[i].len > longest ? d->rows[i].len : longest;
	line = malloc(longest + 1);
	if (!frames || !line)
		n = -ENOMEM;
	for (i = 0; n >= 0 && i < d->nrows; i++) {
		n = split_frames(&d->rows[i], line, frames);
		if (n >= 0)
			n = flame__add_diff(f, frames, n, d->rows[i].a, d->rows[i].b);
	}
	free(frames);
	free(line);
	return n < 0 ? n : 0;
}

int diff__write_svg(const struct diff *d, bool icicle, FILE *out)
{
	const struct diff_capture *a, *b;
	struct flame_opts o = { .title = "Differential Flame Graph",
				.palette = FLAME_DIFF, .icicle = icicle };
	struct flame *f = NULL;
	char subtitle[1024];
	int err;

	if (!d || !d->joined || !out)
		return -EINVAL;
	a = &d->side[DIFF_A];
	b = &d->side[DIFF_B];
	snprintf(subtitle, sizeof(subtitle),
		 "%s: A %s (host %s, %" PRIu64 " %s) -> B %s (host %s, %" PRIu64 " %s%s); "
		 "widths: B, red grew, blue shrank",
		 diff_events[d->kind], a->label, a->host, a->total, diff_units[d->kind],
		 b->label, b->host, b->total, diff_units[d->kind],
		 d->normalized ? ", normalized to A's total" : "");
	o.subtitle = subtitle;
	o.unit = diff_units[d->kind];
	err = flame__new(&f) ?: diff_flame(d, f) ?: flame__write_svg(f, &o, out);
	flame__free(f);
	return err;
}
