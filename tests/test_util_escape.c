// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * util/escape: every control byte as \xHH, nothing else touched; a clean
 * name returned as it is; a buffer too small cuts before a whole escape.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/escape.h"

Test(util_escape, control_bytes_and_only_them)
{
	char buf[ESC_SIZE(32)];
	const char *clean = "caf\xc3\xa9 ;[x] \\n";

	cr_assert_eq(esc__str(clean, buf, sizeof(buf)), clean, "a clean name is not copied");
	cr_assert(esc__clean(clean));
	cr_assert_str_eq(esc__str("ev\033[31mil\nX;Y 9", buf, sizeof(buf)),
			 "ev\\x1b[31mil\\x0aX;Y 9");
	cr_assert_str_eq(esc__str("\x01\x1f\x7f\t", buf, sizeof(buf)), "\\x01\\x1f\\x7f\\x09");
	cr_assert_not(esc__clean("a\x7f"));
}

Test(util_escape, cut_before_a_whole_escape)
{
	char buf[6];

	cr_assert_str_eq(esc__str("ab\033cd", buf, sizeof(buf)), "ab", "no half escape");
	cr_assert_str_eq(esc__str("\033", buf, sizeof(buf)), "\\x1b");
}

Test(util_escape, fputs_and_fwrite_agree)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(esc__fputs("a\033b\n", f), 0);
	cr_assert_eq(esc__fwrite("c\0d\r", 4, f), 0, "a NUL inside a length is a byte too");
	fclose(f);
	cr_assert_str_eq(text, "a\\x1bb\\x0ac\\x00d\\x0d");
	free(text);
}
