// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the tests of cfi/cfi.c share (tests/util_cfi.h): a scratch
 * directory with a test program to build, loading a file's rows, and
 * binutils' reading of the same tables (readelf --debug-dump=frames-interp)
 * to compare every row with.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util_cfi.h"

/* Built with -O2 -fomit-frame-pointer this has rsp-based frames, and an
 * rbp-based one (alloca in mid()); -O0 gives rbp-based frames throughout. */
/* Built with -O2 -fomit-frame-pointer this has rsp-based frames, and an
 * rbp-based one (alloca in mid()); -O0 gives rbp-based frames throughout. */
const char cfit_prog_src[] =
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

char cfit_dir[] = "/tmp/stkrec-cfi-XXXXXX";
static char src[PATH_MAX];

void cfit_setup(void)
{
	FILE *f;

	cr_assert_not_null(mkdtemp(cfit_dir));
	snprintf(src, sizeof(src), "%s/prog.c", cfit_dir);
	f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs(cfit_prog_src, f);
	fclose(f);
	elf_version(EV_CURRENT);
}

void cfit_teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cfit_dir);
	if (system(cmd))
		cr_log_warn("cannot remove %s", cfit_dir);
}


/* dir/name from cc flags (src is appended unless flags name a source). */
const char *cfit_build(const char *name, const char *flags, const char *source)
{
	static char out[8][PATH_MAX];
	static int next;
	char cmd[3 * PATH_MAX];
	char *p = out[next++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", cfit_dir, name);
	snprintf(cmd, sizeof(cmd), "cc %s -o '%s' '%s' 2>/dev/null", flags, p,
		 source ? source : src);
	if (system(cmd))
		cr_skip_test("cannot build with: cc %s", flags);
	return p;
}

void cfit_load(const char *path, struct stkrec_cfi_row **rows, size_t *nr)
{
	int err = cfi__load_path(path, rows, nr);

	cr_assert_eq(err, 0, "%s: %s", path, strerror(-err));
	cr_assert_gt(*nr, 0);
}

void cfit_need(const char *path)
{
	if (access(path, R_OK))
		cr_skip_test("%s is not installed", path);
}

/* --- readelf's interpretation ---------------------------------------- */


/* A register rule column: "c-16" is offset(-16); u undefined, s same. */
static struct cfit_rule expect(char **f, size_t nf, char cols[][16], size_t ncols)
{
	const char *ra = "u", *rbp = "u";
	struct cfit_rule r = { .kind = STKREC_CFA_NONE };
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
		return (struct cfit_rule){ .kind = STKREC_CFA_END };
	if (!strcmp(f[0], "exp"))
		return (struct cfit_rule){ .kind = EXPR };
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
			return (struct cfit_rule){ .kind = STKREC_CFA_NONE };
		r.fp_off = (int8_t)(v / 8);
	}
	return r;
}

static bool in_eh(const struct cfit_cmp *c, uint64_t pc)
{
	size_t i;

	for (i = 0; i < c->nr_eh; i++)
		if (pc >= c->eh[i][0] && pc < c->eh[i][1])
			return true;
	return false;
}

static void check(struct cfit_cmp *c, const struct stkrec_cfi_row *rows, size_t nr, int sect,
		  uint64_t loc, struct cfit_rule want, bool signal)
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

static struct cfit_cie *cie_of(struct cfit_cmp *c, int sect, uint64_t off)
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
			    struct cfit_cmp *c)
{
	char cmd[PATH_MAX + 64], line[4096], cols[64][16], *tok[70];
	struct cfit_cie *cie = NULL, *fde_cie = NULL;
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
				*cie = (struct cfit_cie){ .sect = sect, .off = off,
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
void cfit_well_formed(const struct stkrec_cfi_row *r, size_t nr)
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

void cfit_same_as_readelf(const char *path, size_t min_rows, struct cfit_cmp *out)
{
	struct stkrec_cfi_row *rows;
	struct cfit_cmp c;
	size_t nr;

	cfit_load(path, &rows, &nr);
	cfit_well_formed(rows, nr);
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

bool cfit_section(const char *path, const char *name, GElf_Shdr *out)
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

uint64_t cfit_symbol(const char *path, const char *name)
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

uint8_t cfit_kind_at(const struct stkrec_cfi_row *rows, size_t nr, uint64_t pc)
{
	const struct stkrec_cfi_row *r = cfi__find(rows, nr, (uint32_t)pc);

	return r ? r->kind : 0xff;
}
/* cfit_dir/name built from prog.c and the assembly text asm (name.s). */
const char *cfit_build_asm(const char *name, const char *text)
{
	char path[PATH_MAX], flags[2 * PATH_MAX];
	FILE *out;

	snprintf(path, sizeof(path), "%s/%s.s", cfit_dir, name);
	out = fopen(path, "w");
	cr_assert_not_null(out);
	fputs(text, out);
	fclose(out);
	snprintf(flags, sizeof(flags), "-O2 '%s'", path);
	return cfit_build(name, flags, NULL);
}
