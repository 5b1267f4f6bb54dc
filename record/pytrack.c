// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPython processes and their frames (record/pytrack.h). Tables: the
 * interpreter files opened (few: one per Python installation), the
 * processes marked, and per process the code objects read, keyed by
 * address and stamp, each with its PY_CODE id in the current file.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "python/python.h"
#include "record/pystack.h"
#include "record/pytrack.h"
#include "util/hashtab.h"

#define MAX_INTERPS 64 /* interpreter files kept open */
/* A process gone stays this long: its last events may still be in the
 * ring buffer when the side band says it exited. */
#define GONE_KEEP_NS (5 * 1000000000ull)

struct interp {
	uint64_t dev, ino;
	struct py_interp *pi; /* NULL: not CPython, or not read */
	int err;
};

struct code {
	uint64_t addr;
	uint32_t stamp;
	uint32_t id;            /* PY_CODE id in file `file`, 0: not written */
	uint32_t file;          /* pytrack.file when id was given */
	struct py_code c;
	bool bad;               /* unreadable, or not the code the kernel saw */
};

struct proc {
	uint32_t pid;
	struct interp *ip;      /* NULL: a CPython version not read (counted) */
	uint64_t bias;
	struct py_range eval[PY_EVAL_RANGES]; /* process addresses */
	int nr_eval;
	uint64_t gone_ns;       /* exited or exec'd at (monotonic), 0: alive */
	struct hashtab codes;   /* of struct code */
};

struct pytrack {
	int pyprocs_fd;
	volatile uint32_t *py_procs;
	struct interp interps[MAX_INTERPS];
	int nr_interps;
	struct hashtab procs;   /* of struct proc */
	uint64_t purge_at;      /* the first gone process is due then; 0: none */
	struct pytrack_stats st;
	uint32_t file;          /* files begun (pytrack__new_file()) */
};

struct code_key {
	uint64_t addr;
	uint32_t stamp;
};

static uint64_t pid_hash(uint32_t pid)
{
	return pid * 0x9e3779b97f4a7c15ull;
}

static bool proc_eq(const void *ent, const void *key)
{
	return ((const struct proc *)ent)->pid == *(const uint32_t *)key;
}

static uint64_t code_hash(const struct code_key *k)
{
	return hashtab__mix(k->addr ^ (uint64_t)k->stamp << 48);
}

static bool code_eq(const void *ent, const void *key)
{
	const struct code *c = ent;
	const struct code_key *k = key;

	return c->addr == k->addr && c->stamp == k->stamp;
}

int pytrack__new(int pyprocs_fd, volatile uint32_t *py_procs, struct pytrack **out)
{
	struct pytrack *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->pyprocs_fd = pyprocs_fd;
	t->py_procs = py_procs;
	hashtab__init(&t->procs, sizeof(struct proc));
	*out = t;
	return 0;
}

static void proc_clear(struct proc *p)
{
	size_t pos = 0;
	struct code *c;

	while ((c = hashtab__next(&p->codes, &pos)))
		py_code__release(&c->c);
	hashtab__free(&p->codes);
}

void pytrack__free(struct pytrack *t)
{
	size_t pos = 0;
	struct proc *p;
	int i;

	if (!t)
		return;
	while ((p = hashtab__next(&t->procs, &pos)))
		proc_clear(p);
	hashtab__free(&t->procs);
	for (i = 0; i < t->nr_interps; i++)
		py_interp__free(t->interps[i].pi);
	free(t);
}

/* The interpreter file open on fd, opened once per file. */
static struct interp *interp_of(struct pytrack *t, int fd)
{
	char path[64];
	struct stat sb;
	struct interp *ip;
	int i;

	if (fstat(fd, &sb))
		return NULL;
	for (i = 0; i < t->nr_interps; i++)
		if (t->interps[i].dev == sb.st_dev && t->interps[i].ino == sb.st_ino)
			return &t->interps[i];
	if (t->nr_interps == MAX_INTERPS)
		return NULL;
	ip = &t->interps[t->nr_interps++];
	ip->dev = sb.st_dev;
	ip->ino = sb.st_ino;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ip->err = py_interp__open(path, NULL, &ip->pi, NULL);
	return ip;
}

static void proc_drop(struct pytrack *t, struct proc *p)
{
	proc_clear(p);
	hashtab__delete(&t->procs, p);
}

static struct proc *proc_find(struct pytrack *t, uint32_t pid)
{
	return hashtab__find(&t->procs, pid_hash(pid), &pid, proc_eq);
}

/* A new entry for pid (none there), its code table empty. */
static struct proc *proc_add(struct pytrack *t, uint32_t pid)
{
	struct proc p = { .pid = pid }, *out;

	hashtab__init(&p.codes, sizeof(struct code));
	if (hashtab__insert(&t->procs, pid_hash(pid), &p, (void **)&out))
		return NULL;
	return out;
}

/* The kernel's entry for p: from then on its events carry Python frames. */
static int proc_publish(struct pytrack *t, struct proc *p)
{
	struct stkrec_pyproc pp;

	py_interp__pyproc(p->ip->pi, p->bias, &pp);
	if (bpf_map_update_elem(t->pyprocs_fd, &p->pid, &pp, BPF_ANY))
		return -errno;
	if (t->py_procs)
		*t->py_procs = 1;
	return 0;
}

static int proc_mark(struct pytrack *t, uint32_t pid, struct interp *ip,
		     const struct cap_mapping *m)
{
	struct py_range r[PY_EVAL_RANGES];
	struct proc *p = proc_find(t, pid);
	uint64_t bias;
	int i, n;

	if (p && !p->gone_ns)
		return 0; /* one interpreter a process: the first one seen */
	if (p)
		proc_drop(t, p); /* the pid of a process gone, or an exec */
	if (ip->err == PY_EVERSION) {
		p = proc_add(t, pid);
		t->st.unsupported++;
		return p ? 0 : -ENOMEM;
	}
	if (ip->err || py_interp__bias(ip->pi, m->start, m->pgoff, &bias))
		return 0;
	p = proc_add(t, pid);
	if (!p)
		return -ENOMEM;
	p->ip = ip;
	p->bias = bias;
	n = py_interp__eval_ranges(ip->pi, r);
	for (i = 0; i < n && i < PY_EVAL_RANGES; i++) {
		p->eval[i].start = r[i].start + bias;
		p->eval[i].end = r[i].end + bias;
	}
	p->nr_eval = n > 0 ? n : 0;
	t->st.processes++;
	return proc_publish(t, p);
}

int pytrack__map(struct pytrack *t, uint32_t pid, const struct cap_mapping *m, int fd,
		 const char *path)
{
	struct py_version v;
	struct interp *ip;

	if (!path || !py_name_version(path, &v))
		return 0;
	ip = interp_of(t, fd);
	if (!ip || ip->err == PY_ENOTPY)
		return 0;
	return proc_mark(t, pid, ip, m);
}

/* Drop the processes gone for GONE_KEEP_NS, once the first of them is due:
 * a pass collects a batch of them, so that a storm of exits does not scan
 * the table at each exit. */
static void procs_purge(struct pytrack *t, uint64_t now)
{
	uint32_t due[256];
	uint64_t next = 0, at;
	size_t pos = 0, n = 0, i;
	struct proc *p;

	if (!t->purge_at || now < t->purge_at)
		return;
	while ((p = hashtab__next(&t->procs, &pos))) {
		if (!p->gone_ns)
			continue;
		at = p->gone_ns + GONE_KEEP_NS + 1;
		if (now >= at && n < sizeof(due) / sizeof(due[0]))
			due[n++] = p->pid;
		else if (!next || at < next)
			next = at; /* past due when the batch was full: the next call */
	}
	for (i = 0; i < n; i++)
		proc_drop(t, proc_find(t, due[i]));
	t->purge_at = next;
}

/* An interner's address may be the last one's again: the file is counted. */
void pytrack__new_file(struct pytrack *t)
{
	if (t)
		t->file++;
}

void pytrack__forget(struct pytrack *t, uint32_t pid)
{
	struct proc *p = proc_find(t, pid);
	struct timespec ts;
	uint64_t now;

	if (!p)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	bpf_map_delete_elem(t->pyprocs_fd, &pid);
	p->gone_ns = now;
	if (!t->purge_at)
		t->purge_at = now + GONE_KEEP_NS + 1;
	procs_purge(t, now);
}

int pytrack__fork(struct pytrack *t, uint32_t parent, uint32_t child)
{
	struct proc *p = proc_find(t, parent), *c;
	struct interp *ip;
	uint64_t bias;
	struct py_range eval[PY_EVAL_RANGES];
	int n;

	if (!p || p->gone_ns)
		return 0;
	c = proc_find(t, child);
	if (c && !c->gone_ns)
		return 0;
	if (c) {
		proc_drop(t, c);
		p = proc_find(t, parent); /* deletion moves entries */
	}
	ip = p->ip;
	bias = p->bias;
	n = p->nr_eval;
	memcpy(eval, p->eval, sizeof(eval));
	c = proc_add(t, child); /* p is stale from here */
	if (!c)
		return -ENOMEM;
	c->ip = ip;
	c->bias = bias;
	c->nr_eval = n;
	memcpy(c->eval, eval, sizeof(eval));
	if (!ip)
		return 0;
	t->st.processes++;
	return proc_publish(t, c);
}

static bool is_eval(void *arg, uint64_t ip)
{
	const struct proc *p = arg;
	int i;

	/* a return address: the call is just before it */
	for (i = 0; i < p->nr_eval; i++)
		if (ip > p->eval[i].start && ip <= p->eval[i].end)
			return true;
	return false;
}

/* The code object at addr as the kernel saw it, read on first sight. */
static struct code *code_of(struct pytrack *t, struct proc *p, uint64_t addr, uint32_t stamp)
{
	struct code_key k = { .addr = addr, .stamp = stamp };
	uint64_t h = code_hash(&k);
	struct code *c = hashtab__find(&p->codes, h, &k, code_eq), n = { 0 };
	int err;

	if (c)
		return c;
	n.addr = addr;
	n.stamp = stamp;
	t->st.code_reads++;
	err = py_interp__read_code(p->ip->pi, p->pid, p->bias, addr, &n.c);
	if (!err && n.c.stamp != stamp) {
		py_code__release(&n.c); /* another code object there now */
		err = -ESTALE;
	}
	if (err) {
		memset(&n.c, 0, sizeof(n.c));
		n.bad = true;
	}
	if (hashtab__insert(&p->codes, h, &n, (void **)&c)) {
		py_code__release(&n.c);
		return NULL;
	}
	return c;
}

/* The code's PY_CODE record in this file (interned: once a file). */
static int write_code(struct pytrack *t, struct intern *in, const struct proc *p,
		      struct code *c)
{
	const struct py_version *v = py_interp__version(p->ip->pi);
	struct cap_py_code rec = {
		.firstlineno = c->c.firstlineno,
		.version = v->major << 8 | v->minor,
	};
	int err = intern__pycode(in, &rec, c->c.qualname, c->c.filename, c->c.linetable,
				 c->c.linetable_len, &c->id);

	if (!err)
		c->file = t->file;
	return err;
}

/* One Python frame as a capture frame: its code's PY_CODE id in this
 * file (written when new) and its byte offset. */
static int capture_frame(struct pytrack *t, struct intern *in, struct proc *p,
			 const struct stkrec_pyframe *f, uint64_t *out)
{
	struct code *c = code_of(t, p, f->code & ~STKREC_PYFRAME_ENTRY, f->stamp);
	int32_t off;
	int err;

	if (!c)
		return -ENOMEM;
	if (c->bad) {
		t->st.code_unread++;
		*out = CAP_PYFRAME(0, CAP_PY_MARK_UNKNOWN);
		return 0;
	}
	if (c->file != t->file || !c->id) {
		err = write_code(t, in, p, c);
		if (err)
			return err;
	}
	if (py_interp__offset(p->ip->pi, f->lasti, c->c.code_size, &off) || off < 0)
		off = -1; /* not started, or outside the code: its first line */
	*out = CAP_PYFRAME(c->id, (uint32_t)(off + 1));
	return 0;
}

static uint64_t cut_marker(uint8_t py_flags)
{
	if (py_flags & STKREC_PY_F_UNREADABLE)
		return CAP_PYFRAME(0, CAP_PY_MARK_UNREADABLE);
	if (py_flags & STKREC_PY_F_DEPTH)
		return CAP_PYFRAME(0, CAP_PY_MARK_DEPTH);
	return 0;
}

int pytrack__stack(struct pytrack *t, struct intern *in, const struct stkrec_stack_ev *e,
		   uint64_t *out)
{
	const struct stkrec_pyframe *f = (const void *)(e->ips + e->nr_ustack + e->nr_kstack);
	uint64_t py[STKREC_MAX_PYSTACK], entry = 0;
	struct proc *p = proc_find(t, e->pid);
	struct pystack_in m = { .native = (const uint64_t *)e->ips, .nn = e->nr_ustack, .py = py };
	bool cut;
	int i, err, n;

	if (!p || !p->ip) {
		memcpy(out, (const uint64_t *)e->ips, e->nr_ustack * sizeof(*out));
		return e->nr_ustack;
	}
	for (i = 0; i < e->nr_pystack && i < STKREC_MAX_PYSTACK; i++) {
		err = capture_frame(t, in, p, &f[i], &py[i]);
		if (err)
			return err;
		if (f[i].code & STKREC_PYFRAME_ENTRY)
			entry |= 1ull << i;
	}
	m.np = i;
	m.entry = entry;
	m.cut = cut_marker(e->py_flags);
	m.is_eval = is_eval;
	m.arg = p;
	n = pystack__merge(&m, out, CAP_MAX_STACK_DEPTH, &cut);
	t->st.merged_cut += cut;
	return n;
}

void pytrack__stats(const struct pytrack *t, struct pytrack_stats *st)
{
	*st = t->st;
}
