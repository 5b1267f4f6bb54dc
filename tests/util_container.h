/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A "container" as a runtime starts one, for the end-to-end tests: a
 * cgroup v2 directory named as Docker or containerd under Kubernetes name
 * theirs, a root file system directory holding its own copy of a workload
 * (and the libraries ldd names), and a launcher that moves itself into
 * the cgroup, then runs the workload under `unshare --mount --pid --fork`
 * chrooted into that root: the workload is PID 1 of its namespace.
 */
#ifndef STKREC_TESTS_UTIL_CONTAINER_H
#define STKREC_TESTS_UTIL_CONTAINER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

enum container_kind {
	CONTAINER_DOCKER,  /* /system.slice/docker-<64 hex>.scope */
	CONTAINER_KUBEPOD, /* /kubepods.slice/kubepods-burstable.slice/
			    * kubepods-burstable-pod<uid>.slice/cri-containerd-<64 hex>.scope */
};

struct container {
	char mount[PATH_MAX];  /* the cgroup2 mount */
	char rel[PATH_MAX];    /* the cgroup below it */
	char root[PATH_MAX];   /* the root file system */
	char made[4][PATH_MAX]; /* cgroup directories made, outermost first */
	bool shared[4];        /* made[i] may be another test's too */
	int nr_made;
	uint64_t id;           /* the cgroup's id: its directory's inode */
};

/* The cgroup2 mount, or skip the test (cr_skip_test) without one or root. */
void container_need(char *mount, size_t len);
/* Make the cgroup (seed tells two apart) and the root file system with
 * /WORKLOAD copied from $STKREC_WORKLOADS, and a /tmp anyone may write. */
void container__make(struct container *c, enum container_kind kind, unsigned seed,
		     const char *workload);
/* A shell command running /WORKLOAD ARGS in the container. */
void container__cmd(const struct container *c, const char *workload, const char *args,
		    char *buf, size_t len);
/* Remove the cgroup (once empty) and the root file system. */
void container__remove(struct container *c);

#endif
