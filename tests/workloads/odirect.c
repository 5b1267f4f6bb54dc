// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test workload: COUNT O_DIRECT writes of SIZE bytes to a new file at PATH
 * (on a real block device: /var/tmp, not tmpfs), fsync, then unlink. The
 * block layer sees exactly COUNT * SIZE bytes written by this process.
 * usage: odirect PATH [COUNT [SIZE]]   (default 64 65536)
 */
#define _GNU_SOURCE /* pthread_setname_np, O_DIRECT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void odirect_write_all(int fd, char *buf, long count, long size)
{
	long i;

	for (i = 0; i < count; i++) {
		memset(buf, (int)i, size);
		if (pwrite(fd, buf, size, i * size) != size) {
			perror("odirect: pwrite");
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	long count = argc > 2 ? atol(argv[2]) : 64;
	long size = argc > 3 ? atol(argv[3]) : 65536;
	void *buf;
	int fd;

	if (argc < 2 || count <= 0 || size <= 0 || size % 4096) {
		fprintf(stderr, "usage: odirect PATH [COUNT [SIZE (multiple of 4096)]]\n");
		return 2;
	}
	if (posix_memalign(&buf, 4096, size))
		return 1;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0) {
		perror("odirect: open");
		return 1;
	}
	odirect_write_all(fd, buf, count, size);
	if (fsync(fd)) {
		perror("odirect: fsync");
		return 1;
	}
	close(fd);
	unlink(argv[1]);
	printf("pid=%d\nbytes=%ld\n", getpid(), count * size);
	free(buf);
	return 0;
}
