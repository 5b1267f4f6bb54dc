/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private helpers shared by the format/ sources; not part of the API. */
#ifndef STKREC_FORMAT_INTERNAL_H
#define STKREC_FORMAT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "format/capture.h"

/* Size of the record header (§4.0). */
#define CAP_REC_HDR_SIZE 4u

/* Frame_Header_Descriptor bits (RFC 8878 §3.1.1.1.1) */
#define FHD_DICT_ID 0x03
#define FHD_CHECKSUM 0x04
#define FHD_RESERVED 0x08
#define FHD_SINGLE_SEGMENT 0x20
#define FHD_FCS 0xc0

/* §4 fixed-part size of a known record type in this version, 0 if unknown. */
uint32_t cap__fixed_size(uint16_t type);
/* The smallest fixed part a reader accepts: an older writer's (BIO was 72
 * bytes before it carried stacks); the rest reads as zero. */
uint32_t cap__min_size(uint16_t type);

/* Offset of the monotonic time field within a type's fixed part, or -1. */
int cap__time_offset(uint16_t type);

/* Event kind counted in totals.events for a record type, or -1. */
int cap__event_kind(uint16_t type);
/* §6.1: totals into the trailer header and back. */
void cap__totals_to_trailer(const struct cap_totals *t, struct cap_trailer_hdr *th);
void cap__totals_from_trailer(const struct cap_trailer_hdr *th, struct cap_totals *t);

static inline uint32_t cap__get32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t cap__get64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void cap__put32(void *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}


/* §4.17 LEB128: 7 bits a byte, low group first, high bit set on all but
 * the last byte. Returns the bytes written (at most 10). */
static inline size_t cap__put_uvarint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Decode one LEB128 value from [*p, end) into *v and advance *p. False
 * when it runs past end, is longer than 10 bytes or overflows 64 bits. */
static inline bool cap__get_uvarint(const uint8_t **p, const uint8_t *end,
				    uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t x = 0;
	unsigned shift = 0;

	while (q < end && shift < 64) {
		uint8_t b = *q++;

		if (shift == 63 && b > 1)
			return false;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*v = x;
			return true;
		}
		shift += 7;
	}
	return false;
}

/* The same where at least CAP_UVARINT_MAX bytes may be read at *p (the
 * caller checks *p against its end after): one or two bytes, the common
 * sizes, without a loop or a bound per byte. */
#define CAP_UVARINT_MAX 10
static inline bool cap__get_uvarint_unbounded(const uint8_t **p, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t x = q[0];
	unsigned i;

	if (x < 0x80) {
		*p = q + 1;
		*v = x;
		return true;
	}
	x = (x & 0x7f) | (uint64_t)(q[1] & 0x7f) << 7;
	if (q[1] < 0x80) {
		*p = q + 2;
		*v = x;
		return true;
	}
	for (i = 2; i < CAP_UVARINT_MAX - 1; i++) {
		x |= (uint64_t)(q[i] & 0x7f) << (7 * i);
		if (q[i] < 0x80) {
			*p = q + i + 1;
			*v = x;
			return true;
		}
	}
	if (q[i] > 1) /* the tenth byte holds bit 63 alone */
		return false;
	*p = q + CAP_UVARINT_MAX;
	*v = x | (uint64_t)q[i] << 63;
	return true;
}

/* ZigZag: small signed deltas become small unsigned values. */
static inline uint64_t cap__zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t cap__unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Reader state shared by reader.c (open, header, trailer), scan.c (frames
 * and records) and stream.c (input that arrives over time). */
struct cap_reader {
	/* Bytes [base, have) of the input are at buf. A file or a memory
	 * buffer is all there from the start (base 0, have = len, ended); a
	 * stream slides a window over its input (stream.c). */
	const uint8_t *buf;
	uint64_t base, have;
	uint64_t len;            /* input size, known once ended */
	bool ended;              /* the input's end, so data_end, is known */
	bool mapped;             /* buf is our mmap of the file */
	bool drop;               /* buf is a file's mapping: pages read are given
				  * back (a later read refills them from the file) */
	uint64_t dropped;        /* bytes before this are given back */
	struct cap_prefetch *prefetch; /* prefetch.c: blocks decompressed ahead */
	struct cap_stream *stream; /* NULL for a file or a buffer */
	uint8_t *win;            /* stream: the window buf points into */
	size_t win_cap;
	uint64_t keep;           /* stream: bytes before this are not needed */
	uint64_t cand;           /* stream: no trailer magic before this is data_end */
	int io_err;              /* stream: the read error that ended the input */
	uint64_t walk_pos;       /* stream: frame whose blocks are being walked, */
	uint64_t walk_off;       /* offset of its next block header (0: none yet), */
	uint64_t walk_end;       /* its size once its last block was seen */
	struct cap_header hdr;
	uint64_t data_start;     /* first byte after the header frame */
	uint64_t data_end;       /* valid trailer's offset, else len (once ended) */
	uint64_t pos;            /* next frame to look at */
	bool done;
	void *dctx;              /* ZSTD_DCtx */
	uint8_t *block;          /* current decoded block */
	size_t block_cap, block_len, block_pos;
	uint64_t block_off;
	uint64_t next_seq;       /* seq after the last block decoded */
	uint64_t prev_end;       /* §4.17: last compact OFFCPU's end in the block */
	bool compact_broken;     /* a compact OFFCPU failed: later ones can't be */
	uint64_t ips[CAP_MAX_STACK_DEPTH];
	struct cap_pack_frame frames[CAP_PACK_MAX_FRAMES];
	char tail[UINT16_MAX + 1]; /* any record's tail, NUL-terminated */
	/* damage bookkeeping for describe_loss() */
	bool resyncing;
	uint64_t damage_start;
	unsigned resync_tries;   /* candidates tried in this damaged region */
	uint64_t region_frames;  /* damaged frames of known extent in it */
	uint64_t first_bad_start, first_bad_end;
	bool cut_in_frame;       /* file ended inside a frame */
	bool trailer_damaged;    /* footer or trailer frame failed validation */
	bool trailer_cut;        /* trailer frame runs past end of file */
	bool trailer_mismatch;   /* trailer totals differ from what was read */
	uint64_t trailer_at;     /* offset of a damaged trailer, if known */
	struct cap_read_stats st;
	struct cap_lost_detail lost;
	uint64_t type_count[256];
};

/*
 * The reader's parts call one way: scan.c -> stream.c -> reader.c, and
 * scan.c and reader.c -> prefetch.c, which calls none of them. What
 * reader.c gives the other two:
 */
/* Parse the header (all of it, or all there is, at buf), then what follows
 * from it, and set the scan at the first frame; cap_reader__open*() then
 * hand r out. */
int cap__reader_init(struct cap_reader *r);
/* The input's size is known (r->len): find the trailer (§6.4). */
void cap__input_ended(struct cap_reader *r);
/* The version fields of the stable prefix at buf (n bytes), as
 * cap_file_version() reads them. */
int cap__prefix_version(const uint8_t *buf, size_t n, uint16_t *major,
			uint16_t *minor, uint32_t *features);
/* Offset in p[0, n) of the first whole zstd frame magic or trailer frame
 * magic, else n. */
size_t cap__find_magic(const uint8_t *p, size_t n);
/* A file's mapping: give back the pages wholly before r->keep, so that a
 * reader's memory does not grow with the file it reads. */
void cap__drop_behind(struct cap_reader *r);

/* prefetch.c, which scan.c and reader.c call: a file's frames decompressed
 * ahead on a thread (none if it cannot start: the scan does it all). */
void cap__prefetch_start(struct cap_reader *r);
/* The frame at pos, n bytes that hold usize: true with r->block holding it
 * and *got ZSTD_decompressDCtx()'s return, as the scan's own call would
 * have given; false: the scan decompresses it. */
bool cap__prefetch_take(struct cap_reader *r, uint64_t pos, size_t n, uint64_t usize,
			size_t *got);
void cap__prefetch_stop(struct cap_reader *r);

/* The byte at file offset off, which must be in [base, have). */
static inline const uint8_t *cap__at(const struct cap_reader *r, uint64_t off)
{
	return r->buf + (off - r->base);
}

/* stream.c, for scan.c: the parts of the scan that wait for a stream's
 * input. */
uint64_t cap__stream_avail(struct cap_reader *r, uint64_t end);
uint64_t cap__stream_find(struct cap_reader *r, uint64_t from);
uint64_t cap__stream_frame_end(struct cap_reader *r);
void cap__stream_drain(struct cap_reader *r);

/*
 * min(end, data_end), with the bytes before it in [base, have): what a file
 * reader of the same bytes would have. A stream reads until it knows
 * (§5.6), however long that takes; a file knows at once.
 */
static inline uint64_t cap__avail(struct cap_reader *r, uint64_t end)
{
	if (!r->ended)
		return cap__stream_avail(r, end);
	return end < r->data_end ? end : r->data_end;
}

/* data_end: a stream is read to its end first. */
static inline uint64_t cap__data_end(struct cap_reader *r)
{
	if (!r->ended)
		cap__stream_drain(r);
	return r->data_end;
}

#endif
