// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind rows from call-frame information (record/cfi.h).
 *
 * The FDEs of .eh_frame and .debug_frame are listed with dwarf_next_cfi()
 * (their initial location decoded per the CIE's pointer encoding); each
 * FDE's instructions are then run once (record/cfi_insn.c) and each row
 * of its table mapped to a stkrec rule or to NONE. Ranges are kept as
 * segments [start, end) until the end, where they are sorted, overlaps
 * dropped, gaps filled with GAP and equal rules merged.
 *
 * Mapped: CFA rsp/rbp + offset with the return address at CFA - 8 and rbp
 * unchanged or saved at CFA + 8n; the return address undefined (END);
 * glibc's __restore_rt (SIGNAL); binutils' .plt expression (PLT when its
 * threshold is 11, else spelled out as SP rows per 16-byte entry: IBT
 * .plt has 9, or 10 from older binutils). Everything else is NONE, and so
 * is the rest of an FDE whose instructions cannot be run.
 *
 * The rows are those libdw's dwarf_cfi_addrframe() gave at each row's
 * start, which this file called once per row until it ran each FDE once.
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
#include "record/cfi_int.h"
#include "util/array.h"

#define MAX_XSEGS 16
/* The CIEs last used: the FDEs of a few CIEs interleave (C and C++). */
#define NR_CIES 8

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

struct cies {
	Dwarf_Off off[NR_CIES];
	struct cfi_cie cie[NR_CIES];
	size_t nr, next;
};

/* A CFI section, what its FDEs are checked against, where rows go. */
struct cfi_sect {
	Elf_Data *data;
	uint64_t addr;  /* sh_addr: base of pc-relative pointers */
	bool eh;
	const unsigned char *ident;
	const struct ranges *xsegs;
	struct ranges *eh_ranges;     /* .eh_frame: its FDEs' ranges */
	const struct ranges *cover;   /* .debug_frame: their sorted union */
	struct cies cies;
	struct cfi_stack stack;
	struct segs *out;
};

struct fde {
	uint64_t lo, hi;
	const uint8_t *insn, *end; /* augmentation and instructions */
	const struct cfi_cie *cie;
};

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

			if (cfi__read_encoded(penc & 0x0f, &d, end, 0, &skip))
				return -1;
		} else {
			return -1;
		}
	}
	return 0;
}

/* The CIE at off, its initial instructions run: 0, 1 to skip its FDEs
 * (undecodable), or -ENOMEM. */
static int find_cie(struct cfi_sect *s, Dwarf_Off off, const struct cfi_cie **out)
{
	struct cies *c = &s->cies;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	uint8_t enc;
	size_t i;

	for (i = 0; i < c->nr; i++) {
		if (c->off[i] == off) {
			*out = &c->cie[i];
			return 0;
		}
	}
	if (dwarf_next_cfi(s->ident, s->data, s->eh, off, &next, &e) || !dwarf_cfi_cie_p(&e) ||
	    cie_encoding(&e.cie, &enc))
		return 1;
	i = c->nr < NR_CIES ? c->nr++ : c->next++ % NR_CIES;
	c->off[i] = off;
	*out = &c->cie[i];
	return cfi_cie__init(&c->cie[i], &e.cie, enc, &s->stack);
}

static bool in_xsegs(const struct ranges *x, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < x->nr; i++)
		if (lo >= x->v[i].lo && hi <= x->v[i].hi)
			return true;
	return false;
}

/* The FDE in e, or 1 to skip it (undecodable, empty, a discarded
 * function's tombstone, outside the executable segments). */
static int fde_info(struct cfi_sect *s, const Dwarf_CFI_Entry *e, struct fde *f)
{
	const uint8_t *p = e->fde.start, *base = s->data->d_buf;
	uint64_t len;
	int ret;

	ret = find_cie(s, e->fde.CIE_pointer, &f->cie);
	if (ret)
		return ret;
	if (cfi__read_encoded(f->cie->fde_enc, &p, e->fde.end, s->addr + (uint64_t)(p - base),
			      &f->lo) ||
	    cfi__read_encoded(f->cie->fde_enc & 0x0f, &p, e->fde.end, 0, &len))
		return 1;
	f->hi = f->lo + len;
	f->insn = p;
	f->end = e->fde.end;
	if (!f->lo || !len || f->hi < f->lo || !in_xsegs(s->xsegs, f->lo, f->hi))
		return 1;
	if (f->hi > UINT32_MAX)
		return -E2BIG;
	return 0;
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

/* The rows of the FDE f over [from, to), its instructions run once. */
static int walk_fde(struct cfi_sect *s, const struct fde *f, uint64_t from, uint64_t to)
{
	struct stkrec_cfi_row r;
	struct cfi_walk w;
	uint64_t start, end;
	int ret, plt;

	cfi_walk__init(&w, f->cie, f->insn, f->end, s->data->d_buf, s->addr, f->lo, f->hi, from,
		       &s->stack);
	while ((ret = cfi_walk__next(&w, &start, &end, &r, &plt)) > 0) {
		/* an advance past the FDE's end opens no row */
		if (end > to)
			end = to;
		if (plt >= 0)
			ret = add_plt(s->out, start, end, plt, r.fp_off);
		else
			ret = segs__add(s->out, start, end, r);
		if (ret || end >= to)
			break;
	}
	return ret < 0 ? ret : 0;
}

/* Walk the .debug_frame FDE f where no .eh_frame FDE (the sorted union
 * s->cover) is. */
static int walk_uncovered(struct cfi_sect *s, const struct fde *f)
{
	const struct ranges *cover = s->cover;
	size_t a = 0, b = cover->nr, m;
	uint64_t pc = f->lo;
	int err = 0;

	/* first cover range ending after lo */
	while (a < b) {
		m = a + (b - a) / 2;
		if (cover->v[m].hi <= f->lo)
			a = m + 1;
		else
			b = m;
	}
	for (; a < cover->nr && cover->v[a].lo < f->hi && !err; a++) {
		if (cover->v[a].lo > pc)
			err = walk_fde(s, f, pc, cover->v[a].lo);
		if (cover->v[a].hi > pc)
			pc = cover->v[a].hi;
	}
	if (!err && pc < f->hi)
		err = walk_fde(s, f, pc, f->hi);
	return err;
}

/* Every FDE of s into rows: .eh_frame's noted in s->eh_ranges, those of
 * .debug_frame kept where .eh_frame has none. */
static int fdes(struct cfi_sect *s)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	struct fde f;
	int ret;

	for (;;) {
		next = (Dwarf_Off)-1;
		ret = dwarf_next_cfi(s->ident, s->data, s->eh, off, &next, &e);
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
		ret = fde_info(s, &e, &f);
		if (ret > 0)
			continue;
		if (!ret && s->eh)
			ret = ranges__add(s->eh_ranges, f.lo, f.hi);
		if (!ret)
			ret = s->eh ? walk_fde(s, &f, f.lo, f.hi) : walk_uncovered(s, &f);
		if (ret)
			return ret;
	}
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
	struct ranges eh = { 0 };
	struct cfi_sect s = { .eh = true, .xsegs = xsegs, .eh_ranges = &eh, .out = out };
	int err = 0;

	s.ident = (const unsigned char *)elf_getident(elf, NULL);
	if (find_scn(elf, ".eh_frame", &s))
		err = fdes(&s);
	if (!err && find_scn(elf, ".debug_frame", &s)) {
		qsort(eh.v, eh.nr, sizeof(*eh.v), range_cmp);
		ranges__union(&eh);
		s.eh = false;
		s.cover = &eh;
		s.cies.nr = 0;
		err = fdes(&s);
	}
	free(eh.v);
	free(s.stack.v);
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
