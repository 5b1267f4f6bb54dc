// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * C++ demangling through the C++ ABI's __cxa_demangle, found in
 * libstdc++.so.6 at run time (no link dependency; without it names stay
 * mangled). Each distinct name is demangled once: results are kept by the
 * address of the mangled string, which the symbolizer keeps alive.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_int.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len,
				 int *status);

struct demangled {
	const char *key; /* the mangled name, by address */
	char *val;       /* NULL: not demangleable, keep the key */
};

static bool key_eq(const void *ent, const void *key)
{
	return ((const struct demangled *)ent)->key == key;
}

void sym_demangler__init(struct sym_demangler *d)
{
	memset(d, 0, sizeof(*d));
	hashtab__init(&d->tab, sizeof(struct demangled));
}

static cxa_demangle_fn demangler(struct sym_demangler *d)
{
	if (!d->fn && !d->failed) {
		d->dl = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
		d->fn = d->dl ? dlsym(d->dl, "__cxa_demangle") : NULL;
		d->failed = !d->fn;
	}
	return (cxa_demangle_fn)d->fn;
}

const char *sym_demangle(struct sym_demangler *d, const char *name)
{
	struct demangled n = { .key = name }, *e;
	cxa_demangle_fn fn;
	int status = -1;
	uint64_t hash;

	if (!name || strncmp(name, "_Z", 2) || !(fn = demangler(d)))
		return name;
	hash = (uintptr_t)name * 0x9e3779b97f4a7c15ull; /* top half mixed */
	e = hashtab__find(&d->tab, hash, name, key_eq);
	if (e)
		return e->val ? e->val : name;
	if (hashtab__reserve(&d->tab, d->tab.nr + 1))
		return name; /* out of memory: the mangled name is still right */
	n.val = fn(name, NULL, NULL, &status);
	if (status) {
		free(n.val);
		n.val = NULL;
	}
	hashtab__insert(&d->tab, hash, &n, NULL); /* reserved above */
	return n.val ? n.val : name;
}

void sym_demangler__free(struct sym_demangler *d)
{
	struct demangled *e;
	size_t pos;

	hashtab__for_each(&d->tab, pos, e)
		free(e->val);
	hashtab__free(&d->tab);
	if (d->dl)
		dlclose(d->dl);
	sym_demangler__init(d);
}
