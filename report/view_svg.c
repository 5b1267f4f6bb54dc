// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Flame graph of one event kind as a standalone interactive SVG: the folded
 * stacks of view_fold() (the lines `report --folded` prints) drawn by
 * report/flamegraph.c. CPU samples in warm colours, off-CPU time in blues
 * (microseconds), block I/O in greens (bytes per comm and disk).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/flamegraph.h"
#include "report/views_int.h"
#include "util/array.h"

struct svg_fold {
	struct flame *flame;
	const char **frames;
	char *line;
	size_t cap;
	bool us;
};

static const char *const svg_titles[] = {
	[CAP_KIND_OFFCPU] = "Off-CPU Time Flame Graph",
	[CAP_KIND_CPU] = "CPU Flame Graph",
	[CAP_KIND_BIO] = "Block I/O Flame Graph",
};

static const char *const svg_units[] = {
	[CAP_KIND_OFFCPU] = "us",
	[CAP_KIND_CPU] = "samples",
	[CAP_KIND_BIO] = "bytes",
};

static const char *const svg_events[] = {
	[CAP_KIND_OFFCPU] = "off-CPU intervals",
	[CAP_KIND_CPU] = "CPU samples",
	[CAP_KIND_BIO] = "block I/O requests",
};

static const enum flame_palette svg_palettes[] = {
	[CAP_KIND_OFFCPU] = FLAME_BLUE,
	[CAP_KIND_CPU] = FLAME_HOT,
	[CAP_KIND_BIO] = FLAME_IO,
};

/* Split a folded stack on ';' into sf->frames (outermost first). */
static int svg_split(struct svg_fold *sf, const char *stack, size_t len)
{
	char *p;
	int n = 0;

	if (ARRAY_RESERVE(sf->line, sf->cap, len + 1))
		return -ENOMEM;
	memcpy(sf->line, stack, len);
	sf->line[len] = '\0';
	for (p = sf->line; p; n++) {
		if (n == FLAME_MAX_DEPTH)
			return -E2BIG;
		sf->frames[n] = p;
		p = strchr(p, ';');
		if (p)
			*p++ = '\0';
	}
	return n;
}

static int svg_add(void *arg, const char *stack, size_t len, uint64_t value)
{
	struct svg_fold *sf = arg;
	int n = svg_split(sf, stack, len);

	if (n < 0)
		return n;
	return flame__add(sf->flame, sf->frames, n, sf->us ? view_ns_to_us(value) : value);
}

/* -e bio alone, or block I/O the only kind recorded: bio; else as --folded. */
static enum cap_kind svg_kind(const struct report_ctx *ctx)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	bool stacks = (filter__kind(f, CAP_KIND_OFFCPU) &&
		       model__nr_events(m, CAP_KIND_OFFCPU)) ||
		      (filter__kind(f, CAP_KIND_CPU) && model__nr_events(m, CAP_KIND_CPU));

	if (filter__kind(f, CAP_KIND_BIO) &&
	    ((!filter__kind(f, CAP_KIND_OFFCPU) && !filter__kind(f, CAP_KIND_CPU)) ||
	     (!stacks && model__nr_events(m, CAP_KIND_BIO))))
		return CAP_KIND_BIO;
	return view_fold_kind(ctx);
}

/* "host web1, 2026-11-22T14:03:07.250000+01:00 + 10.002 s, 9981 CPU samples" */
static void svg_subtitle(const struct model *m, enum cap_kind kind, char *buf, size_t len)
{
	const struct cap_header *h = model__header(m);
	uint64_t span = model__last_time(m) - h->start_time;
	char when[64];

	view_fmt_walltime(m, h->start_time, when, sizeof(when));
	snprintf(buf, len, "host %s, %s + %" PRIu64 ".%03" PRIu64 " s, %zu %s", h->hostname,
		 when, span / 1000000000, span % 1000000000 / 1000000,
		 model__nr_events(m, kind), svg_events[kind]);
}

int view_svg(struct report_ctx *ctx, FILE *out)
{
	enum cap_kind kind = svg_kind(ctx);
	struct svg_fold sf = { .us = kind == CAP_KIND_OFFCPU };
	struct flame_opts o = {
		.title = svg_titles[kind],
		.unit = svg_units[kind],
		.palette = svg_palettes[kind],
		.icicle = ctx->opts.icicle,
	};
	char subtitle[256];
	int err;

	sf.frames = malloc(FLAME_MAX_DEPTH * sizeof(*sf.frames));
	err = sf.frames ? flame__new(&sf.flame) : -ENOMEM;
	if (!err && filter__kind(ctx->filter, kind))
		err = view_fold(ctx, kind, svg_add, &sf);
	if (!err) {
		svg_subtitle(ctx->model, kind, subtitle, sizeof(subtitle));
		o.subtitle = subtitle;
		err = flame__write_svg(sf.flame, &o, out);
	}
	flame__free(sf.flame);
	free(sf.frames);
	free(sf.line);
	return err;
}
