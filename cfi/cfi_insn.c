// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One FDE's call-frame instructions in one pass (cfi/cfi_int.h): DWARF 5
 * §6.4.2, read as libdw reads it, since its rows are the reference (the
 * tests hold them against readelf's):
 * - the x86-64 ABI's initial state (libdw's backend): rbp and the return
 *   address have the same value, every other register is unspecified
 *   (undefined), the CFA is undefined;
 * - an advance or a restore in a CIE's initial instructions, or one that
 *   cannot be decoded, leaves the CIE unusable: its FDEs are NONE;
 * - def_cfa_offset(_sf) and def_cfa_register only adjust a register + offset
 *   CFA; after an expression they leave the CFA unusable until a new one;
 * - a row starts at each advance beyond the last row's start (an advance
 *   by zero, or backwards, opens none); an advance below the FDE's start
 *   makes the rest NONE, as dwarf_cfi_addrframe() then gives a frame that
 *   starts before the FDE;
 * - an instruction that cannot be decoded, a restore_state with no state
 *   remembered, a register number of 2^28 - 1 or more: NONE from the row
 *   it is in to the FDE's end;
 * - register rule offsets are kept to 61 bits; an empty expression rule
 *   reads as undefined; GNU_window_save (SPARC's) sets the return address
 *   to CFA + 0.
 * Each row is mapped as cfi/cfi.c describes; expressions are matched as
 * a few exact patterns, anything else in them is NONE.
 */
#include <dwarf.h>
#include <errno.h>
#include <string.h>

#include "cfi/cfi_int.h"
#include "util/array.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
/* libdw's limit on register numbers (INT32_MAX / its 8-byte rules). */
#define REG_LIMIT (INT32_MAX / 8)
/* The .plt threshold STKREC_CFA_PLT stands for (binutils' lazy PLT). */
#define PLT_THRESHOLD 11
/* __restore_rt runs with rsp at the kernel's ucontext (the return address
 * into it popped): uc_mcontext's rbp, rsp and rip are at these offsets,
 * which the BPF unwinder reads. glibc's CFI says the same; other layouts
 * are NONE. */
#define SIGCTX_RBP 120
#define SIGCTX_RSP 160
#define SIGCTX_RIP 168
/* The longest expression a rule is matched against (the .plt CFA). */
#define MAX_OPS 9

/* --- reading --------------------------------------------------------------- */

static inline int read_leb(const uint8_t **p, const uint8_t *end, uint64_t *v, bool sign)
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

static int read_le(const uint8_t **p, const uint8_t *end, unsigned int n, bool sign, uint64_t *v)
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

int cfi__read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t at,
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
		err = read_leb(p, end, v, false);
		break;
	case DW_EH_PE_sleb128:
		err = read_leb(p, end, v, true);
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

/* --- expressions --------------------------------------------------------- */

struct op {
	uint8_t atom;
	uint64_t number, number2;
};

/* The ops of the block [p, p + len) when it has at most MAX_OPS of those
 * the rules stkrec follows are made of, else -1. */
static int decode_expr(const uint8_t *p, uint64_t len, struct op *ops)
{
	const uint8_t *end = p + len;
	int n = 0;

	while (p < end) {
		struct op *o = &ops[n];

		if (n == MAX_OPS)
			return -1;
		o->atom = *p++;
		if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31) {
			if (read_leb(&p, end, &o->number, true))
				return -1;
		} else if (o->atom == DW_OP_bregx) {
			if (read_leb(&p, end, &o->number, false) ||
			    read_leb(&p, end, &o->number2, true))
				return -1;
		} else if (o->atom == DW_OP_plus_uconst) {
			if (read_leb(&p, end, &o->number, false))
				return -1;
		} else if (!(o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31) &&
			   o->atom != DW_OP_deref && o->atom != DW_OP_and && o->atom != DW_OP_ge &&
			   o->atom != DW_OP_shl && o->atom != DW_OP_plus) {
			return -1;
		}
		n++;
	}
	return n;
}

/* The CFA's ops, as libdw's dwarf_frame_cfa() gives them (a register rule
 * as DW_OP_bregx), or 0 when it cannot be followed. */
static int cfa_ops(const struct cfi_state *s, struct op *ops)
{
	if (s->cfa == CFI_CFA_OFFSET) {
		ops[0] = (struct op){ DW_OP_bregx, s->cfa_reg, s->cfa_off };
		return 1;
	}
	if (s->cfa != CFI_CFA_EXPR)
		return 0;
	return decode_expr(s->cfa_expr, s->cfa_off, ops);
}

/* The register is saved at CFA + *off: DW_CFA_offset, or the expression
 * that says the same (evaluated with the CFA pushed). */
static bool saved_at_cfa(const struct cfi_reg *r, int64_t *off)
{
	struct op ops[MAX_OPS];
	int n;

	if (r->kind == CFI_REG_OFFSET) {
		*off = r->value;
		return true;
	}
	if (r->kind != CFI_REG_EXPR)
		return false;
	n = decode_expr(r->expr, (uint64_t)r->value, ops);
	if (n != 1 || ops[0].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[0].number;
	return true;
}

/* The register is saved at rsp + off: the expression DW_OP_breg7 off. */
static bool saved_at_sp(const struct cfi_reg *r, uint64_t off)
{
	struct op ops[MAX_OPS];

	return r->kind == CFI_REG_EXPR && decode_expr(r->expr, (uint64_t)r->value, ops) == 1 &&
	       ops[0].atom == DW_OP_breg7 && ops[0].number == off;
}

/* The CFA as register + offset: def_cfa, or an expression that is one
 * DW_OP_bregN or DW_OP_bregx. */
static bool cfa_reg(const struct op *ops, int n, unsigned int *reg, int64_t *off)
{
	if (n != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = (unsigned int)ops[0].number;
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
static int plt_threshold(const struct op *ops, int n)
{
	static const uint8_t pat[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
				       DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	int i;

	if (n != sizeof(pat) || ops[0].number != 8 || ops[1].number != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (i != 4 && ops[i].atom != pat[i])
			return -1;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
		return -1;
	return ops[4].atom - DW_OP_lit0;
}

/* --- one row's rule ----------------------------------------------------- */

/* __restore_rt: a signal frame ('S') whose CFA is rsp's saved value in the
 * ucontext at rsp, with rbp and the pc saved beside it. */
static bool signal_frame(const struct cfi_state *s, const struct op *cfa, int n)
{
	return n == 2 && cfa[0].atom == DW_OP_breg7 && cfa[0].number == SIGCTX_RSP &&
	       cfa[1].atom == DW_OP_deref && saved_at_sp(&s->ra, SIGCTX_RIP) &&
	       saved_at_sp(&s->rbp, SIGCTX_RBP);
}

/* rbp's rule as fp_off: 0 when the caller's rbp is this frame's (same
 * value, or undefined: nothing better to offer), or -1 when it cannot
 * be followed. */
static int fp_rule(const struct cfi_reg *r, int8_t *fp_off)
{
	int64_t off;

	*fp_off = 0;
	if (r->kind == CFI_REG_UNSPEC || r->kind == CFI_REG_UNDEF || r->kind == CFI_REG_SAME)
		return 0;
	if (!saved_at_cfa(r, &off) || off == 0 || off % 8 || off / 8 < INT8_MIN ||
	    off / 8 > INT8_MAX)
		return -1;
	*fp_off = (int8_t)(off / 8);
	return 0;
}

/* The rule of state s. *plt is set (to a threshold other than the one
 * STKREC_CFA_PLT stands for) when the caller must spell the .plt rule out. */
static struct stkrec_cfi_row map_state(const struct cfi_cie *cie, const struct cfi_state *s,
				       int *plt)
{
	struct stkrec_cfi_row r = { .kind = STKREC_CFA_NONE };
	struct op cfa[MAX_OPS];
	unsigned int reg;
	int64_t off;
	int ncfa, thr;

	*plt = -1;
	if (cie->ra != REG_RA)
		return r;
	if (s->ra.kind == CFI_REG_UNSPEC || s->ra.kind == CFI_REG_UNDEF) {
		/* undefined: the outermost frame */
		r.kind = STKREC_CFA_END;
		return r;
	}
	ncfa = cfa_ops(s, cfa);
	if (ncfa <= 0)
		return r;
	if (cie->signal) {
		if (signal_frame(s, cfa, ncfa))
			r.kind = STKREC_CFA_SIGNAL;
		return r;
	}
	if (!saved_at_cfa(&s->ra, &off) || off != -8 || fp_rule(&s->rbp, &r.fp_off))
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

/* --- the instructions ---------------------------------------------------- */

enum step {
	STEP_OK,   /* the row's rules changed */
	STEP_MOVE, /* an advance: a new row from *loc on */
	STEP_BAD,  /* what libdw refuses to run */
};

/* Register reg's rule, where stkrec reads it; offsets kept to 61 bits. */
static int set_reg(struct cfi_state *st, uint64_t reg, uint8_t kind, uint64_t value,
		   const uint8_t *expr)
{
	struct cfi_reg *r;

	if (reg >= REG_LIMIT)
		return STEP_BAD;
	if (reg == REG_RBP)
		r = &st->rbp;
	else if (reg == REG_RA)
		r = &st->ra;
	else
		return STEP_OK;
	/* libdw gives an empty expression no ops at all: undefined */
	if (expr && !value)
		kind = CFI_REG_UNDEF;
	r->kind = kind;
	r->value = expr ? (int64_t)value : (int64_t)(value << 3) >> 3;
	r->expr = expr;
	return STEP_OK;
}

/* DW_CFA_restore(_extended): the CIE's rule, which a CIE cannot use. */
static int restore(const struct cfi_walk *w, struct cfi_state *st, uint64_t reg, bool in_cie)
{
	if (in_cie || reg >= REG_LIMIT)
		return STEP_BAD;
	if (reg == REG_RBP)
		st->rbp = w->cie->init.rbp;
	else if (reg == REG_RA)
		st->ra = w->cie->init.ra;
	return STEP_OK;
}

/* A uleb128 register and a uleb128 (or sleb128) operand. */
static bool read_2(struct cfi_walk *w, uint64_t *reg, uint64_t *v, bool sign)
{
	return !read_leb(&w->p, w->end, reg, false) && !read_leb(&w->p, w->end, v, sign);
}

/* A block's length, the block left at *blk and skipped. */
static bool read_block(struct cfi_walk *w, uint64_t *len, const uint8_t **blk)
{
	if (read_leb(&w->p, w->end, len, false) || *len > (uint64_t)(w->end - w->p))
		return false;
	*blk = w->p;
	w->p += *len;
	return true;
}

static int advance(struct cfi_walk *w, unsigned int n, uint64_t *loc)
{
	uint64_t delta;

	if (read_le(&w->p, w->end, n, false, &delta))
		return STEP_BAD;
	*loc += delta * w->cie->caf;
	return STEP_MOVE;
}

/* def_cfa_offset(_sf) and def_cfa_register adjust a register CFA only. */
static int cfa_adjust(struct cfi_state *st, bool reg, uint64_t v)
{
	if (st->cfa != CFI_CFA_OFFSET)
		st->cfa = CFI_CFA_INVALID;
	if (reg)
		st->cfa_reg = v;
	else
		st->cfa_off = v;
	return STEP_OK;
}

static int def_cfa(struct cfi_state *st, uint64_t reg, uint64_t off)
{
	st->cfa = CFI_CFA_OFFSET;
	st->cfa_reg = reg;
	st->cfa_off = off;
	return STEP_OK;
}

static int remember(struct cfi_walk *w, const struct cfi_state *st)
{
	struct cfi_stack *s = w->stack;

	return ARRAY_PUSH(s->v, s->nr, s->cap, *st) ? -ENOMEM : STEP_OK;
}

static int restore_state(struct cfi_walk *w, struct cfi_state *st)
{
	struct cfi_stack *s = w->stack;

	if (!s->nr)
		return STEP_BAD;
	*st = s->v[--s->nr];
	return STEP_OK;
}

/* The instructions without operands or with one: -1 when op is none. */
static int step_short(struct cfi_walk *w, uint8_t op, struct cfi_state *st, uint64_t *loc,
		      bool in_cie)
{
	uint64_t a;

	switch (op) {
	case DW_CFA_nop:
		return STEP_OK;
	case DW_CFA_set_loc:
		if (in_cie)
			return STEP_BAD; /* an advance, as below */
		return cfi__read_encoded(w->cie->fde_enc, &w->p, w->end,
					 w->cie->sect_addr + (uint64_t)(w->p - w->cie->sect), loc) ?
			       STEP_BAD : STEP_MOVE;
	case DW_CFA_advance_loc1:
		return advance(w, 1, loc);
	case DW_CFA_advance_loc2:
		return advance(w, 2, loc);
	case DW_CFA_advance_loc4:
		return advance(w, 4, loc);
	case DW_CFA_MIPS_advance_loc8:
		return advance(w, 8, loc);
	case DW_CFA_remember_state:
		return remember(w, st);
	case DW_CFA_restore_state:
		return restore_state(w, st);
	case DW_CFA_GNU_window_save:
		/* SPARC's: the return address (%i7's column) at CFA + 0 */
		st->ra = (struct cfi_reg){ .kind = CFI_REG_OFFSET };
		return STEP_OK;
	}
	if (op != DW_CFA_restore_extended && op != DW_CFA_undefined && op != DW_CFA_same_value &&
	    op != DW_CFA_def_cfa_register && op != DW_CFA_def_cfa_offset &&
	    op != DW_CFA_def_cfa_offset_sf && op != DW_CFA_GNU_args_size)
		return -1;
	if (read_leb(&w->p, w->end, &a, op == DW_CFA_def_cfa_offset_sf))
		return STEP_BAD;
	switch (op) {
	case DW_CFA_restore_extended:
		return restore(w, st, a, in_cie);
	case DW_CFA_undefined:
		return set_reg(st, a, CFI_REG_UNDEF, 0, NULL);
	case DW_CFA_same_value:
		return set_reg(st, a, CFI_REG_SAME, 0, NULL);
	case DW_CFA_def_cfa_register:
		return cfa_adjust(st, true, a);
	case DW_CFA_def_cfa_offset:
		return cfa_adjust(st, false, a);
	case DW_CFA_def_cfa_offset_sf:
		return cfa_adjust(st, false, a * (uint64_t)w->cie->daf);
	}
	return STEP_OK; /* DW_CFA_GNU_args_size */
}

/* The instructions with a register and an operand, or a block. */
static int step_long(struct cfi_walk *w, uint8_t op, struct cfi_state *st)
{
	uint64_t daf = (uint64_t)w->cie->daf, a, b;
	const uint8_t *blk;

	switch (op) {
	case DW_CFA_def_cfa_expression:
		if (!read_block(w, &b, &blk))
			return STEP_BAD;
		st->cfa = CFI_CFA_EXPR;
		st->cfa_expr = blk;
		st->cfa_off = b;
		return STEP_OK;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (read_leb(&w->p, w->end, &a, false) || !read_block(w, &b, &blk))
			return STEP_BAD;
		return set_reg(st, a, op == DW_CFA_expression ? CFI_REG_EXPR : CFI_REG_VAL_EXPR, b,
			       blk);
	}
	if (!read_2(w, &a, &b, op == DW_CFA_offset_extended_sf || op == DW_CFA_def_cfa_sf ||
				       op == DW_CFA_val_offset_sf))
		return STEP_BAD;
	switch (op) {
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
		return set_reg(st, a, CFI_REG_OFFSET, b * daf, NULL);
	case DW_CFA_GNU_negative_offset_extended:
		return set_reg(st, a, CFI_REG_OFFSET, -b * daf, NULL);
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		return set_reg(st, a, CFI_REG_VAL_OFFSET, b * daf, NULL);
	case DW_CFA_register:
		return set_reg(st, a, CFI_REG_REGISTER, b, NULL);
	case DW_CFA_def_cfa:
		return def_cfa(st, a, b);
	case DW_CFA_def_cfa_sf:
		return def_cfa(st, a, b * daf);
	}
	return STEP_BAD; /* an instruction libdw does not know */
}

/* One instruction at w->p: enum step, or -ENOMEM. */
static int step(struct cfi_walk *w, struct cfi_state *st, uint64_t *loc, bool in_cie)
{
	uint8_t op = *w->p++;
	uint64_t v;
	int ret;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		*loc += (op & 0x3f) * w->cie->caf;
		return STEP_MOVE;
	case DW_CFA_offset:
		if (read_leb(&w->p, w->end, &v, false))
			return STEP_BAD;
		return set_reg(st, op & 0x3f, CFI_REG_OFFSET, v * (uint64_t)w->cie->daf, NULL);
	case DW_CFA_restore:
		return restore(w, st, op & 0x3f, in_cie);
	}
	ret = step_short(w, op, st, loc, in_cie);
	return ret >= 0 || ret == -ENOMEM ? ret : step_long(w, op, st);
}

/* --- CIEs and FDEs --------------------------------------------------------- */

int cfi_cie__init(struct cfi_cie *c, const Dwarf_CIE *cie, uint8_t fde_enc,
		  struct cfi_stack *stack)
{
	struct cfi_walk w = { .cie = c, .stack = stack };
	uint64_t loc = 0;
	int ret;

	memset(c, 0, sizeof(*c));
	c->caf = cie->code_alignment_factor;
	c->daf = cie->data_alignment_factor;
	c->ra = cie->return_address_register;
	c->aug_size = cie->fde_augmentation_data_size;
	c->fde_enc = fde_enc;
	c->sized = cie->augmentation[0] == 'z';
	c->signal = c->sized && strchr(cie->augmentation, 'S');
	/* libdw's x86-64 ABI state: callee-saved registers and the return
	 * address the same, the CFA undefined */
	c->init.rbp.kind = CFI_REG_SAME;
	c->init.ra.kind = CFI_REG_SAME;
	c->init.cfa = CFI_CFA_UNDEF;
	w.p = cie->initial_instructions;
	w.end = cie->initial_instructions_end;
	stack->nr = 0;
	while (w.p < w.end) {
		ret = step(&w, &c->init, &loc, true);
		if (ret < 0)
			return ret;
		if (ret != STEP_OK) {
			c->bad = true;
			break;
		}
	}
	return 0;
}

/* Past the FDE's augmentation data: false when its length is wrong (libdw
 * then has no FDE there). */
static bool skip_augmentation(struct cfi_walk *w)
{
	uint64_t len;

	if (!w->cie->sized) {
		w->p += w->cie->aug_size < (uint64_t)(w->end - w->p) ?
				w->cie->aug_size : (uint64_t)(w->end - w->p);
		return true;
	}
	if (read_leb(&w->p, w->end, &len, false) || len > (uint64_t)(w->end - w->p))
		return false;
	w->p += len;
	return true;
}

void cfi_walk__init(struct cfi_walk *w, const struct cfi_cie *cie, const uint8_t *insn,
		    const uint8_t *end, uint64_t lo, uint64_t hi, uint64_t from,
		    struct cfi_stack *stack)
{
	*w = (struct cfi_walk){ .cie = cie, .p = insn, .end = end, .lo = lo, .hi = hi,
				.loc = lo, .cur = from, .st = cie->init, .stack = stack };
	w->st.start = lo;
	stack->nr = 0;
	w->bad = cie->bad || !skip_augmentation(w);
}

/* The row [w->cur, end) as the state stands. */
static void row(struct cfi_walk *w, uint64_t end, uint64_t *start, uint64_t *rend,
		struct stkrec_cfi_row *rule, int *plt)
{
	*start = w->cur;
	*rend = end;
	*plt = -1;
	*rule = (struct stkrec_cfi_row){ .kind = STKREC_CFA_NONE };
	/* libdw's frame would start before the FDE: NONE to its end */
	if (w->bad || w->st.start < w->lo) {
		*rend = w->hi;
		w->done = true;
		return;
	}
	*rule = map_state(w->cie, &w->st, plt);
}

int cfi_walk__next(struct cfi_walk *w, uint64_t *start, uint64_t *end,
		   struct stkrec_cfi_row *rule, int *plt)
{
	uint64_t loc;
	int ret;

	if (w->done || w->cur >= w->hi)
		return 0;
	while (!w->bad && w->p < w->end) {
		loc = w->loc;
		ret = step(w, &w->st, &loc, false);
		if (ret < 0)
			return ret;
		if (ret == STEP_BAD)
			w->bad = true;
		if (ret != STEP_MOVE)
			continue;
		w->loc = loc;
		if (loc > w->cur) {
			row(w, loc, start, end, rule, plt);
			w->cur = loc;
			w->st.start = loc;
			return 1;
		}
		w->st.start = loc;
	}
	row(w, w->hi, start, end, rule, plt);
	w->done = true;
	return 1;
}
