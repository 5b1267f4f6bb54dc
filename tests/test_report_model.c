// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture model and the frame resolver: tables, names over time, exec
 * and fork aware mappings, hostile ids, recovery, unreadable files, the
 * per-address cache, and real symbols through the symbolizer for a program
 * compiled by the test.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include "tests/report_run.h"

TestSuite(report_model, .init = setup, .fini = teardown);

Test(report_model, tables)
{
	const char *key;
	uint64_t v, off;

	cr_assert_eq(model__nr_events(model, CAP_KIND_OFFCPU), 10);
	cr_assert_eq(model__nr_events(model, CAP_KIND_CPU), 4);
	cr_assert_eq(model__nr_events(model, CAP_KIND_BIO), 6);
	cr_assert_eq(model__lost(model, CAP_KIND_OFFCPU, CAP_LOST_RINGBUF), 5);
	cr_assert_eq(model__lost(model, CAP_KIND_CPU, CAP_LOST_USTACK), 2);
	cr_assert_eq(model__lost(model, 7, 0), 0);
	cr_assert_eq(model__stat(model, 0, &key, &v), 0);
	cr_assert_str_eq(key, "ringbuf_polls");
	cr_assert_eq(v, 10);
	cr_assert_eq(model__stat(model, 1, &key, &v), -ENOENT);
	cr_assert_not_null(model__end(model));
	cr_assert_eq(model__last_time(model), RC_T0 + 3 * RC_S);
	cr_assert_str_eq(model__blockdev(model, 8, 0), "sda");
	cr_assert_null(model__blockdev(model, 8, 16));
	cr_assert_str_eq(model__kmod(model, 0xffffffffc0100010ull, &off), "ext4");
	cr_assert_eq(off, 0x10);
	cr_assert_null(model__kmod(model, 0xffffffffc0026138ull, &off));
	cr_assert_str_eq(model__string(model, 5), RC_ROOT "/usr/bin/app2");
	cr_assert_null(model__string(model, 4242));
	cr_assert_not(model__recovered(model));
}

Test(report_model, stacks_and_ids)
{
	const uint64_t *ips;

	cr_assert_eq(model__stack(model, 10, &ips), 3);
	cr_assert_eq(ips[0], 0x7f0000001234ull);
	cr_assert_eq(model__stack(model, CAP_STACK_NONE, &ips), 0);
	cr_assert_eq(model__stack(model, CAP_STACK_LOST, &ips), -ENOENT);
	cr_assert_eq(model__stack(model, 99, &ips), -ENOENT);
	cr_assert_eq(model__stack(model, 0xfffffffe, &ips), -ENOENT);
}

Test(report_model, names_over_time)
{
	cr_assert_str_eq(model__comm_name(model, model__comm_id(model, 400, RC_T0 + RC_S / 2)), "sh");
	cr_assert_str_eq(model__comm_name(model, model__comm_id(model, 400, RC_T0 + 2 * RC_S)), "app2");
	/* before the first record: the earliest name */
	cr_assert_str_eq(model__comm_name(model, model__comm_id(model, 400, 1)), "sh");
	cr_assert_str_eq(model__comm_name(model, model__comm_id(model, 12345, RC_T0)), "[unknown]");
	cr_assert(model__is_kthread(model, RC_KTHREAD));
	cr_assert(model__is_kthread(model, 0));
	cr_assert_not(model__is_kthread(model, RC_APP_PID));
}

/* The span a name holds: from its record (the first's from 0) to the
 * next record (the last's to the end of time). */
Test(report_model, name_spans)
{
	uint64_t from, to;

	cr_assert_str_eq(model__comm_name(model, model__comm_span(model, 400, RC_T0 + RC_S / 2,
								  &from, &to)), "sh");
	cr_assert(from == 0 && to == RC_T0 + RC_S, "[%" PRIu64 ", %" PRIu64 ")", from, to);
	cr_assert_eq(model__comm_span(model, 400, 1, &from, &to),
		     model__comm_id(model, 400, RC_T0));
	cr_assert(from == 0 && to == RC_T0 + RC_S);
	cr_assert_str_eq(model__comm_name(model, model__comm_span(model, 400, RC_T0 + RC_S,
								  &from, &to)), "app2");
	cr_assert(from == RC_T0 + RC_S && to == UINT64_MAX, "[%" PRIu64 ", %" PRIu64 ")", from,
		  to);
	cr_assert_eq(model__comm_span(model, 12345, RC_T0, &from, &to), 0);
	cr_assert(from == 0 && to == UINT64_MAX);
}

Test(report_model, mappings_exec_and_fork)
{
	const struct model_map *mp;

	mp = model__find_map(model, 400, RC_T0 + RC_S / 2, 0x400500);
	cr_assert_not_null(mp);
	cr_assert_str_eq(model__dso(model, mp->dso)->base, "sh");
	mp = model__find_map(model, 400, RC_T0 + 2 * RC_S, 0x400500);
	cr_assert_str_eq(model__dso(model, mp->dso)->base, "app2");
	/* after the exec but before the new mapping was seen: still app2's epoch */
	mp = model__find_map(model, 400, RC_T0 + RC_S + 1, 0x400500);
	cr_assert_str_eq(model__dso(model, mp->dso)->base, "app2");
	/* pid 401: no mappings of its own, its parent's */
	mp = model__find_map(model, 401, RC_T0 + RC_S, 0x401100);
	cr_assert_not_null(mp);
	cr_assert_eq(mp->pid, RC_APP_PID);
	cr_assert_null(model__find_map(model, 401, RC_T0, 0x900000));
	cr_assert_null(model__find_map(model, 999, RC_T0, 0x401100));
}

Test(report_model, resolver_names_and_cache)
{
	struct symbolizer_stats st1, st2;
	struct rframe fr[RESOLVE_MAX_FRAMES];
	struct resolver *res;
	int i, n;

	cr_assert_eq(resolver__new(model, NULL, &res), 0);
	n = resolver__kernel(res, 1, fr, RESOLVE_MAX_FRAMES);
	/* the BPF program and bpf_trace_run4 are stripped */
	cr_assert_eq(n, 6);
	cr_assert_str_eq(fr[0].name, "__schedule");
	cr_assert_str_eq(fr[0].dso, "[kernel.kallsyms]");
	cr_assert_eq(fr[0].offset, 0x20);
	n = resolver__kernel(res, 3, fr, RESOLVE_MAX_FRAMES);
	cr_assert_str_eq(fr[0].dso, "[ext4]");
	n = resolver__user(res, RC_APP_PID, RC_T0, 10, fr, RESOLVE_MAX_FRAMES);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(fr[0].name, "libc.so.6+0x1234");
	cr_assert_str_eq(fr[0].dso, "libc.so.6");
	cr_assert_eq(fr[0].ip, 0x7f0000001234ull);
	resolver__sym_stats(res, &st1);
	/* the same addresses again, from another process sharing the objects:
	 * no new symbolizer lookup */
	for (i = 0; i < 1000; i++)
		n = resolver__user(res, 401, RC_T0 + i, 10, fr, RESOLVE_MAX_FRAMES);
	resolver__sym_stats(res, &st2);
	cr_assert_eq(st2.lookups, st1.lookups);
	cr_assert_eq(n, 3);
	cr_assert_eq(resolver__user(res, 100, RC_T0, CAP_STACK_LOST, fr, 4), 1);
	cr_assert_str_eq(fr[0].name, "[Missed User Stack]");
	cr_assert_eq(resolver__kernel(res, 77, fr, 4), 1);
	cr_assert_str_eq(fr[0].name, "[lost stack]");
	cr_assert_eq(resolver__user(res, 999, RC_T0, 10, fr, 4), 3);
	cr_assert_str_eq(fr[0].name, "[unknown]");
	resolver__free(res);
}

Test(report_model, recovered_capture)
{
	char *path = rc_tmpname("trunc");
	struct rc_opts o = { .truncate = true };
	struct model *m;

	cr_assert_eq(rc_write_scene(path, &o), 0);
	cr_assert_eq(model__load(path, &m), 0);
	cr_assert(model__recovered(m));
	cr_assert_gt(strlen(model__loss_text(m)), 0);
	cr_assert_null(model__end(m));
	/* everything before the cut is there */
	cr_assert_eq(model__nr_events(m, CAP_KIND_OFFCPU), 10);
	model__free(m);
	unlink(path);
	free(path);
}

Test(report_model, memory_limit)
{
	char *path = rc_tmpname("big");
	struct rc_opts o = { .extra_cpu = 200000 };
	struct model_opts mo = { .max_memory = 1 << 20 };
	struct model *m;

	cr_assert_eq(rc_write_scene(path, &o), 0);
	cr_assert_eq(model__load_opts(path, &mo, &m), 0);
	cr_assert(model__recovered(m));
	cr_assert_not_null(strstr(model__loss_text(m), "memory limit (1 MiB)"));
	cr_assert_lt(model__nr_events(m, CAP_KIND_CPU), 200000);
	model__free(m);
	cr_assert_eq(model__load(path, &m), 0);
	cr_assert_not(model__recovered(m));
	cr_assert_eq(model__nr_events(m, CAP_KIND_CPU), 200004);
	model__free(m);
	unlink(path);
	free(path);
}

Test(report_model, unreadable_files)
{
	char *path = rc_tmpname("bad");
	struct model *m = NULL;
	FILE *f;

	cr_assert_eq(model__load("/nonexistent/stkrec.cap", &m), -ENOENT);
	f = fopen(path, "w");
	fclose(f);
	cr_assert_eq(model__load(path, &m), CAP_ERR_EMPTY);
	f = fopen(path, "w");
	fputs("this is not a capture, just some text long enough to be looked at\n", f);
	fclose(f);
	cr_assert_eq(model__load(path, &m), CAP_ERR_BAD_MAGIC);
	cr_assert_eq(model__load("/tmp", &m), CAP_ERR_NOT_FILE);
	cr_assert_null(m);
	unlink(path);
	free(path);
}

Test(report_model, hostile_definitions)
{
	char *path = rc_tmpname("hostile");
	struct cap_writer *w = rc_open(path);
	static const uint64_t ips[] = { 0x1000 };
	struct report_opts o = { .with_pid = true };
	struct filter f = { 0 };
	struct model *saved = model;
	char *s;

	cr_assert_not_null(w);
	/* duplicate ids: the first definition stands; a mapping whose path was
	 * never defined; huge ids; a stack used but never defined */
	cr_assert_eq(rc_string(w, 1, "/bin/first") ?: rc_string(w, 1, "/bin/second") ?:
		     cap_writer__stack(w, 0xfffffffe, CAP_STACK_USER, ips, 1) ?:
		     cap_writer__stack(w, 0xfffffffe, CAP_STACK_USER, ips, 0) ?:
		     rc_map(w, 0, 7, 0x1000, 0x2000, 0, 1) ?:
		     rc_map(w, 0, 8, 0x1000, 0x2000, 0, 0x7fffffff) ?:
		     rc_map(w, 0, 9, 0x3000, 0x1000, 0, 1) ?: /* end before start */
		     rc_thread(w, 0, 7, 7, 0, "p7") ?:
		     rc_cpu(w, RC_T0, 7, 7, 0xfffffffe, 0) ?:
		     rc_cpu(w, RC_T0, 8, 8, 0xfffffffe, 0) ?:
		     rc_cpu(w, RC_T0, 9, 9, 0xfffffffe, 0) ?:
		     rc_cpu(w, RC_T0, 7, 7, 0xfffffffd, 0xfffffffc), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
	cr_assert_eq(model__load(path, &model), 0);
	s = run(view_folded, &f, &o);
	cr_assert_str_eq(s, "[unknown]-8;[unknown] 1\n"
			    "[unknown]-9;[unknown] 1\n"
			    "p7-7;[lost stack];[lost stack] 1\n"
			    "p7-7;first+0x0 1\n");
	free(s);
	model__free(model);
	model = saved;
	unlink(path);
	free(path);
}

/* ---- real symbols through the symbolizer ------------------------------ */

static const char prog_src[] =
	"__attribute__((noinline)) int leaf_fn(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) int caller_fn(int x) { return leaf_fn(x) + 2; }\n"
	"int main(int argc, char **argv) { (void)argv; return caller_fn(argc); }\n";

/* File offset of a symbol's address, through the program headers. */
static uint64_t sym_offset(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	GElf_Sym sym;
	size_t i, n, k;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			gelf_getsym(d, i, &sym);
			if (strcmp(elf_strptr(e, sh.sh_link, sym.st_name), name))
				continue;
			elf_getphdrnum(e, &n);
			for (k = 0; k < n; k++) {
				gelf_getphdr(e, k, &ph);
				if (ph.p_type == PT_LOAD && sym.st_value >= ph.p_vaddr &&
				    sym.st_value < ph.p_vaddr + ph.p_filesz)
					return sym.st_value - ph.p_vaddr + ph.p_offset;
			}
		}
	}
	return 0;
}

static int build_id(Elf *e, uint8_t *bid)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	size_t off = 0, noff, doff;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		off = 0;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 20) {
				memcpy(bid, (char *)d->d_buf + doff, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

Test(report_model, real_elf_symbols)
{
	char src[] = "/tmp/stkrec-report-progXXXXXX.c", cmd[512], *exe, *path, *s;
	struct rc_opts o = { 0 };
	struct filter f = { .kinds = 1u << CAP_KIND_CPU };
	struct model *saved = model;
	uint8_t bid[20];
	int fd;
	Elf *e;

	fd = mkstemps(src, 2);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, prog_src, sizeof(prog_src) - 1), (ssize_t)sizeof(prog_src) - 1);
	close(fd);
	exe = strndup(src, strlen(src) - 2);
	snprintf(cmd, sizeof(cmd), "cc -O1 -g -Wl,--build-id -o %s %s", exe, src);
	if (system(cmd) != 0)
		cr_skip_test("no C compiler to build the test program");
	elf_version(EV_CURRENT);
	fd = open(exe, O_RDONLY);
	e = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(e);
	/* innermost: inside leaf_fn; caller: a return address inside caller_fn */
	o.real_elf = exe;
	o.real_elf_off[0] = sym_offset(e, "leaf_fn") + 1;
	o.real_elf_off[1] = sym_offset(e, "caller_fn") + 5;
	o.real_bid = bid;
	o.real_bid_size = build_id(e, bid);
	cr_assert_gt(o.real_elf_off[0], 1);
	cr_assert_eq(o.real_bid_size, 20);
	elf_end(e);
	close(fd);

	path = rc_tmpname("elf");
	cr_assert_eq(rc_write_scene(path, &o), 0);
	cr_assert_eq(model__load(path, &model), 0);
	f.pids = malloc(sizeof(*f.pids));
	f.pids[0] = 500;
	f.npids = 1;
	s = run(view_folded, &f, NULL);
	cr_assert_str_eq(s, "realprog;caller_fn;leaf_fn 2\n");
	free(s);
	/* --srcline: the lines of the two functions in the test's source */
	{
		struct symbolizer_opts so = { .srclines = true };
		struct rframe fr[8];
		struct resolver *res;

		cr_assert_eq(resolver__new(model, &so, &res), 0);
		cr_assert_eq(resolver__user(res, 500, RC_T0, 13, fr, 8), 2);
		cr_assert_not_null(fr[0].srcfile);
		cr_assert_str_eq(strrchr(fr[0].srcfile, '/') + 1, strrchr(src, '/') + 1);
		cr_assert_eq(fr[0].line, 1);
		cr_assert_eq(fr[1].line, 2); /* the call, found from the return address - 1 */
		resolver__free(res);
	}
	filter__free(&f);
	model__free(model);
	model = saved;
	unlink(path);
	unlink(exe);
	unlink(src);
	free(path);
	free(exe);
}
