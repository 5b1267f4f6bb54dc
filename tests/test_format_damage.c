// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/: damaged captures. Truncation at every offset, bit flips in
 * blocks, header and trailer, and write faults: the reader never crashes,
 * never returns a record that was not written, and says what it lost. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

#define MAX_BLOCKS 64

/* Where each block frame lies in a capture, and how many records it has. */
struct layout {
	uint8_t *buf;
	size_t len;
	size_t nblocks;
	uint64_t start[MAX_BLOCKS + 1]; /* start[nblocks] = trailer offset */
	uint64_t records[MAX_BLOCKS];
	uint64_t header_end;
	uint64_t total;
};

static void make_layout(const struct capgen_opts *o, struct layout *l)
{
	struct cap_record rec;
	struct cap_reader *r;
	struct cap_footer ft;

	memset(l, 0, sizeof(*l));
	cr_assert_eq(capgen_write_mem(o, &l->buf, &l->len, NULL), 0);
	cr_assert_eq(cap_reader__open_mem(l->buf, l->len, &r), 0);
	while (cap_reader__next(r, &rec) == 1) {
		if (rec.type == CAP_REC_BLOCK) {
			cr_assert_lt(l->nblocks, MAX_BLOCKS);
			l->start[l->nblocks++] = rec.file_offset;
		}
		l->records[l->nblocks - 1]++;
		l->total++;
	}
	cr_assert_not(cap_reader__stats(r)->recovered);
	cap_reader__close(r);
	memcpy(&ft, l->buf + l->len - sizeof(ft), sizeof(ft));
	l->start[l->nblocks] = l->len - ft.frame_size;
	l->header_end = l->start[0];
}

/* Records of the blocks lying entirely below `cut`. */
static uint64_t records_before(const struct layout *l, uint64_t cut)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < l->nblocks && l->start[i + 1] <= cut; i++)
		n += l->records[i];
	return n;
}

static uint64_t records_except(const struct layout *l, size_t k)
{
	return l->total - l->records[k];
}

Test(format_damage, truncation_at_every_offset)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct capgen_readout ro;
	struct layout l;
	uint64_t cut;
	uint8_t *copy;
	int err;

	make_layout(&o, &l);
	cr_assert_geq(l.nblocks, 5);
	for (cut = 0; cut <= l.len; cut++) {
		/* a private copy of exactly `cut` bytes, so ASan sees overreads */
		copy = malloc(cut ? cut : 1);
		memcpy(copy, l.buf, cut);
		err = capgen_read_mem(copy, cut, &ro);
		if (cut == 0) {
			cr_assert_eq(err, CAP_ERR_EMPTY);
		} else if (cut < l.header_end) {
			cr_assert_eq(err, CAP_ERR_TRUNCATED, "cut %lu: %d", cut, err);
		} else {
			cr_assert_eq(err, 0, "cut %lu", cut);
			cr_assert_eq(ro.err, 0);
			cr_assert_eq(ro.bad, 0, "cut %lu: garbage record", cut);
			cr_assert_eq(ro.records, cut == l.len ? l.total : records_before(&l, cut),
				     "cut %lu: %lu records", cut, ro.records);
			cr_assert_eq(ro.st.recovered, cut != l.len, "cut %lu", cut);
			cr_assert_eq(ro.st.bad_blocks, 0, "cut %lu", cut);
			cr_assert_eq(ro.st.has_trailer, cut == l.len);
		}
		free(copy);
	}
	free(l.buf);
}

Test(format_damage, truncation_describes_the_cut)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct cap_record rec;
	struct cap_reader *r;
	struct layout l;
	char msg[256], want[256];
	uint64_t cut;

	make_layout(&o, &l);
	cut = l.start[3] + 10;      /* inside the fourth block (seq 3) */
	cr_assert_eq(cap_reader__open_mem(l.buf, cut, &r), 0);
	while (cap_reader__next(r, &rec) == 1)
		;
	cr_assert_eq(cap_reader__stats(r)->truncated_at, l.start[3]);
	snprintf(want, sizeof(want), "file ends at byte %lu inside block 3 (cut at byte %lu):"
		 " no trailer, capture was not finalized (recorder killed?)", cut, l.start[3]);
	cr_assert_str_eq(cap_reader__describe_loss(r, msg, sizeof(msg)), want);
	cap_reader__close(r);

	cut = l.start[3];           /* exactly after block 2 */
	cr_assert_eq(cap_reader__open_mem(l.buf, cut, &r), 0);
	while (cap_reader__next(r, &rec) == 1)
		;
	snprintf(want, sizeof(want), "file ends at byte %lu after block 2: no trailer, "
		 "capture was not finalized (recorder killed?)", cut);
	cr_assert_str_eq(cap_reader__describe_loss(r, msg, sizeof(msg)), want);
	cr_assert_eq(cap_reader__stats(r)->truncated_at, cut);
	cap_reader__close(r);

	cr_assert_eq(cap_reader__open_mem(l.buf, l.len, &r), 0);
	while (cap_reader__next(r, &rec) == 1)
		;
	cr_assert_str_eq(cap_reader__describe_loss(r, msg, sizeof(msg)), "no loss");
	cap_reader__close(r);
	free(l.buf);
}

Test(format_damage, bit_flips_in_a_block_are_detected)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct capgen_readout ro;
	struct layout l;
	uint64_t pos, flips = 0, detected = 0;
	size_t k = 2;

	make_layout(&o, &l);
	for (pos = l.start[k]; pos < l.start[k + 1]; pos++) {
		uint8_t bit = 1u << (pos % 8);

		l.buf[pos] ^= bit;
		cr_assert_eq(capgen_read_mem(l.buf, l.len, &ro), 0);
		l.buf[pos] ^= bit;
		cr_assert_eq(ro.bad, 0, "flip at %lu: garbage record", pos);
		cr_assert(ro.st.has_trailer);
		flips++;
		if (!ro.st.bad_blocks) {
			/* a flip zstd never reads (e.g. an unused table bit):
			 * the content, and so its checksum, are unchanged */
			cr_assert_eq(ro.records, l.total, "flip at %lu", pos);
			cr_assert_not(ro.st.recovered);
			continue;
		}
		detected++;
		cr_assert_eq(ro.records, records_except(&l, k), "flip at %lu", pos);
		cr_assert_eq(ro.st.bad_blocks, 1, "flip at %lu", pos);
		cr_assert_eq(ro.st.bytes_skipped, l.start[k + 1] - l.start[k], "flip at %lu",
			     pos);
		cr_assert(ro.st.recovered);
	}
	cr_assert_gt(flips, 150);
	cr_assert_geq(detected * 100, flips * 95, "%lu of %lu flips detected", detected,
		      flips);
	free(l.buf);
}

Test(format_damage, damaged_block_description)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct cap_record rec;
	struct cap_reader *r;
	struct layout l;
	char msg[512], want[512];

	make_layout(&o, &l);
	l.buf[l.start[1] + 20] ^= 0x10;
	cr_assert_eq(cap_reader__open_mem(l.buf, l.len, &r), 0);
	while (cap_reader__next(r, &rec) == 1)
		;
	snprintf(want, sizeof(want), "1 damaged block (bytes %lu-%lu) skipped; trailer totals "
		 "disagree with the data read (trailer: %lu records in %zu blocks; read: %lu "
		 "in %zu)", l.start[1], l.start[2] - 1, l.total, l.nblocks,
		 l.total - l.records[1], l.nblocks - 1);
	cr_assert_str_eq(cap_reader__describe_loss(r, msg, sizeof(msg)), want);
	cr_assert_eq(cap_reader__stats(r)->first_error, CAP_ERR_CHECKSUM);
	cr_assert_eq(cap_reader__stats(r)->first_error_offset, l.start[1]);
	cap_reader__close(r);
	free(l.buf);
}

Test(format_damage, two_damaged_blocks_then_cut)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct capgen_readout ro;
	struct layout l;

	make_layout(&o, &l);
	l.buf[l.start[1] + 30] ^= 1;
	l.buf[l.start[3] + 30] ^= 1;
	cr_assert_eq(capgen_read_mem(l.buf, l.start[5] + 7, &ro), 0);
	cr_assert_eq(ro.bad, 0);
	cr_assert_eq(ro.st.bad_blocks, 2);
	cr_assert_eq(ro.records, l.records[0] + l.records[2] + l.records[4]);
	cr_assert_eq(ro.st.truncated_at, l.start[5]);
	free(l.buf);
}

Test(format_damage, bit_flips_in_header_refuse_open)
{
	struct layout l;
	struct cap_reader *r;
	uint64_t pos;
	int err;

	make_layout(NULL, &l);
	for (pos = 0; pos < l.header_end; pos++) {
		uint8_t bit = 1u << (pos % 8);

		l.buf[pos] ^= bit;
		err = cap_reader__open_mem(l.buf, l.len, &r);
		l.buf[pos] ^= bit;
		cr_assert_lt(err, 0, "flip at header byte %lu accepted", pos);
	}
	free(l.buf);
}

Test(format_damage, bit_flips_in_trailer_keep_records)
{
	struct capgen_opts o = { .block_size = 512, .events = 20 };
	struct capgen_readout ro;
	struct layout l;
	uint64_t pos;

	make_layout(&o, &l);
	for (pos = l.start[l.nblocks]; pos < l.len; pos++) {
		uint8_t bit = 1u << (pos % 8);

		l.buf[pos] ^= bit;
		cr_assert_eq(capgen_read_mem(l.buf, l.len, &ro), 0);
		l.buf[pos] ^= bit;
		cr_assert_eq(ro.records, l.total, "flip at %lu", pos);
		cr_assert_eq(ro.bad, 0);
		cr_assert_not(ro.st.has_trailer, "flip at %lu: damaged trailer trusted", pos);
		cr_assert(ro.st.recovered);
		cr_assert_eq(ro.st.bad_blocks, 0, "flip at %lu", pos);
	}
	free(l.buf);
}

Test(format_damage, missing_block_disagrees_with_trailer)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct capgen_readout ro;
	struct layout l;
	size_t cut_len;
	uint8_t *spliced;

	make_layout(&o, &l);
	/* remove block 2 entirely: every remaining frame is intact */
	cut_len = l.start[3] - l.start[2];
	spliced = malloc(l.len - cut_len);
	memcpy(spliced, l.buf, l.start[2]);
	memcpy(spliced + l.start[2], l.buf + l.start[3], l.len - l.start[3]);
	cr_assert_eq(capgen_read_mem(spliced, l.len - cut_len, &ro), 0);
	cr_assert_eq(ro.records, records_except(&l, 2));
	cr_assert(ro.st.has_trailer);
	cr_assert_eq(ro.st.bad_blocks, 0);
	cr_assert(ro.st.recovered, "trailer says one more block");
	cr_assert_eq(ro.st.trailer.blocks, l.nblocks);
	cr_assert_eq(ro.st.counted.blocks, l.nblocks - 1);
	free(spliced);
	free(l.buf);
}

Test(format_damage, garbage_between_frames_is_skipped)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct capgen_readout ro;
	struct layout l;
	uint8_t *buf;
	size_t n = 100;

	make_layout(&o, &l);
	buf = malloc(l.len + n);
	memcpy(buf, l.buf, l.start[2]);
	memset(buf + l.start[2], 0xab, n);
	memcpy(buf + l.start[2] + n, l.buf + l.start[2], l.len - l.start[2]);
	cr_assert_eq(capgen_read_mem(buf, l.len + n, &ro), 0);
	cr_assert_eq(ro.records, l.total);
	cr_assert_eq(ro.st.bad_blocks, 1);
	cr_assert_eq(ro.st.bytes_skipped, n);
	cr_assert(ro.st.recovered);
	free(buf);
	free(l.buf);
}

Test(format_damage, random_bytes_are_not_a_capture)
{
	uint8_t buf[4096];
	struct cap_reader *r;
	unsigned i, seed = 12345;

	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = seed >> 16;
	}
	cr_assert_eq(cap_reader__open_mem(buf, sizeof(buf), &r), CAP_ERR_BAD_MAGIC);
	/* our frame magic followed by noise */
	buf[0] = 0x53;
	buf[1] = 0x2a;
	buf[2] = 0x4d;
	buf[3] = 0x18;
	cr_assert_lt(cap_reader__open_mem(buf, sizeof(buf), &r), 0);
}

/* Insert `fakes` false frame starts (magic + junk) before block 2. */
static void fake_frames(const struct layout *l, unsigned fakes, struct capgen_readout *ro)
{
	static const uint8_t fake[8] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xff, 0xff, 0xff };
	size_t add = fakes * sizeof(fake), i;
	uint8_t *buf = malloc(l->len + add);

	memcpy(buf, l->buf, l->start[2]);
	for (i = 0; i < fakes; i++)
		memcpy(buf + l->start[2] + i * sizeof(fake), fake, sizeof(fake));
	memcpy(buf + l->start[2] + add, l->buf + l->start[2], l->len - l->start[2]);
	cr_assert_eq(capgen_read_mem(buf, l->len + add, ro), 0);
	free(buf);
}

Test(format_damage, false_frame_starts_are_bounded)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct capgen_readout ro;
	struct layout l;

	make_layout(&o, &l);
	/* a few false starts: the scan finds block 2 after them */
	fake_frames(&l, 10, &ro);
	cr_assert_eq(ro.records, l.total);
	cr_assert_eq(ro.st.bad_blocks, 1);
	cr_assert_eq(ro.st.bytes_skipped, 80);
	/* a region full of them is given up on, up to the trailer */
	fake_frames(&l, 200, &ro);
	cr_assert_eq(ro.bad, 0);
	cr_assert_eq(ro.records, l.records[0] + l.records[1]);
	cr_assert_eq(ro.st.bad_blocks, 1);
	cr_assert_eq(ro.st.bytes_skipped, 1600 + l.start[l.nblocks] - l.start[2]);
	cr_assert(ro.st.recovered);
	free(l.buf);
}

Test(format_damage, adjacent_damaged_blocks_counted_each)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct cap_record rec;
	struct cap_reader *r;
	struct layout l;
	char msg[512], want[512];
	uint64_t n = 0;

	make_layout(&o, &l);
	l.buf[l.start[2] + 25] ^= 0x04;
	l.buf[l.start[3] + 25] ^= 0x04;
	cr_assert_eq(cap_reader__open_mem(l.buf, l.len, &r), 0);
	while (cap_reader__next(r, &rec) == 1)
		n++;
	cr_assert_eq(n, l.total - l.records[2] - l.records[3]);
	cr_assert_eq(cap_reader__stats(r)->bad_blocks, 2);
	snprintf(want, sizeof(want), "2 damaged blocks (bytes %lu-%lu) skipped; ", l.start[2],
		 l.start[4] - 1);
	cap_reader__describe_loss(r, msg, sizeof(msg));
	cr_assert_eq(strncmp(msg, want, strlen(want)), 0, "%s", msg);
	cap_reader__close(r);
	free(l.buf);
}
