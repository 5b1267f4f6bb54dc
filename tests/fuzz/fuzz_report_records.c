// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the report on decoded records: the input is the
 * content of one block (records after its BLOCK record), wrapped in a valid
 * header and a checksummed zstd frame as in fuzz_reader_records.c, so that
 * mutations reach the model (ids, definitions, mappings, times) and every
 * view instead of failing the block checksum.
 */
#define FUZZ_WITH_VIEWS
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model_opts mo = { .max_memory = 64 << 20 };
	struct report_ctx ctx = { 0 };
	struct filter f = { 0 };
	struct model *m;
	uint8_t *file;
	size_t len;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	len = fuzz_block_capture(data, size, &file);
	if (!model__load_mem(file, len, &mo, &m)) {
		if (!filter__bind(&f, m) && !resolver__new(m, NULL, &ctx.res)) {
			ctx.model = m;
			ctx.filter = &f;
			fuzz_run_views(&ctx);
			resolver__free(ctx.res);
		}
		filter__free(&f);
		model__free(m);
	}
	free(file);
	return 0;
}
