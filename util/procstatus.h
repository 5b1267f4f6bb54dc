/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What /proc/TID/status says of a live thread: its real uid and its ids in
 * its own PID namespace (the last fields of NSpid and NStgid, Linux 4.1+).
 * The one reader of that file; never prints.
 */
#ifndef STKREC_UTIL_PROCSTATUS_H
#define STKREC_UTIL_PROCSTATUS_H

#include <stdint.h>

struct proc_status {
	uint32_t uid;    /* real uid */
	uint32_t ns_tid; /* tid in its own PID namespace; 0: the kernel does not say */
	uint32_t ns_pid; /* its tgid there; 0: likewise */
};

/* 0, or -errno of the open (-ENOENT: the thread is gone), or -ENOENT
 * when the file has no Uid line. */
int proc_status__read(uint32_t tid, struct proc_status *out);

#endif /* STKREC_UTIL_PROCSTATUS_H */
