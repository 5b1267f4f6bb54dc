// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Inlined frames and source lines from DWARF (libdw). For an address, the
 * scopes that contain it, innermost first, give the chain of inlined
 * subroutines up to the containing subprogram. The innermost frame's line
 * comes from the line table; each outer frame's line is the call site
 * (DW_AT_call_file/DW_AT_call_line) of the inlined frame inside it.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>

#include "sym/sym_int.h"

/* Deeper inline chains are cut (their innermost levels kept). */
#define DWARF_MAX_CHAIN 64

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	/* The linkage name matches ELF symbols (mangled C++ names). */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		name = dwarf_formstring(&attr);
		if (name && *name)
			return name;
	}
	name = dwarf_diename(die);
	return name && *name ? name : NULL;
}

/* Call site of an inlined subroutine, as (file, line). */
static void call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles,
		      const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	*file = NULL;
	*line = 0;
	if (files && dwarf_attr(die, DW_AT_call_file, &attr) &&
	    !dwarf_formudata(&attr, &v) && v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
	if (dwarf_attr(die, DW_AT_call_line, &attr) &&
	    !dwarf_formudata(&attr, &v) && v <= INT32_MAX)
		*line = (int)v;
}

/* Replace *scopes by the scopes enclosing die ([0] = die); 0 on failure. */
static int restart_at(Dwarf_Die *die, Dwarf_Die **scopes)
{
	Dwarf_Die copy = *die, *outer = NULL;
	int n = dwarf_getscopes_die(&copy, &outer);

	free(*scopes);
	*scopes = n > 0 ? outer : NULL;
	if (n <= 0)
		free(outer);
	return n > 0 ? n : 0;
}

static void innermost_line(Dwarf_Die *cu, uint64_t addr, const char **file,
			   int *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, addr);
	int n = 0;

	*file = NULL;
	*line = 0;
	if (!l)
		return;
	*file = dwarf_linesrc(l, NULL, NULL);
	if (!dwarf_lineno(l, &n) && n > 0)
		*line = n;
}

/*
 * Walk the scopes, innermost first. dwarf_getscopes() continues past an
 * inlined subroutine with the scopes of its abstract definition, so at each
 * inlined instance the walk restarts from that concrete DIE's own parents
 * (dwarf_getscopes_die). Returns the chain length, 0 if no subprogram ends
 * it; frees *scopes.
 */
static int walk_scopes(Dwarf_Die *cu, Dwarf_Die **scopes, int nscopes,
		       uint64_t addr, struct sym_frame *chain)
{
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	const char *file;
	int line, n = 0, i = 0;

	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	innermost_line(cu, addr, &file, &line);
	while (i < nscopes) {
		Dwarf_Die *die = &(*scopes)[i];
		int tag = dwarf_tag(die);
		struct sym_frame *f;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) {
			i++;
			continue;
		}
		if (n == DWARF_MAX_CHAIN)
			n--; /* keep the innermost levels and the function */
		f = &chain[n++];
		f->name = die_name(die);
		f->file = file;
		f->line = line;
		f->inlined = tag == DW_TAG_inlined_subroutine;
		if (!f->inlined)
			return n;
		call_site(die, files, nfiles, &file, &line);
		nscopes = restart_at(die, scopes);
		i = 1; /* [0] is the inlined instance itself */
	}
	return 0;
}

int dwarf_frames(Dwarf *dw, uint64_t addr, struct sym_frame *frames, int max)
{
	struct sym_frame chain[DWARF_MAX_CHAIN];
	Dwarf_Die cu, *scopes = NULL;
	int nscopes, n, i;

	if (!dw || max < 1 || !dwarf_addrdie(dw, addr, &cu))
		return 0;
	nscopes = dwarf_getscopes(&cu, addr, &scopes);
	if (nscopes <= 0)
		return 0;
	n = walk_scopes(&cu, &scopes, nscopes, addr, chain);
	free(scopes);
	if (!n)
		return 0;
	/* Too many levels for the caller: innermost max-1, then the function. */
	if (n > max) {
		chain[max - 1] = chain[n - 1];
		n = max;
	}
	for (i = 0; i < n; i++)
		frames[i] = chain[i];
	return n;
}
