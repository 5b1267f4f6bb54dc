// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/: the compact OFFCPU record (FORMAT.md §4.17): exact round trips at
 * the edges of every field and across blocks, and hostile bodies refused
 * without decoding a wrong time for any later record of the block. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

static size_t leb(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)v | 0x80;
	p[n++] = (uint8_t)v;
	return n;
}

/* A hand-made compact body: start delta (already zigzagged) and fields. */
static size_t body(uint8_t *p, uint64_t zdelta, uint64_t dur, uint64_t tid)
{
	size_t n = leb(p, zdelta);

	n += leb(p + n, dur);
	n += leb(p + n, tid);
	n += leb(p + n, 7);   /* pid */
	n += leb(p + n, 1);   /* cpu */
	n += leb(p + n, 2);   /* state */
	n += leb(p + n, 3);   /* ustack */
	n += leb(p + n, 4);   /* kstack */
	return n;
}

static const struct cap_offcpu edges[] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 1000, 5, 1, 1, 1, 1, 1, 1 },
	{ 1005, 100, 2, 1, 0, 1, 1, 1 },        /* starts as the last one ends */
	{ 900, 10, 3, 1, 0, 1, 1, 1 },          /* starts before it: negative */
	{ UINT64_MAX - 10, 10, UINT32_MAX, UINT32_MAX, UINT32_MAX,
	  UINT32_MAX, CAP_STACK_LOST, CAP_STACK_LOST },
	{ 5, UINT64_MAX - 5, 4, 4, 4, 4, 0, 0 }, /* a huge jump back */
	{ 1ull << 63, 1ull << 62, 5, 5, 5, 0x402, 9, 10 },
	/* 1.2: a wait open at both ends, then `open` at its widest */
	{ 100, 7, 6, 6, 0, 1, 2, 3, CAP_OFFCPU_OPEN_START | CAP_OFFCPU_OPEN_END },
	{ 107, 1, 7, 7, 1, 1, 2, 3, UINT32_MAX },
	{ 0, 0, 0, 0, 0, 0, 0, 0 },
};

Test(format_packed, round_trip_exact_at_the_edges)
{
	struct cap_writer_opts wo = { .block_size = 300 }; /* several blocks */
	const size_t n = sizeof(edges) / sizeof(edges[0]);
	struct cap_record rec;
	struct capgen_mem c;
	size_t i, k;

	cr_assert_eq(capgen_mem_begin(&c, &wo), 0);
	for (k = 0; k < 20; k++) {
		for (i = 0; i < n; i++)
			cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &edges[i],
							sizeof(edges[i]), NULL, 0), 0);
	}
	cr_assert_eq(cap_writer__totals(c.w)->events[CAP_KIND_OFFCPU], 20 * n);
	cr_assert_eq(capgen_mem_end(&c), 0);
	for (k = 0; k < 20; k++) {
		for (i = 0; i < n; i++) {
			cr_assert_eq(capgen_mem_next(&c, &rec), 1);
			cr_assert_eq(rec.type, CAP_REC_OFFCPU);
			cr_assert_eq(memcmp(&rec.offcpu, &edges[i], sizeof(edges[i])), 0,
				     "record %zu of round %zu differs", i, k);
		}
	}
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_gt(cap_reader__stats(c.r)->blocks, 5, "deltas restart per block");
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	cr_assert_not(cap_reader__stats(c.r)->recovered);
	cr_assert_eq(cap_reader__type_count(c.r, CAP_REC_OFFCPU), 20 * n);
	capgen_mem_free(&c);
}

/* Two threads taking turns on one CPU: each wait starts as the other's
 * ends, so the start costs one byte; the record is 13 bytes, not 44. */
Test(format_packed, ping_pong_is_small)
{
	struct cap_offcpu o = { 1000000, 4000, 100, 100, 0, 1, 5, 6 };
	struct cap_record rec;
	struct capgen_mem c;
	int i;

	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	for (i = 0; i < 100; i++) {
		o.tid = o.pid = 100 + i % 2;
		cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &o, sizeof(o), NULL, 0), 0);
		o.start += o.duration;
	}
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_gt(rec.size, 13, "the first start is absolute");
	for (i = 1; i < 100; i++) {
		cr_assert_eq(capgen_mem_next(&c, &rec), 1);
		cr_assert_eq(rec.size, 13);
		cr_assert_eq(rec.offcpu.start, 1000000 + (uint64_t)i * 4000);
		cr_assert_eq(rec.offcpu.tid, 100u + i % 2);
	}
	capgen_mem_free(&c);
}

Test(format_packed, fixed_option_writes_the_1_0_record)
{
	struct cap_writer_opts wo = { .fixed_offcpu = true };
	struct cap_record rec;
	struct capgen_mem c;

	cr_assert_eq(capgen_mem_begin(&c, &wo), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &edges[4],
					sizeof(edges[4]), NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.size, 4 + sizeof(struct cap_offcpu));
	cr_assert_eq(memcmp(&rec.offcpu, &edges[4], sizeof(edges[4])), 0);
	capgen_mem_free(&c);
}

/* A bad compact record makes every later compact record of its block bad
 * (their starts chain from it), and the next block decodes again. */
Test(format_packed, bad_body_breaks_the_rest_of_its_block_only)
{
	uint8_t b[64];
	struct cap_record rec;
	struct capgen_mem c;
	size_t n;

	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	n = body(b, 2000, 10, 1);       /* start 1000 */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n, NULL, 0), 0);
	n = body(b, 0, 10, 2);
	b[n - 1] = 0x84;                /* last varint never ends */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n, NULL, 0), 0);
	n = body(b, 0, 10, 3);          /* fine, but chained to the bad one */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n, NULL, 0), 0);
	cr_assert_eq(cap_writer__flush(c.w), 0);
	n = body(b, 4000, 10, 4);       /* a new block: start 2000 */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n, NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);

	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.offcpu.start, 1000);
	cr_assert_eq(rec.offcpu.tid, 1);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.offcpu.start, 2000);
	cr_assert_eq(rec.offcpu.tid, 4);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 2);
	cr_assert_eq(cap_reader__stats(c.r)->counted.events[CAP_KIND_OFFCPU], 2);
	cr_assert(cap_reader__stats(c.r)->recovered);
	capgen_mem_free(&c);
}

/* b refused, whether it ends its block (each value read with a bound) or
 * a STRING of 200 bytes follows it there (the values read unbounded, the
 * end checked after): the same record refused either way. */
static void expect_refused(const uint8_t *b, size_t n, const char *what)
{
	static const char pad[200];
	struct cap_record rec;
	struct capgen_mem c;
	int followed;

	for (followed = 0; followed < 2; followed++) {
		cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
		cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n, NULL, 0), 0);
		if (followed)
			cr_assert_eq(cap_writer__string(c.w, 1, pad, sizeof(pad)), 0);
		cr_assert_eq(capgen_mem_end(&c), 0);
		cr_assert_eq(capgen_mem_next(&c, &rec), followed, "%s decoded (followed %d)",
			     what, followed);
		if (followed)
			cr_assert_eq(rec.type, CAP_REC_STRING, "%s decoded", what);
		cr_assert_eq(cap_reader__stats(c.r)->bad_records, 1, "%s (followed %d)", what,
			     followed);
		capgen_mem_free(&c);
	}
}

Test(format_packed, hostile_bodies_refused)
{
	uint8_t b[64];
	size_t n;

	memset(b, 0xff, 11);
	b[10] = 0x01;                   /* an 11-byte varint */
	n = 11 + body(b + 11, 0, 0, 0) - 1;
	expect_refused(b, n, "11-byte varint");

	memset(b, 0xff, 9);
	b[9] = 0x02;                    /* 10 bytes, but past 64 bits */
	n = 10 + body(b + 10, 0, 0, 0) - 1;
	expect_refused(b, n, "65-bit value");

	n = body(b, 0, 10, 1ull << 32); /* a tid above 32 bits */
	expect_refused(b, n, "33-bit tid");

	/* start 2^63 - 1, duration 2^64 - 1: ends past 2^64 */
	n = body(b, 0xfffffffffffffffeull, UINT64_MAX, 1);
	expect_refused(b, n, "end past 2^64");

	n = body(b, 0, 10, 1);
	expect_refused(b, n - 1, "body cut short");

	n = body(b, 0, 10, 1);
	b[n - 1] = 0x84;                /* the last value goes on past the end */
	expect_refused(b, n, "value past the end");

	n = body(b, 0, 10, 1);
	n += leb(b + n, 1ull << 32);    /* `open` above 32 bits */
	expect_refused(b, n, "33-bit open");
}

/* The ninth value is `open` (1.2); fields a newer minor appends after it
 * are ignored, as for fixed records. Eight values: `open` reads 0. */
Test(format_packed, newer_fields_ignored)
{
	uint8_t b[64];
	struct cap_record rec;
	struct capgen_mem c;
	size_t n;

	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	n = body(b, 20, 30, 5);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n, NULL, 0), 0);
	n = body(b, 0, 30, 5);
	n += leb(b + n, CAP_OFFCPU_OPEN_END);
	n += leb(b + n, 123456);
	b[n++] = 0xab;
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n, NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.offcpu.start, 10);
	cr_assert_eq(rec.offcpu.open, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.offcpu.start, 40);
	cr_assert_eq(rec.offcpu.duration, 30);
	cr_assert_eq(rec.offcpu.tid, 5);
	cr_assert_eq(rec.offcpu.kstack, 4);
	cr_assert_eq(rec.offcpu.open, CAP_OFFCPU_OPEN_END);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	capgen_mem_free(&c);
}

/* What a caller sees of one reading: each record in order (an OFFCPU's
 * fields, another record's type), and the reader's counts. */
struct reading {
	uint64_t hash, records;
	struct cap_read_stats st;
	uint64_t offcpu_type;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/* buf read to its end; runs: the OFFCPU events up to runs at a time
 * (cap_reader__next_offcpus()), the rest one by one; 0: all one by one. */
static void read_by(const uint8_t *buf, size_t len, size_t runs, struct reading *o)
{
	struct cap_offcpu run[8];
	struct cap_record rec;
	struct cap_reader *r;
	size_t i, n;

	memset(o, 0, sizeof(*o));
	o->hash = 0xcbf29ce484222325ull;
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	for (;;) {
		n = runs ? cap_reader__next_offcpus(r, run, runs) : 0;
		cr_assert_leq(n, runs);
		for (i = 0; i < n; i++)
			o->hash = fnv(o->hash, &run[i], sizeof(run[i]));
		o->records += n;
		if (n)
			continue;
		if (cap_reader__next(r, &rec) != 1)
			break;
		if (rec.type == CAP_REC_OFFCPU)
			o->hash = fnv(o->hash, &rec.offcpu, sizeof(rec.offcpu));
		else
			o->hash = fnv(o->hash, &rec.type, sizeof(rec.type));
		o->records++;
	}
	o->st = *cap_reader__stats(r);
	o->offcpu_type = cap_reader__type_count(r, CAP_REC_OFFCPU);
	cap_reader__close(r);
}

/* cap_reader__next_offcpus() gives what cap_reader__next() does, one by
 * one: the events, then the counts, across blocks, other records, and bad
 * bodies (which it leaves for cap_reader__next() to count). */
Test(format_packed, runs_read_as_one_by_one)
{
	struct cap_writer_opts wo = { .block_size = 300 };
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	struct reading one, by;
	struct capgen_mem c;
	uint8_t b[64];
	size_t i, n, runs;

	cr_assert_eq(capgen_mem_begin(&c, &wo), 0);
	for (i = 0; i < 200; i++) {
		cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &edges[i % ne],
						sizeof(edges[i % ne]), NULL, 0), 0);
		if (i % 17 == 5)
			cr_assert_eq(cap_writer__string(c.w, 1, "x", 1), 0);
		if (i % 29 == 7) { /* a bad body: the rest of its block is bad too */
			n = body(b, 0, 10, 2);
			b[n - 1] = 0x84;
			cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU_COMPACT, b, n,
							NULL, 0), 0);
		}
	}
	cr_assert_eq(capgen_mem_end(&c), 0);
	read_by(c.buf, c.len, 0, &one);
	cr_assert_gt(one.st.bad_records, 6);
	cr_assert_gt(one.st.counted.events[CAP_KIND_OFFCPU], 100);
	for (runs = 1; runs <= 8; runs++) {
		read_by(c.buf, c.len, runs, &by);
		cr_assert_eq(by.hash, one.hash, "runs of %zu: other events", runs);
		cr_assert_eq(by.records, one.records, "runs of %zu", runs);
		cr_assert_eq(memcmp(&by.st.counted, &one.st.counted, sizeof(one.st.counted)), 0,
			     "runs of %zu: counts", runs);
		cr_assert_eq(by.st.bad_records, one.st.bad_records, "runs of %zu", runs);
		cr_assert_eq(by.st.recovered, one.st.recovered, "runs of %zu", runs);
		cr_assert_eq(by.offcpu_type, one.offcpu_type, "runs of %zu", runs);
	}
	capgen_mem_free(&c);
}
