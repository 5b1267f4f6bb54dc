// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cgroup v2 ids to paths. The id of a cgroup is its kernfs node id, which
 * on 64-bit is the inode number of its directory: a walk of the mount
 * with stat() names every cgroup that exists at the start. Those made
 * later come from the kernel's cgroup_mkdir tracepoint, in ring buffer
 * order, so before any event of a task inside them; the path is kept
 * after the directory is gone. An id still unknown (its mkdir record
 * lost) walks the hierarchy once more, then is written with no path.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include "record/cgroups.h"
#include "util/hashtab.h"

#define CGROUP2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC */

struct cgroup_ent {
	uint64_t id;
	char *path;        /* below the mount, "/" the root; NULL unknown */
	uint64_t time;     /* when the path was taken */
	uint32_t flags;    /* CAP_CGROUP_F_* */
	unsigned file;     /* the last file with its record, 0 none */
};

struct cgroups {
	char mount[PATH_MAX];
	size_t mount_len;
	struct hashtab tab; /* of struct cgroup_ent */
	uint64_t unnamed;
};

int cgroups__find_mount(char *buf, size_t len)
{
	char *line = NULL, mnt[PATH_MAX], *sep;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (err && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE SUPER */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if (snprintf(buf, len, "%s", mnt) >= (int)len)
			err = -ENAMETOOLONG;
		else
			err = 0;
	}
	free(line);
	fclose(f);
	return err;
}

/* Components of a normalized path below the mount: "/" 0, "/a/b" 2. */
static uint32_t path_level(const char *rel)
{
	uint32_t n = 0;

	for (; *rel; rel++)
		n += rel[0] == '/' && rel[1] && rel[1] != '/';
	return n;
}

int cgroups__resolve(const char *mount, const char *path, uint32_t *level, uint64_t *id)
{
	char full[PATH_MAX], real[PATH_MAX];
	size_t ml = strlen(mount);
	struct statfs sf;
	struct stat st;

	if (path[0] != '/')
		return -ENOENT;
	if (!strncmp(path, mount, ml) && (path[ml] == '/' || !path[ml]))
		path += ml;
	if (snprintf(full, sizeof(full), "%s%s", mount, path) >= (int)sizeof(full))
		return -ENAMETOOLONG;
	if (!realpath(full, real))
		return -errno;
	if (strncmp(real, mount, ml) || (real[ml] != '/' && real[ml]))
		return -ENOTDIR; /* a link out of the hierarchy */
	if (stat(real, &st) || statfs(real, &sf))
		return -errno;
	if (!S_ISDIR(st.st_mode) || sf.f_type != CGROUP2_MAGIC)
		return -ENOTDIR;
	*level = path_level(real + ml);
	*id = st.st_ino;
	return 0;
}

static uint64_t id_hash(uint64_t id)
{
	return hashtab__mix(id);
}

static bool id_eq(const void *ent, const void *key)
{
	return ((const struct cgroup_ent *)ent)->id == *(const uint64_t *)key;
}

/* The entry of id, created empty. */
static struct cgroup_ent *entry(struct cgroups *c, uint64_t id)
{
	struct cgroup_ent *e;
	int n = hashtab__upsert(&c->tab, id_hash(id), &id, id_eq, (void **)&e);

	if (n < 0)
		return NULL;
	if (n)
		e->id = id;
	return e;
}

static int set_path(struct cgroup_ent *e, const char *path, size_t len, uint64_t time)
{
	char *p = strndup(len ? path : "/", len ? len : 1);

	if (!p)
		return -ENOMEM;
	free(e->path);
	e->path = p;
	e->time = time;
	return 0;
}

/* Every directory below dir (fd, its path rel below the mount), depth
 * first; a directory gone meanwhile is skipped. rel has PATH_MAX room. */
static int walk_dir(struct cgroups *c, int fd, char *rel, size_t len, uint64_t now)
{
	struct cgroup_ent *e = NULL;
	struct dirent *de;
	struct stat st;
	int err = 0, sub;
	DIR *d;

	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	e = entry(c, st.st_ino);
	if (!e || (!e->path && set_path(e, rel, len, now))) {
		close(fd);
		return -ENOMEM;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while (!err && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    len + 1 + n >= PATH_MAX)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (sub < 0)
			continue;
		rel[len] = '/';
		memcpy(rel + len + 1, de->d_name, n + 1);
		err = walk_dir(c, sub, rel, len + 1 + n, now);
		rel[len] = '\0';
	}
	closedir(d);
	return err;
}

/* The hierarchy below the mount; a path already known keeps its name. */
static int walk(struct cgroups *c, uint64_t now)
{
	char rel[PATH_MAX] = "";
	int fd = open(c->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return walk_dir(c, fd, rel, 0, now);
}

int cgroups__new(const char *mount, struct cgroups **out)
{
	struct cgroups *c = calloc(1, sizeof(*c));
	struct timespec ts;
	int err;

	if (!c)
		return -ENOMEM;
	c->mount_len = snprintf(c->mount, sizeof(c->mount), "%s", mount);
	if (c->mount_len >= sizeof(c->mount)) {
		free(c);
		return -ENAMETOOLONG;
	}
	hashtab__init(&c->tab, sizeof(struct cgroup_ent));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	err = walk(c, ts.tv_sec * 1000000000ull + ts.tv_nsec);
	if (err) {
		cgroups__free(c);
		return err;
	}
	*out = c;
	return 0;
}

void cgroups__free(struct cgroups *c)
{
	struct cgroup_ent *e;
	size_t pos;

	if (!c)
		return;
	hashtab__for_each(&c->tab, pos, e)
		free(e->path);
	hashtab__free(&c->tab);
	free(c);
}

int cgroups__note(struct cgroups *c, uint64_t id, const char *path, size_t len,
		  bool removed, uint64_t time)
{
	struct cgroup_ent *e = entry(c, id);

	if (!e)
		return -ENOMEM;
	if (removed) {
		e->flags |= CAP_CGROUP_F_REMOVED;
		if (e->path)
			return 0;
	}
	return set_path(e, path, len, time);
}

int cgroups__ensure(struct cgroups *c, struct cap_writer *w, unsigned file, uint64_t id,
		    uint64_t now)
{
	struct cap_cgroup rec = { .id = id };
	struct cgroup_ent *e;
	int err;

	if (!id)
		return 0;
	e = entry(c, id);
	if (!e)
		return -ENOMEM;
	if (e->file == file)
		return 0;
	if (!e->path && !e->time) {
		e->time = now; /* walked for once */
		err = walk(c, now);
		if (err)
			return err;
		e = entry(c, id); /* the walk may have moved it */
		if (!e)
			return -ENOMEM;
		c->unnamed += !e->path;
	}
	rec.time = e->time;
	rec.flags = e->flags;
	rec.path_len = e->path ? strlen(e->path) : 0;
	e->file = file;
	err = cap_writer__append(w, CAP_REC_CGROUP, &rec, sizeof(rec), e->path, rec.path_len);
	return err < 0 ? err : 0;
}

uint64_t cgroups__unnamed(const struct cgroups *c)
{
	return c ? c->unnamed : 0;
}
