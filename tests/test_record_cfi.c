// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi/cfi.c: the rows of real binaries against binutils' reading of
 * the same tables (readelf --debug-dump=frames-interp, tests/util_cfi.c):
 * every row readelf prints must map to the rule it means, or to NONE where
 * stkrec cannot follow it. Then the special rows (.plt, _start,
 * __restore_rt). Both CFI sections and the errors: test_record_cfi_sections.c.
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

TestSuite(record_cfi, .init = cfit_setup, .fini = cfit_teardown);

Test(record_cfi, readelf_fpless_program)
{
	const char *bin = cfit_build("fpless", "-O2 -fomit-frame-pointer", NULL);
	struct stkrec_cfi_row *rows;
	size_t nr, i, deep = 0, fp = 0;

	cfit_same_as_readelf(bin, 15, NULL);
	cfit_load(bin, &rows, &nr);
	for (i = 0; i < nr; i++) {
		deep += rows[i].kind == STKREC_CFA_SP && rows[i].cfa_off > 256;
		fp += rows[i].kind == STKREC_CFA_FP;
	}
	cr_expect_geq(deep, 1, "spill()'s frame is rsp + more than 256");
	cr_expect_geq(fp, 1, "mid()'s alloca frame is rbp-based");
	free(rows);
}

Test(record_cfi, readelf_fp_program)
{
	const char *bin = cfit_build("fp", "-O0 -fno-omit-frame-pointer", NULL);
	struct stkrec_cfi_row *rows;
	size_t nr, i, fp = 0;

	cfit_same_as_readelf(bin, 15, NULL);
	cfit_load(bin, &rows, &nr);
	for (i = 0; i < nr; i++)
		fp += rows[i].kind == STKREC_CFA_FP && rows[i].cfa_off == 16 && rows[i].fp_off == -2;
	cr_expect_geq(fp, 4, "each function: CFA rbp+16, rbp saved at CFA-16");
	free(rows);
}

Test(record_cfi, readelf_workload)
{
	char path[PATH_MAX];
	const char *w = getenv("STKREC_WORKLOADS");

	snprintf(path, sizeof(path), "%s/cpuburn", w && *w ? w : "build/workloads");
	cfit_need(path);
	cfit_same_as_readelf(path, 10, NULL);
}

Test(record_cfi, readelf_libc_and_ldso)
{
	struct cfit_cmp c;

	cfit_need(LIBC);
	cfit_same_as_readelf(LIBC, 20000, &c);
	cr_expect_geq(c.sig_rows, 1, "libc's __restore_rt is a signal frame");
	cfit_need(LDSO);
	cfit_same_as_readelf(LDSO, 1500, NULL);
}

Test(record_cfi, readelf_python_and_node)
{
	cfit_need(PYTHON);
	cfit_same_as_readelf(PYTHON, 50000, NULL);
	if (access(NODE, R_OK) == 0)
		cfit_same_as_readelf(NODE, 300000, NULL);
}

/* --- the special rows ---------------------------------------------------- */

/* The address of the first occurrence of pat in an executable segment. */
static uint64_t find_code(const char *path, const uint8_t *pat, size_t len)
{
	int fd = open(path, O_RDONLY);
	uint64_t addr = 0;
	GElf_Phdr ph;
	size_t i, n, j;
	uint8_t *buf;
	Elf *elf;

	cr_assert_geq(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	cr_assert_eq(elf_getphdrnum(elf, &n), 0);
	for (i = 0; !addr && i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		buf = malloc(ph.p_filesz);
		cr_assert_not_null(buf);
		cr_assert_eq(pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset), (ssize_t)ph.p_filesz);
		for (j = 0; !addr && j + len <= ph.p_filesz; j++)
			if (!memcmp(buf + j, pat, len))
				addr = ph.p_vaddr + j;
		free(buf);
	}
	elf_end(elf);
	close(fd);
	return addr;
}


/* Every lazy entry of .plt (after the 16-byte PLT0) is a PLT row. */
static void plt_rows(const char *path)
{
	struct stkrec_cfi_row *rows;
	const struct stkrec_cfi_row *r;
	GElf_Shdr sh;
	uint64_t a;
	size_t nr;

	cr_assert(cfit_section(path, ".plt", &sh), "%s has no .plt", path);
	cr_assert_gt(sh.sh_size, 16);
	cfit_load(path, &rows, &nr);
	r = cfi__find(rows, nr, (uint32_t)sh.sh_addr);
	cr_assert(r && r->kind == STKREC_CFA_SP && r->cfa_off == 16, "PLT0 pushes once");
	r = cfi__find(rows, nr, (uint32_t)sh.sh_addr + 6);
	cr_assert(r && r->kind == STKREC_CFA_SP && r->cfa_off == 24, "then jumps at rsp+24");
	for (a = sh.sh_addr + 16; a < sh.sh_addr + sh.sh_size; a++)
		cr_assert_eq(cfit_kind_at(rows, nr, a), STKREC_CFA_PLT, "%s: %#" PRIx64, path, a);
	free(rows);
}

Test(record_cfi, plt_is_plt)
{
	plt_rows(cfit_build("lazy", "-O2 -Wl,-z,lazy", NULL));
	cfit_need(LIBC);
	plt_rows(LIBC);
	if (access(PYTHON, R_OK) == 0)
		plt_rows(PYTHON);
}

/* The threshold N of the .plt CFA expression (DW_OP_litN; DW_OP_ge). */
static int plt_threshold(const char *path)
{
	char cmd[PATH_MAX + 64], line[1024], *s;
	int thr = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s'", path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "DW_OP_breg16") && (s = strstr(line, "DW_OP_and; DW_OP_lit")))
			thr = atoi(s + strlen("DW_OP_and; DW_OP_lit"));
	pclose(p);
	return thr;
}

/* An IBT .plt (endbr64; push; jmp) has another threshold than the one
 * STKREC_CFA_PLT stands for: its rule is spelled out as SP rows. */
Test(record_cfi, ibt_plt_spelled_out)
{
	const char *bin = cfit_build("ibt", "-O2 -fcf-protection -Wl,-z,ibtplt -Wl,-z,lazy", NULL);
	struct stkrec_cfi_row *rows;
	const struct stkrec_cfi_row *r;
	int thr = plt_threshold(bin);
	GElf_Shdr sh;
	uint64_t a;
	size_t nr;

	cr_assert(cfit_section(bin, ".plt", &sh));
	cr_assert(thr > 0 && thr < 16, "no .plt expression in %s", bin);
	cr_log_info("IBT .plt threshold: %d", thr);
	if (thr == 11)
		cr_skip_test("this linker's IBT .plt has the usual threshold");
	cfit_load(bin, &rows, &nr);
	for (a = sh.sh_addr + 16; a < sh.sh_addr + sh.sh_size; a++) {
		r = cfi__find(rows, nr, (uint32_t)a);
		cr_assert_not_null(r);
		cr_assert_eq(r->kind, STKREC_CFA_SP, "%#" PRIx64, a);
		cr_assert_eq(r->cfa_off, (a & 15) >= (uint64_t)thr ? 16 : 8, "%#" PRIx64, a);
		cr_assert_eq(r->fp_off, 0);
	}
	free(rows);
	cfit_same_as_readelf(bin, 5, NULL);
}

Test(record_cfi, start_is_end)
{
	const char *bin = cfit_build("pie", "-O2 -fPIE -pie", NULL);
	struct stkrec_cfi_row *rows;
	uint64_t start = cfit_symbol(bin, "_start");
	size_t nr, i, ends = 0;

	cr_assert_neq(start, 0);
	cfit_load(bin, &rows, &nr);
	cr_assert_eq(cfit_kind_at(rows, nr, start), STKREC_CFA_END);
	cr_assert_eq(cfit_kind_at(rows, nr, start + 1), STKREC_CFA_END);
	free(rows);

	/* libc: clone3's and clone's child say the same */
	cfit_need(LIBC);
	cfit_load(LIBC, &rows, &nr);
	for (i = 0; i < nr; i++)
		ends += rows[i].kind == STKREC_CFA_END;
	cr_expect_geq(ends, 1);
	free(rows);
}

/* __restore_rt: mov $15, %rax (rt_sigreturn); syscall. Its FDE starts one
 * byte early, as unwinders look up return address - 1. */
static void restore_rt(const char *path)
{
	static const uint8_t code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	struct stkrec_cfi_row *rows;
	uint64_t a;
	size_t nr;

	cfit_need(path);
	a = find_code(path, code, sizeof(code));
	cr_assert_neq(a, 0, "no rt_sigreturn in %s", path);
	cfit_load(path, &rows, &nr);
	cr_assert_eq(cfit_kind_at(rows, nr, a - 1), STKREC_CFA_SIGNAL, "%s", path);
	cr_assert_eq(cfit_kind_at(rows, nr, a), STKREC_CFA_SIGNAL);
	cr_assert_eq(cfit_kind_at(rows, nr, a + 8), STKREC_CFA_SIGNAL);
	cr_assert_eq(cfi__find(rows, nr, (uint32_t)a)->cfa_off, 0);
	cr_assert_neq(cfit_kind_at(rows, nr, a - 2), STKREC_CFA_SIGNAL);
	free(rows);
}

Test(record_cfi, restore_rt_is_signal)
{
	restore_rt(LIBC);
	restore_rt(LDSO);
}
