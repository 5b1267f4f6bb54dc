// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload, built without frame pointers: COUNT O_DIRECT writes of
 * SIZE bytes to PATH (a block device, or a new file on one) in main ->
 * write_all -> write_block -> pwrite, then fsync; a new file is unlinked.
 * Each write is one block request, waited for (off-CPU) in that stack.
 * usage: nofp_odirect PATH [COUNT [SIZE]]   (default 64 65536)
 */
#define _GNU_SOURCE /* O_DIRECT */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nofp_common.h"

NOFP_FN int write_block(int fd, char *buf, long size, long i)
{
	memset(buf, (int)i, size);
	return pwrite(fd, buf, size, i * size) == size ? 0 : -1;
}

NOFP_FN int write_all(int fd, char *buf, long count, long size)
{
	long i;

	for (i = 0; i < count; i++) {
		if (write_block(fd, buf, size, i)) {
			perror("nofp_odirect: pwrite");
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	long count = argc > 2 ? atol(argv[2]) : 64;
	long size = argc > 3 ? atol(argv[3]) : 65536;
	struct stat st;
	void *buf;
	int fd, blk;

	if (argc < 2 || count <= 0 || size <= 0 || size % 4096) {
		fprintf(stderr, "usage: nofp_odirect PATH [COUNT [SIZE (multiple of 4096)]]\n");
		return 2;
	}
	if (posix_memalign(&buf, 4096, size))
		return 1;
	blk = !stat(argv[1], &st) && S_ISBLK(st.st_mode);
	fd = open(argv[1], O_WRONLY | O_CREAT | (blk ? 0 : O_TRUNC) | O_DIRECT, 0600);
	if (fd < 0) {
		perror("nofp_odirect: open");
		return 1;
	}
	if (write_all(fd, buf, count, size) || fsync(fd)) {
		perror("nofp_odirect: write");
		return 1;
	}
	close(fd);
	if (!blk)
		unlink(argv[1]);
	free(buf);
	return 0;
}
