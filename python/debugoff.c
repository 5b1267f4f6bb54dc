// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * 3.13's _Py_DebugOffsets: the interpreter's own offsets for debuggers, the
 * first member of _PyRuntime, so that the file's initial data holds them.
 */
#include <string.h>

#include "python/python_int.h"

/*
 * struct _Py_DebugOffsets of 3.13 (Include/internal/pycore_runtime.h):
 * byte offsets of the uint64_t members read here. Each group starts with
 * its structure's size, which bounds the offsets in it.
 */
enum {
	DO_VERSION = 8,        /* PY_VERSION_HEX */
	DO_FREE_THREADED = 16,
	DO_RUNTIME = 24,       /* runtime_state: size, finalizing, */
	DO_RT_INTERP = 40,     /*   interpreters_head */
	DO_INTERP = 48,        /* interpreter_state: size, id, next, */
	DO_IS_THREADS = 72,    /*   threads_head, ... */
	DO_THREAD = 152,       /* thread_state: size, prev, */
	DO_TS_NEXT = 168,      /*   next, interp, */
	DO_TS_FRAME = 184,     /*   current_frame, thread_id, */
	DO_TS_TID = 200,       /*   native_thread_id, ... */
	DO_FRAME = 224,        /* interpreter_frame: size, */
	DO_FR_BACK = 232,      /*   previous, */
	DO_FR_CODE = 240,      /*   executable, */
	DO_FR_INSTR = 248,     /*   instr_ptr, localsplus, */
	DO_FR_ENTRY = 264,     /*   owner */
	DO_CODE = 272,         /* code_object: size, */
	DO_CO_FILENAME = 280,  /*   filename, */
	DO_CO_NAME = 288,      /*   name, */
	DO_CO_QUALNAME = 296,  /*   qualname, */
	DO_CO_LINETABLE = 304, /*   linetable, */
	DO_CO_FIRSTLINE = 312, /*   firstlineno, argcount, localsplusnames, */
	DO_CO_ADAPTIVE = 344,  /*   localspluskinds, co_code_adaptive */
	DO_OBJECT = 352,       /* pyobject: size, */
	DO_OB_TYPE = 360,      /*   ob_type; type, tuple, list, dict, float, long */
	DO_BYTES = 512,        /* bytes_object: size, */
	DO_OB_SIZE = 520,      /*   ob_size, */
	DO_B_SVAL = 528,       /*   ob_sval */
	DO_UNICODE = 536,      /* unicode_object: size, */
	DO_U_STATE = 544,      /*   state, */
	DO_U_LENGTH = 552,     /*   length, */
	DO_U_ASCII = 560,      /*   asciiobject_size; then gc */
	DO_SIZE = 584,
};

/* sizes no CPython structure comes near */
#define MAX_STRUCT (1u << 24)

#define F(x) offsetof(struct py_offsets, x)

static const struct {
	uint16_t field; /* of struct py_offsets */
	uint16_t at;    /* its value in _Py_DebugOffsets */
	uint16_t group; /* the size that bounds it */
} map[] = {
	{ F(rt_interp), DO_RT_INTERP, DO_RUNTIME },
	{ F(is_threads), DO_IS_THREADS, DO_INTERP },
	{ F(ts_next), DO_TS_NEXT, DO_THREAD },
	{ F(ts_tid), DO_TS_TID, DO_THREAD },
	{ F(ts_frame), DO_TS_FRAME, DO_THREAD },
	{ F(fr_back), DO_FR_BACK, DO_FRAME },
	{ F(fr_code), DO_FR_CODE, DO_FRAME },
	{ F(fr_instr), DO_FR_INSTR, DO_FRAME },
	{ F(fr_entry), DO_FR_ENTRY, DO_FRAME },
	{ F(co_filename), DO_CO_FILENAME, DO_CODE },
	{ F(co_name), DO_CO_NAME, DO_CODE },
	{ F(co_qualname), DO_CO_QUALNAME, DO_CODE },
	{ F(co_linetable), DO_CO_LINETABLE, DO_CODE },
	{ F(co_firstlineno), DO_CO_FIRSTLINE, DO_CODE },
	{ F(co_code_adaptive), DO_CO_ADAPTIVE, DO_CODE },
	{ F(ob_type), DO_OB_TYPE, DO_OBJECT },
	{ F(ob_size), DO_OB_SIZE, DO_BYTES },
	{ F(b_sval), DO_B_SVAL, DO_BYTES },
	{ F(u_state), DO_U_STATE, DO_UNICODE },
	{ F(u_length), DO_U_LENGTH, DO_UNICODE },
	{ F(u_ascii_data), DO_U_ASCII, DO_UNICODE },
};

static uint64_t u64_at(const uint8_t *b, int at)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | b[at + i];
	return v;
}

int py_debugoff__offsets(const struct py_elf *e, const struct py_version *v, struct py_offsets *o)
{
	const struct py_offsets *table = py_table(v->minor);
	uint8_t b[DO_SIZE];
	size_t i;

	if (v->minor != 13 || !e->syms[PS_RUNTIME].found ||
	    py_elf__read(e, e->syms[PS_RUNTIME].value, b, sizeof(b)) || memcmp(b, "xdebugpy", 8))
		return -ENOENT;
	if (u64_at(b, DO_VERSION) != v->hex)
		return -EBADMSG;
	/* its objects have another header: the table's string bits and the
	 * walker's reads were never tried on one */
	if (u64_at(b, DO_FREE_THREADED))
		return PY_EVERSION;
	/* what it does not give: the state bits, the compact string header
	 * beyond PyASCIIObject's (utf8_length, utf8) */
	*o = *table;
	o->cf_frame = STKREC_PY_NONE;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		uint64_t val = u64_at(b, map[i].at), size = u64_at(b, map[i].group);

		if (val >= size || val >= STKREC_PY_NONE || size > MAX_STRUCT)
			return -EBADMSG;
		*py_field(o, map[i].field) = val;
	}
	o->u_compact_data = o->u_ascii_data + (table->u_compact_data - table->u_ascii_data);
	return 0;
}
