/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by tests/test_format_stream.c and tests/fuzz/fuzz_reader_stream.c
 * (header-only, as reliability_run.h): read a capture from memory, and as a
 * stream fed in chunks of random sizes, and name the first thing a caller
 * could see that differs between the two readings (FORMAT.md §5.6: none).
 */
#ifndef STKREC_TESTS_STREAM_COMPARE_H
#define STKREC_TESTS_STREAM_COMPARE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include "format/capture.h"

/* What a reader shows of one input. */
struct sc_reading {
	int open_err, next_err, version_err;
	uint16_t major, minor;
	uint32_t features;
	struct cap_header hdr;
	uint64_t records, hash;    /* records returned, FNV-1a of their contents */
	struct cap_read_stats st;
	struct cap_lost_detail lost;
	uint64_t types[256];
	char loss[600];
};

/* The stream's bytes, handed out in chunks of 1..max_chunk. */
struct sc_feed {
	const uint8_t *buf;
	size_t len, off, max_chunk;
	uint32_t seed;
	size_t fail_at;            /* a read from here on fails with EIO; 0: never */
};

static inline uint64_t sc_fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static inline ssize_t sc_feed_read(int fd, void *p, size_t n, void *ctx)
{
	struct sc_feed *f = ctx;
	size_t k;

	(void)fd;
	if (f->fail_at && f->off >= f->fail_at) {
		errno = EIO;
		return -1;
	}
	f->seed = f->seed * 1103515245u + 12345u;
	k = 1 + (f->seed >> 8) % f->max_chunk;
	if (k > n)
		k = n;
	if (k > f->len - f->off)
		k = f->len - f->off;
	if (f->fail_at && k > f->fail_at - f->off)
		k = f->fail_at - f->off;
	memcpy(p, f->buf + f->off, k);
	f->off += k;
	return k;
}

static inline void sc_record(struct sc_reading *o, const struct cap_record *rec)
{
	uint64_t h = sc_fnv(o->hash, &rec->type, sizeof(rec->type));

	h = sc_fnv(h, &rec->size, sizeof(rec->size));
	h = sc_fnv(h, &rec->file_offset, sizeof(rec->file_offset));
	/* the fields of every type: the reader zeroes what the record lacks */
	h = sc_fnv(h, &rec->block, offsetof(struct cap_record, tail) -
		   offsetof(struct cap_record, block));
	if (rec->tail)
		h = sc_fnv(h, rec->tail, rec->tail_len);
	if (rec->type == CAP_REC_STACK && rec->ips)
		h = sc_fnv(h, rec->ips, rec->stack.nr * sizeof(uint64_t));
	o->hash = h;
	o->records++;
}

/* Read r to its end into o, then close it. */
static inline void sc_read(struct cap_reader *r, struct sc_reading *o)
{
	struct cap_record rec;
	int t, ret;

	o->hdr = *cap_reader__header(r);
	while ((ret = cap_reader__next(r, &rec)) == 1)
		sc_record(o, &rec);
	o->next_err = ret;
	o->st = *cap_reader__stats(r);
	o->lost = *cap_reader__lost_detail(r);
	for (t = 0; t < 256; t++)
		o->types[t] = cap_reader__type_count(r, t);
	cap_reader__describe_loss(r, o->loss, sizeof(o->loss));
	cap_reader__close(r);
}

static inline void sc_read_mem(const uint8_t *buf, size_t len, struct sc_reading *o)
{
	struct cap_reader *r;

	memset(o, 0, sizeof(*o));
	o->version_err = cap_mem_version(buf, len, &o->major, &o->minor, &o->features);
	o->open_err = cap_reader__open_mem(buf, len, &r);
	if (!o->open_err)
		sc_read(r, o);
}

/* f: the feed, its buf and len, max_chunk and seed set. */
static inline int sc_read_stream(struct sc_feed *f, struct sc_reading *o)
{
	struct cap_stream_opts so = { .read_fn = sc_feed_read, .read_ctx = f };
	struct cap_stream *s;
	struct cap_reader *r;
	int err;

	memset(o, 0, sizeof(*o));
	err = cap_stream__new(0, &so, &s);
	if (err)
		return err;
	o->open_err = cap_reader__open_stream(s, &r);
	o->version_err = cap_stream__version(s, &o->major, &o->minor, &o->features);
	if (!o->open_err)
		sc_read(r, o);
	cap_stream__free(s);
	return 0;
}

#define SC_FIELD(f)                                                              \
	do {                                                                     \
		if (memcmp(&a->f, &b->f, sizeof(a->f)))                          \
			return #f;                                               \
	} while (0)

/* NULL when a caller sees the same of both readings, else what differs.
 * The version fields count only where a caller asks for them: after a
 * refusal for a newer major or an unknown feature. */
static inline const char *sc_diff(const struct sc_reading *a, const struct sc_reading *b)
{
	SC_FIELD(open_err);
	if (a->open_err == CAP_ERR_VERSION || a->open_err == CAP_ERR_FEATURE) {
		SC_FIELD(version_err);
		SC_FIELD(major);
		SC_FIELD(minor);
		SC_FIELD(features);
	}
	if (a->open_err)
		return NULL;
	SC_FIELD(hdr);
	SC_FIELD(next_err);
	SC_FIELD(records);
	SC_FIELD(hash);
	SC_FIELD(st.has_trailer);
	SC_FIELD(st.has_end);
	SC_FIELD(st.recovered);
	SC_FIELD(st.blocks);
	SC_FIELD(st.bad_blocks);
	SC_FIELD(st.bytes_skipped);
	SC_FIELD(st.truncated_at);
	SC_FIELD(st.unknown_records);
	SC_FIELD(st.bad_records);
	SC_FIELD(st.file_size);
	SC_FIELD(st.bytes_raw);
	SC_FIELD(st.first_error);
	SC_FIELD(st.first_error_offset);
	SC_FIELD(st.counted);
	SC_FIELD(st.trailer);
	SC_FIELD(lost);
	SC_FIELD(types);
	if (strcmp(a->loss, b->loss))
		return "loss";
	return NULL;
}
#undef SC_FIELD

#endif
