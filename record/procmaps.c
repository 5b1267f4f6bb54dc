// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Process maps and build IDs from /proc.
 *
 * At start every thread gets a THREAD record and every user process its
 * executable mappings as MAPPING records; later processes are read on their
 * first event (procmaps__ensure) or learned from the perf side band
 * (procmaps__add). Build IDs come from the mapped file itself, opened via
 * /proc/PID/map_files (deleted files, other mount namespaces) or else
 * /proc/PID/root/PATH, and are cached per (dev, inode, size, mtime) so a
 * library shared by a thousand processes is read once.
 *
 * Memory stays bounded: per process 16 bytes are kept (in a table that the
 * side band's EXIT records shrink), and the build-ID cache is cleared when it
 * reaches BID_CACHE_MAX entries.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/buildid.h"
#include "record/fileid.h"
#include "record/procmaps.h"
#include "record/threads.h"
#include "util/hashtab.h"

#define PF_KTHREAD 0x00200000u
#define BID_CACHE_MAX 16384u
#define ANON_PATH "//anon"
#define DELETED_SUFFIX " (deleted)"

/* Per-process state: all a process costs while it lives. */
struct pid_ent {
	uint32_t pid;       /* never 0: pid 0 has no maps */
	uint32_t known;     /* its maps are written (since its last exec) */
	uint64_t exec_time; /* its last exec seen by the side band, or 0 */
};

struct bid_entry {
	struct file_id key; /* first: file_id__eq() compares it */
	uint8_t size;
	uint8_t id[BUILDID_MAX];
};

struct procmaps {
	struct cap_writer *w;
	struct intern *in;
	struct hashtab pids;  /* of struct pid_ent */
	size_t nr_known;      /* pids whose maps are written */
	struct hashtab cache; /* of struct bid_entry: build IDs */
	char *line;
	size_t line_cap;
	uint64_t bid_reads; /* build IDs read from files (cache misses) */
	struct procmaps_sink sink;
};

/* ---- pid table ---------------------------------------------------------- */

/* In the upper half, where the table takes its tag and slot from: dense
 * pids then land on distinct slots, as tids do in record/threads.c. */
static inline uint64_t pid_hash(uint32_t pid)
{
	return (uint64_t)(uint32_t)(pid * 2654435761u) << 32;
}

static bool pid_eq(const void *ent, const void *key)
{
	return ((const struct pid_ent *)ent)->pid == *(const uint32_t *)key;
}

static struct pid_ent *pid_find(const struct procmaps *pm, uint32_t pid)
{
	return pid ? hashtab__find(&pm->pids, pid_hash(pid), &pid, pid_eq) : NULL;
}

/* The entry of pid, added (zeroed) when new; NULL for pid 0 or without
 * memory. */
static struct pid_ent *pid_get(struct procmaps *pm, uint32_t pid)
{
	struct pid_ent *e = pid_find(pm, pid), n = { .pid = pid };
	void *slot;

	if (e || !pid)
		return e;
	return hashtab__insert(&pm->pids, pid_hash(pid), &n, &slot) ? NULL : slot;
}

static void pid_del(struct procmaps *pm, uint32_t pid)
{
	struct pid_ent *e = pid_find(pm, pid);

	if (!e)
		return;
	pm->nr_known -= e->known;
	hashtab__delete(&pm->pids, e);
}

/* ---- build-ID cache ----------------------------------------------------- */

/* At BID_CACHE_MAX entries the cache forgets everything: memory stays
 * bounded, and a miss costs only one more read of the file. */
static void bid_insert(struct hashtab *c, const struct file_id *k,
		       const uint8_t *id, uint8_t size)
{
	struct bid_entry e = { .key = *k, .size = size };

	memcpy(e.id, id, BUILDID_MAX);
	if (c->nr >= BID_CACHE_MAX)
		hashtab__clear(c);
	hashtab__insert(c, file_id__hash(k), &e, NULL); /* no memory: not cached */
}

/* Build ID of the file at path through the cache; 0, or -errno when the
 * file cannot be reached (the caller tries the next way to it). */
static int cached_buildid(struct procmaps *pm, const char *path, uint8_t *id,
			  uint8_t *size)
{
	struct bid_entry *e;
	struct file_id k;
	struct stat st;
	int fd, err;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC; /* no ELF file, no build ID */
	file_id__from_stat(&k, &st);
	e = hashtab__find(&pm->cache, file_id__hash(&k), &k, file_id__eq);
	if (e) {
		memcpy(id, e->id, BUILDID_MAX);
		*size = e->size;
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	file_id__from_stat(&k, &st);
	err = buildid__read_fd(fd, id, size);
	close(fd);
	pm->bid_reads++;
	if (err == -ENOEXEC)
		err = 0; /* not ELF (a script's mapping, a data file): no ID */
	if (!err)
		bid_insert(&pm->cache, &k, id, *size);
	return err;
}

/*
 * The ways to reach a mapped file, in order: /proc/PID/map_files (deleted
 * files, other mount namespaces), then /proc/PID/root/PATH. A deleted file
 * is only reachable through map_files: whatever now has its name (the
 * upgraded library) is another file. Returns false past the last way.
 */
static bool mapped_path(const struct cap_mapping *m, const char *path, bool deleted, int way,
			char *buf, size_t len)
{
	if (way == 0) {
		snprintf(buf, len, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, m->pid, m->start,
			 m->end);
		return true;
	}
	return way == 1 && !deleted && path[0] == '/' &&
	       snprintf(buf, len, "/proc/%u/root%s", m->pid, path) < (int)len;
}

/* Fill m's build ID from the mapped file; leaves size 0 when unreachable. */
static void mapping_buildid(struct procmaps *pm, struct cap_mapping *m, const char *path,
			    bool deleted)
{
	char buf[PATH_MAX + 64];
	int way;

	m->build_id_size = 0;
	if (m->flags & CAP_MAP_ANON)
		return;
	for (way = 0; mapped_path(m, path, deleted, way, buf, sizeof(buf)); way++) {
		if (cached_buildid(pm, buf, m->build_id, &m->build_id_size) == 0)
			return;
	}
}

/* The sink sees the mapping with its file open. */
static int tell_sink(struct procmaps *pm, const struct cap_mapping *m, const char *path,
		     bool deleted)
{
	char buf[PATH_MAX + 64];
	int way, fd = -1, err;

	if (!pm->sink.map || (m->flags & CAP_MAP_ANON))
		return 0;
	for (way = 0; fd < 0 && mapped_path(m, path, deleted, way, buf, sizeof(buf)); way++)
		fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* unreachable: its frames use frame pointers */
	err = pm->sink.map(pm->sink.ctx, m, fd, path);
	close(fd);
	return err;
}

static int write_mapping(struct procmaps *pm, struct cap_mapping *m, const char *path,
			 bool deleted)
{
	int err;

	err = intern__string(pm->in, path, strlen(path), &m->path_id);
	if (err < 0)
		return err;
	err = cap_writer__append(pm->w, CAP_REC_MAPPING, m, sizeof(*m), NULL, 0);
	if (err < 0)
		return err;
	return tell_sink(pm, m, path, deleted);
}

static bool is_anon_path(const char *path)
{
	return path[0] == '\0' || path[0] == '[' || strcmp(path, ANON_PATH) == 0;
}

/* The kernel (d_path) appends " (deleted)" to unlinked files' names; the
 * name the file had is the useful one. Returns whether it did. */
static bool strip_deleted(char *path)
{
	size_t len = strlen(path), sfx = strlen(DELETED_SUFFIX);

	if (len <= sfx || strcmp(path + len - sfx, DELETED_SUFFIX) != 0)
		return false;
	path[len - sfx] = '\0';
	return true;
}

/*
 * One /proc/PID/maps line: "START-END PERMS OFFSET MAJ:MIN INODE   PATH".
 * Returns 1 with m and *path filled for an executable mapping, else 0.
 */
static int parse_maps_line(char *line, struct cap_mapping *m, const char **path,
			   bool *deleted)
{
	unsigned long long start, end, pgoff, ino;
	char perms[5];
	int n = 0;

	if (sscanf(line, "%llx-%llx %4s %llx %*x:%*x %llu %n", &start, &end, perms,
		   &pgoff, &ino, &n) < 5 || !n || perms[2] != 'x')
		return 0;
	line += n;
	line[strcspn(line, "\n")] = '\0';
	*deleted = strip_deleted(line);
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->flags = CAP_MAP_FROM_PROC;
	if (is_anon_path(line))
		m->flags |= CAP_MAP_ANON;
	*path = line[0] ? line : ANON_PATH;
	return 1;
}

/* Whether err means the process went away while it was read. */
static bool gone(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

static int write_maps(struct procmaps *pm, int piddir, uint32_t pid, uint64_t now)
{
	const char *path;
	bool deleted;
	int fd, err = 0;
	FILE *f;

	fd = openat(piddir, "maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone(-errno) ? -ESRCH : 0; /* unreadable: nothing to write */
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (err >= 0 && getline(&pm->line, &pm->line_cap, f) > 0) {
		struct cap_mapping m = { .time = now, .pid = pid };

		if (!parse_maps_line(pm->line, &m, &path, &deleted))
			continue;
		mapping_buildid(pm, &m, path, deleted);
		err = write_mapping(pm, &m, path, deleted);
	}
	fclose(f);
	return err < 0 ? err : 0;
}

/* Read a small proc file relative to dirfd into buf (NUL-terminated). */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Kernel threads have PF_KTHREAD in field 9 of /proc/PID/stat. */
static int read_is_kthread(int piddir, bool *kthread)
{
	char buf[1024], *p;
	unsigned flags;
	ssize_t n;

	n = read_small(piddir, "stat", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strrchr(buf, ')'); /* comm may contain spaces and ')' */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1)
		return -EIO; /* not what procfs writes */
	*kthread = flags & PF_KTHREAD;
	return 0;
}

static int write_thread(struct procmaps *pm, int taskdir, uint32_t pid, uint32_t tid,
			uint32_t flags, uint64_t now)
{
	struct cap_thread t = { .time = now, .tid = tid, .pid = pid, .flags = flags };
	char path[32], comm[64];
	ssize_t n;

	snprintf(path, sizeof(path), "%u/comm", tid);
	n = read_small(taskdir, path, comm, sizeof(comm));
	if (n < 0)
		return 0; /* the thread exited meanwhile */
	comm[strcspn(comm, "\n")] = '\0';
	memcpy(t.comm, comm, strnlen(comm, sizeof(t.comm) - 1));
	threads__ns_ids(tid, &t.ns_tid, &t.ns_pid); /* 0 when gone */
	return cap_writer__append(pm->w, CAP_REC_THREAD, &t, sizeof(t), NULL, 0);
}

static int write_threads(struct procmaps *pm, int piddir, uint32_t pid, uint32_t flags,
			 uint64_t now)
{
	struct dirent *de;
	int fd, err = 0;
	DIR *dir;

	fd = openat(piddir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -ENOMEM;
	}
	while (err >= 0 && (de = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid || tid > UINT32_MAX)
			continue;
		err = write_thread(pm, dirfd(dir), pid, (uint32_t)tid, flags, now);
	}
	closedir(dir);
	return err < 0 ? err : 0;
}

/*
 * MAPPING records of a user process and, with threads, THREAD records for
 * its threads (the start scan; later the drain names threads from events).
 */
static int scan_process(struct procmaps *pm, uint32_t pid, uint64_t now, bool threads)
{
	struct pid_ent *e;
	bool kthread = false;
	char path[32];
	int piddir, err;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	piddir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = read_is_kthread(piddir, &kthread);
	if (!err && threads)
		err = write_threads(pm, piddir, pid, kthread ? CAP_THREAD_KERNEL : 0, now);
	if (!err && !kthread)
		err = write_maps(pm, piddir, pid, now);
	close(piddir);
	if (gone(err))
		return -ESRCH;
	if (err)
		return err;
	e = pid_get(pm, pid);
	if (!e)
		return -ENOMEM;
	pm->nr_known += !e->known;
	e->known = 1;
	return 0;
}

int procmaps__new(struct cap_writer *w, struct intern *in, struct procmaps **out)
{
	struct procmaps *pm;

	*out = NULL;
	if (!w || !in)
		return CAP_ERR_INVAL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->w = w;
	pm->in = in;
	hashtab__init(&pm->pids, sizeof(struct pid_ent));
	hashtab__init(&pm->cache, sizeof(struct bid_entry));
	*out = pm;
	return 0;
}

void procmaps__free(struct procmaps *pm)
{
	if (!pm)
		return;
	hashtab__free(&pm->pids);
	hashtab__free(&pm->cache);
	free(pm->line);
	free(pm);
}

int procmaps__scan_all(struct procmaps *pm, uint64_t now)
{
	struct dirent *de;
	int err = 0, n = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		err = scan_process(pm, (uint32_t)pid, now, true);
		if (err == -ESRCH)
			continue;
		if (err < 0)
			break;
		n++;
	}
	closedir(dir);
	return err < 0 && err != -ESRCH ? err : n;
}

/*
 * An event from pid at `now` whose maps are not written yet. If the side band
 * saw pid exec after `now`, the maps read now are the new image's: they are
 * stamped with the exec time, not with the earlier event's.
 */
int procmaps__ensure(struct procmaps *pm, uint32_t pid, uint64_t now)
{
	const struct pid_ent *e = pid_find(pm, pid);

	if (!pid || (e && e->known))
		return 0;
	if (e && e->exec_time > now)
		now = e->exec_time;
	return scan_process(pm, pid, now, false);
}

int procmaps__add(struct procmaps *pm, const struct cap_mapping *m, const char *path)
{
	struct cap_mapping copy = *m;
	char name[PATH_MAX];
	bool deleted;

	if (snprintf(name, sizeof(name), "%s", path) >= (int)sizeof(name))
		return -ENAMETOOLONG;
	deleted = strip_deleted(name);
	if (is_anon_path(name))
		copy.flags |= CAP_MAP_ANON;
	if (!copy.build_id_size)
		mapping_buildid(pm, &copy, name, deleted);
	return write_mapping(pm, &copy, name[0] ? name : ANON_PATH, deleted);
}

void procmaps__exec(struct procmaps *pm, uint32_t pid, uint64_t now)
{
	struct pid_ent *e = pid_get(pm, pid);

	/* the next event from pid reads its new maps if the side band has not
	 * delivered them already (a duplicate MAPPING is harmless) */
	if (!e)
		return; /* no memory: the next event rereads the maps all the same */
	pm->nr_known -= e->known;
	e->known = 0;
	if (now > e->exec_time)
		e->exec_time = now;
	if (pm->sink.gone)
		pm->sink.gone(pm->sink.ctx, pid);
}

void procmaps__forget(struct procmaps *pm, uint32_t pid)
{
	pid_del(pm, pid);
	if (pm->sink.gone)
		pm->sink.gone(pm->sink.ctx, pid);
	if (pm->sink.exit)
		pm->sink.exit(pm->sink.ctx, pid);
}

int procmaps__fork(struct procmaps *pm, uint32_t parent, uint32_t child)
{
	return pm->sink.fork ? pm->sink.fork(pm->sink.ctx, parent, child) : 0;
}

void procmaps__set_sink(struct procmaps *pm, const struct procmaps_sink *sink)
{
	pm->sink = *sink;
}

bool procmaps__known(const struct procmaps *pm, uint32_t pid)
{
	const struct pid_ent *e = pid_find(pm, pid);

	return e && e->known;
}

size_t procmaps__nr_known(const struct procmaps *pm)
{
	return pm->nr_known;
}

uint64_t procmaps__buildid_reads(const struct procmaps *pm)
{
	return pm->bid_reads;
}
