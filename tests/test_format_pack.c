// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/: the symbol pack's records (FORMAT.md §4.18-4.22): exact round
 * trips, tails validated (a hostile length never reads past the record),
 * and PACK_INFO written past the size limit as END is. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

static const struct cap_pack_object obj = {
	.id = 1, .path_id = 7, .build_id_size = 20, .flags = CAP_PACK_OBJ_DWARF,
	.build_id = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
		      15, 16 },
};
static const struct cap_pack_symbol sym = {
	.id = 3, .object = 1, .name_id = 8, .start = 0x1120, .size = 0x40,
};
static const struct cap_pack_frame frames[3] = {
	{ 9, 10, 3 }, { 0, 10, 9 }, { 8, 10, 12 },
};
static const struct cap_pack_info info = { 1, 1, 1, 1, 1, 2, 3, 4 };

static int append_addr(struct cap_writer *w, uint16_t nr, size_t tail_len)
{
	struct cap_pack_addr a = { .offset = 0x1133, .object = 1, .symbol = 3, .nr = nr };

	return cap_writer__append(w, CAP_REC_PACK_ADDR, &a, sizeof(a), frames, tail_len);
}

static int append_jit(struct cap_writer *w, uint32_t name_len, const char *name,
		      size_t tail_len)
{
	struct cap_pack_jit j = {
		.start = 0x7f0000001000, .size = 0x33c, .time = 123456789, .pid = 4242,
		.name_len = name_len,
	};

	return cap_writer__append(w, CAP_REC_PACK_JIT, &j, sizeof(j), name, tail_len);
}

Test(format_pack, round_trip_exact)
{
	static const char name[] = "JS:*hotLoop /tmp/hot.js:1:17";
	struct cap_record rec;
	struct capgen_mem c;

	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_PACK_OBJECT, &obj, sizeof(obj), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_PACK_SYMBOL, &sym, sizeof(sym), NULL, 0), 0);
	cr_assert_eq(append_addr(c.w, 3, sizeof(frames)), 0);
	cr_assert_eq(append_addr(c.w, 0, 0), 0);
	cr_assert_eq(append_jit(c.w, strlen(name), name, strlen(name)), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_PACK_INFO, &info, sizeof(info), NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);

	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_PACK_OBJECT);
	cr_assert_eq(rec.size, 4 + 32);
	cr_assert_eq(memcmp(&rec.pack_object, &obj, sizeof(obj)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_PACK_SYMBOL);
	cr_assert_eq(memcmp(&rec.pack_symbol, &sym, sizeof(sym)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_PACK_ADDR);
	cr_assert_eq(rec.size, 4 + 24 + 36);
	cr_assert_eq(rec.pack_addr.offset, 0x1133);
	cr_assert_eq(rec.pack_addr.nr, 3);
	cr_assert_eq(memcmp(rec.frames, frames, sizeof(frames)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.pack_addr.nr, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_PACK_JIT);
	cr_assert_eq(rec.pack_jit.pid, 4242);
	cr_assert_eq(rec.pack_jit.time, 123456789);
	cr_assert_str_eq(rec.tail, name);
	cr_assert_eq(rec.tail_len, strlen(name));
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_PACK_INFO);
	cr_assert_eq(memcmp(&rec.pack_info, &info, sizeof(info)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_str_eq(cap_rec_type_name(CAP_REC_PACK_ADDR), "pack_addr");
	cr_assert_eq(cap_reader__type_count(c.r, CAP_REC_PACK_ADDR), 2);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	cr_assert_not(cap_reader__stats(c.r)->recovered);
	capgen_mem_free(&c);
}

/* §4.0 rule 5: a tail that claims more than the record holds, or more
 * frames or name bytes than the limits, is a bad record: skipped, counted,
 * never decoded; the records after it still read. */
Test(format_pack, hostile_tails_are_bad_records)
{
	static char big[CAP_MAX_STRING + 1];
	struct cap_record rec;
	struct capgen_mem c;
	unsigned good = 0;

	memset(big, 'x', sizeof(big));
	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	cr_assert_eq(append_addr(c.w, 3, 2 * sizeof(frames[0])), 0); /* nr 3, 2 frames */
	cr_assert_eq(append_addr(c.w, 33, sizeof(frames)), 0);         /* over the limit */
	cr_assert_eq(append_jit(c.w, 10, "JS:a", 4), 0);               /* name runs out */
	cr_assert_eq(append_jit(c.w, sizeof(big), big, sizeof(big)), 0); /* 4097 bytes */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_PACK_INFO, &info, 60, NULL, 0), 0);
	cr_assert_eq(append_addr(c.w, 3, sizeof(frames)), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	while (capgen_mem_next(&c, &rec) == 1) {
		cr_assert_eq(rec.type, CAP_REC_PACK_ADDR);
		cr_assert_eq(memcmp(rec.frames, frames, sizeof(frames)), 0);
		good++;
	}
	cr_assert_eq(good, 1);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 5);
	cr_assert(cap_reader__stats(c.r)->recovered);
	capgen_mem_free(&c);
}

/* §5.3: past the size limit a pack still ends with its PACK_INFO. */
Test(format_pack, info_fits_past_the_size_limit)
{
	struct cap_writer_opts wo = { .max_size = 64 << 10, .block_size = 4096 };
	struct capgen_mem c;
	int err = 0;

	cr_assert_eq(capgen_mem_begin(&c, &wo), 0);
	while (!err)
		err = append_addr(c.w, 3, sizeof(frames));
	cr_assert_eq(err, CAP_ERR_FULL);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_PACK_INFO, &info, sizeof(info), NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_leq(c.len, 64 << 10);
	cr_assert_eq(cap_reader__type_count(c.r, CAP_REC_PACK_INFO), 0, "not read yet");
	while (capgen_mem_next(&c, &(struct cap_record){ 0 }) == 1)
		;
	cr_assert_eq(cap_reader__type_count(c.r, CAP_REC_PACK_INFO), 1);
	capgen_mem_free(&c);
}
