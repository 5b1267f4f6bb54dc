#!/bin/busybox sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# /init of the kernel matrix's guest: mount what the recorder reads (/proc,
# /sys for BTF and block devices, cgroup2), load the disk drivers, run the checks on
# the virtio disk, power off.
/bin/busybox --install -s /bin
export PATH=/bin
echo stkrec-guest-up
mount -t proc proc /proc
# the heartbeat that tells run.sh this guest still makes progress: a
# kernel message (one line, never cut by another writer on the console)
mount -t devtmpfs dev /dev
while :; do echo "<3>stkrec-alive" >/dev/kmsg; sleep 5; done &
mount -t sysfs sys /sys
# cgroup v2, as a systemd host mounts it: the recorder takes each event's
# cgroup from it (check.sh's cgroup checks)
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs tmp /tmp
for m in $(cat /modules.load); do
	modprobe "$m" || echo "modprobe $m failed"
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if mount -t ext4 /dev/vda /mnt; then
	# for a hang's dump (run.sh, hang_dump.py), read from the disk image
	grep ' [tT] ' /proc/kallsyms >/mnt/kallsyms
	sync
	STKREC=/bin/stkrec W=/w T=/tmp sh /check.sh /dev/vda /mnt
else
	echo "FAIL guest.disk: cannot mount /dev/vda ($(ls /dev | tr '\n' ' '))"
	echo "checks done"
fi
umount /mnt
poweroff -f
