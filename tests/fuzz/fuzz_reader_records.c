// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the record decoder (FORMAT.md §4): the input is the
 * content of one block after its BLOCK record. It is wrapped in a valid
 * header and a checksummed zstd frame, so that mutations reach the record
 * rules instead of failing the block checksum as they do in fuzz_reader.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "format/capture.h"

struct mem {
	uint8_t *buf;
	size_t len, cap;
};

static ssize_t mem_write(int fd, const void *p, size_t len, void *ctx)
{
	struct mem *m = ctx;

	(void)fd;
	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->buf = realloc(m->buf, m->cap);
		if (!m->buf)
			abort();
	}
	memcpy(m->buf + m->len, p, len);
	m->len += len;
	return len;
}

/* The bytes of a valid header frame, made once by the real writer. */
static const struct mem *header(void)
{
	static struct mem m;
	struct cap_writer_opts o = { .write_fn = mem_write, .write_ctx = &m };
	struct cap_header h = { .ncpus = 1, .page_size = 4096 };
	struct cap_writer *w;

	if (m.len)
		return &m;
	if (cap_writer__fdopen(0x7fff, &h, &o, &w))
		abort();
	/* free, not finish: only the header is wanted (fd is never used) */
	cap_writer__free(w);
	return &m;
}

static size_t build(const uint8_t *data, size_t size, uint8_t **out)
{
	const struct mem *h = header();
	struct cap_rec_hdr rh = { CAP_REC_BLOCK, 20 };
	struct cap_block b = { 0, 0 };
	size_t raw_len = 20 + size, bound, n;
	uint8_t *raw, *file;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();

	raw = malloc(raw_len);
	memcpy(raw, &rh, 4);
	memcpy(raw + 4, &b, 16);
	memcpy(raw + 20, data, size);
	bound = ZSTD_compressBound(raw_len);
	file = malloc(h->len + bound);
	memcpy(file, h->buf, h->len);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
	n = ZSTD_compress2(cctx, file + h->len, bound, raw, raw_len);
	ZSTD_freeCCtx(cctx);
	free(raw);
	if (ZSTD_isError(n))
		abort();
	*out = file;
	return h->len + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile uint64_t sink = 0;
	struct cap_record rec;
	struct cap_reader *r;
	uint8_t *file;
	size_t len;
	char msg[256];
	uint32_t i;

	if (size > CAP_MAX_BLOCK_SIZE - 20)
		return 0;
	len = build(data, size, &file);
	if (cap_reader__open_mem(file, len, &r))
		abort();
	while (cap_reader__next(r, &rec) == 1) {
		if (rec.tail) {
			if (rec.tail[rec.tail_len])
				abort();
			for (i = 0; i < rec.tail_len; i++)
				sink += (uint8_t)rec.tail[i];
		}
		if (rec.type == CAP_REC_STACK) {
			if (rec.stack.nr > CAP_MAX_STACK_DEPTH)
				abort();
			for (i = 0; i < rec.stack.nr; i++)
				sink += rec.ips[i];
		}
	}
	if (cap_reader__stats(r)->blocks != 1 || cap_reader__stats(r)->bad_blocks)
		abort();
	cap_reader__describe_loss(r, msg, sizeof(msg));
	cap_reader__close(r);
	free(file);
	return 0;
}
