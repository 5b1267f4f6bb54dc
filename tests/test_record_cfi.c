// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record/cfi.c: the rows of real binaries against binutils' reading of
 * the same tables (readelf --debug-dump=frames-interp): every row readelf
 * prints must map to the rule it means, or to NONE where stkrec cannot
 * follow it. Then the special rows (.plt, _start, __restore_rt), both CFI
 * sections and the errors. Test programs are compiled here with cc.
 */
#include <criterion/criterion.h>
#include <ctype.h>
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
#include "record/cfi.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO "/lib64/ld-linux-x86-64.so.2"
#define PYTHON "/usr/bin/python3.11"
#define NODE "/usr/bin/node"

/* Built with -O2 -fomit-frame-pointer this has rsp-based frames, and an
 * rbp-based one (alloca in mid()); -O0 gives rbp-based frames throughout. */
static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"__attribute__((noinline)) static long leaf(long *a, int n)\n"
	"{ long s = 0; for (int i = 0; i < n; i++) s += a[i] * (i ^ 3); return s; }\n"
	"__attribute__((noinline)) long mid(int n)\n"
	"{ long *a = __builtin_alloca(n * sizeof(long));\n"
	"  for (int i = 0; i < n; i++) a[i] = random(); return leaf(a, n) + 1; }\n"
	"__attribute__((noinline)) long spill(long x)\n"
	"{ volatile long v[64]; for (int i = 0; i < 64; i++) v[i] = x + i;\n"
	"  return v[x & 63] + mid((int)x); }\n"
	"int main(int argc, char **argv) { printf(\"%ld\\n\", spill(argc * 100)); return 0; }\n";

static char dir[] = "/tmp/stkrec-cfi-XXXXXX";
static char src[PATH_MAX];

static void setup(void)
{
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs(prog_src, f);
	fclose(f);
	elf_version(EV_CURRENT);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		cr_log_warn("cannot remove %s", dir);
}

TestSuite(record_cfi, .init = setup, .fini = teardown);

/* dir/name from cc flags (src is appended unless flags name a source). */
static const char *build(const char *name, const char *flags, const char *source)
{
	static char out[8][PATH_MAX];
	static int next;
	char cmd[3 * PATH_MAX];
	char *p = out[next++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cc %s -o '%s' '%s' 2>/dev/null", flags, p,
		 source ? source : src);
	if (system(cmd))
		cr_skip_test("cannot build with: cc %s", flags);
	return p;
}

static void load(const char *path, struct stkrec_cfi_row **rows, size_t *nr)
{
	int err = cfi__load_path(path, rows, nr);

	cr_assert_eq(err, 0, "%s: %s", path, strerror(-err));
	cr_assert_gt(*nr, 0);
}

static void need(const char *path)
{
	if (access(path, R_OK))
		cr_skip_test("%s is not installed", path);
}

/* --- readelf's interpretation ---------------------------------------- */

/* What a readelf row means: a kind with its offsets, or EXPR (a CFA
 * expression, checked by the tests of .plt and signal frames). */
#define EXPR 0xff

struct rule {
	uint8_t kind;
	uint16_t cfa_off;
	int8_t fp_off;
};

struct cie {
	int sect;
	uint64_t off;
	bool signal;
	bool has_row;
	struct rule row;
};

struct cmp {
	size_t compared, mismatches, exprs, sig_rows, sig_bad;
	struct cie cies[64];
	size_t nr_cies;
	uint64_t (*eh)[2]; /* .eh_frame FDE ranges */
	size_t nr_eh, cap_eh;
};

/* A register rule column: "c-16" is offset(-16); u undefined, s same. */
static struct rule expect(char **f, size_t nf, char cols[][16], size_t ncols)
{
	const char *ra = "u", *rbp = "u";
	struct rule r = { .kind = STKREC_CFA_NONE };
	char reg[16], *end;
	long off, v;
	size_t i;

	for (i = 0; i < ncols && i + 1 < nf; i++) {
		if (!strcmp(cols[i], "ra"))
			ra = f[i + 1];
		else if (!strcmp(cols[i], "rbp"))
			rbp = f[i + 1];
	}
	if (!strcmp(ra, "u"))
		return (struct rule){ .kind = STKREC_CFA_END };
	if (!strcmp(f[0], "exp"))
		return (struct rule){ .kind = EXPR };
	if (sscanf(f[0], "%15[a-z0-9]+%ld", reg, &off) != 2 || strcmp(ra, "c-8") ||
	    off < 0 || off > UINT16_MAX)
		return r;
	if (!strcmp(reg, "rsp"))
		r.kind = STKREC_CFA_SP;
	else if (!strcmp(reg, "rbp"))
		r.kind = STKREC_CFA_FP;
	else
		return r;
	r.cfa_off = (uint16_t)off;
	if (strcmp(rbp, "u") && strcmp(rbp, "s")) {
		v = rbp[0] == 'c' ? strtol(rbp + 1, &end, 10) : 0;
		if (rbp[0] != 'c' || *end || !v || v % 8 || v / 8 < INT8_MIN || v / 8 > INT8_MAX)
			return (struct rule){ .kind = STKREC_CFA_NONE };
		r.fp_off = (int8_t)(v / 8);
	}
	return r;
}

static bool in_eh(const struct cmp *c, uint64_t pc)
{
	size_t i;

	for (i = 0; i < c->nr_eh; i++)
		if (pc >= c->eh[i][0] && pc < c->eh[i][1])
			return true;
	return false;
}

static void check(struct cmp *c, const struct stkrec_cfi_row *rows, size_t nr, int sect,
		  uint64_t loc, struct rule want, bool signal)
{
	const struct stkrec_cfi_row *got;

	if (sect == 1 && in_eh(c, loc))
		return; /* .eh_frame wins */
	got = loc <= UINT32_MAX ? cfi__find(rows, nr, (uint32_t)loc) : NULL;
	c->compared++;
	if (signal) {
		c->sig_rows++;
		if (!got || got->kind != STKREC_CFA_SIGNAL)
			c->sig_bad++;
		return;
	}
	if (want.kind == EXPR) {
		c->exprs++;
		return;
	}
	if (got && got->kind == want.kind &&
	    (want.kind == STKREC_CFA_NONE || want.kind == STKREC_CFA_END ||
	     (got->cfa_off == want.cfa_off && got->fp_off == want.fp_off)))
		return;
	if (c->mismatches++ < 10)
		cr_log_error("%#" PRIx64 ": readelf kind %u cfa+%u fp %d, rows kind %d cfa+%d fp %d",
			     loc, want.kind, want.cfa_off, want.fp_off, got ? got->kind : -1,
			     got ? got->cfa_off : -1, got ? got->fp_off : 0);
}

/* Tokens of a row; "r3 (rbx)" (a register rule) is one. */
static size_t tokens(char *line, char **tok, size_t max)
{
	size_t n = 0;
	char *s, *save;

	for (s = strtok_r(line, " \t\n", &save); s && n < max; s = strtok_r(NULL, " \t\n", &save)) {
		if (s[0] == '(' && n)
			continue;
		tok[n++] = s;
	}
	return n;
}

static struct cie *cie_of(struct cmp *c, int sect, uint64_t off)
{
	size_t i;

	for (i = 0; i < c->nr_cies; i++)
		if (c->cies[i].sect == sect && c->cies[i].off == off)
			return &c->cies[i];
	return NULL;
}

/* Every row readelf prints for path against rows; an FDE that adds no
 * row of its own is checked at its start against its CIE's row. */
static void compare_readelf(const char *path, const struct stkrec_cfi_row *rows, size_t nr,
			    struct cmp *c)
{
	char cmd[PATH_MAX + 64], line[4096], cols[64][16], *tok[70];
	struct cie *cie = NULL, *fde_cie = NULL;
	uint64_t off, lo = 0, hi = 0, loc;
	size_t ncols = 0, n, i;
	bool pending = false;
	int sect = -1;
	FILE *p;

	memset(c, 0, sizeof(*c));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "Contents of the ", 16)) {
			if (pending && fde_cie)
				check(c, rows, nr, sect, lo, fde_cie->row, fde_cie->signal);
			pending = false;
			sect = strstr(line, ".debug_frame") ? 1 : 0;
			continue;
		}
		n = tokens(line, tok, 70);
		if (n >= 4 && (!strcmp(tok[3], "CIE") || !strcmp(tok[3], "FDE"))) {
			if (pending && fde_cie)
				check(c, rows, nr, sect, lo, fde_cie->row, fde_cie->signal);
			pending = false;
			off = strtoull(tok[0], NULL, 16);
			if (!strcmp(tok[3], "CIE")) {
				cr_assert_lt(c->nr_cies, 64);
				cie = &c->cies[c->nr_cies++];
				*cie = (struct cie){ .sect = sect, .off = off,
						     .signal = n > 4 && strchr(tok[4], 'S') };
				continue;
			}
			cie = NULL;
			cr_assert_eq(sscanf(tok[4], "cie=%" SCNx64, &off), 1);
			cr_assert_eq(sscanf(tok[5], "pc=%" SCNx64 "..%" SCNx64, &lo, &hi), 2);
			fde_cie = cie_of(c, sect, off);
			cr_assert_not_null(fde_cie, "%s: FDE with an unknown CIE %" PRIx64, path, off);
			pending = fde_cie->has_row && lo && hi > lo;
			if (sect == 0) {
				if (c->nr_eh == c->cap_eh) {
					c->cap_eh = c->cap_eh ? 2 * c->cap_eh : 1024;
					c->eh = realloc(c->eh, c->cap_eh * sizeof(*c->eh));
					cr_assert_not_null(c->eh);
				}
				c->eh[c->nr_eh][0] = lo;
				c->eh[c->nr_eh++][1] = hi;
			}
			continue;
		}
		if (n >= 2 && !strcmp(tok[0], "LOC")) {
			for (ncols = 0, i = 2; i < n && ncols < 64; i++, ncols++)
				snprintf(cols[ncols], sizeof(cols[0]), "%s", tok[i]);
			continue;
		}
		if (n < 2 || strlen(tok[0]) != 16 || !isxdigit((unsigned char)tok[0][0]))
			continue;
		if (cie) {
			cie->row = expect(tok + 1, n - 1, cols, ncols);
			cie->has_row = true;
			continue;
		}
		if (!fde_cie)
			continue;
		pending = false;
		/* readelf prints a row an advance past the FDE's end opens */
		loc = strtoull(tok[0], NULL, 16);
		if (loc < hi)
			check(c, rows, nr, sect, loc, expect(tok + 1, n - 1, cols, ncols),
			      fde_cie->signal);
	}
	if (pending && fde_cie)
		check(c, rows, nr, sect, lo, fde_cie->row, fde_cie->signal);
	/* readelf exits 1 on some Debian libraries (libc) with nothing to say */
	pclose(p);
	cr_assert_geq(sect, 0, "readelf printed no CFI section of %s", path);
	free(c->eh);
	c->eh = NULL;
}

/* Rows sorted, strictly increasing, no equal neighbours, ending in GAP. */
static void well_formed(const struct stkrec_cfi_row *r, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		cr_assert_leq(r[i].kind, STKREC_CFA_GAP);
		if (r[i].kind != STKREC_CFA_SP && r[i].kind != STKREC_CFA_FP)
			cr_assert_eq(r[i].cfa_off, 0, "row %zu", i);
		if (!i)
			continue;
		cr_assert_gt(r[i].pc, r[i - 1].pc, "row %zu", i);
		cr_assert(r[i].kind != r[i - 1].kind || r[i].cfa_off != r[i - 1].cfa_off ||
			  r[i].fp_off != r[i - 1].fp_off, "rows %zu and %zu are equal", i - 1, i);
	}
	cr_assert_eq(r[nr - 1].kind, STKREC_CFA_GAP);
}

static void same_as_readelf(const char *path, size_t min_rows, struct cmp *out)
{
	struct stkrec_cfi_row *rows;
	struct cmp c;
	size_t nr;

	load(path, &rows, &nr);
	well_formed(rows, nr);
	compare_readelf(path, rows, nr, &c);
	cr_log_info("%s: %zu rows; %zu readelf rows compared, %zu expressions, %zu signal",
		    path, nr, c.compared, c.exprs, c.sig_rows);
	cr_expect_eq(c.mismatches, 0, "%s: %zu of %zu rows differ from readelf", path,
		     c.mismatches, c.compared);
	cr_expect_eq(c.sig_bad, 0, "%s: %zu signal-frame rows are not SIGNAL", path, c.sig_bad);
	cr_expect_geq(c.compared, min_rows, "%s: only %zu rows compared", path, c.compared);
	if (out)
		*out = c;
	free(rows);
}

Test(record_cfi, readelf_fpless_program)
{
	const char *bin = build("fpless", "-O2 -fomit-frame-pointer", NULL);
	struct stkrec_cfi_row *rows;
	size_t nr, i, deep = 0, fp = 0;

	same_as_readelf(bin, 15, NULL);
	load(bin, &rows, &nr);
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
	const char *bin = build("fp", "-O0 -fno-omit-frame-pointer", NULL);
	struct stkrec_cfi_row *rows;
	size_t nr, i, fp = 0;

	same_as_readelf(bin, 15, NULL);
	load(bin, &rows, &nr);
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
	need(path);
	same_as_readelf(path, 10, NULL);
}

Test(record_cfi, readelf_libc_and_ldso)
{
	struct cmp c;

	need(LIBC);
	same_as_readelf(LIBC, 20000, &c);
	cr_expect_geq(c.sig_rows, 1, "libc's __restore_rt is a signal frame");
	need(LDSO);
	same_as_readelf(LDSO, 1500, NULL);
}

Test(record_cfi, readelf_python_and_node)
{
	need(PYTHON);
	same_as_readelf(PYTHON, 50000, NULL);
	if (access(NODE, R_OK) == 0)
		same_as_readelf(NODE, 300000, NULL);
}

/* --- the special rows ---------------------------------------------------- */

static bool section(const char *path, const char *name, GElf_Shdr *out)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstrndx;
	Elf *elf;

	cr_assert_geq(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, out) && (n = elf_strptr(elf, shstrndx, out->sh_name)))
			found = !strcmp(n, name);
	}
	elf_end(elf);
	close(fd);
	return found;
}

static uint64_t symbol(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i;
	Elf *elf;

	cr_assert_geq(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	while (!addr && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, (int)i, &sym) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name) ?: "", name))
				addr = sym.st_value;
	}
	elf_end(elf);
	close(fd);
	return addr;
}

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

static uint8_t kind_at(const struct stkrec_cfi_row *rows, size_t nr, uint64_t pc)
{
	const struct stkrec_cfi_row *r = cfi__find(rows, nr, (uint32_t)pc);

	return r ? r->kind : 0xff;
}

/* Every lazy entry of .plt (after the 16-byte PLT0) is a PLT row. */
static void plt_rows(const char *path)
{
	struct stkrec_cfi_row *rows;
	const struct stkrec_cfi_row *r;
	GElf_Shdr sh;
	uint64_t a;
	size_t nr;

	cr_assert(section(path, ".plt", &sh), "%s has no .plt", path);
	cr_assert_gt(sh.sh_size, 16);
	load(path, &rows, &nr);
	r = cfi__find(rows, nr, (uint32_t)sh.sh_addr);
	cr_assert(r && r->kind == STKREC_CFA_SP && r->cfa_off == 16, "PLT0 pushes once");
	r = cfi__find(rows, nr, (uint32_t)sh.sh_addr + 6);
	cr_assert(r && r->kind == STKREC_CFA_SP && r->cfa_off == 24, "then jumps at rsp+24");
	for (a = sh.sh_addr + 16; a < sh.sh_addr + sh.sh_size; a++)
		cr_assert_eq(kind_at(rows, nr, a), STKREC_CFA_PLT, "%s: %#" PRIx64, path, a);
	free(rows);
}

Test(record_cfi, plt_is_plt)
{
	plt_rows(build("lazy", "-O2 -Wl,-z,lazy", NULL));
	need(LIBC);
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
	const char *bin = build("ibt", "-O2 -fcf-protection -Wl,-z,ibtplt -Wl,-z,lazy", NULL);
	struct stkrec_cfi_row *rows;
	const struct stkrec_cfi_row *r;
	int thr = plt_threshold(bin);
	GElf_Shdr sh;
	uint64_t a;
	size_t nr;

	cr_assert(section(bin, ".plt", &sh));
	cr_assert(thr > 0 && thr < 16, "no .plt expression in %s", bin);
	cr_log_info("IBT .plt threshold: %d", thr);
	if (thr == 11)
		cr_skip_test("this linker's IBT .plt has the usual threshold");
	load(bin, &rows, &nr);
	for (a = sh.sh_addr + 16; a < sh.sh_addr + sh.sh_size; a++) {
		r = cfi__find(rows, nr, (uint32_t)a);
		cr_assert_not_null(r);
		cr_assert_eq(r->kind, STKREC_CFA_SP, "%#" PRIx64, a);
		cr_assert_eq(r->cfa_off, (a & 15) >= (uint64_t)thr ? 16 : 8, "%#" PRIx64, a);
		cr_assert_eq(r->fp_off, 0);
	}
	free(rows);
	same_as_readelf(bin, 5, NULL);
}

Test(record_cfi, start_is_end)
{
	const char *bin = build("pie", "-O2 -fPIE -pie", NULL);
	struct stkrec_cfi_row *rows;
	uint64_t start = symbol(bin, "_start");
	size_t nr, i, ends = 0;

	cr_assert_neq(start, 0);
	load(bin, &rows, &nr);
	cr_assert_eq(kind_at(rows, nr, start), STKREC_CFA_END);
	cr_assert_eq(kind_at(rows, nr, start + 1), STKREC_CFA_END);
	free(rows);

	/* libc: clone3's and clone's child say the same */
	need(LIBC);
	load(LIBC, &rows, &nr);
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

	need(path);
	a = find_code(path, code, sizeof(code));
	cr_assert_neq(a, 0, "no rt_sigreturn in %s", path);
	load(path, &rows, &nr);
	cr_assert_eq(kind_at(rows, nr, a - 1), STKREC_CFA_SIGNAL, "%s", path);
	cr_assert_eq(kind_at(rows, nr, a), STKREC_CFA_SIGNAL);
	cr_assert_eq(kind_at(rows, nr, a + 8), STKREC_CFA_SIGNAL);
	cr_assert_eq(cfi__find(rows, nr, (uint32_t)a)->cfa_off, 0);
	cr_assert_neq(kind_at(rows, nr, a - 2), STKREC_CFA_SIGNAL);
	free(rows);
}

Test(record_cfi, restore_rt_is_signal)
{
	restore_rt(LIBC);
	restore_rt(LDSO);
}

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

	cr_assert(section(path, ".debug_frame", &sh));
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
	snprintf(out, sizeof(out), "%s/%s", dir, name);
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

	load(a, &ra, &na);
	load(b, &rb, &nb);
	same = na == nb && !memcmp(ra, rb, na * sizeof(*ra));
	free(ra);
	free(rb);
	return same;
}

Test(record_cfi, debug_frame_alone)
{
	const char *bin = build("dbg", "-O2 -fomit-frame-pointer -g -fno-asynchronous-unwind-tables",
				NULL);
	const char *eh = build("eh", "-O2 -fomit-frame-pointer", NULL);
	const char *patched;
	uint64_t mid = symbol(bin, "mid");
	struct stkrec_cfi_row *rows;
	GElf_Shdr sh;
	size_t nr, n;

	cr_assert(section(bin, ".debug_frame", &sh));
	cr_assert_neq(mid, 0);
	same_as_readelf(bin, 10, NULL);
	load(bin, &rows, &nr);
	cr_assert_eq(kind_at(rows, nr, mid), STKREC_CFA_SP, "mid() from .debug_frame");
	free(rows);
	/* the same code with its CFI in .eh_frame: the same rows */
	cr_assert(same_rows(bin, eh));
	/* and what .debug_frame says is what counts */
	patched = patch_debug_frame(bin, "dbg-patched", &n);
	cr_assert_geq(n, 2);
	cr_assert_not(same_rows(bin, patched));
	same_as_readelf(patched, 10, NULL);
}

Test(record_cfi, eh_frame_wins)
{
	char both_src[PATH_MAX];
	const char *both, *eh, *patched;
	GElf_Shdr sh;
	FILE *f;
	size_t n;

	/* gas writes the same CFI to both sections */
	snprintf(both_src, sizeof(both_src), "%s/both.c", dir);
	f = fopen(both_src, "w");
	cr_assert_not_null(f);
	fprintf(f, "__asm__(\".cfi_sections .eh_frame, .debug_frame\");\n%s", prog_src);
	fclose(f);
	both = build("both", "-O2 -fomit-frame-pointer -g", both_src);
	eh = build("eh", "-O2 -fomit-frame-pointer", NULL);
	cr_assert(section(both, ".debug_frame", &sh));
	cr_assert(section(both, ".eh_frame", &sh));
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

Test(record_cfi, eh_frame_wins_inside_a_debug_frame_fde)
{
	char asm_path[PATH_MAX], flags[2 * PATH_MAX];
	struct stkrec_cfi_row *rows;
	const struct stkrec_cfi_row *r;
	const char *bin;
	uint64_t f;
	size_t nr, i;
	FILE *out;

	snprintf(asm_path, sizeof(asm_path), "%s/overlap.s", dir);
	out = fopen(asm_path, "w");
	cr_assert_not_null(out);
	fputs(overlap_asm, out);
	fclose(out);
	snprintf(flags, sizeof(flags), "-O2 '%s'", asm_path);
	bin = build("overlap", flags, NULL);
	f = symbol(bin, "f_both");
	cr_assert_neq(f, 0);
	load(bin, &rows, &nr);
	well_formed(rows, nr);
	for (i = 0; i < 20; i++) {
		static const uint16_t eh[4] = { 8, 16, 16, 8 }; /* push, nop, pop, ret */
		uint64_t a = f - 4 + i;

		r = cfi__find(rows, nr, (uint32_t)a);
		cr_assert_not_null(r);
		cr_assert_eq(r->kind, STKREC_CFA_SP, "%#" PRIx64, a);
		cr_assert_eq(r->cfa_off, a >= f && a < f + 4 ? eh[a - f] : 48, "%#" PRIx64, a);
	}
	cr_assert_eq(kind_at(rows, nr, f + 16), STKREC_CFA_GAP);
	free(rows);
	same_as_readelf(bin, 5, NULL);
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

Test(record_cfi, rare_instructions)
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
	char asm_path[PATH_MAX], flags[2 * PATH_MAX];
	const struct stkrec_cfi_row *r;
	struct stkrec_cfi_row *rows;
	const char *bin;
	uint64_t a;
	size_t nr, i;
	FILE *out;

	snprintf(asm_path, sizeof(asm_path), "%s/rare.s", dir);
	out = fopen(asm_path, "w");
	cr_assert_not_null(out);
	fputs(rare_asm, out);
	fclose(out);
	snprintf(flags, sizeof(flags), "-O2 '%s'", asm_path);
	bin = build("rare", flags, NULL);
	load(bin, &rows, &nr);
	well_formed(rows, nr);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		a = symbol(bin, want[i].fn) + want[i].off;
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

	snprintf(out, sizeof(out), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, out);
	cr_assert_eq(system(cmd), 0);
	fd = open(out, O_WRONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, bytes, len, (off_t)at), (ssize_t)len);
	close(fd);
	return out;
}

Test(record_cfi, errors)
{
	const char *bin = build("prog", "-O2", NULL);
	static const uint8_t aarch64[2] = { EM_AARCH64, 0 };
	char text[PATH_MAX], empty_src[PATH_MAX];
	const char *p;
	FILE *f;

	snprintf(text, sizeof(text), "%s/text", dir);
	f = fopen(text, "w");
	cr_assert_not_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	cr_assert_eq(load_err(text), -ENOEXEC);
	cr_assert_eq(load_err(dir), -ENOEXEC);
	cr_assert_eq(load_err("/nonexistent/stkrec"), -ENOENT);

	/* another machine, a relocatable object */
	p = copy_with(bin, "arm", offsetof(Elf64_Ehdr, e_machine), aarch64, 2);
	cr_assert_eq(load_err(p), -ENOEXEC);
	cr_assert_eq(load_err(build("prog.o", "-O2 -c", NULL)), -ENOEXEC);

	/* no call-frame information at all */
	snprintf(empty_src, sizeof(empty_src), "%s/empty.c", dir);
	f = fopen(empty_src, "w");
	cr_assert_not_null(f);
	fputs("void _start(void) { for (;;); }\n", f);
	fclose(f);
	p = build("nocfi", "-O1 -nostdlib -static -fno-asynchronous-unwind-tables", empty_src);
	cr_assert_eq(load_err(p), -ENOENT);
	/* the same with it: a row and the end */
	p = build("cfi", "-O1 -nostdlib -static", empty_src);
	cr_assert_eq(load_err(p), 0);

	/* code above 4 GiB */
	p = build("high", "-O1 -nostdlib -static -Wl,-Ttext-segment=0x200000000", empty_src);
	cr_assert_eq(load_err(p), -E2BIG);
}

Test(record_cfi, fd_is_kept)
{
	struct stkrec_cfi_row *rows;
	size_t nr;
	int fd;

	need(LIBC);
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

/* The recorder loads tables while it records: large files load fast. */
Test(record_cfi, speed)
{
	const char *files[] = { LIBC, PYTHON, NODE };
	struct stkrec_cfi_row *rows;
	struct timespec a, b;
	size_t i, nr;
	double ms;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (access(files[i], R_OK))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &a);
		load(files[i], &rows, &nr);
		clock_gettime(CLOCK_MONOTONIC, &b);
		free(rows);
		ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
		cr_log_info("%s: %zu rows in %.1f ms", files[i], nr, ms);
		cr_expect_lt(ms, 2000, "%s: %.0f ms", files[i], ms);
	}
}
