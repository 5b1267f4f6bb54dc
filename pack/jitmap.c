// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JIT maps kept in memory: per (pid, time read) a run of entries in one
 * array, their names in one arena. A map's entries are sorted by start once
 * it is complete, with the running maximum of their ends, so that finding
 * the entries that contain an address is a binary search and a short walk
 * back (a runtime that reuses an address appends an overlapping entry:
 * the one written later wins, as perf has it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack/jitmap.h"
#include "util/ranges.h"
#include "util/array.h"
#include "util/hashtab.h"
#include "util/procstatus.h"

#define NAME_MAX_LEN 4096u /* FORMAT.md §4.21, CAP_MAX_STRING */

struct jent {
	uint64_t start, end;
	uint64_t name_off;
	uint32_t name_len;
	uint32_t seq;    /* order in its map */
	uint64_t maxend; /* max end of the map's entries up to this one, sorted */
};

_Static_assert(offsetof(struct jent, start) == 0, "ranges__after() reads start first");

struct jmap {
	uint32_t pid;
	uint32_t prev;   /* previous map of the pid + 1, 0 none */
	uint64_t time;
	size_t first, n;
	bool sorted;
};

struct pid_ent {
	uint32_t pid;
	uint32_t last;   /* its latest map's index */
};

struct jitmaps {
	struct jmap *maps;
	size_t nmaps, maps_cap;
	struct jent *ents;
	size_t nents, ents_cap;
	char *names;
	size_t nlen, names_cap;
	struct hashtab pids; /* of struct pid_ent */
	uint64_t bytes, dropped, bad;
	struct jit_refused *refused; /* maps not trusted since the last clear */
	size_t nrefused, refused_cap;
};

static uint64_t pid_hash(uint32_t pid)
{
	return hashtab__mix(pid);
}

static bool pid_eq(const void *ent, const void *key)
{
	return ((const struct pid_ent *)ent)->pid == *(const uint32_t *)key;
}

int jitmaps__new(struct jitmaps **out)
{
	struct jitmaps *jm = calloc(1, sizeof(*jm));

	if (!jm)
		return -ENOMEM;
	hashtab__init(&jm->pids, sizeof(struct pid_ent));
	*out = jm;
	return 0;
}

void jitmaps__clear(struct jitmaps *jm)
{
	jm->nmaps = jm->nents = jm->nlen = 0;
	jm->bytes = 0;
	hashtab__clear(&jm->pids);
}

void jitmaps__free(struct jitmaps *jm)
{
	if (!jm)
		return;
	hashtab__free(&jm->pids);
	free(jm->refused);
	free(jm->maps);
	free(jm->ents);
	free(jm->names);
	free(jm);
}

/* The map entries of (pid, time) go to: the last one if it is that, else a
 * new one. */
static struct jmap *map_for(struct jitmaps *jm, uint32_t pid, uint64_t time)
{
	struct jmap *m = jm->nmaps ? &jm->maps[jm->nmaps - 1] : NULL;
	struct pid_ent *p;
	int err;

	if (m && m->pid == pid && m->time == time && m->first + m->n == jm->nents)
		return m;
	if (ARRAY_RESERVE(jm->maps, jm->maps_cap, jm->nmaps + 1))
		return NULL;
	err = hashtab__upsert(&jm->pids, pid_hash(pid), &pid, pid_eq, (void **)&p);
	if (err < 0)
		return NULL;
	m = &jm->maps[jm->nmaps];
	*m = (struct jmap){ .pid = pid, .time = time, .first = jm->nents,
			    .prev = err ? 0 : p->last + 1 };
	p->pid = pid;
	p->last = jm->nmaps++;
	return m;
}

static int add_entry(struct jitmaps *jm, struct jmap *m, const struct jit_entry *e)
{
	struct jent *j;
	uint64_t cost = sizeof(*j) + e->name_len;

	if (jm->bytes + cost > JITMAPS_MAX_BYTES)
		return -E2BIG;
	if (ARRAY_RESERVE(jm->ents, jm->ents_cap, jm->nents + 1) ||
	    ARRAY_RESERVE(jm->names, jm->names_cap, jm->nlen + e->name_len))
		return -ENOMEM;
	j = &jm->ents[jm->nents++];
	*j = (struct jent){ .start = e->start, .end = e->start + e->size,
			    .name_off = jm->nlen, .name_len = e->name_len, .seq = m->n++ };
	memcpy(jm->names + jm->nlen, e->name, e->name_len);
	jm->nlen += e->name_len;
	jm->bytes += cost;
	m->sorted = false;
	return 0;
}

int jitmaps__add(struct jitmaps *jm, uint32_t pid, uint64_t time, const struct jit_entry *e)
{
	struct jmap *m;

	if (!e->size || e->start + e->size < e->start || !e->name_len ||
	    e->name_len > NAME_MAX_LEN)
		return -EINVAL;
	m = map_for(jm, pid, time);
	return m ? add_entry(jm, m, e) : -ENOMEM;
}

/* "START SIZE NAME": hex numbers (perf's 0x prefix allowed), one space,
 * the name to the end of the line. */
static bool parse_line(const char *p, const char *end, struct jit_entry *e)
{
	char num[24], *q;
	int i;

	for (i = 0; i < 2; i++) {
		size_t n = strcspn(p, " \n");

		if (!n || n >= sizeof(num) || p + n >= end || p[n] != ' ')
			return false;
		memcpy(num, p, n);
		num[n] = 0;
		*(i ? &e->size : &e->start) = strtoull(num, &q, 16);
		if (*q)
			return false;
		p += n + 1;
	}
	e->name = p;
	e->name_len = end - p;
	return e->name_len && e->name_len <= NAME_MAX_LEN && e->size &&
	       e->start + e->size >= e->start;
}

int jitmaps__parse(struct jitmaps *jm, uint32_t pid, uint64_t time, const char *buf,
		   size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	size_t nents = jm->nents, nlen = jm->nlen;
	uint64_t bytes = jm->bytes;
	struct jit_entry e;
	struct jmap *m = NULL;
	int err = 0;

	for (; p < end && !err; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		if (!parse_line(p, nl, &e)) {
			jm->bad += nl > p;
			continue;
		}
		if (!m && !(m = map_for(jm, pid, time)))
			return -ENOMEM;
		err = add_entry(jm, m, &e);
	}
	if (err) { /* not kept at all: a part of a map would mislead */
		jm->nents = nents;
		jm->nlen = nlen;
		jm->bytes = bytes;
		m->n = 0;
		jm->dropped += err == -E2BIG;
		return err;
	}
	return m != NULL;
}

/* What /proc/PID/status says of a live process: its real uid and its pid
 * in its own PID namespace (pid itself where the kernel does not say). 0
 * or -errno. */
static int proc_status(uint32_t pid, uint32_t *uid, uint32_t *nspid)
{
	struct proc_status st;
	int err = proc_status__read(pid, &st);

	*uid = st.uid;
	*nspid = st.ns_tid ? st.ns_tid : pid;
	return err;
}

/* Is pid in another mount namespace than ours? */
static bool other_mnt_ns(uint32_t pid)
{
	char path[64], theirs[64], ours[64];
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	a = readlink(path, theirs, sizeof(theirs));
	b = readlink("/proc/self/ns/mnt", ours, sizeof(ours));
	return a > 0 && b > 0 && (a != b || memcmp(theirs, ours, a));
}

/*
 * Where pid's map is, and who may own it (perf's rule: the process's user
 * or root). Under a root (--symfs) the map is a copy the user chose: any
 * owner. A live process in another mount namespace wrote it in its own
 * /tmp, as perf-NSPID.map. A process gone already has no status to ask:
 * the recorder's own user then, as perf has it.
 */
static void map_path(const char *root, uint32_t pid, char *path, size_t len, long *owner)
{
	uint32_t uid = 0, nspid = pid;

	*owner = -1;
	if (root) {
		snprintf(path, len, "%s/tmp/perf-%u.map", root, pid);
		return;
	}
	if (proc_status(pid, &uid, &nspid)) {
		*owner = geteuid();
		snprintf(path, len, "/tmp/perf-%u.map", pid);
		return;
	}
	*owner = uid;
	if (other_mnt_ns(pid))
		snprintf(path, len, "/proc/%u/root/tmp/perf-%u.map", pid, nspid);
	else
		snprintf(path, len, "/tmp/perf-%u.map", pid);
}

/* A map not trusted: counted once per pid until jitmaps__clear_refused(). */
static int refuse(struct jitmaps *jm, uint32_t pid, enum cap_jit_refusal why)
{
	size_t i;

	for (i = 0; i < jm->nrefused; i++)
		if (jm->refused[i].pid == pid)
			return -EPERM;
	if (!ARRAY_RESERVE(jm->refused, jm->refused_cap, jm->nrefused + 1))
		jm->refused[jm->nrefused++] = (struct jit_refused){ .pid = pid, .why = why };
	return -EPERM;
}

/* The map's fd (path, from dirfd when relative), open without following a
 * symlink, if it is to be trusted: 0 when there is none, -EPERM refused
 * (counted), or -errno. */
static int open_map(struct jitmaps *jm, int dirfd, const char *path, long owner, uint32_t pid,
		    struct stat *st)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);

	if (fd < 0 && errno == ELOOP)
		return refuse(jm, pid, CAP_JIT_REFUSED_NOT_REGULAR);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return refuse(jm, pid, CAP_JIT_REFUSED_NOT_REGULAR);
	}
	if (owner >= 0 && st->st_uid != 0 && st->st_uid != (uid_t)owner) {
		close(fd);
		return refuse(jm, pid, CAP_JIT_REFUSED_OWNER);
	}
	return fd;
}

/* The map open as fd (open_map()) into jm. */
static int read_map(struct jitmaps *jm, int fd, const struct stat *st_, uint32_t pid,
		    uint64_t time)
{
	struct stat st = *st_;
	char *buf;
	ssize_t n;
	int err;

	if ((uint64_t)st.st_size > JITMAPS_MAX_BYTES - jm->bytes) {
		close(fd);
		jm->dropped++;
		return -E2BIG;
	}
	buf = malloc(st.st_size + 1);
	n = buf ? pread(fd, buf, st.st_size, 0) : -1;
	err = n < 0 ? (buf ? -errno : -ENOMEM) : 0;
	close(fd);
	if (!err)
		err = jitmaps__parse(jm, pid, time, buf, n);
	free(buf);
	return err;
}

int jitmaps__read(struct jitmaps *jm, const char *root, uint32_t pid, uint64_t time)
{
	char path[PATH_MAX];
	struct stat st;
	long owner;
	int fd;

	map_path(root, pid, path, sizeof(path), &owner);
	fd = open_map(jm, AT_FDCWD, path, owner, pid, &st);
	return fd <= 0 ? fd : read_map(jm, fd, &st, pid, time);
}

/*
 * The roots of processes in other mount namespaces, kept while they run:
 * a process that exits before its map is read (a short-lived container
 * process: its namespace's init reaps it at once, and its root may go
 * with it) still has its map read in its own /tmp, under its namespace
 * pid, owned by its user or root.
 */
struct jit_root {
	uint32_t pid, nspid, uid;
	int fd; /* O_PATH of /proc/PID/root */
};

struct jitroots {
	struct hashtab tab; /* of struct jit_root */
};

static bool root_eq(const void *ent, const void *key)
{
	return ((const struct jit_root *)ent)->pid == *(const uint32_t *)key;
}

int jitroots__new(struct jitroots **out)
{
	struct jitroots *jr = calloc(1, sizeof(*jr));

	if (!jr)
		return -ENOMEM;
	hashtab__init(&jr->tab, sizeof(struct jit_root));
	*out = jr;
	return 0;
}

void jitroots__free(struct jitroots *jr)
{
	struct jit_root *r;
	size_t pos;

	if (!jr)
		return;
	hashtab__for_each(&jr->tab, pos, r)
		close(r->fd);
	hashtab__free(&jr->tab);
	free(jr);
}

int jitroots__watch(struct jitroots *jr, uint32_t pid)
{
	struct jit_root n = { .pid = pid }, *r;
	char path[64];
	int err;

	r = hashtab__find(&jr->tab, pid_hash(pid), &pid, root_eq);
	if ((!r && jr->tab.nr >= JITROOTS_MAX) || !other_mnt_ns(pid))
		return 0;
	err = proc_status(pid, &n.uid, &n.nspid);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	n.fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (n.fd < 0)
		return -errno;
	if (r) { /* its root now: an exec may follow a chroot */
		close(r->fd);
		*r = n;
		return 1;
	}
	err = hashtab__insert(&jr->tab, pid_hash(pid), &n, NULL);
	if (err)
		close(n.fd);
	return err ? err : 1;
}

int jitroots__read(struct jitroots *jr, struct jitmaps *jm, uint32_t pid, uint64_t time)
{
	struct jit_root *r = hashtab__find(&jr->tab, pid_hash(pid), &pid, root_eq);
	char path[64];
	struct stat st;
	int fd;

	if (!r)
		return -ENOENT;
	snprintf(path, sizeof(path), "tmp/perf-%u.map", r->nspid);
	fd = open_map(jm, r->fd, path, r->uid, pid, &st);
	close(r->fd);
	hashtab__delete(&jr->tab, r);
	return fd <= 0 ? fd : read_map(jm, fd, &st, pid, time);
}

size_t jitmaps__nr_refused(const struct jitmaps *jm)
{
	return jm ? jm->nrefused : 0;
}

const struct jit_refused *jitmaps__refused(const struct jitmaps *jm, size_t i)
{
	return jm && i < jm->nrefused ? &jm->refused[i] : NULL;
}

void jitmaps__clear_refused(struct jitmaps *jm)
{
	if (jm)
		jm->nrefused = 0;
}

bool jitmaps__has(const struct jitmaps *jm, uint32_t pid)
{
	return hashtab__find(&jm->pids, pid_hash(pid), &pid, pid_eq) != NULL;
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct jent *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void sort_map(struct jitmaps *jm, struct jmap *m)
{
	struct jent *v;
	uint64_t maxend = 0;
	size_t i;

	if (m->sorted || !m->n)
		return;
	v = jm->ents + m->first;
	qsort(v, m->n, sizeof(*v), cmp_ent);
	for (i = 0; i < m->n; i++) {
		maxend = v[i].end > maxend ? v[i].end : maxend;
		v[i].maxend = maxend;
	}
	m->sorted = true;
}

/* The entry of map m containing addr that was written last, or -1. */
static long find_in(struct jitmaps *jm, struct jmap *m, uint64_t addr)
{
	const struct jent *v;
	long i, best = -1;

	if (!m->n) /* a map dropped at the memory bound */
		return -1;
	sort_map(jm, m);
	v = jm->ents + m->first;
	i = (long)ranges__after(v, m->n, sizeof(*v), addr) - 1;
	for (; i >= 0 && v[i].maxend > addr; i--) {
		if (addr < v[i].end && (best < 0 || v[i].seq > v[best].seq))
			best = i;
	}
	return best < 0 ? -1 : (long)m->first + best;
}

int jitmaps__lookup(struct jitmaps *jm, uint32_t pid, uint64_t addr,
		    int (*fn)(void *ctx, uint64_t time, size_t idx, const struct jit_entry *e),
		    void *ctx)
{
	const struct pid_ent *p = hashtab__find(&jm->pids, pid_hash(pid), &pid, pid_eq);
	uint32_t mi = p ? p->last + 1 : 0;
	int calls = 0, err;

	for (; mi; mi = jm->maps[mi - 1].prev) {
		struct jmap *m = &jm->maps[mi - 1];
		long k = find_in(jm, m, addr);
		struct jit_entry e;

		if (k < 0)
			continue;
		e = (struct jit_entry){ .start = jm->ents[k].start,
					.size = jm->ents[k].end - jm->ents[k].start,
					.name = jm->names + jm->ents[k].name_off,
					.name_len = jm->ents[k].name_len };
		err = fn(ctx, m->time, k, &e);
		if (err < 0)
			return err;
		calls++;
	}
	return calls;
}

uint64_t jitmaps__dropped(const struct jitmaps *jm)
{
	return jm->dropped;
}

uint64_t jitmaps__bad_lines(const struct jitmaps *jm)
{
	return jm->bad;
}
