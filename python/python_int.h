/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to python/. The public header is python/python.h; only the files
 * of python/ include this one.
 */
#ifndef STKREC_PYTHON_PYTHON_INT_H
#define STKREC_PYTHON_PYTHON_INT_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <stddef.h>

#include "python/python.h"

/* The symbols looked up in the file (and its debug file's .symtab). */
enum py_symid {
	PS_RUNTIME,      /* _PyRuntime */
	PS_VERSION,      /* Py_Version (3.11+) */
	PS_EVAL,         /* _PyEval_EvalFrameDefault */
	PS_EVAL_COLD,    /* _PyEval_EvalFrameDefault.cold (.symtab) */
	PS_CODE_TYPE,    /* PyCode_Type */
	PS_UNICODE_TYPE, /* PyUnicode_Type */
	PS_BYTES_TYPE,   /* PyBytes_Type */
	PS_INITIALIZE,   /* Py_Initialize: the file is the interpreter */
	PS_FRAME_GETCODE, /* PyFrame_GetCode: 3.9+ */
	PS_NEWREF,       /* Py_NewRef: 3.10+ */
	PS_PRINTREFS,    /* _Py_PrintReferences: a Py_TRACE_REFS build, whose
			  * objects have two more pointers than the table's */
	PS__COUNT
};

struct py_sym {
	uint64_t value, size;
	bool found;
};

#define PY_MAX_LOADS 16

/* One opened ELF file. */
struct py_elf {
	int fd;
	Elf *elf;
	struct py_sym syms[PS__COUNT];
	GElf_Phdr loads[PY_MAX_LOADS]; /* its PT_LOAD headers */
	int nloads;
	bool has_symtab;
};

int py_elf__open(const char *path, struct py_elf *e);
void py_elf__close(struct py_elf *e);
/* Look the symbols up in elf's .dynsym and .symtab (defined ones only,
 * the first found wins); elf may be another file (a debug file). Whether
 * it has a .symtab. */
bool py_elf__syms(Elf *elf, struct py_sym syms[PS__COUNT]);
/* len bytes of the file's initial data at vaddr; -ENOENT when the file
 * holds no such bytes (.bss, out of every PT_LOAD). */
int py_elf__read(const struct py_elf *e, uint64_t vaddr, void *buf, size_t len);
/* The file's CPython version, from Py_Version or its name (python.h). */
int py_elf__version(const struct py_elf *e, const char *path, struct py_version *v);

/* What differs by minor version beside offsets (table.c). */
struct py_shape {
	uint8_t tid_kind;    /* enum stkrec_py_tid */
	uint8_t entry_kind;  /* enum stkrec_py_entry */
	uint8_t instr_kind;  /* enum stkrec_py_instr */
	uint8_t lasti_scale; /* STKREC_PY_INSTR_INT: bytes per f_lasti unit */
};
const struct py_shape *py_shape(int minor);
/* The table's offsets for 3.minor (PY_MINOR_MIN .. PY_MINOR_MAX). */
const struct py_offsets *py_table(int minor);

/* One member of struct py_offsets as the DWARF of 3.from .. 3.to names it:
 * a member path in a type, the type's size, or a bit-field's bit offset
 * in the member that holds it. */
enum py_dw_how { PY_DW_OFFSET, PY_DW_SIZE, PY_DW_BIT };
struct py_dwfield {
	uint16_t field; /* offsetof(struct py_offsets, ...) */
	uint8_t from, to;
	uint8_t how;    /* enum py_dw_how */
	const char *type;
	const char *path;
};
extern const struct py_dwfield py_dwfields[];
extern const size_t py_ndwfields;

static inline uint16_t *py_field(struct py_offsets *o, uint16_t field)
{
	return (uint16_t *)((char *)o + field);
}

/* The DWARF of the file (path) or of its separate debug file. */
struct py_dwarf {
	Dwfl_Callbacks cb;
	Dwfl *dwfl;
	Dwarf *dw;
	char dirs[PATH_MAX + 16];
	char *dirsp;
};
/* -ENOENT: no DWARF found. */
int py_dwarf__open(const char *path, const char *debug_dir, struct py_dwarf *d);
void py_dwarf__close(struct py_dwarf *d);
/* The ELF file that holds the DWARF (its .symtab too). */
Elf *py_dwarf__elf(const struct py_dwarf *d);
/* Fill o; -ENOENT when a field is missing. */
int py_dwarf__offsets(const struct py_dwarf *d, int minor, struct py_offsets *o);
/* Fill o from 3.13's _Py_DebugOffsets in the file's _PyRuntime (fields it
 * does not give are the table's). -ENOENT without it, -EBADMSG when it is
 * not sane, PY_EVERSION for a free-threaded build. */
int py_debugoff__offsets(const struct py_elf *e, const struct py_version *v, struct py_offsets *o);

/* One interpreter file, as opened. */
struct py_interp {
	struct py_version ver;
	enum py_source source;
	struct py_offsets off;
	const struct py_shape *shape;
	struct py_addrs addrs;
	struct py_range eval[PY_EVAL_RANGES];
	int neval;
	GElf_Phdr loads[PY_MAX_LOADS];
	int nloads;
	uint32_t code_hdr; /* bytes of a code object read_code reads first */
#define PY_CODE_HDR_MAX 512
};

#endif /* STKREC_PYTHON_PYTHON_INT_H */
