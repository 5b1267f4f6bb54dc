// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The symbol pack in the symbolizer: raw answers taken from a binary
 * (symbolizer__lookup_raw) and loaded into another symbolizer name every
 * offset exactly as the binary does, under every combination of --inline
 * and --srcline, C++ names included, once the binary is gone or replaced;
 * an offset the pack does not hold is never named from it.
 */
#include "tests/sym_run.h"

/* File offsets of the .text section of path: [*lo, *hi). */
static void text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	cr_assert_not_null(elf);
	elf_getshdrstrndx(elf, &shstrndx);
	*lo = *hi = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".text")) {
			*lo = sh.sh_offset;
			*hi = sh.sh_offset + sh.sh_size;
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert_lt(*lo, *hi, "%s has no .text", path);
}

static struct symbolizer *new_opts(const char *symfs, bool inlines, bool srclines, bool raw)
{
	struct symbolizer_opts o = {
		.symfs = symfs, .debug_dir = tpath("nodebug"), .inlines = inlines,
		.srclines = srclines, .raw_names = raw,
	};
	struct symbolizer *s;

	cr_assert_eq(symbolizer__new(&o, &s), 0);
	return s;
}

/* The packer's answers for every offset of exe's .text, loaded into dst as
 * one object; returns how many offsets it named. */
static unsigned pack_text(struct symbolizer *packer, struct symbolizer *dst, const char *exe,
			  const uint8_t *id, uint8_t idn)
{
	struct sym_raw raw;
	uint64_t lo, hi, off, last = 0;
	unsigned named = 0;
	uint32_t obj;
	bool dwarf = false;

	text_range(exe, &lo, &hi);
	cr_assert_eq(symbolizer__pack_object(dst, exe, id, idn, true, &obj), 0);
	for (off = lo; off < hi; off++) {
		int n = symbolizer__lookup_raw(packer, exe, id, idn, off, &raw, &dwarf);

		cr_assert_geq(n, 0);
		if (!n)
			continue;
		cr_assert(dwarf, "the binary has DWARF");
		cr_assert_eq(symbolizer__pack_address(dst, obj, off, &raw), 1);
		last = off;
		named++;
	}
	cr_assert_gt(named, 0);
	cr_assert_eq(symbolizer__pack_address(dst, obj, last, &raw), 0,
		     "an offset held already is not added twice");
	return named;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Every offset named alike by the binary and by its pack, for one set of
 * options. */
static void compare(const char *exe, const uint8_t *id, uint8_t idn, struct symbolizer *packer,
		    bool inlines, bool srclines, bool has_inlines)
{
	struct symbolizer *file = new_opts(NULL, inlines, srclines, false);
	struct symbolizer *pack = new_opts(tpath("empty"), inlines, srclines, false);
	struct sym_frame a[16], b[16];
	struct symbolizer_stats st;
	uint64_t lo, hi, off;
	unsigned chains = 0;
	int na, nb, i;

	pack_text(packer, pack, exe, id, idn);
	text_range(exe, &lo, &hi);
	for (off = lo; off < hi; off++) {
		na = symbolizer__resolve(file, exe, id, idn, off, a, 16);
		nb = symbolizer__resolve(pack, exe, id, idn, off, b, 16);
		cr_assert_eq(na, nb, "+0x%lx: %d frames from the file, %d from the pack",
			     (unsigned long)off, na, nb);
		chains += na > 1;
		for (i = 0; i < na; i++) {
			cr_assert_str_eq(a[i].name, b[i].name, "+0x%lx frame %d", (unsigned long)off, i);
			cr_assert(same_str(a[i].file, b[i].file), "+0x%lx frame %d: %s vs %s",
				  (unsigned long)off, i, a[i].file, b[i].file);
			cr_assert_eq(a[i].line, b[i].line);
			cr_assert_eq(a[i].inlined, b[i].inlined);
		}
	}
	if (inlines && has_inlines)
		cr_assert_gt(chains, 0, "no inline chain met: the test tests nothing");
	symbolizer__stats(pack, &st);
	cr_assert_eq(st.modules_found, 0);
	cr_assert_eq(st.modules_packed, 1);
	cr_assert_gt(st.resolved, 0);
	cr_assert_eq(st.resolved_pack, st.resolved);
	symbolizer__free(file);
	symbolizer__free(pack);
}

static void all_options(const char *path, bool has_inlines)
{
	struct symbolizer *packer = new_opts(NULL, true, true, true);
	char exe[PATH_MAX];
	uint8_t id[20], idn;

	snprintf(exe, sizeof(exe), "%s", path); /* tpath() reuses its buffers */
	idn = build_id_of(exe, id);

	sh("mkdir -p '%s'", tpath("empty"));
	for (int k = 0; k < 4; k++)
		compare(exe, id, idn, packer, k & 1, k & 2, has_inlines);
	symbolizer__free(packer);
}

TestSuite(sym_pack, .init = setup, .fini = teardown);

Test(sym_pack, inline_chains_and_lines_as_the_binary)
{
	build("inline.c", "inl", "-O2 -g -fPIE -pie -Wl,--build-id");
	all_options(tpath("inl"), true);
}

Test(sym_pack, cxx_names_demangled_as_from_the_binary)
{
	char exe[PATH_MAX];
	struct symbolizer *packer = new_opts(NULL, true, true, true);
	struct symbolizer *pack = new_opts(tpath("empty"), false, false, false);
	uint8_t id[20], idn;
	struct sym_raw raw;
	struct sym_frame f[4];
	uint64_t off;

	snprintf(exe, sizeof(exe), "%s", tpath("cxx"));
	if (system("command -v c++ >/dev/null"))
		cr_skip_test("no C++ compiler");
	sh("c++ -O1 -g -Wl,--build-id -o '%s' '%s/tests/symfix/cxx.cc'", exe, srcdir());
	idn = build_id_of(exe, id);
	off = offset_of(exe, "_ZN6symfix6Widget4spinEi");
	/* the pack holds the name as the binary spells it ... */
	cr_assert_eq(symbolizer__lookup_raw(packer, exe, id, idn, off, &raw, NULL), 1);
	cr_assert_str_eq(raw.sym_name, "_ZN6symfix6Widget4spinEi");
	/* ... and a report demangles it as it would the binary's */
	pack_text(packer, pack, exe, id, idn);
	cr_assert_eq(symbolizer__resolve(pack, exe, id, idn, off, f, 4), 1);
	cr_assert_str_eq(f[0].name, "symfix::Widget::spin(int)");
	symbolizer__free(pack);
	symbolizer__free(packer);
	all_options(exe, false);
}

/* The binary was rebuilt since the recording: its file has another build
 * ID, so the pack names the frames, and the stats say which file differs. */
Test(sym_pack, replaced_binary_named_from_the_pack)
{
	char exe[PATH_MAX];
	struct symbolizer *packer = new_opts(NULL, false, false, true);
	struct symbolizer *pack = new_opts(NULL, false, false, false);
	struct symbolizer_stats st;
	uint8_t id[20], idn;
	struct sym_raw raw;
	struct sym_frame f[4];
	uint64_t off;
	uint32_t obj;

	snprintf(exe, sizeof(exe), "%s", tpath("prog"));
	build("prog.c", "prog", PIE_FLAGS);
	idn = build_id_of(exe, id);
	off = offset_of(exe, "symfix_beta");
	cr_assert_eq(symbolizer__lookup_raw(packer, exe, id, idn, off, &raw, NULL), 1);
	cr_assert_eq(symbolizer__pack_object(pack, exe, id, idn, false, &obj), 0);
	cr_assert_eq(symbolizer__pack_address(pack, obj, off, &raw), 1);
	build("other.c", "prog", PIE_FLAGS); /* same path, another build */
	cr_assert_eq(symbolizer__resolve(pack, exe, id, idn, off, f, 4), 1);
	cr_assert_str_eq(f[0].name, "symfix_beta");
	/* the pack's symbol covers off + 1 too, but only what it holds counts */
	cr_assert_eq(symbolizer__resolve(pack, exe, id, idn, off + 1, f, 4), 0);
	symbolizer__stats(pack, &st);
	cr_assert_eq(st.buildid_mismatches, 1);
	cr_assert_eq(st.modules_mismatched, 0);
	cr_assert_eq(st.modules_mismatched_packed, 1);
	cr_assert_str_eq(st.first_mismatched_packed, exe);
	cr_assert_eq(st.resolved_pack, 1);
	cr_assert_eq(st.unresolved, 1);
	symbolizer__free(pack);
	symbolizer__free(packer);
}

/* A file with the right build ID but no DWARF, a pack made with it: lines
 * come from the pack when asked for, names from the file otherwise. */
Test(sym_pack, pack_with_dwarf_first_when_lines_are_wanted)
{
	char exe[PATH_MAX];
	struct symbolizer *packer = new_opts(NULL, true, true, true);
	struct symbolizer *plain, *lines;
	struct symbolizer_stats st;
	struct sym_frame f[4];
	uint8_t id[20], idn;
	uint64_t off;

	snprintf(exe, sizeof(exe), "%s", tpath("inl"));
	build("inline.c", "inl", "-O2 -g -fPIE -pie -Wl,--build-id");
	idn = build_id_of(exe, id);
	off = offset_of(exe, "inl_deep");
	plain = new_opts(NULL, false, false, false);
	lines = new_opts(NULL, false, true, false);
	pack_text(packer, plain, exe, id, idn);
	pack_text(packer, lines, exe, id, idn);
	/* a new file: the packer's strings still point into the old one */
	sh("strip --strip-debug -o '%s.new' '%s' && mv '%s.new' '%s'", exe, exe, exe, exe);
	cr_assert_eq(build_id_of(exe, id), idn, "strip keeps the build ID");
	cr_assert_eq(symbolizer__resolve(lines, exe, id, idn, off, f, 4), 1);
	cr_assert_str_eq(f[0].name, "inl_deep");
	cr_assert_gt(f[0].line, 0, "the line comes from the pack");
	symbolizer__stats(lines, &st);
	cr_assert_eq(st.modules_found, 1);
	cr_assert_eq(st.resolved_pack, 1);
	cr_assert_eq(symbolizer__resolve(plain, exe, id, idn, off, f, 4), 1);
	cr_assert_str_eq(f[0].name, "inl_deep");
	symbolizer__stats(plain, &st);
	cr_assert_eq(st.resolved_pack, 0, "the file names it: the pack is not needed");
	symbolizer__free(plain);
	symbolizer__free(lines);
	symbolizer__free(packer);
}

Test(sym_pack, bad_arguments)
{
	struct symbolizer *s = new_opts(NULL, false, false, false);
	struct sym_raw raw = { .nframes = SYM_RAW_MAX_FRAMES + 1 };
	uint32_t obj;

	cr_assert_eq(symbolizer__pack_object(s, NULL, NULL, 0, false, &obj), -EINVAL);
	cr_assert_eq(symbolizer__pack_object(s, "/x", NULL, 4, false, &obj), -EINVAL);
	cr_assert_eq(symbolizer__pack_address(s, 0, 0, &raw), -EINVAL, "no object 0 yet");
	cr_assert_eq(symbolizer__pack_object(s, "/x", NULL, 0, false, &obj), 0);
	cr_assert_eq(symbolizer__pack_address(s, obj, 0, &raw), -EINVAL, "too many frames");
	cr_assert_eq(symbolizer__lookup_raw(s, "/x", NULL, 0, 0, NULL, NULL), -EINVAL);
	cr_assert_eq(symbolizer__lookup_raw(s, "/nonexistent/x", NULL, 0, 0, &raw, NULL), 0);
	symbolizer__free(s);
}
