// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Host information the recorder writes so captures symbolize offline, part
 * 1: build IDs (record/buildid.c), kernel symbols (record/ksyms.c) and block
 * devices (record/blockdev.c). Build IDs are checked against what
 * `readelf -n` prints for programs the tests compile; /proc maps and the
 * perf side band are in test_record_hostinfo_proc.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/intern.h"
#include "record/blockdev.h"
#include <bpf/bpf.h>
#include "record/buildid.h"
#include "record/ksyms.h"
#include "record/procmaps.h"
#include "tests/util_hostinfo.h"

/* A capture in hostinfo_tmpdir with the real intern on it. */
struct capture {
	char path[PATH_MAX];
	struct cap_writer *w;
	struct intern *in;
};

static void cap_start(struct capture *c)
{
	struct cap_header h = hostinfo_header();

	snprintf(c->path, sizeof(c->path), "%s/capture.stkrec", hostinfo_tmpdir);
	cr_assert_eq(cap_writer__open(c->path, &h, NULL, &c->w), 0);
	cr_assert_eq(intern__new(c->w, &c->in), 0);
}

static void cap_finish_read(struct capture *c, struct hostinfo_readback *rb)
{
	intern__free(c->in);
	hostinfo_finish_read(c->w, c->path, rb);
}

TestSuite(hostinfo_buildid, .init = hostinfo_mk_tmpdir, .fini = hostinfo_rm_tmpdir);
TestSuite(hostinfo_ksyms, .init = hostinfo_mk_tmpdir, .fini = hostinfo_rm_tmpdir);
TestSuite(hostinfo_blockdev, .init = hostinfo_mk_tmpdir, .fini = hostinfo_rm_tmpdir);

/* ---- build IDs ---- */

Test(hostinfo_buildid, sha1_matches_readelf)
{
	uint8_t want[20], got[20], size = 0xff;
	char prog[PATH_MAX];

	hostinfo_build_prog("sha1", "-Wl,--build-id=sha1", 1, prog, sizeof(prog));
	cr_assert_eq(hostinfo_readelf_buildid(prog, want), 20);
	cr_assert_eq(buildid__read_file(prog, got, &size), 0);
	cr_assert_eq(size, 20);
	cr_assert_arr_eq(got, want, 20);
}

Test(hostinfo_buildid, md5_is_16_bytes)
{
	uint8_t want[20], got[20], size = 0;
	char prog[PATH_MAX];

	hostinfo_build_prog("md5", "-Wl,--build-id=md5", 1, prog, sizeof(prog));
	cr_assert_eq(hostinfo_readelf_buildid(prog, want), 16);
	cr_assert_eq(buildid__read_file(prog, got, &size), 0);
	cr_assert_eq(size, 16);
	cr_assert_arr_eq(got, want, 16);
}

Test(hostinfo_buildid, none_gives_size_0)
{
	uint8_t want[20], got[20], size = 0xff;
	char prog[PATH_MAX];

	hostinfo_build_prog("noid", "-Wl,--build-id=none", 1, prog, sizeof(prog));
	cr_assert_eq(hostinfo_readelf_buildid(prog, want), 0);
	cr_assert_eq(buildid__read_file(prog, got, &size), 0);
	cr_assert_eq(size, 0);
}

Test(hostinfo_buildid, not_elf_and_missing)
{
	char path[PATH_MAX];
	uint8_t id[20], size = 0xff;

	snprintf(path, sizeof(path), "%s/text", hostinfo_tmpdir);
	hostinfo_write_file(path, "#!/bin/sh\necho not an ELF file\n");
	cr_assert_eq(buildid__read_file(path, id, &size), -ENOEXEC);
	cr_assert_eq(size, 0);
	snprintf(path, sizeof(path), "%s/missing", hostinfo_tmpdir);
	cr_assert_eq(buildid__read_file(path, id, &size), -ENOENT);
}

/* Notes blob: a "Linux" note, then the GNU build ID, as in /sys/kernel/notes. */
Test(hostinfo_buildid, parse_raw_notes)
{
	uint8_t blob[] = {
		6, 0, 0, 0,  4, 0, 0, 0,  1, 1, 0, 0,  'L', 'i', 'n', 'u', 'x', 0, 0, 0,
		1, 2, 3, 4,
		4, 0, 0, 0,  8, 0, 0, 0,  3, 0, 0, 0,  'G', 'N', 'U', 0,
		0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04,
	};
	uint8_t want[8] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4 };
	uint8_t id[20], size = 0xff;

	cr_assert_eq(buildid__parse_notes(blob, sizeof(blob), id, &size), 0);
	cr_assert_eq(size, 8);
	cr_assert_arr_eq(id, want, 8);
	/* cut inside the descriptor: no ID, no overread */
	cr_assert_eq(buildid__parse_notes(blob, sizeof(blob) - 1, id, &size), 0);
	cr_assert_eq(size, 0);
	/* a note claiming a huge name stops the walk */
	blob[0] = 0xff, blob[1] = 0xff, blob[2] = 0xff, blob[3] = 0x7f;
	cr_assert_eq(buildid__parse_notes(blob, sizeof(blob), id, &size), 0);
	cr_assert_eq(size, 0);
}

Test(hostinfo_buildid, sysfs_kernel_notes)
{
	uint8_t id[20], size = 0;
	int err = buildid__read_notes_file("/sys/kernel/notes", id, &size);

	if (err == -ENOENT || err == -EACCES)
		cr_skip_test("/sys/kernel/notes not readable here");
	cr_assert_eq(err, 0);
	cr_assert_eq(size, 20, "the kernel is linked with a SHA-1 build ID");
}

/* ---- kernel symbols ---- */

#define K0 0xffffffff81000000ull
#define M0 0xffffffffc0001000ull

static const char fake_kallsyms[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t local_name\n"
	"ffffffff81000100 T global_name\n"
	"ffffffff81000200 T __x64_sys_foo\n"
	"ffffffff81000200 T sys_foo\n"
	"ffffffff81000280 W weak_fn\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 T last_text\n"
	"ffffffffc0001000 t mod_a\t[mymod]\n"
	"ffffffffc0001040 t mod_b\t[mymod]\n"
	"ffffffffc0002000 t bpf_prog_1_x\t[bpf]\n";

static struct ksyms *load_fake(void)
{
	char ksyms_path[PATH_MAX], mods_path[PATH_MAX];
	struct ksyms *ks;

	snprintf(ksyms_path, sizeof(ksyms_path), "%s/kallsyms", hostinfo_tmpdir);
	snprintf(mods_path, sizeof(mods_path), "%s/modules", hostinfo_tmpdir);
	hostinfo_write_file(ksyms_path, fake_kallsyms);
	hostinfo_write_file(mods_path, "mymod 256 0 - Live 0xffffffffc0001000\n");
	cr_assert_eq(ksyms__load_files(ksyms_path, mods_path, &ks), 0);
	return ks;
}

static void assert_sym(const struct ksyms *ks, uint64_t addr, const char *name,
		       uint64_t start)
{
	uint64_t got = 0;
	const char *n = ksyms__name(ks, addr, &got);

	if (!name) {
		cr_assert_null(n, "%#llx resolves to %s", (unsigned long long)addr, n);
		return;
	}
	cr_assert_not_null(n, "%#llx resolves to nothing", (unsigned long long)addr);
	cr_assert_str_eq(n, name);
	cr_assert_eq(got, start);
}

Test(hostinfo_ksyms, fake_table_sizes_and_aliases)
{
	struct ksyms *ks = load_fake();

	cr_assert_eq(ksyms__count(ks), 8);
	cr_assert_eq(ksyms__stext(ks), K0);
	assert_sym(ks, K0 + 0xff, "_stext", K0);
	/* global beats local, fewer underscores beat more */
	assert_sym(ks, K0 + 0x100, "global_name", K0 + 0x100);
	assert_sym(ks, K0 + 0x27f, "sys_foo", K0 + 0x200);
	/* a data symbol ends the text symbol before it and is not listed */
	assert_sym(ks, K0 + 0x2ff, "weak_fn", K0 + 0x280);
	assert_sym(ks, K0 + 0x300, NULL, 0);
	/* last of vmlinux: the default size */
	assert_sym(ks, K0 + 0x400 + 4095, "last_text", K0 + 0x400);
	assert_sym(ks, K0 + 0x400 + 4096, NULL, 0);
	/* module: the last symbol ends with the module (/proc/modules) */
	assert_sym(ks, M0 + 0x3f, "mod_a", M0);
	assert_sym(ks, M0 + 0xff, "mod_b", M0 + 0x40);
	assert_sym(ks, M0 + 0x100, NULL, 0);
	assert_sym(ks, 0xffffffffc0002000ull + 100, "bpf_prog_1_x", 0xffffffffc0002000ull);
	assert_sym(ks, K0 - 1, NULL, 0);
	ksyms__free(ks);
}

Test(hostinfo_ksyms, zero_addresses_are_eperm)
{
	char path[PATH_MAX], mods[PATH_MAX];
	struct ksyms *ks = (void *)1;

	snprintf(path, sizeof(path), "%s/kallsyms", hostinfo_tmpdir);
	snprintf(mods, sizeof(mods), "%s/no-modules", hostinfo_tmpdir);
	hostinfo_write_file(path, "0000000000000000 T _stext\n0000000000000000 T schedule\n"
			 "0000000000000000 t mod_a\t[mymod]\n");
	cr_assert_eq(ksyms__load_files(path, mods, &ks), -EPERM);
	cr_assert_null(ks);
	snprintf(path, sizeof(path), "%s/missing", hostinfo_tmpdir);
	cr_assert_eq(ksyms__load_files(path, mods, &ks), -ENOENT);
}

static const struct cap_ksym *find_ksym(const struct hostinfo_readback *rb, uint64_t addr,
					const char **name)
{
	size_t i;

	for (i = 0; i < rb->n; i++) {
		if (rb->v[i].rec.type == CAP_REC_KSYM && rb->v[i].rec.ksym.addr == addr) {
			*name = rb->v[i].tail;
			return &rb->v[i].rec.ksym;
		}
	}
	cr_assert_fail("no KSYM for %#llx", (unsigned long long)addr);
	return NULL;
}

Test(hostinfo_ksyms, write_for_ips_writes_each_symbol_once)
{
	uint64_t a[] = { K0 + 0x104, K0 + 0x208, K0 + 0x110 };
	uint64_t b[] = { K0 + 0x209, M0 + 1, M0 + 0x42, K0 + 0x350, M0 + 2 };
	uint64_t c[] = { K0 + 0x280 }; /* ip - 1 is in sys_foo, written already */
	struct ksyms *ks = load_fake();
	const struct cap_ksym *k;
	struct hostinfo_readback rb;
	struct capture cap;
	const char *name;

	cap_start(&cap);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, a, 3), 2);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, b, 5), 2);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, c, 1), 1);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, a, 3), 0);
	cap_finish_read(&cap, &rb);

	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KSYM), 5);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_STRING), 1);
	k = find_ksym(&rb, K0 + 0x100, &name);
	cr_assert_str_eq(name, "global_name");
	cr_assert_eq(k->size, 0x100);
	cr_assert_eq(k->module_id, 0);
	cr_assert_eq(k->name_len, strlen("global_name"));
	k = find_ksym(&rb, M0 + 0x40, &name);
	cr_assert_str_eq(name, "mod_b");
	cr_assert_eq(k->size, 0xc0);
	cr_assert_str_eq(hostinfo_rb_string(&rb, k->module_id), "mymod");
	k = find_ksym(&rb, K0 + 0x280, &name);
	cr_assert_str_eq(name, "weak_fn");
	hostinfo_rb_free(&rb);
	ksyms__free(ks);
}

Test(hostinfo_ksyms, hook_runs_through_intern)
{
	uint64_t ips[] = { K0 + 0x104, M0 + 1 };
	struct ksyms *ks = load_fake();
	struct ksyms_sink sink;
	struct hostinfo_readback rb;
	struct capture cap;
	uint32_t id;
	size_t i, ksym_at = 0, stack_at = 0;

	cap_start(&cap);
	sink = (struct ksyms_sink){ .ks = ks, .w = cap.w, .in = cap.in };
	intern__set_kstack_hook(cap.in, ksyms__kstack_hook, &sink);
	cr_assert_eq(intern__stack(cap.in, CAP_STACK_KERNEL, ips, 2, &id), 0);
	cr_assert_eq(intern__stack(cap.in, CAP_STACK_KERNEL, ips, 2, &id), 0);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KSYM), 2);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_STACK), 1);
	for (i = 0; i < rb.n; i++) {
		if (rb.v[i].rec.type == CAP_REC_KSYM)
			ksym_at = i;
		if (rb.v[i].rec.type == CAP_REC_STACK)
			stack_at = i;
	}
	cr_assert_lt(ksym_at, stack_at, "KSYM records precede the STACK");
	hostinfo_rb_free(&rb);
	ksyms__free(ks);
}

/* A BPF program and a module loaded after kallsyms was read: the first
 * unknown address rereads it; what was written stays written; a second
 * unknown address within the second does not reread. */
Test(hostinfo_ksyms, unknown_address_rereads_kallsyms)
{
	char path[PATH_MAX], text[sizeof(fake_kallsyms) + 128];
	uint64_t first[] = { K0 + 0x104 };
	uint64_t late[] = { 0xffffffffc0003010ull, K0 + 0x108 };
	uint64_t gap[] = { 0xffffffffc0009000ull };
	struct ksyms *ks = load_fake();
	struct hostinfo_readback rb;
	struct capture cap;
	const char *name;
	size_t i;

	cap_start(&cap);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, first, 1), 1);
	snprintf(path, sizeof(path), "%s/kallsyms", hostinfo_tmpdir);
	snprintf(text, sizeof(text), "%sffffffffc0003000 t bpf_prog_2_late\t[bpf]\n"
		 "ffffffffc0005000 t newmod_fn\t[newmod]\n", fake_kallsyms);
	hostinfo_write_file(path, text);
	snprintf(path, sizeof(path), "%s/modules", hostinfo_tmpdir);
	hostinfo_write_file(path, "newmod 8192 0 - Live 0xffffffffc0005000\n"
			    "mymod 256 0 - Live 0xffffffffc0001000\n");
	cr_assert_eq(ksyms__reloads(ks), 0);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, late, 2), 1);
	cr_assert_eq(ksyms__reloads(ks), 1);
	cr_assert_eq(ksyms__count(ks), 10);
	cr_assert_str_eq(ksyms__name(ks, late[0], NULL), "bpf_prog_2_late");
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, gap, 1), 0);
	cr_assert_eq(ksyms__reloads(ks), 1, "at most one reread a second");
	cap_finish_read(&cap, &rb);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KSYM), 2);
	cr_assert_eq(find_ksym(&rb, 0xffffffffc0003000ull, &name)->size, 4096);
	cr_assert_str_eq(name, "bpf_prog_2_late");
	/* the module loaded meanwhile gets its KMOD, the known one not again */
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KMOD), 1);
	for (i = 0; i < rb.n; i++) {
		const struct cap_kmod *k = &rb.v[i].rec.kmod;

		if (rb.v[i].rec.type != CAP_REC_KMOD)
			continue;
		cr_assert_str_eq(hostinfo_rb_string(&rb, k->name_id), "newmod");
		cr_assert_eq(k->base, 0xffffffffc0005000ull);
		cr_assert_eq(k->size, 8192);
	}
	hostinfo_rb_free(&rb);
	ksyms__free(ks);
}

/* The recorder's own program, loaded after kallsyms was read: named from
 * its info as kallsyms names it (bpf_prog_TAG_NAME, module bpf), once per
 * file, without reading kallsyms again (which its first kernel stack did,
 * ~0.1 s of CPU at every start). */
Test(hostinfo_ksyms, own_program_named_without_a_reread)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), flen = 0;
	uint64_t addr = 0, ips[1];
	struct ksyms *ks = load_fake();
	struct hostinfo_readback rb;
	struct capture cap;
	char want[64];
	const char *name;
	int fd, i, n;

	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "stkrec_test", "GPL", insns, 2, NULL);
	if (fd < 0)
		cr_skip_test("cannot load a BPF program here (%s): not root?", strerror(errno));
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uintptr_t)&addr;
	info.nr_jited_func_lens = 1;
	info.jited_func_lens = (uintptr_t)&flen;
	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	if (!addr)
		cr_skip_test("the BPF JIT is off: programs have no address of their own");
	n = snprintf(want, sizeof(want), "bpf_prog_");
	for (i = 0; i < BPF_TAG_SIZE; i++)
		n += snprintf(want + n, sizeof(want) - n, "%02x", info.tag[i]);
	snprintf(want + n, sizeof(want) - n, "_stkrec_test");
	cr_assert_eq(ksyms__add_prog(ks, fd), 0);
	close(fd);
	cap_start(&cap);
	ips[0] = addr + flen / 2;
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, ips, 1), 1);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, ips, 1), 0);
	cr_assert_eq(ksyms__reloads(ks), 0);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KSYM), 1);
	cr_assert_eq(find_ksym(&rb, addr, &name)->size, flen);
	cr_assert_str_eq(name, want);
	cr_assert_str_eq(hostinfo_rb_string(&rb, find_ksym(&rb, addr, &name)->module_id), "bpf");
	hostinfo_rb_free(&rb);
	ksyms__free(ks);
}

/* KMOD from /proc/modules: a module without sysfs notes has no build ID. */
Test(hostinfo_ksyms, kernel_and_module_records_fake)
{
	const struct cap_kmod *k = NULL;
	const struct cap_kernel *kern = NULL;
	struct ksyms *ks = load_fake();
	struct hostinfo_readback rb;
	struct capture cap;
	size_t i;

	cap_start(&cap);
	cr_assert_eq(ksyms__write_kernel(ks, cap.w, cap.in), 0);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KERNEL), 1);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KMOD), 1);
	for (i = 0; i < rb.n; i++) {
		if (rb.v[i].rec.type == CAP_REC_KMOD)
			k = &rb.v[i].rec.kmod;
		if (rb.v[i].rec.type == CAP_REC_KERNEL)
			kern = &rb.v[i].rec.kernel;
	}
	cr_assert_eq(kern->stext, K0);
	cr_assert_str_eq(hostinfo_rb_string(&rb, k->name_id), "mymod");
	cr_assert_eq(k->base, M0);
	cr_assert_eq(k->size, 256);
	cr_assert_eq(k->build_id_size, 0);
	hostinfo_rb_free(&rb);
	ksyms__free(ks);
}

/* Address of a T symbol as /proc/kallsyms lists it, or 0. */
static uint64_t kallsyms_addr(const char *name)
{
	char cmd[128], line[256];
	unsigned long long addr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "grep -m1 ' T %s$' /proc/kallsyms", name);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	if (fgets(line, sizeof(line), f))
		sscanf(line, "%llx", &addr);
	pclose(f);
	return addr;
}

static struct ksyms *load_real(void)
{
	struct ksyms *ks = NULL;
	int err = ksyms__load(&ks);

	if (err == -EPERM)
		cr_skip_test("kallsyms addresses are hidden (not root)");
	cr_assert_eq(err, 0, "ksyms__load: %s", strerror(-err));
	return ks;
}

Test(hostinfo_ksyms, real_kallsyms)
{
	struct ksyms *ks = load_real();
	uint64_t sched = kallsyms_addr("schedule"), start = 0;
	const char *name;

	cr_assert_gt(ksyms__count(ks), 10000);
	cr_assert_neq(sched, 0);
	name = ksyms__name(ks, sched + 4, &start);
	cr_assert_not_null(name);
	cr_assert_str_eq(name, "schedule");
	cr_assert_eq(start, sched);
	cr_assert_eq(ksyms__stext(ks), kallsyms_addr("_stext"));
	ksyms__free(ks);
}

static int count_lines(const char *path)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

Test(hostinfo_ksyms, kernel_record)
{
	struct ksyms *ks = load_real();
	uint8_t id[20], size = 0;
	const struct cap_kernel *k = NULL;
	struct hostinfo_readback rb;
	struct capture cap;
	size_t i;

	cap_start(&cap);
	cr_assert_eq(ksyms__write_kernel(ks, cap.w, cap.in), 0);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KERNEL), 1);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_KMOD), (size_t)count_lines("/proc/modules"));
	for (i = 0; i < rb.n; i++)
		if (rb.v[i].rec.type == CAP_REC_KERNEL)
			k = &rb.v[i].rec.kernel;
	cr_assert_eq(k->stext, kallsyms_addr("_stext"));
	cr_assert_eq(buildid__read_notes_file("/sys/kernel/notes", id, &size), 0);
	cr_assert_eq(k->build_id_size, size);
	cr_assert_arr_eq(k->build_id, id, size);
	hostinfo_rb_free(&rb);
	ksyms__free(ks);
}

/* ---- block devices ---- */

static void fake_dev(const char *rel, const char *devno, bool partition)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/block/%s", hostinfo_tmpdir, rel);
	cr_assert_eq(mkdir(path, 0755), 0, "%s: %s", path, strerror(errno));
	if (devno) {
		snprintf(path, sizeof(path), "%s/sys/block/%s/dev", hostinfo_tmpdir, rel);
		hostinfo_write_file(path, devno);
	}
	if (partition) {
		snprintf(path, sizeof(path), "%s/sys/block/%s/partition", hostinfo_tmpdir, rel);
		hostinfo_write_file(path, "1\n");
	}
}

Test(hostinfo_blockdev, fake_sysfs_tree)
{
	static const struct { const char *name; uint32_t major, minor; } want[] = {
		{ "sda", 8, 0 }, { "sda1", 8, 1 }, { "sda2", 8, 2 },
		{ "cciss/c0d0", 104, 0 }, { "nvme0n1", 259, 0 }, { "nvme0n1p1", 259, 1 },
	};
	char root[PATH_MAX / 2], path[PATH_MAX];
	struct hostinfo_readback rb;
	struct capture cap;
	size_t i, j = 0;

	snprintf(root, sizeof(root), "%s/sys", hostinfo_tmpdir);
	cr_assert_eq(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/sys/block", hostinfo_tmpdir);
	cr_assert_eq(mkdir(path, 0755), 0);
	fake_dev("nvme0n1", "259:0\n", false);
	fake_dev("nvme0n1/nvme0n1p1", "259:1\n", true);
	fake_dev("sda", "8:0\n", false);
	fake_dev("sda/sda2", "8:2\n", true);
	fake_dev("sda/sda1", "8:1\n", true);
	fake_dev("sda/queue", NULL, false);     /* not a partition */
	fake_dev("sda/holders", "9:9\n", false); /* has dev but no partition file */
	fake_dev("cciss!c0d0", "104:0\n", false);
	fake_dev("broken", "garbage\n", false); /* skipped */

	cap_start(&cap);
	cr_assert_eq(blockdev__write_all(cap.w, root), 6);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_BLOCKDEV), 6);
	for (i = 0; i < rb.n; i++) {
		const struct cap_blockdev *d = &rb.v[i].rec.blockdev;

		if (rb.v[i].rec.type != CAP_REC_BLOCKDEV)
			continue;
		cr_assert_str_eq(d->name, want[j].name);
		cr_assert_eq(d->major, want[j].major, "%s", d->name);
		cr_assert_eq(d->minor, want[j].minor, "%s", d->name);
		j++;
	}
	hostinfo_rb_free(&rb);
}

Test(hostinfo_blockdev, missing_root)
{
	char root[PATH_MAX];
	struct capture cap;
	struct hostinfo_readback rb;

	snprintf(root, sizeof(root), "%s/nothing", hostinfo_tmpdir);
	cap_start(&cap);
	cr_assert_eq(blockdev__write_all(cap.w, root), -ENOENT);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(hostinfo_rb_count(&rb, CAP_REC_BLOCKDEV), 0);
	hostinfo_rb_free(&rb);
}

Test(hostinfo_blockdev, real_sys_has_vda)
{
	unsigned major = 0, minor = 0;
	struct hostinfo_readback rb;
	struct capture cap;
	bool found = false;
	size_t i;
	FILE *f = fopen("/sys/block/vda/dev", "r");

	if (!f)
		cr_skip_test("no /sys/block/vda on this machine");
	cr_assert_eq(fscanf(f, "%u:%u", &major, &minor), 2);
	fclose(f);
	cap_start(&cap);
	cr_assert_gt(blockdev__write_all(cap.w, "/sys"), 0);
	cap_finish_read(&cap, &rb);
	for (i = 0; i < rb.n; i++) {
		const struct cap_blockdev *d = &rb.v[i].rec.blockdev;

		if (rb.v[i].rec.type == CAP_REC_BLOCKDEV && !strcmp(d->name, "vda")) {
			cr_assert_eq(d->major, major);
			cr_assert_eq(d->minor, minor);
			found = true;
		}
	}
	cr_assert(found, "vda written");
	hostinfo_rb_free(&rb);
}
