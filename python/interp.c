// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One interpreter file: its version, its offsets from the first source
 * that has them, its addresses, and what the BPF walker is given.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/python_int.h"

const char *py_source_name(enum py_source s)
{
	switch (s) {
	case PY_SRC_DEBUG_OFFSETS:
		return "_Py_DebugOffsets";
	case PY_SRC_DWARF:
		return "dwarf";
	case PY_SRC_TABLE:
		return "table";
	}
	return "?";
}

/*
 * The first source allowed that describes the file. DWARF is looked for
 * when it is wanted, or for the .symtab of a file without one (a stripped
 * file's .cold symbol is in its debug file).
 */
static int pick_offsets(struct py_interp *pi, struct py_elf *e, const char *path,
			const struct py_opts *opts)
{
	unsigned sources = opts && opts->sources ? opts->sources : PY_SRC_ALL;
	struct py_dwarf dw;
	int err = -ENOENT;

	if (sources & 1u << PY_SRC_DEBUG_OFFSETS) {
		err = py_debugoff__offsets(e, &pi->ver, &pi->off);
		pi->source = PY_SRC_DEBUG_OFFSETS;
		if (err == PY_EVERSION)
			return err;
	}
	if (((err && sources & 1u << PY_SRC_DWARF) || !e->has_symtab) &&
	    !py_dwarf__open(path, opts ? opts->debug_dir : NULL, &dw)) {
		py_elf__syms(py_dwarf__elf(&dw), e->syms);
		if (err && sources & 1u << PY_SRC_DWARF &&
		    !py_dwarf__offsets(&dw, pi->ver.minor, &pi->off)) {
			pi->source = PY_SRC_DWARF;
			err = 0;
		}
		py_dwarf__close(&dw);
	}
	if (!err || !(sources & 1u << PY_SRC_TABLE))
		return err;
	/* _Py_DebugOffsets there but not as 3.13 lays it out: nor is the
	 * rest, maybe; a Py_TRACE_REFS build has two more pointers in every
	 * object */
	if (err == -EBADMSG || e->syms[PS_PRINTREFS].found)
		return PY_EVERSION;
	pi->off = *py_table(pi->ver.minor);
	pi->source = PY_SRC_TABLE;
	return 0;
}

static void set_addrs(struct py_interp *pi, const struct py_elf *e)
{
	const struct py_sym *s = e->syms;

	pi->addrs.runtime = s[PS_RUNTIME].value;
	pi->addrs.code_type = s[PS_CODE_TYPE].value;
	pi->addrs.unicode_type = s[PS_UNICODE_TYPE].value;
	pi->addrs.bytes_type = s[PS_BYTES_TYPE].value;
	pi->eval[0] = (struct py_range){ s[PS_EVAL].value, s[PS_EVAL].value + s[PS_EVAL].size };
	pi->neval = 1;
	if (s[PS_EVAL_COLD].found && s[PS_EVAL_COLD].size) {
		pi->eval[1] = (struct py_range){ s[PS_EVAL_COLD].value,
						 s[PS_EVAL_COLD].value + s[PS_EVAL_COLD].size };
		pi->neval = 2;
	}
	memcpy(pi->loads, e->loads, sizeof(pi->loads));
	pi->nloads = e->nloads;
}

/* What read_code reads of a code object at first: up to its last field. */
static uint32_t code_header(const struct py_offsets *o)
{
	const uint16_t f[] = { o->ob_type,     o->ob_size,     o->co_firstlineno, o->co_name,
			       o->co_qualname, o->co_filename, o->co_linetable,   o->co_code };
	uint32_t end = 0;
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i] != STKREC_PY_NONE && f[i] + 8u > end)
			end = f[i] + 8;
	}
	return end;
}

/* What a file must define besides the version for its frames to be read. */
static bool readable(const struct py_elf *e)
{
	const struct py_sym *s = e->syms;

	return s[PS_RUNTIME].found && s[PS_EVAL].found && s[PS_EVAL].size &&
	       s[PS_CODE_TYPE].found && s[PS_UNICODE_TYPE].found && s[PS_BYTES_TYPE].found;
}

/* Offsets that code.c can use: each object's fields inside what it reads
 * of the object at first. */
static bool layout_sane(const struct py_offsets *o, uint32_t code_hdr)
{
	return code_hdr <= PY_CODE_HDR_MAX && o->ob_type + 8 <= o->u_ascii_data &&
	       o->u_length + 8 <= o->u_ascii_data && o->u_state + 4 <= o->u_ascii_data &&
	       o->u_ascii_data <= o->u_compact_data && o->u_compact_data <= PY_CODE_HDR_MAX &&
	       o->ob_type + 8 <= o->b_sval && o->ob_size + 8 <= o->b_sval &&
	       o->b_sval <= PY_CODE_HDR_MAX && o->u_kind_bit <= 29 && o->u_compact_bit < 32 &&
	       o->u_ascii_bit < 32;
}

static int open_elf(struct py_interp *pi, const char *path, const struct py_opts *opts)
{
	struct py_elf e;
	int err;

	err = py_elf__open(path, &e);
	if (err)
		return err;
	err = py_elf__version(&e, path, &pi->ver);
	if (!err && !readable(&e))
		err = PY_EVERSION;
	if (!err)
		err = pick_offsets(pi, &e, path, opts);
	if (!err) {
		pi->shape = py_shape(pi->ver.minor);
		pi->code_hdr = code_header(&pi->off);
		set_addrs(pi, &e);
		if (!layout_sane(&pi->off, pi->code_hdr))
			err = PY_EVERSION; /* DWARF of a build unlike any */
	}
	py_elf__close(&e);
	return err;
}

int py_interp__open(const char *path, const struct py_opts *opts, struct py_interp **out,
		    struct py_version *ver)
{
	struct py_interp *pi = calloc(1, sizeof(*pi));
	int err;

	*out = NULL;
	if (!pi)
		return -ENOMEM;
	err = open_elf(pi, path, opts);
	if (ver)
		*ver = pi->ver;
	if (err) {
		free(pi);
		return err;
	}
	*out = pi;
	return 0;
}

void py_interp__free(struct py_interp *pi)
{
	free(pi);
}

const struct py_version *py_interp__version(const struct py_interp *pi)
{
	return &pi->ver;
}

enum py_source py_interp__source(const struct py_interp *pi)
{
	return pi->source;
}

const struct py_offsets *py_interp__offsets(const struct py_interp *pi)
{
	return &pi->off;
}

const struct py_addrs *py_interp__addrs(const struct py_interp *pi)
{
	return &pi->addrs;
}

int py_interp__bias(const struct py_interp *pi, uint64_t map_start, uint64_t map_pgoff,
		    uint64_t *bias)
{
	uint64_t page = sysconf(_SC_PAGESIZE);
	const GElf_Phdr *hit = NULL;
	int i;

	/* a segment mapped from its first page, else one holding the offset
	 * (a segment split by mprotect, RELRO) */
	for (i = 0; i < pi->nloads; i++) {
		const GElf_Phdr *ph = &pi->loads[i];
		uint64_t first = ph->p_offset & ~(page - 1);

		if (map_pgoff == first) {
			hit = ph;
			break;
		}
		if (!hit && map_pgoff > first && map_pgoff < ph->p_offset + ph->p_filesz)
			hit = ph;
	}
	if (!hit)
		return -ENOENT;
	*bias = map_start - map_pgoff + hit->p_offset - hit->p_vaddr;
	return 0;
}

void py_interp__pyproc(const struct py_interp *pi, uint64_t bias, struct stkrec_pyproc *out)
{
	const struct py_offsets *o = &pi->off;

	memset(out, 0, sizeof(*out));
	out->runtime = pi->addrs.runtime + bias;
	out->rt_interp = o->rt_interp;
	out->is_threads = o->is_threads;
	out->ts_next = o->ts_next;
	out->ts_tid = o->ts_tid;
	out->ts_frame = o->ts_frame;
	out->cf_frame = o->cf_frame;
	out->fr_back = o->fr_back;
	out->fr_code = o->fr_code;
	out->fr_instr = o->fr_instr;
	out->fr_entry = o->fr_entry;
	out->co_firstlineno = o->co_firstlineno;
	out->co_name = o->co_name;
	out->tid_kind = pi->shape->tid_kind;
	out->entry_kind = pi->shape->entry_kind;
	out->instr_kind = pi->shape->instr_kind;
}

int py_interp__eval_ranges(const struct py_interp *pi, struct py_range r[PY_EVAL_RANGES])
{
	memcpy(r, pi->eval, sizeof(pi->eval));
	return pi->neval;
}

int py_interp__offset(const struct py_interp *pi, uint32_t lasti, uint32_t code_size, int32_t *off)
{
	int64_t o, before; /* before: where a frame not started points */

	if (pi->shape->instr_kind == STKREC_PY_INSTR_INT) {
		o = (int64_t)(int32_t)lasti * pi->shape->lasti_scale;
		before = -(int64_t)pi->shape->lasti_scale;
	} else {
		o = (int64_t)lasti - pi->off.co_code_adaptive;
		before = -2;
	}
	if (o == before) {
		*off = PY_OFFSET_NOT_STARTED;
		return 0;
	}
	/* instructions are 2-byte code units since 3.6 */
	if (o < 0 || o >= code_size || o % 2)
		return -ERANGE;
	*off = o;
	return 0;
}
