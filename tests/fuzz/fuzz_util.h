/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the fuzz targets (each is one translation unit, so the helpers
 * are static): wrapping a block's records in a valid capture, and running
 * every report view. Define FUZZ_WITH_VIEWS before including for the latter.
 */
#ifndef STKREC_TESTS_FUZZ_UTIL_H
#define STKREC_TESTS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "format/capture.h"

/* The content of one block (records after its BLOCK record), wrapped in a
 * valid header and a checksummed zstd frame, so that mutations reach the
 * record rules instead of failing the block checksum. */
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

static size_t fuzz_block_capture(const uint8_t *data, size_t size, uint8_t **out)
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

#ifdef FUZZ_WITH_VIEWS
#include "report/filter.h"
#include "report/model.h"
#include "report/resolve.h"
#include "report/views.h"

static FILE *devnull;

static void fuzz_run_views(struct report_ctx *ctx)
{
	struct report_opts base = ctx->opts;

	ctx->opts.callgraph = true;
	view_perf(ctx, devnull);
	ctx->opts = base;
	ctx->opts.sort[0] = SORT_CONTAINER; /* cgroups named from hostile paths */
	ctx->opts.sort[1] = SORT_CGROUP;
	ctx->opts.nsort = 2;
	view_perf(ctx, devnull);
	ctx->opts = base;
	ctx->opts.delimited = ctx->opts.annotate = ctx->opts.with_pid = true;
	view_folded(ctx, devnull);
	ctx->opts = base;
	view_topwaits(ctx, devnull);
	ctx->opts.json = true;
	view_topwaits(ctx, devnull);
	ctx->opts = base;
	ctx->opts.count = 4;
	view_biotop(ctx, devnull);
	ctx->opts = base;
	view_script(ctx, devnull);
	ctx->opts.script_folded = true;
	view_script(ctx, devnull);
	ctx->opts = base;
	ctx->opts.cpu_period_ns = 1000000;
	view_pprof(ctx, devnull);
	view_speedscope(ctx, devnull);
	view_chrome(ctx, devnull);
}
#endif

#endif
