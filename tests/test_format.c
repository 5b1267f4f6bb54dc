// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/: writer -> reader round trips, block closing, totals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

Test(format_roundtrip, every_record_type_exact)
{
	struct capgen_info info;
	struct capgen_readout ro;
	uint8_t *buf;
	size_t len;
	unsigned t;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, &info), 0);
	cr_assert_eq(capgen_read_mem(buf, len, &ro), 0);
	cr_assert_eq(ro.bad, 0, "records differing from what was written: %u", ro.bad);
	for (t = CAP_REC_BLOCK; t <= CAP_REC_BLOCKDEV; t++)
		cr_assert_geq(ro.count[t], 1, "type %u missing", t);
	cr_assert_eq(ro.count[CAP_REC_STRING], 3);
	cr_assert_eq(ro.count[CAP_REC_STACK], 2);
	cr_assert_eq(ro.count[CAP_REC_OFFCPU], 8);
	cr_assert_eq(ro.count[CAP_REC_CPU], 8);
	cr_assert_eq(ro.count[CAP_REC_BIO], 8);
	cr_assert_eq(ro.count[CAP_REC_LOST], 3);
	cr_assert_eq(ro.count[CAP_REC_STAT], 1);
	cr_assert_eq(ro.count[CAP_REC_END], 1);
	cr_assert_eq(ro.events_seen, 0xff, "event indexes 0..7 all present once");
	cr_assert_eq(ro.records - ro.count[CAP_REC_BLOCK], info.records);
	cr_assert(ro.st.has_trailer);
	cr_assert(ro.st.has_end);
	cr_assert_not(ro.st.recovered);
	cr_assert_eq(ro.st.file_size, len);
	cr_assert_eq(info.file_size, len);
	free(buf);
}

Test(format_roundtrip, header_fields)
{
	struct cap_header want, got;
	struct cap_reader *r;
	uint8_t *buf;
	size_t len;

	capgen_header(&want);
	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	got = *cap_reader__header(r);
	cr_assert_eq(got.major, CAP_VERSION_MAJOR);
	cr_assert_eq(got.minor, CAP_VERSION_MINOR);
	cr_assert_eq(got.features, 0);
	cr_assert_eq(got.start_time, want.start_time);
	cr_assert_eq(got.start_realtime, want.start_realtime);
	cr_assert_eq(got.clock_offset, want.clock_offset);
	cr_assert_eq(got.ncpus, 2);
	cr_assert_eq(got.page_size, 4096);
	cr_assert_eq(got.recorder_pid, 999);
	cr_assert_str_eq(got.hostname, "capgen-host");
	cr_assert_str_eq(got.release, "6.18.0-capgen");
	cr_assert_str_eq(got.machine, "x86_64");
	cr_assert_str_eq(got.version, "0.1.0");
	cr_assert_str_eq(got.cmdline, want.cmdline);
	cap_reader__close(r);
	free(buf);
}

Test(format_roundtrip, long_strings_truncated_safely)
{
	struct cap_header h;
	struct cap_writer *w;
	struct cap_reader *r;
	char path[] = "/tmp/stkrec-fmt-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	capgen_header(&h);
	memset(h.hostname, 'h', sizeof(h.hostname));     /* no NUL at all */
	memset(h.cmdline, 'c', sizeof(h.cmdline));
	cr_assert_eq(cap_writer__fdopen(fd, &h, NULL, &w), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
	cr_assert_eq(cap_reader__open(path, &r), 0);
	cr_assert_eq(strlen(cap_reader__header(r)->hostname), 64);
	cr_assert_eq(strlen(cap_reader__header(r)->cmdline), 1023);
	cap_reader__close(r);
	unlink(path);
}

/* §3.1 (1.3): how CPU samples were taken, as written; reserved flag bits
 * neither written nor read. */
Test(format_roundtrip, sampling_rate)
{
	static const struct { uint32_t clock, flags; uint64_t rate, period; } c[] = {
		{ CAP_CLOCK_CPU, CAP_SAMPLE_FREQ, 97, 10309278 },
		{ CAP_CLOCK_CPU, CAP_SAMPLE_FREQ, 7, 142857143 },   /* rounded */
		{ CAP_CLOCK_CPU, 0, 250000, 250000 },
		{ CAP_CLOCK_CPU, 0xfffffffe, 250000, 250000 },      /* reserved bits */
		{ CAP_CLOCK_NONE, 0, 0, 0 },
	};
	const struct cap_header *got;
	struct cap_header h;
	struct cap_writer *w;
	struct cap_reader *r;
	char path[] = "/tmp/stkrec-fmt-XXXXXX";
	size_t i;
	int fd;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		fd = mkstemp(path);
		cr_assert_geq(fd, 0);
		capgen_header(&h);
		h.sample_clock = c[i].clock;
		h.sample_flags = c[i].flags;
		h.sample_rate = c[i].rate;
		cr_assert_eq(cap_writer__fdopen(fd, &h, NULL, &w), 0);
		cr_assert_eq(cap_writer__finish(w), 0);
		cr_assert_eq(cap_reader__open(path, &r), 0);
		got = cap_reader__header(r);
		cr_assert_eq(got->minor, CAP_VERSION_MINOR);
		cr_assert_eq(got->sample_clock, c[i].clock);
		cr_assert_eq(got->sample_flags, c[i].flags & CAP_SAMPLE_FREQ);
		cr_assert_eq(got->sample_rate, c[i].rate);
		cr_assert_eq(cap_sample_period(got->sample_flags, got->sample_rate), c[i].period);
		cr_assert_str_eq(got->cmdline, h.cmdline);
		cap_reader__close(r);
		unlink(path);
		strcpy(path, "/tmp/stkrec-fmt-XXXXXX");
	}
	cr_assert_eq(cap_sample_period(CAP_SAMPLE_FREQ, 0), 0);
	cr_assert_str_eq(cap_clock_name(CAP_CLOCK_CPU), "cpu-clock");
	cr_assert_null(cap_clock_name(CAP_CLOCK_NONE));
	cr_assert_null(cap_clock_name(2));
}

Test(format_roundtrip, many_blocks)
{
	struct capgen_opts o = { .block_size = 256, .events = 500 };
	struct capgen_info info;
	struct capgen_readout ro;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(capgen_write_mem(&o, &buf, &len, &info), 0);
	cr_assert_gt(info.totals.blocks, 100);
	cr_assert_eq(capgen_read_mem(buf, len, &ro), 0);
	cr_assert_eq(ro.bad, 0);
	cr_assert_eq(ro.count[CAP_REC_BLOCK], info.totals.blocks);
	cr_assert_eq(ro.st.blocks, info.totals.blocks);
	cr_assert_eq(ro.count[CAP_REC_OFFCPU], 500);
	cr_assert_eq(ro.count[CAP_REC_BIO], 500);
	cr_assert(ro.seq_ok, "BLOCK seq 0,1,2,... in file order");
	cr_assert_not(ro.st.recovered);
	free(buf);
}

Test(format_roundtrip, min_blocks_option)
{
	struct capgen_opts o = { .min_blocks = 7 };
	struct capgen_info info;
	struct capgen_readout ro;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(capgen_write_mem(&o, &buf, &len, &info), 0);
	cr_assert_geq(info.totals.blocks, 7);
	cr_assert_leq(info.totals.blocks, 8);
	cr_assert_eq(capgen_read_mem(buf, len, &ro), 0);
	cr_assert_eq(ro.count[CAP_REC_OFFCPU], info.events);
	cr_assert_eq(ro.bad, 0);
	free(buf);
}

Test(format_roundtrip, totals_match_trailer)
{
	struct capgen_opts o = { .block_size = 1024, .events = 100 };
	struct capgen_info info;
	struct capgen_readout ro;
	const struct cap_totals *t, *c;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(capgen_write_mem(&o, &buf, &len, &info), 0);
	cr_assert_eq(capgen_read_mem(buf, len, &ro), 0);
	t = &ro.st.trailer;
	c = &ro.st.counted;
	cr_assert_eq(t->events[CAP_KIND_OFFCPU], 100);
	cr_assert_eq(t->events[CAP_KIND_CPU], 100);
	cr_assert_eq(t->events[CAP_KIND_BIO], 100);
	cr_assert_eq(t->events[CAP_KIND_SIDEBAND], 0);
	cr_assert_eq(t->lost[CAP_KIND_OFFCPU], CAPGEN_LOST_OFFCPU);
	cr_assert_eq(t->lost[CAP_KIND_CPU], CAPGEN_LOST_CPU);
	cr_assert_eq(t->lost[CAP_KIND_BIO], 0);
	cr_assert_eq(t->lost[CAP_KIND_SIDEBAND], CAPGEN_LOST_SIDEBAND);
	cr_assert_eq(t->records, info.records + t->blocks);
	cr_assert_eq(t->bytes_file, len);
	cr_assert_eq(t->end_time, CAPGEN_T0 + 100 * 1000000ull + 900000);
	cr_assert_eq(memcmp(t, c, sizeof(*t)), 0, "trailer totals == counted");
	cr_assert_eq(memcmp(t, &info.totals, offsetof(struct cap_totals, bytes_file)), 0);
	free(buf);
}

Test(format_roundtrip, lost_detail_and_type_counts)
{
	const struct cap_lost_detail *d;
	struct cap_record rec;
	struct cap_reader *r;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	while (cap_reader__next(r, &rec) == 1)
		;
	d = cap_reader__lost_detail(r);
	cr_assert_eq(d->count[CAP_KIND_OFFCPU][CAP_LOST_RINGBUF], CAPGEN_LOST_OFFCPU);
	cr_assert_eq(d->count[CAP_KIND_CPU][CAP_LOST_USTACK], CAPGEN_LOST_CPU);
	cr_assert_eq(d->count[CAP_KIND_SIDEBAND][CAP_LOST_SIDEBAND], CAPGEN_LOST_SIDEBAND);
	cr_assert_eq(d->count[CAP_KIND_CPU][CAP_LOST_RINGBUF], 0);
	cr_assert_eq(cap_reader__type_count(r, CAP_REC_STACK), 2);
	cr_assert_eq(cap_reader__type_count(r, CAP_REC_CPU), 8);
	cr_assert_eq(cap_reader__type_count(r, 4000), 0);
	cap_reader__close(r);
	free(buf);
}

Test(format_roundtrip, stack_depth_limits)
{
	uint64_t ips[CAP_MAX_STACK_DEPTH + 1];
	struct cap_record rec;
	struct cap_writer *w;
	struct cap_reader *r;
	struct cap_header h;
	uint8_t *buf;
	size_t len;
	int fd, i;

	for (i = 0; i <= CAP_MAX_STACK_DEPTH; i++)
		ips[i] = 0xffffffff81000000ull + i * 16;
	capgen_header(&h);
	fd = memfd_create("t", 0);
	cr_assert_eq(cap_writer__fdopen(dup(fd), &h, NULL, &w), 0);
	cr_assert_eq(cap_writer__stack(w, 9, CAP_STACK_KERNEL, ips, CAP_MAX_STACK_DEPTH), 0);
	cr_assert_eq(cap_writer__stack(w, 10, CAP_STACK_USER, ips, 0), 0);
	cr_assert_eq(cap_writer__stack(w, 11, CAP_STACK_USER, ips, CAP_MAX_STACK_DEPTH + 1),
		     CAP_ERR_INVAL);
	cr_assert_eq(cap_writer__finish(w), 0);
	buf = capgen_slurp_fd(fd, &len);
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	cr_assert_eq(cap_reader__next(r, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_BLOCK);
	cr_assert_eq(cap_reader__next(r, &rec), 1);
	cr_assert_eq(rec.stack.id, 9);
	cr_assert_eq(rec.stack.nr, CAP_MAX_STACK_DEPTH);
	cr_assert_eq(memcmp(rec.ips, ips, sizeof(ips[0]) * CAP_MAX_STACK_DEPTH), 0);
	cr_assert_eq(cap_reader__next(r, &rec), 1);
	cr_assert_eq(rec.stack.id, 10);
	cr_assert_eq(rec.stack.nr, 0);
	cr_assert_eq(cap_reader__next(r, &rec), 0);
	cr_assert_not(cap_reader__stats(r)->recovered);
	cap_reader__close(r);
	free(buf);
	close(fd);
}

Test(format_writer, block_closed_by_age_on_tick)
{
	struct cap_writer_opts wo = { .block_age_ns = 1000000000ull };
	struct cap_offcpu oc;
	struct cap_header h;
	struct cap_writer *w;
	int fd = memfd_create("t", 0);
	uint64_t size0;

	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(dup(fd), &h, &wo, &w), 0);
	size0 = cap_writer__file_size(w);
	capgen_offcpu(0, &oc);          /* start = CAPGEN_T0 */
	cr_assert_eq(cap_writer__append(w, CAP_REC_OFFCPU, &oc, sizeof(oc), NULL, 0), 0);
	cr_assert_eq(cap_writer__tick(w, CAPGEN_T0 + 999999999ull), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 0, "younger than the age limit");
	cr_assert_eq(cap_writer__file_size(w), size0);
	cr_assert_eq(cap_writer__tick(w, CAPGEN_T0 + 1000000000ull), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 1, "closed at exactly the age limit");
	cr_assert_gt(cap_writer__file_size(w), size0);
	/* an empty writer never writes empty blocks */
	cr_assert_eq(cap_writer__tick(w, CAPGEN_T0 + 5000000000ull), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 1);
	cap_writer__free(w);
	close(fd);
}

Test(format_writer, age_counts_from_last_tick_for_old_events)
{
	struct cap_writer_opts wo = { .block_age_ns = 1000 };
	struct cap_offcpu oc;
	struct cap_header h;
	struct cap_writer *w;
	int fd = memfd_create("t", 0);

	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(dup(fd), &h, &wo, &w), 0);
	cr_assert_eq(cap_writer__tick(w, CAPGEN_T0 + 50000), 0);
	/* a long sleep reported late: its start is older than the last tick */
	capgen_offcpu(0, &oc);
	cr_assert_eq(cap_writer__append(w, CAP_REC_OFFCPU, &oc, sizeof(oc), NULL, 0), 0);
	cr_assert_eq(cap_writer__tick(w, CAPGEN_T0 + 50999), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 0);
	cr_assert_eq(cap_writer__tick(w, CAPGEN_T0 + 51000), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 1);
	cap_writer__free(w);
	close(fd);
}

Test(format_writer, block_closed_by_size)
{
	struct cap_writer_opts wo = { .block_size = 1000, .fixed_offcpu = true };
	struct cap_header h;
	struct cap_writer *w;
	uint8_t *buf;
	size_t len;
	struct capgen_readout ro;
	int fd = memfd_create("t", 0);

	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(dup(fd), &h, &wo, &w), 0);
	/* BLOCK 20 + 6 triplets of 44 + 36 + 76 = 956; the 7th OFFCPU ends
	 * at exactly 1000, which closes the block */
	cr_assert_eq(capgen_events(w, 0, 7), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 1);
	cr_assert_eq(cap_writer__finish(w), 0);
	buf = capgen_slurp_fd(fd, &len);
	cr_assert_eq(capgen_read_mem(buf, len, &ro), 0);
	cr_assert_eq(ro.st.blocks, 2);
	cr_assert_eq(ro.max_block_raw <= 1000, 1, "no block above block_size: %zu",
		     ro.max_block_raw);
	cr_assert_eq(ro.count[CAP_REC_OFFCPU], 7);
	free(buf);
	close(fd);
}

Test(format_writer, invalid_arguments)
{
	struct cap_header h;
	struct cap_writer *w;
	char big[70000];
	int fd = memfd_create("t", 0);

	capgen_header(&h);
	cr_assert_eq(cap_writer__open(NULL, &h, NULL, &w), CAP_ERR_INVAL);
	cr_assert_eq(cap_writer__open("/nonexistent-dir/x", &h, NULL, &w), -ENOENT);
	cr_assert_eq(cap_writer__fdopen(fd, &h, NULL, &w), 0);
	cr_assert_eq(cap_writer__append(w, CAP_REC_BLOCK, big, 16, NULL, 0), CAP_ERR_INVAL);
	cr_assert_eq(cap_writer__append(w, CAP_REC_STRING, big, 8, big, 65530),
		     CAP_ERR_INVAL);
	cr_assert_eq(cap_writer__string(w, 1, big, CAP_MAX_STRING + 1), CAP_ERR_INVAL);
	cr_assert_eq(cap_writer__append(w, CAP_REC_STAT, NULL, 16, NULL, 0), CAP_ERR_INVAL);
	cr_assert_eq(cap_writer__totals(w)->records, 0);
	cr_assert_eq(cap_writer__finish(w), 0);
}

Test(format_writer, empty_capture_is_valid)
{
	struct cap_header h;
	struct cap_writer *w;
	struct cap_record rec;
	struct cap_reader *r;
	uint8_t *buf;
	size_t len;
	int fd = memfd_create("t", 0);

	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(dup(fd), &h, NULL, &w), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
	buf = capgen_slurp_fd(fd, &len);
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	cr_assert_eq(cap_reader__next(r, &rec), 0);
	cr_assert(cap_reader__stats(r)->has_trailer);
	cr_assert_not(cap_reader__stats(r)->recovered);
	cr_assert_eq(cap_reader__stats(r)->trailer.blocks, 0);
	cap_reader__close(r);
	free(buf);
	close(fd);
}

/* The little-endian u32 at buf + off. */
static uint32_t le32_at(const uint8_t *buf, size_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

Test(format_writer, zstd_cli_accepts_capture)
{
	char path[] = "/tmp/stkrec-fmt-XXXXXX", cmd[256];
	struct capgen_opts o = { .events = 200 };
	struct capgen_info info;
	const struct cap_trailer_hdr *th;
	const struct cap_footer *ft;
	struct cap_index_entry ie;
	uint8_t *cap, *out, *blk;
	size_t caplen, outlen, pos = 0, off, tstart;
	uint32_t i;
	int fd, outfd;

	if (access("/usr/bin/zstd", X_OK))
		cr_skip_test("needs /usr/bin/zstd (zstd)");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(capgen_write(path, &o, &info), 0);
	cap = capgen_slurp_fd(fd, &caplen);
	close(fd);
	cr_assert_gt(info.totals.blocks, 1, "several blocks, or the test shows little");
	snprintf(cmd, sizeof(cmd), "/usr/bin/zstd -q -t '%s'", path);
	cr_assert_eq(system(cmd), 0, "zstd -t rejected the capture");
	/*
	 * FORMAT.md §2: the header and trailer are skippable frames, so the
	 * decompressed stream is exactly the blocks' contents, concatenated in
	 * file order. Decode each block found in the trailer index (§6.2) with
	 * libzstd on its own and compare byte for byte with what zstd printed.
	 */
	outfd = memfd_create("zstd-out", 0);
	cr_assert_geq(outfd, 0);
	snprintf(cmd, sizeof(cmd), "/usr/bin/zstd -q -d -c '%s' >/proc/self/fd/%d", path, outfd);
	cr_assert_eq(system(cmd), 0);
	out = capgen_slurp_fd(outfd, &outlen);
	close(outfd);
	ft = (const struct cap_footer *)(cap + caplen - sizeof(*ft));
	cr_assert_eq(memcmp(ft->magic, CAP_FOOTER_MAGIC, 8), 0);
	tstart = caplen - ft->frame_size;
	cr_assert_eq(le32_at(cap, tstart), CAP_SKIP_MAGIC_TRAILER);
	th = (const struct cap_trailer_hdr *)(cap + tstart + 8);
	cr_assert_eq(th->nr_index, info.totals.blocks);
	off = le32_at(cap, 4) + 8;	/* the first block follows the header frame */
	for (i = 0; i < th->nr_index; i++) {
		memcpy(&ie, cap + tstart + 8 + th->fixed_size + (size_t)i * th->index_entry_size,
		       sizeof(ie));
		cr_assert_eq(ie.offset, off, "block %u starts where the previous one ended", i);
		cr_assert_eq(ZSTD_findFrameCompressedSize(cap + off, caplen - off), ie.csize);
		blk = malloc(ie.usize);
		cr_assert_eq(ZSTD_decompress(blk, ie.usize, cap + off, ie.csize), ie.usize,
			     "block %u", i);
		cr_assert_leq(pos + ie.usize, outlen, "zstd -dc printed less than block %u", i);
		cr_assert_eq(memcmp(out + pos, blk, ie.usize), 0, "block %u differs", i);
		free(blk);
		pos += ie.usize;
		off += ie.csize;
	}
	cr_assert_eq(off, tstart, "the blocks end where the trailer starts");
	cr_assert_eq(outlen, pos, "zstd -dc printed %zu bytes, the blocks hold %zu", outlen, pos);
	cr_assert_eq(outlen, info.totals.bytes_raw, "the trailer's bytes_raw (§6.1)");
	free(out);
	free(cap);
	unlink(path);
}

Test(format_writer, crc32_reference_value)
{
	cr_assert_eq(cap_crc32(0, "123456789", 9), 0xcbf43926u);
	cr_assert_eq(cap_crc32(0, "", 0), 0);
	cr_assert_eq(cap_crc32(cap_crc32(0, "1234", 4), "56789", 5), 0xcbf43926u);
}

Test(format_writer, untimed_block_ages_from_first_tick)
{
	struct cap_writer_opts wo = { .block_age_ns = 1000 };
	struct cap_header h;
	struct cap_writer *w;
	int fd = memfd_create("t", 0);

	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(dup(fd), &h, &wo, &w), 0);
	cr_assert_eq(cap_writer__string(w, 1, "x", 1), 0);
	cr_assert_eq(cap_writer__tick(w, 5000000), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 0, "age unknown until the first tick");
	cr_assert_eq(cap_writer__tick(w, 5000999), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 0);
	cr_assert_eq(cap_writer__tick(w, 5001000), 0);
	cr_assert_eq(cap_writer__totals(w)->blocks, 1);
	cap_writer__free(w);
	close(fd);
}
