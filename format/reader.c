// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capture reader, part 1: opening, the header (FORMAT.md §3) and the trailer
 * (§6). The file is hostile input: every length is checked against what is
 * left before it is used, and every size is capped (§7). A stream (stream.c)
 * comes here too: its header once read, its trailer once it ended.
 *
 * The three parts call one way: scan.c (frames and records) -> stream.c
 * (a stream's bytes as the scan asks for them) -> reader.c (this file:
 * what the other two start from), never back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "format/capture.h"
#include "format/internal.h"

/* A file shorter than the 8-byte frame header: our start, cut, or not ours. */
static int short_file_err(const uint8_t *buf, size_t len)
{
	uint8_t m[4];

	cap__put32(m, CAP_SKIP_MAGIC_HEADER);
	if (!len)
		return CAP_ERR_EMPTY;
	if (memcmp(buf, m, len < 4 ? len : 4))
		return CAP_ERR_BAD_MAGIC;
	return CAP_ERR_TRUNCATED;
}

/* §3 the stable prefix: frame magic, size, header magic, version, features.
 * On success *payload is the header payload and *size its length. */
static int header_prefix(const uint8_t *buf, size_t len, const uint8_t **payload,
			 uint32_t *size)
{
	uint32_t n;

	if (len < 8)
		return short_file_err(buf, len);
	if (cap__get32(buf) != CAP_SKIP_MAGIC_HEADER)
		return CAP_ERR_BAD_MAGIC;
	if (memcmp(buf + 8, CAP_HEADER_MAGIC, len - 8 < 8 ? len - 8 : 8))
		return CAP_ERR_BAD_MAGIC;
	n = cap__get32(buf + 4);
	if (n > CAP_MAX_HEADER_SIZE)
		return CAP_ERR_TOO_LARGE;
	if (len - 8 < n || len < 16)
		return CAP_ERR_TRUNCATED;
	if (n < CAP_HEADER_MIN_FIXED + 4)
		return CAP_ERR_CORRUPT;
	*payload = buf + 8;
	*size = n;
	return 0;
}

int cap_mem_version(const void *buf, size_t len, uint16_t *major,
		    uint16_t *minor, uint32_t *features)
{
	struct cap_file_header fh;
	const uint8_t *p;
	uint32_t n;
	int err;

	if (!buf && len)
		return CAP_ERR_INVAL;
	err = header_prefix(buf, len, &p, &n);
	if (err)
		return err;
	memcpy(&fh, p, CAP_HEADER_MIN_FIXED);
	if (major)
		*major = fh.major;
	if (minor)
		*minor = fh.minor;
	if (features)
		*features = fh.features;
	return 0;
}

static void copy_field(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	size_t n = strnlen(src, src_len);

	if (n >= dst_len)
		n = dst_len - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* §3.2 reader rules, in order: CRC, version, features, sizes. */
static int parse_header(struct cap_reader *r)
{
	struct cap_file_header fh;
	struct cap_header *h = &r->hdr;
	const uint8_t *p;
	uint32_t n, fixed;
	uint64_t cmd_end;
	int err;

	/* a stream has its first max(16, 8 + N) bytes here, or all of them */
	err = header_prefix(cap__at(r, 0), r->have, &p, &n);
	if (err)
		return err;
	if (cap_crc32(0, p, n - 4) != cap__get32(p + n - 4))
		return CAP_ERR_CORRUPT;
	memset(&fh, 0, sizeof(fh));
	memcpy(&fh, p, CAP_HEADER_MIN_FIXED);
	if (fh.major > CAP_VERSION_MAJOR || fh.major == 0)
		return CAP_ERR_VERSION;
	if (fh.features & CAP_FEAT_INCOMPAT_MASK & ~CAP_FEAT_KNOWN)
		return CAP_ERR_FEATURE;
	fixed = fh.fixed_size;
	cmd_end = (uint64_t)fixed + fh.cmdline_len;
	if (fixed < CAP_HEADER_MIN_FIXED || cmd_end > n - 4)
		return CAP_ERR_CORRUPT;
	/* fields appended by newer minors are ignored; missing ones read 0 */
	memcpy(&fh, p, fixed < sizeof(fh) ? fixed : sizeof(fh));

	memset(h, 0, sizeof(*h));
	h->major = fh.major;
	h->minor = fh.minor;
	h->features = fh.features;
	h->start_time = fh.start_time;
	h->start_realtime = fh.start_realtime;
	h->clock_offset = fh.clock_offset;
	h->ncpus = fh.ncpus;
	h->page_size = fh.page_size;
	h->recorder_pid = fh.recorder_pid;
	copy_field(h->hostname, sizeof(h->hostname), fh.hostname, sizeof(fh.hostname));
	copy_field(h->release, sizeof(h->release), fh.release, sizeof(fh.release));
	copy_field(h->machine, sizeof(h->machine), fh.machine, sizeof(fh.machine));
	copy_field(h->version, sizeof(h->version), fh.version, sizeof(fh.version));
	copy_field(h->cmdline, sizeof(h->cmdline), (const char *)p + fixed,
		   fh.cmdline_len);
	h->sample_clock = fh.sample_clock;
	h->sample_flags = fh.sample_flags & CAP_SAMPLE_FREQ;
	h->sample_rate = fh.sample_rate;
	r->data_start = 8 + (uint64_t)n;
	return 0;
}

/*
 * The trailer magic at t, which is where a footer says the trailer starts.
 * A stream may have let bytes before t go (stream.c keeps its last 16, and
 * everything from the scan position on), and then they were not that magic:
 * each was either searched for it and ruled out as the data end, which the
 * trailer starting there would make it, or lies more than the largest
 * trailer before the end, where this is never asked.
 */
static bool trailer_magic_at(const struct cap_reader *r, uint64_t t)
{
	return t >= r->base && cap__get32(cap__at(r, t)) == CAP_SKIP_MAGIC_TRAILER;
}

/* §5.4 step 5: the frame magics a damaged region is searched for (scan.c,
 * and stream.c as the bytes arrive). */
size_t cap__find_magic(const uint8_t *p, size_t n)
{
	uint8_t zm[4], tm[4];
	const uint8_t *a, *b;

	cap__put32(zm, CAP_ZSTD_MAGIC);
	cap__put32(tm, CAP_SKIP_MAGIC_TRAILER);
	/* the second search stops at the first hit: each byte is looked at
	 * about twice, however many damaged regions a large file has */
	a = memmem(p, n, zm, 4);
	b = memmem(p, (a ? (size_t)(a - p) + 3 : n), tm, 4);
	if (b)
		return b - p;
	if (a)
		return a - p;
	return n;
}

/* §6.4: find the trailer from the footer; on any inconsistency the trailer
 * is ignored (and reported), never trusted in part. */
static void parse_trailer(struct cap_reader *r)
{
	const size_t min = 8 + CAP_TRAILER_SIZE_1_1 + sizeof(struct cap_footer);
	struct cap_trailer_hdr th = { 0 };
	struct cap_footer ft;
	uint64_t t, payload, need;

	r->data_end = r->len;
	if (r->len < r->data_start + min)
		return;
	memcpy(&ft, cap__at(r, r->len - sizeof(ft)), sizeof(ft));
	if (memcmp(ft.magic, CAP_FOOTER_MAGIC, sizeof(ft.magic)))
		return;
	r->trailer_damaged = true;
	if (ft.frame_size < min || ft.frame_size > CAP_MAX_TRAILER_SIZE ||
	    ft.frame_size > r->len - r->data_start)
		return;
	t = r->len - ft.frame_size;
	payload = ft.frame_size - 8;
	if (!trailer_magic_at(r, t))
		return;
	/* the frame is where the footer says: block data ends there even if
	 * the trailer itself turns out damaged */
	r->trailer_at = t;
	r->data_end = t;
	if (cap__get32(cap__at(r, t + 4)) != payload ||
	    cap_crc32(0, cap__at(r, t + 8), payload - sizeof(ft)) != ft.crc)
		return;
	memcpy(&th, cap__at(r, t + 8), CAP_TRAILER_SIZE_1_1);
	need = (uint64_t)th.fixed_size + (uint64_t)th.nr_index * th.index_entry_size +
	       sizeof(ft);
	if (memcmp(th.magic, CAP_TRAILER_MAGIC, sizeof(th.magic)) ||
	    th.fixed_size < CAP_TRAILER_SIZE_1_1 ||
	    th.index_entry_size < sizeof(struct cap_index_entry) || need > payload)
		return;
	/* a 1.2 trailer's kind 4; an older one has none: 0 */
	if (th.fixed_size >= sizeof(th))
		memcpy(&th, cap__at(r, t + 8), sizeof(th));
	r->trailer_damaged = false;
	r->st.has_trailer = true;
	cap__totals_from_trailer(&th, &r->st.trailer);
	r->data_end = t;
}

void cap__input_ended(struct cap_reader *r)
{
	r->st.file_size = r->len;
	r->st.counted.bytes_file = r->len;
	parse_trailer(r);
}

int cap__reader_init(struct cap_reader *r)
{
	int err;

	err = parse_header(r);
	if (err)
		return err;
	if (r->ended)
		cap__input_ended(r);
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx)
		return -ENOMEM;
	/* §7: the decompression window is at most 8 MiB */
	if (ZSTD_isError(ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, 23)))
		return CAP_ERR_ZSTD;
	/* the scan (scan.c) starts at the first frame after the header */
	r->pos = r->cand = r->data_start;
	return 0;
}

/* A reader over the whole of r->buf (r->len bytes, all there): its header
 * and trailer read, into *out; closed on failure. */
static int reader_start(struct cap_reader *r, struct cap_reader **out)
{
	int err;

	r->have = r->len;
	r->ended = true;
	err = cap__reader_init(r);
	if (err) {
		cap_reader__close(r);
		return err;
	}
	cap__prefetch_start(r);
	*out = r;
	return 0;
}

int cap_reader__open_mem(const void *buf, size_t len, struct cap_reader **out)
{
	struct cap_reader *r;

	if ((!buf && len) || !out)
		return CAP_ERR_INVAL;
	if (!len)
		return CAP_ERR_EMPTY;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->buf = buf;
	r->len = len;
	return reader_start(r, out);
}

/* Map a regular file read-only. O_NONBLOCK: opening a FIFO must not wait
 * for a writer just to be refused. */
static int map_file(const char *path, const uint8_t **buf, uint64_t *len)
{
	struct stat sb;
	void *p;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		err = -errno;
	} else if (!S_ISREG(sb.st_mode)) {
		err = CAP_ERR_NOT_FILE;
	} else if (sb.st_size == 0) {
		err = CAP_ERR_EMPTY;
	} else if ((uint64_t)sb.st_size > SIZE_MAX) {
		err = CAP_ERR_TOO_LARGE;
	} else {
		p = mmap(NULL, sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
		} else {
			*buf = p;
			*len = sb.st_size;
		}
	}
	close(fd);
	return err;
}

int cap_reader__open(const char *path, struct cap_reader **out)
{
	struct cap_reader *r;
	int err;

	if (!path || !out)
		return CAP_ERR_INVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	err = map_file(path, &r->buf, &r->len);
	if (err) {
		cap_reader__close(r);
		return err;
	}
	r->mapped = true;
	r->drop = true;
	return reader_start(r, out);
}

int cap_file_version(const char *path, uint16_t *major, uint16_t *minor,
		     uint32_t *features)
{
	uint8_t buf[8 + CAP_HEADER_MIN_FIXED];
	struct stat sb;
	ssize_t n;
	int fd, err;

	if (!path)
		return CAP_ERR_INVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return CAP_ERR_NOT_FILE;
	}
	n = pread(fd, buf, sizeof(buf), 0);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	return cap__prefix_version(buf, n, major, minor, features);
}

int cap__prefix_version(const uint8_t *buf, size_t n, uint16_t *major,
			uint16_t *minor, uint32_t *features)
{
	/* only the prefix is needed: claim the full payload is present */
	if (n >= 8 + CAP_HEADER_MIN_FIXED && cap__get32(buf) == CAP_SKIP_MAGIC_HEADER &&
	    cap__get32(buf + 4) >= CAP_HEADER_MIN_FIXED + 4 &&
	    cap__get32(buf + 4) <= CAP_MAX_HEADER_SIZE &&
	    !memcmp(buf + 8, CAP_HEADER_MAGIC, 8)) {
		struct cap_file_header fh;

		memcpy(&fh, buf + 8, CAP_HEADER_MIN_FIXED);
		if (major)
			*major = fh.major;
		if (minor)
			*minor = fh.minor;
		if (features)
			*features = fh.features;
		return 0;
	}
	return cap_mem_version(buf, n, major, minor, features);
}

const struct cap_header *cap_reader__header(const struct cap_reader *r)
{
	return &r->hdr;
}

const struct cap_read_stats *cap_reader__stats(const struct cap_reader *r)
{
	return &r->st;
}

const struct cap_lost_detail *cap_reader__lost_detail(const struct cap_reader *r)
{
	return &r->lost;
}

uint64_t cap_reader__type_count(const struct cap_reader *r, uint16_t type)
{
	return type < 256 ? r->type_count[type] : 0;
}

int cap_reader__reopen(const struct cap_reader *r, struct cap_reader **out)
{
	struct cap_reader *c;

	if (!r || r->stream || !out)
		return CAP_ERR_INVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->buf = r->buf;
	c->len = r->len;
	c->drop = r->drop;
	return reader_start(c, out);
}

#define DROP_STEP (1u << 20) /* a madvise() per MiB read */

void cap__drop_behind(struct cap_reader *r)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), to;

	if (!r->drop || r->keep < r->dropped + DROP_STEP)
		return;
	to = r->keep & ~(page - 1);
	/* a private mapping of a file, never written: the pages refill
	 * from the file if read again, so this only frees memory */
	madvise((void *)(r->buf + r->dropped), to - r->dropped, MADV_DONTNEED);
	r->dropped = to;
}

void cap_reader__close(struct cap_reader *r)
{
	if (!r)
		return;
	cap__prefetch_stop(r); /* before the mapping it reads goes */
	if (r->mapped && r->buf)
		munmap((void *)r->buf, r->len);
	free(r->win);
	ZSTD_freeDCtx(r->dctx);
	free(r->block);
	free(r);
}
