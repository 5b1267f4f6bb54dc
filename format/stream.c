// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capture reader, part 3: a capture read from a stream (FORMAT.md §5.6), in
 * one pass, never seeked, with the result a file of the same bytes gives.
 *
 * A file reader knows two things up front that a stream learns only at its
 * end: the input's size, and the data end, where a trailer found from the
 * footer starts (§6.4). The scan asks for the bytes up to an offset
 * (cap__avail()); the stream is read until they are there and the data end
 * is known not to come before them. Only an offset holding the trailer magic
 * can be the data end, and only when the input ends within the largest
 * trailer after it: each such offset met is ruled out by reading that far
 * past it, or is the data end because the input ended sooner.
 *
 * A window holds the input from the scan position on (and the 16 bytes
 * before it: the footer, should the input end there); what the scan is past
 * goes. It spans one frame, or 8 MiB and 64 MiB more past a trailer magic.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "format/capture.h"
#include "format/internal.h"
#include "util/array.h"

#define READ_CHUNK (64u << 10)
#define KEEP_BEHIND ((uint64_t)sizeof(struct cap_footer))
/* a trailer, footer included, starts at most this far before the end */
#define TRAILER_SPAN ((uint64_t)CAP_MAX_TRAILER_SIZE)

struct cap_stream {
	int fd;
	struct cap_stream_opts opts;
	uint8_t head[8 + CAP_HEADER_MIN_FIXED]; /* the first bytes: the version */
	size_t head_len;
	bool used;
};

int cap_stream__new(int fd, const struct cap_stream_opts *opts, struct cap_stream **out)
{
	struct cap_stream *s;

	if (fd < 0 || !out)
		return CAP_ERR_INVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = fd;
	if (opts)
		s->opts = *opts;
	*out = s;
	return 0;
}

void cap_stream__free(struct cap_stream *s)
{
	free(s);
}

int cap_stream__version(const struct cap_stream *s, uint16_t *major, uint16_t *minor,
			uint32_t *features)
{
	if (!s)
		return CAP_ERR_INVAL;
	return cap__prefix_version(s->head, s->head_len, major, minor, features);
}

/* read(2) or the hook: bytes, 0 at the end, or -errno. An fd left
 * non-blocking is waited for. */
static ssize_t stream_read(struct cap_stream *s, void *buf, size_t len)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		errno = 0;
		if (s->opts.read_fn)
			n = s->opts.read_fn(s->fd, buf, len, s->opts.read_ctx);
		else
			n = read(s->fd, buf, len);
		if (n >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			poll(&p, 1, -1);
		else if (errno != EINTR)
			return errno ? -errno : -EIO;
	}
}

/* The input ends here: at its end (err 0) or at a read error. */
static void end_input(struct cap_reader *r, int err)
{
	r->ended = true;
	r->len = r->have;
	r->io_err = err;
	if (r->data_start) /* else the header parse comes first */
		cap__input_ended(r);
}

/* Room for READ_CHUNK more bytes, after letting go what is before keep:
 * once that is an eighth of what stays, so a large window (the 64 MiB kept
 * while draining) moves each byte a few times, not once a read. */
static int make_room(struct cap_reader *r)
{
	uint64_t drop = 0;

	if (r->keep > r->base + KEEP_BEHIND)
		drop = r->keep - KEEP_BEHIND - r->base;
	if (drop > r->have - r->base)
		drop = r->have - r->base;
	if (drop && drop >= (r->have - r->base - drop) / 8) {
		memmove(r->win, r->win + drop, r->have - r->base - drop);
		r->base += drop;
	}
	if (ARRAY_RESERVE(r->win, r->win_cap, r->have - r->base + READ_CHUNK))
		return -ENOMEM;
	r->buf = r->win;
	return 0;
}

/* One read of whatever the stream has: false once it has ended. */
static bool read_more(struct cap_reader *r)
{
	struct cap_stream *s = r->stream;
	uint8_t *to;
	ssize_t n;
	size_t k;

	if (r->ended)
		return false;
	n = make_room(r);
	if (!n) {
		to = r->win + (r->have - r->base);
		n = stream_read(s, to, READ_CHUNK);
	}
	if (n <= 0) {
		end_input(r, n);
		return false;
	}
	if (r->have < sizeof(s->head)) {
		k = sizeof(s->head) - r->have;
		if (k > (size_t)n)
			k = n;
		memcpy(s->head + r->have, to, k);
		s->head_len = r->have + k;
	}
	r->have += n;
	return true;
}

/* The first offset in [cand, end) where the trailer magic starts, or end;
 * *more when one may start in the last bytes read, which do not tell yet. */
static uint64_t next_candidate(const struct cap_reader *r, uint64_t end, bool *more)
{
	uint64_t from = r->cand, full = end + 3 < r->have ? end + 3 : r->have, q;
	const uint8_t *hit;
	uint8_t tm[4];

	*more = false;
	cap__put32(tm, CAP_SKIP_MAGIC_TRAILER);
	if (from >= end)
		return end;
	/* a whole magic here starts before end */
	hit = full >= from + 4 ? memmem(cap__at(r, from), full - from, tm, 4) : NULL;
	if (hit)
		return from + (hit - cap__at(r, from));
	for (q = full > from + 3 ? full - 3 : from; q < end && q < full; q++) {
		if (!memcmp(cap__at(r, q), tm, full - q)) {
			*more = true;
			return q;
		}
	}
	return end;
}

uint64_t cap__stream_avail(struct cap_reader *r, uint64_t end)
{
	bool more;
	uint64_t q;

	for (;;) {
		if (r->ended)
			return end < r->data_end ? end : r->data_end;
		if (r->have < end) {
			read_more(r);
			continue;
		}
		q = next_candidate(r, end, &more);
		if (q == end) {
			if (end > r->cand)
				r->cand = end;
			return end;
		}
		/* the trailer magic at q is the data end only if the input
		 * ends within a trailer's span of it (§6.4 step 2) */
		if (more || r->have <= q + TRAILER_SPAN)
			read_more(r);
		else
			r->cand = q + 1;
	}
}

/* As find_magic() from `from` to data_end, reading as it searches: what it
 * passed over goes. A trailer magic it finds is found before the data end
 * could be told, but then the data end is there or later, as data_end is
 * one (or the input's end), and every offset before it was searched. */
uint64_t cap__stream_find(struct cap_reader *r, uint64_t from)
{
	uint64_t s = from, lim;
	size_t i;

	for (;;) {
		lim = r->ended ? r->data_end : r->have;
		if (lim >= s + 4) {
			i = cap__find_magic(cap__at(r, s), lim - s);
			s += i;
			if (s < lim)
				break;
			s = lim - 3; /* a magic may begin in the last 3 bytes */
		}
		if (r->ended)
			return r->data_end;
		/* no trailer magic before s: what is before it can go */
		r->keep = s;
		if (s > r->cand)
			r->cand = s;
		read_more(r);
	}
	if (s > r->cand)
		r->cand = s;
	return s;
}

/* RFC 8878 §3.1.1.1: the size of a frame header, from its descriptor. */
static uint32_t frame_header_size(uint8_t fhd)
{
	static const uint8_t did[4] = { 0, 1, 2, 4 }, fcs[4] = { 0, 2, 4, 8 };
	bool single = fhd & FHD_SINGLE_SEGMENT;

	return 5 + !single + did[fhd & FHD_DICT_ID] + fcs[fhd >> 6] + (single && !(fhd >> 6));
}

/*
 * Walk the block headers of the zstd frame at pos (RFC 8878 §3.1.1.2) as
 * libzstd's sizing walks them, as far as the bytes read go: true once they
 * tell its size (its last block seen and read), or that libzstd cannot size
 * it within 8 MiB (its blocks run past that, or one has the reserved type).
 */
static bool walk_frame(struct cap_reader *r)
{
	const uint8_t *p = cap__at(r, r->pos);
	uint64_t len = r->have - r->pos;
	uint32_t h, type;

	if (r->walk_pos != r->pos) {
		r->walk_pos = r->pos;
		r->walk_off = r->walk_end = 0;
	}
	if (!r->walk_off) {
		if (len < 5)
			return false;
		r->walk_off = frame_header_size(p[4]);
	}
	while (!r->walk_end && r->walk_off + 3 <= len && r->walk_off <= CAP_MAX_FRAME_SIZE) {
		h = p[r->walk_off] | p[r->walk_off + 1] << 8 | (uint32_t)p[r->walk_off + 2] << 16;
		type = h >> 1 & 3;
		if (type == 3)
			return true;
		r->walk_off += 3 + (type == 1 ? 1 : h >> 3);
		if (h & 1)
			r->walk_end = r->walk_off + (p[4] & FHD_CHECKSUM ? 4 : 0);
	}
	if (r->walk_end)
		return r->walk_end <= len || r->walk_end > CAP_MAX_FRAME_SIZE;
	return r->walk_off > CAP_MAX_FRAME_SIZE;
}

/* Where the bytes handed to ZSTD_findFrameCompressedSize() for the frame at
 * pos end: enough of them for the answer a file reader gets (scan.c). */
uint64_t cap__stream_frame_end(struct cap_reader *r)
{
	uint64_t max = r->pos + CAP_MAX_FRAME_SIZE;

	for (;;) {
		if (r->ended)
			return cap__avail(r, max);
		if (r->have >= max || walk_frame(r))
			return r->have < max ? r->have : max;
		read_more(r);
	}
}

/* To the input's end, keeping what may be its trailer: from the first
 * trailer magic within a trailer's span of what was read (cand), or only
 * the last bytes when there is none. */
void cap__stream_drain(struct cap_reader *r)
{
	const uint8_t *hit;
	uint8_t tm[4];

	cap__put32(tm, CAP_SKIP_MAGIC_TRAILER);
	while (!r->ended) {
		if (r->have > r->cand + TRAILER_SPAN)
			r->cand = r->have - TRAILER_SPAN;
		hit = r->have >= r->cand + 4 ?
		      memmem(cap__at(r, r->cand), r->have - r->cand, tm, 4) : NULL;
		if (hit)
			r->cand += hit - cap__at(r, r->cand);
		else if (r->have > r->cand + 3)
			r->cand = r->have - 3;
		r->keep = r->cand;
		read_more(r);
	}
}

/* §3.3 steps 1-2 need the first max(16, 8 + N) bytes, N the payload size
 * the frame header gives (when it is within the limit), or all there is. */
static void read_header(struct cap_reader *r)
{
	uint32_t n;

	while (r->have < 16 && read_more(r))
		;
	if (r->have < 8)
		return;
	n = cap__get32(cap__at(r, 4));
	while (n <= CAP_MAX_HEADER_SIZE && r->have < 8 + (uint64_t)n && read_more(r))
		;
}

int cap_reader__open_stream(struct cap_stream *s, struct cap_reader **out)
{
	struct cap_reader *r;
	int err;

	if (!s || !out || s->used)
		return CAP_ERR_INVAL;
	s->used = true;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->stream = s;
	read_header(r);
	err = r->io_err ? r->io_err : cap__reader_init(r);
	if (err) {
		cap_reader__close(r);
		return err;
	}
	*out = r;
	return 0;
}
