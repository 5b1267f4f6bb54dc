// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report/flamegraph: geometry read back from the SVG text, XML validity by
 * xmllint, escaping, truncation, palettes, diff colours, icicle layout,
 * folded-line parsing, and a real headless Chromium run of the interactive
 * parts (tests/browser/flame_check.js).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/flamegraph.h"
#include "tests/util_e2e.h"

/* Result of flame__parse_folded(); frames point into the parsed line. */
struct flame_folded {
	int nframes;
	bool diff;		/* the line had two counts */
	uint64_t value_a;	/* the count, or the first of two */
	uint64_t value_b;	/* the second count; == value_a if !diff */
};

/* ---- folded input --------------------------------------------------------
 * flamegraph.pl's input format, parsed here only: stkrec draws its graphs
 * from the capture, and these tests build trees from folded lines. */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Strict unsigned decimal: digits only, no sign, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/*
 * Cut the last blank-separated field off s (length *len); NULL if none.
 * *sep gets the blank that was replaced by the NUL ending the rest.
 */
static char *cut_last_field(char *s, size_t *len, char *sep)
{
	size_t end = *len, start;

	while (end && is_blank(s[end - 1]))
		end--;
	start = end;
	while (start && !is_blank(s[start - 1]))
		start--;
	if (start == end || !start)
		return NULL;	/* no field, or nothing before it */
	s[end] = '\0';
	*len = start - 1;
	*sep = s[start - 1];
	s[start - 1] = '\0';
	return s + start;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int split_frames(char *stack, const char **frames, int max)
{
	int n = 0;
	char *p = stack, *semi;

	for (;;) {
		semi = strchr(p, ';');
		if (semi)
			*semi = '\0';
		if (*p) {
			if (n == max)
				return -E2BIG;
			frames[n++] = p;
		}
		if (!semi)
			return n;
		p = semi + 1;
	}
}

/* Counts from the right (frames may hold blanks), as flamegraph.pl does. */
static int parse_counts(char *line, size_t *len, struct flame_folded *out)
{
	char *last, *prev, sep;
	size_t save_len;
	int err;

	last = cut_last_field(line, len, &sep);
	if (!last)
		return -EINVAL;
	err = parse_u64(last, &out->value_b);
	if (err)
		return err;
	out->value_a = out->value_b;
	out->diff = false;
	save_len = *len;
	prev = cut_last_field(line, len, &sep);
	if (!prev)
		return 0;
	if (!all_digits(prev)) {
		prev[-1] = sep;	/* not a count: give the field back */
		*len = save_len;
		return 0;
	}
	out->diff = true;
	return parse_u64(prev, &out->value_a);
}

/*
 * Split a folded line "a;b;c 123" (or "a;b;c 12 34" for a diff) in place:
 * ';' separators and the space before the counts become NUL, a trailing
 * newline is dropped, empty frames are skipped. Frames may contain spaces;
 * the counts are the last one or two fields, unsigned decimal. Returns 0,
 * -EINVAL (no count, not a number), -ERANGE (count above UINT64_MAX) or
 * -E2BIG (more than max frames).
 */
static int flame__parse_folded(char *line, const char **frames, int max,
			       struct flame_folded *out)
{
	size_t len;
	int err, n;

	if (!line || !out || max < 0 || (max && !frames))
		return -EINVAL;
	len = strlen(line);
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	err = parse_counts(line, &len, out);
	if (err)
		return err;
	while (len && is_blank(line[len - 1]))
		line[--len] = '\0';
	n = split_frames(line, frames, max);
	if (n < 0)
		return n;
	out->nframes = n;
	return 0;
}

static int flame__add_folded(struct flame *f, const char *line)
{
	struct flame_folded fo;
	const char **frames;
	char *copy;
	size_t max = 1;
	const char *p;
	int err;

	if (!f || !line)
		return -EINVAL;
	/* room for every frame, so that empty ones cannot cause -E2BIG */
	for (p = line; *p; p++)
		max += *p == ';';
	if (max > INT_MAX)
		return -E2BIG;
	copy = strdup(line);
	frames = calloc(max, sizeof(*frames));
	err = -ENOMEM;
	if (copy && frames)
		err = flame__parse_folded(copy, frames, (int)max, &fo);
	if (!err)
		err = flame__add_diff(f, frames, fo.nframes, fo.value_a,
				      fo.value_b);
	free(frames);
	free(copy);
	return err;
}

struct pframe {
	char title[1024];	/* as written: XML-escaped */
	char text[1024];
	double x, w;
	int y, h;
	int rgb[3];
};

#define MAX_PFRAMES 64

struct parsed {
	struct pframe f[MAX_PFRAMES];
	int n;
	int width, height;
};

static char *render(struct flame *f, const struct flame_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert_not_null(out);
	cr_assert_eq(flame__write_svg(f, o, out), 0);
	fclose(out);
	return buf;
}

static struct flame *from_folded(const char *const *lines, int n)
{
	struct flame *f;
	int i;

	cr_assert_eq(flame__new(&f), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(flame__add_folded(f, lines[i]), 0, "line %s", lines[i]);
	return f;
}

/* Copy the text between from and the next `end` into dst. */
static const char *copy_until(const char *from, const char *end, char *dst,
			      size_t cap)
{
	const char *e = strstr(from, end);
	size_t n;

	cr_assert_not_null(e, "no %s after %.40s", end, from);
	n = (size_t)(e - from);
	cr_assert_lt(n, cap);
	memcpy(dst, from, n);
	dst[n] = '\0';
	return e + strlen(end);
}

static double attr(const char *tag, const char *name)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(tag, key);
	cr_assert_not_null(p, "no %s in %.80s", name, tag);
	return strtod(p + strlen(key), NULL);
}

static void parse_frame(const char *g, struct pframe *pf)
{
	char rect[512];
	const char *p, *fill;

	p = copy_until(strstr(g, "<title>") + 7, "</title>", pf->title,
		       sizeof(pf->title));
	cr_assert(!strncmp(p, "<rect", 5));
	p = copy_until(p, "/>", rect, sizeof(rect));
	pf->x = attr(rect, "x");
	pf->w = attr(rect, "width");
	pf->y = (int)attr(rect, "y");
	pf->h = (int)attr(rect, "height");
	fill = strstr(rect, "fill=\"rgb(");
	cr_assert_not_null(fill);
	cr_assert_eq(sscanf(fill, "fill=\"rgb(%d,%d,%d)", &pf->rgb[0],
			    &pf->rgb[1], &pf->rgb[2]), 3);
	p = strchr(strstr(p, "<text"), '>') + 1;
	copy_until(p, "</text>", pf->text, sizeof(pf->text));
}

static void parse_svg(const char *svg, struct parsed *ps)
{
	const char *p = svg, *s = strstr(svg, "<svg ");

	cr_assert_not_null(s);
	ps->width = (int)attr(s, "width");
	ps->height = (int)attr(s, "height");
	ps->n = 0;
	while ((p = strstr(p, "<g class=\"f\">"))) {
		cr_assert_lt(ps->n, MAX_PFRAMES);
		parse_frame(p, &ps->f[ps->n++]);
		p++;
	}
}

/* The frame whose title starts with "name (". */
static const struct pframe *find(const struct parsed *ps, const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; i < ps->n; i++)
		if (!strncmp(ps->f[i].title, name, len) &&
		    !strncmp(ps->f[i].title + len, " (", 2))
			return &ps->f[i];
	cr_assert_fail("no frame %s", name);
	return NULL;
}

static int count_named(const struct parsed *ps, const char *name)
{
	size_t len = strlen(name);
	int i, n = 0;

	for (i = 0; i < ps->n; i++)
		n += !strncmp(ps->f[i].title, name, len) &&
		     !strncmp(ps->f[i].title + len, " (", 2);
	return n;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fputs(text, f) >= 0, true);
	cr_assert_eq(fclose(f), 0);
}


/* xmllint --noout: well-formed XML, any byte in the input notwithstanding.
 * Frees svg. Called last in a test: without xmllint the test is skipped,
 * visibly, after every other check of it has run. */
static void assert_xml_valid(char *svg)
{
	char path[] = "/tmp/stkrec-flame-xml-XXXXXX", cmd[128];
	int fd = mkstemp(path), rc;

	cr_assert_geq(fd, 0);
	close(fd);
	write_file(path, svg);
	free(svg);
	if (!e2e_have("xmllint")) {
		unlink(path);
		cr_skip_test("checking the SVG is well-formed needs xmllint (libxml2-utils)");
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	rc = system(cmd);
	unlink(path);
	cr_assert_eq(rc, 0, "xmllint rejected the SVG");
}

/* ---- tree and geometry ------------------------------------------------- */

static const char *const tree[] = {
	"main;b;y 20", "main;a;x 30", "main;b;y 10", "main;a 10",
	"main 10", "other 20",
};

Test(flame_geometry, widths_order_merge_total)
{
	struct flame_opts o = { .width = 1020 };	/* 1000 px for 100 */
	struct flame *f = from_folded(tree, 6);
	struct parsed ps;
	char *svg = render(f, &o);

	parse_svg(svg, &ps);
	cr_expect_eq(flame__total(f), 100);
	cr_expect_eq(flame__nodes(f), 6);
	cr_assert_eq(ps.n, 7, "all + 6 distinct frames, y merged");
	cr_expect_eq(count_named(&ps, "y"), 1);
	cr_expect_str_eq(find(&ps, "all")->title, "all (100 samples, 100.00%)");
	cr_expect_str_eq(find(&ps, "y")->title, "y (30 samples, 30.00%)");
	/* name, x, width: 10 px per sample, alphabetical, children at left */
	static const struct { const char *n; double x, w; int depth; } want[] = {
		{ "all", 10, 1000, 0 }, { "main", 10, 800, 1 },
		{ "other", 810, 200, 1 }, { "a", 10, 400, 2 },
		{ "b", 410, 300, 2 }, { "x", 10, 300, 3 }, { "y", 410, 300, 3 },
	};
	cr_expect_eq(ps.height, 36 + 4 * 16 + 34);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct pframe *p = find(&ps, want[i].n);

		cr_expect_float_eq(p->x, want[i].x, 1e-9, "%s x", want[i].n);
		cr_expect_float_eq(p->w, want[i].w, 1e-9, "%s w", want[i].n);
		cr_expect_eq(p->y, ps.height - 34 - (want[i].depth + 1) * 16 + 1,
			     "%s y", want[i].n);
		cr_expect_eq(p->h, 15);
		cr_expect_str_eq(p->text, want[i].n);
	}
	free(svg);
	flame__free(f);
}

Test(flame_geometry, icicle_flips_y)
{
	struct flame_opts o = { .width = 1020, .icicle = true };
	struct flame *f = from_folded(tree, 6);
	struct parsed ps;
	char *svg = render(f, &o);

	parse_svg(svg, &ps);
	cr_expect_eq(find(&ps, "all")->y, 36);
	cr_expect_eq(find(&ps, "main")->y, 36 + 16);
	cr_expect_eq(find(&ps, "b")->y, 36 + 32);
	cr_expect_eq(find(&ps, "y")->y, 36 + 48);
	cr_expect_float_eq(find(&ps, "y")->x, 410, 1e-9);
	cr_expect(strstr(svg, "icicle: true") != NULL);
	free(svg);
	flame__free(f);
}

Test(flame_geometry, subtitle_and_title)
{
	struct flame_opts o = { .title = "Off-CPU Time", .unit = "us",
				.subtitle = "host db1, 10 s, 1234 events" };
	struct flame *f = from_folded(tree, 6);
	struct parsed ps;
	char *svg = render(f, &o);

	parse_svg(svg, &ps);
	cr_expect(strstr(svg, ">Off-CPU Time</text>") != NULL);
	cr_expect(strstr(svg, ">host db1, 10 s, 1234 events</text>") != NULL);
	cr_expect_str_eq(find(&ps, "all")->title, "all (100 us, 100.00%)");
	cr_expect_eq(ps.height, 36 + 24 + 4 * 16 + 34);
	cr_expect_eq(ps.width, 1200, "default width");
	free(svg);
	flame__free(f);
}

Test(flame_geometry, narrow_frames_omitted)
{
	const char *big[] = { "main", "hot" }, *tiny[] = { "main", "cold", "deeper", "deepest" };
	struct flame_opts o = { 0 };
	struct flame *f;
	struct parsed ps;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, big, 2, 1000000), 0);
	cr_assert_eq(flame__add(f, tiny, 4, 1), 0);	/* 0.0012 px */
	svg = render(f, &o);
	parse_svg(svg, &ps);
	cr_expect_eq(ps.n, 3, "all, main, hot");
	cr_expect_null(strstr(svg, "cold"));
	cr_expect_null(strstr(svg, "deepest"));
	cr_expect_eq(ps.height, 36 + 3 * 16 + 34, "depth of drawn frames only");
	free(svg);
	flame__free(f);
}

Test(flame_geometry, big_values_scale)
{
	const char *s[] = { "a" }, *t[] = { "b" };
	struct flame_opts o = { .width = 1020 };
	struct flame *f;
	struct parsed ps;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, s, 1, UINT64_MAX / 4), 0);
	cr_assert_eq(flame__add(f, t, 1, UINT64_MAX / 4 * 3), 0);
	svg = render(f, &o);
	parse_svg(svg, &ps);
	cr_expect_float_eq(find(&ps, "a")->w, 250, 1e-9);
	cr_expect_float_eq(find(&ps, "b")->x, 260, 1e-9);
	free(svg);
	flame__free(f);
}

Test(flame_geometry, empty_graph_is_valid)
{
	struct flame_opts o = { .title = "nothing" };
	struct flame *f;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	svg = render(f, &o);
	cr_expect(strstr(svg, "No data") != NULL);
	cr_expect_null(strstr(svg, "<g class=\"f\">"));
	flame__free(f);
	assert_xml_valid(svg);
}

/* ---- escaping and truncation ------------------------------------------- */

Test(flame_xml, hostile_names_escaped)
{
	const char *s[] = { "<script>&\"'", "bad\xff\xfe utf8 \xc3(", "ctl\x01\x7f",
			    "caf\xc3\xa9 \xe2\x82\xac ok", "]]><x/>" };
	struct flame_opts o = { .title = "<b>&title", .subtitle = "\"sub\" 'x'",
				.unit = "<us>" };
	struct flame *f;
	struct parsed ps;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, s, 5, 7), 0);
	svg = render(f, &o);
	parse_svg(svg, &ps);
	cr_expect_null(strstr(svg, "<script>&"));
	cr_expect_null(strstr(svg, "<b>"));
	cr_expect_str_eq(find(&ps, "&lt;script&gt;&amp;&quot;&apos;")->text,
			 "&lt;script&gt;&amp;&quot;&apos;");
	/* each bad byte becomes one U+FFFD; valid UTF-8 passes through */
	find(&ps, "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd(");
	find(&ps, "ctl\xef\xbf\xbd\xef\xbf\xbd");
	find(&ps, "caf\xc3\xa9 \xe2\x82\xac ok");
	find(&ps, "]]&gt;&lt;x/&gt;");
	cr_expect(strstr(svg, ">&lt;b&gt;&amp;title</text>") != NULL);
	cr_expect(strstr(svg, ">&quot;sub&quot; &apos;x&apos;</text>") != NULL);
	cr_expect(strstr(svg, "(7 &lt;us&gt;, 100.00%)") != NULL);
	flame__free(f);
	assert_xml_valid(svg);
}

/* Code points in s (valid UTF-8). */
static size_t cps(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

Test(flame_xml, long_names_truncated)
{
	char name[401], wide[2 * 150 + 1];
	const char *s[] = { "main", name, wide }, *rest[] = { "zzz" };
	struct flame_opts o = { .width = 1020 };
	struct flame *f;
	struct parsed ps;
	const struct pframe *p, *q;
	char *svg;
	int i;

	memset(name, 'n', 400);
	name[400] = '\0';
	for (i = 0; i < 150; i++)	/* "é" x 150: 2 bytes, 1 char each */
		memcpy(wide + 2 * i, "\xc3\xa9", 2);
	wide[300] = '\0';
	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, s, 3, 20), 0);
	cr_assert_eq(flame__add(f, rest, 1, 80), 0);	/* s: 200 px wide */
	svg = render(f, &o);
	parse_svg(svg, &ps);
	p = find(&ps, name);		/* the title keeps the whole name */
	q = find(&ps, wide);
	cr_assert_float_eq(p->w, 200, 1e-9);
	/* floor((200 - 6) / (12 * 0.59)) = 27 characters, 2 of them ".." */
	cr_expect_eq(strlen(p->text), 27);
	cr_expect_eq(strncmp(p->text, name, 25), 0);
	cr_expect_str_eq(p->text + 25, "..");
	cr_expect_eq(cps(q->text), 27, "cut on characters, not bytes");
	cr_expect_eq(strncmp(q->text, wide, 50), 0);
	cr_expect_str_eq(q->text + 50, "..");
	cr_expect_str_eq(find(&ps, "main")->text, "main");
	flame__free(f);
	assert_xml_valid(svg);
}

Test(flame_xml, too_narrow_for_a_label)
{
	const char *a[] = { "abcdef" }, *b[] = { "big" };
	struct flame_opts o = { .width = 1020 };
	struct flame *f;
	struct parsed ps;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, a, 1, 2), 0);	/* 20 px: 1 char fits */
	cr_assert_eq(flame__add(f, b, 1, 98), 0);
	svg = render(f, &o);
	parse_svg(svg, &ps);
	cr_expect_str_eq(find(&ps, "abcdef")->text, "");
	free(svg);
	flame__free(f);
}

/* ---- colours ------------------------------------------------------------- */

static void colours_of(enum flame_palette pal, const char *name,
		       int rgb[3])
{
	const char *s[] = { "main", name };
	struct flame_opts o = { .palette = pal };
	struct flame *f;
	struct parsed ps;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, s, 2, 5), 0);
	cr_assert_eq(flame__add(f, s, 1, 3), 0);
	svg = render(f, &o);
	parse_svg(svg, &ps);
	memcpy(rgb, find(&ps, name)->rgb, 3 * sizeof(int));
	free(svg);
	flame__free(f);
}

Test(flame_colour, palettes_by_kind_and_deterministic)
{
	static const char *const names[] = { "schedule", "memcpy", "do_sys_poll",
					     "blk_mq_submit_bio", "x", "main" };
	int a[3], b[3], differ = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		colours_of(FLAME_HOT, names[i], a);
		cr_expect(a[0] >= 205 && a[1] <= 230 && a[2] <= 55,
			  "warm %s: %d,%d,%d", names[i], a[0], a[1], a[2]);
		colours_of(FLAME_BLUE, names[i], a);
		cr_expect(a[2] >= 190 && a[0] == a[1] && a[0] < a[2],
			  "blue %s", names[i]);
		colours_of(FLAME_IO, names[i], a);
		cr_expect(a[1] > a[0] && a[1] > a[2], "green %s", names[i]);
		colours_of(FLAME_HOT, names[i], a);
		colours_of(FLAME_HOT, names[i], b);
		cr_expect_arr_eq(a, b, sizeof(a), "same name, same colour");
		colours_of(FLAME_HOT, names[0], b);
		differ += memcmp(a, b, sizeof(a)) != 0;
	}
	cr_expect_geq(differ, 4, "names spread over the palette");
}

Test(flame_colour, annotated_frames_in_cpu_graphs)
{
	int k[3], j[3], i[3], u[3];

	colours_of(FLAME_HOT, "do_syscall_64_[k]", k);
	cr_expect(k[2] == 0 && k[0] - k[1] == 100, "kernel orange");
	colours_of(FLAME_HOT, "Interpreter_[j]", j);
	cr_expect(j[1] > 200 && j[0] == j[2], "JIT green");
	colours_of(FLAME_HOT, "inlined_[i]", i);
	cr_expect(i[1] == i[2] && i[0] < i[1], "inline aqua");
	colours_of(FLAME_HOT, "user_[x]", u);
	cr_expect(u[0] >= 205, "other suffixes stay warm");
	colours_of(FLAME_BLUE, "schedule_[k]", u);
	cr_expect(u[2] >= 190 && u[0] == u[1], "off-CPU keeps its blues");
}

Test(flame_colour, diff_red_grew_blue_shrank)
{
	const char *grow[] = { "main", "grow" }, *shrink[] = { "main", "shrink" },
		   *same[] = { "main", "same" };
	struct flame_opts o = { .palette = FLAME_DIFF, .width = 1020 };
	struct flame *f;
	struct parsed ps;
	const struct pframe *p;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add_diff(f, grow, 2, 10, 30), 0);
	cr_assert_eq(flame__add_diff(f, shrink, 2, 30, 10), 0);
	cr_assert_eq(flame__add_diff(f, same, 2, 20, 20), 0);
	cr_assert_eq(flame__add_folded(f, "main;fresh 0 40"), 0);
	svg = render(f, &o);
	parse_svg(svg, &ps);
	p = find(&ps, "grow");
	cr_expect_float_eq(p->w, 300, 1e-9, "width is the after value");
	cr_expect(p->rgb[0] == 255 && p->rgb[1] == 70 && p->rgb[2] == 70,
		  "grew 3x: red 2/3 strong, got %d,%d,%d", p->rgb[0],
		  p->rgb[1], p->rgb[2]);
	cr_expect(strstr(p->title, "; before 10, +200.00%)") != NULL,
		  "%s", p->title);
	p = find(&ps, "shrink");
	cr_expect(p->rgb[2] == 255 && p->rgb[0] == 70 && p->rgb[1] == 70,
		  "shrank: blue");
	cr_expect(strstr(p->title, ", -66.67%)") != NULL, "%s", p->title);
	p = find(&ps, "same");
	cr_expect(p->rgb[0] == p->rgb[1] && p->rgb[1] == p->rgb[2], "grey");
	p = find(&ps, "fresh");
	cr_expect(p->rgb[0] == 255 && p->rgb[1] == 0 && p->rgb[2] == 0);
	cr_expect(strstr(p->title, "before 0, new)") != NULL, "%s", p->title);
	p = find(&ps, "main");	/* 60 -> 100: +40/100 */
	cr_expect(p->rgb[0] == 255 && p->rgb[1] == 126, "main %d", p->rgb[1]);
	flame__free(f);
	assert_xml_valid(svg);
}

/* ---- folded input and errors ---------------------------------------------- */

Test(flame_folded, parse_lines)
{
	const char *fr[8];
	struct flame_folded fo;
	char l1[] = "comm;a;b;c 123\n", l2[] = "comm;x 12 34\r\n", l7[] = "a\tb\t5",
	     l3[] = "a b;c d 7", l4[] = "a;;b; 5", l5[] = "a;b x 5",
	     l6[] = " 9";

	cr_assert_eq(flame__parse_folded(l1, fr, 8, &fo), 0);
	cr_expect_eq(fo.nframes, 4);
	cr_expect_str_eq(fr[0], "comm");
	cr_expect_str_eq(fr[3], "c");
	cr_expect(!fo.diff && fo.value_a == 123 && fo.value_b == 123);
	cr_assert_eq(flame__parse_folded(l2, fr, 8, &fo), 0);
	cr_expect(fo.diff && fo.value_a == 12 && fo.value_b == 34);
	cr_expect_eq(fo.nframes, 2);
	cr_expect_str_eq(fr[1], "x");
	cr_assert_eq(flame__parse_folded(l3, fr, 8, &fo), 0);
	cr_expect_eq(fo.nframes, 2);
	cr_expect_str_eq(fr[0], "a b");
	cr_expect_str_eq(fr[1], "c d");
	cr_assert_eq(flame__parse_folded(l4, fr, 8, &fo), 0);
	cr_expect_eq(fo.nframes, 2, "empty frames skipped");
	cr_expect_str_eq(fr[1], "b");
	cr_assert_eq(flame__parse_folded(l5, fr, 8, &fo), 0);
	cr_expect(!fo.diff && fo.nframes == 2);
	cr_expect_str_eq(fr[1], "b x");
	cr_assert_eq(flame__parse_folded(l6, fr, 8, &fo), 0);
	cr_expect_eq(fo.nframes, 0);
	cr_expect_eq(fo.value_b, 9);
	cr_assert_eq(flame__parse_folded(l7, fr, 8, &fo), 0);
	cr_expect_str_eq(fr[0], "a\tb", "blanks inside frames kept");
	cr_expect_eq(fo.value_b, 5);
}

Test(flame_folded, bad_lines)
{
	const char *fr[2];
	struct flame_folded fo;
	char nocount[] = "a;b", word[] = "a;b many", neg[] = "a -5",
	     huge[] = "a 18446744073709551616", deep[] = "a;b;c 1",
	     alone[] = "123", empty[] = "";

	cr_expect_eq(flame__parse_folded(nocount, fr, 2, &fo), -EINVAL);
	cr_expect_eq(flame__parse_folded(word, fr, 2, &fo), -EINVAL);
	cr_expect_eq(flame__parse_folded(neg, fr, 2, &fo), -EINVAL);
	cr_expect_eq(flame__parse_folded(huge, fr, 2, &fo), -ERANGE);
	cr_expect_eq(flame__parse_folded(deep, fr, 2, &fo), -E2BIG);
	cr_expect_eq(flame__parse_folded(alone, fr, 2, &fo), -EINVAL);
	cr_expect_eq(flame__parse_folded(empty, fr, 2, &fo), -EINVAL);
}

Test(flame_folded, add_folded_builds_tree)
{
	static const char *const lines[] = { "p;f;g 3", "p;f 2\n", "p;f;g 4" };
	struct flame *f = from_folded(lines, 3);

	cr_expect_eq(flame__total(f), 9);
	cr_expect_eq(flame__nodes(f), 3);
	cr_expect_eq(flame__add_folded(f, "no count"), -EINVAL);
	cr_expect_eq(flame__total(f), 9);

	/* depth counts frames, not separators */
	size_t cap = 3 * FLAME_MAX_DEPTH + 16;
	char *line = calloc(1, cap);

	cr_assert_not_null(line);
	for (int i = 0; i < FLAME_MAX_DEPTH; i++)
		strcat(line, "q;;");
	strcat(line, " 1");
	cr_expect_eq(flame__add_folded(f, line), 0);
	strcpy(line + strlen(line) - 2, "r 1");
	cr_expect_eq(flame__add_folded(f, line), -E2BIG);
	cr_expect_eq(flame__total(f), 10);
	free(line);
	flame__free(f);
}

Test(flame_api, argument_errors)
{
	const char *ok[] = { "a", "b" }, *hole[] = { "a", NULL };
	const char **deep = calloc(FLAME_MAX_DEPTH + 1, sizeof(*deep));
	struct flame *f;

	cr_assert_not_null(deep);
	for (int i = 0; i <= FLAME_MAX_DEPTH; i++)
		deep[i] = "r";
	cr_assert_eq(flame__new(&f), 0);
	cr_expect_eq(flame__add(f, hole, 2, 1), -EINVAL);
	cr_expect_eq(flame__add(f, ok, -1, 1), -EINVAL);
	cr_expect_eq(flame__add(NULL, ok, 2, 1), -EINVAL);
	cr_expect_eq(flame__add(f, deep, FLAME_MAX_DEPTH + 1, 1), -E2BIG);
	cr_expect_eq(flame__add(f, ok, 2, UINT64_MAX), 0);
	cr_expect_eq(flame__add(f, ok, 2, 1), -EOVERFLOW);
	cr_expect_eq(flame__total(f), UINT64_MAX, "failed adds change nothing");
	cr_expect_eq(flame__write_svg(f, NULL, stdout), -EINVAL);
	cr_expect_eq(flame__new(NULL), -EINVAL);
	flame__free(f);
	flame__free(NULL);
	free(deep);
}

Test(flame_api, deepest_stack_renders_and_frees)
{
	const char **deep = calloc(FLAME_MAX_DEPTH, sizeof(*deep));
	struct flame_opts o = { .icicle = true };
	struct flame *f;
	char *svg;

	cr_assert_not_null(deep);
	for (int i = 0; i < FLAME_MAX_DEPTH; i++)
		deep[i] = i % 2 ? "odd" : "even";
	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add(f, deep, FLAME_MAX_DEPTH, 10), 0);
	cr_assert_eq(flame__add(f, deep, FLAME_MAX_DEPTH / 2, 10), 0);
	cr_expect_eq(flame__nodes(f), FLAME_MAX_DEPTH);
	svg = render(f, &o);
	cr_expect(strstr(svg, "</svg>\n") != NULL);
	free(svg);
	flame__free(f);
	free(deep);
}

Test(flame_api, write_error_reported)
{
	struct flame_opts o = { 0 };
	struct flame *f = from_folded(tree, 6);
	FILE *ro = fopen("/dev/null", "r");

	cr_assert_not_null(ro);
	cr_expect_eq(flame__write_svg(f, &o, ro), -EIO);
	fclose(ro);
	flame__free(f);
}

Test(flame_api, static_without_script)
{
	struct flame_opts o = { 0 };
	struct flame *f = from_folded(tree, 6);
	struct parsed ps;
	char *svg = render(f, &o);

	parse_svg(svg, &ps);
	/* controls that need the script stay hidden until it runs */
	cr_expect(strstr(svg, "<text id=\"unzoom\" class=\"hide\"") != NULL);
	cr_expect(strstr(svg, "<text id=\"search\" class=\"hide\"") != NULL);
	cr_expect(strstr(svg, ".hide, .hidden { display: none; }") != NULL);
	cr_expect_eq(count(svg, "http"), 1, "no URL but the SVG namespace");
	cr_expect_null(strstr(svg, "href"));
	cr_expect_eq(ps.n, 7, "every frame has a <title> tooltip");
	free(svg);
	flame__free(f);
}

/* ---- a real browser -------------------------------------------------------- */


static const char *const sample[] = {
	"myapp;main;parse_config;read_file;__libc_read 120",
	"myapp;main;parse_config;strtol 15",
	"myapp;main;run_loop;process_request;handle_http_request_with_a_really_long_function_name_that_goes_on_and_on 300",
	"myapp;main;run_loop;process_request;compress_payload;deflate;longest_match 220",
	"myapp;main;run_loop;process_request;compress_payload;deflate;fill_window 80",
	"myapp;main;run_loop;poll_events;epoll_wait 60",
	"myapp;main;run_loop;std::vector<std::pair<int, std::string>>::push_back(x&y) 40",
	"myapp;main;shutdown 5",
	"kworker/0:1;worker_thread;process_one_work;flush_to_ldisc 50",
	"kworker/0:1;worker_thread;schedule 10",
};

static void run_check(const char *svg_text, const char *args)
{
	const char *dir = e2e_browser_dir();
	char tmp[] = "/tmp/stkrec-flame-XXXXXX";
	char svg[64], png[64];
	int rc;

	cr_assert_not_null(mkdtemp(tmp));
	snprintf(svg, sizeof(svg), "%s/flame.svg", tmp);
	snprintf(png, sizeof(png), "%s/flame.png", tmp);
	write_file(svg, svg_text);
	rc = e2e_shell("node '%s/flame_check.js' %s %s %s > %s/log 2>&1",
		       dir, svg, png, args, tmp);
	if (rc != 0)
		e2e_shell("cat %s/log", tmp);	/* show the failed checks */
	cr_assert_eq(rc, 0, "browser checks failed; files in %s", tmp);
	cr_expect_eq(access(png, R_OK), 0, "screenshot written");
	e2e_shell("rm -rf %s", tmp);
}

Test(flame_browser, hover_zoom_search_in_chromium, .timeout = 180)
{
	struct flame_opts o = { .title = "CPU Flame Graph",
				.subtitle = "host test, 10 s, 900 samples" };
	struct flame *f = from_folded(sample, 10);
	char *svg = render(f, &o);

	run_check(svg, "--expect myapp --expect longest_match --expect epoll_wait"
		  " --click run_loop --search 'deflate|long'");
	free(svg);
	flame__free(f);
}

Test(flame_browser, icicle_diff_in_chromium, .timeout = 180)
{
	struct flame_opts o = { .title = "Differential", .icicle = true,
				.palette = FLAME_DIFF, .unit = "us" };
	struct flame *f;
	char *svg;

	cr_assert_eq(flame__new(&f), 0);
	cr_assert_eq(flame__add_folded(f, "app;work;compute 100 300"), 0);
	cr_assert_eq(flame__add_folded(f, "app;work;wait 300 100"), 0);
	cr_assert_eq(flame__add_folded(f, "app;idle 50 50"), 0);
	svg = render(f, &o);
	run_check(svg, "--expect compute --expect wait --click work"
		  " --search '^(compute|idle)$'");
	free(svg);
	flame__free(f);
}
