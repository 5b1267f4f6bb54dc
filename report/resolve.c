// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/idmap.h"
#include "report/resolve.h"
#include "sym/sym.h"
#include "util/array.h"

#define ARENA_BLOCK (64u << 10)
#define SYM_MAX_INLINE 16

/* Cache key classes (idmap key a): low 2 bits; bit 2 = caller adjust. */
#define KEY_KERNEL 1u
#define KEY_USER 2u
#define KEY_MODULE 3u
#define KEY_PYTHON 0u /* (0, the frame): a Python frame */
/* JIT cache (resolver.jits): (pid << 1 | caller, ip) -> frame index or
 * JIT_NONE; (JIT_ENTRY | entry, 0) -> frame index. */
#define JIT_ENTRY (1ull << 63)
#define JIT_NONE UINT64_MAX

/*
 * Why two per-(object, offset) caches, this one and the symbolizer's
 * (sym/symbolize.c): they answer different questions. This one is keyed by
 * the model's dso index, an integer, and holds finished rframes -- dso
 * names, the "<base>+0x<offset>" names made here, kernel frames -- with
 * innermost and caller frames of one offset apart; a repeated frame costs
 * one idmap lookup and no call into sym/. The symbolizer's is keyed by
 * (recorded path, build ID, lookup offset), which it must hash on every
 * call; it serves callers without a resolver, answers once for model dsos
 * of the same build, and its stats count distinct addresses (the -v
 * "addresses named" line). Keeping only the symbolizer's would hash a path
 * per frame and lose the kernel and generated names; keeping only this one
 * would change the symbolizer's contract and stats.
 */
struct resolver {
	const struct model *m;
	struct symbolizer *sym;
	struct idmap cache;      /* key -> first << 16 | count in frames */
	struct rframe *frames;   /* resolved frames, ip unset */
	size_t nframes, frames_cap;
	char **blocks;           /* arena for generated names */
	size_t nblocks, blocks_cap;
	char *cur;
	size_t left;
	struct idmap jits;       /* JIT frames, see JIT_ENTRY */
	uint64_t jit_named;      /* distinct JIT map entries that named frames */
};

static const struct rframe unknown_user = {
	.name = "[unknown]", .dso = "[unknown]",
};

static char *arena_printf(struct resolver *r, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= ARENA_BLOCK)
		return NULL;
	if ((size_t)len + 1 > r->left) {
		if (ARRAY_RESERVE(r->blocks, r->blocks_cap, r->nblocks + 1))
			return NULL;
		r->cur = malloc(ARENA_BLOCK);
		if (!r->cur)
			return NULL;
		r->blocks[r->nblocks++] = r->cur;
		r->left = ARENA_BLOCK;
	}
	va_start(ap, fmt);
	vsnprintf(r->cur, len + 1, fmt, ap);
	va_end(ap);
	r->cur += len + 1;
	r->left -= len + 1;
	return r->cur - len - 1;
}

int resolver__new(const struct model *m, const struct symbolizer_opts *sym_opts,
		  struct resolver **out)
{
	struct resolver *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->m = m;
	err = symbolizer__new(sym_opts, &r->sym);
	if (!err)
		err = model__pack_load(m, r->sym);
	if (err) {
		symbolizer__free(r->sym);
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

void resolver__free(struct resolver *r)
{
	size_t i;

	if (!r)
		return;
	symbolizer__free(r->sym);
	idmap__fini(&r->cache);
	idmap__fini(&r->jits);
	free(r->frames);
	for (i = 0; i < r->nblocks; i++)
		free(r->blocks[i]);
	free(r->blocks);
	free(r);
}

void resolver__sym_stats(const struct resolver *r, struct symbolizer_stats *out)
{
	symbolizer__stats(r->sym, out);
}

uint64_t resolver__jit_named(const struct resolver *r)
{
	return r->jit_named;
}

static struct rframe *new_frames(struct resolver *r, size_t n)
{
	if (ARRAY_RESERVE(r->frames, r->frames_cap, r->nframes + n))
		return NULL;
	memset(r->frames + r->nframes, 0, n * sizeof(*r->frames));
	return r->frames + r->nframes;
}

/* Name (object, file offset); lookup_off is one less for return addresses. */
static int name_user(struct resolver *r, const struct model_dso *d, uint64_t off,
		     uint64_t lookup_off, struct rframe **fr)
{
	struct sym_frame sf[SYM_MAX_INLINE];
	struct rframe *f;
	const char *dso = d->anon ? "//anon" : (*d->base ? d->base : "[unknown]");
	int i, n = 0;

	if (*d->path && !d->anon) {
		n = symbolizer__resolve(r->sym, d->path, d->build_id, d->build_id_size,
					lookup_off, sf, SYM_MAX_INLINE);
		if (n < 0)
			return n;
	}
	f = new_frames(r, n ? n : 1);
	if (!f)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		f[i].name = sf[i].name ? sf[i].name : "[unknown]";
		f[i].srcfile = sf[i].file;
		f[i].line = sf[i].line;
		f[i].inlined = sf[i].inlined;
		f[i].dso = dso;
	}
	if (!n) {
		f->dso = dso;
		if (*d->base && !d->anon)
			f->name = arena_printf(r, "%s+0x%" PRIx64, d->base, off);
		else
			f->name = "[unknown]";
		if (!f->name)
			return -ENOMEM;
		n = 1;
	}
	*fr = f;
	return n;
}

static int cached_user(struct resolver *r, const struct model_map *mp, uint64_t ip,
		       bool caller, const struct rframe **fr)
{
	const struct model_dso *d = model__dso(r->m, mp->dso);
	uint64_t off = ip - mp->start + mp->pgoff, *val;
	struct rframe *f;
	int n;

	val = idmap__find(&r->cache, (uint64_t)mp->dso << 3 | caller << 2 | KEY_USER, off);
	if (val) {
		*fr = r->frames + (*val >> 16);
		return *val & 0xffff;
	}
	n = name_user(r, d, off, sym_lookup_offset(off, caller), &f);
	if (n < 0)
		return n;
	*fr = f;
	r->nframes += n;
	if (idmap__upsert(&r->cache, (uint64_t)mp->dso << 3 | caller << 2 | KEY_USER,
			  off, (uint64_t)(f - r->frames) << 16 | n, &val) < 0)
		return -ENOMEM;
	*fr = r->frames + (*val >> 16); /* frames may have moved: reload */
	return n;
}

/* The frame of JIT map entry e, made once. */
static int jit_frame(struct resolver *r, long e, uint64_t *idx)
{
	uint64_t *val = idmap__find(&r->jits, JIT_ENTRY | e, 0);
	struct rframe *f;

	if (val) {
		*idx = *val;
		return 0;
	}
	f = new_frames(r, 1);
	if (!f)
		return -ENOMEM;
	f->name = model__jit_name(r->m, e);
	f->dso = arena_printf(r, "perf-%u.map", model__jit_pid(r->m, e));
	*idx = f - r->frames;
	if (!f->dso || idmap__upsert(&r->jits, JIT_ENTRY | e, 0, *idx, &val) < 0)
		return -ENOMEM;
	r->nframes++;
	r->jit_named++;
	return 0;
}

/* A frame in JIT code, named by the capture's JIT map entries (FORMAT.md
 * §4.21): 1 with *fr set, 0 when none holds it. Where pid has one map the
 * answer holds at any time and is cached by address, found or not. */
static int cached_jit(struct resolver *r, uint32_t pid, uint64_t time, uint64_t ip,
		      bool caller, const struct rframe **fr)
{
	uint64_t key = (uint64_t)pid << 1 | caller, idx = JIT_NONE, *val;
	bool timeless;
	long e;

	val = idmap__find(&r->jits, key, ip);
	if (!val) {
		e = model__jit_find(r->m, pid, time, sym_lookup_offset(ip, caller), &timeless);
		if (e >= 0 && jit_frame(r, e, &idx))
			return -ENOMEM;
		if (timeless && idmap__upsert(&r->jits, key, ip, idx, &val) < 0)
			return -ENOMEM;
	} else {
		idx = *val;
	}
	if (idx == JIT_NONE)
		return 0;
	*fr = r->frames + idx;
	return 1;
}

static const char *py_marker(uint32_t mark)
{
	switch (mark) {
	case CAP_PY_MARK_DEPTH:
		return "[python: more frames]";
	case CAP_PY_MARK_UNREADABLE:
		return "[python: unreadable]";
	case CAP_PY_MARK_UNKNOWN:
		return "[python: code not read]";
	}
	return "[python: unknown]";
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Name a Python frame: its code object and the line its instruction is
 * on, as traceback gives it (offset field - 1: the byte offset; 0: not
 * started, the first line). */
static int name_python(struct resolver *r, uint64_t ip, struct rframe *f)
{
	uint32_t id = CAP_PYFRAME_CODE(ip), off = CAP_PYFRAME_OFF(ip);
	struct model_pycode c;
	int line = 0;

	f->python = true;
	if (!id || model__pycode(r->m, id, &c)) {
		f->name = id ? "[python: code not recorded]" : py_marker(off);
		f->dso = "[python]";
		f->special = true;
		return 0;
	}
	if ((c.flags & CAP_PY_CODE_NO_LINES) ||
	    sym_pyline(c.version, c.linetable, c.linetable_len, c.firstlineno, (int)off - 1,
		       &line))
		line = 0;
	f->func = c.qualname;
	f->srcfile = c.filename;
	f->line = line > 0 ? line : 0;
	f->dso = base_name(c.filename);
	if (f->line)
		f->name = arena_printf(r, "%s (%s:%d)", c.qualname, f->dso, f->line);
	else
		f->name = arena_printf(r, "%s (%s)", c.qualname, f->dso);
	return f->name ? 0 : -ENOMEM;
}

static int cached_python(struct resolver *r, uint64_t ip, const struct rframe **fr)
{
	uint64_t *val = idmap__find(&r->cache, KEY_PYTHON, ip);
	struct rframe *f;

	if (!val) {
		f = new_frames(r, 1);
		if (!f || name_python(r, ip, f))
			return -ENOMEM;
		if (idmap__upsert(&r->cache, KEY_PYTHON, ip, f - r->frames, &val) < 0)
			return -ENOMEM;
		r->nframes++;
	}
	*fr = r->frames + *val;
	return 1;
}

static int placeholder(struct rframe *out, int max, const char *name, bool kernel)
{
	if (max < 1)
		return 0;
	memset(out, 0, sizeof(*out));
	out->name = name;
	out->dso = "[unknown]";
	out->special = true;
	out->kernel = kernel;
	return 1;
}

int resolver__user(struct resolver *r, uint32_t pid, uint64_t time, uint32_t stack_id,
		   struct rframe *out, int max)
{
	const struct model_map *mp;
	const struct rframe *fr;
	const uint64_t *ips;
	int i, j, n, nr, cnt = 0;

	if (stack_id == CAP_STACK_LOST)
		return placeholder(out, max, "[Missed User Stack]", false);
	nr = model__stack(r->m, stack_id, &ips);
	if (nr < 0)
		return placeholder(out, max, "[lost stack]", false);
	for (i = 0; i < nr && cnt < max; i++) {
		if (CAP_IS_PYFRAME(ips[i])) {
			if (cached_python(r, ips[i], &fr) < 0)
				return -ENOMEM;
			out[cnt] = *fr;
			out[cnt++].ip = ips[i];
			continue;
		}
		mp = model__find_map(r->m, pid, time, ips[i]);
		n = (!mp || model__dso(r->m, mp->dso)->anon) && ips[i] != UINT64_MAX ?
		    cached_jit(r, pid, time, ips[i], i > 0, &fr) : 0;
		if (n < 0)
			return n;
		if (!n && !mp) {
			out[cnt] = unknown_user;
			out[cnt++].ip = ips[i];
			continue;
		}
		if (!n)
			n = cached_user(r, mp, ips[i], i > 0, &fr);
		if (n < 0)
			return n;
		for (j = 0; j < n && cnt < max; j++) {
			out[cnt] = fr[j];
			out[cnt++].ip = ips[i];
		}
	}
	return cnt;
}

static const char *module_dso(struct resolver *r, const char *module)
{
	uint64_t *val;
	char *s;

	val = idmap__find(&r->cache, KEY_MODULE, (uintptr_t)module);
	if (val)
		return (const char *)(uintptr_t)*val;
	s = arena_printf(r, "[%s]", module);
	if (!s || idmap__upsert(&r->cache, KEY_MODULE, (uintptr_t)module,
				(uintptr_t)s, &val) < 0)
		return NULL;
	return s;
}

static int name_kernel(struct resolver *r, uint64_t ip, bool caller, struct rframe *f)
{
	const char *module = NULL, *name;
	uint64_t off = 0;

	name = ksymtab__lookup(model__ksymtab(r->m), caller ? ip - 1 : ip, &module, &off);
	if (name) {
		f->name = name;
		f->dso = module && *module ? module_dso(r, module) : "[kernel.kallsyms]";
		f->offset = caller ? off + 1 : off;
		f->has_offset = true;
	} else {
		module = model__kmod(r->m, ip, &off);
		f->dso = module ? module_dso(r, module) : "[kernel.kallsyms]";
		f->name = module ? arena_printf(r, "[%s]+0x%" PRIx64, module, off) : "[unknown]";
	}
	f->kernel = true;
	return f->name && f->dso ? 0 : -ENOMEM;
}

static int cached_kernel(struct resolver *r, uint64_t ip, bool caller,
			 const struct rframe **fr)
{
	uint64_t *val;
	struct rframe *f;

	val = idmap__find(&r->cache, caller << 2 | KEY_KERNEL, ip);
	if (val) {
		*fr = r->frames + *val;
		return 0;
	}
	f = new_frames(r, 1);
	if (!f || name_kernel(r, ip, caller, f))
		return -ENOMEM;
	r->nframes++;
	if (idmap__upsert(&r->cache, caller << 2 | KEY_KERNEL, ip, f - r->frames, &val) < 0)
		return -ENOMEM;
	*fr = f;
	return 0;
}

/* The tracer's own frames sit innermost (BPF program, bpf_trace_run*,
 * tracepoint glue); a BPF program has no kernel symbol, so an unnamed frame
 * inside that run goes too. Returns how many innermost frames to drop. */
static int tracer_frames(const struct rframe *f, int n)
{
	int i, strip = 0;

	for (i = 0; i < n; i++) {
		if (ksymtab__is_tracer_frame(f[i].name))
			strip = i + 1;
		else if (f[i].has_offset)
			break;
	}
	return strip;
}

int resolver__kernel(struct resolver *r, uint32_t stack_id, struct rframe *out, int max)
{
	const struct rframe *fr;
	const uint64_t *ips;
	int i, nr, cnt = 0, strip, err;

	if (stack_id == CAP_STACK_LOST)
		return placeholder(out, max, "[Missed Kernel Stack]", true);
	nr = model__stack(r->m, stack_id, &ips);
	if (nr < 0)
		return placeholder(out, max, "[lost stack]", true);
	for (i = 0; i < nr && cnt < max; i++) {
		err = cached_kernel(r, ips[i], i > 0, &fr);
		if (err)
			return err;
		out[cnt] = *fr;
		out[cnt++].ip = ips[i];
	}
	strip = tracer_frames(out, cnt);
	if (strip)
		memmove(out, out + strip, (cnt - strip) * sizeof(*out));
	return cnt - strip;
}
