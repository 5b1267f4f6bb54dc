// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Host information the recorder writes so captures symbolize offline:
 * build IDs (record/buildid.c), kernel symbols (record/ksyms.c), block
 * devices (record/blockdev.c), /proc maps (record/procmaps.c) and the perf
 * side band (record/sideband.c). Build IDs are checked against what
 * `readelf -n` prints for programs the tests compile.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/blockdev.h"
#include "record/buildid.h"
#include "record/intern.h"
#include "record/ksyms.h"
#include "record/procmaps.h"
#include "record/sideband.h"

/* ---- helpers ------------------------------------------------------------ */

static char tmpdir[64];

static void mk_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/stkrec-hostinfo-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (tmpdir[0] && system(cmd) != 0)
		cr_log_warn("could not remove %s", tmpdir);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* A program sleeping ms milliseconds, built into tmpdir/name with flags. */
static void build_prog(const char *name, const char *ldflags, int ms, char *out, size_t len)
{
	char src[PATH_MAX], cmd[PATH_MAX * 3], text[256];

	snprintf(src, sizeof(src), "%s/%s.c", tmpdir, name);
	snprintf(text, sizeof(text),
		 "#include <time.h>\nint main(void)\n{\n\tstruct timespec ts = "
		 "{ %d / 1000, %d %% 1000 * 1000000L };\n\tnanosleep(&ts, 0);\n"
		 "\treturn 0;\n}\n", ms, ms);
	write_file(src, text);
	snprintf(out, len, "%s/%s", tmpdir, name);
	snprintf(cmd, sizeof(cmd), "cc -O1 %s -o '%s' '%s'", ldflags, out, src);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Build ID as `readelf -n` prints it ("Build ID: 0a1b..."), as bytes. */
static int readelf_buildid(const char *path, uint8_t id[20])
{
	char cmd[PATH_MAX + 64], line[512], *p;
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "Build ID: ");
		if (!p)
			continue;
		for (p += 10; n < 20 && sscanf(p, "%2hhx", &id[n]) == 1; p += 2)
			n++;
		break;
	}
	pclose(f);
	return n;
}

static struct cap_header test_header(void)
{
	struct cap_header h = { .major = CAP_VERSION_MAJOR, .ncpus = 1, .page_size = 4096 };

	return h;
}

/* A capture in tmpdir with the real intern on it. */
struct capture {
	char path[PATH_MAX];
	struct cap_writer *w;
	struct intern *in;
};

static void cap_start(struct capture *c)
{
	struct cap_header h = test_header();

	snprintf(c->path, sizeof(c->path), "%s/capture.stkrec", tmpdir);
	cr_assert_eq(cap_writer__open(c->path, &h, NULL, &c->w), 0);
	cr_assert_eq(intern__new(c->w, &c->in), 0);
}

/* Records read back, STRING records resolved by id. */
struct rec_copy {
	struct cap_record rec;
	char tail[1024];
};

struct readback {
	struct rec_copy *v;
	size_t n;
	char **strings; /* by STRING id */
	size_t nstrings;
};

static void cap_finish_read(struct capture *c, struct readback *rb)
{
	struct cap_reader *r;
	struct cap_record rec;
	int err;

	intern__free(c->in);
	cr_assert_eq(cap_writer__finish(c->w), 0);
	memset(rb, 0, sizeof(*rb));
	cr_assert_eq(cap_reader__open(c->path, &r), 0);
	while ((err = cap_reader__next(r, &rec)) == 1) {
		struct rec_copy *rc;

		rb->v = realloc(rb->v, (rb->n + 1) * sizeof(*rb->v));
		cr_assert_not_null(rb->v);
		rc = &rb->v[rb->n++];
		rc->rec = rec;
		memset(rc->tail, 0, sizeof(rc->tail));
		if (rec.tail)
			memcpy(rc->tail, rec.tail, rec.tail_len < 1023 ? rec.tail_len : 1023);
		if (rec.type != CAP_REC_STRING)
			continue;
		cr_assert_eq(rec.string.id, rb->nstrings + 1, "STRING ids are dense");
		rb->strings = realloc(rb->strings, (rb->nstrings + 1) * sizeof(char *));
		rb->strings[rb->nstrings++] = strndup(rec.tail, rec.tail_len);
	}
	cr_assert_eq(err, 0);
	cr_assert_eq(cap_reader__stats(r)->bad_records, 0);
	cap_reader__close(r);
}

static const char *rb_string(const struct readback *rb, uint32_t id)
{
	cr_assert(id >= 1 && id <= rb->nstrings, "STRING %u defined before use", id);
	return rb->strings[id - 1];
}

static size_t rb_count(const struct readback *rb, uint16_t type)
{
	size_t i, n = 0;

	for (i = 0; i < rb->n; i++)
		n += rb->v[i].rec.type == type;
	return n;
}

static void rb_free(struct readback *rb)
{
	size_t i;

	for (i = 0; i < rb->nstrings; i++)
		free(rb->strings[i]);
	free(rb->strings);
	free(rb->v);
}

static bool is_root(void)
{
	return geteuid() == 0;
}

TestSuite(hostinfo_buildid, .init = mk_tmpdir, .fini = rm_tmpdir);
TestSuite(hostinfo_ksyms, .init = mk_tmpdir, .fini = rm_tmpdir);
TestSuite(hostinfo_blockdev, .init = mk_tmpdir, .fini = rm_tmpdir);
TestSuite(hostinfo_procmaps, .init = mk_tmpdir, .fini = rm_tmpdir);
TestSuite(hostinfo_sideband, .init = mk_tmpdir, .fini = rm_tmpdir);

/* ---- build IDs -------------------------------------------------------------- */

Test(hostinfo_buildid, sha1_matches_readelf)
{
	uint8_t want[20], got[20], size = 0xff;
	char prog[PATH_MAX];

	build_prog("sha1", "-Wl,--build-id=sha1", 1, prog, sizeof(prog));
	cr_assert_eq(readelf_buildid(prog, want), 20);
	cr_assert_eq(buildid__read_file(prog, got, &size), 0);
	cr_assert_eq(size, 20);
	cr_assert_arr_eq(got, want, 20);
}

Test(hostinfo_buildid, md5_is_16_bytes)
{
	uint8_t want[20], got[20], size = 0;
	char prog[PATH_MAX];

	build_prog("md5", "-Wl,--build-id=md5", 1, prog, sizeof(prog));
	cr_assert_eq(readelf_buildid(prog, want), 16);
	cr_assert_eq(buildid__read_file(prog, got, &size), 0);
	cr_assert_eq(size, 16);
	cr_assert_arr_eq(got, want, 16);
}

Test(hostinfo_buildid, none_gives_size_0)
{
	uint8_t want[20], got[20], size = 0xff;
	char prog[PATH_MAX];

	build_prog("noid", "-Wl,--build-id=none", 1, prog, sizeof(prog));
	cr_assert_eq(readelf_buildid(prog, want), 0);
	cr_assert_eq(buildid__read_file(prog, got, &size), 0);
	cr_assert_eq(size, 0);
}

Test(hostinfo_buildid, not_elf_and_missing)
{
	char path[PATH_MAX];
	uint8_t id[20], size = 0xff;

	snprintf(path, sizeof(path), "%s/text", tmpdir);
	write_file(path, "#!/bin/sh\necho not an ELF file\n");
	cr_assert_eq(buildid__read_file(path, id, &size), -ENOEXEC);
	cr_assert_eq(size, 0);
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
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

/* ---- kernel symbols ----------------------------------------------------------- */

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

	snprintf(ksyms_path, sizeof(ksyms_path), "%s/kallsyms", tmpdir);
	snprintf(mods_path, sizeof(mods_path), "%s/modules", tmpdir);
	write_file(ksyms_path, fake_kallsyms);
	write_file(mods_path, "mymod 256 0 - Live 0xffffffffc0001000\n");
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

	snprintf(path, sizeof(path), "%s/kallsyms", tmpdir);
	snprintf(mods, sizeof(mods), "%s/no-modules", tmpdir);
	write_file(path, "0000000000000000 T _stext\n0000000000000000 T schedule\n"
			 "0000000000000000 t mod_a\t[mymod]\n");
	cr_assert_eq(ksyms__load_files(path, mods, &ks), -EPERM);
	cr_assert_null(ks);
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	cr_assert_eq(ksyms__load_files(path, mods, &ks), -ENOENT);
}

static const struct cap_ksym *find_ksym(const struct readback *rb, uint64_t addr,
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
	struct readback rb;
	struct capture cap;
	const char *name;

	cap_start(&cap);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, a, 3), 2);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, b, 5), 2);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, c, 1), 1);
	cr_assert_eq(ksyms__write_for_ips(ks, cap.w, cap.in, a, 3), 0);
	cap_finish_read(&cap, &rb);

	cr_assert_eq(rb_count(&rb, CAP_REC_KSYM), 5);
	cr_assert_eq(rb_count(&rb, CAP_REC_STRING), 1);
	k = find_ksym(&rb, K0 + 0x100, &name);
	cr_assert_str_eq(name, "global_name");
	cr_assert_eq(k->size, 0x100);
	cr_assert_eq(k->module_id, 0);
	cr_assert_eq(k->name_len, strlen("global_name"));
	k = find_ksym(&rb, M0 + 0x40, &name);
	cr_assert_str_eq(name, "mod_b");
	cr_assert_eq(k->size, 0xc0);
	cr_assert_str_eq(rb_string(&rb, k->module_id), "mymod");
	k = find_ksym(&rb, K0 + 0x280, &name);
	cr_assert_str_eq(name, "weak_fn");
	rb_free(&rb);
	ksyms__free(ks);
}

Test(hostinfo_ksyms, hook_runs_through_intern)
{
	uint64_t ips[] = { K0 + 0x104, M0 + 1 };
	struct ksyms *ks = load_fake();
	struct ksyms_sink sink;
	struct readback rb;
	struct capture cap;
	uint32_t id;
	size_t i, ksym_at = 0, stack_at = 0;

	cap_start(&cap);
	sink = (struct ksyms_sink){ .ks = ks, .w = cap.w, .in = cap.in };
	intern__set_kstack_hook(cap.in, ksyms__kstack_hook, &sink);
	cr_assert_eq(intern__stack(cap.in, CAP_STACK_KERNEL, ips, 2, &id), 0);
	cr_assert_eq(intern__stack(cap.in, CAP_STACK_KERNEL, ips, 2, &id), 0);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(rb_count(&rb, CAP_REC_KSYM), 2);
	cr_assert_eq(rb_count(&rb, CAP_REC_STACK), 1);
	for (i = 0; i < rb.n; i++) {
		if (rb.v[i].rec.type == CAP_REC_KSYM)
			ksym_at = i;
		if (rb.v[i].rec.type == CAP_REC_STACK)
			stack_at = i;
	}
	cr_assert_lt(ksym_at, stack_at, "KSYM records precede the STACK");
	rb_free(&rb);
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
	struct readback rb;
	struct capture cap;
	size_t i;

	cap_start(&cap);
	cr_assert_eq(ksyms__write_kernel(ks, cap.w, cap.in), 0);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(rb_count(&rb, CAP_REC_KERNEL), 1);
	cr_assert_eq(rb_count(&rb, CAP_REC_KMOD), (size_t)count_lines("/proc/modules"));
	for (i = 0; i < rb.n; i++)
		if (rb.v[i].rec.type == CAP_REC_KERNEL)
			k = &rb.v[i].rec.kernel;
	cr_assert_eq(k->stext, kallsyms_addr("_stext"));
	cr_assert_eq(buildid__read_notes_file("/sys/kernel/notes", id, &size), 0);
	cr_assert_eq(k->build_id_size, size);
	cr_assert_arr_eq(k->build_id, id, size);
	rb_free(&rb);
	ksyms__free(ks);
}

/* ---- block devices --------------------------------------------------------------- */

static void fake_dev(const char *rel, const char *devno, bool partition)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/block/%s", tmpdir, rel);
	cr_assert_eq(mkdir(path, 0755), 0, "%s: %s", path, strerror(errno));
	if (devno) {
		snprintf(path, sizeof(path), "%s/sys/block/%s/dev", tmpdir, rel);
		write_file(path, devno);
	}
	if (partition) {
		snprintf(path, sizeof(path), "%s/sys/block/%s/partition", tmpdir, rel);
		write_file(path, "1\n");
	}
}

Test(hostinfo_blockdev, fake_sysfs_tree)
{
	static const struct { const char *name; uint32_t major, minor; } want[] = {
		{ "sda", 8, 0 }, { "sda1", 8, 1 }, { "sda2", 8, 2 },
		{ "cciss/c0d0", 104, 0 }, { "nvme0n1", 259, 0 }, { "nvme0n1p1", 259, 1 },
	};
	char root[PATH_MAX / 2], path[PATH_MAX];
	struct readback rb;
	struct capture cap;
	size_t i, j = 0;

	snprintf(root, sizeof(root), "%s/sys", tmpdir);
	cr_assert_eq(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/sys/block", tmpdir);
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
	cr_assert_eq(rb_count(&rb, CAP_REC_BLOCKDEV), 6);
	for (i = 0; i < rb.n; i++) {
		const struct cap_blockdev *d = &rb.v[i].rec.blockdev;

		if (rb.v[i].rec.type != CAP_REC_BLOCKDEV)
			continue;
		cr_assert_str_eq(d->name, want[j].name);
		cr_assert_eq(d->major, want[j].major, "%s", d->name);
		cr_assert_eq(d->minor, want[j].minor, "%s", d->name);
		j++;
	}
	rb_free(&rb);
}

Test(hostinfo_blockdev, missing_root)
{
	char root[PATH_MAX];
	struct capture cap;
	struct readback rb;

	snprintf(root, sizeof(root), "%s/nothing", tmpdir);
	cap_start(&cap);
	cr_assert_eq(blockdev__write_all(cap.w, root), -ENOENT);
	cap_finish_read(&cap, &rb);
	cr_assert_eq(rb_count(&rb, CAP_REC_BLOCKDEV), 0);
	rb_free(&rb);
}

Test(hostinfo_blockdev, real_sys_has_vda)
{
	unsigned major = 0, minor = 0;
	struct readback rb;
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
	rb_free(&rb);
}

/* ---- /proc maps -------------------------------------------------------------------- */

static const struct cap_mapping *find_mapping(const struct readback *rb, uint32_t pid,
					      const char *path, uint32_t flags)
{
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_mapping *m = &rb->v[i].rec.mapping;

		if (rb->v[i].rec.type == CAP_REC_MAPPING && m->pid == pid &&
		    (m->flags & flags) == flags && !strcmp(rb_string(rb, m->path_id), path))
			return m;
	}
	return NULL;
}

static const struct cap_thread *find_thread(const struct readback *rb, uint32_t tid,
					    uint32_t flags)
{
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_thread *t = &rb->v[i].rec.thread;

		if (rb->v[i].rec.type == CAP_REC_THREAD && t->tid == tid &&
		    (t->flags & flags) == flags)
			return t;
	}
	return NULL;
}

static size_t count_pid_mappings(const struct readback *rb, uint32_t pid)
{
	size_t i, n = 0;

	for (i = 0; i < rb->n; i++)
		n += rb->v[i].rec.type == CAP_REC_MAPPING && rb->v[i].rec.mapping.pid == pid;
	return n;
}

static void assert_buildid(const struct cap_mapping *m, const char *file)
{
	uint8_t want[20];
	int n = readelf_buildid(file, want);

	cr_assert_gt(n, 0, "%s has a build ID", file);
	cr_assert_eq(m->build_id_size, n, "%s", file);
	cr_assert_arr_eq(m->build_id, want, (size_t)n, "%s", file);
}

/* Path of the first executable file mapping of ours whose path has `part`. */
static bool own_mapping(const char *part, char *path, size_t len, uint64_t *start,
			uint64_t *end)
{
	char line[PATH_MAX + 128], perms[5], file[PATH_MAX];
	unsigned long long s, e;
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert_not_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %4s %*s %*s %*s %4095s", &s, &e, perms, file) < 3)
			continue;
		if (perms[2] == 'x' && file[0] == '/' && strstr(file, part)) {
			snprintf(path, len, "%s", file);
			*start = s;
			*end = e;
			found = true;
		}
	}
	fclose(f);
	return found;
}

Test(hostinfo_procmaps, scan_all_threads_and_own_mappings)
{
	char exe[PATH_MAX], libc[PATH_MAX], comm[32] = "";
	uint32_t self = (uint32_t)getpid();
	const struct cap_mapping *m;
	const struct cap_thread *t;
	struct procmaps *pm;
	struct readback rb;
	struct capture cap;
	uint64_t s, e;
	FILE *f;
	int n;

	if (!is_root())
		cr_skip_test("reading every process's maps needs root");
	cr_assert_gt(readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
	exe[readlink("/proc/self/exe", exe, sizeof(exe) - 1)] = '\0';
	cr_assert(own_mapping("libc.so", libc, sizeof(libc), &s, &e));
	f = fopen("/proc/self/comm", "r");
	cr_assert_not_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';

	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	n = procmaps__scan_all(pm, 12345);
	cr_assert_gt(n, 2);
	cr_assert(procmaps__known(pm, self));
	cr_assert_eq(procmaps__nr_known(pm), (size_t)n);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);

	m = find_mapping(&rb, self, exe, CAP_MAP_FROM_PROC);
	cr_assert_not_null(m, "MAPPING for %s", exe);
	cr_assert_eq(m->time, 12345);
	assert_buildid(m, exe);
	m = find_mapping(&rb, self, libc, CAP_MAP_FROM_PROC);
	cr_assert_not_null(m, "MAPPING for %s", libc);
	cr_assert_eq(m->start, s);
	cr_assert_eq(m->end, e);
	assert_buildid(m, libc);
	m = find_mapping(&rb, self, "[vdso]", CAP_MAP_FROM_PROC | CAP_MAP_ANON);
	cr_assert_not_null(m, "[vdso] flagged anonymous");
	cr_assert_eq(m->build_id_size, 0);

	t = find_thread(&rb, self, 0);
	cr_assert_not_null(t);
	cr_assert_eq(t->pid, self);
	cr_assert_str_eq(t->comm, comm);
	cr_assert_eq(t->flags, 0);
	t = find_thread(&rb, 2, CAP_THREAD_KERNEL); /* kthreadd */
	cr_assert_not_null(t, "kthreadd flagged as a kernel thread");
	cr_assert_str_eq(t->comm, "kthreadd");
	cr_assert_eq(count_pid_mappings(&rb, 2), 0);
	rb_free(&rb);
}

Test(hostinfo_procmaps, ensure_reads_once_and_caches_build_ids)
{
	uint32_t self = (uint32_t)getpid();
	struct procmaps *pm;
	struct readback rb;
	struct capture cap;
	uint64_t reads;
	size_t first;

	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_not(procmaps__known(pm, self));
	cr_assert_eq(procmaps__ensure(pm, self, 1), 0);
	cr_assert(procmaps__known(pm, self));
	reads = procmaps__buildid_reads(pm);
	cr_assert_gt(reads, 1, "executable and libc read");
	cr_assert_eq(procmaps__ensure(pm, self, 2), 0); /* known: no-op */
	cr_assert_eq(procmaps__nr_known(pm), 1);
	/* after exec the maps are read again, build IDs come from the cache */
	procmaps__exec(pm, self, 3);
	cr_assert_not(procmaps__known(pm, self));
	cr_assert_eq(procmaps__ensure(pm, self, 4), 0);
	cr_assert_eq(procmaps__buildid_reads(pm), reads);
	procmaps__forget(pm, self);
	cr_assert_eq(procmaps__nr_known(pm), 0);
	cr_assert_eq(procmaps__ensure(pm, 0x3ffffff0u, 5), -ESRCH);
	cr_assert_eq(procmaps__nr_known(pm), 0);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	first = count_pid_mappings(&rb, self);
	cr_assert_gt(first, 0);
	cr_assert_eq(first % 2, 0, "the same mappings twice");
	rb_free(&rb);
}

/* The pid set keeps exactly the pids added and not forgotten (linear
 * probing with backward-shift deletion). */
Test(hostinfo_procmaps, forget_keeps_the_others)
{
	uint32_t *pids = NULL;
	struct procmaps *pm;
	struct capture cap;
	struct readback rb;
	size_t n = 0, i, cap_pids = 0;
	struct dirent *de;
	DIR *d;

	if (!is_root())
		cr_skip_test("scanning all processes needs root");
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_gt(procmaps__scan_all(pm, 1), 0);
	d = opendir("/proc");
	while ((de = readdir(d))) {
		uint32_t pid = (uint32_t)atoi(de->d_name);

		if (!pid || !procmaps__known(pm, pid))
			continue;
		if (n == cap_pids) {
			cap_pids = cap_pids ? cap_pids * 2 : 64;
			pids = realloc(pids, cap_pids * sizeof(*pids));
		}
		pids[n++] = pid;
	}
	closedir(d);
	cr_assert_gt(n, 10);
	for (i = 0; i < n; i += 2)
		procmaps__forget(pm, pids[i]);
	for (i = 0; i < n; i++)
		cr_assert_eq(procmaps__known(pm, pids[i]), i % 2 == 1, "pid %u", pids[i]);
	for (i = 1; i < n; i += 2)
		procmaps__forget(pm, pids[i]);
	cr_assert_eq(procmaps__nr_known(pm), 0);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	rb_free(&rb);
	free(pids);
}

static pid_t spawn(const char *prog)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait until pid has exec'd prog (its maps show it). */
static void wait_mapped(pid_t pid, const char *prog)
{
	char path[64], line[PATH_MAX + 128];
	int tries;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (tries = 0; tries < 200; tries++) {
		FILE *f = fopen(path, "r");
		bool found = false;

		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, prog) != NULL;
		if (f)
			fclose(f);
		if (found)
			return;
		usleep(10000);
	}
	cr_assert_fail("%s never mapped in %d", prog, (int)pid);
}

/* A deleted executable is still read through /proc/PID/map_files. */
Test(hostinfo_procmaps, deleted_executable)
{
	const struct cap_mapping *m;
	char prog[PATH_MAX];
	uint8_t want[20];
	struct procmaps *pm;
	struct readback rb;
	struct capture cap;
	pid_t child;

	if (!is_root())
		cr_skip_test("/proc/PID/map_files needs root");
	build_prog("deleted", "-Wl,--build-id=sha1", 3000, prog, sizeof(prog));
	cr_assert_eq(readelf_buildid(prog, want), 20);
	child = spawn(prog);
	wait_mapped(child, prog);
	cr_assert_eq(unlink(prog), 0);
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_eq(procmaps__ensure(pm, (uint32_t)child, 7), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	m = find_mapping(&rb, (uint32_t)child, prog, CAP_MAP_FROM_PROC);
	cr_assert_not_null(m, "MAPPING for deleted %s, without \" (deleted)\"", prog);
	cr_assert_eq(m->build_id_size, 20);
	cr_assert_arr_eq(m->build_id, want, 20);
	rb_free(&rb);
}

Test(hostinfo_procmaps, add_fills_missing_build_id)
{
	struct cap_mapping in = { .time = 9, .pid = (uint32_t)getpid(),
				  .flags = CAP_MAP_FROM_SIDEBAND };
	const struct cap_mapping *m;
	char libc[PATH_MAX];
	struct procmaps *pm;
	struct readback rb;
	struct capture cap;
	uint8_t given[20];

	cr_assert(own_mapping("libc.so", libc, sizeof(libc), &in.start, &in.end));
	memset(given, 0xab, sizeof(given));
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	cr_assert_eq(procmaps__add(pm, &in, libc), 0);
	in.pid = 1000000; /* build ID from the kernel: kept, no file needed */
	in.build_id_size = 20;
	memcpy(in.build_id, given, 20);
	cr_assert_eq(procmaps__add(pm, &in, "/nonexistent/lib.so"), 0);
	in.pid = (uint32_t)getpid();
	in.build_id_size = 0;
	cr_assert_eq(procmaps__add(pm, &in, "//anon"), 0);
	cr_assert_not(procmaps__known(pm, (uint32_t)getpid()));
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);

	cr_assert_eq(rb_count(&rb, CAP_REC_MAPPING), 3);
	m = find_mapping(&rb, (uint32_t)getpid(), libc, CAP_MAP_FROM_SIDEBAND);
	cr_assert_not_null(m);
	cr_assert_eq(m->time, 9);
	assert_buildid(m, libc);
	m = find_mapping(&rb, 1000000, "/nonexistent/lib.so", CAP_MAP_FROM_SIDEBAND);
	cr_assert_not_null(m);
	cr_assert_eq(m->build_id_size, 20);
	cr_assert_arr_eq(m->build_id, given, 20);
	m = find_mapping(&rb, (uint32_t)getpid(), "//anon", CAP_MAP_ANON);
	cr_assert_not_null(m);
	cr_assert_eq(m->build_id_size, 0);
	rb_free(&rb);
}

/* ---- perf side band --------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct sideband *open_sideband(unsigned pages)
{
	int i, n = (int)sysconf(_SC_NPROCESSORS_ONLN), cpus[1024], err;
	struct sideband *sb = NULL;

	cr_assert(n > 0 && n <= 1024);
	for (i = 0; i < n; i++)
		cpus[i] = i;
	err = sideband__open(cpus, n, pages, &sb);
	if (err == -EACCES || err == -EPERM || err == -ENOENT || err == -ENOSYS)
		cr_skip_test("perf_event_open unavailable: %s", strerror(-err));
	cr_assert_eq(err, 0, "sideband__open: %s", strerror(-err));
	return sb;
}

/* Run prog to its end, draining every 2 ms while it lives (drain_live) or
 * only once it has exited. */
static void run_and_drain(struct sideband *sb, struct capture *cap, struct procmaps *pm,
			  const char *prog, bool drain_live, pid_t *child)
{
	int status, got;

	*child = spawn(prog);
	while ((got = waitpid(*child, &status, WNOHANG)) == 0) {
		if (drain_live)
			cr_assert_geq(sideband__drain(sb, cap->w, pm), 0);
		usleep(2000);
	}
	cr_assert_eq(got, *child);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert_geq(sideband__drain(sb, cap->w, pm), 0);
}

static const struct cap_fork *find_fork(const struct readback *rb, uint32_t pid)
{
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_fork *f = &rb->v[i].rec.fork;

		if (rb->v[i].rec.type == CAP_REC_FORK && f->pid == pid && f->tid == pid)
			return f;
	}
	return NULL;
}

/* The exec'd program: THREAD(EXEC), FORK and its MAPPING with the right
 * build ID, all timed inside [t0, t1] of CLOCK_MONOTONIC. */
static void assert_short_lived(const struct readback *rb, const char *prog, pid_t child,
			       uint64_t t0, uint64_t t1)
{
	const struct cap_mapping *m;
	const struct cap_thread *t;
	const struct cap_fork *f;

	f = find_fork(rb, (uint32_t)child);
	cr_assert_not_null(f, "FORK of %d", (int)child);
	cr_assert_eq(f->ppid, (uint32_t)getpid());
	cr_assert(f->time >= t0 && f->time <= t1, "fork at %llu not in [%llu, %llu]",
		  (unsigned long long)f->time, (unsigned long long)t0,
		  (unsigned long long)t1);
	t = find_thread(rb, (uint32_t)child, CAP_THREAD_EXEC);
	cr_assert_not_null(t, "THREAD with EXEC for %d", (int)child);
	cr_assert_eq(t->pid, (uint32_t)child);
	cr_assert_str_eq(t->comm, strrchr(prog, '/') + 1);
	cr_assert(t->time >= f->time && t->time <= t1);
	m = find_mapping(rb, (uint32_t)child, prog, CAP_MAP_FROM_SIDEBAND);
	cr_assert_not_null(m, "MAPPING of %s", prog);
	cr_assert(m->time >= t->time && m->time <= t1);
	cr_assert_eq(m->pgoff & 0xfff, 0);
	cr_assert_gt(m->end, m->start);
	assert_buildid(m, prog);
}

static void sideband_case(bool drain_live)
{
	char prog[PATH_MAX];
	struct procmaps *pm;
	struct sideband *sb;
	struct readback rb;
	struct capture cap;
	uint64_t t0, t1;
	pid_t child;

	build_prog("sb_prog", "-Wl,--build-id=sha1", 300, prog, sizeof(prog));
	sb = open_sideband(64);
	if (!drain_live && !sideband__has_build_id(sb))
		cr_skip_test("kernel gives no build IDs in MMAP2 (before 5.12)");
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	t0 = mono_ns();
	run_and_drain(sb, &cap, pm, prog, drain_live, &child);
	t1 = mono_ns();
	cr_assert_eq(sideband__lost(sb), 0);
	sideband__free(sb);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	cr_assert_gt(t1 - t0, 300000000ull);
	assert_short_lived(&rb, prog, child, t0, t1);
	rb_free(&rb);
}

Test(hostinfo_sideband, short_lived_process_drained_live)
{
	sideband_case(true);
}

/* Drained only after the process is gone: /proc has nothing left, the
 * kernel's build ID in MMAP2 is what makes it symbolizable. */
Test(hostinfo_sideband, process_gone_before_drain)
{
	sideband_case(false);
}

/* A one-page ring wraps many times (a run makes ~700 bytes of records);
 * records that straddle its end are copied whole, so every exec is seen.
 * Other work on the machine can overflow so small a ring: then the LOST
 * records must account for exactly what the kernel reported lost. */
#define WRAP_RUNS 24

static uint64_t lost_in_capture(const struct readback *rb)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < rb->n; i++) {
		const struct cap_lost *l = &rb->v[i].rec.lost;

		if (rb->v[i].rec.type != CAP_REC_LOST)
			continue;
		cr_assert_eq(l->kind, CAP_KIND_SIDEBAND);
		cr_assert_eq(l->reason, CAP_LOST_SIDEBAND);
		n += l->count;
	}
	return n;
}

Test(hostinfo_sideband, small_ring_wraps)
{
	char prog[PATH_MAX];
	struct procmaps *pm;
	struct sideband *sb;
	struct readback rb;
	struct capture cap;
	pid_t child[WRAP_RUNS];
	uint64_t lost;
	int i, seen = 0;

	build_prog("wrap_prog", "-Wl,--build-id=sha1", 1, prog, sizeof(prog));
	sb = open_sideband(1);
	cap_start(&cap);
	cr_assert_eq(procmaps__new(cap.w, cap.in, &pm), 0);
	for (i = 0; i < WRAP_RUNS; i++)
		run_and_drain(sb, &cap, pm, prog, true, &child[i]);
	lost = sideband__lost(sb);
	sideband__free(sb);
	procmaps__free(pm);
	cap_finish_read(&cap, &rb);
	for (i = 0; i < WRAP_RUNS; i++) {
		if (find_thread(&rb, (uint32_t)child[i], CAP_THREAD_EXEC) &&
		    find_mapping(&rb, (uint32_t)child[i], prog, CAP_MAP_FROM_SIDEBAND))
			seen++;
	}
	cr_assert_eq(lost_in_capture(&rb), lost);
	if (lost)
		cr_log_warn("busy machine: %llu side-band records lost, %d/%d runs seen",
			    (unsigned long long)lost, seen, WRAP_RUNS);
	else
		cr_assert_eq(seen, WRAP_RUNS);
	cr_assert_gt(seen, 0);
	rb_free(&rb);
}

Test(hostinfo_sideband, bad_arguments)
{
	struct sideband *sb = (void *)1;
	int cpu = 0;

	cr_assert_eq(sideband__open(&cpu, 1, 3, &sb), CAP_ERR_INVAL);
	cr_assert_null(sb);
	cr_assert_eq(sideband__open(&cpu, 0, 4, &sb), CAP_ERR_INVAL);
	cr_assert_eq(sideband__open(&cpu, 1, 0, &sb), CAP_ERR_INVAL);
}
