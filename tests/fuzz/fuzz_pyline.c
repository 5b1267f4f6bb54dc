// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for sym_pyline(): any line table, of any version, at
 * any offset gives a line, no line or a named refusal, and reads nothing
 * past the table (a heap copy of its exact size, under ASan). The input: a
 * version byte, co_firstlineno and a first offset (32 bits each, little
 * endian), then the table; the offsets from the first on are tried.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sym/sym.h"

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* 3.8 to 3.13 and, so as to be refused, 3.7 and 3.14 */
	unsigned int version;
	int32_t first, off;
	uint8_t *table;
	size_t len;
	int k;

	if (size < 9)
		return 0;
	version = SYM_PYVER(3, 7 + data[0] % 8);
	first = le32(data + 1);
	off = le32(data + 5);
	len = size - 9;
	table = malloc(len ? len : 1);
	if (!table)
		abort();
	memcpy(table, data + 9, len);
	for (k = 0; k < 64; k++) {
		int line = 0, ret = sym_pyline(version, table, len, first, off, &line);

		if (ret != 0 && ret != SYM_PYLINE_NONE && ret != -EINVAL && ret != -ENOEXEC &&
		    ret != -ERANGE)
			abort();
		if ((ret == 0 && line < 0) || (ret == SYM_PYLINE_NONE && line != -1))
			abort();
		if (off > INT32_MAX - 2)
			break;
		off += 2;
	}
	free(table);
	return 0;
}
