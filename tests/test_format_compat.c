// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/: forward compatibility and record validation (FORMAT.md §3.2,
 * §4.0): unknown types skipped, short records refused, long records and
 * newer minors read, newer majors and unknown incompatible features refused. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

/* Fixed OFFCPU records (§4.11): these tests edit record sizes and bytes. */
static void cap_begin(struct capgen_mem *c)
{
	static const struct cap_writer_opts wo = { .fixed_offcpu = true };

	cr_assert_eq(capgen_mem_begin(c, &wo), 0);
}

Test(format_compat, unknown_types_skipped_and_counted)
{
	uint8_t junk[37] = { 1, 2, 3 };
	struct cap_record rec;
	struct cap_offcpu oc;
	struct capgen_mem c;

	cap_begin(&c);
	capgen_offcpu(1, &oc);
	cr_assert_eq(cap_writer__append(c.w, 200, junk, sizeof(junk), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &oc, sizeof(oc), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, 31, NULL, 0, NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_OFFCPU);
	cr_assert_eq(memcmp(&rec.offcpu, &oc, sizeof(oc)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->unknown_records, 2);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	cr_assert_not(cap_reader__stats(c.r)->recovered, "unknown types are not loss");
	capgen_mem_free(&c);
}

Test(format_compat, short_record_counted_never_decoded)
{
	struct cap_record rec;
	struct cap_offcpu oc;
	struct capgen_mem c;

	cap_begin(&c);
	capgen_offcpu(2, &oc);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &oc, 36, NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_END, &oc, 0, NULL, 0), 0);
	cr_assert_eq(cap_writer__totals(c.w)->events[CAP_KIND_OFFCPU], 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &oc, sizeof(oc), NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.size, 4 + sizeof(struct cap_offcpu));
	cr_assert_eq(rec.offcpu.duration, oc.duration);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 2);
	cr_assert_eq(cap_reader__stats(c.r)->counted.events[CAP_KIND_OFFCPU], 1);
	cr_assert_not(cap_reader__stats(c.r)->has_end);
	cr_assert(cap_reader__stats(c.r)->recovered);
	capgen_mem_free(&c);
}

/* A 40-byte OFFCPU, as 1.0 and 1.1 wrote it: read whole, `open` 0. */
Test(format_compat, offcpu_of_1_1_reads_open_as_0)
{
	struct cap_record rec;
	struct cap_offcpu oc;
	struct capgen_mem c;

	cap_begin(&c);
	capgen_offcpu(2, &oc);
	oc.open = CAP_OFFCPU_OPEN_END; /* not written: past the 40 bytes */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &oc, CAP_OFFCPU_SIZE_1_1, NULL, 0),
		     0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.size, 4 + CAP_OFFCPU_SIZE_1_1);
	cr_assert_eq(rec.offcpu.duration, oc.duration);
	cr_assert_eq(rec.offcpu.kstack, oc.kstack);
	cr_assert_eq(rec.offcpu.open, 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	capgen_mem_free(&c);
}

Test(format_compat, long_record_extra_bytes_ignored)
{
	uint8_t big[sizeof(struct cap_cpu) + 12];
	struct cap_record rec;
	struct cap_cpu cpu;
	struct capgen_mem c;

	cap_begin(&c);
	capgen_cpu(3, &cpu);
	memcpy(big, &cpu, sizeof(cpu));
	memset(big + sizeof(cpu), 0xee, 12);   /* fields of a future minor */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_CPU, big, sizeof(big), NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.size, 4 + sizeof(big));
	cr_assert_eq(memcmp(&rec.cpu, &cpu, sizeof(cpu)), 0);
	cr_assert_eq(rec.raw[sizeof(cpu)], 0, "no byte past the known struct leaks in");
	cr_assert_not(cap_reader__stats(c.r)->recovered);
	capgen_mem_free(&c);
}

Test(format_compat, tail_follows_newer_fixed_fields)
{
	/* a future STRING with 4 more fixed bytes: the tail is still the last
	 * `len` bytes of the record */
	uint8_t fixed[12] = { 7, 0, 0, 0, 5, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd };
	uint8_t kfixed[sizeof(struct cap_ksym) + 8];
	struct cap_ksym ks;
	struct cap_record rec;
	struct capgen_mem c;

	cap_begin(&c);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_STRING, fixed, sizeof(fixed), "hello", 5), 0);
	capgen_ksym(&ks);
	ks.name_len = 3;
	memset(kfixed, 0x55, sizeof(kfixed));
	memcpy(kfixed, &ks, sizeof(ks));
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_KSYM, kfixed, sizeof(kfixed), "foo", 3), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.string.id, 7);
	cr_assert_eq(rec.tail_len, 5);
	cr_assert_str_eq(rec.tail, "hello");
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.ksym.addr, ks.addr);
	cr_assert_str_eq(rec.tail, "foo");
	capgen_mem_free(&c);
}

Test(format_compat, bad_tails_refused)
{
	struct cap_string s = { .id = 1, .len = 10 };
	struct cap_stack st = { .id = 2, .nr = 128, .kind = CAP_STACK_USER };
	struct cap_stack st2 = { .id = 3, .nr = 3, .kind = CAP_STACK_USER };
	struct cap_ksym ks = { .addr = 1, .name_len = 5000 };
	uint64_t ips[128] = { 0 };
	struct cap_record rec;
	struct capgen_mem c;

	cap_begin(&c);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_STRING, &s, sizeof(s), "short", 5), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_STACK, &st, sizeof(st), ips, sizeof(ips)), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_STACK, &st2, sizeof(st2), ips, 16), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_KSYM, &ks, sizeof(ks), "x", 1), 0);
	cr_assert_eq(cap_writer__string(c.w, 9, "ok", 2), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_STRING);
	cr_assert_str_eq(rec.tail, "ok");
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 4);
	capgen_mem_free(&c);
}

/* Rewrite the header's fixed fields through `edit` and fix its CRC. */
static void patch_header(uint8_t *buf, void (*edit)(struct cap_file_header *))
{
	uint32_t size, crc;
	struct cap_file_header fh;

	memcpy(&size, buf + 4, 4);
	memcpy(&fh, buf + 8, sizeof(fh));
	edit(&fh);
	memcpy(buf + 8, &fh, sizeof(fh));
	crc = cap_crc32(0, buf + 8, size - 4);
	memcpy(buf + 8 + size - 4, &crc, 4);
}

static void major9(struct cap_file_header *fh)
{
	fh->major = 9;
	fh->minor = 3;
}

static void incompat(struct cap_file_header *fh)
{
	fh->features = 0x00020000;
}

static void compat(struct cap_file_header *fh)
{
	fh->features = 0x00000004;
	fh->minor = 7;
}

Test(format_compat, newer_major_refused_and_named)
{
	struct cap_reader *r;
	char path[] = "/tmp/stkrec-fmt-XXXXXX";
	uint16_t major = 0, minor = 0;
	uint32_t feat = 1;
	uint8_t *buf;
	size_t len;
	int fd;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	patch_header(buf, major9);
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), CAP_ERR_VERSION);
	cr_assert_eq(cap_mem_version(buf, len, &major, &minor, &feat), 0);
	cr_assert_eq(major, 9);
	cr_assert_eq(minor, 3);
	cr_assert_eq(feat, 0);
	fd = mkstemp(path);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	cr_assert_eq(cap_reader__open(path, &r), CAP_ERR_VERSION);
	major = minor = 0;
	cr_assert_eq(cap_file_version(path, &major, &minor, NULL), 0);
	cr_assert_eq(major, 9);
	cr_assert_eq(minor, 3);
	unlink(path);
	free(buf);
}

Test(format_compat, unknown_incompatible_feature_refused)
{
	struct cap_reader *r;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	patch_header(buf, incompat);
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), CAP_ERR_FEATURE);
	free(buf);
}

Test(format_compat, newer_minor_and_compat_feature_read)
{
	struct capgen_readout ro;
	struct cap_reader *r;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	patch_header(buf, compat);
	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	cr_assert_eq(cap_reader__header(r)->minor, 7);
	cr_assert_eq(cap_reader__header(r)->features, 4);
	cap_reader__close(r);
	cr_assert_eq(capgen_read_mem(buf, len, &ro), 0);
	cr_assert_eq(ro.bad, 0);
	cr_assert_not(ro.st.recovered);
	free(buf);
}

/* buf (len bytes) with its header's fixed part resized to fixed bytes (the
 * bytes added set to fill) and its minor to minor, the CRC made to agree;
 * *nlen its length. */
static uint8_t *refix_header(const uint8_t *buf, size_t len, uint32_t fixed, uint16_t minor,
			     int fill, size_t *nlen)
{
	struct cap_file_header fh;
	uint32_t size, nsize, crc, old;
	size_t hend;
	uint8_t *nb;

	memcpy(&size, buf + 4, 4);
	memcpy(&fh, buf + 8, sizeof(fh));
	old = fh.fixed_size;
	hend = 8 + size;
	nsize = size - old + fixed;
	*nlen = len - old + fixed;
	nb = calloc(1, *nlen);
	cr_assert_not_null(nb);
	fh.fixed_size = fixed;
	fh.minor = minor;
	memcpy(nb, buf, 4);
	memcpy(nb + 4, &nsize, 4);
	memcpy(nb + 8, buf + 8, fixed < old ? fixed : old);
	memcpy(nb + 8, &fh, CAP_HEADER_MIN_FIXED);
	if (fixed > old)
		memset(nb + 8 + old, fill, fixed - old);
	memcpy(nb + 8 + fixed, buf + 8 + old, fh.cmdline_len);
	crc = cap_crc32(0, nb + 8, nsize - 4);
	memcpy(nb + 8 + nsize - 4, &crc, 4);
	memcpy(nb + 8 + nsize, buf + hend, len - hend);
	return nb;
}

Test(format_compat, larger_fixed_header_part_read)
{
	/* a newer minor appends 8 bytes to the header's fixed part */
	struct capgen_readout ro;
	struct cap_reader *r;
	uint8_t *buf, *nb;
	size_t len, nlen;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	nb = refix_header(buf, len, sizeof(struct cap_file_header) + 8, 1, 0x77, &nlen);
	cr_assert_eq(nlen, len + 8);
	cr_assert_eq(cap_reader__open_mem(nb, len + 8, &r), 0);
	cr_assert_str_eq(cap_reader__header(r)->hostname, "capgen-host");
	cr_assert_str_eq(cap_reader__header(r)->cmdline,
			 "stkrec record -a -o capgen.stkrec -- ./workload --fast");
	cap_reader__close(r);
	/* the trailer's bytes_file no longer matches: data intact, flagged */
	cr_assert_eq(capgen_read_mem(nb, len + 8, &ro), 0);
	cr_assert_eq(ro.bad, 0);
	cr_assert_eq(ro.count[CAP_REC_OFFCPU], 8);
	free(nb);
	free(buf);
}

/* A 1.2 header: a fixed part of 296 bytes, the command line right after
 * it. Its sampling fields (1.3) read as 0, "not said", whatever bytes
 * follow the fixed part. */
Test(format_compat, header_of_1_2_says_no_rate)
{
	struct cap_reader *r;
	uint8_t *buf, *nb;
	size_t len, nlen;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	nb = refix_header(buf, len, CAP_HEADER_FIXED_1_2, 2, 0, &nlen);
	cr_assert_eq(cap_reader__open_mem(nb, nlen, &r), 0);
	cr_assert_eq(cap_reader__header(r)->minor, 2);
	cr_assert_eq(cap_reader__header(r)->sample_clock, CAP_CLOCK_NONE);
	cr_assert_eq(cap_reader__header(r)->sample_flags, 0);
	cr_assert_eq(cap_reader__header(r)->sample_rate, 0);
	cr_assert_str_eq(cap_reader__header(r)->hostname, "capgen-host");
	cr_assert_str_eq(cap_reader__header(r)->cmdline,
			 "stkrec record -a -o capgen.stkrec -- ./workload --fast");
	cap_reader__close(r);
	free(nb);
	free(buf);
}

/* A 1.1 trailer (128-byte header, no kind 4): read as complete, its
 * wakeup totals 0. The capture is rewritten with its trailer cut to the
 * 1.1 layout (bytes_file, the frame size and the CRC made to agree). */
Test(format_compat, trailer_of_1_1_read)
{
	const size_t old = CAP_TRAILER_SIZE_1_1, cut = sizeof(struct cap_trailer_hdr) - old;
	struct cap_trailer_hdr th;
	struct cap_footer ft;
	struct cap_record rec;
	struct cap_reader *r;
	uint8_t *buf, *nb;
	size_t len, nlen, t, idx;
	uint32_t v;
	int ret;

	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	memcpy(&ft, buf + len - sizeof(ft), sizeof(ft));
	t = len - ft.frame_size;
	memcpy(&th, buf + t + 8, sizeof(th));
	cr_assert_eq(th.fixed_size, sizeof(th));
	idx = (size_t)th.nr_index * th.index_entry_size;
	nlen = len - cut;
	nb = malloc(nlen);
	cr_assert_not_null(nb);
	memcpy(nb, buf, t + 8);
	th.fixed_size = old;
	th.bytes_file = nlen;
	memcpy(nb + t + 8, &th, old);
	memcpy(nb + t + 8 + old, buf + t + 8 + sizeof(th), idx);
	v = 8 + old + idx + sizeof(ft) - 8;
	memcpy(nb + t + 4, &v, 4);
	ft.frame_size = v + 8;
	ft.crc = cap_crc32(0, nb + t + 8, old + idx);
	memcpy(nb + nlen - sizeof(ft), &ft, sizeof(ft));
	cr_assert_eq(cap_reader__open_mem(nb, nlen, &r), 0);
	while ((ret = cap_reader__next(r, &rec)) == 1)
		;
	cr_assert_eq(ret, 0);
	cr_assert(cap_reader__stats(r)->has_trailer, "the 1.1 trailer was refused");
	cr_assert_not(cap_reader__stats(r)->recovered, "%s", "totals disagree");
	cr_assert_eq(cap_reader__stats(r)->trailer.events[CAP_KIND_WAKEUP], 0);
	cr_assert_eq(cap_reader__stats(r)->trailer.events[CAP_KIND_OFFCPU], 8);
	cap_reader__close(r);
	free(nb);
	free(buf);
}

/* WAKEUP (§4.23): whole through the writer and the reader, counted as
 * kind 4 in both totals, the trailer's too. */
Test(format_compat, wakeup_round_trip_and_totals)
{
	struct cap_wakeup w = { .time = 1000, .tid = 5, .pid = 4, .waker_tid = 0, .cpu = 1,
				.flags = CAP_WAKEUP_F_SOFTIRQ | CAP_WAKEUP_F_IO, .kstack = 3,
				.io_major = 254, .io_minor = 0, .io_sector = 2048,
				.io_complete_time = 999 };
	struct cap_record rec;
	struct capgen_mem c;

	cap_begin(&c);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_WAKEUP, &w, sizeof(w), NULL, 0), 0);
	cr_assert_eq(cap_writer__totals(c.w)->events[CAP_KIND_WAKEUP], 1);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_WAKEUP);
	cr_assert_eq(memcmp(&rec.wakeup, &w, sizeof(w)), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->counted.events[CAP_KIND_WAKEUP], 1);
	cr_assert_eq(cap_reader__stats(c.r)->trailer.events[CAP_KIND_WAKEUP], 1);
	cr_assert_not(cap_reader__stats(c.r)->recovered);
	capgen_mem_free(&c);
}
