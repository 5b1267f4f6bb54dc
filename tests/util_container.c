// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A container for the end-to-end tests (util_container.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "record/cgroups.h"
#include "tests/util_container.h"
#include "tests/util_e2e.h"

void container_need(char *mount, size_t len)
{
	if (geteuid())
		cr_skip_test("cgroups and namespaces need root");
	if (cgroups__find_mount(mount, len))
		cr_skip_test("no cgroup2 file system mounted (cgroup v1 only)");
	if (!e2e_have("unshare") || !e2e_have("chroot") || !e2e_have("ldd"))
		cr_skip_test("unshare, chroot or ldd missing");
}

/* 64 hex digits, as a runtime's container id, from seed and our pid. */
static void hex_id(unsigned seed, char *out)
{
	uint64_t x = (uint64_t)getpid() << 20 ^ seed;
	int i;

	for (i = 0; i < 64; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		out[i] = "0123456789abcdef"[x >> 60];
	}
	out[64] = '\0';
}

/* A cgroup directory below the mount. A shared one (the kubepods slices
 * every pod of these tests sits in) is removed by whichever test using it
 * ends last, whoever made it: tests of two runs side by side share it. */
static void make_dir(struct container *c, const char *rel, bool shared)
{
	char path[PATH_MAX];
	bool made;

	snprintf(path, sizeof(path), "%s%s", c->mount, rel);
	made = !mkdir(path, 0755);
	if (!made)
		cr_assert_eq(errno, EEXIST, "mkdir %s: %s", path, strerror(errno));
	if (!made && !shared)
		return;
	cr_assert_lt(c->nr_made, 4);
	c->shared[c->nr_made] = shared;
	snprintf(c->made[c->nr_made++], PATH_MAX, "%s", path);
}

static void make_cgroup(struct container *c, enum container_kind kind, unsigned seed)
{
	char id[65], pod[64];
	struct stat st;
	char path[PATH_MAX];

	hex_id(seed, id);
	if (kind == CONTAINER_DOCKER) {
		make_dir(c, "/system.slice", false);
		snprintf(c->rel, sizeof(c->rel), "/system.slice/docker-%s.scope", id);
	} else {
		/* a pod uid with underscores, as the systemd driver writes it */
		snprintf(pod, sizeof(pod), "%.8s_%.4s_%.4s_%.4s_%.12s", id + 1, id + 9, id + 13,
			 id + 17, id + 21);
		make_dir(c, "/kubepods.slice", true);
		make_dir(c, "/kubepods.slice/kubepods-burstable.slice", true);
		snprintf(c->rel, sizeof(c->rel),
			 "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice",
			 pod);
		make_dir(c, c->rel, false);
		snprintf(c->rel + strlen(c->rel), sizeof(c->rel) - strlen(c->rel),
			 "/cri-containerd-%s.scope", id);
	}
	make_dir(c, c->rel, false);
	snprintf(path, sizeof(path), "%s%s", c->mount, c->rel);
	cr_assert_eq(stat(path, &st), 0);
	c->id = st.st_ino;
}

void container__make(struct container *c, enum container_kind kind, unsigned seed,
		     const char *workload)
{
	const char *dir = e2e_env("STKREC_WORKLOADS", "build/workloads");
	char tmpl[] = "/tmp/stkrec-rootfs-XXXXXX";

	memset(c, 0, sizeof(*c));
	container_need(c->mount, sizeof(c->mount));
	cr_assert(mkdtemp(tmpl));
	snprintf(c->root, sizeof(c->root), "%s", tmpl);
	cr_assert_eq(e2e_shell("set -e; cd %s; chmod 755 .; mkdir -m 1777 tmp; cp %s/%s ./%s; "
			       "for f in $(ldd ./%s | grep -o '/[^ ]*'); do "
			       "mkdir -p .$(dirname $f); cp -L $f .$f; done",
			       c->root, dir, workload, workload, workload), 0,
		     "root file system for %s", workload);
	make_cgroup(c, kind, seed);
}

void container__cmd(const struct container *c, const char *workload, const char *args,
		    char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "sh -c 'echo 0 > %s%s/cgroup.procs && exec unshare --mount --pid "
			 "--fork chroot %s /%s %s'",
			 c->mount, c->rel, c->root, workload, args);

	cr_assert_lt(n, (int)len);
}

void container__remove(struct container *c)
{
	int i;

	int tries;

	/* a cgroup empties once its last task is reaped: a moment after; a
	 * shared one another test still uses is that test's to remove */
	for (i = c->nr_made - 1; i >= 0; i--) {
		if (c->shared[i]) {
			rmdir(c->made[i]);
			continue;
		}
		for (tries = 0; rmdir(c->made[i]) && errno == EBUSY && tries < 100; tries++)
			usleep(20000);
		cr_expect(access(c->made[i], F_OK), "%s left behind: %s", c->made[i],
			  strerror(errno));
	}
	if (c->root[0])
		e2e_shell("rm -rf %s", c->root);
	c->nr_made = 0;
	c->root[0] = '\0';
}
