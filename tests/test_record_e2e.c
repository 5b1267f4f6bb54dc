// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end: the real `stkrec record` on the test workloads, the capture
 * read back through the format reader, and what it says checked against
 * what the workloads know (their wall time, work split, bytes written,
 * executable and build ID). Addresses are resolved here with libelf from
 * the workload's symtab and the capture's MAPPING records; symbolization
 * proper is report/'s business.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/util_e2e.h"

/* --- running the recorder -------------------------------------------- */

static char cap_path[] = "/tmp/stkrec-e2e-XXXXXX";
static char out_path[PATH_MAX];
static char stdout_buf[4096];

static void workload(const char *name, char *out, size_t len)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", e2e_env("STKREC_WORKLOADS", "build/workloads"), name);
	if (!realpath(rel, out))
		cr_skip_test("workload %s not built (make test-build)", rel);
	(void)len;
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = 0;
}

/* Run `stkrec record -o CAP ARGS...`; the workload's stdout lands in
 * stdout_buf. Skips when BPF is not available here. */
static void record(char *const args[])
{
	char *argv[32], err_path[PATH_MAX], errbuf[4096];
	const char *bin = e2e_env("STKREC", "build/stkrec");
	int i, n = 0, st, fo, fe;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("recording needs root");
	if (access(bin, X_OK))
		cr_skip_test("no stkrec binary at %s (set STKREC)", bin);
	snprintf(out_path, sizeof(out_path), "%s.stdout", cap_path);
	snprintf(err_path, sizeof(err_path), "%s.stderr", cap_path);
	argv[n++] = (char *)bin;
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = cap_path;
	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fo >= 0 && fe >= 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		execv(bin, argv);
		_exit(98);
	}
	close(fo);
	close(fe);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	slurp(err_path, errbuf, sizeof(errbuf));
	slurp(out_path, stdout_buf, sizeof(stdout_buf));
	unlink(err_path);
	unlink(out_path);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1 &&
	    (strstr(errbuf, "cannot load the BPF") || strstr(errbuf, "has no BTF")))
		cr_skip_test("BPF cannot load here: %s", errbuf);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "stkrec record failed: %s", errbuf);
}

static long long stdout_value(const char *key)
{
	return e2e_value_of(stdout_buf, key);
}

/* --- the capture, in memory ------------------------------------------- */

struct stack {
	uint32_t nr;
	uint64_t *ips;
};

struct mapping {
	struct cap_mapping m;
	char path[PATH_MAX];
};

struct capture {
	char **strings;        /* by id */
	uint32_t nr_strings;
	struct stack *stacks;  /* by id */
	uint32_t nr_stacks;
	struct cap_thread *threads;
	size_t nr_threads;
	struct mapping *maps;
	size_t nr_maps;
	struct cap_offcpu *off;
	size_t nr_off;
	struct cap_cpu *cpu;
	size_t nr_cpu;
	struct cap_bio *bio;
	size_t nr_bio;
	uint64_t lost[CAP_KIND_MAX][CAP_LOST_MAX];
	struct cap_end end;
	bool has_end;
	struct cap_stat *stats;
	size_t nr_stats;
};

static struct capture cap;

#define PUSH(arr, n, v) do { \
	arr = realloc(arr, (n + 1) * sizeof(*arr)); \
	cr_assert_not_null(arr); \
	arr[n++] = v; \
} while (0)

static void grow_ids(void **arr, uint32_t *n, uint32_t id, size_t elem)
{
	if (id < *n)
		return;
	*arr = realloc(*arr, (size_t)(id + 1) * elem);
	cr_assert_not_null(*arr);
	memset((char *)*arr + *n * elem, 0, (id + 1 - *n) * elem);
	*n = id + 1;
}

static void on_string(const struct cap_record *r)
{
	grow_ids((void **)&cap.strings, &cap.nr_strings, r->string.id, sizeof(char *));
	cap.strings[r->string.id] = strndup(r->tail, r->tail_len);
}

static void on_stack(const struct cap_record *r)
{
	struct stack *s;

	grow_ids((void **)&cap.stacks, &cap.nr_stacks, r->stack.id, sizeof(*s));
	s = &cap.stacks[r->stack.id];
	s->nr = r->stack.nr;
	s->ips = malloc(s->nr * sizeof(uint64_t));
	memcpy(s->ips, r->ips, s->nr * sizeof(uint64_t));
}

static void on_mapping(const struct cap_record *r)
{
	struct mapping m = { .m = r->mapping };

	cr_assert_lt(r->mapping.path_id, cap.nr_strings, "MAPPING before its STRING");
	snprintf(m.path, sizeof(m.path), "%s", cap.strings[r->mapping.path_id]);
	PUSH(cap.maps, cap.nr_maps, m);
}

static void on_record(const struct cap_record *r)
{
	switch (r->type) {
	case CAP_REC_STRING: on_string(r); break;
	case CAP_REC_STACK: on_stack(r); break;
	case CAP_REC_MAPPING: on_mapping(r); break;
	case CAP_REC_THREAD: PUSH(cap.threads, cap.nr_threads, r->thread); break;
	case CAP_REC_OFFCPU: PUSH(cap.off, cap.nr_off, r->offcpu); break;
	case CAP_REC_CPU: PUSH(cap.cpu, cap.nr_cpu, r->cpu); break;
	case CAP_REC_BIO: PUSH(cap.bio, cap.nr_bio, r->bio); break;
	case CAP_REC_LOST:
		if (r->lost.kind < CAP_KIND_MAX && r->lost.reason < CAP_LOST_MAX)
			cap.lost[r->lost.kind][r->lost.reason] += r->lost.count;
		break;
	case CAP_REC_STAT: PUSH(cap.stats, cap.nr_stats, r->stat); break;
	case CAP_REC_END:
		cap.end = r->end;
		cap.has_end = true;
		break;
	}
}

static void load_capture(void)
{
	const struct cap_read_stats *st;
	struct cap_reader *rd;
	struct cap_record r;
	int err;

	cr_assert_eq(cap_reader__open(cap_path, &rd), 0);
	while ((err = cap_reader__next(rd, &r)) > 0)
		on_record(&r);
	cr_assert_eq(err, 0, "reader: %s", cap_strerror(err));
	st = cap_reader__stats(rd);
	cr_assert(st->has_trailer, "capture not finished");
	cr_assert_not(st->recovered, "capture damaged");
	cap_reader__close(rd);
	cr_assert(cap.has_end);
}

/* The recorded command ran to its end, nothing was dropped. */
static void assert_complete(void)
{
	int k;

	cr_assert_eq(cap.end.reason, CAP_STOP_COMMAND);
	cr_assert_eq(cap.end.status, 0);
	for (k = 0; k < CAP_KIND_MAX; k++) {
		cr_assert_eq(cap.lost[k][CAP_LOST_RINGBUF], 0, "kind %d lost in ringbuf", k);
		cr_assert_eq(cap.lost[k][CAP_LOST_STATE], 0, "kind %d lost: state table", k);
		cr_assert_eq(cap.lost[k][CAP_LOST_SIDEBAND], 0, "kind %d: side band lost", k);
	}
}

static void setup(void)
{
	int fd = mkstemp(cap_path);

	cr_assert_geq(fd, 0);
	close(fd);
	memset(&cap, 0, sizeof(cap));
	elf_version(EV_CURRENT);
}

static void teardown(void)
{
	uint32_t i;

	unlink(cap_path);
	strcpy(cap_path, "/tmp/stkrec-e2e-XXXXXX");
	for (i = 0; i < cap.nr_strings; i++)
		free(cap.strings[i]);
	for (i = 0; i < cap.nr_stacks; i++)
		free(cap.stacks[i].ips);
	free(cap.strings);
	free(cap.stacks);
	free(cap.threads);
	free(cap.maps);
	free(cap.off);
	free(cap.cpu);
	free(cap.bio);
	free(cap.stats);
}

/* A hang bound, not a speed. Criterion's runner talks to each test over a
 * nanomsg request socket that resends a request after 60 s: beside a
 * loaded host, a test of 1.5 s was seen to end after 61.5 s, twice in
 * about 60 runs (reliability_record::full_file_system, stress-ng --cpu 2),
 * so no bound here is under 60 s plus the test's own time. */
TestSuite(record_e2e, .init = setup, .fini = teardown, .timeout = 180);

/* --- ELF: symbol ranges and build IDs --------------------------------- */

struct elf_file {
	int fd;
	Elf *e;
};

static void elf_open(struct elf_file *f, const char *path)
{
	f->fd = open(path, O_RDONLY);
	cr_assert_geq(f->fd, 0, "%s", path);
	f->e = elf_begin(f->fd, ELF_C_READ, NULL);
	cr_assert_not_null(f->e);
}

static void elf_close(struct elf_file *f)
{
	elf_end(f->e);
	close(f->fd);
}

/* [lo, hi) of function `name` in the file's virtual addresses. */
static void elf_sym(struct elf_file *f, const char *name, uint64_t *lo, uint64_t *hi)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i;

	while ((scn = elf_nextscn(f->e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(d, i, &sym))
				continue;
			if (!strcmp(elf_strptr(f->e, sh.sh_link, sym.st_name), name)) {
				*lo = sym.st_value;
				*hi = sym.st_value + sym.st_size;
				return;
			}
		}
	}
	cr_assert_fail("no symbol %s", name);
}

/* File offset to virtual address through the PT_LOAD that holds it. */
static bool elf_off_to_vaddr(struct elf_file *f, uint64_t off, uint64_t *vaddr)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(f->e, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(f->e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*vaddr = off - ph.p_offset + ph.p_vaddr;
			return true;
		}
	}
	return false;
}

static int elf_build_id(struct elf_file *f, uint8_t id[20])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	size_t off, name_off, desc_off;
	Elf_Data *d;

	while ((scn = elf_nextscn(f->e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		for (off = 0; d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off));) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz <= 20) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

/* The virtual address in `path` of a user ip of process pid, through the
 * capture's mappings of that file; false when ip is elsewhere. */
static bool resolve(struct elf_file *f, const char *path, uint32_t pid, uint64_t ip,
		    uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < cap.nr_maps; i++) {
		const struct cap_mapping *m = &cap.maps[i].m;

		if (m->pid != pid || ip < m->start || ip >= m->end ||
		    strcmp(cap.maps[i].path, path))
			continue;
		return elf_off_to_vaddr(f, ip - m->start + m->pgoff, vaddr);
	}
	return false;
}

static uint64_t stat_value(const char *key)
{
	size_t i;

	for (i = 0; i < cap.nr_stats; i++) {
		uint32_t id = cap.stats[i].key_id;

		if (id < cap.nr_strings && cap.strings[id] && !strcmp(cap.strings[id], key))
			return cap.stats[i].value;
	}
	cr_assert_fail("no STAT %s", key);
	return 0;
}

static bool stack_has(struct elf_file *f, const char *path, uint32_t pid, uint32_t id,
		      uint64_t lo, uint64_t hi)
{
	uint64_t va;
	uint32_t i;

	if (id == CAP_STACK_NONE || id == CAP_STACK_LOST || id >= cap.nr_stacks)
		return false;
	for (i = 0; i < cap.stacks[id].nr; i++) {
		if (resolve(f, path, pid, cap.stacks[id].ips[i], &va) && va >= lo && va < hi)
			return true;
	}
	return false;
}

/* --- the tests -------------------------------------------------------- */

Test(record_e2e, sleeper_offcpu_sums_to_wall_time)
{
	char exe[PATH_MAX];
	struct elf_file f;
	uint64_t sum = 0, lo, hi;
	long long tid, wall;
	size_t i, n = 0, in_loop = 0;
	uint32_t pid = 0;

	workload("sleeper", exe, sizeof(exe));
	record((char *[]){ "-e", "offcpu", "--", exe, "1000", "10", NULL });
	load_capture();
	assert_complete();
	tid = stdout_value("tid");
	wall = stdout_value("wall_ns");
	elf_open(&f, exe);
	elf_sym(&f, "sleeper_loop", &lo, &hi);
	for (i = 0; i < cap.nr_off; i++) {
		if (cap.off[i].tid != tid)
			continue;
		sum += cap.off[i].duration;
		pid = cap.off[i].pid;
		n++;
		/* sleeper_nap() calls nanosleep, a libc leaf without a frame
		 * pointer: its caller sleeper_loop() is the frame seen */
		in_loop += stack_has(&f, exe, pid, cap.off[i].ustack, lo, hi);
	}
	elf_close(&f);
	cr_assert_geq(n, 50, "only %zu intervals of the sleeper thread", n);
	cr_assert(sum >= wall * 0.9 && sum <= wall * 1.1,
		  "off-CPU %llu ns vs wall %lld ns", (unsigned long long)sum, wall);
	cr_assert_geq(in_loop, n * 9 / 10, "%zu of %zu stacks show sleeper_loop", in_loop, n);
	/* named after it started: a THREAD record follows the rename */
	for (i = 0; i < cap.nr_threads; i++) {
		if (cap.threads[i].tid == tid && !strcmp(cap.threads[i].comm, "sleeper-nap"))
			break;
	}
	cr_assert_lt(i, cap.nr_threads, "no THREAD record names the sleeper thread");
}

Test(record_e2e, cpuburn_samples_split_as_configured)
{
	char exe[PATH_MAX];
	struct elf_file f;
	uint64_t alo, ahi, blo, bhi, llo, lhi, va;
	size_t i, a = 0, b = 0, n = 0, in_loop = 0;
	uint32_t pid;
	double share;

	workload("cpuburn", exe, sizeof(exe));
	record((char *[]){ "-e", "cpu", "-F", "499", "--", exe, "2000", "25", NULL });
	load_capture();
	assert_complete();
	pid = stdout_value("pid");
	elf_open(&f, exe);
	elf_sym(&f, "burn_a", &alo, &ahi);
	elf_sym(&f, "burn_b", &blo, &bhi);
	elf_sym(&f, "burn_loop", &llo, &lhi);
	for (i = 0; i < cap.nr_cpu; i++) {
		const struct cap_cpu *c = &cap.cpu[i];

		if (c->pid != pid || c->ustack == CAP_STACK_NONE || c->ustack == CAP_STACK_LOST)
			continue;
		n++;
		/* leaf functions keep their frame pointer (the workloads are
		 * built with -mno-omit-leaf-frame-pointer): the caller shows */
		in_loop += stack_has(&f, exe, pid, c->ustack, llo, lhi);
		if (!resolve(&f, exe, pid, cap.stacks[c->ustack].ips[0], &va))
			continue;
		a += va >= alo && va < ahi;
		b += va >= blo && va < bhi;
	}
	elf_close(&f);
	/* 2 s at 499 Hz: ~1000 samples on an idle CPU, fewer when the other
	 * tests run alongside; 200 still pin the share within a few percent */
	cr_assert_geq(n, 200, "only %zu samples of cpuburn", n);
	cr_assert_geq(a + b, n * 9 / 10, "%zu+%zu of %zu samples in burn_a/burn_b", a, b, n);
	cr_assert_geq(in_loop, n * 9 / 10, "%zu of %zu stacks show burn_loop", in_loop, n);
	share = (double)a / (a + b);
	cr_assert(share > 0.25 - 0.07 && share < 0.25 + 0.07, "burn_a share %.3f (a %zu b %zu)",
		  share, a, b);
}

/* A loop device of our own: nobody else does I/O to it, so every request
 * on it is the workload's, and the kernel's counters for it are ours. */
struct loopdev {
	char img[PATH_MAX], dev[64], node[PATH_MAX];
	unsigned int major, minor;
};

static void loop_attach(struct loopdev *l)
{
	char cmd[PATH_MAX + 64];
	struct stat st;
	FILE *p;
	int fd;

	snprintf(l->img, sizeof(l->img), "/var/tmp/stkrec-e2e-loop-%d.img", getpid());
	fd = open(l->img, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0, "%s: %s", l->img, strerror(errno));
	cr_assert_eq(ftruncate(fd, 8 << 20), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", l->img);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	if (!fgets(l->dev, sizeof(l->dev), p))
		l->dev[0] = 0;
	pclose(p);
	l->dev[strcspn(l->dev, "\n")] = 0;
	if (!l->dev[0] || stat(l->dev, &st)) {
		unlink(l->img);
		cr_skip_test("no loop device here (losetup -f failed)");
	}
	l->major = major(st.st_rdev);
	l->minor = minor(st.st_rdev);
	/* the workload unlinks its PATH when done: give it a node of its own */
	snprintf(l->node, sizeof(l->node), "%s.blk", cap_path);
	cr_assert_eq(mknod(l->node, S_IFBLK | 0600, st.st_rdev), 0, "mknod: %s", strerror(errno));
}

static void loop_detach(struct loopdev *l)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "losetup -d %s", l->dev);
	cr_expect_eq(system(cmd), 0);
	unlink(l->node);
	unlink(l->img);
}

/* Sectors written to the device so far, by the kernel's count. */
static uint64_t loop_sectors_written(const struct loopdev *l)
{
	unsigned long long v[7] = { 0 };
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", strrchr(l->dev, '/') + 1);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			    &v[4], &v[5], &v[6]), 7);
	fclose(f);
	return v[6];
}

/* Record odirect writing 64 blocks of SIZE bytes straight to a loop device
 * of its own, with no file system in between: its I/O is those 64 writes
 * and an fsync (an empty PREFLUSH, never issued as itself). Returns the
 * requests in the capture; bytes are checked one by one. */
static uint64_t record_odirect(const char *size, unsigned int skip, long long *bytes,
			       uint64_t *counted)
{
	char exe[PATH_MAX], env[64];
	uint64_t written = 0, nreq = 0, sectors;
	struct loopdev l;
	long long pid;
	size_t i;

	workload("odirect", exe, sizeof(exe));
	if (geteuid() != 0)
		cr_skip_test("a loop device needs root");
	loop_attach(&l);
	/* the skips on the loop device alone: the command's reads of other
	 * disks (its binary, when evicted) are not the 64 writes */
	snprintf(env, sizeof(env), "%u@%u:%u", skip, l.major, l.minor);
	if (skip)
		cr_assert_eq(setenv("STKREC_TEST_SKIP_BIO", env, 1), 0);
	sectors = loop_sectors_written(&l);
	record((char *[]){ "-e", "bio", "--", exe, l.node, "64", (char *)size, NULL });
	unsetenv("STKREC_TEST_SKIP_BIO");
	sectors = loop_sectors_written(&l) - sectors;
	loop_detach(&l);
	load_capture();
	assert_complete();
	pid = stdout_value("pid");
	*bytes = stdout_value("bytes");
	cr_assert_eq(*bytes, 64 * atoll(size));
	/* the device saw exactly the workload's bytes: nobody else wrote */
	cr_assert_eq(sectors * 512, (uint64_t)*bytes, "%llu sectors written",
		     (unsigned long long)sectors);
	for (i = 0; i < cap.nr_bio; i++) {
		const struct cap_bio *b = &cap.bio[i];

		/* -- COMMAND: the command's requests only */
		cr_assert_eq(b->pid, pid, "pid %u recorded, command is %lld", b->pid, pid);
		/* Its path lookups and the unlink of its node may read or write
		 * the metadata of the file system that holds the node (seen
		 * once under load: a request on the root disk): not the
		 * workload's writes, which are the loop device's. */
		if (b->major != l.major || b->minor != l.minor)
			continue;
		cr_assert_eq(b->op, CAP_BIO_WRITE);
		cr_assert_eq(b->bytes, atoll(size));
		cr_assert_eq(b->error, 0);
		cr_assert_geq(b->complete_time, b->issue_time);
		cr_assert_str_eq(b->comm, "odirect");
		nreq++;
		written += b->bytes;
	}
	/* requests seen issued whose completion the program never saw (a run
	 * the kernel skipped lands here too: bpf.skipped.bio is not added) */
	*counted = stat_value("bio.missed_completions") + stat_value("bio.incomplete");
	cr_log_info("pid %lld: %llu of 64 writes recorded (%llu bytes), %llu counted as not seen "
		    "completing; %llu program runs skipped", pid, (unsigned long long)nreq,
		    (unsigned long long)written, (unsigned long long)*counted,
		    (unsigned long long)stat_value("bpf.skipped.bio"));
	/* recorded + lost equals what happened (LOST is 0: assert_complete) */
	cr_assert_eq(nreq + *counted, 64, "%llu recorded + %llu counted of 64 writes",
		     (unsigned long long)nreq, (unsigned long long)*counted);
	cr_assert_eq(written + *counted * atoll(size), (uint64_t)*bytes);
	return written;
}

/* What `stkrec info` prints for the capture. */
static void info_text(char *buf, size_t len)
{
	char cmd[PATH_MAX * 2];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s info %s", e2e_env("STKREC", "build/stkrec"), cap_path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(buf, 1, len - 1, p);
	buf[n] = 0;
	cr_assert_eq(pclose(p), 0, "stkrec info: %s", buf);
}

/* Occurrences of line (whole lines) in text. */
static int count_line(const char *text, const char *line)
{
	size_t len = strlen(line);
	const char *p = text;
	int n = 0;

	while ((p = strstr(p, line))) {
		n += (p == text || p[-1] == '\n') && (p[len] == '\n' || !p[len]);
		p += len;
	}
	return n;
}

/* info warns, once, of every request the recorder missed, and only then. */
static void assert_not_seen_warnings(void)
{
	uint64_t skipped = stat_value("bpf.skipped.offcpu") + stat_value("bpf.skipped.cpu") +
			   stat_value("bpf.skipped.bio") + stat_value("bpf.untraced.offcpu") +
			   stat_value("bpf.untraced.wakeup");
	uint64_t missed = stat_value("bio.missed_completions");
	uint64_t incomplete = stat_value("bio.incomplete");
	char out[8192], want[256];

	info_text(out, sizeof(out));
	snprintf(want, sizeof(want), "WARNING:      %llu events not recorded: the kernel did not "
		 "run the recorder's program (bpf.skipped.*, bpf.untraced.*, "
		 "bio.missed_completions)",
		 (unsigned long long)(skipped + missed));
	cr_assert_eq(count_line(out, want), skipped + missed ? 1 : 0, "'%s' in:\n%s", want, out);
	snprintf(want, sizeof(want), "WARNING:      %llu block requests not seen completing: in "
		 "flight at the end, or not recorded (bio.incomplete)",
		 (unsigned long long)incomplete);
	cr_assert_eq(count_line(out, want), incomplete ? 1 : 0, "'%s' in:\n%s", want, out);
	if (!skipped && !missed && !incomplete)
		cr_assert_null(strstr(out, "WARNING"), "%s", out);
}

Test(record_e2e, odirect_write_bytes_exact)
{
	uint64_t written, counted;
	long long bytes;

	written = record_odirect("65536", 0, &bytes, &counted);
	cr_assert_eq(written + counted * 65536, (uint64_t)bytes);
	assert_not_seen_warnings();
}

/*
 * A kernel does not always run the completion program (a run nested on one
 * CPU, or an interrupt over a task it runs no BPF for): every write then
 * missing must be counted, never silently gone. STKREC_TEST_SKIP_BIO=3@DEV has
 * the program skip every third run for the loop device's requests, as such
 * a kernel would.
 */
Test(record_e2e, odirect_skipped_completions_are_counted)
{
	uint64_t written, counted;
	long long bytes;

	written = record_odirect("65536", 3, &bytes, &counted);
	cr_assert_lt(written, (uint64_t)bytes, "no completion was skipped");
	cr_assert_gt(counted, 0);
	assert_not_seen_warnings();
}

Test(record_e2e, shortlived_child_mapping_and_build_id)
{
	char exe[PATH_MAX], child[PATH_MAX];
	uint8_t id[20];
	struct elf_file f;
	size_t i, found = 0, samples = 0;
	long long child_pid;
	int n;

	workload("shortlived", exe, sizeof(exe));
	workload("shortlived_child", child, sizeof(child));
	record((char *[]){ "-e", "cpu,offcpu", "-F", "199", "--", exe, child, "300", NULL });
	load_capture();
	assert_complete();
	child_pid = stdout_value("child_pid");
	elf_open(&f, child);
	n = elf_build_id(&f, id);
	elf_close(&f);
	cr_assert_eq(n, 20, "workload built without a build ID");
	for (i = 0; i < cap.nr_maps; i++) {
		const struct cap_mapping *m = &cap.maps[i].m;

		if (m->pid != child_pid || strcmp(cap.maps[i].path, child))
			continue;
		found++;
		cr_assert_eq(m->build_id_size, 20);
		cr_assert_arr_eq(m->build_id, id, 20);
	}
	cr_assert_geq(found, 1, "no MAPPING of %s for pid %lld", child, child_pid);
	for (i = 0; i < cap.nr_cpu; i++)
		samples += cap.cpu[i].pid == child_pid;
	/* 300 ms at 199 Hz: ~60 samples on an idle CPU */
	cr_assert_geq(samples, 10, "only %zu CPU samples of the child", samples);
}

Test(record_e2e, pipe_reader_stack_and_filter)
{
	char exe[PATH_MAX];
	struct elf_file f;
	uint64_t lo, hi;
	size_t i, n = 0, nread = 0, seen = 0;
	uint64_t untraced;
	uint32_t pid;

	workload("pipewait", exe, sizeof(exe));
	record((char *[]){ "-e", "offcpu", "-m", "5000", "--", exe, "20", "25", NULL });
	load_capture();
	assert_complete();
	pid = stdout_value("pid");
	elf_open(&f, exe);
	elf_sym(&f, "pipe_reader_loop", &lo, &hi);
	for (i = 0; i < cap.nr_off; i++) {
		/* -- COMMAND: only the command's process is recorded */
		cr_assert_eq(cap.off[i].pid, pid, "pid %u tid %u recorded, command is %u",
			     cap.off[i].pid, cap.off[i].tid, pid);
		/* -m 5000: nothing shorter than 5 ms */
		cr_assert_geq(cap.off[i].duration, 5000000);
		n++;
		if (cap.off[i].tid == pid)
			continue;
		nread++;
		seen += stack_has(&f, exe, pid, cap.off[i].ustack, lo, hi);
	}
	elf_close(&f);
	/* 20 naps of the writer (the main thread), 25 ms each, and up to 20
	 * waits of the reader: fewer when, beside a load, it was not back in
	 * read() before the next byte came. A nap whose end the kernel traced
	 * to no program (~1 in 1,000 on 6.18) is lost and counted: recorded +
	 * counted, exactly, when none of the reader's is. */
	untraced = stat_value("bpf.untraced.offcpu");
	cr_assert_geq(n - nread + untraced, 20, "only %zu intervals of the writer, %" PRIu64
		      " untraced", n - nread, untraced);
	cr_assert_geq(nread, 10, "only %zu intervals of the reader", nread);
	cr_assert_geq(seen * 10, nread * 9, "%zu of %zu reader stacks show pipe_reader_loop", seen,
		      nread);
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* not past a test killed */
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void reset_capture(void)
{
	teardown();
	setup();
}

Test(record_e2e, pid_filter_and_state_mask)
{
	char exe[PATH_MAX], pid_arg[16];
	size_t i, n = 0;
	pid_t pid;

	workload("sleeper", exe, sizeof(exe));
	/* naps until killed at the end: -d counts from each recorder's attach,
	 * however long its load takes, not from the start of the naps */
	pid = spawn((char *[]){ exe, "600000", "10", NULL });
	snprintf(pid_arg, sizeof(pid_arg), "%d", pid);
	/* nanosleep sleeps TASK_INTERRUPTIBLE (1): -p and --state 1 keep it */
	record((char *[]){ "-e", "offcpu", "-p", pid_arg, "--state", "1", "-d", "0.8", NULL });
	load_capture();
	cr_assert_eq(cap.end.reason, CAP_STOP_DURATION);
	cr_assert_eq(cap.end.status, -1);
	for (i = 0; i < cap.nr_off; i++) {
		cr_assert_eq(cap.off[i].pid, (uint32_t)pid);
		cr_assert(cap.off[i].state & 1, "state %#x", cap.off[i].state);
		n++;
	}
	cr_assert_geq(n, 20, "only %zu intervals in 0.8 s of 10 ms naps", n);
	/* ... --state 2 (uninterruptible) keeps none of its waits */
	reset_capture();
	record((char *[]){ "-e", "offcpu", "-p", pid_arg, "--state", "2", "-d", "0.5", NULL });
	load_capture();
	cr_assert_eq(cap.nr_off, 0, "%zu intervals in state 2", cap.nr_off);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
