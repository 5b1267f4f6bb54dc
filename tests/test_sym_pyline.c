// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sym_pyline(): CPython's line of a bytecode offset. Against each
 * interpreter present (tests/workloads/py/linetable_dump.py: every code
 * object of a set of tricky sources, the line of each instruction as
 * PyCode_Addr2Line() gives it, and real tracebacks' and frames' lines);
 * against tables made by hand for each format; and on hostile tables, each
 * decoded at the end of a page followed by an unmapped one, so that a read
 * past the table faults.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sym/sym.h"
#include "tests/reliability_run.h"
#include "tests/util_python.h"

#define GUARD_CAP (256 << 10)

static const unsigned int versions[] = {
	SYM_PYVER(3, 8),  SYM_PYVER(3, 9),  SYM_PYVER(3, 10),
	SYM_PYVER(3, 11), SYM_PYVER(3, 12), SYM_PYVER(3, 13),
};
#define NVERSIONS (sizeof(versions) / sizeof(versions[0]))

/* len bytes of t copied to end where an unmapped page begins. */
static const uint8_t *guarded(const uint8_t *t, size_t len)
{
	static uint8_t *end;

	if (!end) {
		uint8_t *m = mmap(NULL, GUARD_CAP + 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		cr_assert_neq(m, MAP_FAILED);
		end = m + GUARD_CAP;
		cr_assert_eq(mprotect(end, 4096, PROT_NONE), 0);
	}
	cr_assert_leq(len, GUARD_CAP);
	if (len)
		memcpy(end - len, t, len);
	return end - len;
}

/* sym_pyline() on a guarded copy of the table. */
static int pyline(unsigned int v, const uint8_t *t, size_t len, int first, int off, int *line)
{
	return sym_pyline(v, guarded(t, len), len, first, off, line);
}

/* Any table, any offset: a line, no line or a named refusal. */
static void assert_sane(unsigned int v, const uint8_t *t, size_t len, int first, int off)
{
	int line = INT_MIN, ret = pyline(v, t, len, first, off, &line);

	cr_assert(ret == 0 || ret == SYM_PYLINE_NONE || ret == -ENOEXEC || ret == -ERANGE,
		  "version %#x, %zu bytes, offset %d: %d", v, len, off, ret);
	if (ret == 0)
		cr_assert_geq(line, 0);
	if (ret == SYM_PYLINE_NONE)
		cr_assert_eq(line, -1);
}

/* The line of each offset 0, 2, ... of a table: want[k] for offset 2k,
 * -1 where there is none, 0 past the code (-ERANGE). */
static void expect_lines(unsigned int v, const uint8_t *t, size_t len, int first,
			 const int *want, int n)
{
	int k, line;

	for (k = 0; k < n; k++) {
		int ret = pyline(v, t, len, first, 2 * k, &line);

		if (want[k] == 0) {
			cr_assert_eq(ret, -ERANGE, "offset %d: %d", 2 * k, ret);
		} else if (want[k] < 0) {
			cr_assert_eq(ret, SYM_PYLINE_NONE, "offset %d: %d", 2 * k, ret);
			cr_assert_eq(line, -1);
		} else {
			cr_assert_eq(ret, 0, "offset %d: %d", 2 * k, ret);
			cr_assert_eq(line, want[k], "offset %d: line %d, want %d", 2 * k, line,
				     want[k]);
		}
	}
}

TestSuite(sym_pyline, .timeout = 120);

Test(sym_pyline, lnotab_by_hand)
{
	/* 3 units on line 10, 4 on 11 (a pair of 0 bytes adding 1), back
	 * 2, then 300 lines on (pairs of 127, 127, 46): lnotab_notes.txt */
	static const uint8_t t[] = { 6, 0, 0, 1, 8, 0xfe, 4, 127, 0, 127, 0, 46 };
	static const int want[] = { 10, 10, 10, 11, 11, 11, 11, 9, 9, 309, 309 };
	int line;

	expect_lines(SYM_PYVER(3, 8), t, sizeof(t), 10, want, 11);
	expect_lines(SYM_PYVER(3, 9), t, sizeof(t), 10, want, 11);
	/* past the table: its last line; not started: the first */
	cr_assert_eq(pyline(SYM_PYVER(3, 8), t, sizeof(t), 10, 1000, &line), 0);
	cr_assert_eq(line, 309);
	cr_assert_eq(pyline(SYM_PYVER(3, 8), t, sizeof(t), 10, -1, &line), 0);
	cr_assert_eq(line, 10);
	cr_assert_eq(pyline(SYM_PYVER(3, 8), NULL, 0, 10, 40, &line), 0);
	cr_assert_eq(line, 10);
}

Test(sym_pyline, linetable_310_by_hand)
{
	/* 3 units on 11, 2 with no line (-128), 2 on 13, a zero-width pair
	 * of +127 then 1 unit on 140 */
	static const uint8_t t[] = { 6, 1, 4, 0x80, 4, 2, 0, 127, 2, 0 };
	static const int want[] = { 11, 11, 11, -1, -1, 13, 13, 140, 0 };
	int line;

	expect_lines(SYM_PYVER(3, 10), t, sizeof(t), 10, want, 9);
	cr_assert_eq(pyline(SYM_PYVER(3, 10), t, sizeof(t), 10, -2, &line), 0);
	cr_assert_eq(line, 10);
	cr_assert_eq(pyline(SYM_PYVER(3, 10), NULL, 0, 10, 0, &line), -ERANGE);
}

Test(sym_pyline, location_table_by_hand)
{
	static const uint8_t t[] = {
		0xe9, 0x06,                   /* no columns, 2 units, +3: 23 */
		0xd8, 1, 5,                   /* one line (+1), 1 unit: 24 */
		0xf8,                         /* none, 1 unit */
		0xf1, 0x05, 0x00, 0x01, 0x01, /* long, 2 units, -2: 22 */
		0x80, 0x03,                   /* short form, 1 unit: 22 */
		0xe8, 0x40, 0x75, 0x30,       /* no columns, +100000 (3 bytes) */
	};
	static const int want[] = { 23, 23, 24, -1, 22, 22, 22, 100022, 0 };
	size_t v;

	for (v = 3; v < NVERSIONS; v++)
		expect_lines(versions[v], t, sizeof(t), 20, want, 9);
}

Test(sym_pyline, unknown_versions_and_bad_arguments)
{
	static const uint8_t t[] = { 2, 1 };
	static const unsigned int bad[] = { SYM_PYVER(2, 7), SYM_PYVER(3, 7), SYM_PYVER(3, 14),
					    SYM_PYVER(4, 0), 0, ~0u };
	int line;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(sym_pyline(bad[i], t, 2, 1, 0, &line), -EINVAL, "%#x", bad[i]);
	cr_assert_eq(sym_pyline(SYM_PYVER(3, 11), NULL, 2, 1, 0, &line), -EINVAL);
	cr_assert_eq(sym_pyline(SYM_PYVER(3, 11), t, 2, 1, 0, NULL), -EINVAL);
	for (i = 0; i < NVERSIONS; i++)
		cr_assert_eq(sym_pyline(versions[i], t, 2, -5, 0, &line), -ENOEXEC);
}

Test(sym_pyline, malformed_tables_refused)
{
	static const uint8_t odd[] = { 2, 1, 4 };
	static const uint8_t no_entry[] = { 0x06, 0x80 };      /* bit 7 clear */
	static const uint8_t cut_varint[] = { 0xe8, 0x41 };    /* continues at the end */
	static const uint8_t into_next[] = { 0xe8, 0x41, 0x80 }; /* into the next entry */
	static const uint8_t long_varint[] = { 0xe8, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	static const uint8_t negative[] = { 2, 0x85 };         /* 10 - 123 */
	uint8_t big[8] = { 0xe8, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03 }; /* +2^31 - 1 */
	int line;
	size_t v;

	for (v = 0; v < 3; v++)
		cr_assert_eq(pyline(versions[v], odd, 3, 1, 4, &line), -ENOEXEC);
	cr_assert_eq(pyline(SYM_PYVER(3, 8), negative, 2, 10, 4, &line), -ENOEXEC);
	cr_assert_eq(pyline(SYM_PYVER(3, 10), negative, 2, 10, 0, &line), -ENOEXEC);
	for (v = 3; v < NVERSIONS; v++) {
		cr_assert_eq(pyline(versions[v], no_entry, 2, 1, 0, &line), -ENOEXEC);
		cr_assert_eq(pyline(versions[v], cut_varint, 2, 1, 0, &line), -ENOEXEC);
		cr_assert_eq(pyline(versions[v], into_next, 3, 1, 0, &line), -ENOEXEC);
		cr_assert_eq(pyline(versions[v], long_varint, 8, 1, 0, &line), -ENOEXEC);
		cr_assert_eq(pyline(versions[v], big, 7, 0, 0, &line), 0);
		cr_assert_eq(line, INT_MAX);
		cr_assert_eq(pyline(versions[v], big, 7, 1, 0, &line), -ENOEXEC);
	}
}

/* Tables no compiler wrote: empty, all 0xff, all 0x80, huge deltas and
 * random bytes, every offset up to past their code. */
Test(sym_pyline, hostile_tables_never_crash)
{
	static uint8_t t[4096];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t v, len, i;
	int off, n;

	for (v = 0; v < NVERSIONS; v++) {
		for (len = 0; len <= 300; len += 3) {
			memset(t, 0xff, len);
			for (off = -3; off < (int)len * 16 + 4; off += 5)
				assert_sane(versions[v], t, len, 7, off);
			memset(t, 0x80, len);
			for (off = -3; off < (int)len * 16 + 4; off += 5)
				assert_sane(versions[v], t, len, INT_MAX, off);
		}
		for (n = 0; n < 3000; n++) {
			len = (x >> 7) % 64;
			for (i = 0; i < len; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				t[i] = x >> 24;
			}
			for (off = -1; off < 600; off += 3)
				assert_sane(versions[v], t, len, n, off);
		}
		memset(t, 0x7f, sizeof(t)); /* +127 a pair, or 0x7f continuations */
		assert_sane(versions[v], t, sizeof(t), INT_MAX - 10, INT_MAX);
	}
}

/* ---- against the interpreters --------------------------------------- */

struct pycode {
	int first, nbytes;
	uint8_t *table;
	size_t len;
	int *lines; /* a code unit's line, -1: none */
	int nlines;
};

struct pydump {
	unsigned int version;
	struct pycode code[256];
	int ncode, nframes, none_units, max_line;
};

static uint8_t *unhex(const char *s, size_t *len)
{
	size_t n = strcmp(s, "-") ? strlen(s) / 2 : 0, i;
	uint8_t *b = malloc(n + 1);

	cr_assert_not_null(b);
	for (i = 0; i < n; i++)
		cr_assert_eq(sscanf(s + 2 * i, "%2hhx", &b[i]), 1, "hex: %s", s);
	*len = n;
	return b;
}

/* "- 5 6 ..." (a word a code unit) into c->lines. */
static void parse_lines(struct pydump *d, struct pycode *c, char *s)
{
	char *tok, *save;

	c->lines = calloc(c->nbytes / 2 + 1, sizeof(int));
	cr_assert_not_null(c->lines);
	for (tok = strtok_r(s, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int l = strcmp(tok, "-") ? atoi(tok) : -1;

		cr_assert_lt(c->nlines, c->nbytes / 2 + 1);
		c->lines[c->nlines++] = l;
		d->none_units += l < 0;
		d->max_line = l > d->max_line ? l : d->max_line;
	}
	cr_assert_eq(c->nlines, c->nbytes / 2);
}

/* A frame's line: the one a traceback printed, or none ("-"). */
static void check_frame(struct pydump *d, int id, int off, const char *shown)
{
	struct pycode *c = &d->code[id];
	int line = INT_MIN, ret;

	cr_assert(id >= 0 && id < d->ncode);
	ret = pyline(d->version, c->table, c->len, c->first, off, &line);
	if (!strcmp(shown, "-"))
		cr_assert_eq(ret, SYM_PYLINE_NONE, "code %d at %d: %d", id, off, ret);
	else
		cr_assert(ret == 0 && line == atoi(shown),
			  "code %d at %d: traceback's line %s, sym_pyline %d line %d", id, off,
			  shown, ret, line);
	d->nframes++;
}

static void parse_dump(struct pydump *d, char *text)
{
	char *ln, *save, word[16], hex[65536], *rest;
	int a, b, n, id;

	for (ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		if (sscanf(ln, "version %d %d", &a, &b) == 2) {
			d->version = SYM_PYVER(a, b);
		} else if (sscanf(ln, "code %d %d %d %65535s", &id, &a, &b, hex) == 4) {
			struct pycode *c = &d->code[id];

			cr_assert_eq(id, d->ncode);
			cr_assert_lt(d->ncode, 256);
			d->ncode++;
			c->first = a;
			c->nbytes = b;
			c->table = unhex(hex, &c->len);
		} else if (sscanf(ln, "lines %d %n", &id, &n) == 1) {
			cr_assert(id >= 0 && id < d->ncode);
			rest = ln + n;
			parse_lines(d, &d->code[id], rest);
		} else if (sscanf(ln, "frame %d %d %15s", &id, &a, word) == 3) {
			check_frame(d, id, a, word);
		} else {
			cr_assert_fail("unknown line in the dump: %.80s", ln);
		}
	}
}

/* Every code unit's line as the interpreter gives it; -ERANGE just past
 * the code (3.10+); firstlineno before it. */
static void check_code(const struct pydump *d, const struct pycode *c, int id)
{
	int k, line, ret;

	cr_assert_eq(pyline(d->version, c->table, c->len, c->first, -2, &line), 0);
	cr_assert_eq(line, c->first);
	for (k = 0; k < c->nlines; k++) {
		line = INT_MIN;
		ret = pyline(d->version, c->table, c->len, c->first, 2 * k, &line);
		if (c->lines[k] < 0)
			cr_assert(ret == SYM_PYLINE_NONE && line == -1,
				  "code %d offset %d: want no line, got %d line %d", id, 2 * k, ret,
				  line);
		else
			cr_assert(ret == 0 && line == c->lines[k],
				  "code %d offset %d: want line %d, got %d line %d", id, 2 * k,
				  c->lines[k], ret, line);
	}
	ret = pyline(d->version, c->table, c->len, c->first, c->nbytes, &line);
	if (d->version >= SYM_PYVER(3, 10))
		cr_assert_eq(ret, -ERANGE, "code %d past its %d bytes: %d", id, c->nbytes, ret);
	else
		cr_assert_eq(ret, 0);
}

/* Each real table cut short and with each byte changed, at a few offsets. */
static void check_damaged(const struct pydump *d, const struct pycode *c)
{
	static const uint8_t repl[] = { 0x00, 0x7f, 0x80, 0xff };
	int offs[] = { 0, c->nbytes / 2, c->nbytes - 2, c->nbytes + 64 };
	uint8_t *t = malloc(c->len + 1);
	size_t l, step = c->len > 2048 ? c->len / 512 : 1, r, o;

	cr_assert_not_null(t);
	for (l = 0; l < c->len; l += step)
		for (o = 0; o < 4; o++)
			assert_sane(d->version, c->table, l, c->first, offs[o]);
	for (l = 0; l < c->len; l += step) {
		memcpy(t, c->table, c->len);
		for (r = 0; r < sizeof(repl); r++) {
			t[l] = repl[r];
			for (o = 0; o < 4; o++)
				assert_sane(d->version, t, c->len, c->first, offs[o]);
		}
	}
	free(t);
}

static void against_interpreter(int i)
{
	const struct test_python *p = test_python_or_skip(i);
	char script[PATH_MAX], *argv[] = { (char *)p->path, script, NULL }, *out;
	static struct pydump d;
	struct rl_run r;
	int k;

	snprintf(script, sizeof(script), "%s/tests/workloads/py/linetable_dump.py",
		 rl_env("STKREC_SRCDIR", "."));
	rl_run_all(argv, 100, 0, &r, &out, NULL);
	cr_assert_eq(rl_code(&r), 0, "%s %s: exit %d: %s", p->path, script, rl_code(&r), r.err);
	memset(&d, 0, sizeof(d));
	parse_dump(&d, out);
	cr_assert_eq(d.version, SYM_PYVER(p->major, p->minor), "%s says %#x", p->path, d.version);
	for (k = 0; k < d.ncode; k++) {
		check_code(&d, &d.code[k], k);
		check_damaged(&d, &d.code[k]);
	}
	cr_log_info("%s: %d code objects, %d frames, %d units with no line, lines to %d", p->name,
		    d.ncode, d.nframes, d.none_units, d.max_line);
	/* the sources did reach what they are there for */
	cr_assert_geq(d.ncode, 30);
	cr_assert_geq(d.nframes, 15);
	cr_assert_geq(d.max_line, 1000000);
	if (d.version >= SYM_PYVER(3, 10))
		cr_assert_gt(d.none_units, 0);
	for (k = 0; k < d.ncode; k++) {
		free(d.code[k].table);
		free(d.code[k].lines);
	}
	free(out);
}

TEST_PER_PYTHON(sym_pyline, against_interpreter)
