// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Names as the text views print them (escape.h). */
#include <string.h>
#include "util/escape.h"

int esc__byte(unsigned char c, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	buf[0] = '\\';
	buf[1] = 'x';
	buf[2] = hex[c >> 4];
	buf[3] = hex[c & 15];
	buf[4] = 0;
	return 4;
}

bool esc__clean(const char *s)
{
	for (; *s; s++)
		if (esc__is_ctrl(*s))
			return false;
	return true;
}

const char *esc__str(const char *s, char *buf, size_t len)
{
	size_t n = 0;
	char e[5];

	if (!s || esc__clean(s) || !len)
		return s;
	for (; *s; s++) {
		size_t k = esc__is_ctrl(*s) ? (size_t)esc__byte(*s, e) : 1;

		if (n + k >= len)
			break;
		if (k == 1)
			buf[n] = *s;
		else
			memcpy(buf + n, e, k);
		n += k;
	}
	buf[n] = 0;
	return buf;
}

int esc__fwrite(const char *s, size_t len, FILE *out)
{
	const char *end = s + len;
	char e[5];
	size_t n;

	while (s < end) {
		n = 0;
		while (s + n < end && !esc__is_ctrl(s[n]) && s[n])
			n++;
		if (n && fwrite(s, 1, n, out) != n)
			return EOF;
		s += n;
		if (s == end)
			break;
		esc__byte(*s++, e);
		if (fputs(e, out) == EOF)
			return EOF;
	}
	return 0;
}

int esc__fputs(const char *s, FILE *out)
{
	return esc__fwrite(s, strlen(s), out);
}
