/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Block device names (disks and partitions) from /sys/block and /sys/dev. */
#ifndef STKREC_RECORD_BLOCKDEV_H
#define STKREC_RECORD_BLOCKDEV_H

#include "format/capture.h"

/* One BLOCKDEV record per disk and partition. Returns the count or -errno.
 * sysfs_root is "/sys" (tests pass a fake tree). */
int blockdev__write_all(struct cap_writer *w, const char *sysfs_root);

#endif
