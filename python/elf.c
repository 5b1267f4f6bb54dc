// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The interpreter's ELF file: its symbols, its initial data and its
 * CPython version (python.h says what is trusted).
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "python/python_int.h"

static const char *const sym_names[PS__COUNT] = {
	[PS_RUNTIME] = "_PyRuntime",
	[PS_VERSION] = "Py_Version",
	[PS_EVAL] = "_PyEval_EvalFrameDefault",
	[PS_EVAL_COLD] = "_PyEval_EvalFrameDefault.cold",
	[PS_CODE_TYPE] = "PyCode_Type",
	[PS_UNICODE_TYPE] = "PyUnicode_Type",
	[PS_BYTES_TYPE] = "PyBytes_Type",
	[PS_INITIALIZE] = "Py_Initialize",
	[PS_FRAME_GETCODE] = "PyFrame_GetCode",
	[PS_NEWREF] = "Py_NewRef",
	[PS_PRINTREFS] = "_Py_PrintReferences",
};

static int load_phdrs(struct py_elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(e->elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		if (e->nloads == PY_MAX_LOADS)
			return -ENOEXEC;
		e->loads[e->nloads++] = ph;
	}
	return e->nloads ? 0 : -ENOEXEC;
}

int py_elf__open(const char *path, struct py_elf *e)
{
	const char *ident;
	int err;

	memset(e, 0, sizeof(*e));
	elf_version(EV_CURRENT);
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -errno;
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	ident = e->elf && elf_kind(e->elf) == ELF_K_ELF ? elf_getident(e->elf, NULL) : NULL;
	/* The BPF walker reads 8-byte pointers of the machine's order. */
	if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB) {
		py_elf__close(e);
		return -ENOEXEC;
	}
	err = load_phdrs(e);
	if (err) {
		py_elf__close(e);
		return err;
	}
	e->has_symtab = py_elf__syms(e->elf, e->syms);
	return 0;
}

void py_elf__close(struct py_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	e->elf = NULL;
	e->fd = -1;
}

static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct py_sym *syms)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n, i;

	if (!d || !d->d_buf || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		const char *name;
		GElf_Sym s;
		int k;

		if (!gelf_getsym(d, i, &s) || s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		for (k = 0; k < PS__COUNT; k++) {
			if (syms[k].found || strcmp(name, sym_names[k]))
				continue;
			syms[k].value = s.st_value;
			syms[k].size = s.st_size;
			syms[k].found = true;
		}
	}
}

bool py_elf__syms(Elf *elf, struct py_sym syms[PS__COUNT])
{
	Elf_Scn *scn = NULL;
	bool symtab = false;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		scan_symtab(elf, scn, &sh, syms);
		symtab |= sh.sh_type == SHT_SYMTAB;
	}
	return symtab;
}

int py_elf__read(const struct py_elf *e, uint64_t vaddr, void *buf, size_t len)
{
	int i;

	for (i = 0; i < e->nloads; i++) {
		const GElf_Phdr *ph = &e->loads[i];
		Elf_Data *d;

		if (vaddr < ph->p_vaddr || vaddr - ph->p_vaddr > ph->p_filesz ||
		    len > ph->p_filesz - (vaddr - ph->p_vaddr))
			continue;
		d = elf_getdata_rawchunk(e->elf, ph->p_offset + (vaddr - ph->p_vaddr), len,
					 ELF_T_BYTE);
		if (!d || d->d_size != len)
			return -ENOENT;
		memcpy(buf, d->d_buf, len);
		return 0;
	}
	return -ENOENT;
}

/* A decimal number of 1 to 3 digits at *p, which moves past it. */
static bool number(const char **p, unsigned *v)
{
	int n;

	for (n = 0, *v = 0; **p >= '0' && **p <= '9'; n++, (*p)++) {
		if (n == 3)
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return n > 0;
}

/* "python3.11", "libpython3.7m.so.1.0": the digits after the prefix. */
static bool parse_name(const char *base, struct py_version *v)
{
	unsigned major, minor;

	if (!strncmp(base, "lib", 3))
		base += 3;
	if (strncmp(base, "python", 6))
		return false;
	base += 6;
	if (!number(&base, &major) || *base++ != '.' || !number(&base, &minor) || major > 255 ||
	    minor > 255)
		return false;
	memset(v, 0, sizeof(*v));
	v->major = major;
	v->minor = minor;
	return true;
}

bool py_name_version(const char *path, struct py_version *v)
{
	const char *slash = strrchr(path, '/');

	return parse_name(slash ? slash + 1 : path, v);
}

static const char *soname(const struct py_elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (gelf_getdyn(d, i, &dyn) && dyn.d_tag == DT_SONAME)
				return elf_strptr(e->elf, sh.sh_link, dyn.d_un.d_val);
		}
	}
	return NULL;
}

/* Py_Version: PY_VERSION_HEX, in the file's read-only data (3.11+). */
static int version_symbol(const struct py_elf *e, struct py_version *v)
{
	const struct py_sym *s = &e->syms[PS_VERSION];
	uint8_t b[4];

	if (s->size < 4 || py_elf__read(e, s->value, b, 4))
		return PY_EVERSION;
	v->hex = b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
	v->major = v->hex >> 24;
	v->minor = v->hex >> 16;
	v->micro = v->hex >> 8;
	/* Py_Version came with 3.11 */
	return v->major == 3 && v->minor >= 11 ? 0 : PY_EVERSION;
}

/* A version told by the name must be that of the exports. */
static bool exports_agree(const struct py_elf *e, int minor)
{
	if (minor >= 11)
		return false; /* it would have Py_Version */
	if (minor < PY_MINOR_MIN)
		return true;  /* refused anyway */
	return e->syms[PS_FRAME_GETCODE].found == (minor >= 9) &&
	       e->syms[PS_NEWREF].found == (minor >= 10);
}

int py_elf__version(const struct py_elf *e, const char *path, struct py_version *v)
{
	const char *so = soname(e);
	int err;

	memset(v, 0, sizeof(*v));
	if (!e->syms[PS_INITIALIZE].found)
		return PY_ENOTPY;
	if (e->syms[PS_VERSION].found) {
		err = version_symbol(e, v);
	} else if ((so && py_name_version(so, v)) || py_name_version(path, v)) {
		err = v->major == 3 && exports_agree(e, v->minor) ? 0 : PY_EVERSION;
	} else {
		err = PY_EVERSION; /* CPython, but which? */
	}
	if (err)
		return err;
	if (v->major != 3 || v->minor < PY_MINOR_MIN || v->minor > PY_MINOR_MAX)
		return PY_EVERSION;
	return 0;
}
