// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: any byte string given to the capture reader must be
 * refused or read to the end without a crash, overread or leak, and every
 * record it returns must respect the limits of FORMAT.md §7.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "format/capture.h"

static void touch(const struct cap_record *rec, volatile uint64_t *sink)
{
	uint32_t i;

	if (rec->tail) {
		if (rec->tail_len > CAP_MAX_STRING || rec->tail[rec->tail_len])
			abort();
		for (i = 0; i < rec->tail_len; i++)
			*sink += (uint8_t)rec->tail[i];
	}
	if (rec->type == CAP_REC_STACK) {
		if (rec->stack.nr > CAP_MAX_STACK_DEPTH || (rec->stack.nr && !rec->ips))
			abort();
		for (i = 0; i < rec->stack.nr; i++)
			*sink += rec->ips[i];
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct cap_read_stats *st;
	volatile uint64_t sink = 0;
	struct cap_record rec;
	struct cap_reader *r;
	uint16_t major, minor;
	uint32_t feat;
	char msg[512];
	uint64_t n = 0;
	int ret;

	cap_mem_version(data, size, &major, &minor, &feat);
	if (cap_reader__open_mem(data, size, &r))
		return 0;
	while ((ret = cap_reader__next(r, &rec)) == 1) {
		touch(&rec, &sink);
		n++;
	}
	st = cap_reader__stats(r);
	if (ret < 0 || st->bytes_skipped > size || st->truncated_at > size ||
	    st->counted.records < n)
		abort();
	cap_reader__describe_loss(r, msg, sizeof(msg));
	if (strlen(msg) >= sizeof(msg))
		abort();
	cap_reader__close(r);
	return 0;
}
