// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capture writer (FORMAT.md §5): records are packed into an in-memory block;
 * a full or old block becomes one zstd frame written with one write() call,
 * so a killed recorder leaves only whole blocks (or one cut-off frame the
 * reader recognises). finish() adds the trailer (§6).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zstd.h>
#include "format/capture.h"
#include "format/internal.h"
#include "util/array.h"

#define REC_MAX 0xffffu
#define BLOCK_REC_SIZE (CAP_REC_HDR_SIZE + sizeof(struct cap_block))

struct cap_writer {
	int fd;
	int err;                 /* sticky: first write/compress error */
	struct cap_writer_opts opts;
	ZSTD_CCtx *cctx;
	uint8_t *raw;            /* the open block */
	size_t raw_len;
	uint8_t *out;            /* its compressed frame */
	size_t out_cap;
	uint64_t offset;         /* bytes written so far */
	uint64_t seq;            /* seq of the open (or next) block */
	bool block_timed;        /* BLOCK.first_time set */
	uint64_t prev_end;       /* §4.17: last compact OFFCPU's end in the block */
	uint64_t block_since;    /* age counts from here (§5.2) */
	uint64_t last_tick;      /* `now` of the last tick */
	struct cap_index_entry *index;
	size_t nr_index, cap_index;
	struct cap_totals totals;
	cap_writer_tap_fn tap;   /* or NULL */
	void *tap_ctx;
};

/* write(2) or the test hook, looping on short writes and EINTR. */
static int write_all(struct cap_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		errno = 0;
		if (w->opts.write_fn)
			n = w->opts.write_fn(w->fd, p, len, w->opts.write_ctx);
		else
			n = write(w->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno ? -errno : -EIO;
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
		w->offset += n;
	}
	return 0;
}

static void copy_str(char *dst, size_t dst_len, const char *src)
{
	size_t n = strnlen(src, dst_len - 1);

	memset(dst, 0, dst_len);
	memcpy(dst, src, n);
}

/* §3: skippable frame header, fixed part, command line, CRC-32. */
static int write_header(struct cap_writer *w, const struct cap_header *h)
{
	struct cap_file_header fh;
	size_t cmd_len = strnlen(h->cmdline, sizeof(h->cmdline) - 1);
	size_t payload = sizeof(fh) + cmd_len + 4;
	uint8_t buf[8 + sizeof(fh) + sizeof(h->cmdline) + 4];

	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, CAP_HEADER_MAGIC, sizeof(fh.magic));
	fh.major = CAP_VERSION_MAJOR;
	fh.minor = CAP_VERSION_MINOR;
	fh.features = h->features & ~CAP_FEAT_INCOMPAT_MASK & CAP_FEAT_KNOWN;
	fh.fixed_size = sizeof(fh);
	fh.cmdline_len = cmd_len;
	fh.start_time = h->start_time;
	fh.start_realtime = h->start_realtime;
	fh.clock_offset = h->clock_offset;
	fh.ncpus = h->ncpus;
	fh.page_size = h->page_size;
	fh.recorder_pid = h->recorder_pid;
	copy_str(fh.hostname, sizeof(fh.hostname), h->hostname);
	copy_str(fh.release, sizeof(fh.release), h->release);
	copy_str(fh.machine, sizeof(fh.machine), h->machine);
	copy_str(fh.version, sizeof(fh.version), h->version);
	fh.sample_clock = h->sample_clock;
	fh.sample_flags = h->sample_flags & CAP_SAMPLE_FREQ;
	fh.sample_rate = h->sample_rate;

	cap__put32(buf, CAP_SKIP_MAGIC_HEADER);
	cap__put32(buf + 4, payload);
	memcpy(buf + 8, &fh, sizeof(fh));
	memcpy(buf + 8 + sizeof(fh), h->cmdline, cmd_len);
	cap__put32(buf + 8 + payload - 4, cap_crc32(0, buf + 8, payload - 4));
	return write_all(w, buf, 8 + payload);
}

static int writer_init(struct cap_writer *w, const struct cap_writer_opts *opts)
{
	size_t max_bs = CAP_MAX_BLOCK_SIZE - REC_MAX - BLOCK_REC_SIZE;
	size_t raw_cap;

	if (opts)
		w->opts = *opts;
	if (!w->opts.block_size)
		w->opts.block_size = CAP_DEFAULT_BLOCK_SIZE;
	if (w->opts.block_size < CAP_MIN_BLOCK_SIZE)
		w->opts.block_size = CAP_MIN_BLOCK_SIZE;
	if (w->opts.block_size > max_bs)
		w->opts.block_size = max_bs;
	if (!w->opts.block_age_ns)
		w->opts.block_age_ns = CAP_DEFAULT_BLOCK_AGE_NS;
	if (!w->opts.level)
		w->opts.level = 3;

	raw_cap = w->opts.block_size + REC_MAX + BLOCK_REC_SIZE;
	w->out_cap = ZSTD_compressBound(raw_cap);
	w->raw = malloc(raw_cap);
	w->out = malloc(w->out_cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->raw || !w->out || !w->cctx)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel,
						w->opts.level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1)))
		return CAP_ERR_INVAL;
	return 0;
}

int cap_writer__fdopen(int fd, const struct cap_header *hdr,
		       const struct cap_writer_opts *opts, struct cap_writer **out)
{
	struct cap_writer *w;
	int err;

	if (fd < 0 || !hdr || !out) {
		if (fd >= 0)
			close(fd);
		return CAP_ERR_INVAL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->fd = fd;
	err = writer_init(w, opts);
	if (!err)
		err = write_header(w, hdr);
	if (err) {
		cap_writer__free(w);
		return err;
	}
	*out = w;
	return 0;
}

/* The mode asked for exactly: the umask may have narrowed it (0640 under
 * umask 077). */
static int set_mode(int fd, unsigned int mode)
{
	int err;

	if (!fchmod(fd, mode))
		return fd;
	err = -errno;
	close(fd);
	return err;
}

int cap_file__create(const char *path, unsigned int flags, unsigned int mode)
{
	const int excl = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	struct stat st;
	int fd;

	mode = mode ? mode & 0777 : CAP_FILE_MODE;
	fd = open(path, excl, mode);
	if (fd >= 0)
		return set_mode(fd, mode);
	if (errno != EEXIST || (flags & CAP_CREATE_EXCL))
		return -errno;
	if (lstat(path, &st))
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISREG(st.st_mode)) { /* -o /dev/null, a FIFO: theirs to keep */
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (!unlink(path)) {
		fd = open(path, excl, mode);
		return fd < 0 ? -errno : set_mode(fd, mode);
	}
	/* a directory we may not change: the file itself, truncated */
	fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : set_mode(fd, mode);
}

int cap_file__create_tmp(char *tmpl, unsigned int mode)
{
	int fd = mkostemp(tmpl, O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return set_mode(fd, mode ? mode & 0777 : CAP_FILE_MODE);
}

int cap_writer__open(const char *path, const struct cap_header *hdr,
		     const struct cap_writer_opts *opts, struct cap_writer **out)
{
	int fd;

	if (!path || !hdr || !out)
		return CAP_ERR_INVAL;
	fd = cap_file__create(path, opts && opts->exclusive ? CAP_CREATE_EXCL : 0,
			      opts ? opts->mode : 0);
	if (fd < 0)
		return fd;
	return cap_writer__fdopen(fd, hdr, opts, out);
}

static int index_add(struct cap_writer *w, uint64_t offset, size_t csize)
{
	struct cap_index_entry *e;

	if (ARRAY_RESERVE(w->index, w->cap_index, w->nr_index + 1))
		return -ENOMEM;
	e = &w->index[w->nr_index++];
	e->offset = offset;
	e->csize = csize;
	e->usize = w->raw_len;
	e->seq = w->seq;
	e->first_time = cap__get64(w->raw + CAP_REC_HDR_SIZE + 8);
	return 0;
}

/* §5.2: compress the open block into one frame and write it at once. */
static int close_block(struct cap_writer *w)
{
	uint64_t offset = w->offset;
	size_t csize;
	int err;

	if (w->err)
		return w->err;
	if (!w->raw_len)
		return 0;
	csize = ZSTD_compress2(w->cctx, w->out, w->out_cap, w->raw, w->raw_len);
	if (ZSTD_isError(csize))
		return w->err = CAP_ERR_ZSTD;
	err = write_all(w, w->out, csize);
	if (!err)
		err = index_add(w, offset, csize);
	if (err)
		return w->err = err;
	w->totals.blocks++;
	w->totals.bytes_raw += w->raw_len;
	w->raw_len = 0;
	w->seq++;
	return 0;
}

static void open_block(struct cap_writer *w)
{
	struct cap_rec_hdr rh = { CAP_REC_BLOCK, BLOCK_REC_SIZE };
	struct cap_block b = { .seq = w->seq, .first_time = 0 };

	memcpy(w->raw, &rh, sizeof(rh));
	memcpy(w->raw + sizeof(rh), &b, sizeof(b));
	w->raw_len = BLOCK_REC_SIZE;
	w->block_timed = false;
	w->block_since = w->last_tick;
	w->prev_end = 0;
	w->totals.records++;
}

static size_t trailer_size(size_t nr_index)
{
	return 8 + sizeof(struct cap_trailer_hdr) +
	       nr_index * sizeof(struct cap_index_entry) + sizeof(struct cap_footer);
}

/* §5.3: would the file still fit in max_size with `add` more raw bytes? */
static bool fits(const struct cap_writer *w, uint16_t type, size_t add)
{
	size_t raw = (w->raw_len ? w->raw_len : BLOCK_REC_SIZE) + add;
	uint64_t need = w->offset + ZSTD_compressBound(raw) +
			trailer_size(w->nr_index + 1);

	if (!w->opts.max_size)
		return true;
	if (type != CAP_REC_LOST && type != CAP_REC_STAT && type != CAP_REC_TRIGGER &&
	    type != CAP_REC_END && type != CAP_REC_PACK_INFO)
		need += CAP_WRITER_END_RESERVE;
	return need <= w->opts.max_size;
}

static void count_record(struct cap_writer *w, uint16_t type, const void *fixed,
			 size_t fixed_len)
{
	int kind = cap__event_kind(type);
	int toff = cap__time_offset(type);

	w->totals.records++;
	/* §6.1: as readers count it, a BIO of 1.0's 72 bytes included */
	if (kind >= 0 && fixed_len >= cap__min_size(type))
		w->totals.events[kind]++;
	if (type == CAP_REC_LOST && fixed_len >= sizeof(struct cap_lost)) {
		const struct cap_lost *l = fixed;

		if (l->kind < CAP_KIND_MAX)
			w->totals.lost[l->kind] += l->count;
	}
	if (type == CAP_REC_END && fixed_len >= sizeof(struct cap_end))
		w->totals.end_time = ((const struct cap_end *)fixed)->time;
	if (toff >= 0 && !w->block_timed && fixed_len >= (size_t)toff + 8) {
		uint64_t t = cap__get64((const uint8_t *)fixed + toff);

		/* BLOCK.first_time lives right after the record header + seq */
		memcpy(w->raw + CAP_REC_HDR_SIZE + 8, &t, 8);
		w->block_timed = true;
		if (t > w->block_since)
			w->block_since = t;
	}
}

/* §4.17: the body of a compact OFFCPU, its start as a delta from the end of
 * the previous one in the block (prev): in a ping-pong between two threads
 * one's wait starts as the other's ends; `open`, the ninth value, only
 * when set. Returns its length. */
#define COMPACT_MAX (3 * 10 + 7 * 5)
static size_t compact_offcpu(uint8_t *p, const struct cap_offcpu *o, uint64_t prev)
{
	size_t n = 0;

	n += cap__put_uvarint(p + n, cap__zigzag((int64_t)(o->start - prev)));
	n += cap__put_uvarint(p + n, o->duration);
	n += cap__put_uvarint(p + n, o->tid);
	n += cap__put_uvarint(p + n, o->pid);
	n += cap__put_uvarint(p + n, o->cpu);
	n += cap__put_uvarint(p + n, o->state);
	n += cap__put_uvarint(p + n, o->ustack);
	n += cap__put_uvarint(p + n, o->kstack);
	/* `open` (1.2) and `cgroup` (1.5) are left out from the last one
	 * that is 0 on */
	if (o->open || o->cgroup)
		n += cap__put_uvarint(p + n, o->open);
	if (o->cgroup)
		n += cap__put_uvarint(p + n, o->cgroup);
	return n;
}

/* An OFFCPU of this version's size goes out compact, unless asked not to.
 * A new block restarts the deltas, so the record is encoded again then. */
static int append_offcpu(struct cap_writer *w, const struct cap_offcpu *o)
{
	uint8_t body[COMPACT_MAX];
	size_t size = CAP_REC_HDR_SIZE + compact_offcpu(body, o, w->prev_end);
	struct cap_rec_hdr rh = { CAP_REC_OFFCPU_COMPACT, 0 };
	int err;

	if (w->raw_len && w->raw_len + size > w->opts.block_size) {
		err = close_block(w);
		if (err)
			return err;
	}
	if (!fits(w, CAP_REC_OFFCPU, CAP_REC_HDR_SIZE + COMPACT_MAX))
		return CAP_ERR_FULL;
	if (!w->raw_len) {
		open_block(w);
		size = CAP_REC_HDR_SIZE + compact_offcpu(body, o, w->prev_end);
	}
	rh.size = size;
	memcpy(w->raw + w->raw_len, &rh, sizeof(rh));
	memcpy(w->raw + w->raw_len + sizeof(rh), body, size - sizeof(rh));
	w->raw_len += size;
	w->prev_end = o->start + o->duration;
	count_record(w, CAP_REC_OFFCPU, o, sizeof(*o));
	if (w->tap)
		w->tap(w->tap_ctx, CAP_REC_OFFCPU, o, sizeof(*o), NULL, 0);
	if (w->raw_len >= w->opts.block_size)
		return close_block(w);
	return 0;
}

int cap_writer__append(struct cap_writer *w, uint16_t type, const void *fixed,
		       size_t fixed_len, const void *tail, size_t tail_len)
{
	size_t size = CAP_REC_HDR_SIZE + fixed_len + tail_len;
	struct cap_rec_hdr rh;
	int err;

	if (w && !w->err && type == CAP_REC_OFFCPU && !w->opts.fixed_offcpu &&
	    fixed && fixed_len == sizeof(struct cap_offcpu) && !tail_len)
		return append_offcpu(w, fixed);

	if (!w || type == CAP_REC_BLOCK || (!fixed && fixed_len) ||
	    (!tail && tail_len) || fixed_len > REC_MAX || tail_len > REC_MAX ||
	    size > REC_MAX)
		return CAP_ERR_INVAL;
	if (w->err)
		return w->err;
	if (w->raw_len && w->raw_len + size > w->opts.block_size) {
		err = close_block(w);
		if (err)
			return err;
	}
	if (!fits(w, type, size))
		return CAP_ERR_FULL;
	if (!w->raw_len)
		open_block(w);
	rh.type = type;
	rh.size = size;
	memcpy(w->raw + w->raw_len, &rh, sizeof(rh));
	if (fixed_len)
		memcpy(w->raw + w->raw_len + sizeof(rh), fixed, fixed_len);
	if (tail_len)
		memcpy(w->raw + w->raw_len + sizeof(rh) + fixed_len, tail, tail_len);
	w->raw_len += size;
	count_record(w, type, fixed, fixed_len);
	if (w->tap)
		w->tap(w->tap_ctx, type, fixed, fixed_len, tail, tail_len);
	if (w->raw_len >= w->opts.block_size)
		return close_block(w);
	return 0;
}

int cap_writer__string(struct cap_writer *w, uint32_t id, const char *s, size_t len)
{
	struct cap_string str = { .id = id, .len = len };

	if (len > CAP_MAX_STRING || (!s && len))
		return CAP_ERR_INVAL;
	return cap_writer__append(w, CAP_REC_STRING, &str, sizeof(str), s, len);
}

int cap_writer__stack(struct cap_writer *w, uint32_t id, uint8_t kind,
		      const uint64_t *ips, uint16_t nr)
{
	struct cap_stack st = { .id = id, .nr = nr, .kind = kind };

	if (nr > CAP_MAX_STACK_DEPTH || (!ips && nr))
		return CAP_ERR_INVAL;
	return cap_writer__append(w, CAP_REC_STACK, &st, sizeof(st), ips,
				  (size_t)nr * sizeof(*ips));
}

/* Bytes and pointer of a decoded record's variable tail. */
static const void *tail_of(const struct cap_record *r, size_t *len)
{
	switch (r->type) {
	case CAP_REC_STRING:
	case CAP_REC_KSYM:
	case CAP_REC_PACK_JIT:
	case CAP_REC_PY_CODE:
	case CAP_REC_CGROUP:
		*len = r->tail_len;
		return r->tail;
	case CAP_REC_STACK:
		*len = r->stack.nr * sizeof(*r->ips);
		return r->ips;
	case CAP_REC_PACK_ADDR:
		*len = r->pack_addr.nr * sizeof(*r->frames);
		return r->frames;
	}
	*len = 0;
	return NULL;
}

/* Its fixed part as long as the file had it (a 72-byte BIO stays one), an
 * OFFCPU whole (the writer packs it again). */
size_t cap_record_fixed_len(const struct cap_record *rec)
{
	size_t tlen, body = rec->size - CAP_REC_HDR_SIZE, fixed;

	if (rec->type == CAP_REC_OFFCPU)
		return sizeof(rec->offcpu);
	tail_of(rec, &tlen);
	fixed = body > tlen ? body - tlen : 0;
	return fixed > cap_rec_fixed_size(rec->type) ? cap_rec_fixed_size(rec->type) : fixed;
}

int cap_writer__append_record(struct cap_writer *w, const struct cap_record *rec, size_t fixed)
{
	size_t tlen;
	const void *tail = tail_of(rec, &tlen);

	return cap_writer__append(w, rec->type, &rec->block, fixed, tail, tlen);
}

int cap_writer__tick(struct cap_writer *w, uint64_t now)
{
	if (!w)
		return CAP_ERR_INVAL;
	if (w->err)
		return w->err;
	w->last_tick = now;
	if (!w->raw_len || now < w->block_since)
		return 0;
	if (!w->block_since) {
		/* no timed record and no earlier tick: the age starts now */
		w->block_since = now;
		return 0;
	}
	if (now - w->block_since >= w->opts.block_age_ns)
		return close_block(w);
	return 0;
}

int cap_writer__flush(struct cap_writer *w)
{
	if (!w)
		return CAP_ERR_INVAL;
	return close_block(w);
}

/* §6: totals, block index, footer; one write. */
static int write_trailer(struct cap_writer *w)
{
	size_t len = trailer_size(w->nr_index);
	size_t payload = len - 8;
	struct cap_trailer_hdr th;
	struct cap_footer ft;
	uint8_t *buf;
	int err;

	if (len > CAP_MAX_TRAILER_SIZE)
		return CAP_ERR_TOO_LARGE;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	w->totals.bytes_file = w->offset + len;
	memset(&th, 0, sizeof(th));
	memcpy(th.magic, CAP_TRAILER_MAGIC, sizeof(th.magic));
	th.fixed_size = sizeof(th);
	th.nr_index = w->nr_index;
	th.index_entry_size = sizeof(struct cap_index_entry);
	cap__totals_to_trailer(&w->totals, &th);
	cap__put32(buf, CAP_SKIP_MAGIC_TRAILER);
	cap__put32(buf + 4, payload);
	memcpy(buf + 8, &th, sizeof(th));
	if (w->nr_index)
		memcpy(buf + 8 + sizeof(th), w->index,
		       w->nr_index * sizeof(struct cap_index_entry));
	ft.frame_size = len;
	ft.crc = cap_crc32(0, buf + 8, payload - sizeof(ft));
	memcpy(ft.magic, CAP_FOOTER_MAGIC, sizeof(ft.magic));
	memcpy(buf + len - sizeof(ft), &ft, sizeof(ft));
	err = write_all(w, buf, len);
	free(buf);
	return err;
}

int cap_writer__finish(struct cap_writer *w)
{
	return cap_writer__finish_size(w, NULL);
}

int cap_writer__finish_size(struct cap_writer *w, uint64_t *size)
{
	int err;

	if (!w)
		return CAP_ERR_INVAL;
	err = close_block(w);
	if (!err)
		err = write_trailer(w);
	if (size)
		*size = w->offset;
	/* pipes and character devices cannot fsync; that is not a failure */
	if (!err && fsync(w->fd) && errno != EINVAL && errno != EROFS)
		err = -errno;
	if (close(w->fd) && !err && errno != EINTR)
		err = -errno;
	w->fd = -1;
	cap_writer__free(w);
	return err;
}

void cap_writer__free(struct cap_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	free(w->raw);
	free(w->out);
	free(w->index);
	free(w);
}

void cap_writer__set_tap(struct cap_writer *w, cap_writer_tap_fn fn, void *ctx)
{
	w->tap = fn;
	w->tap_ctx = ctx;
}

const struct cap_totals *cap_writer__totals(const struct cap_writer *w)
{
	return &w->totals;
}

uint64_t cap_writer__file_size(const struct cap_writer *w)
{
	return w->offset;
}
