// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind rows from call-frame information (record/cfi.h).
 *
 * The FDEs of .eh_frame and .debug_frame are listed with dwarf_next_cfi()
 * (their initial location decoded per the CIE's pointer encoding); libdw
 * then interprets each FDE one row at a time (dwarf_cfi_addrframe() at
 * each row's start), and each row is mapped to a stkrec rule or to NONE.
 * Ranges are kept as segments [start, end) until the end, where they are
 * sorted, overlaps dropped, gaps filled with GAP and equal rules merged.
 *
 * Mapped: CFA rsp/rbp + offset with the return address at CFA - 8 and rbp
 * unchanged or saved at CFA + 8n; the return address undefined (END);
 * glibc's __restore_rt (SIGNAL); binutils' .plt expression (PLT when its
 * threshold is 11, else spelled out as SP rows per 16-byte entry: IBT
 * .plt has 9, or 10 from older binutils). Everything else is NONE, and so
 * is the rest of an FDE libdw refuses to run (DW_CFA_def_cfa_register
 * after a CFA expression, in some hand-written assembly).
 *
 * x86-64 DWARF registers: 6 rbp, 7 rsp, 16 the return address.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/cfi.h"
#include "util/array.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
/* The .plt threshold STKREC_CFA_PLT stands for (binutils' lazy PLT). */
#define PLT_THRESHOLD 11
/* __restore_rt runs with rsp at the kernel's ucontext (the return address
 * into it popped): uc_mcontext's rbp, rsp and rip are at these offsets,
 * which the BPF unwinder reads. glibc's CFI says the same; other layouts
 * are NONE. */
#define SIGCTX_RBP 120
#define SIGCTX_RSP 160
#define SIGCTX_RIP 168
#define MAX_XSEGS 16

struct range {
	uint64_t lo, hi;
};

struct ranges {
	struct range *v;
	size_t nr, cap;
};

/* One rule over [start, end); rule.pc is unused until the rows are made. */
struct seg {
	uint64_t start, end;
	struct stkrec_cfi_row rule;
};

struct segs {
	struct seg *v;
	size_t nr, cap;
};

/* A CFI section and what its FDEs are checked against. */
struct cfi_sect {
	Elf_Data *data;
	uint64_t addr;  /* sh_addr: base of pc-relative pointers */
	bool eh;
};

static const struct stkrec_cfi_row NONE_RULE = { .kind = STKREC_CFA_NONE };
/* No FDE covers it: the BPF unwinder follows the frame pointer there. */
static const struct stkrec_cfi_row GAP_RULE = { .kind = STKREC_CFA_GAP };

static int ranges__add(struct ranges *r, uint64_t lo, uint64_t hi)
{
	return ARRAY_PUSH(r->v, r->nr, r->cap, ((struct range){ lo, hi }));
}

static int segs__add(struct segs *s, uint64_t start, uint64_t end, struct stkrec_cfi_row rule)
{
	if (start >= end)
		return 0;
	rule.pc = 0;
	return ARRAY_PUSH(s->v, s->nr, s->cap, ((struct seg){ start, end, rule }));
}

/* --- listing the FDEs ------------------------------------------------------ */

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v, bool sign)
{
	unsigned int shift = 0;
	uint64_t r = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return -1;
		b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		r |= ~0ull << shift;
	*v = r;
	return 0;
}

static int read_le(const uint8_t **p, const uint8_t *end, unsigned int n, bool sign,
		   uint64_t *v)
{
	uint64_t r = 0;
	unsigned int i;

	if ((size_t)(end - *p) < n)
		return -1;
	for (i = 0; i < n; i++)
		r |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && n < 8 && (r >> (8 * n - 1)) & 1)
		r |= ~0ull << (8 * n);
	*p += n;
	*v = r;
	return 0;
}

/* A DW_EH_PE_* encoded pointer at *p, whose own address is at: absolute
 * and pc-relative ones only (all GCC and LLVM emit on x86-64). */
static int read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t at,
			uint64_t *v)
{
	int err;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		err = read_le(p, end, 8, false, v);
		break;
	case DW_EH_PE_uleb128:
		err = read_uleb(p, end, v, false);
		break;
	case DW_EH_PE_sleb128:
		err = read_uleb(p, end, v, true);
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		err = read_le(p, end, 2, enc & 0x08, v);
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		err = read_le(p, end, 4, enc & 0x08, v);
		break;
	default:
		return -1;
	}
	if (err)
		return -1;
	switch (enc & 0xf0) {
	case DW_EH_PE_absptr:
		return 0;
	case DW_EH_PE_pcrel:
		*v += at;
		return 0;
	default:
		return -1;
	}
}

/* The FDE pointer encoding of a CIE ('R' in a 'z' augmentation). */
static int cie_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const uint8_t *d = cie->augmentation_data;
	const uint8_t *end = d + cie->augmentation_data_size;
	const char *a = cie->augmentation;
	uint64_t skip;

	*enc = DW_EH_PE_absptr;
	if (a[0] == '\0')
		return 0;
	if (a[0] != 'z')
		return -1;
	for (a++; *a; a++) {
		if (*a == 'S' || *a == 'B')
			continue;
		if (d >= end)
			return -1;
		if (*a == 'R')
			*enc = *d++;
		else if (*a == 'L')
			d++;
		else if (*a == 'P') {
			uint8_t penc = *d++;

			if (read_encoded(penc & 0x0f, &d, end, 0, &skip))
				return -1;
		} else {
			return -1;
		}
	}
	return 0;
}

static bool in_xsegs(const struct ranges *x, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < x->nr; i++)
		if (lo >= x->v[i].lo && hi <= x->v[i].hi)
			return true;
	return false;
}

/* [lo, hi) of the FDE in e, or 1 to skip it (undecodable, empty, a
 * discarded function's tombstone, outside the executable segments). */
static int fde_range(const struct cfi_sect *s, const unsigned char *ident,
		     const Dwarf_CFI_Entry *e, const struct ranges *xsegs,
		     Dwarf_Off *cie_off, uint8_t *cie_enc, struct range *r)
{
	const uint8_t *p = e->fde.start, *base = s->data->d_buf;
	Dwarf_CFI_Entry cie;
	Dwarf_Off next;
	uint64_t len;

	if (e->fde.CIE_pointer != *cie_off) {
		if (dwarf_next_cfi(ident, s->data, s->eh, e->fde.CIE_pointer, &next, &cie) ||
		    !dwarf_cfi_cie_p(&cie) || cie_encoding(&cie.cie, cie_enc))
			return 1;
		*cie_off = e->fde.CIE_pointer;
	}
	if (read_encoded(*cie_enc, &p, e->fde.end, s->addr + (uint64_t)(p - base), &r->lo) ||
	    read_encoded(*cie_enc & 0x0f, &p, e->fde.end, 0, &len))
		return 1;
	r->hi = r->lo + len;
	if (!r->lo || !len || r->hi < r->lo || !in_xsegs(xsegs, r->lo, r->hi))
		return 1;
	if (r->hi > UINT32_MAX)
		return -E2BIG;
	return 0;
}

static int fdes(const struct cfi_sect *s, const unsigned char *ident,
		const struct ranges *xsegs, struct ranges *out)
{
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	uint8_t cie_enc = 0;
	Dwarf_CFI_Entry e;
	struct range r;
	int ret;

	for (;;) {
		next = (Dwarf_Off)-1;
		ret = dwarf_next_cfi(ident, s->data, s->eh, off, &next, &e);
		if (ret > 0)
			return 0;
		/* A damaged entry ends the list unless libdw could step over it
		 * (a zero terminator ends .eh_frame too). */
		if (ret < 0) {
			if (next == (Dwarf_Off)-1 || next <= off)
				return 0;
			off = next;
			continue;
		}
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		ret = fde_range(s, ident, &e, xsegs, &cie_off, &cie_enc, &r);
		if (ret < 0)
			return ret;
		if (ret == 0 && ranges__add(out, r.lo, r.hi))
			return -ENOMEM;
	}
}

/* --- one row's rule ----------------------------------------------------- */

/* ops is "CFA + off" (DW_CFA_offset and the equivalent expression). */
static bool cfa_plus(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (!ops || n < 1 || n > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

/* The CFA as register + offset: def_cfa (libdw's DW_OP_bregx) or an
 * expression that is one DW_OP_bregN. */
static bool cfa_reg(const Dwarf_Op *ops, size_t n, unsigned int *reg, int64_t *off)
{
	if (n != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = ops[0].number;
		*off = (int64_t)ops[0].number2;
		return true;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
		return true;
	}
	return false;
}

/* binutils' .plt CFA: rsp + 8, + 8 once the entry's push ran:
 * breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl; plus. Returns N
 * (the offset in the 16-byte entry from where the push has run), or -1. */
static int plt_threshold(const Dwarf_Op *ops, size_t n)
{
	static const uint8_t pat[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
				       DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	size_t i;

	if (n != sizeof(pat) || ops[0].number != 8 || ops[1].number != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (i != 4 && ops[i].atom != pat[i])
			return -1;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
		return -1;
	return ops[4].atom - DW_OP_lit0;
}

/* A register saved at rsp + off as DW_CFA_expression: [cfa;] breg7 off. */
static bool saved_at_sp(const Dwarf_Op *ops, size_t n, uint64_t off)
{
	if (ops && n == 2 && ops[0].atom == DW_OP_call_frame_cfa) {
		ops++;
		n--;
	}
	return ops && n == 1 && ops[0].atom == DW_OP_breg7 && ops[0].number == off;
}

/* __restore_rt: a signal frame ('S') whose CFA is rsp's saved value in the
 * ucontext at rsp, with rbp and the pc saved beside it. */
static bool signal_frame(Dwarf_Frame *f, const Dwarf_Op *cfa, size_t n)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (n != 2 || cfa[0].atom != DW_OP_breg7 || cfa[0].number != SIGCTX_RSP ||
	    cfa[1].atom != DW_OP_deref)
		return false;
	if (dwarf_frame_register(f, REG_RA, mem, &ops, &nops) ||
	    !saved_at_sp(ops, nops, SIGCTX_RIP))
		return false;
	return dwarf_frame_register(f, REG_RBP, mem, &ops, &nops) == 0 &&
	       saved_at_sp(ops, nops, SIGCTX_RBP);
}

/* rbp's rule as fp_off: 0 when the caller's rbp is this frame's (same
 * value, or undefined: nothing better to offer), or -1 when it cannot
 * be followed. */
static int fp_rule(Dwarf_Frame *f, int8_t *fp_off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	*fp_off = 0;
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops))
		return -1;
	if (nops == 0)
		return 0;
	if (!cfa_plus(ops, nops, &off) || off == 0 || off % 8 || off / 8 < INT8_MIN ||
	    off / 8 > INT8_MAX)
		return -1;
	*fp_off = (int8_t)(off / 8);
	return 0;
}

/* The rule of frame f. *plt is set (to a threshold other than the one
 * STKREC_CFA_PLT stands for) when the caller must spell the .plt rule out. */
static struct stkrec_cfi_row map_frame(Dwarf_Frame *f, int ra, bool signalp, int *plt)
{
	struct stkrec_cfi_row r = NONE_RULE;
	Dwarf_Op mem[3], *ops, *cfa;
	size_t nops, ncfa;
	unsigned int reg;
	int64_t off;
	int thr;

	*plt = -1;
	if (ra != REG_RA || dwarf_frame_register(f, REG_RA, mem, &ops, &nops))
		return r;
	if (nops == 0 && ops) {
		/* undefined: the outermost frame */
		r.kind = STKREC_CFA_END;
		return r;
	}
	if (dwarf_frame_cfa(f, &cfa, &ncfa) || ncfa == 0)
		return r;
	if (signalp) {
		if (signal_frame(f, cfa, ncfa))
			r.kind = STKREC_CFA_SIGNAL;
		return r;
	}
	if (!cfa_plus(ops, nops, &off) || off != -8 || fp_rule(f, &r.fp_off))
		return r;
	thr = plt_threshold(cfa, ncfa);
	if (thr == PLT_THRESHOLD) {
		r.kind = STKREC_CFA_PLT;
	} else if (thr >= 0) {
		*plt = thr;
	} else if (cfa_reg(cfa, ncfa, &reg, &off) && off >= 0 && off <= UINT16_MAX &&
		   (reg == REG_RSP || reg == REG_RBP)) {
		r.kind = reg == REG_RSP ? STKREC_CFA_SP : STKREC_CFA_FP;
		r.cfa_off = (uint16_t)off;
	}
	if (r.kind == STKREC_CFA_NONE && *plt < 0)
		r.fp_off = 0;
	return r;
}

/* A .plt rule with another threshold than STKREC_CFA_PLT's, as what it
 * means: rsp + 8 from each 16-byte entry's start, rsp + 16 from thr on. */
static int add_plt(struct segs *s, uint64_t start, uint64_t end, int thr, int8_t fp_off)
{
	struct stkrec_cfi_row r8 = { .kind = STKREC_CFA_SP, .cfa_off = 8, .fp_off = fp_off };
	struct stkrec_cfi_row r16 = { .kind = STKREC_CFA_SP, .cfa_off = 16, .fp_off = fp_off };
	uint64_t a = start, entry, mid;

	while (a < end) {
		entry = a & ~15ull;
		mid = entry + (uint64_t)thr;
		if (a < mid && segs__add(s, a, mid < end ? mid : end, r8))
			return -ENOMEM;
		a = a > mid ? a : mid;
		if (a < end && segs__add(s, a, entry + 16 < end ? entry + 16 : end, r16))
			return -ENOMEM;
		a = entry + 16;
	}
	return 0;
}

/* The rows of the FDE [lo, hi) over [from, to), one dwarf_cfi_addrframe()
 * per row. A row libdw cannot give, or gives from another FDE, ends the
 * walk: the rest is NONE. */
static int walk_fde(Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, uint64_t from, uint64_t to,
		    struct segs *out)
{
	uint64_t pc = from;
	int err = 0;

	while (pc < to && !err) {
		struct stkrec_cfi_row r = NONE_RULE;
		Dwarf_Addr start, end = to;
		Dwarf_Frame *f = NULL;
		bool signalp = false;
		int ra, plt = -1;

		if (dwarf_cfi_addrframe(cfi, pc, &f) == 0) {
			ra = dwarf_frame_info(f, &start, &end, &signalp);
			if (start > pc || start < lo || end <= pc)
				end = to;
			else
				r = map_frame(f, ra, signalp, &plt);
			free(f);
		}
		/* an advance past the FDE's end opens no row */
		if (end > to)
			end = to;
		if (plt >= 0)
			err = add_plt(out, pc, end, plt, r.fp_off);
		else
			err = segs__add(out, pc, end, r);
		pc = end;
	}
	return err;
}

/* --- the file ------------------------------------------------------------ */

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

/* The union of sorted ranges, in place. */
static void ranges__union(struct ranges *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr; i++) {
		if (n && r->v[i].lo <= r->v[n - 1].hi) {
			if (r->v[i].hi > r->v[n - 1].hi)
				r->v[n - 1].hi = r->v[i].hi;
		} else {
			r->v[n++] = r->v[i];
		}
	}
	r->nr = n;
}

/* Walk the .debug_frame FDE [lo, hi) where no .eh_frame FDE (the sorted
 * union cover) is. */
static int walk_uncovered(Dwarf_CFI *cfi, const struct range *fde, const struct ranges *cover,
			  struct segs *out)
{
	size_t a = 0, b = cover->nr, m;
	uint64_t pc = fde->lo;
	int err = 0;

	/* first cover range ending after lo */
	while (a < b) {
		m = a + (b - a) / 2;
		if (cover->v[m].hi <= fde->lo)
			a = m + 1;
		else
			b = m;
	}
	for (; a < cover->nr && cover->v[a].lo < fde->hi && !err; a++) {
		if (cover->v[a].lo > pc)
			err = walk_fde(cfi, fde->lo, fde->hi, pc, cover->v[a].lo, out);
		if (cover->v[a].hi > pc)
			pc = cover->v[a].hi;
	}
	if (!err && pc < fde->hi)
		err = walk_fde(cfi, fde->lo, fde->hi, pc, fde->hi, out);
	return err;
}

static Elf_Scn *find_scn(Elf *elf, const char *name, struct cfi_sect *s)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		/* lld types .eh_frame SHT_X86_64_UNWIND */
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		s->data = elf_getdata(scn, NULL);
		s->addr = sh.sh_addr;
		return s->data && s->data->d_buf && s->data->d_size ? scn : NULL;
	}
	return NULL;
}

/* The executable PT_LOAD segments: FDEs outside them are not code. */
static int exec_segs(Elf *elf, struct ranges *x)
{
	GElf_Phdr ph;
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n && x->nr < MAX_XSEGS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ranges__add(x, ph.p_vaddr, ph.p_vaddr + ph.p_memsz))
			return -ENOMEM;
	}
	return 0;
}

static int check_elf(Elf *elf)
{
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	return 0;
}

/* The segments of .eh_frame, then of .debug_frame where .eh_frame has no FDE. */
static int collect(Elf *elf, const struct ranges *xsegs, struct segs *out)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct ranges eh = { 0 }, dbg = { 0 };
	struct cfi_sect s = { 0 };
	Dwarf_CFI *cfi = NULL;
	Dwarf *dw = NULL;
	size_t i;
	int err = 0;

	s.eh = true;
	if (find_scn(elf, ".eh_frame", &s)) {
		err = fdes(&s, ident, xsegs, &eh);
		if (!err && eh.nr && !(cfi = dwarf_getcfi_elf(elf)))
			eh.nr = 0;
		for (i = 0; i < eh.nr && !err; i++)
			err = walk_fde(cfi, eh.v[i].lo, eh.v[i].hi, eh.v[i].lo, eh.v[i].hi, out);
		if (cfi)
			dwarf_cfi_end(cfi);
	}
	s = (struct cfi_sect){ .eh = false };
	if (!err && find_scn(elf, ".debug_frame", &s)) {
		err = fdes(&s, ident, xsegs, &dbg);
		if (!err && dbg.nr && (dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL)) &&
		    (cfi = dwarf_getcfi(dw))) {
			qsort(eh.v, eh.nr, sizeof(*eh.v), range_cmp);
			ranges__union(&eh);
			for (i = 0; i < dbg.nr && !err; i++)
				err = walk_uncovered(cfi, &dbg.v[i], &eh, out);
		}
		if (dw)
			dwarf_end(dw);
	}
	free(eh.v);
	free(dbg.v);
	return err;
}

static int push_row(struct stkrec_cfi_row *rows, size_t *nr, uint64_t pc,
		    struct stkrec_cfi_row rule)
{
	struct stkrec_cfi_row *last = *nr ? &rows[*nr - 1] : NULL;

	if (pc > UINT32_MAX)
		return -E2BIG;
	if (last && last->kind == rule.kind && last->cfa_off == rule.cfa_off &&
	    last->fp_off == rule.fp_off)
		return 0;
	if (last && last->pc == pc) {
		*last = rule;
		last->pc = (uint32_t)pc;
		return 0;
	}
	rule.pc = (uint32_t)pc;
	rows[(*nr)++] = rule;
	return 0;
}

/* Sorted segments into rows: overlaps cut (the first one wins), gaps and
 * the end as GAP, equal neighbours merged. */
static int make_rows(struct segs *s, struct stkrec_cfi_row **rows, size_t *nr)
{
	struct stkrec_cfi_row *v;
	uint64_t prev = 0, start;
	size_t i, n = 0;
	int err = 0;

	qsort(s->v, s->nr, sizeof(*s->v), seg_cmp);
	v = malloc((2 * s->nr + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < s->nr && !err; i++) {
		start = s->v[i].start;
		if (n && start < prev)
			start = prev;
		if (start >= s->v[i].end)
			continue;
		if (n && start > prev)
			err = push_row(v, &n, prev, GAP_RULE);
		if (!err)
			err = push_row(v, &n, start, s->v[i].rule);
		prev = s->v[i].end;
	}
	if (!err)
		err = push_row(v, &n, prev, GAP_RULE);
	if (err) {
		free(v);
		return err;
	}
	*rows = v;
	*nr = n;
	return 0;
}

int cfi__load(int fd, struct stkrec_cfi_row **rows, size_t *nr)
{
	struct ranges xsegs = { 0 };
	struct segs segs = { 0 };
	Elf *elf;
	int err;

	*rows = NULL;
	*nr = 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = check_elf(elf);
	if (!err)
		err = exec_segs(elf, &xsegs);
	if (!err)
		err = collect(elf, &xsegs, &segs);
	if (!err && !segs.nr)
		err = -ENOENT;
	if (!err)
		err = make_rows(&segs, rows, nr);
	free(segs.v);
	free(xsegs.v);
	elf_end(elf);
	return err;
}

int cfi__load_path(const char *path, struct stkrec_cfi_row **rows, size_t *nr)
{
	int fd, err;

	*rows = NULL;
	*nr = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = cfi__load(fd, rows, nr);
	close(fd);
	return err;
}

const struct stkrec_cfi_row *cfi__find(const struct stkrec_cfi_row *rows, size_t nr,
				       uint32_t pc)
{
	size_t a = 0, b = nr, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (rows[m].pc <= pc)
			a = m + 1;
		else
			b = m;
	}
	return a ? &rows[a - 1] : NULL;
}
