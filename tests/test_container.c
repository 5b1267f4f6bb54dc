// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Containers named from cgroup paths (report/container.h): a test per
 * pattern of the table, then the odd and hostile paths.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "report/container.h"

#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID_US "1234abcd_5678_9abc_def0_123456789abc"
#define UID "1234abcd-5678-9abc-def0-123456789abc"

/* Parse path; check kind, id, pod UID and the short name. */
static void expect(const char *path, enum container_kind kind, const char *id,
		   const char *pod, const char *name)
{
	struct container c;
	char buf[300];

	cr_assert_eq(container__parse(path, &c), kind, "%s", path);
	cr_assert_eq(c.kind, kind);
	cr_assert_str_eq(c.id, id, "%s", path);
	cr_assert_str_eq(c.pod_uid, pod, "%s", path);
	cr_assert_str_eq(container__name(&c, buf, sizeof(buf)), name, "%s", path);
}

TestSuite(report_container);

Test(report_container, docker_scope)
{
	expect("/system.slice/docker-" HEX ".scope", CONTAINER_DOCKER, HEX, "",
	       "docker:0123456789ab");
}

Test(report_container, docker_cgroupfs)
{
	expect("/docker/" HEX, CONTAINER_DOCKER, HEX, "", "docker:0123456789ab");
	/* a bare ID elsewhere is nobody's */
	expect("/other/" HEX, CONTAINER_NONE, "", "", "-");
}

Test(report_container, containerd_in_pod_every_qos)
{
	expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_US
	       ".slice/cri-containerd-" HEX ".scope",
	       CONTAINER_CONTAINERD, HEX, UID, "containerd:0123456789ab");
	expect("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_US
	       ".slice/cri-containerd-" HEX ".scope",
	       CONTAINER_CONTAINERD, HEX, UID, "containerd:0123456789ab");
	expect("/kubepods.slice/kubepods-pod" UID_US ".slice/cri-containerd-" HEX ".scope",
	       CONTAINER_CONTAINERD, HEX, UID, "containerd:0123456789ab");
}

Test(report_container, crio)
{
	expect("/kubepods.slice/kubepods-pod" UID_US ".slice/crio-" HEX ".scope",
	       CONTAINER_CRIO, HEX, UID, "cri-o:0123456789ab");
	/* the conmon beside it is not the container, the pod is */
	expect("/kubepods.slice/kubepods-pod" UID_US ".slice/crio-conmon-" HEX ".scope",
	       CONTAINER_POD, "", UID, "pod:" UID);
}

Test(report_container, podman)
{
	expect("/machine.slice/libpod-" HEX ".scope/container", CONTAINER_PODMAN, HEX, "",
	       "podman:0123456789ab");
	expect("/machine.slice/libpod-conmon-" HEX ".scope", CONTAINER_NONE, "", "", "-");
}

Test(report_container, pod_slice_alone)
{
	expect("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_US
	       ".slice", CONTAINER_POD, "", UID, "pod:" UID);
}

Test(report_container, kubepods_cgroupfs)
{
	expect("/kubepods/burstable/pod" UID "/" HEX, CONTAINER_CRI, HEX, UID,
	       "cri:0123456789ab");
	expect("/kubepods/pod" UID, CONTAINER_POD, "", UID, "pod:" UID);
	/* "pod..." outside kubepods is a directory like any other */
	expect("/somewhere/pod" UID, CONTAINER_NONE, "", "", "-");
}

Test(report_container, systemd_service)
{
	expect("/system.slice/nginx.service", CONTAINER_SERVICE, "nginx.service", "",
	       "systemd:nginx.service");
	/* the innermost service */
	expect("/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service",
	       CONTAINER_SERVICE, "foo.service", "", "systemd:foo.service");
	expect("/system.slice/.service", CONTAINER_NONE, "", "", "-");
}

Test(report_container, machine)
{
	expect("/machine.slice/machine-web\\x2d1.scope", CONTAINER_MACHINE, "web-1", "",
	       "machine:web-1");
	/* a service inside the machine: the machine names it */
	expect("/machine.slice/machine-db.scope/system.slice/pg.service", CONTAINER_MACHINE,
	       "db", "", "machine:db");
	/* \x00 stays as written */
	expect("/machine.slice/machine-a\\x00.scope", CONTAINER_MACHINE, "a\\x00", "",
	       "machine:a\\x00");
}

Test(report_container, service_inside_a_container)
{
	expect("/system.slice/docker-" HEX ".scope/system.slice/cron.service",
	       CONTAINER_DOCKER, HEX, "", "docker:0123456789ab");
}

Test(report_container, no_false_match)
{
	static const char *const paths[] = {
		"/", "", "//", "/system.slice", "/system.slice/docker-notahex.scope",
		"/system.slice/docker-" HEX "0.scope", /* 65 digits */
		"/system.slice/docker-0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		"/system.slice/docker-" HEX ".scop",
		"/kubepods.slice/kubepods-pod1234.slice", "/kubepods.slice/kubepods-podXX.slice",
		"/kubepods.slice/kubepods-pod" UID_US "x.slice", "/machine.slice/machine-.scope",
		"/init.scope", "/user.slice/user-1000.slice/session-2.scope",
	};
	struct container c;
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		cr_assert_eq(container__parse(paths[i], &c), CONTAINER_NONE, "%s", paths[i]);
	cr_assert_eq(container__parse(NULL, &c), CONTAINER_NONE);
	/* the docker daemon itself is a service, not a container */
	cr_assert_eq(container__parse("/system.slice/docker.service", &c), CONTAINER_SERVICE);
}

Test(report_container, hostile_lengths)
{
	size_t n = 70000;
	char *p = malloc(n + 1);
	struct container c;
	char buf[8];

	cr_assert_not_null(p);
	memset(p, 'a', n);
	p[n] = '\0';
	memcpy(p + n - 8, ".service", 8); /* a component longer than a name */
	cr_assert_eq(container__parse(p, &c), CONTAINER_NONE);
	memset(p, '/', n);
	cr_assert_eq(container__parse(p, &c), CONTAINER_NONE);
	/* an escape cut short stays as written */
	strcpy(p + n - 20, "/machine-\\x2.scope");
	cr_assert_eq(container__parse(p, &c), CONTAINER_MACHINE);
	cr_assert_str_eq(c.id, "\\x2");
	free(p);
	/* a name cut to the buffer given */
	c.kind = CONTAINER_SERVICE;
	strcpy(c.id, "a-long-unit-name.service");
	cr_assert_str_eq(container__name(&c, buf, sizeof(buf)), "systemd");
	cr_assert_str_eq(container__runtime(CONTAINER_KIND_MAX), "");
}
