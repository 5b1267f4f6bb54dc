// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Protocol Buffers wire format, writing only (report/pbwrite.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "report/pbwrite.h"
#include "util/array.h"

void pbuf__free(struct pbuf *p)
{
	free(p->b);
	memset(p, 0, sizeof(*p));
}

void pbuf__reset(struct pbuf *p)
{
	p->len = 0;
	p->err = 0;
}

/* Room for n more bytes: false (and err set) when there is none. */
static bool room(struct pbuf *p, size_t n)
{
	if (p->err)
		return false;
	if (ARRAY_RESERVE(p->b, p->cap, p->len + n)) {
		p->err = -ENOMEM;
		return false;
	}
	return true;
}

int pb_varint_len(uint64_t v)
{
	int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(uint8_t *d, uint64_t v)
{
	while (v >= 0x80) {
		*d++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*d = (uint8_t)v;
}

void pb_varint(struct pbuf *p, uint64_t v)
{
	int n = pb_varint_len(v);

	if (!room(p, n))
		return;
	put_varint(p->b + p->len, v);
	p->len += n;
}

void pb_key(struct pbuf *p, uint32_t field, int wire)
{
	pb_varint(p, (uint64_t)field << 3 | (unsigned)wire);
}

void pb_uint(struct pbuf *p, uint32_t field, uint64_t v)
{
	pb_key(p, field, PB_VARINT);
	pb_varint(p, v);
}

void pb_bytes(struct pbuf *p, uint32_t field, const void *data, size_t len)
{
	pb_key(p, field, PB_LEN);
	pb_varint(p, len);
	if (!len || !room(p, len))
		return;
	memcpy(p->b + p->len, data, len);
	p->len += len;
}

void pb_str(struct pbuf *p, uint32_t field, const char *s)
{
	pb_bytes(p, field, s, strlen(s));
}

size_t pb_begin(struct pbuf *p, uint32_t field)
{
	size_t mark;

	pb_key(p, field, PB_LEN);
	mark = p->len;
	if (room(p, 1))
		p->b[p->len++] = 0; /* a one-byte length, grown by pb_end() */
	return mark;
}

void pb_end(struct pbuf *p, size_t mark)
{
	size_t len;
	int n;

	if (p->err)
		return;
	len = p->len - mark - 1;
	n = pb_varint_len(len);
	if (n > 1) {
		if (!room(p, n - 1))
			return;
		memmove(p->b + mark + n, p->b + mark + 1, len);
		p->len += n - 1;
	}
	put_varint(p->b + mark, len);
}
