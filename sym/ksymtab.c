// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel symbol table from a capture's KSYM/KMOD records: a sorted array
 * searched by address. Names live in one growing arena; module names are
 * interned so each is stored once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym.h"
#include "util/array.h"
#include "util/ranges.h"

struct ksym {
	uint64_t addr;
	uint32_t size;   /* 0: unknown, ends at the next symbol */
	uint32_t module; /* index + 1 into modules, 0 = vmlinux */
	size_t name;     /* offset in the arena */
};

_Static_assert(offsetof(struct ksym, addr) == 0, "ranges__after() reads addr first");

struct kmod {
	char *name;
	uint64_t base;
	uint64_t end; /* 0: extent unknown */
};

struct ksymtab {
	struct ksym *v;
	size_t n, cap;
	char *arena;
	size_t arena_len, arena_cap;
	struct kmod *modules;
	size_t nmodules, modules_cap;
	bool finalized;
};

int ksymtab__new(struct ksymtab **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static int arena_add(struct ksymtab *t, const char *s, size_t len, size_t *off)
{
	if (ARRAY_RESERVE(t->arena, t->arena_cap, t->arena_len + len + 1))
		return -ENOMEM;
	memcpy(t->arena + t->arena_len, s, len);
	t->arena[t->arena_len + len] = '\0';
	*off = t->arena_len;
	t->arena_len += len + 1;
	return 0;
}

/* Module index + 1; captures have at most a few hundred modules, and
 * consecutive symbols usually share the last one. */
static int module_id(struct ksymtab *t, const char *name, uint32_t *id)
{
	struct kmod *m;
	size_t i;

	*id = 0;
	if (!name || !*name)
		return 0;
	for (i = t->nmodules; i > 0; i--) {
		if (!strcmp(t->modules[i - 1].name, name)) {
			*id = i;
			return 0;
		}
	}
	if (ARRAY_RESERVE(t->modules, t->modules_cap, t->nmodules + 1))
		return -ENOMEM;
	m = &t->modules[t->nmodules];
	memset(m, 0, sizeof(*m));
	m->name = strdup(name);
	if (!m->name)
		return -ENOMEM;
	*id = ++t->nmodules;
	return 0;
}

int ksymtab__add_module(struct ksymtab *t, const char *name, uint64_t base,
			uint32_t size)
{
	uint32_t id;
	int err;

	if (!t || !name || !*name || !size || base + size < base)
		return -EINVAL;
	err = module_id(t, name, &id);
	if (err)
		return err;
	t->modules[id - 1].base = base;
	t->modules[id - 1].end = base + size;
	return 0;
}

int ksymtab__add(struct ksymtab *t, uint64_t addr, uint32_t size,
		 const char *name, size_t name_len, const char *module)
{
	struct ksym *e;
	int err;

	if (!t || !name || t->finalized)
		return -EINVAL;
	name_len = strnlen(name, name_len);
	if (!name_len)
		return -EINVAL;
	if (ARRAY_RESERVE(t->v, t->cap, t->n + 1))
		return -ENOMEM;
	e = &t->v[t->n];
	e->addr = addr;
	e->size = size;
	err = module_id(t, module, &e->module);
	if (!err)
		err = arena_add(t, name, name_len, &e->name);
	if (err)
		return err;
	t->n++;
	return 0;
}

/* Address order; at one address the preferred name first: sized, shorter,
 * then lexically smaller (deterministic whatever the input order). */
static int ksym_cmp(const void *a, const void *b, void *arena)
{
	const struct ksym *x = a, *y = b;
	const char *nx = (char *)arena + x->name, *ny = (char *)arena + y->name;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}

int ksymtab__finalize(struct ksymtab *t)
{
	size_t i, j = 0;

	if (!t)
		return -EINVAL;
	if (t->n)
		qsort_r(t->v, t->n, sizeof(*t->v), ksym_cmp, t->arena);
	/* One symbol per address: lookups must give one answer. */
	for (i = 0; i < t->n; i++) {
		if (j && t->v[j - 1].addr == t->v[i].addr)
			continue;
		t->v[j++] = t->v[i];
	}
	t->n = j;
	t->finalized = true;
	return 0;
}

size_t ksymtab__count(const struct ksymtab *t)
{
	return t && t->finalized ? t->n : 0;
}

/* A size-0 symbol ends where the next symbol starts, and never past its
 * module's end. Without a next symbol of the same module and without the
 * module's extent there is no end we can trust. */
static bool ksym_contains(const struct ksymtab *t, size_t i, uint64_t addr)
{
	const struct ksym *e = &t->v[i];
	const struct kmod *m = e->module ? &t->modules[e->module - 1] : NULL;
	bool has_next = i + 1 < t->n;

	if (e->size)
		return addr - e->addr < e->size;
	if (has_next && addr >= t->v[i + 1].addr)
		return false;
	if (m && m->end)
		return addr >= m->base && addr < m->end;
	return has_next && t->v[i + 1].module == e->module;
}

const char *ksymtab__lookup(const struct ksymtab *t, uint64_t addr,
			    const char **module, uint64_t *offset)
{
	const struct ksym *e;
	size_t lo;

	if (!t || !t->finalized || !t->n)
		return NULL;
	lo = ranges__after(t->v, t->n, sizeof(*t->v), addr);
	if (!lo || !ksym_contains(t, lo - 1, addr))
		return NULL;
	e = &t->v[lo - 1];
	if (module)
		*module = e->module ? t->modules[e->module - 1].name : NULL;
	if (offset)
		*offset = addr - e->addr;
	return t->arena + e->name;
}

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

bool ksymtab__is_tracer_frame(const char *name)
{
	/* Glue between the traced event and bpf_get_stack(): BPF helpers and
	 * programs, tracepoint trampolines, perf overflow/software events. */
	static const char *const prefixes[] = {
		"bpf_get_stack", "____bpf_get_stack", "__bpf_get_stack",
		"bpf_get_task_stack", "bpf_prog_", "__bpf_prog_run",
		"___bpf_prog_run", "bpf_dispatcher_", "bpf_trampoline_",
		"bpf_trace_run", "__bpf_trace_", "__traceiter_", "trace_call_bpf",
		"perf_trace_", "bpf_perf_event_output", "____bpf_perf_event_output",
		"bpf_ringbuf_", "bpf_overflow_handler", "__perf_event_overflow",
		"perf_event_overflow", "perf_swevent_", "perf_tp_event",
		"perf_callchain", "get_perf_callchain", "bpf_tracing_prog_",
		"kprobe_ftrace_handler", "kprobe_perf_func",
	};

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (has_prefix(name, prefixes[i]))
			return true;
	}
	return false;
}

void ksymtab__free(struct ksymtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nmodules; i++)
		free(t->modules[i].name);
	free(t->modules);
	free(t->arena);
	free(t->v);
	free(t);
}
