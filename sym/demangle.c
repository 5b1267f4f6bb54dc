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

static size_t slot(const struct sym_demangler *d, const char *key)
{
	uint64_t h = (uintptr_t)key * 0x9e3779b97f4a7c15ull;

	return (h >> 20) & (d->cap - 1);
}

static int grow_table(struct sym_demangler *d)
{
	struct demangled *old = d->tab;
	size_t i, ocap = d->cap;

	d->cap = ocap ? ocap * 2 : 256;
	d->tab = calloc(d->cap, sizeof(*d->tab));
	if (!d->tab) {
		d->tab = old;
		d->cap = ocap;
		return -ENOMEM;
	}
	for (i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i].key)
			continue;
		for (j = slot(d, old[i].key); d->tab[j].key; j = (j + 1) & (d->cap - 1))
			;
		d->tab[j] = old[i];
	}
	free(old);
	return 0;
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
	cxa_demangle_fn fn;
	size_t j;
	int status = -1;
	char *out;

	if (!name || strncmp(name, "_Z", 2) || !(fn = demangler(d)))
		return name;
	for (j = d->cap ? slot(d, name) : 0; d->cap && d->tab[j].key;
	     j = (j + 1) & (d->cap - 1)) {
		if (d->tab[j].key == name)
			return d->tab[j].val ? d->tab[j].val : name;
	}
	if ((d->used + 1) * 2 > d->cap && grow_table(d))
		return name; /* out of memory: the mangled name is still right */
	out = fn(name, NULL, NULL, &status);
	if (status) {
		free(out);
		out = NULL;
	}
	for (j = slot(d, name); d->tab[j].key; j = (j + 1) & (d->cap - 1))
		;
	d->tab[j] = (struct demangled){ .key = name, .val = out };
	d->used++;
	return out ? out : name;
}

void sym_demangler__free(struct sym_demangler *d)
{
	for (size_t i = 0; i < d->cap; i++)
		free(d->tab[i].val);
	free(d->tab);
	if (d->dl)
		dlclose(d->dl);
	memset(d, 0, sizeof(*d));
}
