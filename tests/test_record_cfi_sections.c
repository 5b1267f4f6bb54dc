// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi/cfi.c with both CFI sections (.debug_frame alone, .eh_frame
 * winning where both describe code, rare instructions) and with files it
 * must refuse. Test programs are compiled here with cc (tests/util_cfi.c).
 */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "util_cfi.h"

TestSuite(record_cfi_sections, .init = cfit_setup, .fini = cfit_teardown);

/* --- .debug_frame ---------------------------------------------------------- */

/* A copy of path whose .debug_frame has each FDE's first small
 * DW_CFA_def_cfa_offset raised by 64 (32-bit DWARF, 8-byte addresses). */
static const char *patch_debug_frame(const char *path, const char *name, size_t *patched)
{
	static char out[PATH_MAX];
	GElf_Shdr sh;
	uint8_t *buf, *s;
	uint32_t len, id;
	size_t size, off;
	struct stat st;
	FILE *f;
	int fd;

	cr_assert(cfit_section(path, ".debug_frame", &sh));
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	size = (size_t)st.st_size;
	buf = malloc(size);
	cr_assert_not_null(buf);
	cr_assert_eq(pread(fd, buf, size, 0), (ssize_t)size);
	close(fd);
	s = buf + sh.sh_offset;
	*patched = 0;
	for (off = 0; off + 8 <= sh.sh_size; off += 4 + len) {
		memcpy(&len, s + off, 4);
		memcpy(&id, s + off + 4, 4);
		cr_assert_lt(len, 0xfffffff0u);
		if (!len || id == 0xffffffffu || len < 4 + 16)
			continue;
		for (size_t i = off + 4 + 4 + 16; i + 1 < off + 4 + len; i++) {
			if (s[i] == DW_CFA_def_cfa_offset && s[i + 1] >= 8 && s[i + 1] < 0x40) {
				s[i + 1] += 0x40;
				(*patched)++;
				break;
			}
		}
	}
	snprintf(out, sizeof(out), "%s/%s", cfit_dir, name);
	f = fopen(out, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, size, f), size);
	fclose(f);
	free(buf);
	return out;
}

static bool same_rows(const char *a, const char *b)
{
	struct stkrec_cfi_row *ra, *rb;
	size_t na, nb;
	bool same;

	cfit_load(a, &ra, &na);
	cfit_load(b, &rb, &nb);
	same = na == nb && !memcmp(ra, rb, na * sizeof(*ra));
	free(ra);
	free(rb);
	return same;
}

Test(record_cfi_sections, debug_frame_alone)
{
	const char *bin = cfit_build("dbg", "-O2 -fomit-frame-pointer -g -fno-asynchronous-unwind-tables",
				NULL);
	const char *eh = cfit_build("eh", "-O2 -fomit-frame-pointer", NULL);
	const char *patched;
	uint64_t mid = cfit_symbol(bin, "mid");
	struct stkrec_cfi_row *rows;
	GElf_Shdr sh;
	size_t nr, n;

	cr_assert(cfit_section(bin, ".debug_frame", &sh));
	cr_assert_neq(mid, 0);
	cfit_same_as_readelf(bin, 10, NULL);
	cfit_load(bin, &rows, &nr);
	cr_assert_eq(cfit_kind_at(rows, nr, mid), STKREC_CFA_SP, "mid() from .debug_frame");
	free(rows);
	/* the same code with its CFI in .eh_frame: the same rows */
	cr_assert(same_rows(bin, eh));
	/* and what .debug_frame says is what counts */
	patched = patch_debug_frame(bin, "dbg-patched", &n);
	cr_assert_geq(n, 2);
	cr_assert_not(same_rows(bin, patched));
	cfit_same_as_readelf(patched, 10, NULL);
}

Test(record_cfi_sections, eh_frame_wins)
{
	char both_src[PATH_MAX];
	const char *both, *eh, *patched;
	GElf_Shdr sh;
	FILE *f;
	size_t n;

	/* gas writes the same CFI to both sections */
	snprintf(both_src, sizeof(both_src), "%s/both.c", cfit_dir);
	f = fopen(both_src, "w");
	cr_assert_not_null(f);
	fprintf(f, "__asm__(\".cfi_sections .eh_frame, .debug_frame\");\n%s", cfit_prog_src);
	fclose(f);
	both = cfit_build("both", "-O2 -fomit-frame-pointer -g", both_src);
	eh = cfit_build("eh", "-O2 -fomit-frame-pointer", NULL);
	cr_assert(cfit_section(both, ".debug_frame", &sh));
	cr_assert(cfit_section(both, ".eh_frame", &sh));
	cr_assert(same_rows(both, eh));
	/* a .debug_frame that disagrees is not heard where .eh_frame speaks */
	patched = patch_debug_frame(both, "both-patched", &n);
	cr_assert_geq(n, 2);
	cr_assert(same_rows(patched, eh));
}

/* A hand-made .debug_frame FDE (CFA rsp+48 throughout) over
 * [f_both - 4, f_both + 16), f_both having its own .eh_frame FDE: the
 * .debug_frame rule holds only around it. */
static const char overlap_asm[] =
	"	.text\n"
	"	.globl g_nocfi, f_both, h_nocfi\n"
	"g_nocfi:\n"
	"	.fill 16,1,0x90\n"
	"f_both:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	nop\n"
	"	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"h_nocfi:\n"
	"	.fill 32,1,0x90\n"
	"	.section .debug_frame,\"\",@progbits\n"
	".Lcie:\n"
	"	.long .Lcie_end - .Lcie_start\n"
	".Lcie_start:\n"
	"	.long 0xffffffff\n"
	"	.byte 1\n"
	"	.string \"\"\n"
	"	.uleb128 1\n"
	"	.sleb128 -8\n"
	"	.byte 16\n"
	"	.byte 0x0c, 7, 8\n"   /* def_cfa rsp+8 */
	"	.byte 0x90, 1\n"      /* ra at cfa-8 */
	"	.balign 8, 0\n"
	".Lcie_end:\n"
	"	.long .Lfde_end - .Lfde_start\n"
	".Lfde_start:\n"
	"	.long .Lcie\n"
	"	.quad f_both - 4\n"
	"	.quad 20\n"
	"	.byte 0x0e, 48\n"     /* def_cfa_offset 48 */
	"	.balign 8, 0\n"
	".Lfde_end:\n"
	"	.section .note.GNU-stack,\"\",@progbits\n";

Test(record_cfi_sections, eh_frame_wins_inside_a_debug_frame_fde)
{
	struct stkrec_cfi_row *rows;
	const struct stkrec_cfi_row *r;
	const char *bin;
	uint64_t f;
	size_t nr, i;

	bin = cfit_build_asm("overlap", overlap_asm);
	f = cfit_symbol(bin, "f_both");
	cr_assert_neq(f, 0);
	cfit_load(bin, &rows, &nr);
	cfit_well_formed(rows, nr);
	for (i = 0; i < 20; i++) {
		static const uint16_t eh[4] = { 8, 16, 16, 8 }; /* push, nop, pop, ret */
		uint64_t a = f - 4 + i;

		r = cfi__find(rows, nr, (uint32_t)a);
		cr_assert_not_null(r);
		cr_assert_eq(r->kind, STKREC_CFA_SP, "%#" PRIx64, a);
		cr_assert_eq(r->cfa_off, a >= f && a < f + 4 ? eh[a - f] : 48, "%#" PRIx64, a);
	}
	cr_assert_eq(cfit_kind_at(rows, nr, f + 16), STKREC_CFA_GAP);
	free(rows);
	cfit_same_as_readelf(bin, 5, NULL);
}

/* Instructions compilers seldom write, in a hand-made .debug_frame over
 * r0..r6 (32 bytes each): CIE .Lca says CFA rsp+8, ra at cfa-8; .Lcb the
 * same and an advance, which makes it unusable. */
static const char rare_asm[] =
	"	.text\n"
	"	.globl r0, r1, r2, r3, r4, r5, r6\n"
	"	.balign 32\n"
	"r0:	.fill 32,1,0x90\nr1:	.fill 32,1,0x90\nr2:	.fill 32,1,0x90\n"
	"r3:	.fill 32,1,0x90\nr4:	.fill 32,1,0x90\nr5:	.fill 32,1,0x90\n"
	"r6:	.fill 32,1,0x90\n"
	"	.section .debug_frame,\"\",@progbits\n"
	".Lca:	.long .Lca_e - . - 4, 0xffffffff\n"
	"	.byte 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1\n"
	"	.balign 8, 0\n.Lca_e:\n"
	".Lcb:	.long .Lcb_e - . - 4, 0xffffffff\n"
	"	.byte 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1, 0x41\n"
	"	.balign 8, 0\n.Lcb_e:\n"
	/* r0: advance_loc1 4, def_cfa_offset 16; advance_loc2 4, def_cfa_sf
	 * rsp -3 (24); advance_loc4 4, def_cfa_offset_sf -4 (32); set_loc
	 * r0+20, def_cfa_offset 8 */
	".L0:	.long .L0_e - . - 4, .Lca\n	.quad r0, 32\n"
	"	.byte 0x02, 4, 0x0e, 16, 0x03, 4, 0, 0x12, 7, 0x7d\n"
	"	.byte 0x04, 4, 0, 0, 0, 0x13, 0x7c, 0x01\n	.quad r0 + 20\n"
	"	.byte 0x0e, 8\n	.balign 8, 0\n.L0_e:\n"
	/* r1, every 2 bytes from 4 on: rbp at cfa-16; remember_state, cfa 8,
	 * restore rbp; restore_state; GNU_negative_offset_extended rbp 3
	 * (cfa+24); offset_extended_sf rbp -4 (cfa+32); val_offset rbp;
	 * restore_extended rbp; expression rbp: plus_uconst 24 */
	".L1:	.long .L1_e - . - 4, .Lca\n	.quad r1, 32\n"
	"	.byte 0x44, 0x0e, 16, 0x86, 2, 0x44, 0x0a, 0x0e, 8, 0xc6, 0x42, 0x0b\n"
	"	.byte 0x42, 0x2f, 6, 3, 0x42, 0x11, 6, 0x7c, 0x42, 0x14, 6, 2\n"
	"	.byte 0x42, 0x06, 6, 0x42, 0x10, 6, 2, 0x23, 24\n"
	"	.balign 8, 0\n.L1_e:\n"
	/* r2, every 4 bytes: def_cfa_expression bregx rbp 16;
	 * def_cfa_register rsp (after an expression); def_cfa rsp+8;
	 * undefined ra; ra at cfa-8 and an unknown instruction */
	".L2:	.long .L2_e - . - 4, .Lca\n	.quad r2, 32\n"
	"	.byte 0x44, 0x0f, 3, 0x92, 6, 16, 0x44, 0x0d, 7, 0x44, 0x0c, 7, 8\n"
	"	.byte 0x44, 0x07, 16, 0x44, 0x90, 1, 0x1c, 0x44, 0x0e, 16\n"
	"	.balign 8, 0\n.L2_e:\n"
	/* r3: def_cfa_offset 16 at 4; restore_state with none remembered */
	".L3:	.long .L3_e - . - 4, .Lca\n	.quad r3, 32\n"
	"	.byte 0x44, 0x0e, 16, 0x44, 0x0b\n	.balign 8, 0\n.L3_e:\n"
	/* r4: the CIE that advances */
	".L4:	.long .L4_e - . - 4, .Lcb\n	.quad r4, 32\n"
	"	.byte 0x44, 0x0e, 16\n	.balign 8, 0\n.L4_e:\n"
	/* r5: advance_loc 0 (no row), def_cfa_offset 16; at 8 24; an advance
	 * past the end, def_cfa_offset 32 */
	".L5:	.long .L5_e - . - 4, .Lca\n	.quad r5, 32\n"
	"	.byte 0x40, 0x0e, 16, 0x48, 0x0e, 24, 0x02, 100, 0x0e, 32\n"
	"	.balign 8, 0\n.L5_e:\n"
	/* r6: FDEs that overlap, [r6, r6+16) and [r6+8, r6+32), cfa 16 and
	 * 32 from 4 bytes in: NONE where both speak */
	".L6:	.long .L6_e - . - 4, .Lca\n	.quad r6, 16\n"
	"	.byte 0x44, 0x0e, 16\n	.balign 8, 0\n.L6_e:\n"
	".L7:	.long .L7_e - . - 4, .Lca\n	.quad r6 + 8, 24\n"
	"	.byte 0x44, 0x0e, 32\n	.balign 8, 0\n.L7_e:\n"
	"	.section .note.GNU-stack,\"\",@progbits\n";

struct want {
	const char *fn;
	unsigned int off;
	uint8_t kind;
	uint16_t cfa_off;
	int8_t fp_off;
};

Test(record_cfi_sections, rare_instructions)
{
	static const struct want want[] = {
		{ "r0", 0, STKREC_CFA_SP, 8, 0 },   { "r0", 4, STKREC_CFA_SP, 16, 0 },
		{ "r0", 8, STKREC_CFA_SP, 24, 0 },  { "r0", 12, STKREC_CFA_SP, 32, 0 },
		{ "r0", 19, STKREC_CFA_SP, 32, 0 }, { "r0", 20, STKREC_CFA_SP, 8, 0 },
		{ "r1", 4, STKREC_CFA_SP, 16, -2 }, { "r1", 8, STKREC_CFA_SP, 8, 0 },
		{ "r1", 10, STKREC_CFA_SP, 16, -2 }, { "r1", 12, STKREC_CFA_SP, 16, 3 },
		{ "r1", 14, STKREC_CFA_SP, 16, 4 }, { "r1", 16, STKREC_CFA_NONE, 0, 0 },
		{ "r1", 18, STKREC_CFA_SP, 16, 0 }, { "r1", 20, STKREC_CFA_SP, 16, 3 },
		{ "r2", 4, STKREC_CFA_FP, 16, 0 },  { "r2", 8, STKREC_CFA_NONE, 0, 0 },
		{ "r2", 12, STKREC_CFA_SP, 8, 0 },  { "r2", 16, STKREC_CFA_END, 0, 0 },
		{ "r2", 20, STKREC_CFA_NONE, 0, 0 }, { "r2", 31, STKREC_CFA_NONE, 0, 0 },
		{ "r3", 4, STKREC_CFA_SP, 16, 0 },  { "r3", 8, STKREC_CFA_NONE, 0, 0 },
		{ "r4", 0, STKREC_CFA_NONE, 0, 0 }, { "r4", 4, STKREC_CFA_NONE, 0, 0 },
		{ "r5", 0, STKREC_CFA_SP, 16, 0 },  { "r5", 8, STKREC_CFA_SP, 24, 0 },
		{ "r5", 31, STKREC_CFA_SP, 24, 0 },
		{ "r6", 4, STKREC_CFA_SP, 16, 0 },  { "r6", 8, STKREC_CFA_NONE, 0, 0 },
		{ "r6", 15, STKREC_CFA_NONE, 0, 0 }, { "r6", 16, STKREC_CFA_SP, 32, 0 },
		{ "r6", 31, STKREC_CFA_SP, 32, 0 },
	};
	const struct stkrec_cfi_row *r;
	struct stkrec_cfi_row *rows;
	const char *bin;
	uint64_t a;
	size_t nr, i;

	bin = cfit_build_asm("rare", rare_asm);
	cfit_load(bin, &rows, &nr);
	cfit_well_formed(rows, nr);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		a = cfit_symbol(bin, want[i].fn) + want[i].off;
		r = cfi__find(rows, nr, (uint32_t)a);
		cr_assert_not_null(r);
		cr_expect(r->kind == want[i].kind && r->cfa_off == want[i].cfa_off &&
			  r->fp_off == want[i].fp_off,
			  "%s+%u: kind %u cfa+%u fp %d, want kind %u cfa+%u fp %d", want[i].fn,
			  want[i].off, r->kind, r->cfa_off, r->fp_off, want[i].kind,
			  want[i].cfa_off, want[i].fp_off);
	}
	free(rows);
}

/* --- errors --------------------------------------------------------------- */

static int load_err(const char *path)
{
	struct stkrec_cfi_row *rows = (void *)1;
	size_t nr = 1;
	int err = cfi__load_path(path, &rows, &nr);

	if (err) {
		cr_assert_null(rows);
		cr_assert_eq(nr, 0);
	}
	free(rows);
	return err;
}

static const char *copy_with(const char *path, const char *name, size_t at, const void *bytes,
			     size_t len)
{
	static char out[PATH_MAX];
	char cmd[3 * PATH_MAX];
	int fd;

	snprintf(out, sizeof(out), "%s/%s", cfit_dir, name);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, out);
	cr_assert_eq(system(cmd), 0);
	fd = open(out, O_WRONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, bytes, len, (off_t)at), (ssize_t)len);
	close(fd);
	return out;
}

Test(record_cfi_sections, errors)
{
	const char *bin = cfit_build("prog", "-O2", NULL);
	static const uint8_t aarch64[2] = { EM_AARCH64, 0 };
	char text[PATH_MAX], empty_src[PATH_MAX];
	const char *p;
	FILE *f;

	snprintf(text, sizeof(text), "%s/text", cfit_dir);
	f = fopen(text, "w");
	cr_assert_not_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	cr_assert_eq(load_err(text), -ENOEXEC);
	cr_assert_eq(load_err(cfit_dir), -ENOEXEC);
	cr_assert_eq(load_err("/nonexistent/stkrec"), -ENOENT);

	/* another machine, a relocatable object */
	p = copy_with(bin, "arm", offsetof(Elf64_Ehdr, e_machine), aarch64, 2);
	cr_assert_eq(load_err(p), -ENOEXEC);
	cr_assert_eq(load_err(cfit_build("prog.o", "-O2 -c", NULL)), -ENOEXEC);

	/* no call-frame information at all */
	snprintf(empty_src, sizeof(empty_src), "%s/empty.c", cfit_dir);
	f = fopen(empty_src, "w");
	cr_assert_not_null(f);
	fputs("void _start(void) { for (;;); }\n", f);
	fclose(f);
	p = cfit_build("nocfi", "-O1 -nostdlib -static -fno-asynchronous-unwind-tables", empty_src);
	cr_assert_eq(load_err(p), -ENOENT);
	/* the same with it: a row and the end */
	p = cfit_build("cfi", "-O1 -nostdlib -static", empty_src);
	cr_assert_eq(load_err(p), 0);

	/* code above 4 GiB */
	p = cfit_build("high", "-O1 -nostdlib -static -Wl,-Ttext-segment=0x200000000", empty_src);
	cr_assert_eq(load_err(p), -E2BIG);
}

Test(record_cfi_sections, fd_is_kept)
{
	struct stkrec_cfi_row *rows;
	size_t nr;
	int fd;

	cfit_need(LIBC);
	fd = open(LIBC, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(cfi__load(fd, &rows, &nr), 0);
	free(rows);
	cr_assert_eq(cfi__load(fd, &rows, &nr), 0, "the same fd again");
	free(rows);
	cr_assert_eq(fcntl(fd, F_GETFD), 0);
	close(fd);
	cr_assert_null(cfi__find(NULL, 0, 0));
}

/* The largest tables load whole (their time is logged; speed is make
 * bench's, not a test's): sorted rows ending in GAP. */
Test(record_cfi_sections, large_files)
{
	const char *files[] = { LIBC, PYTHON, NODE };
	struct stkrec_cfi_row *rows;
	struct timespec a, b;
	size_t i, nr, loaded = 0;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (access(files[i], R_OK))
			continue;
		loaded++;
		clock_gettime(CLOCK_MONOTONIC, &a);
		cfit_load(files[i], &rows, &nr);
		clock_gettime(CLOCK_MONOTONIC, &b);
		cfit_well_formed(rows, nr);
		free(rows);
		cr_log_info("%s: %zu rows in %.1f ms", files[i], nr,
			    (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	}
	if (!loaded)
		cr_skip_test("none of %s, %s, %s here: no large table loaded", LIBC, PYTHON,
			     NODE);
}
