/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the symbolizer test files (header-only, as report_run.h): a
 * private directory, the fixtures of tests/symfix/ compiled into it, and
 * what the files themselves say (symbols, offsets, build IDs, read here
 * with libelf, independently of the code under test).
 */
#ifndef STKREC_TESTS_SYM_RUN_H
#define STKREC_TESTS_SYM_RUN_H

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym/sym.h"

static char dir[64]; /* "/tmp/stkrec-symtest-XXXXXX" */

static inline void setup(void)
{
	strcpy(dir, "/tmp/stkrec-symtest-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	elf_version(EV_CURRENT);
}

static inline void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		cr_log_warn("could not remove %s", dir);
}

static inline void sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	cr_assert_eq(rc, 0, "command failed (%d): %s", rc, cmd);
}

static inline const char *srcdir(void)
{
	const char *s = getenv("STKREC_SRCDIR");

	return s && *s ? s : ".";
}

/* dir/name, in a rotating set of buffers. */
static inline const char *tpath(const char *name)
{
	static char bufs[8][PATH_MAX];
	static int i;
	char *b = bufs[i++ % 8];

	snprintf(b, PATH_MAX, "%s/%s", dir, name);
	return b;
}

/* Compile tests/symfix/src into dir/out. */
static inline void build(const char *src, const char *out, const char *flags)
{
	sh("cc %s -o '%s' '%s/tests/symfix/%s'", flags, tpath(out), srcdir(), src);
}

#define PIE_FLAGS "-O1 -g -fPIE -pie -Wl,--build-id"

struct oracle_sym {
	uint64_t vaddr;
	uint64_t size;
	uint64_t offset; /* file offset of the symbol's middle */
};

/* Find name in path's .symtab or .dynsym and turn its middle into a file
 * offset through the PT_LOAD headers. */
static inline bool oracle_find(const char *path, const char *name, struct oracle_sym *o)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t i, n;

	cr_assert_not_null(elf, "%s: %s", path, elf_errmsg(-1));
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			gelf_getsym(d, i, &s);
			if (s.st_value && !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name)) {
				o->vaddr = s.st_value;
				o->size = s.st_size;
				found = true;
				break;
			}
		}
	}
	elf_getphdrnum(elf, &n);
	for (i = 0; found && i < n; i++) {
		GElf_Phdr ph;

		gelf_getphdr(elf, i, &ph);
		if (ph.p_type == PT_LOAD && o->vaddr >= ph.p_vaddr &&
		    o->vaddr < ph.p_vaddr + ph.p_filesz) {
			o->offset = o->vaddr - ph.p_vaddr + ph.p_offset + o->size / 2;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static inline uint64_t offset_of(const char *path, const char *name)
{
	struct oracle_sym o = { 0 };

	cr_assert(oracle_find(path, name, &o), "%s not in %s", name, path);
	cr_assert_gt(o.size, 0);
	cr_assert_gt(o.offset, 0);
	return o.offset;
}

static inline uint8_t build_id_of(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint8_t size = 0;

	while (!size && elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, no, dof;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &no, &dof))) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 20) {
				memcpy(id, (char *)d->d_buf + dof, nh.n_descsz);
				size = nh.n_descsz;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return size;
}

/* Hex path component of a build ID: "xx/rest". */
static inline void build_id_hex(const uint8_t *id, uint8_t size, char *out)
{
	int n = sprintf(out, "%02x/", id[0]);

	for (int i = 1; i < size; i++)
		n += sprintf(out + n, "%02x", id[i]);
}

static inline struct symbolizer *new_sym(const char *symfs, const char *debug_dir,
				  bool inlines, bool srclines)
{
	struct symbolizer_opts o = {
		.symfs = symfs, .debug_dir = debug_dir ? debug_dir : tpath("nodebug"),
		.inlines = inlines, .srclines = srclines,
	};
	struct symbolizer *s;

	cr_assert_eq(symbolizer__new(&o, &s), 0);
	return s;
}

#endif /* STKREC_TESTS_SYM_RUN_H */
