/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Containers named from a cgroup v2 path (as a capture's CGROUP record
 * holds it, below the cgroup2 mount): the runtime and the container ID of
 * the layouts of Docker, containerd, CRI-O and Podman, the Kubernetes pod
 * UID, the systemd service and the systemd-nspawn (machined) machine.
 *
 * One table of patterns (container.c) decides them all. A path is hostile
 * input: any bytes, any length; no match is "no container", never a guess.
 * Pure functions, no allocation; the library never prints.
 */
#ifndef STKREC_REPORT_CONTAINER_H
#define STKREC_REPORT_CONTAINER_H

#include <stddef.h>

enum container_kind {
	CONTAINER_NONE,       /* no pattern matched */
	CONTAINER_DOCKER,     /* docker-ID.scope, /docker/ID */
	CONTAINER_CONTAINERD, /* cri-containerd-ID.scope */
	CONTAINER_CRIO,       /* crio-ID.scope */
	CONTAINER_PODMAN,     /* libpod-ID.scope */
	CONTAINER_CRI,        /* cgroupfs driver: /kubepods/QOS/podUID/ID */
	CONTAINER_POD,        /* a Kubernetes pod's own cgroup (no container) */
	CONTAINER_SERVICE,    /* a systemd service: NAME.service */
	CONTAINER_MACHINE,    /* machine-NAME.scope (systemd-nspawn, machined) */
	CONTAINER_KIND_MAX,
};

#define CONTAINER_ID_MAX 64   /* a 64-hex container ID */
#define CONTAINER_UID_MAX 36  /* a pod UID, 8-4-4-4-12 */
#define CONTAINER_NAME_MAX 255 /* a unit or machine name (a path component) */

struct container {
	enum container_kind kind;
	/* the container ID (64 hex), the unit name ("nginx.service") or the
	 * machine name; "" for a pod's own cgroup */
	char id[CONTAINER_NAME_MAX + 1];
	char pod_uid[CONTAINER_UID_MAX + 1]; /* with dashes; "" outside a pod */
};

/* Name the container of a cgroup path: the outermost container a
 * runtime made (a service inside a container is the container's), else
 * the pod, else the innermost service or machine. Returns the kind
 * (CONTAINER_NONE and out zeroed when nothing matched). path may be NULL. */
enum container_kind container__parse(const char *path, struct container *out);

/* The runtime's name: "docker", "containerd", "cri-o", "podman", "cri",
 * "pod", "systemd", "machine"; "" for CONTAINER_NONE. */
const char *container__runtime(enum container_kind kind);

/* The short form views print, "RUNTIME:ID" with a container ID cut to
 * 12 hex digits as docker ps shows it ("docker:0123456789ab",
 * "pod:UID", "systemd:nginx.service"), "-" without one, into buf (len >
 * 0). Returns buf. */
char *container__name(const struct container *c, char *buf, size_t len);

#endif /* STKREC_REPORT_CONTAINER_H */
