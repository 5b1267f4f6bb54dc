/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to the symbolizer (symbolize.c, elfsym.c, debuginfo.c, dwarfinl.c,
 * demangle.c). Not part of stkrec's interface: the public header is
 * sym/sym.h; only the files of sym/ include this one.
 */
#ifndef STKREC_SYM_SYM_INT_H
#define STKREC_SYM_SYM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "sym/sym.h"
#include "util/hashtab.h"

#define SYM_BUILD_ID_MAX 64

/* One opened ELF file (an executable, a library or a separate debug file). */
struct elf_file {
	int fd;
	Elf *elf;
	char *path;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	uint8_t build_id_size;
	bool has_symtab;  /* non-empty .symtab */
	bool has_dwarf;   /* .debug_info with contents */
	/* MiniDebugInfo, decompressed: the inner ELF and its buffer */
	Elf *mini;
	void *mini_buf;
};

int elf_file__open(const char *path, struct elf_file **out);
int elf_file__open_fd(int fd, const char *path, struct elf_file **out);
void elf_file__close(struct elf_file *f);
bool elf_file__build_id_is(const struct elf_file *f, const uint8_t *id,
			   uint8_t size);
/* .gnu_debuglink: file name (owned by f) and CRC; -ENOENT if none. */
int elf_file__debuglink(const struct elf_file *f, const char **name,
			uint32_t *crc);
/* File offset to link-time virtual address through PT_LOAD headers.
 * debug_file: f is a separate debug file, whose p_offset/p_filesz may not be
 * those of the object; only headers that still cover the offset count. */
int elf_file__offset_to_vaddr(const struct elf_file *f, uint64_t off,
			      bool debug_file, uint64_t *vaddr);
/* Decompress .gnu_debugdata into f->mini; -ENOENT if there is none. */
int elf_file__load_minidebuginfo(struct elf_file *f);

/* A function symbol. */
struct sym_entry {
	uint64_t addr;
	uint64_t size;
	uint64_t limit;   /* end of its section: bound for size-0 symbols */
	const char *name; /* owned by the ELF it came from */
	uint8_t rank;     /* 0 global, 1 weak, 2 local: lower wins ties */
};

struct sym_table {
	struct sym_entry *v;
	uint64_t *maxend; /* maxend[i] = max end of v[0..i] (sized only) */
	size_t n, cap;
	/* Size-0 symbols may extend to the next symbol only when the table
	 * holds every function (.symtab), not just the exported ones. */
	bool complete;
	char **owned; /* names rewritten here (version suffix cut) */
	size_t nowned, owned_cap;
};

/* Add the FUNC symbols of elf's section of type (SHT_SYMTAB/SHT_DYNSYM). */
int sym_table__add_elf(struct sym_table *t, Elf *elf, Elf64_Word type);
int sym_table__finalize(struct sym_table *t);
const struct sym_entry *sym_table__find(const struct sym_table *t,
					uint64_t addr);
void sym_table__free(struct sym_table *t);

/* Locating files (debuginfo.c). */
struct sym_locator {
	const char *symfs;     /* NULL: none */
	const char *debug_dir;
	bool debuginfod;
	void *dl;              /* libdebuginfod handle, loaded on first use */
	void *client;
	bool dl_failed;
	struct symbolizer_stats *stats;
};

/* The object itself: recorded path or symfs + path, then the build-id
 * directory's executable, then debuginfod's executable. *out NULL if none. */
int locate_object(struct sym_locator *l, const char *path, const uint8_t *id,
		  uint8_t id_size, struct elf_file **out);
/* A separate debug file for the object (obj may be NULL). */
int locate_debug(struct sym_locator *l, const char *path, const uint8_t *id,
		 uint8_t id_size, const struct elf_file *obj,
		 struct elf_file **out);
/* The dwz file that .gnu_debugaltlink (name, build ID) of the debug file at
 * dbg_path refers to: debug_dir's build-id directory, then name (under
 * symfs when absolute, next to dbg_path when relative). */
int locate_altlink(struct sym_locator *l, const char *name, const uint8_t *id,
		   uint8_t id_size, const char *dbg_path, struct elf_file **out);
void sym_locator__free(struct sym_locator *l);

/* DWARF inline chain (dwarfinl.c): fills frames innermost first, the
 * containing function last (its name from DWARF, may be NULL). Returns the
 * number of frames, 0 if DWARF does not cover addr, <0 on error. */
int dwarf_frames(Dwarf *dw, uint64_t addr, struct sym_frame *frames, int max);

/* A loaded symbol pack (pack.c): objects, each a table of raw answers by
 * lookup offset; their frames in one array. */
struct sym_pobj {
	char *path;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	uint8_t build_id_size;
	bool dwarf;          /* packed with DWARF */
	struct hashtab addrs; /* of struct sym_paddr */
};

struct sym_pack {
	struct sym_pobj *objs;
	size_t nobjs, objs_cap;
	struct sym_frame *frames;
	size_t nframes, frames_cap;
};

int sym_pack__object(struct sym_pack *p, const char *path, const uint8_t *id,
		     uint8_t id_size, bool dwarf, uint32_t *out);
/* 1 added, 0 already held, -ENOMEM or -EINVAL (unknown object). */
int sym_pack__address(struct sym_pack *p, uint32_t obj, uint64_t off,
		      const struct sym_raw *raw);
/* The object for (path, build ID), or -1. */
long sym_pack__find(const struct sym_pack *p, const char *path, const uint8_t *id,
		    uint8_t id_size);
/* The raw answer of object obj at off: 1, or 0 when not held. */
int sym_pack__raw(const struct sym_pack *p, long obj, uint64_t off, struct sym_raw *out);
bool sym_pack__dwarf(const struct sym_pack *p, long obj);
void sym_pack__free(struct sym_pack *p);

/* Whether a raw answer names its address: a symbol, or a named function
 * ending DWARF's chain. */
static inline bool sym_raw__names(const struct sym_raw *r)
{
	return r->sym_name || (r->nframes > 0 && r->frames[r->nframes - 1].name);
}

/* C++ demangling (demangle.c). */
struct sym_demangler {
	void *dl;
	void *fn;
	bool failed;
	struct hashtab tab; /* mangled name (by address) -> demangled */
};

void sym_demangler__init(struct sym_demangler *d);
/* Demangled form of name (kept until sym_demangler__free), or name. */
const char *sym_demangle(struct sym_demangler *d, const char *name);
void sym_demangler__free(struct sym_demangler *d);

#endif /* STKREC_SYM_SYM_INT_H */
