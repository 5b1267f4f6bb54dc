// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPython's line numbers, offline: the line of a bytecode offset from a
 * code object's co_firstlineno and raw line table, as PyCode_Addr2Line()
 * of that interpreter computes it (frame.f_lineno and traceback's line are
 * PyCode_Addr2Line(code, f_lasti * sizeof(_Py_CODEUNIT))). Three formats:
 *
 *   3.8, 3.9   co_lnotab: (bytes, signed line delta) pairs; a line applies
 *              from the address its pair reaches (Objects/lnotab_notes.txt).
 *   3.10       co_linetable: (bytes, signed line delta) pairs, each a range
 *              of code; a delta of -128 marks a range with no line.
 *   3.11-3.13  the location table (InternalDocs/locations.md): entries that
 *              start with a byte with bit 7 set, code units in its low three
 *              bits (+1), the kind in bits 3-6: 15 no line, 14 and 13 a
 *              signed varint line delta, 10-12 a delta of kind - 10, the
 *              short forms 0-9 the same line.
 *
 * The table comes from a capture: every read is bounded by len, every loop
 * by the table's bytes, and the arithmetic is 64-bit with the line checked
 * against int's range before it is returned.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include "sym/sym.h"

/* A decoded line: one a traceback could print, else the table is not one
 * that CPython compiled (a line is never negative); or none (3.10+). */
static int line_out(int64_t line, bool none, int *out)
{
	if (none) {
		*out = -1;
		return SYM_PYLINE_NONE;
	}
	if (line < 0 || line > INT_MAX)
		return -ENOEXEC;
	*out = (int)line;
	return 0;
}

/* 3.8, 3.9: PyCode_Addr2Line() walks the pairs, adding each line delta
 * whose address is not past the offset; past the table, the last line. */
static int lnotab_line(const uint8_t *t, size_t len, int64_t line, int off, int *out)
{
	int64_t addr = 0;
	size_t i;

	for (i = 0; i < len; i += 2) {
		addr += t[i];
		if (addr > off)
			break;
		line += (int8_t)t[i + 1];
	}
	return line_out(line, false, out);
}

/* 3.10: the range holding the offset gives its line (the running line,
 * which a -128 range leaves as it is); past the last range, CPython says
 * -1, an offset this code does not have. */
static int linetable310_line(const uint8_t *t, size_t len, int64_t line, int off, int *out)
{
	int64_t end = 0;
	size_t i;

	for (i = 0; i < len; i += 2) {
		int8_t delta = (int8_t)t[i + 1];

		end += t[i];
		if (delta != -128)
			line += delta;
		if (end > off)
			return line_out(line, delta == -128, out);
	}
	return -ERANGE;
}

/* A location entry's signed varint (6 bits a byte, low first, 0x40 to
 * continue; the sign in bit 0) in t[i..end): -ENOEXEC when it runs past the
 * entry or past 32 bits, where CPython would read beyond or shift too far. */
static int loc_svarint(const uint8_t *t, size_t i, size_t end, int64_t *v)
{
	uint64_t u = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (i >= end || shift > 30)
			return -ENOEXEC;
		b = t[i++];
		u |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	if (u > UINT32_MAX)
		return -ENOEXEC;
	*v = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return 0;
}

enum {
	LOC_ONE_LINE0 = 10, /* 10, 11, 12: a line delta of 0, 1, 2 */
	LOC_NO_COLUMNS = 13,
	LOC_LONG = 14,
	LOC_NONE = 15,
};

/* The line delta of the entry t[i..end) (its first byte has bit 7 set). */
static int loc_delta(const uint8_t *t, size_t i, size_t end, int64_t *delta)
{
	unsigned int kind = (t[i] >> 3) & 15;

	*delta = 0;
	if (kind == LOC_NO_COLUMNS || kind == LOC_LONG)
		return loc_svarint(t, i + 1, end, delta);
	if (kind >= LOC_ONE_LINE0 && kind < LOC_NO_COLUMNS)
		*delta = kind - LOC_ONE_LINE0;
	return 0;
}

/* 3.11-3.13: as 3.10, over entries; an entry ends where the next byte with
 * bit 7 set begins, so a table that does not start with one is none. */
static int loctable_line(const uint8_t *t, size_t len, int64_t line, int off, int *out)
{
	int64_t end = 0, delta;
	size_t i, next;
	int err;

	if (len && !(t[0] & 0x80))
		return -ENOEXEC;
	for (i = 0; i < len; i = next) {
		for (next = i + 1; next < len && !(t[next] & 0x80); next++)
			;
		err = loc_delta(t, i, next, &delta);
		if (err)
			return err;
		line += delta;
		if (line < INT_MIN || line > INT_MAX)
			return -ENOEXEC;
		end += ((t[i] & 7) + 1) * 2; /* code units of 2 bytes */
		if (end > off)
			return line_out(line, ((t[i] >> 3) & 15) == LOC_NONE, out);
	}
	return -ERANGE;
}

int sym_pyline(unsigned int version, const uint8_t *table, size_t len, int firstlineno,
	       int byte_offset, int *line)
{
	if (!line || (!table && len))
		return -EINVAL;
	if (version < SYM_PYVER(3, 8) || version > SYM_PYVER(3, 13))
		return -EINVAL;
	if (firstlineno < 0)
		return -ENOEXEC;
	if (byte_offset < 0) {
		*line = firstlineno;
		return 0;
	}
	if (version <= SYM_PYVER(3, 10) && len % 2)
		return -ENOEXEC; /* pairs */
	if (version < SYM_PYVER(3, 10))
		return lnotab_line(table, len, firstlineno, byte_offset, line);
	if (version == SYM_PYVER(3, 10))
		return linetable310_line(table, len, firstlineno, byte_offset, line);
	return loctable_line(table, len, firstlineno, byte_offset, line);
}
