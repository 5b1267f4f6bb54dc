// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorder's symbol pack without reading the capture back (issue 30):
 * a packer fed each record as the writer takes it (pack__feed() through
 * cap_writer__set_tap()) writes, byte for byte, the pack a packer that
 * scans the same file writes; what it holds grows with the capture's
 * definitions and distinct (process, stack) pairs, not with its events;
 * and end to end, the recorder's pack of a recorded workload, and of each
 * --switch-output file, is record for record the one `stkrec pack` makes
 * of the same file.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/intern.h"
#include "pack/pack.h"
#include "tests/e2e_dir.h"

#define PID 4242
#define CHILD 4243 /* forked from PID, no mappings of its own */
#define ANON 0x7e0000000000ull

static void tap(void *ctx, uint16_t type, const void *fixed, size_t fixed_len,
		const void *tail, size_t tail_len)
{
	pack__feed(ctx, type, fixed, fixed_len, tail, tail_len);
}

/* Frames that name something: functions of this binary, and libc's. */
__attribute__((noinline)) static int pf_leaf_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int pf_leaf_b(int x)
{
	return x * 5 + 2;
}

/* The executable mappings of this process, as PID's MAPPINGs. */
static void write_maps(struct cap_writer *w, struct intern *in)
{
	struct cap_mapping m = { .pid = PID, .start = ANON, .end = ANON + 4096,
				 .flags = CAP_MAP_ANON };
	char line[PATH_MAX + 128], perms[8], path[PATH_MAX];
	unsigned long start, end, pgoff;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end, perms, &pgoff,
			   path) < 4 || perms[2] != 'x' || path[0] != '/')
			continue;
		m = (struct cap_mapping){ .pid = PID, .start = start, .end = end, .pgoff = pgoff };
		cr_assert_eq(intern__string(in, path, strlen(path), &m.path_id), 0);
		cr_assert_eq(cap_writer__append(w, CAP_REC_MAPPING, &m, sizeof(m), NULL, 0), 0);
		n++;
	}
	fclose(f);
	cr_assert_geq(n, 2, "this binary and libc");
	m = (struct cap_mapping){ .pid = PID, .start = ANON, .end = ANON + 4096,
				  .flags = CAP_MAP_ANON };
	cr_assert_eq(cap_writer__append(w, CAP_REC_MAPPING, &m, sizeof(m), NULL, 0), 0);
}

/* A capture's definitions and events, every kind the packer reads. */
static void write_capture(struct cap_writer *w, struct intern *in)
{
	const uint64_t s1[] = { (uintptr_t)pf_leaf_a + 2, (uintptr_t)pf_leaf_b + 3,
				(uintptr_t)write_capture + 8 };
	const uint64_t s2[] = { (uintptr_t)strlen + 1, (uintptr_t)pf_leaf_a + 1, UINT64_MAX };
	const uint64_t s3[] = { ANON + 64, (uintptr_t)memcpy + 4, (uintptr_t)pf_leaf_b + 1 };
	struct cap_fork fk = { .time = 1, .pid = CHILD, .tid = CHILD, .ppid = PID, .ptid = PID };
	struct cap_stat st = { .value = 7 };
	uint32_t u[3];
	int i;

	write_maps(w, in);
	cr_assert_eq(cap_writer__append(w, CAP_REC_FORK, &fk, sizeof(fk), NULL, 0), 0);
	cr_assert_eq(intern__stack(in, CAP_STACK_USER, s1, 3, &u[0]), 0);
	cr_assert_eq(intern__stack(in, CAP_STACK_USER, s2, 3, &u[1]), 0);
	cr_assert_eq(intern__stack(in, CAP_STACK_USER, s3, 3, &u[2]), 0);
	for (i = 0; i < 300; i++) {
		struct cap_offcpu o = { .start = 10 + i, .duration = 1, .tid = PID,
					.pid = i % 2 ? CHILD : PID, .ustack = u[i % 3] };
		struct cap_cpu c = { .time = 20 + i, .tid = PID, .pid = PID, .ustack = u[i % 2] };
		struct cap_bio b = { .issue_time = 30 + i, .complete_time = 31 + i,
				     .pid = CHILD, .ustack = u[2] };

		cr_assert_eq(cap_writer__append(w, CAP_REC_OFFCPU, &o, sizeof(o), NULL, 0), 0);
		cr_assert_eq(cap_writer__append(w, CAP_REC_CPU, &c, sizeof(c), NULL, 0), 0);
		cr_assert_eq(cap_writer__append(w, CAP_REC_BIO, &b, sizeof(b), NULL, 0), 0);
	}
	cr_assert_eq(intern__string(in, "a.key", 5, &st.key_id), 0);
	cr_assert_eq(cap_writer__append(w, CAP_REC_STAT, &st, sizeof(st), NULL, 0), 0);
}

/* p's pack alone in the file at path: its own interner, ids after 1000. */
static struct cap_pack_info write_pack(struct packer *p, const char *path)
{
	struct cap_header h = { .major = CAP_VERSION_MAJOR, .minor = CAP_VERSION_MINOR,
				.start_time = 1 };
	struct cap_pack_info info;
	struct cap_writer *w;
	struct intern *in;

	cr_assert_eq(cap_writer__open(path, &h, NULL, &w), 0);
	cr_assert_eq(intern__new(w, &in), 0);
	cr_assert_eq(intern__set_bases(in, &(struct intern_ids){ .string = 1000 }), 0);
	cr_assert_eq(pack__write(p, w, in, &info), 0);
	intern__free(in);
	cr_assert_eq(cap_writer__finish(w), 0);
	return info;
}

static char *slurp(const char *path, size_t *len)
{
	char *s = rc_slurp(path, len);

	cr_assert_not_null(s, "%s", path);
	return s;
}

/* Does the capture at path hold the STRING s? */
static bool has_string(const char *path, const char *s)
{
	struct cap_record rec;
	struct cap_reader *r;
	bool found = false;

	cr_assert_eq(cap_reader__open(path, &r), 0);
	while (!found && cap_reader__next(r, &rec) == 1)
		found = rec.type == CAP_REC_STRING && !strcmp(rec.tail, s);
	cap_reader__close(r);
	return found;
}

TestSuite(pack_feed);

/* The pack from the records as written and the pack from the file read
 * back: the same bytes. */
Test(pack_feed, fed_pack_is_the_scanned_pack_to_the_byte)
{
	char cap[] = "/tmp/stkrec-packfeed-XXXXXX", fed[64], scanned[64];
	struct cap_header h = { .major = CAP_VERSION_MAJOR, .minor = CAP_VERSION_MINOR };
	const struct pack_opts o = { 0 };
	struct cap_pack_info fi, si;
	struct packer *pf, *ps;
	struct cap_writer *w;
	struct intern *in;
	size_t flen, slen;
	char *fb, *sb;
	int fd = mkstemp(cap);

	cr_assert_geq(fd, 0);
	snprintf(fed, sizeof(fed), "%s.fed", cap);
	snprintf(scanned, sizeof(scanned), "%s.scanned", cap);
	cr_assert_eq(cap_writer__fdopen(fd, &h, NULL, &w), 0);
	cr_assert_eq(pack__new(&o, &pf), 0);
	cap_writer__set_tap(w, tap, pf);
	cr_assert_eq(intern__new(w, &in), 0);
	write_capture(w, in);
	cap_writer__set_tap(w, NULL, NULL);
	cr_assert_eq(cap_writer__flush(w), 0);
	cr_assert_eq(pack__new(&o, &ps), 0);
	cr_assert_eq(pack__scan(ps, cap), 0);

	fi = write_pack(pf, fed);
	si = write_pack(ps, scanned);
	fb = slurp(fed, &flen);
	sb = slurp(scanned, &slen);
	cr_assert_eq(flen, slen);
	cr_assert(!memcmp(fb, sb, flen), "the fed pack differs from the scanned one");
	cr_assert(!memcmp(&fi, &si, sizeof(fi)));
	/* a pack that names: this binary's functions, libc, the JIT address */
	cr_assert_geq(fi.objects, 2);
	cr_assert_geq(fi.symbols, 4);
	cr_assert(has_string(fed, "pf_leaf_a") && has_string(fed, "pf_leaf_b"));
	cr_assert_geq(fi.unnamed, 1, "the anonymous frame");
	free(fb);
	free(sb);
	pack__free(pf);
	pack__free(ps);
	intern__free(in);
	cap_writer__free(w);
	unlink(cap);
	unlink(fed);
	unlink(scanned);
}

/* Definitions (2 strings, 3 user stacks, 2 mappings, a fork) and n events
 * over 2 processes and the 3 stacks: 6 pairs. */
static struct pack_usage fed_events(unsigned long n, int extra_stacks)
{
	const struct pack_opts o = { 0 };
	struct cap_string s1 = { .id = 1, .len = 6 }, s2 = { .id = 2, .len = 3 };
	struct cap_mapping m = { .start = 0x1000, .end = 0x2000, .path_id = 1 };
	struct cap_fork f = { .pid = 11, .tid = 11, .ppid = 10 };
	struct cap_stat st = { .key_id = 2 };
	struct cap_stack k = { .kind = CAP_STACK_USER, .nr = 2 };
	const uint64_t ips[2] = { 0x1100, 0x1200 };
	struct pack_usage u;
	struct packer *p;
	unsigned long i;
	int nstacks = 3 + extra_stacks;

	cr_assert_eq(pack__new(&o, &p), 0);
	cr_assert_eq(pack__feed(p, CAP_REC_STRING, &s1, sizeof(s1), "/bin/x", 6), 0);
	cr_assert_eq(pack__feed(p, CAP_REC_STRING, &s2, sizeof(s2), "key", 3), 0);
	for (k.id = 1; k.id <= (uint32_t)nstacks; k.id++)
		cr_assert_eq(pack__feed(p, CAP_REC_STACK, &k, sizeof(k), ips, sizeof(ips)), 0);
	for (m.pid = 10; m.pid <= 11; m.pid++)
		cr_assert_eq(pack__feed(p, CAP_REC_MAPPING, &m, sizeof(m), NULL, 0), 0);
	cr_assert_eq(pack__feed(p, CAP_REC_FORK, &f, sizeof(f), NULL, 0), 0);
	cr_assert_eq(pack__feed(p, CAP_REC_STAT, &st, sizeof(st), NULL, 0), 0);
	for (i = 0; i < n; i++) {
		struct cap_offcpu o = { .start = i, .duration = 1, .tid = 10 + i % 2,
					.pid = 10 + i % 2, .ustack = 1 + i % nstacks };

		cr_assert_eq(pack__feed(p, CAP_REC_OFFCPU, &o, sizeof(o), NULL, 0), 0);
	}
	pack__usage(p, &u);
	pack__free(p);
	return u;
}

/* What a packer holds after 1k and after 1M events over the same stacks:
 * the same entries, the same bytes. */
Test(pack_feed, held_memory_grows_with_definitions_not_events)
{
	struct pack_usage a = fed_events(1000, 0), b = fed_events(1000000, 0);
	struct pack_usage c = fed_events(1000, 2);

	/* 2 strings + 3 stacks + 2 mappings + 1 process (the fork) + 6 pairs
	 * + 2 STRING ids referred to (the mappings' path, the STAT key) */
	cr_assert_eq(a.entries, 16);
	cr_assert_eq(b.entries, a.entries);
	cr_assert_eq(b.bytes, a.bytes, "%llu bytes after 1k events, %llu after 1M",
		     (unsigned long long)a.bytes, (unsigned long long)b.bytes);
	/* what it counts is real: 2 more stacks (5), 2 more definitions and
	 * 4 more pairs (2 processes x 5 stacks) */
	cr_assert_eq(c.entries, 16 + 2 + 4);
	cr_assert_gt(c.bytes, a.bytes);
}

/* ---- end to end: the recorder's pack, `stkrec pack`'s ---------------------- */

struct strtab {
	char **s;
	size_t n;
};

static const char *str_of(const struct strtab *t, uint32_t id)
{
	return id < t->n && t->s[id] ? t->s[id] : id ? "<undefined>" : "-";
}

static void str_add(struct strtab *t, uint32_t id, const char *s)
{
	if (id >= t->n) {
		t->s = realloc(t->s, (id + 1) * sizeof(*t->s));
		cr_assert_not_null(t->s);
		memset(t->s + t->n, 0, (id + 1 - t->n) * sizeof(*t->s));
		t->n = id + 1;
	}
	if (!t->s[id])
		t->s[id] = strdup(s);
}

/* One PACK record as text, its STRING ids by what they name. */
static void pack_line(FILE *f, const struct strtab *t, const struct cap_record *r)
{
	const struct cap_pack_info *k = &r->pack_info;
	size_t i;

	switch (r->type) {
	case CAP_REC_PACK_OBJECT:
		fprintf(f, "object %u %s flags %u bid", r->pack_object.id,
			str_of(t, r->pack_object.path_id), r->pack_object.flags);
		for (i = 0; i < r->pack_object.build_id_size && i < 20; i++)
			fprintf(f, "%02x", r->pack_object.build_id[i]);
		break;
	case CAP_REC_PACK_SYMBOL:
		fprintf(f, "symbol %u object %u %s %#llx+%llu", r->pack_symbol.id,
			r->pack_symbol.object, str_of(t, r->pack_symbol.name_id),
			(unsigned long long)r->pack_symbol.start,
			(unsigned long long)r->pack_symbol.size);
		break;
	case CAP_REC_PACK_ADDR:
		fprintf(f, "addr object %u %#llx symbol %u:", r->pack_addr.object,
			(unsigned long long)r->pack_addr.offset, r->pack_addr.symbol);
		for (i = 0; i < r->pack_addr.nr; i++)
			fprintf(f, " %s@%s:%u", str_of(t, r->frames[i].name_id),
				str_of(t, r->frames[i].file_id), r->frames[i].line);
		break;
	case CAP_REC_PACK_JIT:
		fprintf(f, "jit %u %#llx+%llu at %llu %s", r->pack_jit.pid,
			(unsigned long long)r->pack_jit.start,
			(unsigned long long)r->pack_jit.size,
			(unsigned long long)r->pack_jit.time, r->tail);
		break;
	case CAP_REC_PACK_INFO:
		fprintf(f, "info %llu %llu %llu %llu %llu %llu %llu %llu",
			(unsigned long long)k->objects, (unsigned long long)k->symbols,
			(unsigned long long)k->addresses, (unsigned long long)k->jit_entries,
			(unsigned long long)k->jit_maps, (unsigned long long)k->unnamed,
			(unsigned long long)k->objects_missing, (unsigned long long)k->left_out);
		break;
	default:
		return;
	}
	fputc('\n', f);
}

/* The PACK records of DIR/cap in their order, one a line. */
static char *pack_text(const char *cap)
{
	struct strtab t = { 0 };
	char path[PATH_MAX], *buf = NULL;
	struct cap_record rec;
	struct cap_reader *r;
	size_t len, i;
	FILE *f = open_memstream(&buf, &len);

	snprintf(path, sizeof(path), "%s/%s", dir, cap);
	cr_assert_eq(cap_reader__open(path, &r), 0, "%s", path);
	while (cap_reader__next(r, &rec) == 1) {
		if (rec.type == CAP_REC_STRING)
			str_add(&t, rec.string.id, rec.tail);
		else
			pack_line(f, &t, &rec);
	}
	cr_assert_eq(cap_reader__stats(r)->recovered, false, "%s is damaged", cap);
	cap_reader__close(r);
	fclose(f);
	for (i = 0; i < t.n; i++)
		free(t.s[i]);
	free(t.s);
	return buf;
}

/* DIR/cap's pack, and the one `stkrec pack` makes of it: the same records
 * in the same order. Returns the text. */
static char *same_as_pack_command(const char *cap)
{
	char re[PATH_MAX], *mine, *theirs;
	struct res r;

	snprintf(re, sizeof(re), "%s.re", cap);
	r = stkrec("pack %s -o %s", cap, re);
	cr_assert_eq(r.code, 0, "%s", r.err);
	res_free(&r);
	mine = pack_text(cap);
	theirs = pack_text(re);
	cr_assert(strstr(mine, "\ninfo ") || !strncmp(mine, "info ", 5), "%s: no pack", cap);
	cr_assert_str_eq(mine, theirs, "%s: the recorder's pack differs from stkrec pack's", cap);
	free(theirs);
	return mine;
}

static void e2e_setup(void)
{
	e2e_dir_setup("packfeed");
}

TestSuite(pack_feed_e2e, .init = e2e_setup, .fini = e2e_dir_teardown, .timeout = 120);

/* A recording of paced workloads (no storm): the recorder's pack is
 * `stkrec pack`'s of the same file, and names the workloads. */
Test(pack_feed_e2e, recorder_pack_is_stkrec_pack_record_for_record)
{
	static const char *const names[] = {
		"pipe_reader_wait", "pipe_reader_loop", "burn_a", "burn_b", "sleeper_loop",
	};
	char *text;
	size_t i;

	workload("pipewait", "pipewait");
	workload("cpuburn", "cpuburn");
	workload("sleeper", "sleeper");
	free(record("-e offcpu,cpu -F 499 -o a.cap -- sh -c 'bin/pipewait 40 10; "
		    "bin/cpuburn 400 25; bin/sleeper 200 10'"));
	text = same_as_pack_command("a.cap");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect(strstr(text, names[i]), "no %s in the pack:\n%s", names[i], text);
	free(text);
}

/* --switch-output: each file's packer is its own, fed from the file's
 * first record: every file's pack is `stkrec pack`'s of it. */
Test(pack_feed_e2e, switch_output_files_each_packed_as_stkrec_pack)
{
	char pat[PATH_MAX], *text, *name;
	size_t i, named = 0;
	glob_t g;

	workload("cpuburn", "cpuburn");
	workload("pipewait", "pipewait");
	free(record("-e offcpu,cpu -F 499 --switch-output 1s -o sw.cap -- sh -c "
		    "'bin/cpuburn 1200 25; bin/pipewait 60 20; bin/cpuburn 800 25'"));
	snprintf(pat, sizeof(pat), "%s/sw.cap.*", dir);
	cr_assert_eq(glob(pat, 0, NULL, &g), 0);
	cr_assert_geq(g.gl_pathc, 3);
	for (i = 0; i < g.gl_pathc; i++) {
		name = strrchr(g.gl_pathv[i], '/') + 1;
		text = same_as_pack_command(name);
		named += strstr(text, "burn_a") || strstr(text, "pipe_reader_wait");
		free(text);
	}
	cr_assert_geq(named, 2, "the workloads named in fewer than 2 files");
	globfree(&g);
}
