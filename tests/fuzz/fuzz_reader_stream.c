// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: any byte string read as a stream (FORMAT.md §5.6), in
 * chunks of sizes the input picks, must read exactly as the same bytes in
 * memory (records, statistics, loss, refusals), without a crash, overread
 * or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include "format/capture.h"
#include "tests/stream_compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sc_reading a, b;
	struct sc_feed f = { .buf = data, .len = size };
	size_t max_chunk[2] = { 1, size ? 1 + data[size - 1] % 251 : 1 };
	int i;

	sc_read_mem(data, size, &a);
	for (i = 0; i < 2; i++) {
		f.off = 0;
		f.max_chunk = max_chunk[i];
		f.seed = size + i;
		if (sc_read_stream(&f, &b) || sc_diff(&a, &b))
			abort();
	}
	return 0;
}
