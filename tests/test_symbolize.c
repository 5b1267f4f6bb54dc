// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer tests on real ELF files: the fixtures in tests/symfix/ are
 * compiled at test time into a private directory, the expected names and
 * offsets come from the files themselves (symbol tables and PT_LOAD headers
 * read here with libelf, independently of the code under test).
 */
#include "tests/sym_run.h"

/* Resolve to exactly one frame named `want`. */
static void expect_name(struct symbolizer *s, const char *path,
			const uint8_t *id, uint8_t id_size, uint64_t off,
			const char *want)
{
	struct sym_frame f[4];
	int n = symbolizer__resolve(s, path, id, id_size, off, f, 4);

	cr_assert_eq(n, 1, "%s+0x%lx: %d frames, want %s", path,
		     (unsigned long)off, n, want);
	cr_assert_str_eq(f[0].name, want);
	cr_assert_not(f[0].inlined);
}

static void expect_none(struct symbolizer *s, const char *path,
			const uint8_t *id, uint8_t id_size, uint64_t off)
{
	struct sym_frame f[4];
	int n = symbolizer__resolve(s, path, id, id_size, off, f, 4);

	cr_assert_eq(n, 0, "%s+0x%lx: named %s, must be unknown", path,
		     (unsigned long)off, n > 0 ? f[0].name : "?");
}

static const char *const prog_funcs[] = { "symfix_alpha", "symfix_beta",
					  "symfix_local", "main" };

TestSuite(sym_elf, .init = setup, .fini = teardown);

Test(sym_elf, pie_offsets_name_exact_functions)
{
	const char *exe = tpath("prog");
	struct symbolizer *s;
	uint8_t id[20];
	uint8_t idn;

	build("prog.c", "prog", PIE_FLAGS);
	idn = build_id_of(exe, id);
	cr_assert_eq(idn, 20);
	s = new_sym(NULL, NULL, false, false);
	for (size_t i = 0; i < 4; i++) {
		uint64_t off = offset_of(exe, prog_funcs[i]);

		expect_name(s, exe, id, idn, off, prog_funcs[i]);
		/* without a recorded build ID the file is taken as it is */
		expect_name(s, exe, NULL, 0, off, prog_funcs[i]);
	}
	symbolizer__free(s);
}

Test(sym_elf, function_bounds_are_exact)
{
	const char *exe = tpath("prog");
	struct oracle_sym o;
	struct symbolizer *s;

	build("prog.c", "prog", PIE_FLAGS);
	cr_assert(oracle_find(exe, "symfix_beta", &o));
	s = new_sym(NULL, NULL, false, false);
	/* first and last byte of symfix_beta, from its st_size */
	expect_name(s, exe, NULL, 0, o.offset - o.size / 2, "symfix_beta");
	expect_name(s, exe, NULL, 0, o.offset - o.size / 2 + o.size - 1,
		    "symfix_beta");
	/* an offset outside every PT_LOAD maps to nothing */
	expect_none(s, exe, NULL, 0, 1ull << 40);
	symbolizer__free(s);
}

Test(sym_elf, shared_library_offsets)
{
	const char *so = tpath("libsymfix.so");
	static const char *const funcs[] = { "symlib_one", "symlib_two",
					     "symlib_hidden" };
	struct symbolizer *s;
	uint8_t id[20];
	uint8_t idn;

	build("lib.c", "libsymfix.so", "-O1 -g -fPIC -shared -Wl,--build-id");
	idn = build_id_of(so, id);
	s = new_sym(NULL, NULL, false, false);
	for (size_t i = 0; i < 3; i++)
		expect_name(s, so, id, idn, offset_of(so, funcs[i]), funcs[i]);
	symbolizer__free(s);
}

Test(sym_elf, dynsym_only_names_exports_never_guesses)
{
	const char *so = tpath("libsymfix.so");
	uint64_t one, two, hidden;
	struct symbolizer *s;
	uint8_t id[20];
	uint8_t idn;

	build("lib.c", "libsymfix.so", "-O1 -fPIC -shared -Wl,--build-id");
	one = offset_of(so, "symlib_one");
	two = offset_of(so, "symlib_two");
	hidden = offset_of(so, "symlib_hidden");
	sh("strip --strip-all '%s'", so);
	idn = build_id_of(so, id);
	s = new_sym(NULL, NULL, false, false);
	expect_name(s, so, id, idn, one, "symlib_one");
	expect_name(s, so, id, idn, two, "symlib_two");
	/* the static function is in no table left: unknown, not a neighbour */
	expect_none(s, so, id, idn, hidden);
	symbolizer__free(s);
}

/* Start of name as a file offset (for symbols without a size). */
static uint64_t start_of(const char *path, const char *name)
{
	struct oracle_sym o = { 0 };

	cr_assert(oracle_find(path, name, &o), "%s not in %s", name, path);
	return o.offset - o.size / 2;
}

Test(sym_elf, unsized_symbol_extends_to_the_next_one_in_a_full_symtab)
{
	const char *so = tpath("libsymfix.so");
	struct symbolizer *s;
	uint64_t a, l;

	build("lib.c", "libsymfix.so", "-O1 -fPIC -shared -Wl,--build-id");
	a = start_of(so, "symlib_asm");
	l = start_of(so, "symlib_asm_local");
	cr_assert_eq(l, a + 4);
	s = new_sym(NULL, NULL, false, false);
	expect_name(s, so, NULL, 0, a, "symlib_asm");
	expect_name(s, so, NULL, 0, a + 3, "symlib_asm");
	expect_name(s, so, NULL, 0, l + 1, "symlib_asm_local");
	symbolizer__free(s);
}

Test(sym_elf, unsized_symbol_in_dynsym_never_covers_hidden_code)
{
	const char *so = tpath("libsymfix.so");
	struct symbolizer *s;
	uint64_t a, l;

	build("lib.c", "libsymfix.so", "-O1 -fPIC -shared -Wl,--build-id");
	a = start_of(so, "symlib_asm");
	l = start_of(so, "symlib_asm_local");
	sh("strip --strip-all '%s'", so);
	s = new_sym(NULL, NULL, false, false);
	/* .dynsym lacks symlib_asm_local: symlib_asm's end is unknown */
	expect_none(s, so, NULL, 0, l + 1);
	expect_none(s, so, NULL, 0, a + 1);
	symbolizer__free(s);
}

Test(sym_elf, symbol_version_suffix_is_cut)
{
	const char *so = tpath("libver.so");
	struct symbolizer *s;
	uint64_t off;

	sh("printf 'SYMFIX_1 { global: symlib_ver; local: *; };\\n' > '%s'",
	   tpath("ver.map"));
	sh("cc -O1 -fPIC -shared -Wl,--version-script='%s' -o '%s' '%s/tests/symfix/ver.c'",
	   tpath("ver.map"), so, srcdir());
	off = offset_of(so, "symlib_ver_impl");
	s = new_sym(NULL, NULL, false, false);
	/* symlib_ver@@SYMFIX_1 (global) wins over symlib_ver_impl (local) */
	expect_name(s, so, NULL, 0, off, "symlib_ver");
	symbolizer__free(s);
}

Test(sym_elf, cxx_names_demangled_unless_raw)
{
	const char *exe = tpath("cxx");
	struct symbolizer_opts o = { .debug_dir = tpath("nodebug"), .raw_names = true };
	struct symbolizer *s;
	uint64_t spin, twice;
	const char *cxx = !system("command -v c++ >/dev/null") ? "c++" : "clang++";

	sh("%s -O1 -g -fPIE -pie -o '%s' '%s/tests/symfix/cxx.cc'", cxx, exe, srcdir());
	spin = offset_of(exe, "_ZN6symfix6Widget4spinEi");
	twice = offset_of(exe, "_ZN6symfix5twiceIlEET_S1_");
	s = new_sym(NULL, NULL, false, false);
	expect_name(s, exe, NULL, 0, spin, "symfix::Widget::spin(int)");
	expect_name(s, exe, NULL, 0, twice, "long symfix::twice<long>(long)");
	symbolizer__free(s);
	cr_assert_eq(symbolizer__new(&o, &s), 0);
	expect_name(s, exe, NULL, 0, spin, "_ZN6symfix6Widget4spinEi");
	symbolizer__free(s);
}

TestSuite(sym_debug, .init = setup, .fini = teardown);

/* prog built, its debug file split off and the binary stripped. */
static uint8_t split_prog(uint8_t *id, uint64_t *offs)
{
	const char *exe = tpath("prog");

	build("prog.c", "prog", PIE_FLAGS);
	for (size_t i = 0; i < 4; i++)
		offs[i] = offset_of(exe, prog_funcs[i]);
	sh("objcopy --only-keep-debug '%s' '%s'", exe, tpath("prog.debug"));
	sh("strip --strip-all '%s'", exe);
	return build_id_of(exe, id);
}

Test(sym_debug, stripped_binary_via_build_id_dir)
{
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offs[4];
	char hex[64];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	cr_assert_eq(idn, 20);
	build_id_hex(id, idn, hex);
	sh("mkdir -p '%s/usr/lib/debug/.build-id/%.2s'", dir, hex);
	sh("mv '%s' '%s/usr/lib/debug/.build-id/%s.debug'", tpath("prog.debug"),
	   dir, hex);
	s = new_sym(NULL, tpath("usr/lib/debug"), false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, tpath("prog"), id, idn, offs[i], prog_funcs[i]);
	symbolizer__stats(s, &st);
	cr_assert_eq(st.modules_found, 1);
	cr_assert_eq(st.debug_files, 1);
	cr_assert_eq(st.buildid_mismatches, 0);
	symbolizer__free(s);
}

Test(sym_debug, unrecorded_build_id_uses_the_objects_own)
{
	struct symbolizer *s;
	uint64_t offs[4];
	char hex[64];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	build_id_hex(id, idn, hex);
	sh("mkdir -p '%s/dbg/.build-id/%.2s' && mv '%s' '%s/dbg/.build-id/%s.debug'",
	   dir, hex, tpath("prog.debug"), dir, hex);
	s = new_sym(NULL, tpath("dbg"), false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, tpath("prog"), NULL, 0, offs[i], prog_funcs[i]);
	symbolizer__free(s);
}

Test(sym_debug, stripped_binary_without_debug_file_names_nothing_wrong)
{
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	s = new_sym(NULL, NULL, false, false);
	/* a PIE exports none of these: no table covers them */
	for (size_t i = 0; i < 4; i++)
		expect_none(s, tpath("prog"), id, idn, offs[i]);
	symbolizer__free(s);
}

Test(sym_debug, debug_file_alone_cannot_place_offsets)
{
	struct symbolizer *s;
	uint64_t offs[4];
	char hex[64];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	/* objcopy's debug file zeroes p_offset/p_filesz of the segments it
	 * empties: without the object there is no sure offset -> address map,
	 * so nothing is named (rather than something guessed) */
	build_id_hex(id, idn, hex);
	sh("mkdir -p '%s/dbg/.build-id/%.2s' && mv '%s' '%s/dbg/.build-id/%s.debug'"
	   " && rm '%s'", dir, hex, tpath("prog.debug"), dir, hex, tpath("prog"));
	s = new_sym(NULL, tpath("dbg"), false, false);
	for (size_t i = 0; i < 4; i++)
		expect_none(s, tpath("prog"), id, idn, offs[i]);
	symbolizer__free(s);
}

Test(sym_debug, eu_strip_debug_file_alone_is_enough)
{
	const char *exe = tpath("prog");
	struct symbolizer *s;
	uint64_t offs[4];
	char hex[64];
	uint8_t id[20];
	uint8_t idn;

	if (system("command -v eu-strip >/dev/null 2>&1"))
		cr_skip_test("eu-strip is not installed (make deps installs elfutils)");
	build("prog.c", "prog", PIE_FLAGS);
	for (size_t i = 0; i < 4; i++)
		offs[i] = offset_of(exe, prog_funcs[i]);
	idn = build_id_of(exe, id);
	build_id_hex(id, idn, hex);
	/* eu-strip (Fedora's find-debuginfo) keeps the object's PT_LOAD
	 * headers in the debug file: offsets can be placed without it */
	sh("mkdir -p '%s/dbg/.build-id/%.2s' && eu-strip -f '%s/dbg/.build-id/%s.debug' '%s'"
	   " && rm '%s'", dir, hex, dir, hex, exe, exe);
	s = new_sym(NULL, tpath("dbg"), false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, exe, id, idn, offs[i], prog_funcs[i]);
	symbolizer__free(s);
}

Test(sym_debug, debug_file_of_another_build_is_refused)
{
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offs[4];
	char hex[64];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	/* other.c's debug file planted under prog's build ID */
	build("other.c", "other", PIE_FLAGS);
	build_id_hex(id, idn, hex);
	sh("mkdir -p '%s/dbg/.build-id/%.2s'", dir, hex);
	sh("objcopy --only-keep-debug '%s' '%s/dbg/.build-id/%s.debug'",
	   tpath("other"), dir, hex);
	s = new_sym(NULL, tpath("dbg"), false, false);
	for (size_t i = 0; i < 4; i++)
		expect_none(s, tpath("prog"), id, idn, offs[i]);
	symbolizer__stats(s, &st);
	cr_assert_eq(st.buildid_mismatches, 1);
	cr_assert_eq(st.debug_files, 0);
	/* the object itself is the recorded build: not a replaced binary */
	cr_assert_eq(st.modules_mismatched, 0);
	cr_assert_null(st.first_mismatched);
	symbolizer__free(s);
}

Test(sym_debug, gnu_debuglink_same_dir_by_build_id)
{
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	sh("cd '%s' && objcopy --add-gnu-debuglink=prog.debug prog", dir);
	cr_assert_eq(build_id_of(tpath("prog"), id), idn);
	s = new_sym(NULL, NULL, false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, tpath("prog"), id, idn, offs[i], prog_funcs[i]);
	symbolizer__stats(s, &st);
	cr_assert_eq(st.debug_files, 1);
	symbolizer__free(s);
}

Test(sym_debug, gnu_debuglink_dot_debug_subdir_by_crc)
{
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	const char *exe = tpath("prog");

	/* no build IDs at all: only the debuglink CRC can vouch */
	build("prog.c", "prog", "-O1 -g -fPIE -pie -Wl,--build-id=none");
	cr_assert_eq(build_id_of(exe, id), 0);
	for (size_t i = 0; i < 4; i++)
		offs[i] = offset_of(exe, prog_funcs[i]);
	sh("mkdir '%s/.debug' && objcopy --only-keep-debug '%s' '%s/.debug/prog.debug'",
	   dir, exe, dir);
	sh("strip --strip-all '%s'", exe);
	sh("cd '%s/.debug' && objcopy --add-gnu-debuglink=prog.debug ../prog", dir);
	s = new_sym(NULL, NULL, false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, exe, NULL, 0, offs[i], prog_funcs[i]);
	symbolizer__free(s);
}

Test(sym_debug, gnu_debuglink_under_the_debug_dir)
{
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	/* <debug_dir>/<directory of the object>/<debuglink name> */
	sh("cd '%s' && objcopy --add-gnu-debuglink=prog.debug prog"
	   " && mkdir -p 'dbg%s' && mv prog.debug 'dbg%s/'", dir, dir, dir);
	s = new_sym(NULL, tpath("dbg"), false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, tpath("prog"), id, idn, offs[i], prog_funcs[i]);
	symbolizer__free(s);
}

Test(sym_debug, gnu_debuglink_crc_mismatch_is_refused)
{
	struct symbolizer *s;
	uint64_t off;
	uint8_t id[20];
	const char *exe = tpath("prog");

	build("prog.c", "prog", "-O1 -g -fPIE -pie -Wl,--build-id=none");
	off = offset_of(exe, "symfix_local");
	sh("cd '%s' && objcopy --only-keep-debug prog prog.debug && strip --strip-all prog"
	   " && objcopy --add-gnu-debuglink=prog.debug prog", dir);
	/* the debug file changes after the link was made */
	sh("printf x >> '%s'", tpath("prog.debug"));
	cr_assert_eq(build_id_of(exe, id), 0);
	s = new_sym(NULL, NULL, false, false);
	expect_none(s, exe, NULL, 0, off);
	symbolizer__free(s);
}

Test(sym_debug, minidebuginfo_adds_local_functions)
{
	const char *exe = tpath("prog");
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn;

	build("prog.c", "prog", PIE_FLAGS);
	for (size_t i = 0; i < 4; i++)
		offs[i] = offset_of(exe, prog_funcs[i]);
	/* MiniDebugInfo as distributions make it: function symbols not in
	 * .dynsym, in an xz-compressed ELF in .gnu_debugdata */
	sh("cd '%s' && nm -D --format=posix --defined-only prog | awk '{print $1}' | sort > dyn"
	   " && nm --format=posix --defined-only prog | awk '$2 ~ /[Tt]/ {print $1}' | sort > funcs"
	   " && comm -13 dyn funcs > keep"
	   " && objcopy --only-keep-debug prog full.debug"
	   " && objcopy -S --remove-section .gdb_index --remove-section .comment"
	   " --keep-symbols=keep full.debug mini"
	   " && strip --strip-all -R .comment prog && xz mini"
	   " && objcopy --add-section .gnu_debugdata=mini.xz prog", dir);
	idn = build_id_of(exe, id);
	s = new_sym(NULL, NULL, false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, exe, id, idn, offs[i], prog_funcs[i]);
	symbolizer__free(s);
}

TestSuite(sym_lookup, .init = setup, .fini = teardown);

Test(sym_lookup, symfs_tree_replaces_the_root)
{
	/* recorded as /usr/bin/<unique>, which does not exist here */
	char rec[PATH_MAX];
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn;

	snprintf(rec, sizeof(rec), "/usr/bin/stkrec-symfix-%s", strrchr(dir, '-') + 1);
	cr_assert_neq(access(rec, F_OK), 0);
	build("prog.c", "prog", PIE_FLAGS);
	for (size_t i = 0; i < 4; i++)
		offs[i] = offset_of(tpath("prog"), prog_funcs[i]);
	idn = build_id_of(tpath("prog"), id);
	sh("mkdir -p '%s/root/usr/bin' && mv '%s' '%s/root%s'", dir, tpath("prog"),
	   dir, rec);
	s = new_sym(tpath("root"), NULL, false, false);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, rec, id, idn, offs[i], prog_funcs[i]);
	symbolizer__free(s);
}

Test(sym_lookup, symfs_debug_dir_defaults_under_symfs)
{
	char rec[PATH_MAX], hex[64];
	struct symbolizer_opts o = { .symfs = tpath("root") };
	struct symbolizer *s;
	uint64_t off;
	uint8_t id[20];
	uint8_t idn;

	snprintf(rec, sizeof(rec), "/usr/bin/stkrec-symfix-%s", strrchr(dir, '-') + 1);
	build("prog.c", "prog", PIE_FLAGS);
	off = offset_of(tpath("prog"), "symfix_local");
	idn = build_id_of(tpath("prog"), id);
	build_id_hex(id, idn, hex);
	sh("mkdir -p '%s/root/usr/bin' '%s/root/usr/lib/debug/.build-id/%.2s'", dir,
	   dir, hex);
	sh("cd '%s' && objcopy --only-keep-debug prog root/usr/lib/debug/.build-id/%s.debug"
	   " && strip --strip-all prog && mv prog 'root%s'", dir, hex, rec);
	cr_assert_eq(symbolizer__new(&o, &s), 0);
	expect_name(s, rec, id, idn, off, "symfix_local");
	symbolizer__free(s);
}

Test(sym_lookup, replaced_binary_with_other_build_id_names_nothing)
{
	const char *exe = tpath("prog");
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20], id2[20];
	uint8_t idn;

	build("prog.c", "prog", PIE_FLAGS);
	for (size_t i = 0; i < 4; i++)
		offs[i] = offset_of(exe, prog_funcs[i]);
	idn = build_id_of(exe, id);
	/* the package was upgraded after the capture: same path, other build */
	build("other.c", "prog", PIE_FLAGS);
	cr_assert_eq(build_id_of(exe, id2), 20);
	cr_assert_neq(memcmp(id, id2, 20), 0);
	s = new_sym(NULL, NULL, false, false);
	for (size_t i = 0; i < 4; i++)
		expect_none(s, exe, id, idn, offs[i]);
	/* the new build's own frames still resolve under its own ID */
	expect_name(s, exe, id2, 20, offset_of(exe, "imposter_one"), "imposter_one");
	symbolizer__stats(s, &st);
	cr_assert_eq(st.buildid_mismatches, 1);
	cr_assert_eq(st.modules_missing, 1);
	cr_assert_eq(st.modules_found, 1);
	/* what the commands warn about: the recorded object, replaced */
	cr_assert_eq(st.modules_mismatched, 1);
	cr_assert_str_eq(st.first_mismatched, exe);
	symbolizer__free(s);
}

Test(sym_lookup, deleted_suffix_from_proc_maps)
{
	char rec[PATH_MAX];
	const char *exe = tpath("prog");
	struct symbolizer *s;
	uint8_t id[20];
	uint8_t idn;

	build("prog.c", "prog", PIE_FLAGS);
	idn = build_id_of(exe, id);
	snprintf(rec, sizeof(rec), "%s (deleted)", exe);
	s = new_sym(NULL, NULL, false, false);
	expect_name(s, rec, id, idn, offset_of(exe, "symfix_beta"), "symfix_beta");
	symbolizer__free(s);
}

/* Descriptors of this process open on files in the test directory. */
static int open_fds(void)
{
	char link[64], target[PATH_MAX];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strncmp(target, dir, strlen(dir));
	}
	return n;
}

Test(sym_lookup, objects_without_dwarf_hold_no_descriptor)
{
	struct symbolizer *s = new_sym(NULL, NULL, false, false);
	char name[32];
	int before;

	build("lib.c", "libsymfix.so", "-O1 -fPIC -shared -Wl,--build-id");
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "lib%d.so", i);
		sh("cp '%s' '%s'", tpath("libsymfix.so"), tpath(name));
	}
	before = open_fds();
	cr_assert_eq(before, 0);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "lib%d.so", i);
		expect_name(s, tpath(name), NULL, 0,
			    offset_of(tpath("libsymfix.so"), "symlib_two"), "symlib_two");
	}
	cr_assert_eq(open_fds(), before);
	symbolizer__free(s);
}

Test(sym_lookup, damaged_and_odd_files_name_nothing)
{
	const char *exe = tpath("prog");
	struct symbolizer *s;
	uint64_t off;

	build("prog.c", "prog", PIE_FLAGS);
	off = offset_of(exe, "symfix_beta");
	sh("cd '%s' && head -c 3000 prog > cut && head -c 65536 /dev/urandom > noise"
	   " && : > empty && mkfifo fifo && mkdir adir", dir);
	s = new_sym(NULL, NULL, true, true);
	expect_none(s, tpath("cut"), NULL, 0, off);
	expect_none(s, tpath("noise"), NULL, 0, off);
	expect_none(s, tpath("empty"), NULL, 0, off);
	expect_none(s, tpath("fifo"), NULL, 0, off);
	expect_none(s, tpath("adir"), NULL, 0, off);
	symbolizer__free(s);
}

Test(sym_lookup, missing_file_and_bad_arguments)
{
	struct symbolizer_stats st;
	struct symbolizer *s = new_sym(NULL, NULL, false, false);
	struct sym_frame f[2];
	uint8_t id[20] = { 1, 2, 3 };

	expect_none(s, tpath("no-such-file"), id, 20, 0x1000);
	expect_none(s, "[vdso]", NULL, 0, 0x400);
	cr_assert_eq(symbolizer__resolve(s, NULL, NULL, 0, 0, f, 2), -EINVAL);
	cr_assert_eq(symbolizer__resolve(s, "/x", NULL, 0, 0, f, 0), -EINVAL);
	cr_assert_eq(symbolizer__resolve(s, "/x", NULL, 3, 0, f, 2), -EINVAL);
	symbolizer__stats(s, &st);
	cr_assert_eq(st.modules_missing, 2);
	cr_assert_eq(st.modules_found, 0);
	cr_assert_eq(st.unresolved, 2);
	symbolizer__free(s);
}

Test(sym_lookup, per_address_cache_and_shared_images)
{
	const char *exe = tpath("prog");
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t a, b;
	uint8_t id[20];
	uint8_t idn;

	build("prog.c", "prog", PIE_FLAGS);
	sh("ln '%s' '%s'", exe, tpath("prog-hardlink"));
	idn = build_id_of(exe, id);
	a = offset_of(exe, "symfix_alpha");
	b = offset_of(exe, "symfix_beta");
	s = new_sym(NULL, NULL, false, false);
	expect_name(s, exe, id, idn, a, "symfix_alpha");
	expect_name(s, exe, id, idn, a, "symfix_alpha");
	expect_name(s, exe, id, idn, b, "symfix_beta");
	expect_name(s, exe, id, idn, a, "symfix_alpha");
	/* another recorded path of the same build: the ELF is not reopened */
	expect_name(s, tpath("prog-hardlink"), id, idn, b, "symfix_beta");
	symbolizer__stats(s, &st);
	cr_assert_eq(st.lookups, 5);
	cr_assert_eq(st.cache_hits, 2);
	cr_assert_eq(st.resolved, 3);
	cr_assert_eq(st.unresolved, 0);
	cr_assert_eq(st.modules_found, 1);
	symbolizer__free(s);
}

TestSuite(sym_dwarf, .init = setup, .fini = teardown);

/* Line of the fixture that carries marker. */
static int marker_line(const char *marker)
{
	char path[PATH_MAX], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/tests/symfix/inline.c", srcdir());
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("%s not found", marker);
	return 0;
}

static uint64_t inline_mark_offset(const char *exe)
{
	struct oracle_sym o;

	build("inline.c", "inl", "-O2 -g -fPIE -pie -Wl,--build-id");
	cr_assert(oracle_find(exe, "symfix_inl_mark", &o));
	return o.offset; /* a size-0 label: offset is its address */
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

Test(sym_dwarf, inlined_function_expands_to_two_frames)
{
	const char *exe = tpath("inl");
	uint64_t off = inline_mark_offset(exe);
	struct symbolizer *s = new_sym(NULL, NULL, true, true);
	struct sym_frame f[8];
	uint8_t id[20];
	uint8_t idn = build_id_of(exe, id);
	int n = symbolizer__resolve(s, exe, id, idn, off, f, 8);

	cr_assert_eq(n, 2);
	cr_assert_str_eq(f[0].name, "inl_helper");
	cr_assert(f[0].inlined);
	cr_assert(ends_with(f[0].file, "/tests/symfix/inline.c"), "%s", f[0].file);
	cr_assert_eq(f[0].line, marker_line("INL_BODY_LINE"));
	cr_assert_str_eq(f[1].name, "inl_outer");
	cr_assert_not(f[1].inlined);
	cr_assert(ends_with(f[1].file, "/tests/symfix/inline.c"), "%s", f[1].file);
	cr_assert_eq(f[1].line, marker_line("INL_CALL_LINE"));
	/* room for one frame only: the containing function is kept */
	n = symbolizer__resolve(s, exe, id, idn, off, f, 1);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(f[0].name, "inl_outer");
	symbolizer__free(s);
}

Test(sym_dwarf, inlines_off_gives_the_call_site_line)
{
	const char *exe = tpath("inl");
	uint64_t off = inline_mark_offset(exe);
	struct symbolizer *s = new_sym(NULL, NULL, false, true);
	struct sym_frame f[8];
	int n = symbolizer__resolve(s, exe, NULL, 0, off, f, 8);

	cr_assert_eq(n, 1);
	cr_assert_str_eq(f[0].name, "inl_outer");
	cr_assert_not(f[0].inlined);
	cr_assert_eq(f[0].line, marker_line("INL_CALL_LINE"));
	symbolizer__free(s);
}

Test(sym_dwarf, inlines_without_srclines_has_no_lines)
{
	const char *exe = tpath("inl");
	uint64_t off = inline_mark_offset(exe);
	struct symbolizer *s = new_sym(NULL, NULL, true, false);
	struct sym_frame f[8];
	int n = symbolizer__resolve(s, exe, NULL, 0, off, f, 8);

	cr_assert_eq(n, 2);
	cr_assert_str_eq(f[0].name, "inl_helper");
	cr_assert_str_eq(f[1].name, "inl_outer");
	cr_assert_null(f[0].file);
	cr_assert_eq(f[0].line, 0);
	cr_assert_null(f[1].file);
	symbolizer__free(s);
}

Test(sym_dwarf, inlines_from_a_separate_debug_file)
{
	const char *exe = tpath("inl");
	uint64_t off = inline_mark_offset(exe);
	struct symbolizer *s;
	struct sym_frame f[8];
	uint8_t id[20];
	uint8_t idn;
	char hex[64];
	int n;

	idn = build_id_of(exe, id);
	build_id_hex(id, idn, hex);
	sh("mkdir -p '%s/dbg/.build-id/%.2s'", dir, hex);
	sh("cd '%s' && objcopy --only-keep-debug inl 'dbg/.build-id/%s.debug'"
	   " && strip --strip-all inl", dir, hex);
	s = new_sym(NULL, tpath("dbg"), true, true);
	n = symbolizer__resolve(s, exe, id, idn, off, f, 8);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(f[0].name, "inl_helper");
	cr_assert_eq(f[0].line, marker_line("INL_BODY_LINE"));
	cr_assert_str_eq(f[1].name, "inl_outer");
	cr_assert_eq(f[1].line, marker_line("INL_CALL_LINE"));
	symbolizer__free(s);
}

TestSuite(sym_debuginfod, .init = setup, .fini = teardown);

/* A debuginfod "server" as a file:// tree: buildid/<hex>/<kind>. */
static void serve(const uint8_t *id, uint8_t idn, const char *kind,
		  const char *cmd_to_make_file)
{
	char hex[64], rest[64], url[PATH_MAX];

	build_id_hex(id, idn, hex);
	snprintf(rest, sizeof(rest), "%.2s%s", hex, hex + 3);
	sh("mkdir -p '%s/srv/buildid/%s'", dir, rest);
	sh(cmd_to_make_file, dir, dir, rest, kind);
	snprintf(url, sizeof(url), "file://%s", tpath("srv"));
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", tpath("cache"), 1);
	unsetenv("DEBUGINFOD_PROGRESS");
}

static struct symbolizer *new_dbgd(bool on)
{
	struct symbolizer_opts o = { .debug_dir = tpath("nodebug"), .debuginfod = on };
	struct symbolizer *s;

	cr_assert_eq(symbolizer__new(&o, &s), 0);
	return s;
}

Test(sym_debuginfod, debuginfo_for_a_stripped_binary)
{
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	serve(id, idn, "debuginfo", "cp '%s/prog.debug' '%s/srv/buildid/%s/%s'");
	/* opted out: the server is not asked */
	s = new_dbgd(false);
	expect_none(s, tpath("prog"), id, idn, offs[0]);
	symbolizer__free(s);
	s = new_dbgd(true);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, tpath("prog"), id, idn, offs[i], prog_funcs[i]);
	symbolizer__stats(s, &st);
	cr_assert_eq(st.debuginfod_fetches, 1);
	cr_assert_eq(st.debug_files, 1);
	symbolizer__free(s);
}

Test(sym_debuginfod, executable_when_the_object_is_gone)
{
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn;

	build("prog.c", "prog", PIE_FLAGS);
	for (size_t i = 0; i < 4; i++)
		offs[i] = offset_of(tpath("prog"), prog_funcs[i]);
	idn = build_id_of(tpath("prog"), id);
	serve(id, idn, "executable", "mv '%s/prog' '%s/srv/buildid/%s/%s'");
	cr_assert_neq(access(tpath("prog"), F_OK), 0);
	s = new_dbgd(true);
	for (size_t i = 0; i < 4; i++)
		expect_name(s, tpath("prog"), id, idn, offs[i], prog_funcs[i]);
	symbolizer__free(s);
}

Test(sym_debuginfod, served_file_of_another_build_is_refused)
{
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offs[4];
	uint8_t id[20];
	uint8_t idn = split_prog(id, offs);

	build("other.c", "other", PIE_FLAGS);
	serve(id, idn, "debuginfo",
	      "objcopy --only-keep-debug '%s/other' '%s/srv/buildid/%s/%s'");
	s = new_dbgd(true);
	for (size_t i = 0; i < 4; i++)
		expect_none(s, tpath("prog"), id, idn, offs[i]);
	symbolizer__stats(s, &st);
	cr_assert_eq(st.debuginfod_fetches, 0);
	cr_assert_geq(st.buildid_mismatches, 1);
	symbolizer__free(s);
}

Test(sym_dwarf, dwz_alt_file_from_the_debug_dir)
{
	const char *exe = tpath("inl");
	uint64_t off = inline_mark_offset(exe);
	struct symbolizer *s;
	struct sym_frame f[8];
	uint8_t alt_id[20];
	uint8_t altn;
	char hex[64];
	int n;

	if (system("command -v dwz >/dev/null 2>&1"))
		cr_skip_test("dwz is not installed (make deps installs it)");
	/* two copies share every DIE: dwz moves them to common.debug, which
	 * the objects name by an absolute path that does not exist here */
	sh("cd '%s' && cp inl inl2 && dwz -m common.debug -M /nonexistent/.dwz/common.debug"
	   " inl inl2", dir);
	altn = build_id_of(tpath("common.debug"), alt_id);
	cr_assert_eq(altn, 20);
	build_id_hex(alt_id, altn, hex);
	sh("mkdir -p '%s/dbg/.build-id/%.2s' && mv '%s' '%s/dbg/.build-id/%s.debug'",
	   dir, hex, tpath("common.debug"), dir, hex);
	s = new_sym(NULL, tpath("dbg"), true, true);
	n = symbolizer__resolve(s, exe, NULL, 0, off, f, 8);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(f[0].name, "inl_helper");
	cr_assert_eq(f[0].line, marker_line("INL_BODY_LINE"));
	cr_assert_str_eq(f[1].name, "inl_outer");
	cr_assert_eq(f[1].line, marker_line("INL_CALL_LINE"));
	symbolizer__free(s);
}

Test(sym_dwarf, nested_inlines_in_order_and_cut_to_fit)
{
	const char *exe = tpath("inl");
	struct symbolizer *s = new_sym(NULL, NULL, true, true);
	struct oracle_sym o;
	struct sym_frame f[8];
	int n;

	inline_mark_offset(exe);
	cr_assert(oracle_find(exe, "symfix_deep_mark", &o));
	n = symbolizer__resolve(s, exe, NULL, 0, o.offset, f, 8);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(f[0].name, "inl_leaf");
	cr_assert_eq(f[0].line, marker_line("DEEP_LEAF_LINE"));
	cr_assert(f[0].inlined);
	cr_assert_str_eq(f[1].name, "inl_mid");
	cr_assert_eq(f[1].line, marker_line("DEEP_MID_CALL"));
	cr_assert(f[1].inlined);
	cr_assert_str_eq(f[2].name, "inl_deep");
	cr_assert_eq(f[2].line, marker_line("DEEP_OUTER_CALL"));
	cr_assert_not(f[2].inlined);
	/* two slots: the innermost and the containing function */
	n = symbolizer__resolve(s, exe, NULL, 0, o.offset, f, 2);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(f[0].name, "inl_leaf");
	cr_assert_str_eq(f[1].name, "inl_deep");
	symbolizer__free(s);
}
