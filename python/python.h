/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python/: how to read one CPython interpreter, for the recorder. Given one
 * ELF file a process maps (python3.X, libpython3.X.so), it tells whether
 * the file is CPython and of which version, where that interpreter keeps
 * its threads and frames (struct stkrec_pyproc for the BPF walker) and how
 * its objects are laid out (struct py_offsets for user space), where its
 * eval function lies, and it reads code objects from a live process.
 *
 * The version comes from the file itself: Py_Version's value (3.11+, read
 * through its .dynsym symbol from the file's data), else DT_SONAME or the
 * file name (libpython3.X, python3.X) for 3.8-3.10, which the file's
 * exports must then agree with (PyFrame_GetCode since 3.9, Py_NewRef since
 * 3.10, Py_Version since 3.11). 3.8 to 3.13 are read; any other CPython is
 * PY_EVERSION with its version, so that the caller counts it once and
 * records native frames only.
 *
 * The offsets come from, in order: 3.13's _Py_DebugOffsets (in _PyRuntime's
 * initial data in the file: cookie "xdebugpy", its version that of the
 * file; the string state bits, which it does not give, are the table's),
 * the DWARF of the file or of its separate debug file (build ID under
 * DEBUG_DIR/.build-id, or .gnu_debuglink; debuginfod when DEBUGINFOD_URLS
 * is set), else a table per minor version (CPython's headers, pinned field
 * by field against the DWARF of each pyenv build by
 * tests/test_python_offsets.c). py_interp__source() says which one. Not
 * read (PY_EVERSION): a free-threaded 3.13t, a Py_TRACE_REFS build
 * without DWARF, a 3.13 whose _Py_DebugOffsets is not as 3.13.0 lays it
 * out and that has no DWARF.
 *
 * The library never prints. Functions return 0 (or a count) or a negative
 * code: -errno, or one of the PY_E* below. A process's memory is hostile:
 * every object read is type-checked, every length capped.
 */
#ifndef STKREC_PYTHON_PYTHON_H
#define STKREC_PYTHON_PYTHON_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/stkrec.h"

#define PY_ENOTPY (-ENODATA)          /* the file is not a CPython interpreter
				       * (e.g. /bin/sh, or pyenv's bin/python3.8
				       * that links libpython3.8.so) */
#define PY_EVERSION (-EPROTONOSUPPORT) /* CPython of a version not read here
					* (struct py_version says which; 0.0:
					* could not tell), or a build none of
					* the sources describes */
#define PY_ENOTCODE (-ENOMSG)         /* the object at that address is not a
				       * code object (now) */
/* Also: -ENOEXEC (not an ELF64 little-endian file), -EBADMSG (an object
 * that is not what the layout says: a string not compact, a wrong type),
 * -E2BIG (over one of the caps below), -ERANGE (an instruction offset
 * outside its code), and process_vm_readv's -EFAULT, -ESRCH, -EPERM. */

#define PY_MINOR_MIN 8  /* 3.8 ... */
#define PY_MINOR_MAX 13 /* ... 3.13 are read */

#define PY_MAX_STR 4096         /* bytes of a name or file name, UTF-8 */
#define PY_MAX_LINETABLE (1u << 20) /* bytes of a line table */
#define PY_MAX_CODE (1u << 24)  /* bytes of a code object's bytecode */

struct py_version {
	uint8_t major, minor, micro; /* micro: 0 when the name told it */
	uint32_t hex;                /* PY_VERSION_HEX; 0 when the name told it */
};

/* Where the offsets came from (a bit each in struct py_opts.sources). */
enum py_source {
	PY_SRC_DEBUG_OFFSETS = 0, /* 3.13's _Py_DebugOffsets */
	PY_SRC_DWARF = 1,         /* the file's or its debug file's DWARF */
	PY_SRC_TABLE = 2,         /* python/table.c, per minor version */
};
#define PY_SRC_ALL 0x7
/* "_Py_DebugOffsets", "dwarf", "table" */
const char *py_source_name(enum py_source s);

struct py_opts {
	const char *debug_dir; /* separate debug files; NULL: /usr/lib/debug */
	unsigned sources;      /* 1 << enum py_source allowed; 0: PY_SRC_ALL
				* (tests take one at a time) */
};

/*
 * Where the interpreter keeps things, in bytes into the structure named
 * (STKREC_PY_NONE where the version has no such field). The first ten
 * are struct stkrec_pyproc's, same names, same meaning.
 */
struct py_offsets {
	uint16_t rt_interp, is_threads, ts_next, ts_tid, ts_frame, cf_frame;
	uint16_t fr_back, fr_code, fr_instr, fr_entry;
	uint16_t ob_type;          /* PyObject.ob_type */
	uint16_t ob_size;          /* PyVarObject.ob_size */
	uint16_t co_firstlineno, co_name;
	uint16_t co_qualname;      /* 3.11+ */
	uint16_t co_filename;
	uint16_t co_linetable;     /* co_linetable (3.10+), co_lnotab (3.8, 3.9):
				    * a bytes object */
	uint16_t co_code;          /* 3.8-3.10: the bytecode's bytes object */
	uint16_t co_code_adaptive; /* 3.11+: the bytecode, in the code object
				    * (of ob_size code units of 2 bytes) */
	uint16_t u_length, u_state;   /* PyASCIIObject.length, .state */
	uint16_t u_kind_bit;          /* state: kind (3 bits: 1, 2, 4 bytes
				       * a character) at this bit, */
	uint16_t u_compact_bit, u_ascii_bit; /* compact and ascii here */
	uint16_t u_ascii_data;   /* sizeof(PyASCIIObject): a compact ASCII
				  * string's characters */
	uint16_t u_compact_data; /* sizeof(PyCompactUnicodeObject): a compact
				  * non-ASCII string's characters */
	uint16_t b_sval;         /* PyBytesObject.ob_sval (length: ob_size) */
};

/* The fields of struct py_offsets by index (0 .. until -ENOENT), for tests
 * and messages: its name and value. */
int py_offsets__field(const struct py_offsets *o, int i, const char **name, uint16_t *val);

/* The version a path's basename names: python3.X or libpython3.X (any
 * suffix: libpython3.7m.so.1.0, python3.13t). The recorder marks a process
 * as CPython when one of its mappings has such a name. */
bool py_name_version(const char *path, struct py_version *v);

/* ---- one interpreter file ----------------------------------------------- */

struct py_interp;

/*
 * Open the ELF file at path. ver (may be NULL) is filled whenever the file
 * is CPython, also on PY_EVERSION. opts may be NULL (all defaults).
 * Returns 0, PY_ENOTPY, PY_EVERSION, -ENOEXEC, -ENOENT (no source among
 * opts->sources), -ENOMEM or the open's -errno. It takes from a few ms
 * (a file with its DWARF) to ~0.3 s (Debian's python3.11 with its 11 MB
 * debug file): the caller opens each file once.
 */
int py_interp__open(const char *path, const struct py_opts *opts, struct py_interp **out,
		    struct py_version *ver);
void py_interp__free(struct py_interp *pi);

const struct py_version *py_interp__version(const struct py_interp *pi);
enum py_source py_interp__source(const struct py_interp *pi);
const struct py_offsets *py_interp__offsets(const struct py_interp *pi);

/* Link-time addresses (ELF vaddrs) of the file's objects; add the load
 * bias for the process's. */
struct py_addrs {
	uint64_t runtime;      /* _PyRuntime */
	uint64_t code_type;    /* PyCode_Type */
	uint64_t unicode_type; /* PyUnicode_Type */
	uint64_t bytes_type;   /* PyBytes_Type */
};
const struct py_addrs *py_interp__addrs(const struct py_interp *pi);

/* The load bias of a mapping of the file (its start and file offset, as
 * /proc/PID/maps gives them): process address = vaddr + bias. -ENOENT
 * when no PT_LOAD holds that file offset. */
int py_interp__bias(const struct py_interp *pi, uint64_t map_start, uint64_t map_pgoff,
		    uint64_t *bias);

/* What the BPF walker reads, for the process where the file is loaded at
 * bias. */
void py_interp__pyproc(const struct py_interp *pi, uint64_t bias, struct stkrec_pyproc *out);

/*
 * The address ranges [start, end) of _PyEval_EvalFrameDefault (ELF
 * vaddrs): its .dynsym symbol, then _PyEval_EvalFrameDefault.cold when the
 * file's (or its debug file's) .symtab has it. Returns how many (1 or 2).
 */
#define PY_EVAL_RANGES 2
struct py_range {
	uint64_t start, end;
};
int py_interp__eval_ranges(const struct py_interp *pi, struct py_range r[PY_EVAL_RANGES]);

/*
 * struct stkrec_pyframe.lasti to a byte offset into the code object's
 * bytecode, for a code object of code_size bytes of bytecode
 * (struct py_code.code_size). What lasti points at, by version:
 *   3.8, 3.9  f_lasti, in bytes: the last instruction started (for a frame
 *             that called, its CALL_*); -1 before the first.
 *   3.10      f_lasti, in code units of 2 bytes: the same; -1 before.
 *   3.11,     prev_instr less the code object's address: the last
 *   3.12      instruction started, or for a frame that called, an inline
 *             cache entry of its CALL (which has the CALL's location);
 *             one unit before the bytecode before the first.
 *   3.13      instr_ptr less the code object's address: the instruction
 *             running (for a frame that called, its CALL); a frame not
 *             started yet points at its first instruction (offset 0).
 * *off = PY_OFFSET_NOT_STARTED for a frame that ran no instruction yet:
 * its line is co_firstlineno, as traceback gives a negative lasti.
 * Returns 0, or -ERANGE when lasti falls outside the bytecode.
 */
#define PY_OFFSET_NOT_STARTED (-1)
int py_interp__offset(const struct py_interp *pi, uint32_t lasti, uint32_t code_size, int32_t *off);

/* ---- code objects of a live process ------------------------------------ */

struct py_code {
	char *qualname;     /* co_qualname (3.11+), else co_name; UTF-8 */
	char *filename;     /* co_filename, UTF-8 */
	int32_t firstlineno;
	uint8_t *linetable; /* co_linetable (3.10+) or co_lnotab, raw: its
			     * format is the version's */
	uint32_t linetable_len;
	uint32_t code_size; /* bytes of bytecode: py_interp__offset's bound */
	uint32_t stamp;     /* as bpf/stkrec.h defines it (stkrec_py_stamp()) */
};

/*
 * Read the code object at addr in process pid, where the file is loaded at
 * bias (process_vm_readv). Refuses what is not a code object (PY_ENOTCODE:
 * its ob_type is not PyCode_Type), strings that are not compact str
 * objects (-EBADMSG) or longer than PY_MAX_STR, line tables over
 * PY_MAX_LINETABLE (-E2BIG). On success the caller owns out's buffers
 * (py_code__release()); on failure out holds none.
 */
int py_interp__read_code(const struct py_interp *pi, pid_t pid, uint64_t bias, uint64_t addr,
			 struct py_code *out);
void py_code__release(struct py_code *c);

#endif /* STKREC_PYTHON_PYTHON_H */
