// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What each minor version of CPython looks like: the offsets table (the
 * source when neither _Py_DebugOffsets nor DWARF is there), the members
 * DWARF names them by, and how frames, threads and instruction pointers
 * are read.
 *
 * The facts are those of CPython's headers for a default (release, GIL,
 * no Py_TRACE_REFS) x86-64/arm64 build: Include/cpython/{pystate,code,
 * frameobject,unicodeobject,bytesobject}.h, Include/object.h and
 * Include/internal/pycore_{runtime,interp,frame}.h of each version. They
 * are pinned by tests/test_python_offsets.c, which compares every field
 * with the DWARF of pyenv's 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and
 * 3.13.0; tests/test_python_walk.c walks Debian 12's 3.11.2 with them.
 */
#include <string.h>

#include "python/python_int.h"

#define NONE STKREC_PY_NONE

/* PyObject, PyASCIIObject, PyBytesObject: as they are since 3.8 but for
 * the compact string headers, which lost wstr (and wstr_length) in 3.12. */
#define OBJECTS(ascii, compact)                                                              \
	.ob_type = 8, .ob_size = 16, .u_length = 16, .u_state = 32, .u_kind_bit = 2,        \
	.u_compact_bit = 5, .u_ascii_bit = 6, .u_ascii_data = ascii,                        \
	.u_compact_data = compact, .b_sval = 32

/* 3.8 to 3.10: PyFrameObject, one eval call each; f_lasti. */
#define FRAMES_38                                                                            \
	.rt_interp = 32, .is_threads = 8, .ts_next = 8, .ts_tid = 176, .ts_frame = 24,      \
	.cf_frame = NONE, .fr_back = 24, .fr_code = 32, .fr_entry = NONE,                   \
	.co_firstlineno = 40, .co_name = 112, .co_qualname = NONE, .co_filename = 104,      \
	.co_code = 48, .co_code_adaptive = NONE, .co_linetable = 120, OBJECTS(48, 72)

/* 3.11+: the code object's names, its bytecode inside it. */
#define CODE_311                                                                             \
	.co_name = 120, .co_qualname = 128, .co_filename = 112, .co_linetable = 136,        \
	.co_code = NONE

/* 3.12+: _PyInterpreterFrame starts with its code object. */
#define FRAME_312 .fr_back = 8, .fr_code = 0, .fr_instr = 56, .fr_entry = 70

static const struct py_offsets tables[PY_MINOR_MAX - PY_MINOR_MIN + 1] = {
	[8 - PY_MINOR_MIN] = { FRAMES_38, .fr_instr = 104 },
	[9 - PY_MINOR_MIN] = { FRAMES_38, .fr_instr = 104 },
	[10 - PY_MINOR_MIN] = { FRAMES_38, .fr_instr = 96 },
	[11 - PY_MINOR_MIN] = {
		.rt_interp = 40, .is_threads = 16, .ts_next = 8, .ts_tid = 160,
		.ts_frame = 56, .cf_frame = 8, .fr_back = 48, .fr_code = 32,
		.fr_instr = 56, .fr_entry = 68, .co_firstlineno = 72,
		.co_code_adaptive = 184, CODE_311, OBJECTS(48, 72),
	},
	[12 - PY_MINOR_MIN] = {
		.rt_interp = 40, .is_threads = 72, .ts_next = 8, .ts_tid = 144,
		.ts_frame = 56, .cf_frame = 0, FRAME_312, .co_firstlineno = 68,
		.co_code_adaptive = 192, CODE_311, OBJECTS(40, 56),
	},
	[13 - PY_MINOR_MIN] = {
		.rt_interp = 632, .is_threads = 7344, .ts_next = 8, .ts_tid = 160,
		.ts_frame = 72, .cf_frame = NONE, FRAME_312, .co_firstlineno = 68,
		.co_code_adaptive = 200, CODE_311, OBJECTS(40, 56),
	},
};

static const struct py_shape shapes[PY_MINOR_MAX - PY_MINOR_MIN + 1] = {
	/* PyThreadState.thread_id (pthread_self()) until 3.11 added
	 * native_thread_id; f_lasti in bytes until 3.10 counted code units */
#define S(tid, entry, instr, scale)                                                            \
	{ STKREC_PY_TID_##tid, STKREC_PY_ENTRY_##entry, STKREC_PY_INSTR_##instr, scale }
	[8 - PY_MINOR_MIN] = S(PTHREAD, EACH, INT, 1),
	[9 - PY_MINOR_MIN] = S(PTHREAD, EACH, INT, 1),
	[10 - PY_MINOR_MIN] = S(PTHREAD, EACH, INT, 2),
	[11 - PY_MINOR_MIN] = S(NATIVE, FLAG, PTR, 0),
	[12 - PY_MINOR_MIN] = S(NATIVE, SHIM, PTR, 0),
	[13 - PY_MINOR_MIN] = S(NATIVE, SHIM, PTR, 0),
#undef S
};

static bool read_here(int minor)
{
	return minor >= PY_MINOR_MIN && minor <= PY_MINOR_MAX;
}

const struct py_offsets *py_table(int minor)
{
	return read_here(minor) ? &tables[minor - PY_MINOR_MIN] : NULL;
}

const struct py_shape *py_shape(int minor)
{
	return read_here(minor) ? &shapes[minor - PY_MINOR_MIN] : NULL;
}

#define F(x) offsetof(struct py_offsets, x)
#define ALL 8, 13

const struct py_dwfield py_dwfields[] = {
	{ F(rt_interp), ALL, PY_DW_OFFSET, "_PyRuntimeState", "interpreters.head" },
	{ F(is_threads), 8, 10, PY_DW_OFFSET, "PyInterpreterState", "tstate_head" },
	{ F(is_threads), 11, 13, PY_DW_OFFSET, "PyInterpreterState", "threads.head" },
	{ F(ts_next), ALL, PY_DW_OFFSET, "PyThreadState", "next" },
	{ F(ts_tid), 8, 10, PY_DW_OFFSET, "PyThreadState", "thread_id" },
	{ F(ts_tid), 11, 13, PY_DW_OFFSET, "PyThreadState", "native_thread_id" },
	{ F(ts_frame), 8, 10, PY_DW_OFFSET, "PyThreadState", "frame" },
	{ F(ts_frame), 11, 12, PY_DW_OFFSET, "PyThreadState", "cframe" },
	{ F(ts_frame), 13, 13, PY_DW_OFFSET, "PyThreadState", "current_frame" },
	{ F(cf_frame), 11, 12, PY_DW_OFFSET, "_PyCFrame", "current_frame" },
	{ F(fr_back), 8, 10, PY_DW_OFFSET, "PyFrameObject", "f_back" },
	{ F(fr_back), 11, 13, PY_DW_OFFSET, "_PyInterpreterFrame", "previous" },
	{ F(fr_code), 8, 10, PY_DW_OFFSET, "PyFrameObject", "f_code" },
	{ F(fr_code), 11, 12, PY_DW_OFFSET, "_PyInterpreterFrame", "f_code" },
	{ F(fr_code), 13, 13, PY_DW_OFFSET, "_PyInterpreterFrame", "f_executable" },
	{ F(fr_instr), 8, 10, PY_DW_OFFSET, "PyFrameObject", "f_lasti" },
	{ F(fr_instr), 11, 12, PY_DW_OFFSET, "_PyInterpreterFrame", "prev_instr" },
	{ F(fr_instr), 13, 13, PY_DW_OFFSET, "_PyInterpreterFrame", "instr_ptr" },
	{ F(fr_entry), 11, 11, PY_DW_OFFSET, "_PyInterpreterFrame", "is_entry" },
	{ F(fr_entry), 12, 13, PY_DW_OFFSET, "_PyInterpreterFrame", "owner" },
	{ F(ob_type), ALL, PY_DW_OFFSET, "PyObject", "ob_type" },
	{ F(ob_size), ALL, PY_DW_OFFSET, "PyVarObject", "ob_size" },
	{ F(co_firstlineno), ALL, PY_DW_OFFSET, "PyCodeObject", "co_firstlineno" },
	{ F(co_name), ALL, PY_DW_OFFSET, "PyCodeObject", "co_name" },
	{ F(co_qualname), 11, 13, PY_DW_OFFSET, "PyCodeObject", "co_qualname" },
	{ F(co_filename), ALL, PY_DW_OFFSET, "PyCodeObject", "co_filename" },
	{ F(co_linetable), 8, 9, PY_DW_OFFSET, "PyCodeObject", "co_lnotab" },
	{ F(co_linetable), 10, 13, PY_DW_OFFSET, "PyCodeObject", "co_linetable" },
	{ F(co_code), 8, 10, PY_DW_OFFSET, "PyCodeObject", "co_code" },
	{ F(co_code_adaptive), 11, 13, PY_DW_OFFSET, "PyCodeObject", "co_code_adaptive" },
	{ F(u_length), ALL, PY_DW_OFFSET, "PyASCIIObject", "length" },
	{ F(u_state), ALL, PY_DW_OFFSET, "PyASCIIObject", "state" },
	{ F(u_kind_bit), ALL, PY_DW_BIT, "PyASCIIObject", "state.kind" },
	{ F(u_compact_bit), ALL, PY_DW_BIT, "PyASCIIObject", "state.compact" },
	{ F(u_ascii_bit), ALL, PY_DW_BIT, "PyASCIIObject", "state.ascii" },
	{ F(u_ascii_data), ALL, PY_DW_SIZE, "PyASCIIObject", NULL },
	{ F(u_compact_data), ALL, PY_DW_SIZE, "PyCompactUnicodeObject", NULL },
	{ F(b_sval), ALL, PY_DW_OFFSET, "PyBytesObject", "ob_sval" },
};
const size_t py_ndwfields = sizeof(py_dwfields) / sizeof(py_dwfields[0]);

static const struct {
	const char *name;
	uint16_t field;
} fields[] = {
#define N(x) { #x, F(x) }
	N(rt_interp), N(is_threads), N(ts_next), N(ts_tid), N(ts_frame), N(cf_frame),
	N(fr_back), N(fr_code), N(fr_instr), N(fr_entry), N(ob_type), N(ob_size),
	N(co_firstlineno), N(co_name), N(co_qualname), N(co_filename), N(co_linetable),
	N(co_code), N(co_code_adaptive), N(u_length), N(u_state), N(u_kind_bit),
	N(u_compact_bit), N(u_ascii_bit), N(u_ascii_data), N(u_compact_data), N(b_sval),
#undef N
};
_Static_assert(sizeof(fields) / sizeof(fields[0]) * sizeof(uint16_t) == sizeof(struct py_offsets),
	       "every field of struct py_offsets named");

int py_offsets__field(const struct py_offsets *o, int i, const char **name, uint16_t *val)
{
	if (i < 0 || (size_t)i >= sizeof(fields) / sizeof(fields[0]))
		return -ENOENT;
	*name = fields[i].name;
	memcpy(val, (const char *)o + fields[i].field, sizeof(*val));
	return 0;
}
