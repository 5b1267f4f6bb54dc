// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A file's next blocks decompressed ahead, on a thread of their own, while
 * the scan (scan.c) decodes the records of the block before: on two CPUs
 * zstd's time hides behind the rest.
 *
 * The thread walks the frames from the first after the header as a scan of
 * an undamaged file would, and stops at the first thing that is not a
 * plain frame (damage, the trailer, a frame too large): the scan then
 * decompresses inline from there, with its own checks. What it hands over
 * is only ever a frame the scan asked for, at the same offset, of the same
 * extent and size, decompressed by the same call with the same limits: the
 * scan sees the same bytes and errors either way. Files of 256 KiB of
 * frames or more only (a stream's window moves under the scan; a buffer is
 * for fuzzing and tests).
 *
 * The scan, when the block it asks for is still being decompressed,
 * decompresses the next one itself rather than wait: where zstd is slower
 * than decoding (captures of few stacks), the two share it. A report of
 * 5.4M events of `burst pipe 2` took 118 ms against 127 ms before.
 *
 * zstd writes each block into a buffer of the thread's own, which stays in
 * its CPU's cache, and the block is then copied to its slot with streaming
 * stores: the slot's buffer was the scan's block before (take()), so
 * writing it in place made each of its cache lines come back from the
 * other CPU first. That cost the thread as much as zstd itself did (75 ms
 * against 51 ms for 2.7M events on the bench's guest).
 *
 * A reader allowed one CPU only (taskset, a cpuset of one) starts no
 * thread: there zstd's time cannot hide, and the copies and switches the
 * thread adds made the report of 1.7M events 9% slower (92 ms against
 * 85 ms of CPU).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "format/capture.h"
#include "format/internal.h"

#define SLOTS 4 /* blocks decompressed ahead */
/* Smaller files are not worth a thread (starting it, and its buffers,
 * cost about what decompressing them does) */
#define MIN_FRAMES_BYTES (256u << 10)

/* A block decompressed ahead, into a buffer of the largest block's size:
 * the thread allocates nothing (no malloc arena of its own), and the
 * pages a smaller block leaves untouched cost no memory. */
struct slot {
	uint64_t pos;   /* the frame's offset */
	size_t n;       /* its compressed size */
	uint64_t usize; /* its content size */
	size_t got;     /* ZSTD_decompressDCtx()'s return */
	uint8_t *buf;   /* CAP_MAX_BLOCK_SIZE bytes */
	bool ready;     /* decompressed, got set */
};

/*
 * Two can decompress: the thread, and the scan while the block it waits
 * for is still the thread's (cap__prefetch_take()). Each claims the next frame from
 * the cursor with a slot, in file order, so the slots are taken in order
 * whoever filled them.
 */
struct cap_prefetch {
	const uint8_t *buf;     /* the file; its frames end at end */
	uint64_t end;
	uint64_t cursor;        /* the next frame to claim */
	bool walked;            /* the cursor met the end, or no plain frame */
	ZSTD_DCtx *dctx;
	uint8_t *hot;           /* zstd's output, CAP_MAX_BLOCK_SIZE bytes */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct slot slot[SLOTS];
	unsigned head, count;   /* claimed slots: head, head + 1, ... */
	bool stop;              /* the thread is told to end */
};

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* n bytes from src to dst without reading dst's cache lines first: dst is
 * left in no CPU's cache, for the scan's CPU to read from memory. */
static void stream_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i = 0;

#if defined(__SSE2__)
	for (; !((uintptr_t)dst & 15) && i + 64 <= n; i += 64) {
		__m128i *d = (__m128i *)(dst + i);
		const __m128i *q = (const __m128i *)(src + i);

		_mm_stream_si128(d, _mm_loadu_si128(q));
		_mm_stream_si128(d + 1, _mm_loadu_si128(q + 1));
		_mm_stream_si128(d + 2, _mm_loadu_si128(q + 2));
		_mm_stream_si128(d + 3, _mm_loadu_si128(q + 3));
	}
	_mm_sfence(); /* before the slot is handed over */
#endif
	memcpy(dst + i, src + i, n - i);
}

/* The extent of the frame at the cursor, a plain one of a block's size at
 * most; 0 when it is none. */
static size_t frame_at(const struct cap_prefetch *p, uint64_t *usize)
{
	const uint8_t *src = p->buf + p->cursor;
	uint64_t left = p->end - p->cursor;
	unsigned long long fcs;
	size_t n;

	n = ZSTD_findFrameCompressedSize(src, left < CAP_MAX_FRAME_SIZE ? left : CAP_MAX_FRAME_SIZE);
	if (ZSTD_isError(n) || n > left)
		return 0;
	fcs = ZSTD_getFrameContentSize(src, n);
	if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs == ZSTD_CONTENTSIZE_UNKNOWN ||
	    fcs > CAP_MAX_BLOCK_SIZE)
		return 0;
	*usize = fcs;
	return n;
}

/*
 * Under the lock: the next frame from the cursor, with a slot, as a scan
 * of an undamaged file would walk the frames (skippable ones passed
 * whole); NULL when every slot is claimed, or when the walk has stopped
 * at the end or at anything that is not a plain frame (damage, the
 * trailer, a frame too large): the scan decompresses inline from there.
 */
static struct slot *claim(struct cap_prefetch *p)
{
	uint64_t size, usize;
	struct slot *s;
	uint32_t magic;
	size_t n;

	while (!p->walked && p->count < SLOTS) {
		if (p->cursor + 8 > p->end) {
			p->walked = true;
			break;
		}
		magic = get32(p->buf + p->cursor);
		if (magic == CAP_ZSTD_MAGIC) {
			n = frame_at(p, &usize);
			if (!n) {
				p->walked = true;
				break;
			}
			s = &p->slot[(p->head + p->count++) % SLOTS];
			s->pos = p->cursor;
			s->n = n;
			s->usize = usize;
			s->ready = false;
			p->cursor += n;
			return s;
		}
		size = 8 + (uint64_t)get32(p->buf + p->cursor + 4);
		if ((magic & 0xfffffff0u) != 0x184D2A50u || magic == CAP_SKIP_MAGIC_TRAILER ||
		    size > p->end - p->cursor)
			p->walked = true;
		else
			p->cursor += size;
	}
	return NULL;
}

/* Under the lock, taken back after: the claimed slot s decompressed by
 * dctx, into out, else into its own buffer. */
static void fill(struct cap_prefetch *p, struct slot *s, ZSTD_DCtx *dctx, uint8_t *out)
{
	pthread_mutex_unlock(&p->lock);
	s->got = ZSTD_decompressDCtx(dctx, out ? out : s->buf, s->usize, p->buf + s->pos, s->n);
	if (out && !ZSTD_isError(s->got))
		stream_copy(s->buf, out, s->got);
	pthread_mutex_lock(&p->lock);
	s->ready = true;
	pthread_cond_broadcast(&p->cond);
}

static void *walk(void *arg)
{
	struct cap_prefetch *p = arg;
	struct slot *s;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		s = claim(p);
		if (s)
			fill(p, s, p->dctx, p->hot);
		else if (p->walked)
			break;
		else
			pthread_cond_wait(&p->cond, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void free_slots(struct cap_prefetch *p)
{
	int i;

	for (i = 0; i < SLOTS; i++)
		free(p->slot[i].buf);
	free(p->hot);
	free(p);
}

/* Whether the calling thread may run on one CPU only. */
static bool one_cpu(void)
{
	cpu_set_t set;

	return !sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) < 2;
}

void cap__prefetch_start(struct cap_reader *r)
{
	struct cap_prefetch *p;
	int i;

	if (!r->drop || !r->ended || r->data_start >= r->data_end ||
	    r->data_end - r->data_start < MIN_FRAMES_BYTES || one_cpu())
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return; /* the scan decompresses it all itself */
	p->hot = malloc(CAP_MAX_BLOCK_SIZE);
	if (!p->hot) {
		free_slots(p);
		return;
	}
	for (i = 0; i < SLOTS; i++) {
		p->slot[i].buf = malloc(CAP_MAX_BLOCK_SIZE);
		if (!p->slot[i].buf) {
			free_slots(p);
			return;
		}
	}
	p->buf = r->buf;
	p->cursor = r->data_start;
	p->end = r->data_end;
	p->dctx = ZSTD_createDCtx();
	/* the scan's limit (§7), so that a frame fails here as there */
	if (!p->dctx || ZSTD_isError(ZSTD_DCtx_setParameter(p->dctx, ZSTD_d_windowLogMax, 23)) ||
	    pthread_mutex_init(&p->lock, NULL)) {
		ZSTD_freeDCtx(p->dctx);
		free_slots(p);
		return;
	}
	pthread_cond_init(&p->cond, NULL);
	if (pthread_create(&p->thread, NULL, walk, p)) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		ZSTD_freeDCtx(p->dctx);
		free_slots(p);
		return;
	}
	r->prefetch = p;
}

/* The slot's block into r->block: its buffer becomes the block and the
 * block's (grown to the largest block's size first) the slot's, else a
 * copy (r->block holds s->usize already). */
static void take(struct cap_reader *r, struct slot *s)
{
	uint8_t *b = r->block_cap < CAP_MAX_BLOCK_SIZE ? realloc(r->block, CAP_MAX_BLOCK_SIZE) :
							 r->block;

	if (!b) {
		memcpy(r->block, s->buf, s->usize);
		return;
	}
	r->block = s->buf;
	r->block_cap = CAP_MAX_BLOCK_SIZE;
	s->buf = b;
}

/*
 * The frame at pos, as the scan asks for it: true with its block in
 * r->block and *got set when a slot holds it; false to decompress it
 * inline. While the slot at the head is still the thread's, the scan
 * fills the next free one itself rather than wait, with its own context
 * (the same limits) and straight into the slot's buffer, which it reads
 * next: where decoding is quicker than zstd, the two share zstd's work.
 */
bool cap__prefetch_take(struct cap_reader *r, uint64_t pos, size_t n, uint64_t usize, size_t *got)
{
	struct cap_prefetch *p = r->prefetch;
	struct slot *s, *h;
	bool ok = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		s = p->count ? &p->slot[p->head] : NULL;
		if (s && s->pos > pos)
			break; /* the scan skipped ahead of none: inline */
		if (!s || !s->ready) {
			h = claim(p);
			if (h)
				fill(p, h, r->dctx, NULL);
			else if (!s)
				break; /* no frame to come: inline */
			else
				pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		if (s->pos == pos && s->n == n && s->usize == usize) {
			take(r, s);
			*got = s->got;
			ok = true;
		}
		p->head = (p->head + 1) % SLOTS;
		p->count--;
		pthread_cond_broadcast(&p->cond);
		if (ok || s->pos == pos)
			break;
	}
	pthread_mutex_unlock(&p->lock);
	return ok;
}

void cap__prefetch_stop(struct cap_reader *r)
{
	struct cap_prefetch *p = r->prefetch;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	ZSTD_freeDCtx(p->dctx);
	free_slots(p);
	r->prefetch = NULL;
}
