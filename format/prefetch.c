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
};

struct cap_prefetch {
	const uint8_t *buf;     /* the file, [start, end) its frames */
	uint64_t start, end;
	ZSTD_DCtx *dctx;
	uint8_t *hot;           /* zstd's output, CAP_MAX_BLOCK_SIZE bytes */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct slot slot[SLOTS];
	unsigned head, count;   /* ready slots: head, head + 1, ... */
	bool done, stop;        /* the thread has no more / is told to end */
};

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The next slot to fill, once free; NULL when told to stop. */
static struct slot *free_slot(struct cap_prefetch *p)
{
	struct slot *s = NULL;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && p->count == SLOTS)
		pthread_cond_wait(&p->cond, &p->lock);
	if (!p->stop)
		s = &p->slot[(p->head + p->count) % SLOTS];
	pthread_mutex_unlock(&p->lock);
	return s;
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

/* The frame at pos into a slot: its extent, or 0 to stop here. */
static size_t fill(struct cap_prefetch *p, uint64_t pos)
{
	const uint8_t *src = p->buf + pos;
	uint64_t left = p->end - pos;
	unsigned long long fcs;
	struct slot *s;
	size_t n;

	n = ZSTD_findFrameCompressedSize(src, left < CAP_MAX_FRAME_SIZE ? left : CAP_MAX_FRAME_SIZE);
	if (ZSTD_isError(n) || n > left)
		return 0;
	fcs = ZSTD_getFrameContentSize(src, n);
	if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs == ZSTD_CONTENTSIZE_UNKNOWN ||
	    fcs > CAP_MAX_BLOCK_SIZE)
		return 0;
	s = free_slot(p);
	if (!s)
		return 0;
	s->pos = pos;
	s->n = n;
	s->usize = fcs;
	s->got = ZSTD_decompressDCtx(p->dctx, p->hot, fcs, src, n);
	if (!ZSTD_isError(s->got))
		stream_copy(s->buf, p->hot, s->got);
	pthread_mutex_lock(&p->lock);
	p->count++;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return n;
}

static void *walk(void *arg)
{
	struct cap_prefetch *p = arg;
	uint64_t pos = p->start, size;
	uint32_t magic;

	while (pos + 8 <= p->end) {
		magic = get32(p->buf + pos);
		if (magic == CAP_ZSTD_MAGIC) {
			size = fill(p, pos);
		} else if ((magic & 0xfffffff0u) == 0x184D2A50u && magic != CAP_SKIP_MAGIC_TRAILER) {
			size = 8 + (uint64_t)get32(p->buf + pos + 4); /* skipped whole */
			if (size > p->end - pos)
				size = 0;
		} else {
			size = 0;
		}
		if (!size)
			break;
		pos += size;
	}
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_broadcast(&p->cond);
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
	p->start = r->data_start;
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

bool cap__prefetch_take(struct cap_reader *r, uint64_t pos, size_t n, uint64_t usize, size_t *got)
{
	struct cap_prefetch *p = r->prefetch;
	struct slot *s;
	bool ok = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->count && !p->done)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->count)
			break;
		s = &p->slot[p->head];
		if (s->pos > pos)
			break; /* the scan skipped ahead of none: inline */
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
