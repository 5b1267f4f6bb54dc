// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * SVG flame graphs: a tree of merged stacks, laid out and written like
 * flamegraph.pl does (same geometry, palettes and interaction), as one
 * standalone file.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "report/flamegraph.h"
#include "report/flamegraph_js.h"
#include "util/array.h"

/* Layout, in pixels, as flamegraph.pl's defaults. */
#define FG_WIDTH	1200
#define FG_FONT_SIZE	12
#define FG_FONT_WIDTH	0.59	/* average glyph width / font size */
#define FG_FRAME_H	16
#define FG_FRAME_PAD	1
#define FG_XPAD		10
#define FG_YPAD_TOP	(FG_FONT_SIZE * 3)	/* title, controls */
#define FG_YPAD_SUB	(FG_FONT_SIZE * 2)	/* subtitle line */
#define FG_YPAD_BOTTOM	(FG_FONT_SIZE * 2 + 10)	/* details line */
#define FG_MIN_WIDTH	0.1	/* narrower boxes are not drawn */
#define FG_TEXT_PAD	6	/* 3 px either side of a label */
#define FG_SEARCH_FILL	"rgb(230,0,230)"

struct fnode {
	char *name;
	size_t nchars;		/* code points once sanitized for XML */
	uint64_t value;		/* inclusive, "after" for diffs */
	uint64_t value_a;	/* inclusive, "before" */
	struct fnode **kids;	/* sorted by strcmp() of name */
	uint32_t nkids;
	uint32_t cap;
};

struct flame {
	struct fnode root;
	size_t nodes;
};

/* ---- UTF-8 and XML ------------------------------------------------------- */

/*
 * Decode one code point. Invalid or overlong sequences, surrogates and code
 * points XML 1.0 forbids (controls, U+FFFE, U+FFFF) come back as U+FFFD,
 * consuming one byte, so any byte string maps to valid XML text.
 */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	uint32_t c = s[0];

	if (c < 0x80) {
		*cp = (c < 0x20 || c == 0x7f) ? 0xfffd : c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, c &= 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, c &= 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, c &= 0x07;
	else
		goto bad;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			goto bad;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
	    (c >= 0x80 && c <= 0x9f) || c == 0xfffe || c == 0xffff)
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = 0xfffd;
	return 1;
}

static size_t utf8_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	uint32_t cp;

	while (*p) {
		p += utf8_next(p, &cp);
		n++;
	}
	return n;
}

static void put_cp(FILE *out, uint32_t cp)
{
	switch (cp) {
	case '&': fputs("&amp;", out); return;
	case '<': fputs("&lt;", out); return;
	case '>': fputs("&gt;", out); return;
	case '"': fputs("&quot;", out); return;
	case '\'': fputs("&apos;", out); return;
	}
	if (cp < 0x80) {
		fputc((int)cp, out);
	} else if (cp < 0x800) {
		fputc(0xc0 | (cp >> 6), out);
		fputc(0x80 | (cp & 0x3f), out);
	} else if (cp < 0x10000) {
		fputc(0xe0 | (cp >> 12), out);
		fputc(0x80 | ((cp >> 6) & 0x3f), out);
		fputc(0x80 | (cp & 0x3f), out);
	} else {
		fputc(0xf0 | (cp >> 18), out);
		fputc(0x80 | ((cp >> 12) & 0x3f), out);
		fputc(0x80 | ((cp >> 6) & 0x3f), out);
		fputc(0x80 | (cp & 0x3f), out);
	}
}

/* Write at most max code points of s, escaped for XML text and attributes. */
static void put_xml(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;

	while (*p && max--) {
		p += utf8_next(p, &cp);
		put_cp(out, cp);
	}
}

/* ---- numbers, locale independent ----------------------------------------- */

/*
 * v rounded to 2 decimals, half away from zero; printf("%f") would follow
 * LC_NUMERIC, and this avoids libm.
 */
static void put_fixed(FILE *out, double v)
{
	long long c = (long long)(v * 100.0 + (v < 0 ? -0.5 : 0.5));

	if (c < 0) {
		fputc('-', out);
		c = -c;
	}
	fprintf(out, "%lld.%02lld", c / 100, c % 100);
}

/* 1234567 -> "1,234,567", as flamegraph.pl's titles. */
static void put_grouped(FILE *out, uint64_t v)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	int i;

	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			fputc(',', out);
		fputc(buf[i], out);
	}
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* ---- the tree ------------------------------------------------------------- */

int flame__new(struct flame **out)
{
	struct flame *f;

	if (!out)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->root.name = strdup("all");
	if (!f->root.name) {
		free(f);
		return -ENOMEM;
	}
	f->root.nchars = 3;
	*out = f;
	return 0;
}

/* Iterative, so that a FLAME_MAX_DEPTH deep tree cannot exhaust the stack. */
static void fnode_free_kids(struct fnode *n)
{
	while (n->nkids) {
		struct fnode *k = n->kids[n->nkids - 1];

		if (k->nkids) {
			/* move k's children up to n, then k is a leaf */
			if (ARRAY_RESERVE(n->kids, n->cap, (size_t)n->nkids + k->nkids))
				break;	/* leak rather than crash */
			memcpy(n->kids + n->nkids, k->kids,
			       k->nkids * sizeof(*k->kids));
			n->nkids += k->nkids;
			k->nkids = 0;
			continue;
		}
		n->nkids--;
		free(k->kids);
		free(k->name);
		free(k);
	}
	free(n->kids);
	n->kids = NULL;
}

void flame__free(struct flame *f)
{
	if (!f)
		return;
	fnode_free_kids(&f->root);
	free(f->root.name);
	free(f);
}

/* Index of name in n's children, or of where it would go (*found false). */
static uint32_t kid_search(const struct fnode *n, const char *name,
			   bool *found)
{
	uint32_t lo = 0, hi = n->nkids;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(n->kids[mid]->name, name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static struct fnode *kid_get(struct flame *f, struct fnode *n,
			     const char *name)
{
	struct fnode *k;
	bool found;
	uint32_t i = kid_search(n, name, &found);

	if (found)
		return n->kids[i];
	if (ARRAY_RESERVE(n->kids, n->cap, (size_t)n->nkids + 1))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->name = strdup(name);
	if (!k->name) {
		free(k);
		return NULL;
	}
	k->nchars = utf8_chars(name);
	memmove(n->kids + i + 1, n->kids + i, (n->nkids - i) * sizeof(*n->kids));
	n->kids[i] = k;
	n->nkids++;
	f->nodes++;
	return k;
}

int flame__add_diff(struct flame *f, const char *const *frames, int n,
		    uint64_t value_a, uint64_t value_b)
{
	struct fnode *node;
	int i;

	if (!f || n < 0 || (n && !frames))
		return -EINVAL;
	if (n > FLAME_MAX_DEPTH)
		return -E2BIG;
	for (i = 0; i < n; i++)
		if (!frames[i])
			return -EINVAL;
	/* the root holds the largest sums: if it fits, everything fits */
	if (f->root.value > UINT64_MAX - value_b ||
	    f->root.value_a > UINT64_MAX - value_a)
		return -EOVERFLOW;
	/* create the path first, so that failure leaves no partial sums */
	for (i = 0, node = &f->root; i < n; i++) {
		node = kid_get(f, node, frames[i]);
		if (!node)
			return -ENOMEM;
	}
	for (i = 0, node = &f->root; ; i++) {
		node->value += value_b;
		node->value_a += value_a;
		if (i == n)
			break;
		node = kid_get(f, node, frames[i]);
	}
	return 0;
}

int flame__add(struct flame *f, const char *const *frames, int n,
	       uint64_t value)
{
	return flame__add_diff(f, frames, n, value, value);
}

uint64_t flame__total(const struct flame *f)
{
	return f ? f->root.value : 0;
}

size_t flame__nodes(const struct flame *f)
{
	return f ? f->nodes : 0;
}

/* ---- SVG ------------------------------------------------------------------ */

struct svg {
	FILE *out;
	enum flame_palette palette;
	const char *unit;
	bool icicle;
	int width;
	int height;
	int ytop;		/* top of the frame area */
	uint64_t total;
	double px_per_value;
};

static const char flame_css[] =
	"text { font-family: Verdana, \"DejaVu Sans\", sans-serif;"
	" font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { font-size: 17px; }\n"
	"#subtitle { fill: rgb(80,80,80); }\n"
	"#unzoom, #search { cursor: pointer; }\n"
	"#unzoom:hover, #search:hover { fill: rgb(0,0,200); }\n"
	".f { cursor: pointer; }\n"
	".f text { pointer-events: none; }\n"
	".f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	".parent { opacity: 0.5; }\n"
	".hide, .hidden { display: none; }\n";

/* FNV-1a, then a 64-bit finalizer so nearby names spread over the palette. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/*
 * Differential: red grew, blue shrank, grey unchanged; the intensity is
 * the change relative to the frame's larger value, so a frame that doubled
 * is as red as any other that doubled, whatever its size.
 */
static void diff_colour(const struct fnode *n, int rgb[3])
{
	uint64_t a = n->value_a, b = n->value;
	uint64_t big = a > b ? a : b, d = a > b ? a - b : b - a;
	int c;

	if (d == 0) {
		rgb[0] = rgb[1] = rgb[2] = 210;
		return;
	}
	c = (int)(210.0 * (1.0 - (double)d / (double)big) + 0.5);
	if (b > a) {
		rgb[0] = 255;
		rgb[1] = rgb[2] = c;
	} else {
		rgb[0] = rgb[1] = c;
		rgb[2] = 255;
	}
}

/*
 * Frames annotated as stackcollapse and "report folded -a" do: "_[k]"
 * kernel, "_[j]" JIT, "_[i]" inlined; in CPU graphs they get their own hue
 * as in flamegraph.pl's java palette, so kernel time stands out.
 */
static bool annotated(const char *name, char kind)
{
	size_t len = strlen(name);

	return len > 4 && name[len - 4] == '_' && name[len - 3] == '[' &&
	       name[len - 2] == kind && name[len - 1] == ']';
}

static bool hot_annotated(const struct fnode *n, double v1, int rgb[3])
{
	if (annotated(n->name, 'k')) {		/* orange */
		rgb[0] = 190 + (int)(65 * v1);
		rgb[1] = 90 + (int)(65 * v1);
		rgb[2] = 0;
	} else if (annotated(n->name, 'j')) {	/* green */
		rgb[0] = 50 + (int)(60 * v1);
		rgb[1] = 200 + (int)(55 * v1);
		rgb[2] = 50 + (int)(60 * v1);
	} else if (annotated(n->name, 'i')) {	/* aqua */
		rgb[0] = 50 + (int)(60 * v1);
		rgb[1] = 165 + (int)(55 * v1);
		rgb[2] = 165 + (int)(55 * v1);
	} else {
		return false;
	}
	return true;
}

static void colour(const struct svg *s, const struct fnode *n, int rgb[3])
{
	uint64_t h = name_hash(n->name);
	double v1 = (double)(h & 0xffff) / 65535.0;
	double v2 = (double)((h >> 16) & 0xffff) / 65535.0;
	double v3 = (double)((h >> 32) & 0xffff) / 65535.0;

	switch (s->palette) {
	case FLAME_DIFF:
		diff_colour(n, rgb);
		return;
	case FLAME_BLUE:
		rgb[0] = rgb[1] = 80 + (int)(60 * v1);
		rgb[2] = 190 + (int)(55 * v2);
		return;
	case FLAME_IO:
		rgb[0] = 40 + (int)(60 * v1);
		rgb[1] = 175 + (int)(60 * v2);
		rgb[2] = 70 + (int)(50 * v3);
		return;
	case FLAME_HOT:
	default:
		if (hot_annotated(n, v1, rgb))
			return;
		rgb[0] = 205 + (int)(50 * v3);
		rgb[1] = (int)(230 * v1);
		rgb[2] = (int)(55 * v2);
		return;
	}
}

static const char *const background[][2] = {
	[FLAME_HOT] = { "#eeeeee", "#eeeeb0" },
	[FLAME_BLUE] = { "#eeeeee", "#e0e0ff" },
	[FLAME_IO] = { "#f0f0f0", "#ddeedd" },
	[FLAME_DIFF] = { "#f8f8f8", "#e8e8e8" },
};

/* Deepest level holding a box at least FG_MIN_WIDTH wide. */
static int visible_depth(const struct fnode *n, double px, int depth)
{
	int max = depth, d;
	uint32_t i;

	for (i = 0; i < n->nkids; i++) {
		if ((double)n->kids[i]->value * px < FG_MIN_WIDTH)
			continue;
		d = visible_depth(n->kids[i], px, depth + 1);
		if (d > max)
			max = d;
	}
	return max;
}

static void put_title(const struct svg *s, const struct fnode *n)
{
	FILE *out = s->out;

	put_xml(out, n->name, SIZE_MAX);
	fputs(" (", out);
	put_grouped(out, n->value);
	fputc(' ', out);
	put_xml(out, s->unit, SIZE_MAX);
	fputs(", ", out);
	put_fixed(out, percent(n->value, s->total));
	fputc('%', out);
	if (s->palette == FLAME_DIFF) {
		fputs("; before ", out);
		put_grouped(out, n->value_a);
		if (!n->value_a) {
			fputs(", new", out);
		} else {
			fputs(n->value >= n->value_a ? ", +" : ", -", out);
			put_fixed(out, percent(n->value >= n->value_a ?
					       n->value - n->value_a :
					       n->value_a - n->value,
					       n->value_a));
			fputc('%', out);
		}
	}
	fputc(')', out);
}

/*
 * Width of a glyph in hundredths of the font size: flamegraph.pl's average
 * for most, more for those much wider than it in Verdana and DejaVu Sans
 * (m, w, capitals, CJK), so that a label of them cannot overflow its box.
 * flamegraph_js.h's glyphWidth() is the same rule.
 */
#define FG_GLYPH_W	59	/* FG_FONT_WIDTH, in hundredths */

static unsigned int glyph_width(uint32_t cp)
{
	if (cp == 'm' || cp == 'w' || cp == 'M' || cp == 'W' || cp == '@' || cp == '%')
		return 100;
	if (cp >= 'A' && cp <= 'Z')
		return 80;
	return cp >= 0x1100 ? 100 : FG_GLYPH_W;
}

/* The label: the whole name, or its start and ".." so it never overflows. */
static void put_label(FILE *out, const struct fnode *n, double w)
{
	const unsigned char *p = (const unsigned char *)n->name;
	double avail = (w - FG_TEXT_PAD) * 100.0 / FG_FONT_SIZE;
	unsigned long sum = 0;
	size_t k = 0, best = 0;
	uint32_t cp;

	for (; *p; k++) {
		if (sum + 2 * FG_GLYPH_W <= avail)
			best = k;	/* k characters and ".." fit */
		p += utf8_next(p, &cp);
		sum += glyph_width(cp);
	}
	if (sum <= avail) {
		put_xml(out, n->name, SIZE_MAX);
		return;
	}
	if (best < 1)
		return;
	put_xml(out, n->name, best);
	fputs("..", out);
}

static void put_frame(const struct svg *s, const struct fnode *n, int depth,
		      double x, double w)
{
	FILE *out = s->out;
	int y, rgb[3];

	if (s->icicle)
		y = s->ytop + depth * FG_FRAME_H;
	else
		y = s->height - FG_YPAD_BOTTOM - (depth + 1) * FG_FRAME_H +
		    FG_FRAME_PAD;
	colour(s, n, rgb);
	fputs("<g class=\"f\"><title>", out);
	put_title(s, n);
	fputs("</title><rect x=\"", out);
	put_fixed(out, x);
	fprintf(out, "\" y=\"%d\" width=\"", y);
	put_fixed(out, w);
	fprintf(out, "\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
		FG_FRAME_H - FG_FRAME_PAD, rgb[0], rgb[1], rgb[2]);
	fputs("<text x=\"", out);
	put_fixed(out, x + 3);
	fputs("\" y=\"", out);
	put_fixed(out, y + (FG_FRAME_H - FG_FRAME_PAD) / 2.0 + 3);
	fputs("\">", out);
	put_label(out, n, w);
	fputs("</text></g>\n", out);
}

/* Children start at the parent's left edge, in name order; self time is
 * the gap on the right. offset is in value units from the graph's left. */
static void draw(const struct svg *s, const struct fnode *n, int depth,
		 uint64_t offset)
{
	double w = (double)n->value * s->px_per_value;
	uint32_t i;

	if (w < FG_MIN_WIDTH)
		return;
	put_frame(s, n, depth, FG_XPAD + (double)offset * s->px_per_value, w);
	for (i = 0; i < n->nkids; i++) {
		draw(s, n->kids[i], depth + 1, offset);
		offset += n->kids[i]->value;
	}
}

static void put_header(const struct svg *s, const struct flame_opts *o)
{
	FILE *out = s->out;
	int mid = s->width / 2;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
		" xmlns=\"http://www.w3.org/2000/svg\">\n",
		s->width, s->height, s->width, s->height);
	fprintf(out, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\""
		" x1=\"0\" x2=\"0\"><stop stop-color=\"%s\" offset=\"5%%\"/>"
		"<stop stop-color=\"%s\" offset=\"95%%\"/></linearGradient></defs>\n",
		background[s->palette][0], background[s->palette][1]);
	fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n",
		flame_css);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\""
		" fill=\"url(#background)\"/>\n", s->width, s->height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
		mid, FG_FONT_SIZE * 2);
	put_xml(out, o->title ? o->title : "Flame Graph", SIZE_MAX);
	fputs("</text>\n", out);
	if (o->subtitle && *o->subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%d\" y=\"%d\""
			" text-anchor=\"middle\">", mid, FG_FONT_SIZE * 4);
		put_xml(out, o->subtitle, SIZE_MAX);
		fputs("</text>\n", out);
	}
}

static void put_controls(const struct svg *s)
{
	FILE *out = s->out;
	int right = s->width - FG_XPAD, bottom = s->height - FG_YPAD_BOTTOM / 2;

	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		FG_XPAD, bottom);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">"
		"Reset Zoom</text>\n", FG_XPAD, FG_FONT_SIZE * 2);
	fprintf(out, "<text id=\"search\" class=\"hide\" x=\"%d\" y=\"%d\""
		" text-anchor=\"end\">Search</text>\n", right, FG_FONT_SIZE * 2);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\""
		" text-anchor=\"end\"> </text>\n", right, bottom);
}

static void put_script(const struct svg *s)
{
	FILE *out = s->out;

	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fprintf(out, "var fg = { width: %d, xpad: %d, fs: %d, fw: ",
		s->width, FG_XPAD, FG_FONT_SIZE);
	put_fixed(out, FG_FONT_WIDTH);
	fprintf(out, ", tpad: %d, icicle: %s, searchFill: \"%s\" };\n",
		FG_TEXT_PAD, s->icicle ? "true" : "false", FG_SEARCH_FILL);
	fputs(flame_js, out);
	fputs("]]></script>\n", out);
}

static void svg_layout(struct svg *s, const struct flame *f,
		       const struct flame_opts *o)
{
	int depth = 0;

	s->palette = (unsigned int)o->palette <= FLAME_DIFF ? o->palette :
							       FLAME_HOT;
	s->unit = o->unit && *o->unit ? o->unit : "samples";
	s->icicle = o->icicle;
	s->width = o->width > 0 ? o->width : FG_WIDTH;
	if (s->width < 100)	/* room for the controls at least */
		s->width = 100;
	s->total = f->root.value;
	s->px_per_value = s->total ?
		(double)(s->width - 2 * FG_XPAD) / (double)s->total : 0;
	if (s->total)
		depth = visible_depth(&f->root, s->px_per_value, 0);
	s->ytop = FG_YPAD_TOP + (o->subtitle && *o->subtitle ? FG_YPAD_SUB : 0);
	s->height = s->ytop + (depth + 1) * FG_FRAME_H + FG_YPAD_BOTTOM;
}

int flame__write_svg(struct flame *f, const struct flame_opts *opts,
		     FILE *out)
{
	struct svg s = { .out = out };

	if (!f || !opts || !out)
		return -EINVAL;
	svg_layout(&s, f, opts);
	put_header(&s, opts);
	put_controls(&s);
	fputs("<g id=\"frames\">\n", out);
	if (s.total)
		draw(&s, &f->root, 0, 0);
	else
		fprintf(out, "<text id=\"nodata\" x=\"%d\" y=\"%d\""
			" text-anchor=\"middle\">No data</text>\n",
			s.width / 2, s.ytop + FG_FRAME_H - 4);
	fputs("</g>\n", out);
	put_script(&s);
	fputs("</svg>\n", out);
	if (fflush(out) == EOF || ferror(out))
		return -EIO;
	return 0;
}
