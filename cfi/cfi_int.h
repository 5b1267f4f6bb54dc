/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to cfi/cfi*.c: the call-frame instructions of one FDE run in
 * one pass (cfi/cfi_insn.c), each row of its table mapped to a stkrec
 * rule. The rows and rules are those libdw's dwarf_cfi_addrframe() gives
 * at each row's start (elfutils 0.188, x86-64 backend), which cfi/cfi.c
 * used before: the same table, without re-running the FDE for every row.
 */
#ifndef STKREC_CFI_CFI_INT_H
#define STKREC_CFI_CFI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>

#include "bpf/stkrec.h"

/* A register's rule (DWARF 5 §6.4.1). UNSPEC is never mentioned: libdw
 * reads it as undefined (x86-64 sets no default-same-value). */
enum cfi_reg_kind {
	CFI_REG_UNSPEC,
	CFI_REG_UNDEF,
	CFI_REG_SAME,
	CFI_REG_OFFSET,
	CFI_REG_VAL_OFFSET,
	CFI_REG_REGISTER,
	CFI_REG_EXPR,
	CFI_REG_VAL_EXPR,
};

enum cfi_cfa_kind {
	CFI_CFA_UNDEF,
	CFI_CFA_OFFSET,  /* reg + off */
	CFI_CFA_EXPR,
	CFI_CFA_INVALID, /* def_cfa_offset/register without a register rule */
};

struct cfi_reg {
	uint8_t kind;
	int64_t value;       /* OFFSET, VAL_OFFSET: CFA + value; REGISTER */
	const uint8_t *expr; /* EXPR, VAL_EXPR: the block, value bytes long */
};

/* The columns stkrec reads: the CFA, rbp and the return address. */
struct cfi_state {
	uint64_t start; /* where the last advance went (libdw's frame start) */
	uint64_t cfa_reg;
	uint64_t cfa_off;       /* CFA_OFFSET; CFA_EXPR: the block's length */
	const uint8_t *cfa_expr;
	struct cfi_reg rbp, ra;
	uint8_t cfa;            /* enum cfi_cfa_kind */
};

/* DW_CFA_remember_state's stack, kept by the caller across FDEs. */
struct cfi_stack {
	struct cfi_state *v;
	size_t nr, cap;
};

/* What the FDEs of one CIE start from. */
struct cfi_cie {
	const uint8_t *sect; /* the section's data: set_loc's pc-relative */
	uint64_t sect_addr;  /* addresses are from its address */
	uint64_t caf;        /* code alignment factor */
	int64_t daf;         /* data alignment factor */
	uint64_t ra;         /* return address column */
	uint64_t aug_size;   /* FDE augmentation bytes, without 'z' */
	uint8_t fde_enc;     /* DW_EH_PE_* of FDE addresses and set_loc */
	bool sized;          /* 'z': FDEs give their augmentation's length */
	bool signal;         /* 'S' */
	bool bad;            /* initial instructions libdw refuses: all NONE */
	struct cfi_state init;
};

/* One FDE's instructions run over [lo, hi), rows from `from` on. */
struct cfi_walk {
	const struct cfi_cie *cie;
	const uint8_t *p, *end;
	uint64_t lo, hi;
	uint64_t loc;           /* where the instructions have advanced to */
	uint64_t cur;           /* the next row's start */
	struct cfi_state st;
	struct cfi_stack *stack;
	bool bad, done;
};

/* A DW_EH_PE_* pointer at *p whose own address is at: absolute and
 * pc-relative ones only (all GCC and LLVM emit on x86-64). */
int cfi__read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t at,
		      uint64_t *v);

/* c from cie (its FDE pointer encoding fde_enc), the initial instructions
 * run: 0 or -ENOMEM. The caller sets c->sect and c->sect_addr. */
int cfi_cie__init(struct cfi_cie *c, const Dwarf_CIE *cie, uint8_t fde_enc,
		  struct cfi_stack *stack);

/* w over the FDE [lo, hi) whose augmentation and instructions are
 * [insn, end); rows from `from`. */
void cfi_walk__init(struct cfi_walk *w, const struct cfi_cie *cie, const uint8_t *insn,
		    const uint8_t *end, uint64_t lo, uint64_t hi, uint64_t from,
		    struct cfi_stack *stack);

/*
 * The next row [*start, *end) and its rule: 1, or 0 after the last, or
 * -ENOMEM. *plt >= 0 is a .plt rule with another threshold than
 * STKREC_CFA_PLT's (rule->fp_off still applies). A row whose instructions
 * cannot be run (or that libdw would not give) is NONE to the FDE's end,
 * and the last row.
 */
int cfi_walk__next(struct cfi_walk *w, uint64_t *start, uint64_t *end,
		   struct stkrec_cfi_row *rule, int *plt);

#endif
