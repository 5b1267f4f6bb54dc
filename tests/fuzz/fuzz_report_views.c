// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: any byte string loaded as a capture and put through
 * every report view (with the options that change code paths) must not
 * crash, overread or leak. Output goes to /dev/null.
 */
#define FUZZ_WITH_VIEWS
#include "tests/fuzz/fuzz_util.h"

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
		fuzz_run_views(&ctx);
		resolver__free(ctx.res);
	}
	filter__free(&f);
	model__free(m);
	return 0;
}
