// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python/'s code object reader on hostile memory: code objects, strings
 * and bytes objects made up in this process's own memory with each
 * interpreter's layout (process_vm_readv reads ourselves), every one of
 * them read back or refused as python.h says; and lasti turned into
 * bytecode offsets, by version.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "python/python.h"
#include "tests/util_python.h"

#define BIAS 0x10000ull /* the types are compared, never read: any bias */
#define CODE_BYTES 20   /* the made-up code objects' bytecode */

struct fake {
	uint8_t code[512], name[512], qual[512], file[512], lt[128], co_code[128];
};

struct ctx {
	const struct test_python *tp;
	struct py_interp *pi;
	const struct py_offsets *o;
	const struct py_addrs *a;
};

static void put64(uint8_t *obj, uint16_t at, uint64_t v)
{
	memcpy(obj + at, &v, 8);
}

static void put32(uint8_t *obj, uint16_t at, uint32_t v)
{
	memcpy(obj + at, &v, 4);
}

/* A str object: kind bytes a character, chars (len of them) copied. */
static void mk_str(const struct ctx *c, uint8_t *obj, const void *chars, int64_t len, int kind,
		   bool ascii, bool compact)
{
	const struct py_offsets *o = c->o;
	uint32_t state = kind << o->u_kind_bit | (uint32_t)compact << o->u_compact_bit |
			 (uint32_t)ascii << o->u_ascii_bit;

	put64(obj, o->ob_type, c->a->unicode_type + BIAS);
	put64(obj, o->u_length, len);
	put32(obj, o->u_state, state);
	if (chars)
		memcpy(obj + (ascii ? o->u_ascii_data : o->u_compact_data), chars, len * kind);
}

static void mk_ascii(const struct ctx *c, uint8_t *obj, const char *s)
{
	mk_str(c, obj, s, strlen(s), 1, true, true);
}

static void mk_bytes(const struct ctx *c, uint8_t *obj, const void *data, int64_t len)
{
	put64(obj, c->o->ob_type, c->a->bytes_type + BIAS);
	put64(obj, c->o->ob_size, len);
	if (data)
		memcpy(obj + c->o->b_sval, data, len);
}

/* Outer.inner (co_name inner) at /srv/app/svc.py:42, 5 bytes of line table. */
static void mk_code(const struct ctx *c, struct fake *f)
{
	const struct py_offsets *o = c->o;

	memset(f, 0, sizeof(*f));
	put64(f->code, o->ob_type, c->a->code_type + BIAS);
	put32(f->code, o->co_firstlineno, 42);
	mk_ascii(c, f->name, "inner");
	put64(f->code, o->co_name, (uintptr_t)f->name);
	if (o->co_qualname != STKREC_PY_NONE) {
		mk_ascii(c, f->qual, "Outer.inner");
		put64(f->code, o->co_qualname, (uintptr_t)f->qual);
	}
	mk_ascii(c, f->file, "/srv/app/svc.py");
	put64(f->code, o->co_filename, (uintptr_t)f->file);
	mk_bytes(c, f->lt, "\x02\x01\x04\x01\x06", 5);
	put64(f->code, o->co_linetable, (uintptr_t)f->lt);
	if (o->co_code != STKREC_PY_NONE) {
		mk_bytes(c, f->co_code, NULL, CODE_BYTES);
		put64(f->code, o->co_code, (uintptr_t)f->co_code);
	} else {
		put64(f->code, o->ob_size, CODE_BYTES / 2);
	}
}

static int rd(const struct ctx *c, const void *code, struct py_code *out)
{
	return py_interp__read_code(c->pi, getpid(), BIAS, (uintptr_t)code, out);
}

static void setup(struct ctx *c, int i)
{
	char path[PATH_MAX], bin[PATH_MAX];
	int err;

	c->tp = test_python_or_skip(i);
	snprintf(path, sizeof(path), "%s", c->tp->path);
	if (!strncmp(c->tp->name, "pyenv", 5)) {
		snprintf(bin, sizeof(bin), "%s", c->tp->path);
		snprintf(path, sizeof(path), "%s/lib/libpython3.%d.so.1.0", dirname(dirname(bin)),
			 c->tp->minor);
	}
	err = py_interp__open(path, NULL, &c->pi, NULL);
	cr_assert_eq(err, 0, "%s: %s", path, strerror(-err));
	c->o = py_interp__offsets(c->pi);
	c->a = py_interp__addrs(c->pi);
}

static int all_pythons[TEST_PYTHONS] = { 0, 1, 2, 3, 4, 5, 6 };

ParameterizedTestParameters(python_code, read_back)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

ParameterizedTest(int *i, python_code, read_back)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct py_code pc;
	struct ctx c;
	int err;

	setup(&c, *i);
	mk_code(&c, f);
	err = rd(&c, f->code, &pc);
	cr_assert_eq(err, 0, "%s: %s", c.tp->name, strerror(-err));
	cr_expect_str_eq(pc.qualname, c.tp->minor >= 11 ? "Outer.inner" : "inner");
	cr_expect_str_eq(pc.filename, "/srv/app/svc.py");
	cr_expect_eq(pc.firstlineno, 42);
	cr_expect_eq(pc.linetable_len, 5);
	cr_expect_arr_eq(pc.linetable, "\x02\x01\x04\x01\x06", 5);
	cr_expect_eq(pc.code_size, CODE_BYTES);
	cr_expect_eq(pc.stamp, stkrec_py_stamp(42, (uintptr_t)f->name));
	cr_expect_eq(pc.stamp & 0xffff, 42);
	py_code__release(&pc);
	cr_expect_null(pc.qualname);
	py_interp__free(c.pi);
	free(f);
}

ParameterizedTestParameters(python_code, utf8)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

/* Latin-1, UCS-2 and UCS-4 file names come out as UTF-8; a lone surrogate
 * as U+FFFD. */
ParameterizedTest(int *i, python_code, utf8)
{
	static const uint8_t latin1[] = { 'c', 'a', 'f', 0xe9 };
	static const uint16_t ucs2[] = { 'f', 0x20ac, 0xd800 };
	static const uint32_t ucs4[] = { 'g', 0x1f600 };
	struct fake *f = calloc(1, sizeof(*f));
	struct py_code pc;
	struct ctx c;

	setup(&c, *i);
	mk_code(&c, f);
	mk_str(&c, f->file, latin1, 4, 1, false, true);
	cr_assert_eq(rd(&c, f->code, &pc), 0);
	cr_expect_str_eq(pc.filename, "caf\xc3\xa9");
	py_code__release(&pc);
	mk_str(&c, f->file, ucs2, 3, 2, false, true);
	cr_assert_eq(rd(&c, f->code, &pc), 0);
	cr_expect_str_eq(pc.filename, "f\xe2\x82\xac\xef\xbf\xbd");
	py_code__release(&pc);
	mk_str(&c, f->file, ucs4, 2, 4, false, true);
	cr_assert_eq(rd(&c, f->code, &pc), 0);
	cr_expect_str_eq(pc.filename, "g\xf0\x9f\x98\x80");
	py_code__release(&pc);
	py_interp__free(c.pi);
	free(f);
}

ParameterizedTestParameters(python_code, hostile)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

/* Each made-up object wrong in one way: refused with its code. */
ParameterizedTest(int *i, python_code, hostile)
{
	struct fake *f = calloc(1, sizeof(*f));
	uint8_t *big = calloc(PY_MAX_STR * 4 + 512, 1);
	uint32_t smiles[PY_MAX_STR];
	struct py_code pc;
	struct ctx c;
	int k;

	setup(&c, *i);
	for (k = 0; k < PY_MAX_STR; k++)
		smiles[k] = 0x1f600;
	/* not a code object: a str where one was expected */
	mk_code(&c, f);
	cr_expect_eq(rd(&c, f->name, &pc), PY_ENOTCODE);
	cr_expect_eq(rd(&c, (void *)16, &pc), -EFAULT);
	/* names: a bytes object, not compact, ascii of 2-byte characters,
	 * ascii with a byte over 0x7f, a NUL, a negative length, too long,
	 * too long once UTF-8 */
	mk_bytes(&c, f->file, "x", 1);
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	mk_str(&c, f->file, "abc", 3, 1, true, false);
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	mk_str(&c, f->file, "a\0b\0", 2, 2, true, true);
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	mk_str(&c, f->file, "caf\xe9", 4, 1, true, true);
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	mk_str(&c, f->file, "a\0b", 3, 1, true, true);
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	mk_str(&c, f->file, NULL, -1, 1, true, true);
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	mk_str(&c, f->file, NULL, PY_MAX_STR + 1, 1, true, true);
	cr_expect_eq(rd(&c, f->code, &pc), -E2BIG);
	mk_str(&c, big, smiles, PY_MAX_STR, 4, false, true);
	put64(f->code, c.o->co_filename, (uintptr_t)big);
	cr_expect_eq(rd(&c, f->code, &pc), -E2BIG);
	/* line tables: too long, negative, a str */
	mk_code(&c, f);
	mk_bytes(&c, f->lt, NULL, PY_MAX_LINETABLE + 1);
	cr_expect_eq(rd(&c, f->code, &pc), -E2BIG);
	mk_bytes(&c, f->lt, NULL, -5);
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	mk_ascii(&c, f->lt, "x");
	cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	/* bytecode: none, too much, not bytes */
	mk_code(&c, f);
	if (c.o->co_code == STKREC_PY_NONE) {
		put64(f->code, c.o->ob_size, 0);
		cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
		put64(f->code, c.o->ob_size, PY_MAX_CODE);
		cr_expect_eq(rd(&c, f->code, &pc), -E2BIG);
	} else {
		mk_ascii(&c, f->co_code, "x");
		cr_expect_eq(rd(&c, f->code, &pc), -EBADMSG);
	}
	py_interp__free(c.pi);
	free(big);
	free(f);
}

ParameterizedTestParameters(python_code, page_edge)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

/* A string that ends at the last mapped byte reads; one that runs past
 * it is -EFAULT. */
ParameterizedTest(int *i, python_code, page_edge)
{
	long page = sysconf(_SC_PAGESIZE);
	struct fake *f = calloc(1, sizeof(*f));
	uint8_t *map, *s;
	struct py_code pc;
	struct ctx c;

	setup(&c, *i);
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(map, MAP_FAILED);
	cr_assert_eq(munmap(map + page, page), 0);
	mk_code(&c, f);
	s = map + page - c.o->u_ascii_data - 6;
	mk_ascii(&c, s, "edge.p");
	put64(f->code, c.o->co_filename, (uintptr_t)s);
	cr_assert_eq(rd(&c, f->code, &pc), 0);
	cr_expect_str_eq(pc.filename, "edge.p");
	py_code__release(&pc);
	put64(s, c.o->u_length, 7);
	cr_expect_eq(rd(&c, f->code, &pc), -EFAULT);
	munmap(map, page);
	py_interp__free(c.pi);
	free(f);
}

ParameterizedTestParameters(python_code, offsets)
{
	return cr_make_param_array(int, all_pythons, TEST_PYTHONS);
}

/* lasti to bytecode offsets: in bytes (3.8, 3.9), in code units (3.10),
 * an instruction pointer less the code object's address (3.11+). */
ParameterizedTest(int *i, python_code, offsets)
{
	static const struct {
		int minor_from, minor_to;
		int64_t lasti; /* for 3.11+: past co_code_adaptive */
		int err;
		int32_t off;
	} cases[] = {
		{ 8, 9, -1, 0, PY_OFFSET_NOT_STARTED },
		{ 8, 9, 0, 0, 0 },
		{ 8, 9, 10, 0, 10 },
		{ 8, 9, 11, -ERANGE, 0 },
		{ 8, 9, CODE_BYTES, -ERANGE, 0 },
		{ 8, 9, -3, -ERANGE, 0 },
		{ 10, 10, -1, 0, PY_OFFSET_NOT_STARTED },
		{ 10, 10, 5, 0, 10 },
		{ 10, 10, CODE_BYTES / 2, -ERANGE, 0 },
		{ 10, 10, -2, -ERANGE, 0 },
		{ 11, 13, -2, 0, PY_OFFSET_NOT_STARTED },
		{ 11, 13, 0, 0, 0 },
		{ 11, 13, 6, 0, 6 },
		{ 11, 13, 7, -ERANGE, 0 },
		{ 11, 13, CODE_BYTES, -ERANGE, 0 },
		{ 11, 13, -4, -ERANGE, 0 },
		{ 11, 13, -100000, -ERANGE, 0 },
	};
	struct ctx c;
	size_t k;

	setup(&c, *i);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int64_t l = cases[k].lasti;
		int32_t off = -7;
		int err;

		if (c.tp->minor < cases[k].minor_from || c.tp->minor > cases[k].minor_to)
			continue;
		if (c.tp->minor >= 11)
			l += c.o->co_code_adaptive;
		err = py_interp__offset(c.pi, (uint32_t)l, CODE_BYTES, &off);
		cr_expect_eq(err, cases[k].err, "%s: lasti %lld: %d", c.tp->name, (long long)l,
			     err);
		if (!err)
			cr_expect_eq(off, cases[k].off, "%s: lasti %lld: offset %d", c.tp->name,
				     (long long)l, off);
	}
	py_interp__free(c.pi);
}
