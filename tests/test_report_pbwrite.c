// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report/pbwrite: the Protocol Buffers wire format byte for byte against
 * the encoding guide's examples (protobuf.dev/programming-guides/encoding),
 * varints at every length boundary, and nested lengths that outgrow their
 * one-byte room. The files it builds are read by `go tool pprof` in
 * test_report_export.c.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include "report/pbwrite.h"

static void expect_bytes(const struct pbuf *p, const uint8_t *want, size_t n)
{
	size_t i;

	cr_assert_eq(p->err, 0);
	cr_assert_eq(p->len, n, "%zu bytes, not %zu", p->len, n);
	for (i = 0; i < n; i++)
		cr_assert_eq(p->b[i], want[i], "byte %zu: %02x, not %02x", i, p->b[i], want[i]);
}

Test(pbwrite, varints_and_fields_as_the_encoding_guide_writes_them)
{
	/* protobuf.dev/programming-guides/encoding: field 1 = 150, field 2 =
	 * "testing", and the varint examples 1, 300 and -2 (as int64) */
	static const uint8_t f150[] = { 0x08, 0x96, 0x01 };
	static const uint8_t testing[] = { 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' };
	static const uint8_t v1[] = { 0x01 }, v300[] = { 0xac, 0x02 };
	static const uint8_t neg2[] = { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t edges[] = { 0x00, 0x7f, 0x80, 0x01, 0xff, 0x7f, 0x80, 0x80, 0x01 };
	static const uint8_t key16[] = { 0x80, 0x01, 0x05, 0x82, 0x01, 0x00 };
	struct pbuf p = { 0 };

	pb_uint(&p, 1, 150);
	expect_bytes(&p, f150, sizeof(f150));
	pbuf__reset(&p);
	pb_str(&p, 2, "testing");
	expect_bytes(&p, testing, sizeof(testing));
	pbuf__reset(&p);
	pb_varint(&p, 1);
	expect_bytes(&p, v1, 1);
	pbuf__reset(&p);
	pb_varint(&p, 300);
	expect_bytes(&p, v300, 2);
	pbuf__reset(&p);
	pb_varint(&p, (uint64_t)(int64_t)-2);
	expect_bytes(&p, neg2, sizeof(neg2));
	pbuf__reset(&p);
	pb_varint(&p, UINT64_MAX);
	expect_bytes(&p, max, sizeof(max));
	pbuf__reset(&p);
	pb_varint(&p, 0);
	pb_varint(&p, 127);
	pb_varint(&p, 128);
	pb_varint(&p, 16383);
	pb_varint(&p, 16384);
	expect_bytes(&p, edges, sizeof(edges));
	/* field 16: a two-byte key; an empty string is a key and a zero */
	pbuf__reset(&p);
	pb_uint(&p, 16, 5);
	pb_bytes(&p, 16, "", 0);
	expect_bytes(&p, key16, sizeof(key16));
	cr_assert_eq(pb_varint_len(0), 1);
	cr_assert_eq(pb_varint_len(127), 1);
	cr_assert_eq(pb_varint_len(128), 2);
	cr_assert_eq(pb_varint_len(UINT64_MAX), 10);
	pbuf__free(&p);
}

/* A message of n bytes of payload inside field 3, inside field 1. */
static void nested(struct pbuf *p, size_t n)
{
	size_t outer, inner, i;

	pbuf__reset(p);
	outer = pb_begin(p, 1);
	inner = pb_begin(p, 3);
	for (i = 0; i < n; i++)
		pb_varint(p, i % 100);
	pb_end(p, inner);
	pb_uint(p, 2, 7);
	pb_end(p, outer);
}

Test(pbwrite, nested_lengths_grow_and_move_their_contents)
{
	static const size_t sizes[] = { 0, 1, 125, 126, 127, 128, 300, 16383, 16384, 70000 };
	struct pbuf p = { 0 };
	size_t i, k, n, lin, lout, at;
	uint64_t len;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		n = sizes[k];
		nested(&p, n);
		cr_assert_eq(p.err, 0);
		/* outer: key 0x0a, length; inner: key 0x1a, length n, n bytes;
		 * then field 2 = 7 (0x10 0x07) */
		lin = pb_varint_len(n);
		lout = pb_varint_len(1 + lin + n + 2);
		cr_assert_eq(p.len, 1 + lout + 1 + lin + n + 2, "payload %zu", n);
		cr_assert_eq(p.b[0], 0x0a);
		for (len = 0, i = 0; i < lout; i++)
			len |= (uint64_t)(p.b[1 + i] & 0x7f) << (7 * i);
		cr_assert_eq(len, 1 + lin + n + 2, "outer length of %zu", n);
		at = 1 + lout;
		cr_assert_eq(p.b[at], 0x1a);
		for (len = 0, i = 0; i < lin; i++)
			len |= (uint64_t)(p.b[at + 1 + i] & 0x7f) << (7 * i);
		cr_assert_eq(len, n, "inner length of %zu", n);
		at += 1 + lin;
		for (i = 0; i < n; i++)
			cr_assert_eq(p.b[at + i], i % 100, "payload %zu, byte %zu", n, i);
		cr_assert_eq(p.b[at + n], 0x10);
		cr_assert_eq(p.b[at + n + 1], 0x07);
	}
	pbuf__free(&p);
}
