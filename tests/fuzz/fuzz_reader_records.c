// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the record decoder (FORMAT.md §4): the input is the
 * content of one block after its BLOCK record. It is wrapped in a valid
 * header and a checksummed zstd frame, so that mutations reach the record
 * rules instead of failing the block checksum as they do in fuzz_reader.
 */

#include "tests/fuzz/fuzz_util.h"

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
	len = fuzz_block_capture(data, size, &file);
	if (cap_reader__open_mem(file, len, &r))
		abort();
	while (cap_reader__next(r, &rec) == 1) {
		if (rec.tail) {
			if (rec.tail[rec.tail_len])
				abort();
			for (i = 0; i < rec.tail_len; i++)
				sink += (uint8_t)rec.tail[i];
		}
		/* §4.26: a TRIGGER returned is one a reader may show */
		if (rec.type == CAP_REC_TRIGGER &&
		    (!cap_trigger_kind_name(rec.trigger.kind) ||
		     rec.trigger.window_start > rec.trigger.window_end))
			abort();
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
