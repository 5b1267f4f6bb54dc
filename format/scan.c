// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capture reader, part 2: the forward scan over frames (FORMAT.md §5.4) and
 * record decoding (§4). A damaged frame is skipped and counted; the scan
 * then resynchronises on the next frame magic. Nothing from a frame that
 * failed its checksum is ever returned. Every byte is reached through
 * cap__avail() and its kin, which a stream answers by reading (stream.c),
 * so a stream and a file of the same bytes scan alike.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "format/capture.h"
#include "format/internal.h"
#include "util/array.h"

/* A damaged region gives up after this many false frame starts: real damage
 * almost never holds a frame magic (p = 2^-32 per byte), while a crafted
 * file full of them would otherwise cost one frame walk per byte. */
#define MAX_RESYNC_TRIES 64

static void note_error(struct cap_reader *r, int err, uint64_t off)
{
	if (!r->st.first_error) {
		r->st.first_error = err;
		r->st.first_error_offset = off;
	}
}

/* A bad region [start, end) is over: it counts as one damaged block per
 * damaged frame it held, and at least one. */
static void bad_region(struct cap_reader *r, uint64_t start, uint64_t end)
{
	if (!r->st.bad_blocks) {
		r->first_bad_start = start;
		r->first_bad_end = end;
	}
	r->st.bad_blocks += r->region_frames ? r->region_frames : 1;
	r->region_frames = 0;
	r->st.bytes_skipped += end - start;
	r->resyncing = false;
}

/* Next offset in [from, min(to, data_end)) holding a whole zstd frame magic
 * or trailer frame magic, else min(to, data_end). */
static uint64_t find_magic(struct cap_reader *r, uint64_t from, uint64_t to)
{
	uint64_t end;

	if (to == UINT64_MAX && !r->ended)
		return cap__stream_find(r, from);
	end = cap__avail(r, to);
	if (from >= end)
		return end;
	return from + cap__find_magic(cap__at(r, from), end - from);
}

/* data_end <= off: the scan cannot go on at off. */
static bool at_end(struct cap_reader *r, uint64_t off)
{
	return cap__avail(r, off + 1) <= off;
}

/* The frame at r->pos is unusable and its extent unknown: start or extend
 * a bad region and move to the next candidate frame start. */
static void resync(struct cap_reader *r, int err)
{
	uint64_t next;

	if (!r->resyncing) {
		r->resyncing = true;
		r->damage_start = r->pos;
		r->resync_tries = 0;
		note_error(r, err, r->pos);
	}
	next = ++r->resync_tries > MAX_RESYNC_TRIES ? cap__data_end(r) :
	       find_magic(r, r->pos + 1, UINT64_MAX);
	/* next <= data_end; at_end() reads on until a stream knows which */
	if (!at_end(r, next) || r->data_end < r->len) {
		r->pos = next;
		if (at_end(r, next))
			bad_region(r, r->damage_start, next);
		return;
	}
	/* nothing decodable up to the end of the file: it was cut there */
	r->cut_in_frame = true;
	r->st.truncated_at = r->damage_start;
	r->resyncing = false;
	r->pos = r->data_end;
}

/* §5.1, §5.4 step 4: the frame header stkrec writers always produce, in
 * the frame's n bytes (its header is all a file reader would look at). */
static int frame_params(const struct cap_reader *r, size_t n, uint64_t *usize)
{
	const uint8_t *p = cap__at(r, r->pos);
	unsigned long long fcs;
	uint8_t fhd;

	if (n < 6)
		return CAP_ERR_TRUNCATED;
	fhd = p[4];
	if (!(fhd & FHD_CHECKSUM) || (fhd & (FHD_DICT_ID | FHD_RESERVED)) ||
	    (!(fhd & FHD_FCS) && !(fhd & FHD_SINGLE_SEGMENT)))
		return CAP_ERR_CORRUPT;
	fcs = ZSTD_getFrameContentSize(p, n);
	if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs == ZSTD_CONTENTSIZE_UNKNOWN)
		return CAP_ERR_CORRUPT;
	if (fcs > CAP_MAX_BLOCK_SIZE)
		return CAP_ERR_TOO_LARGE;
	*usize = fcs;
	return 0;
}

/* The compressed size of the zstd frame at pos, as libzstd finds it in the
 * first min(data_end - pos, 8 MiB) bytes, or a zstd error. A stream hands it
 * what it has once that is enough to tell (cap__stream_frame_end()); a
 * frame that then runs past data_end fails as it would in that file. */
static size_t frame_size(struct cap_reader *r)
{
	uint64_t end = r->ended ? cap__avail(r, r->pos + CAP_MAX_FRAME_SIZE) :
			 cap__stream_frame_end(r);
	size_t n = ZSTD_findFrameCompressedSize(cap__at(r, r->pos), end - r->pos);

	if (!ZSTD_isError(n) && cap__avail(r, r->pos + n) < r->pos + n)
		return (size_t)-ZSTD_error_srcSize_wrong;
	return n;
}

/* Decompress the frame at r->pos. Returns 0, a negative code with *csize 0
 * (extent unknown), or a negative code with *csize set (skip exactly it). */
static int decode_frame(struct cap_reader *r, size_t *csize)
{
	struct cap_rec_hdr rh;
	uint64_t usize;
	size_t n, got;
	int err;

	*csize = 0;
	n = frame_size(r);
	if (ZSTD_isError(n))
		return CAP_ERR_CORRUPT;
	/* the frame's extent is known from here on: a failure skips it */
	*csize = n;
	err = frame_params(r, n, &usize);
	if (!err)
		err = ARRAY_RESERVE(r->block, r->block_cap, usize ? usize : 1);
	if (err)
		return err;
	if (!cap__prefetch_take(r, r->pos, n, usize, &got))
		got = ZSTD_decompressDCtx(r->dctx, r->block, usize, cap__at(r, r->pos), n);
	if (ZSTD_isError(got))
		return ZSTD_getErrorCode(got) == ZSTD_error_checksum_wrong ?
		       CAP_ERR_CHECKSUM : CAP_ERR_ZSTD;
	if (got != usize)
		return CAP_ERR_CORRUPT;
	/* §5.1: every block starts with a BLOCK record */
	if (usize < CAP_REC_HDR_SIZE + sizeof(struct cap_block))
		return CAP_ERR_CORRUPT;
	memcpy(&rh, r->block, sizeof(rh));
	if (rh.type != CAP_REC_BLOCK || rh.size < CAP_REC_HDR_SIZE + sizeof(struct cap_block) ||
	    rh.size > usize)
		return CAP_ERR_CORRUPT;
	r->block_len = usize;
	r->block_pos = 0;
	r->prev_end = 0;
	r->compact_broken = false;
	return 0;
}

static int try_frame(struct cap_reader *r)
{
	size_t csize;
	int err;

	err = decode_frame(r, &csize);
	if (err == -ENOMEM)
		return err;
	if (err && !csize) {
		resync(r, err);
		return 0;
	}
	if (err) {
		/* skip exactly the frame; the region stays open in case what
		 * follows is not a frame start either. A damaged header can
		 * claim an extent that runs into the next frame: stop at the
		 * first frame magic inside it (one that starts inside) */
		uint64_t next = find_magic(r, r->pos + 1, r->pos + csize + 3);

		if (next < r->pos + csize)
			csize = next - r->pos;
		if (!r->resyncing) {
			r->resyncing = true;
			r->damage_start = r->pos;
			r->resync_tries = 0;
			note_error(r, err, r->pos);
		}
		r->region_frames++;
	} else {
		if (r->resyncing)
			bad_region(r, r->damage_start, r->pos);
		r->block_off = r->pos;
		r->st.blocks++;
		r->st.counted.blocks++;
		r->st.bytes_raw += r->block_len;
		r->st.counted.bytes_raw += r->block_len;
	}
	r->pos += csize;
	return err ? 0 : 1;
}

/* A trailer frame met by the scan that is not the validated trailer. */
static void stray_trailer(struct cap_reader *r, uint64_t size)
{
	uint64_t end = cap__data_end(r);

	if (r->resyncing)
		bad_region(r, r->damage_start, r->pos);
	r->trailer_at = r->pos;
	if (size > end - r->pos)
		r->trailer_cut = true;
	else
		r->trailer_damaged = true;
	r->pos = end;
}

/* Advance to the next decodable block: 1 loaded, 0 no more, <0 error. */
static int next_block(struct cap_reader *r)
{
	uint64_t remain, size;
	uint32_t magic;
	int ret;

	while (!at_end(r, r->pos)) {
		r->keep = r->pos;
		cap__drop_behind(r);
		remain = cap__avail(r, r->pos + 4) - r->pos;
		magic = remain >= 4 ? cap__get32(cap__at(r, r->pos)) : 0;
		if (magic == CAP_ZSTD_MAGIC) {
			ret = try_frame(r);
			if (ret)
				return ret;
			continue;
		}
		if ((magic & 0xfffffff0u) != 0x184D2A50u ||
		    cap__avail(r, r->pos + 8) < r->pos + 8) {
			resync(r, CAP_ERR_CORRUPT);
			continue;
		}
		size = 8 + (uint64_t)cap__get32(cap__at(r, r->pos + 4));
		if (magic == CAP_SKIP_MAGIC_TRAILER) {
			stray_trailer(r, size);
			break;
		}
		/* §5.4 step 3: a frame of a later minor is no larger than a
		 * block's; past that it is damage, which bounds what a stream
		 * must hold to know whether it fits */
		if (size > CAP_MAX_FRAME_SIZE || cap__avail(r, r->pos + size) < r->pos + size) {
			resync(r, size > CAP_MAX_FRAME_SIZE ? CAP_ERR_TOO_LARGE :
				  CAP_ERR_TRUNCATED);
			continue;
		}
		/* §5.4: skippable frames of other kinds are skipped whole */
		if (r->resyncing)
			bad_region(r, r->damage_start, r->pos);
		r->pos += size;
	}
	if (r->resyncing)
		bad_region(r, r->damage_start, r->pos);
	return 0;
}

/* The last n bytes of the record (n <= room, checked), copied
 * NUL-terminated as its tail. */
static bool copy_tail(struct cap_reader *r, struct cap_record *rec, const uint8_t *body,
		      uint32_t body_len, uint32_t room, uint64_t n)
{
	if (n > room || n >= sizeof(r->tail))
		return false;
	memcpy(r->tail, body + body_len - n, n);
	r->tail[n] = 0;
	rec->tail = r->tail;
	rec->tail_len = n;
	return true;
}

/* A name tail of n bytes (STRING, KSYM, PACK_JIT, CGROUP). */
static bool name_tail(struct cap_reader *r, struct cap_record *rec, const uint8_t *body,
		      uint32_t body_len, uint32_t room, uint32_t n)
{
	return n <= CAP_MAX_STRING && copy_tail(r, rec, body, body_len, room, n);
}

/* §4.24: qualname, filename and line table, as one tail. */
static bool py_code_tail(struct cap_reader *r, struct cap_record *rec, const uint8_t *body,
			 uint32_t body_len, uint32_t room)
{
	const struct cap_py_code *c = &rec->py_code;

	return c->qualname_len <= CAP_MAX_STRING && c->filename_len <= CAP_MAX_STRING &&
	       copy_tail(r, rec, body, body_len, room,
			 (uint64_t)c->qualname_len + c->filename_len + c->linetable_len);
}

/* §4.2, §4.3, §4.9, §4.20, §4.21, §4.24: validate and copy the variable tail,
 * which occupies the last bytes of the record (after any fields of a newer
 * minor version). */
static bool decode_tail(struct cap_reader *r, struct cap_record *rec,
			const uint8_t *body, uint32_t body_len, uint32_t fixed)
{
	uint32_t room = body_len - fixed, n;

	switch (rec->type) {
	case CAP_REC_STRING:
		return name_tail(r, rec, body, body_len, room, rec->string.len);
	case CAP_REC_KSYM:
		return name_tail(r, rec, body, body_len, room, rec->ksym.name_len);
	case CAP_REC_PACK_JIT:
		return name_tail(r, rec, body, body_len, room, rec->pack_jit.name_len);
	case CAP_REC_PY_CODE:
		return py_code_tail(r, rec, body, body_len, room);
	case CAP_REC_CGROUP:
		return name_tail(r, rec, body, body_len, room, rec->cgroup.path_len);
	case CAP_REC_STACK:
		n = rec->stack.nr;
		if (n > CAP_MAX_STACK_DEPTH || (uint64_t)n * 8 > room)
			return false;
		memcpy(r->ips, body + body_len - n * 8, (size_t)n * 8);
		rec->ips = r->ips;
		return true;
	case CAP_REC_PACK_ADDR:
		n = rec->pack_addr.nr;
		if (n > CAP_PACK_MAX_FRAMES || n * sizeof(*r->frames) > room)
			return false;
		memcpy(r->frames, body + body_len - n * sizeof(*r->frames),
		       n * sizeof(*r->frames));
		rec->frames = r->frames;
		return true;
	default:
		return true;
	}
}

/* §4.0 rule 7: fields that say what cannot be, where a section makes
 * them a bad record: a TRIGGER's kind and window (§4.26). */
static bool fields_valid(const struct cap_record *rec)
{
	const struct cap_trigger *t = &rec->trigger;

	if (rec->type == CAP_REC_TRIGGER)
		return cap_trigger_kind_name(t->kind) && t->window_start <= t->window_end;
	return true;
}

static void count_record(struct cap_reader *r, const struct cap_record *rec)
{
	struct cap_totals *c = &r->st.counted;
	int kind = cap__event_kind(rec->type);

	if (kind >= 0)
		c->events[kind]++;
	switch (rec->type) {
	case CAP_REC_BLOCK:
		r->next_seq = rec->block.seq + 1;
		break;
	case CAP_REC_LOST:
		if (rec->lost.kind < CAP_KIND_MAX) {
			c->lost[rec->lost.kind] += rec->lost.count;
			if (rec->lost.reason < CAP_LOST_MAX)
				r->lost.count[rec->lost.kind][rec->lost.reason] +=
					rec->lost.count;
		}
		break;
	case CAP_REC_END:
		r->st.has_end = true;
		c->end_time = rec->end.time;
		break;
	}
	if (rec->type < 256)
		r->type_count[rec->type]++;
}

/* One of a compact OFFCPU's values from [*p, end); fast: at least
 * CAP_UVARINT_MAX bytes of the block follow *p, so the value is read
 * without a bound per byte and refused after, as the bounded read would,
 * if it ran past end. */
static inline __attribute__((always_inline)) bool compact_value(const uint8_t **p,
								const uint8_t *end, uint64_t *v,
								const bool fast)
{
	if (fast)
		return cap__get_uvarint_unbounded(p, v) && *p <= end;
	return cap__get_uvarint(p, end, v);
}

/* A compact OFFCPU's values into v[10]: eight, then `open` (1.2) and
 * `cgroup` (1.5) if the record goes on (0 otherwise); fields 2 to 8 are
 * 32-bit. fast is a constant at each call: inside the block, where up to
 * 10 values of at most CAP_UVARINT_MAX bytes each may be read unbounded. */
static inline __attribute__((always_inline)) bool compact_values(const uint8_t *p,
								 const uint8_t *end, uint64_t *v,
								 const bool fast)
{
	uint64_t wide;
	bool ok;

	ok = compact_value(&p, end, &v[0], fast) & compact_value(&p, end, &v[1], fast) &
	     compact_value(&p, end, &v[2], fast) & compact_value(&p, end, &v[3], fast) &
	     compact_value(&p, end, &v[4], fast) & compact_value(&p, end, &v[5], fast) &
	     compact_value(&p, end, &v[6], fast) & compact_value(&p, end, &v[7], fast);
	if (ok && p < end)
		ok = compact_value(&p, end, &v[8], fast) &&
		     (p == end || compact_value(&p, end, &v[9], fast));
	wide = v[2] | v[3] | v[4] | v[5] | v[6] | v[7] | v[8];
	return ok && !(wide >> 32);
}

/* §4.17: a compact OFFCPU becomes the OFFCPU it encodes. Each end is a delta
 * from the previous one, so after a bad one the rest of the block's compact
 * records cannot be trusted and are counted bad too. */
static inline __attribute__((always_inline)) bool
decode_compact(struct cap_reader *r, const uint8_t *body, uint32_t body_len, struct cap_offcpu *o)
{
	const uint8_t *end = body + body_len;
	uint64_t v[10] = { 0 };
	bool ok;

	if (r->compact_broken)
		return false;
	if (r->block + r->block_len - body >= 10 * CAP_UVARINT_MAX)
		ok = compact_values(body, end, v, true);
	else
		ok = compact_values(body, end, v, false);
	if (!ok) {
		r->compact_broken = true;
		return false;
	}
	/* fields after these are a newer minor's, and ignored (§4.0 rule 4) */
	o->start = r->prev_end + (uint64_t)cap__unzigzag(v[0]);
	o->duration = v[1];
	if (o->start + v[1] < o->start) {
		r->compact_broken = true; /* would end past 2^64 ns */
		return false;
	}
	r->prev_end = o->start + v[1];
	o->tid = v[2];
	o->pid = v[3];
	o->cpu = v[4];
	o->state = v[5];
	o->ustack = v[6];
	o->kstack = v[7];
	o->open = v[8];
	o->reserved = 0;
	o->cgroup = v[9];
	return true;
}

/* The record at block_pos: its header into *rh; false when the rest of the
 * block cannot be framed into records. */
static bool frame_record(const struct cap_reader *r, struct cap_rec_hdr *rh)
{
	size_t left = r->block_len - r->block_pos;

	if (left < sizeof(*rh))
		return false;
	memcpy(rh, r->block + r->block_pos, sizeof(*rh)); /* one load, not a loop of bytes */
	return rh->size >= sizeof(*rh) && rh->size <= left;
}

/* Decode the record at block_pos: 1 filled, 0 skipped, -1 block exhausted. */
static int decode_record(struct cap_reader *r, struct cap_record *rec)
{
	size_t left = r->block_len - r->block_pos;
	const uint8_t *p = r->block + r->block_pos;
	struct cap_rec_hdr rh;
	uint32_t fixed, body_len;

	if (!left)
		return -1;
	if (!frame_record(r, &rh)) {
		/* the rest of the block cannot be framed into records */
		r->st.bad_records++;
		r->block_pos = r->block_len;
		return -1;
	}
	r->block_pos += rh.size;
	r->st.counted.records++;
	body_len = rh.size - sizeof(rh);
	if (rh.type == CAP_REC_OFFCPU_COMPACT) {
		/* most records: fields set one by one, the rest of raw zeroed */
		memset(rec->raw + sizeof(rec->offcpu), 0, sizeof(rec->raw) - sizeof(rec->offcpu));
		rec->tail = NULL;
		rec->tail_len = 0;
		rec->ips = NULL;
		rec->frames = NULL;
		rec->size = rh.size;
		rec->file_offset = r->block_off;
		if (!decode_compact(r, p + sizeof(rh), body_len, &rec->offcpu)) {
			r->st.bad_records++;
			return 0;
		}
		rec->type = CAP_REC_OFFCPU;
		/* count_record() of an OFFCPU, without its tests */
		r->st.counted.events[CAP_KIND_OFFCPU]++;
		r->type_count[CAP_REC_OFFCPU]++;
		return 1;
	}
	fixed = cap__fixed_size(rh.type);
	if (!fixed) {
		r->st.unknown_records++;
		return 0;
	}
	if (body_len < cap__min_size(rh.type)) {
		r->st.bad_records++;
		return 0;
	}
	if (body_len < fixed)
		fixed = body_len; /* an older writer's record: the rest reads 0 */
	memset(rec, 0, sizeof(*rec));
	rec->type = rh.type;
	rec->size = rh.size;
	rec->file_offset = r->block_off;
	memcpy(&rec->block, p + sizeof(rh), fixed);
	if (!decode_tail(r, rec, p + sizeof(rh), body_len, fixed) || !fields_valid(rec)) {
		r->st.bad_records++;
		return 0;
	}
	count_record(r, rec);
	return 1;
}

static bool totals_differ(const struct cap_totals *a, const struct cap_totals *b)
{
	int i;

	for (i = 0; i < CAP_KIND_MAX; i++) {
		if (a->events[i] != b->events[i] || a->lost[i] != b->lost[i])
			return true;
	}
	return a->records != b->records || a->blocks != b->blocks ||
	       a->end_time != b->end_time || a->bytes_raw != b->bytes_raw ||
	       a->bytes_file != b->bytes_file;
}

/* End of data: settle what the stats say about the file as a whole. */
static void finish_scan(struct cap_reader *r)
{
	struct cap_read_stats *st = &r->st;

	r->done = true;
	if (!st->has_trailer && !st->truncated_at && !r->trailer_damaged)
		st->truncated_at = r->len;
	if (st->has_trailer && totals_differ(&st->trailer, &st->counted))
		r->trailer_mismatch = true;
	st->recovered = !st->has_trailer || st->bad_blocks || st->bad_records ||
			st->truncated_at || r->trailer_mismatch;
}

int cap_reader__next(struct cap_reader *r, struct cap_record *rec)
{
	int ret;

	if (!r || !rec)
		return CAP_ERR_INVAL;
	for (;;) {
		if (r->done)
			return r->io_err; /* 0, or what ended a stream early */
		if (r->block_pos < r->block_len) {
			ret = decode_record(r, rec);
			if (ret == 1)
				return 1;
			continue;
		}
		ret = next_block(r);
		if (ret < 0)
			return ret;
		if (!ret)
			finish_scan(r);
	}
}

size_t cap_reader__next_offcpus(struct cap_reader *r, struct cap_offcpu *out, size_t max)
{
	struct cap_rec_hdr rh;
	size_t n = 0;

	if (!r || !out)
		return 0;
	/* decode_record()'s way for a compact OFFCPU, the counts summed; one
	 * that fails is left for cap_reader__next() to count bad */
	while (n < max && frame_record(r, &rh) && rh.type == CAP_REC_OFFCPU_COMPACT &&
	       decode_compact(r, r->block + r->block_pos + sizeof(rh), rh.size - sizeof(rh),
			      &out[n])) {
		r->block_pos += rh.size;
		n++;
	}
	r->st.counted.records += n;
	r->st.counted.events[CAP_KIND_OFFCPU] += n;
	r->type_count[CAP_REC_OFFCPU] += n;
	return n;
}

static void append(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	if (*off) {
		n = snprintf(buf + *off, len - *off, "; ");
		*off += n > 0 ? n : 0;
		if (*off >= len)
			return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	*off += n > 0 ? n : 0;
}

static void describe_end(const struct cap_reader *r, char *buf, size_t len, size_t *off)
{
	const struct cap_read_stats *st = &r->st;

	if (r->cut_in_frame)
		append(buf, len, off, "file ends at byte %" PRIu64 " inside block %" PRIu64
		       " (cut at byte %" PRIu64 "): no trailer, capture was not "
		       "finalized (recorder killed?)", st->file_size, r->next_seq,
		       st->truncated_at);
	else if (r->trailer_cut)
		append(buf, len, off, "file ends at byte %" PRIu64 " inside the trailer "
		       "(byte %" PRIu64 "): totals unavailable", st->file_size,
		       r->trailer_at);
	else if (r->trailer_damaged)
		append(buf, len, off, "trailer at byte %" PRIu64 " is damaged and was "
		       "ignored", r->trailer_at);
	else if (!st->has_trailer && !r->next_seq)
		append(buf, len, off, "file ends at byte %" PRIu64 " with no complete block "
		       "and no trailer: capture was not finalized (recorder killed?)",
		       st->file_size);
	else if (!st->has_trailer)
		append(buf, len, off, "file ends at byte %" PRIu64 " after block %" PRIu64
		       ": no trailer, capture was not finalized (recorder killed?)",
		       st->file_size, r->next_seq ? r->next_seq - 1 : 0);
}

char *cap_reader__describe_loss(const struct cap_reader *r, char *buf, size_t len)
{
	const struct cap_read_stats *st = &r->st;
	size_t off = 0;

	if (!buf || !len)
		return buf;
	buf[0] = 0;
	describe_end(r, buf, len, &off);
	if (st->bad_blocks == 1)
		append(buf, len, &off, "1 damaged block (bytes %" PRIu64 "-%" PRIu64
		       ") skipped", r->first_bad_start, r->first_bad_end - 1);
	else if (st->bad_blocks &&
		 r->first_bad_end - r->first_bad_start == st->bytes_skipped)
		append(buf, len, &off, "%" PRIu64 " damaged blocks (bytes %" PRIu64 "-%"
		       PRIu64 ") skipped", st->bad_blocks, r->first_bad_start,
		       r->first_bad_end - 1);
	else if (st->bad_blocks)
		append(buf, len, &off, "%" PRIu64 " damaged blocks (%" PRIu64 " bytes, "
		       "first at bytes %" PRIu64 "-%" PRIu64 ") skipped", st->bad_blocks,
		       st->bytes_skipped, r->first_bad_start, r->first_bad_end - 1);
	if (st->bad_records)
		append(buf, len, &off, "%" PRIu64 " malformed record%s skipped",
		       st->bad_records, st->bad_records == 1 ? "" : "s");
	if (r->trailer_mismatch)
		append(buf, len, &off, "trailer totals disagree with the data read "
		       "(trailer: %" PRIu64 " records in %" PRIu64 " blocks; read: %"
		       PRIu64 " in %" PRIu64 ")", st->trailer.records,
		       st->trailer.blocks, st->counted.records, st->counted.blocks);
	if (!off)
		snprintf(buf, len, "%s", r->done ? "no loss" : "not read to the end yet");
	return buf;
}
