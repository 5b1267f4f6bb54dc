// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/ 1.6: the TRIGGER record of a flight recorder's dump (FORMAT.md
 * §4.26): read back field for field, refused when short, of an unknown
 * kind or with a window that ends before it starts (§4.0 rule 7), a newer
 * minor's longer record read, and room for it past the size limit. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

/* A WAIT trigger with every field set to a value of its own. */
static const struct cap_trigger wait_trigger = {
	.time = 3187000000, .window_start = 1000000000, .window_end = 4187000000,
	.wait_start = 2374700000, .wait_duration = 812300000, .threshold = 500000000,
	.post = 1000000000, .kind = CAP_TRIGGER_WAIT, .tid = 1234, .pid = 1200,
	.ustack = 7, .kstack = 8, .triggers = 3, .dump = 2,
};

static void append(struct capgen_mem *c, const struct cap_trigger *t, size_t len)
{
	cr_assert_eq(cap_writer__append(c->w, CAP_REC_TRIGGER, t, len, NULL, 0), 0);
}

Test(format_trigger, read_back_whole)
{
	struct cap_record rec;
	struct capgen_mem c;
	int ret;

	cr_assert_eq(CAP_VERSION_MINOR, 6);
	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	append(&c, &wait_trigger, sizeof(wait_trigger));
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(cap_reader__header(c.r)->minor, 6);
	/* §4.1: a timed record, the block's first: its time is first_time */
	cr_assert_eq(cap_reader__next(c.r, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_BLOCK);
	cr_assert_eq(rec.block.first_time, wait_trigger.time);
	cr_assert_eq(cap_reader__next(c.r, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_TRIGGER);
	cr_assert_eq(rec.size, 4 + 88);
	cr_assert_eq(memcmp(&rec.trigger, &wait_trigger, sizeof(wait_trigger)), 0);
	while ((ret = cap_reader__next(c.r, &rec)) == 1)
		;
	cr_assert_eq(ret, 0);
	cr_assert_eq(cap_reader__type_count(c.r, CAP_REC_TRIGGER), 1);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	cr_assert_not(cap_reader__stats(c.r)->recovered);
	capgen_mem_free(&c);
}

/* Each refusal of §4.26 alone, then the one good record between them:
 * only it comes back, the others are counted as malformed. */
Test(format_trigger, hostile_records_refused_and_counted)
{
	static const size_t short_lens[] = { 0, 56, 87 };
	static const uint32_t bad_kinds[] = { 0, 4, UINT32_MAX };
	struct cap_trigger t = wait_trigger, edge = wait_trigger;
	struct cap_record rec;
	struct capgen_mem c;
	char loss[128];
	size_t i;

	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	for (i = 0; i < 3; i++)
		append(&c, &wait_trigger, short_lens[i]);
	for (i = 0; i < 3; i++) {
		t.kind = bad_kinds[i];
		append(&c, &t, sizeof(t));
	}
	t = wait_trigger;
	t.window_start = t.window_end + 1;
	append(&c, &t, sizeof(t));
	edge.kind = CAP_TRIGGER_SIGNAL;
	edge.window_start = edge.window_end; /* an empty window is one */
	append(&c, &edge, sizeof(edge));
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_TRIGGER);
	cr_assert_eq(memcmp(&rec.trigger, &edge, sizeof(edge)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 7);
	cr_assert_eq(cap_reader__type_count(c.r, CAP_REC_TRIGGER), 1);
	cr_assert(cap_reader__stats(c.r)->recovered);
	cr_assert_str_eq(cap_reader__describe_loss(c.r, loss, sizeof(loss)),
			 "7 malformed records skipped");
	capgen_mem_free(&c);
}

/* §4.0 rule 4: a newer minor's longer TRIGGER reads, its extra bytes
 * ignored. */
Test(format_trigger, newer_minor_longer_record_read)
{
	uint8_t longer[88 + 8];
	struct cap_record rec;
	struct capgen_mem c;

	memcpy(longer, &wait_trigger, 88);
	memset(longer + 88, 0xee, 8);
	cr_assert_eq(capgen_mem_begin(&c, NULL), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_TRIGGER, longer, sizeof(longer), NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.size, 4 + 96);
	cr_assert_eq(memcmp(&rec.trigger, &wait_trigger, sizeof(wait_trigger)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	capgen_mem_free(&c);
}

/* §5.3: a full dump still says why it was written. */
Test(format_trigger, fits_past_the_size_limit)
{
	struct cap_writer_opts wo = { .max_size = 20000, .block_size = 4096 };
	struct cap_record rec;
	struct capgen_mem c;
	unsigned i = 0;
	int err = 0;

	cr_assert_eq(capgen_mem_begin(&c, &wo), 0);
	while (!err && i < 100000)
		err = capgen_events(c.w, i++, 1);
	cr_assert_eq(err, CAP_ERR_FULL);
	append(&c, &wait_trigger, sizeof(wait_trigger));
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_leq(c.len, 20000);
	while (capgen_mem_next(&c, &rec) == 1)
		;
	cr_assert_eq(cap_reader__type_count(c.r, CAP_REC_TRIGGER), 1);
	capgen_mem_free(&c);
}
