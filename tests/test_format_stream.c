// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * format/: a capture read as a stream (FORMAT.md §5.6), in one pass and in
 * chunks of any size, reads exactly as the same bytes in memory: the same
 * records, statistics, loss and refusals, whole, cut at every offset, with
 * any bit flipped, and for inputs made to hit each of the stream reader's
 * cases (a trailer magic it must look 64 MiB past, damage it must search
 * through, frames that are not blocks, a read error). And it decodes each
 * block as soon as the block has arrived.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/stream_compare.h"
#include "tests/util_capgen.h"

/* The same reading from memory and as streams chunked three ways. */
static void check_same(const uint8_t *buf, size_t len, const char *what)
{
	static const size_t chunks[] = { 1, 7, 100000 };
	struct sc_reading a, b;
	struct sc_feed f;
	const char *diff;
	size_t i;

	sc_read_mem(buf, len, &a);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		f = (struct sc_feed){ .buf = buf, .len = len, .max_chunk = chunks[i],
				      .seed = len + i };
		cr_assert_eq(sc_read_stream(&f, &b), 0);
		diff = sc_diff(&a, &b);
		cr_assert_null(diff, "%s, chunks of up to %zu: %s differs (file: %s; stream: %s)",
			       what, chunks[i], diff, a.loss, b.loss);
	}
}

static uint8_t *capture(const struct capgen_opts *o, size_t *len)
{
	uint8_t *buf;

	cr_assert_eq(capgen_write_mem(o, &buf, len, NULL), 0);
	return buf;
}

/* Where the blocks of a capture are: frame offsets, then the trailer's. */
static size_t block_starts(const uint8_t *buf, size_t len, uint64_t *start, size_t max)
{
	struct cap_record rec;
	struct cap_reader *r;
	struct cap_footer ft;
	size_t n = 0;

	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	while (cap_reader__next(r, &rec) == 1) {
		if (rec.type == CAP_REC_BLOCK && n < max)
			start[n++] = rec.file_offset;
	}
	cap_reader__close(r);
	memcpy(&ft, buf + len - sizeof(ft), sizeof(ft));
	start[n] = len - ft.frame_size;
	return n;
}

/* buf with ins put at `at` (a new buffer). */
static uint8_t *spliced(const uint8_t *buf, size_t len, size_t at, const void *ins,
		       size_t ins_len, size_t *out_len)
{
	uint8_t *p = malloc(len + ins_len);

	cr_assert_not_null(p);
	memcpy(p, buf, at);
	memcpy(p + at, ins, ins_len);
	memcpy(p + at + ins_len, buf + at, len - at);
	*out_len = len + ins_len;
	return p;
}

/* A skippable frame of `size` bytes in all (magic, size, payload). */
static uint8_t *skippable(uint32_t magic, size_t size, uint8_t fill)
{
	uint8_t *p = malloc(size);
	uint32_t n = size - 8;

	cr_assert_not_null(p);
	memcpy(p, &magic, 4);
	memcpy(p + 4, &n, 4);
	memset(p + 8, fill, size - 8);
	return p;
}

static const uint32_t trailer_magic = CAP_SKIP_MAGIC_TRAILER;

Test(format_stream, every_cut_reads_as_the_file)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	size_t len, cut;
	uint8_t *buf, *copy;
	char what[64];

	buf = capture(&o, &len);
	for (cut = 0; cut <= len; cut++) {
		copy = malloc(cut ? cut : 1);
		memcpy(copy, buf, cut);
		snprintf(what, sizeof(what), "cut at %zu of %zu", cut, len);
		check_same(copy, cut, what);
		free(copy);
	}
	cr_log_info("%zu cuts of a %zu-byte capture read alike", len + 1, len);
	free(buf);
}

Test(format_stream, every_flipped_byte_reads_as_the_file)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	size_t len, i;
	uint8_t *buf;
	char what[64];

	buf = capture(&o, &len);
	for (i = 0; i < len; i++) {
		buf[i] ^= 1u << (i % 8);
		snprintf(what, sizeof(what), "bit %zu of byte %zu flipped", i % 8, i);
		check_same(buf, len, what);
		buf[i] ^= 1u << (i % 8);
	}
	free(buf);
}

/* Inputs made for the stream reader's cases, each also read as a file. */
Test(format_stream, made_inputs_read_as_the_file)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	uint64_t start[128];
	uint8_t *buf, *x, *y, *fr, junk[4096];
	size_t len, xl, yl, n, i;

	buf = capture(&o, &len);
	n = block_starts(buf, len, start, 127);
	cr_assert_geq(n, 5);
	/* a later minor's frame holding the trailer magic, between blocks:
	 * the stream reads to its end to rule it out as the data end */
	fr = skippable(0x184D2A50, 64, 0x5e);
	memcpy(fr + 20, &trailer_magic, 4);
	x = spliced(buf, len, start[2], fr, 64, &xl);
	check_same(x, xl, "trailer magic inside a frame of a later minor");
	free(x);
	/* the same cut before the end: then it is no data end either */
	x = spliced(buf, start[4], start[2], fr, 64, &xl);
	check_same(x, xl, "... and cut after it");
	free(x);
	free(fr);
	/* a stray trailer frame between blocks */
	fr = skippable(CAP_SKIP_MAGIC_TRAILER, 200, 0);
	x = spliced(buf, len, start[3], fr, 200, &xl);
	check_same(x, xl, "stray trailer");
	free(x);
	x = spliced(buf, len, start[3], fr, 4, &xl);
	check_same(x, xl, "stray trailer magic alone");
	free(x);
	free(fr);
	/* two captures back to back: a header frame mid-stream */
	x = spliced(buf, len, len, buf, len, &xl);
	check_same(x, xl, "two captures concatenated");
	y = spliced(x, xl - 100, start[1], junk, 0, &yl);
	check_same(y, yl, "... cut in the second one's blocks");
	free(x);
	free(y);
	/* damage without a magic, then more than 64 false frame starts */
	memset(junk, 0xa5, sizeof(junk));
	x = spliced(buf, len, start[2], junk, sizeof(junk), &xl);
	check_same(x, xl, "4 KiB of garbage between blocks");
	y = spliced(x, start[2] + sizeof(junk), 0, "", 0, &yl);
	check_same(y, yl, "garbage to the end of the stream");
	free(x);
	free(y);
	for (i = 0; i + 8 <= sizeof(junk); i += 8)
		memcpy(junk + i, "\x28\xb5\x2f\xfd\x00\x01\x02\x03", 8);
	x = spliced(buf, len, start[2], junk, sizeof(junk), &xl);
	check_same(x, xl, "512 false frame starts");
	free(x);
	free(buf);
}

/* A trailer magic the stream must look 64 MiB past: then its window spans
 * that much, and still reads as the file. */
Test(format_stream, trailer_magic_ruled_out_64_mib_later, .timeout = 120)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	const size_t big = CAP_MAX_FRAME_SIZE, nbig = 9;
	uint64_t start[128];
	uint8_t *buf, *x, *fr;
	size_t len, xl, i, at;
	struct sc_reading a;

	buf = capture(&o, &len);
	block_starts(buf, len, start, 127);
	at = start[1];
	x = malloc(len + 64 + nbig * big);
	cr_assert_not_null(x);
	memcpy(x, buf, at);
	fr = skippable(0x184D2A50, 64, 0);
	memcpy(fr + 8, &trailer_magic, 4);
	memcpy(x + at, fr, 64);
	free(fr);
	fr = skippable(0x184D2A51, big, 0x11);
	for (i = 0; i < nbig; i++)
		memcpy(x + at + 64 + i * big, fr, big);
	free(fr);
	xl = at + 64 + nbig * big;
	memcpy(x + xl, buf + at, len - at);
	xl += len - at;
	check_same(x, xl, "trailer magic 72 MiB before the end");
	sc_read_mem(x, xl, &a);
	/* frames of a later minor up to 8 MiB are skipped, not damage; the
	 * trailer's block offsets are off by what was put in */
	cr_assert_eq(a.st.bad_blocks, 0);
	cr_assert_eq(a.st.bytes_skipped, 0);
	cr_assert(a.st.has_trailer);
	free(x);
	free(buf);
}

/* FORMAT.md §5.4 step 3: a frame of a later minor larger than 8 MiB is
 * damage (so a stream need not hold more to know whether it fits). */
Test(format_stream, frame_of_a_later_minor_is_at_most_8_mib)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	uint64_t start[128];
	uint8_t *buf, *x, *fr;
	size_t len, xl, n, sizes[2] = { CAP_MAX_FRAME_SIZE, CAP_MAX_FRAME_SIZE + 1 };
	struct sc_reading a, clean;
	int i;

	buf = capture(&o, &len);
	n = block_starts(buf, len, start, 127);
	sc_read_mem(buf, len, &clean);
	for (i = 0; i < 2; i++) {
		fr = skippable(0x184D2A52, sizes[i], 0);
		x = spliced(buf, len, start[2], fr, sizes[i], &xl);
		check_same(x, xl, i ? "a frame of 8 MiB + 1" : "a frame of 8 MiB");
		sc_read_mem(x, xl, &a);
		cr_assert_eq(a.st.blocks, n - (i ? 0 : 0), "%zu", sizes[i]);
		cr_assert_eq(a.st.bad_blocks, i, "%zu", sizes[i]);
		cr_assert_eq(a.st.first_error, i ? CAP_ERR_TOO_LARGE : 0);
		/* the 8 MiB + 1 frame is skipped by the search for the next
		 * frame magic: every block still reads */
		cr_assert_eq(a.records, clean.records, "%zu", sizes[i]);
		free(fr);
		free(x);
	}
	free(buf);
}

static void replay_dir(const char *sub)
{
	const char *src = getenv("STKREC_SRCDIR") ? getenv("STKREC_SRCDIR") : ".";
	char dir[600], path[1200];
	struct dirent *de;
	size_t n = 0, len;
	uint8_t *buf;
	DIR *d;
	int fd;

	snprintf(dir, sizeof(dir), "%s/%s", src, sub);
	d = opendir(dir);
	cr_assert_not_null(d, "%s missing (STKREC_SRCDIR?)", dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY);
		cr_assert_geq(fd, 0, "%s", path);
		buf = capgen_slurp_fd(fd, &len);
		close(fd);
		cr_assert_not_null(buf, "%s", path);
		check_same(buf, len, path);
		free(buf);
		n++;
	}
	closedir(d);
	cr_assert_gt(n, 0, "%s: no inputs", dir);
	cr_log_info("%s: %zu inputs read alike", sub, n);
}

Test(format_stream, fuzz_corpus_reads_as_the_file, .timeout = 300)
{
	replay_dir("tests/fuzz/corpus/fuzz_reader");
	replay_dir("tests/fuzz/regressions");
}

/* Bytes a feed had handed out when each block's BLOCK record came back. */
Test(format_stream, each_block_decoded_once_it_arrived)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct cap_stream_opts so = { .read_fn = sc_feed_read };
	struct sc_feed f = { .max_chunk = 1 };
	uint64_t start[128], end;
	struct cap_stream *s;
	struct cap_record rec;
	struct cap_reader *r;
	size_t len, n, k = 0, exact = 0;
	uint8_t *buf;

	buf = capture(&o, &len);
	n = block_starts(buf, len, start, 127);
	f.buf = buf;
	f.len = len;
	so.read_ctx = &f;
	cr_assert_eq(cap_stream__new(0, &so, &s), 0);
	cr_assert_eq(cap_reader__open_stream(s, &r), 0);
	/* the header alone, to open */
	cr_assert_eq(f.off, start[0]);
	while (cap_reader__next(r, &rec) == 1) {
		if (rec.type != CAP_REC_BLOCK)
			continue;
		cr_assert_eq(rec.file_offset, start[k]);
		end = start[k + 1];
		/* up to 3 bytes more when the last ones could begin a
		 * trailer magic (RFC 8878: the frame ends with its checksum) */
		cr_assert(f.off >= end && f.off <= end + 3, "block %zu ends at %lu: %zu bytes "
			  "read", k, (unsigned long)end, f.off);
		exact += f.off == end;
		k++;
	}
	cr_assert_eq(k, n);
	cr_assert_eq(f.off, len);
	cr_log_info("%zu blocks: %zu decoded with not a byte more read", n, exact);
	cap_reader__close(r);
	cap_stream__free(s);
	free(buf);
}

/* A read error ends the input there, and is what next() returns at the end:
 * the records before it read as a cut there does. */
Test(format_stream, read_error_ends_the_input)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct sc_reading a, b;
	struct sc_feed f;
	uint64_t start[128];
	size_t len, i;
	uint8_t *buf;

	buf = capture(&o, &len);
	block_starts(buf, len, start, 127);
	for (i = 1; i < 4; i++) {
		f = (struct sc_feed){ .buf = buf, .len = len, .max_chunk = 100, .seed = i,
				      .fail_at = start[i] + 10 };
		cr_assert_eq(sc_read_stream(&f, &b), 0);
		sc_read_mem(buf, start[i] + 10, &a);
		cr_assert_eq(b.open_err, 0);
		cr_assert_eq(b.next_err, -EIO);
		b.next_err = 0;
		cr_assert_null(sc_diff(&a, &b), "error at %lu: %s differs",
			       (unsigned long)start[i] + 10, sc_diff(&a, &b));
	}
	/* in the header: the open fails with it */
	f = (struct sc_feed){ .buf = buf, .len = len, .max_chunk = 3, .fail_at = 20 };
	cr_assert_eq(sc_read_stream(&f, &b), 0);
	cr_assert_eq(b.open_err, -EIO);
	free(buf);
}

/* A real pipe left non-blocking, written in bursts with pauses. */
Test(format_stream, nonblocking_pipe)
{
	struct capgen_opts o = { .block_size = 512, .events = 30 };
	struct sc_reading a, b;
	struct cap_stream *s;
	struct cap_reader *r;
	size_t len, off;
	uint8_t *buf;
	int p[2], st;
	pid_t pid;

	buf = capture(&o, &len);
	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		close(p[0]);
		for (off = 0; off < len; off += 1000) {
			if (write(p[1], buf + off, len - off < 1000 ? len - off : 1000) < 0)
				_exit(1);
			usleep(2000);
		}
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	sc_read_mem(buf, len, &a);
	memset(&b, 0, sizeof(b));
	cr_assert_eq(cap_stream__new(p[0], NULL, &s), 0);
	b.open_err = cap_reader__open_stream(s, &r);
	cr_assert_eq(b.open_err, 0, "%s", cap_strerror(b.open_err));
	sc_read(r, &b);
	cap_stream__free(s);
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_null(sc_diff(&a, &b), "%s differs", sc_diff(&a, &b));
	cr_assert_not(b.st.recovered);
	free(buf);
}

/* A newer major version, refused, still names its version. */
Test(format_stream, refusal_names_the_version)
{
	struct capgen_opts o = { .events = 2 };
	struct sc_feed f = { .max_chunk = 5 };
	struct sc_reading b;
	uint8_t *buf;
	size_t len;
	uint16_t major = 2;
	uint32_t crc;

	buf = capture(&o, &len);
	memcpy(buf + 8 + 8, &major, 2);
	crc = cap_crc32(0, buf + 8, *(uint32_t *)(buf + 4) - 4);
	memcpy(buf + 8 + *(uint32_t *)(buf + 4) - 4, &crc, 4);
	f.buf = buf;
	f.len = len;
	check_same(buf, len, "major 2");
	cr_assert_eq(sc_read_stream(&f, &b), 0);
	cr_assert_eq(b.open_err, CAP_ERR_VERSION);
	cr_assert_eq(b.version_err, 0);
	cr_assert_eq(b.major, 2);
	cr_assert_eq(b.minor, CAP_VERSION_MINOR);
	free(buf);
}
