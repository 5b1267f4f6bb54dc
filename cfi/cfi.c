// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind rows from call-frame information (cfi/cfi.h).
 *
 * The FDEs of .eh_frame and .debug_frame are listed with dwarf_next_cfi()
 * (their initial location decoded per the CIE's pointer encoding), sorted
 * by address, and each one's instructions run once (cfi/cfi_insn.c),
 * each row of its table mapped to a stkrec rule or to NONE, and appended:
 * gaps filled with GAP, equal rules merged, NONE where FDEs overlap.
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

#include "cfi/cfi.h"
#include "cfi/cfi_int.h"
#include "util/array.h"

#define MAX_XSEGS 16
/* The CIEs last looked up: the FDEs of a few CIEs interleave (C, C++). */
#define NR_LRU 8

struct range {
	uint64_t lo, hi;
};

struct ranges {
	struct range *v;
	size_t nr, cap;
};

/* An FDE over [lo, hi), or the piece [from, to) of a .debug_frame FDE that
 * no .eh_frame FDE covers. Addresses fit in 32 bits (fde_info()). */
struct item {
	uint32_t from, to, lo, hi;
	uint32_t cie;              /* in cfi.cies */
	const uint8_t *insn, *end; /* augmentation and instructions */
};

/* One file's CFI on its way to rows. */
struct cfi {
	const unsigned char *ident;
	struct ranges xsegs;
	/* the section being listed */
	Elf_Data *data;
	uint64_t addr;         /* sh_addr: base of pc-relative pointers */
	bool eh;
	/* every CIE used, and the offsets of the last looked up */
	struct cfi_cie *cies;
	size_t nr_cies, cap_cies;
	Dwarf_Off lru_off[NR_LRU];
	uint32_t lru_cie[NR_LRU];
	size_t nr_lru, next_lru;
	struct ranges cover;   /* where .eh_frame has FDEs: .debug_frame's are cut */
	struct item *items;
	size_t nr_items, cap_items;
	struct cfi_stack stack;
	struct stkrec_cfi_row *rows;
	size_t nr_rows, cap_rows;
	uint32_t prev;         /* the end of the last row */
};

static const struct stkrec_cfi_row NONE_RULE = { .kind = STKREC_CFA_NONE };
/* No FDE covers it: the BPF unwinder follows the frame pointer there. */
static const struct stkrec_cfi_row GAP_RULE = { .kind = STKREC_CFA_GAP };

static int ranges__add(struct ranges *r, uint64_t lo, uint64_t hi)
{
	return ARRAY_PUSH(r->v, r->nr, r->cap, ((struct range){ lo, hi }));
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
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

/* The CIE at off, its initial instructions run, as *idx: 0, 1 to skip its
 * FDEs (undecodable), or -ENOMEM. */
static int find_cie(struct cfi *c, Dwarf_Off off, uint32_t *idx)
{
	Dwarf_CFI_Entry e;
	struct cfi_cie *cie;
	Dwarf_Off next;
	uint8_t enc;
	size_t i;
	int err;

	for (i = 0; i < c->nr_lru; i++) {
		if (c->lru_off[i] == off) {
			*idx = c->lru_cie[i];
			return 0;
		}
	}
	if (dwarf_next_cfi(c->ident, c->data, c->eh, off, &next, &e) || !dwarf_cfi_cie_p(&e) ||
	    cie_encoding(&e.cie, &enc))
		return 1;
	if (c->nr_cies >= UINT32_MAX || ARRAY_RESERVE(c->cies, c->cap_cies, c->nr_cies + 1))
		return -ENOMEM;
	cie = &c->cies[c->nr_cies];
	err = cfi_cie__init(cie, &e.cie, enc, &c->stack);
	if (err)
		return err;
	cie->sect = c->data->d_buf;
	cie->sect_addr = c->addr;
	*idx = (uint32_t)c->nr_cies++;
	i = c->nr_lru < NR_LRU ? c->nr_lru++ : c->next_lru++ % NR_LRU;
	c->lru_off[i] = off;
	c->lru_cie[i] = *idx;
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

/* The FDE in e, or 1 to skip it (undecodable, empty, a discarded
 * function's tombstone, outside the executable segments). */
static int fde_info(struct cfi *c, const Dwarf_CFI_Entry *e, struct item *f)
{
	const uint8_t *p = e->fde.start, *base = c->data->d_buf;
	uint64_t lo, len;
	int ret;

	ret = find_cie(c, e->fde.CIE_pointer, &f->cie);
	if (ret)
		return ret;
	if (cfi__read_encoded(c->cies[f->cie].fde_enc, &p, e->fde.end,
			      c->addr + (uint64_t)(p - base), &lo) ||
	    cfi__read_encoded(c->cies[f->cie].fde_enc & 0x0f, &p, e->fde.end, 0, &len))
		return 1;
	if (!lo || !len || lo + len < lo || !in_xsegs(&c->xsegs, lo, lo + len))
		return 1;
	if (lo + len > UINT32_MAX)
		return -E2BIG;
	f->from = f->lo = (uint32_t)lo;
	f->to = f->hi = (uint32_t)(lo + len);
	f->insn = p;
	f->end = e->fde.end;
	return 0;
}

static int add_item(struct cfi *c, const struct item *f, uint64_t from, uint64_t to)
{
	struct item it = *f;

	if (c->nr_items >= UINT32_MAX)
		return -ENOMEM;
	it.from = (uint32_t)from;
	it.to = (uint32_t)to;
	return ARRAY_PUSH(c->items, c->nr_items, c->cap_items, it);
}

/* The pieces of the .debug_frame FDE f where no .eh_frame FDE (the sorted
 * union c->cover) is. */
static int add_uncovered(struct cfi *c, const struct item *f)
{
	const struct ranges *cover = &c->cover;
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
			err = add_item(c, f, pc, cover->v[a].lo);
		if (cover->v[a].hi > pc)
			pc = cover->v[a].hi;
	}
	if (!err && pc < f->hi)
		err = add_item(c, f, pc, f->hi);
	return err;
}

/* Every FDE of the section: .eh_frame's whole (and in c->cover when
 * cover), .debug_frame's where .eh_frame has none. */
static int fdes(struct cfi *c, bool cover)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	struct item f;
	int ret;

	for (;;) {
		next = (Dwarf_Off)-1;
		ret = dwarf_next_cfi(c->ident, c->data, c->eh, off, &next, &e);
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
		ret = fde_info(c, &e, &f);
		if (ret > 0)
			continue;
		if (!ret && cover)
			ret = ranges__add(&c->cover, f.lo, f.hi);
		if (!ret)
			ret = c->eh ? add_item(c, &f, f.lo, f.hi) : add_uncovered(c, &f);
		if (ret)
			return ret;
	}
}

/* --- the rows ------------------------------------------------------------ */

static int push_row(struct cfi *c, uint32_t pc, struct stkrec_cfi_row rule)
{
	struct stkrec_cfi_row *last = c->nr_rows ? &c->rows[c->nr_rows - 1] : NULL;

	if (last && last->kind == rule.kind && last->cfa_off == rule.cfa_off &&
	    last->fp_off == rule.fp_off)
		return 0;
	if (last && last->pc == pc) {
		*last = rule;
		last->pc = pc;
		return 0;
	}
	rule.pc = pc;
	return ARRAY_PUSH(c->rows, c->nr_rows, c->cap_rows, rule);
}

/* The rule over [start, end) where no row is yet, a gap before it GAP. */
static int add_rule(struct cfi *c, uint64_t start, uint64_t end, struct stkrec_cfi_row rule)
{
	int err = 0;

	if (c->nr_rows && start < c->prev)
		start = c->prev;
	if (start >= end)
		return 0;
	if (c->nr_rows && start > c->prev)
		err = push_row(c, c->prev, GAP_RULE);
	if (!err)
		err = push_row(c, (uint32_t)start, rule);
	c->prev = (uint32_t)end;
	return err;
}

/* A .plt rule with another threshold than STKREC_CFA_PLT's, as what it
 * means: rsp + 8 from each 16-byte entry's start, rsp + 16 from thr on. */
static int add_plt(struct cfi *c, uint64_t start, uint64_t end, int thr, int8_t fp_off)
{
	struct stkrec_cfi_row r8 = { .kind = STKREC_CFA_SP, .cfa_off = 8, .fp_off = fp_off };
	struct stkrec_cfi_row r16 = { .kind = STKREC_CFA_SP, .cfa_off = 16, .fp_off = fp_off };
	uint64_t a = start, entry, mid;
	int err = 0;

	while (a < end && !err) {
		entry = a & ~15ull;
		mid = entry + (uint64_t)thr;
		if (a < mid)
			err = add_rule(c, a, mid < end ? mid : end, r8);
		a = a > mid ? a : mid;
		if (a < end && !err)
			err = add_rule(c, a, entry + 16 < end ? entry + 16 : end, r16);
		a = entry + 16;
	}
	return err;
}

/* FDEs that overlap (in damaged tables): which one is right cannot be
 * told, so NONE from where the second starts to where the first ends. */
static int overlap(struct cfi *c, uint32_t from)
{
	while (c->nr_rows && c->rows[c->nr_rows - 1].pc >= from)
		c->nr_rows--;
	return push_row(c, from, NONE_RULE);
}

/* The rows of item f, its FDE's instructions run once. */
static int walk(struct cfi *c, const struct item *f)
{
	struct stkrec_cfi_row r;
	struct cfi_walk w;
	uint64_t start, end;
	int ret, plt;

	if (c->nr_rows && f->from < c->prev) {
		ret = overlap(c, f->from);
		if (ret)
			return ret;
	}
	cfi_walk__init(&w, &c->cies[f->cie], f->insn, f->end, f->lo, f->hi, f->from, &c->stack);
	while ((ret = cfi_walk__next(&w, &start, &end, &r, &plt)) > 0) {
		/* an advance past the FDE's end opens no row */
		if (end > f->to)
			end = f->to;
		if (plt >= 0)
			ret = add_plt(c, start, end, plt, r.fp_off);
		else
			ret = add_rule(c, start, end, r);
		if (ret || end >= f->to)
			break;
	}
	return ret < 0 ? ret : 0;
}

/* The items' keys (from << 32 | index) by from, a stable radix sort a byte
 * a pass: the FDEs mostly come in order, but not all (cold parts of
 * functions, .plt, startup code). */
static int sort_items(const struct cfi *c, uint64_t **out)
{
	uint64_t *a, *b, *t;
	size_t count[256], i, sum, n;
	unsigned int shift;

	a = malloc(c->nr_items * sizeof(*a));
	b = malloc(c->nr_items * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	for (i = 0; i < c->nr_items; i++)
		a[i] = (uint64_t)c->items[i].from << 32 | i;
	for (shift = 32; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < c->nr_items; i++)
			count[(a[i] >> shift) & 255]++;
		for (sum = 0, i = 0; i < 256; i++) {
			n = count[i];
			count[i] = sum;
			sum += n;
		}
		for (i = 0; i < c->nr_items; i++)
			b[count[(a[i] >> shift) & 255]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	free(b);
	*out = a;
	return 0;
}

/* The items in address order into rows, the end GAP. */
static int make_rows(struct cfi *c)
{
	uint64_t *keys = NULL;
	size_t i;
	int err;

	err = sort_items(c, &keys);
	for (i = 0; i < c->nr_items && !err; i++)
		err = walk(c, &c->items[keys[i] & UINT32_MAX]);
	if (!err)
		err = push_row(c, c->prev, GAP_RULE);
	free(keys);
	return err;
}

/* --- the file ------------------------------------------------------------ */

static Elf_Scn *find_scn(Elf *elf, const char *name, struct cfi *c)
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
		c->data = elf_getdata(scn, NULL);
		c->addr = sh.sh_addr;
		return c->data && c->data->d_buf && c->data->d_size ? scn : NULL;
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

/* The FDEs of .eh_frame, then of .debug_frame where .eh_frame has none. */
static int collect(Elf *elf, struct cfi *c)
{
	Elf_Data *dbg = NULL;
	uint64_t dbg_addr = 0;
	int err = 0;

	c->ident = (const unsigned char *)elf_getident(elf, NULL);
	if (find_scn(elf, ".debug_frame", c)) {
		dbg = c->data;
		dbg_addr = c->addr;
	}
	c->eh = true;
	if (find_scn(elf, ".eh_frame", c))
		err = fdes(c, dbg != NULL);
	if (!err && dbg) {
		if (c->cover.nr)
			qsort(c->cover.v, c->cover.nr, sizeof(*c->cover.v), range_cmp);
		ranges__union(&c->cover);
		c->data = dbg;
		c->addr = dbg_addr;
		c->eh = false;
		c->nr_lru = 0;
		err = fdes(c, false);
	}
	return err;
}

static void cfi_free(struct cfi *c)
{
	free(c->xsegs.v);
	free(c->cies);
	free(c->cover.v);
	free(c->items);
	free(c->stack.v);
	free(c->rows);
}

int cfi__load(int fd, struct stkrec_cfi_row **rows, size_t *nr)
{
	struct cfi c = { 0 };
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
		err = exec_segs(elf, &c.xsegs);
	if (!err)
		err = collect(elf, &c);
	if (!err && !c.nr_items)
		err = -ENOENT;
	if (!err)
		err = make_rows(&c);
	if (!err) {
		*rows = c.rows;
		*nr = c.nr_rows;
		c.rows = NULL;
	}
	cfi_free(&c);
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
