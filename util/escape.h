/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names as the text views print them. A capture's names come from others:
 * a process names itself (prctl(PR_SET_NAME)), a binary names its symbols,
 * a runtime its JIT code. Printed raw, a name holding ESC sequences drives
 * the terminal of whoever reads the report, and one holding a newline
 * forges a row. Every control byte (below 0x20, and 0x7f) therefore prints
 * as \xHH, the same way in every text view (tables, script, info, diff);
 * other bytes, UTF-8 included, as they are. JSON, SVG and HTML have their
 * own escaping.
 */
#ifndef STKREC_UTIL_ESCAPE_H
#define STKREC_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Bytes that hold any name of n bytes escaped, its NUL included. */
#define ESC_SIZE(n) (4 * (n) + 1)
/* Enough for any name a capture holds (4096 bytes, FORMAT.md §7). */
#define ESC_NAME_MAX ESC_SIZE(4096)

/* Is c a byte a text view escapes? */
static inline bool esc__is_ctrl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Does s hold no control byte? */
bool esc__clean(const char *s);
/* s as a text view prints it: s itself when it holds no control byte,
 * else buf (len bytes) holding it escaped, cut before an escape that does
 * not fit. */
const char *esc__str(const char *s, char *buf, size_t len);
/* "\xHH" of control byte c into buf (5 bytes); its length, 4. */
int esc__byte(unsigned char c, char *buf);
/* s escaped, to out; 0, or EOF on a write error. */
int esc__fputs(const char *s, FILE *out);
/* The len bytes of s escaped (a NUL too), to out; 0, or EOF. */
int esc__fwrite(const char *s, size_t len, FILE *out);

#endif /* STKREC_UTIL_ESCAPE_H */
