// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Block device names: every disk in SYSFS/block and its partitions (the
 * subdirectories that have a "partition" file), from their "dev" files
 * ("MAJ:MIN"). BIO records carry major:minor only; report names them with
 * these records. Records are written sorted by (major, minor) so a capture
 * does not depend on readdir order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/blockdev.h"
#include "util/array.h"

#define BLOCKDEV_MAX 4096

struct bdev_list {
	struct cap_blockdev *v;
	size_t n, cap;
};

/* Read "MAJ:MIN\n" from dir/dev. */
static int read_devno(int dirfd, uint32_t *major, uint32_t *minor)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = openat(dirfd, "dev", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (sscanf(buf, "%u:%u", major, minor) != 2)
		return -EIO; /* not what sysfs writes */
	return 0;
}

static int list_add(struct bdev_list *l, const char *name, int dirfd)
{
	struct cap_blockdev *d;
	size_t i;

	if (l->n == BLOCKDEV_MAX)
		return -E2BIG;
	if (ARRAY_RESERVE(l->v, l->cap, l->n + 1))
		return -ENOMEM;
	d = &l->v[l->n];
	memset(d, 0, sizeof(*d));
	if (read_devno(dirfd, &d->major, &d->minor))
		return 0; /* not a device directory: skip */
	/* sysfs spells '/' in device names as '!' (cciss!c0d0) */
	for (i = 0; name[i] && i < sizeof(d->name) - 1; i++)
		d->name[i] = name[i] == '!' ? '/' : name[i];
	l->n++;
	return 0;
}

static int is_partition(int diskfd, const char *name)
{
	char path[NAME_MAX + 16];

	snprintf(path, sizeof(path), "%s/partition", name);
	return faccessat(diskfd, path, F_OK, 0) == 0;
}

static int scan_disk(struct bdev_list *l, int blockfd, const char *disk)
{
	struct dirent *de;
	int fd, sub, err;
	DIR *dir;

	fd = openat(blockfd, disk, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* vanished or not a directory */
	err = list_add(l, disk, fd);
	dir = err ? NULL : fdopendir(fd);
	if (!dir) {
		if (!err)
			err = -errno;
		close(fd);
		return err;
	}
	while (!err && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || !is_partition(fd, de->d_name))
			continue;
		sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;
		err = list_add(l, de->d_name, sub);
		close(sub);
	}
	closedir(dir);
	return err;
}

static int cmp_bdev(const void *a, const void *b)
{
	const struct cap_blockdev *x = a, *y = b;

	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return strncmp(x->name, y->name, sizeof(x->name));
}

static int scan_block(struct bdev_list *l, const char *sysfs_root)
{
	char path[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *dir;

	if (snprintf(path, sizeof(path), "%s/block", sysfs_root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (de = readdir(dir))) {
		if (de->d_name[0] != '.')
			err = scan_disk(l, dirfd(dir), de->d_name);
	}
	closedir(dir);
	return err;
}

int blockdev__write_all(struct cap_writer *w, const char *sysfs_root)
{
	struct bdev_list l = {};
	size_t i;
	int err;

	if (!w || !sysfs_root)
		return CAP_ERR_INVAL;
	err = scan_block(&l, sysfs_root);
	if (!err)
		qsort(l.v, l.n, sizeof(*l.v), cmp_bdev);
	for (i = 0; !err && i < l.n; i++)
		err = cap_writer__append(w, CAP_REC_BLOCKDEV, &l.v[i], sizeof(l.v[i]),
					 NULL, 0);
	free(l.v);
	return err ? err : (int)i;
}
