// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ELF files for the symbolizer: opening, build IDs, .gnu_debuglink, file
 * offset to address translation, MiniDebugInfo and function symbol tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym/sym_int.h"
#include "util/array.h"
#include "util/ranges.h"

/* Refuse absurd MiniDebugInfo: it holds only a symbol table. */
#define MINI_MAX_SIZE (256ull << 20)

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static bool has_section_data(Elf *elf, const char *name)
{
	GElf_Shdr shdr;

	if (!find_section(elf, name, &shdr))
		return false;
	return shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
}

static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB &&
		    shdr.sh_entsize && shdr.sh_size > shdr.sh_entsize)
			return true;
	}
	return false;
}

static void read_build_id(struct elf_file *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(f->elf, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) ||
			    !nh.n_descsz || nh.n_descsz > SYM_BUILD_ID_MAX)
				continue;
			memcpy(f->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
			f->build_id_size = nh.n_descsz;
			return;
		}
	}
}

int elf_file__open_fd(int fd, const char *path, struct elf_file **out)
{
	struct elf_file *f;
	struct stat st;

	*out = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		close(fd);
		return -ENOMEM;
	}
	f->fd = fd;
	elf_version(EV_CURRENT);
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		elf_file__close(f);
		return -ENOEXEC;
	}
	read_build_id(f);
	f->has_symtab = has_symtab(f->elf);
	f->has_dwarf = has_section_data(f->elf, ".debug_info") ||
		       has_section_data(f->elf, ".zdebug_info");
	/* Keep descriptors only where libdw may want the file's directory
	 * (.gnu_debugaltlink, split DWARF): a report over thousands of
	 * objects must not run out of them. The image is whole in memory
	 * (mapped or read) before the descriptor goes: ELF_C_FDREAD reads
	 * what is not mapped, then lets go of the descriptor. */
	if (!f->has_dwarf && !elf_cntl(f->elf, ELF_C_FDREAD)) {
		close(f->fd);
		f->fd = -1;
	}
	*out = f;
	return 0;
}

int elf_file__open(const char *path, struct elf_file **out)
{
	/* O_NONBLOCK: a FIFO at a recorded path must not hang the report */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	*out = NULL;
	if (fd < 0)
		return -errno;
	return elf_file__open_fd(fd, path, out);
}

void elf_file__close(struct elf_file *f)
{
	if (!f)
		return;
	if (f->mini)
		elf_end(f->mini);
	free(f->mini_buf);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

bool elf_file__build_id_is(const struct elf_file *f, const uint8_t *id,
			   uint8_t size)
{
	return size && f->build_id_size == size &&
	       !memcmp(f->build_id, id, size);
}

int elf_file__debuglink(const struct elf_file *f, const char **name,
			uint32_t *crc)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = find_section(f->elf, ".gnu_debuglink", &shdr);
	Elf_Data *d;
	const char *s;
	size_t len, crc_off;

	if (!scn || shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < 8)
		return -ENOENT;
	s = d->d_buf;
	len = strnlen(s, d->d_size);
	crc_off = (len + 4) & ~(size_t)3; /* NUL, then pad to 4 */
	if (!len || crc_off + 4 > d->d_size || memchr(s, '/', len))
		return -ENOENT;
	memcpy(crc, s + crc_off, 4);
	if (elf_getident(f->elf, NULL)[EI_DATA] == ELFDATA2MSB)
		*crc = __builtin_bswap32(*crc);
	*name = s;
	return 0;
}

/*
 * A separate debug file keeps the PT_LOAD headers' addresses, but strip
 * tools rewrite their p_offset/p_filesz (objcopy sets both to 0 for the
 * segments it emptied). Such headers only count when they still describe
 * the offset (p_filesz > 0) in an executable segment; otherwise we cannot
 * place the offset and refuse rather than guess.
 */
int elf_file__offset_to_vaddr(const struct elf_file *f, uint64_t off,
			      bool debug_file, uint64_t *vaddr)
{
	size_t i, n;
	bool found = false, found_x = false;

	if (elf_getphdrnum(f->elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		bool x;

		if (!gelf_getphdr(f->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		x = ph.p_flags & PF_X;
		if (debug_file && !x)
			continue;
		if (off < ph.p_offset || off - ph.p_offset >= ph.p_filesz)
			continue;
		if (found && (found_x || !x))
			continue;
		*vaddr = off - ph.p_offset + ph.p_vaddr;
		found = true;
		found_x = x;
	}
	return found ? 0 : -ENOENT;
}

static int xz_decode(const uint8_t *in, size_t in_len, void **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = in_len * 4 + 4096;
	uint8_t *buf = NULL, *nb;
	lzma_ret r;

	if (lzma_stream_decoder(&strm, MINI_MAX_SIZE, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = in_len;
	do {
		if (!buf || !strm.avail_out) {
			size_t used = buf ? cap : 0;

			if (buf)
				cap *= 2;
			if (cap > MINI_MAX_SIZE || !(nb = realloc(buf, cap))) {
				r = LZMA_MEM_ERROR;
				break;
			}
			buf = nb;
			strm.next_out = buf + used;
			strm.avail_out = cap - used;
		}
		r = lzma_code(&strm, LZMA_FINISH);
	} while (r == LZMA_OK);
	*out_len = cap - strm.avail_out;
	lzma_end(&strm);
	if (r != LZMA_STREAM_END) {
		free(buf);
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
	}
	*out = buf;
	return 0;
}

int elf_file__load_minidebuginfo(struct elf_file *f)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = find_section(f->elf, ".gnu_debugdata", &shdr);
	Elf_Data *d;
	size_t len;
	int err;

	if (f->mini)
		return 0;
	if (!scn || shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -ENOENT;
	err = xz_decode(d->d_buf, d->d_size, &f->mini_buf, &len);
	if (err)
		return err;
	f->mini = elf_memory(f->mini_buf, len);
	if (!f->mini || elf_kind(f->mini) != ELF_K_ELF) {
		if (f->mini)
			elf_end(f->mini);
		f->mini = NULL;
		free(f->mini_buf);
		f->mini_buf = NULL;
		return -EBADMSG;
	}
	return 0;
}

/* ---- function symbol tables ------------------------------------------- */

/* "foo@@GLIBC_2.34" / "foo@GLIBC_2.2.5" (symbol versions written into
 * .symtab by .symver) name the function foo. */
static const char *unversioned(struct sym_table *t, const char *name)
{
	const char *at = strchr(name, '@');

	if (!at || at == name)
		return name;
	if (ARRAY_RESERVE(t->owned, t->owned_cap, t->nowned + 1))
		return NULL;
	t->owned[t->nowned] = strndup(name, at - name);
	return t->owned[t->nowned] ? t->owned[t->nowned++] : NULL;
}

static uint8_t bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

/* Bound of the section that holds sym: [sh_addr, sh_addr + sh_size). */
static bool section_bounds(Elf *elf, size_t shndx, uint64_t *start,
			   uint64_t *end)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC))
		return false;
	*start = shdr.sh_addr;
	*end = shdr.sh_addr + shdr.sh_size;
	return true;
}

static int add_symbols(struct sym_table *t, Elf *elf, Elf_Scn *scn,
		       const GElf_Shdr *shdr)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (!d || !shdr->sh_entsize)
		return 0;
	n = shdr->sh_size / shdr->sh_entsize;
	for (i = 1; i < n; i++) {
		struct sym_entry e;
		GElf_Sym sym;
		uint64_t start, end;
		int type;

		if (!gelf_getsym(d, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_value ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		if (!section_bounds(elf, sym.st_shndx, &start, &end) ||
		    sym.st_value < start || sym.st_value >= end)
			continue;
		e.name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!e.name || !*e.name)
			continue;
		e.name = unversioned(t, e.name);
		if (!e.name)
			return -ENOMEM;
		e.addr = sym.st_value;
		e.size = sym.st_size;
		e.limit = end;
		e.rank = bind_rank(GELF_ST_BIND(sym.st_info));
		if (ARRAY_PUSH(t->v, t->n, t->cap, e))
			return -ENOMEM;
	}
	return 0;
}

int sym_table__add_elf(struct sym_table *t, Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type)
			continue;
		err = add_symbols(t, elf, scn, &shdr);
		if (err)
			return err;
	}
	return 0;
}

/* Address order; at one address the preferred symbol first: global, weak,
 * local, then by name, so the choice never depends on input order. */
static int sym_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return 0;
}

int sym_table__finalize(struct sym_table *t)
{
	size_t i, j = 0;
	uint64_t max = 0;

	if (!t->n)
		return 0;
	qsort(t->v, t->n, sizeof(*t->v), sym_cmp);
	for (i = 0; i < t->n; i++) {
		if (j && t->v[j - 1].addr == t->v[i].addr &&
		    t->v[j - 1].size == t->v[i].size &&
		    !strcmp(t->v[j - 1].name, t->v[i].name))
			continue; /* .dynsym and MiniDebugInfo overlap */
		t->v[j++] = t->v[i];
	}
	t->n = j;
	free(t->maxend);
	t->maxend = malloc(t->n * sizeof(*t->maxend));
	if (!t->maxend)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		if (t->v[i].size && t->v[i].addr + t->v[i].size > max)
			max = t->v[i].addr + t->v[i].size;
		t->maxend[i] = max;
	}
	return 0;
}

_Static_assert(offsetof(struct sym_entry, addr) == 0, "ranges__after() reads addr first");

/* Index of the last symbol with addr <= a, or -1. */
static long last_at_or_below(const struct sym_table *t, uint64_t a)
{
	return (long)ranges__after(t->v, t->n, sizeof(*t->v), a) - 1;
}

/* A size-0 symbol extends to the next symbol or its section's end, and only
 * when no sized symbol starts at the same address. */
static const struct sym_entry *find_unsized(const struct sym_table *t,
					    long idx, uint64_t a)
{
	const struct sym_entry *best = NULL;
	uint64_t start = t->v[idx].addr;
	long i;

	for (i = idx; i >= 0 && t->v[i].addr == start; i--) {
		if (t->v[i].size)
			return NULL;
		if (a < t->v[i].limit)
			best = &t->v[i];
	}
	return best;
}

const struct sym_entry *sym_table__find(const struct sym_table *t, uint64_t a)
{
	const struct sym_entry *best = NULL;
	long idx = last_at_or_below(t, a), i;

	if (idx < 0)
		return NULL;
	/* The containing sized symbol with the highest start (innermost);
	 * walking down, the preferred one of a group comes last. */
	for (i = idx; i >= 0 && t->maxend[i] > a; i--) {
		const struct sym_entry *e = &t->v[i];

		if (best && e->addr != best->addr)
			break;
		if (e->size && a - e->addr < e->size)
			best = e;
	}
	if (best || !t->complete)
		return best;
	return find_unsized(t, idx, a);
}

void sym_table__free(struct sym_table *t)
{
	for (size_t i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->v);
	free(t->maxend);
	memset(t, 0, sizeof(*t));
}
