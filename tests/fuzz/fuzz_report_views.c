// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: any byte string loaded as a capture and put through
 * every report view (with the options that change code paths) must not
 * crash, overread or leak. Output goes to /dev/null.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "report/filter.h"
#include "report/model.h"
#include "report/resolve.h"
#include "report/views.h"

static FILE *devnull;

static void run_views(struct report_ctx *ctx)
{
	struct report_opts base = ctx->opts;

	ctx->opts.callgraph = true;
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model_opts mo = { .max_memory = 64 << 20 };
	struct report_ctx ctx = { 0 };
	struct filter f = { 0 };
	struct model *m;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (model__load_mem(data, size, &mo, &m))
		return 0;
	if (!filter__bind(&f, m) && !resolver__new(m, NULL, &ctx.res)) {
		ctx.model = m;
		ctx.filter = &f;
		run_views(&ctx);
		resolver__free(ctx.res);
	}
	filter__free(&f);
	model__free(m);
	return 0;
}
