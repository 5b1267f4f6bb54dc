// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The offsets from DWARF: the interpreter file's own, or its separate debug
 * file's, found by libdwfl as gdb finds it (build ID under
 * DEBUG_DIR/.build-id, .gnu_debuglink beside the file, in .debug/ or under
 * DEBUG_DIR; debuginfod when DEBUGINFOD_URLS is set). Each field is a
 * member path in a type named as table.c's py_dwfields say.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <string.h>

#include "python/python_int.h"

#define MAX_TYPES 16

struct dw_type {
	const char *name;
	Dwarf_Die die;
	bool found;
};

/* Through typedefs and qualifiers to the structure or union. */
static bool peel(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	int depth;

	*out = *die;
	for (depth = 0; depth < 8; depth++) {
		int tag = dwarf_tag(out);

		if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type)
			return !dwarf_hasattr(out, DW_AT_declaration);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_member)
			return false;
		if (!dwarf_attr_integrate(out, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
			return false;
	}
	return false;
}

static void scan_unit(Dwarf_Die *cu, struct dw_type *types, int ntypes)
{
	Dwarf_Die die;

	if (dwarf_child(cu, &die))
		return;
	do {
		int tag = dwarf_tag(&die), i;
		const char *name;

		if (tag != DW_TAG_typedef && tag != DW_TAG_structure_type)
			continue;
		name = dwarf_diename(&die);
		for (i = 0; name && i < ntypes; i++) {
			if (!types[i].found && !strcmp(name, types[i].name))
				types[i].found = peel(&die, &types[i].die);
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

static bool all_found(const struct dw_type *types, int ntypes)
{
	int i;

	for (i = 0; i < ntypes; i++) {
		if (!types[i].found)
			return false;
	}
	return true;
}

/* Complete definitions of the types, from whichever units hold them. */
static void find_types(Dwarf *dw, struct dw_type *types, int ntypes)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (!all_found(types, ntypes) &&
	       dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu))
			scan_unit(&cu, types, ntypes);
		off = next;
	}
}

static bool member_location(Dwarf_Die *m, uint64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(m, DW_AT_data_member_location, &a)) {
		*off = 0; /* a union's members */
		return true;
	}
	if (dwarf_formudata(&a, &w))
		return false;
	*off = w;
	return true;
}

/* The member name[0, len) of the structure st, also inside anonymous
 * members: its DIE and offset. */
static bool find_member(Dwarf_Die *st, const char *name, size_t len, Dwarf_Die *mem, uint64_t *off)
{
	Dwarf_Die c, inner;
	uint64_t at, sub;

	if (dwarf_child(st, &c))
		return false;
	do {
		const char *n = dwarf_diename(&c);

		if (dwarf_tag(&c) != DW_TAG_member || !member_location(&c, &at))
			continue;
		if (n && strlen(n) == len && !strncmp(n, name, len)) {
			*mem = c;
			*off = at;
			return true;
		}
		if (!n && peel(&c, &inner) && find_member(&inner, name, len, mem, &sub)) {
			*off = at + sub;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* A bit-field's first bit in its storage, little-endian numbering. */
static bool bit_offset(Dwarf_Die *m, uint64_t byte_off, uint64_t *bit)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	int size = dwarf_bytesize(m), width = dwarf_bitsize(m);

	if (dwarf_attr(m, DW_AT_data_bit_offset, &a) && !dwarf_formudata(&a, &w)) {
		*bit = byte_off * 8 + w;
		return true;
	}
	/* DWARF 2/3: counted from the storage unit's most significant bit */
	if (dwarf_attr(m, DW_AT_bit_offset, &a) && !dwarf_formudata(&a, &w) && size > 0 &&
	    width > 0 && w + width <= (Dwarf_Word)size * 8) {
		*bit = byte_off * 8 + size * 8 - w - width;
		return true;
	}
	return false;
}

/* One field: how says what of path in type st. */
static bool field_value(Dwarf_Die *st, const struct py_dwfield *f, uint64_t *val)
{
	const char *p = f->path;
	Dwarf_Die cur = *st, mem;
	uint64_t off = 0, at;

	if (f->how == PY_DW_SIZE) {
		int size = dwarf_bytesize(st);

		*val = size;
		return size > 0;
	}
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (!find_member(&cur, p, len, &mem, &at))
			return false;
		if (!dot)
			break;
		off += at;
		if (!peel(&mem, &cur))
			return false;
		p = dot + 1;
	}
	if (f->how == PY_DW_BIT)
		return bit_offset(&mem, at, val); /* within the member that holds it */
	*val = off + at;
	return true;
}

static struct dw_type *type_of(struct dw_type *types, int *ntypes, const char *name)
{
	int i;

	for (i = 0; i < *ntypes; i++) {
		if (!strcmp(types[i].name, name))
			return &types[i];
	}
	if (*ntypes == MAX_TYPES)
		return NULL;
	types[*ntypes] = (struct dw_type){ .name = name };
	return &types[(*ntypes)++];
}

static int fill(Dwarf *dw, int minor, struct py_offsets *o)
{
	struct dw_type types[MAX_TYPES];
	int ntypes = 0;
	size_t i;

	for (i = 0; i < py_ndwfields; i++) {
		const struct py_dwfield *f = &py_dwfields[i];

		if (minor >= f->from && minor <= f->to && !type_of(types, &ntypes, f->type))
			return -ENOENT;
	}
	find_types(dw, types, ntypes);
	memset(o, 0xff, sizeof(*o)); /* STKREC_PY_NONE everywhere */
	for (i = 0; i < py_ndwfields; i++) {
		const struct py_dwfield *f = &py_dwfields[i];
		struct dw_type *t;
		uint64_t v;

		if (minor < f->from || minor > f->to)
			continue;
		t = type_of(types, &ntypes, f->type);
		if (!t || !t->found || !field_value(&t->die, f, &v) || v >= STKREC_PY_NONE)
			return -ENOENT;
		*py_field(o, f->field) = v;
	}
	return 0;
}

int py_dwarf__open(const char *path, const char *debug_dir, struct py_dwarf *d)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;

	memset(d, 0, sizeof(*d));
	/* libdwfl's default list, its root ours */
	snprintf(d->dirs, sizeof(d->dirs), ":.debug:%s", debug_dir ? debug_dir : "/usr/lib/debug");
	d->dirsp = d->dirs;
	d->cb.find_elf = dwfl_build_id_find_elf;
	d->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	d->cb.section_address = dwfl_offline_section_address;
	d->cb.debuginfo_path = &d->dirsp;
	d->dwfl = dwfl_begin(&d->cb); /* keeps &d->cb: d must not move */
	if (!d->dwfl)
		return -ENOMEM;
	mod = dwfl_report_offline(d->dwfl, "python", path, -1);
	dwfl_report_end(d->dwfl, NULL, NULL);
	d->dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
	if (!d->dw) {
		py_dwarf__close(d);
		return -ENOENT;
	}
	return 0;
}

void py_dwarf__close(struct py_dwarf *d)
{
	if (d->dwfl)
		dwfl_end(d->dwfl);
	d->dwfl = NULL;
	d->dw = NULL;
}

Elf *py_dwarf__elf(const struct py_dwarf *d)
{
	return dwarf_getelf(d->dw);
}

int py_dwarf__offsets(const struct py_dwarf *d, int minor, struct py_offsets *o)
{
	return fill(d->dw, minor, o);
}
