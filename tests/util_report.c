// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/util_report.h"

#define KB 0xffffffff81000000ull
#define K_BPFRUN (KB + 0x0000)
#define K_SCHED_ (KB + 0x1000)
#define K_SCHED (KB + 0x2000)
#define K_NANO (KB + 0x3000)
#define K_HRT (KB + 0x4000)
#define K_SYSNANO (KB + 0x5000)
#define K_SYSCALL (KB + 0x6000)
#define K_FUTEX (KB + 0x7000)
#define K_KTHREAD (KB + 0x8000)
#define K_WORKER (KB + 0x9000)
#define K_EXT4 0xffffffffc0100000ull
#define K_BPFPROG 0xffffffffc0026138ull /* a BPF program: no symbol */

static const struct { uint64_t addr; const char *name; } ksyms[] = {
	{ K_BPFRUN, "bpf_trace_run4" }, { K_SCHED_, "__schedule" }, { K_SCHED, "schedule" },
	{ K_NANO, "do_nanosleep" }, { K_HRT, "hrtimer_nanosleep" },
	{ K_SYSNANO, "__x64_sys_nanosleep" }, { K_SYSCALL, "do_syscall_64" },
	{ K_FUTEX, "futex_wait" }, { K_KTHREAD, "kthread" }, { K_WORKER, "worker_thread" },
};

static const uint64_t k_nanosleep[] = { K_BPFPROG, K_BPFRUN + 0x10, K_SCHED_ + 0x20,
	K_SCHED + 0x10, K_NANO + 0x30, K_HRT + 0x8, K_SYSNANO + 0x8, K_SYSCALL + 0x40 };
static const uint64_t k_futex[] = { K_BPFPROG, K_BPFRUN + 0x10, K_SCHED_ + 0x20,
	K_SCHED + 0x10, K_FUTEX + 0x50, K_SYSCALL + 0x40 };
static const uint64_t k_ext4[] = { K_EXT4 + 0x10, K_SYSCALL + 0x40 };
static const uint64_t k_kworker[] = { K_BPFPROG, K_BPFRUN + 0x10, K_SCHED_ + 0x20,
	K_SCHED + 0x10, K_WORKER + 0x30, K_KTHREAD + 0x20 };
static const uint64_t u_sleep[] = { 0x7f0000001234, 0x401100, 0x401050 };
static const uint64_t u_lock[] = { 0x7f0000002345, 0x401200, 0x401050 };
static const uint64_t u_exec[] = { 0x400500 };

struct cap_writer *rc_open(const char *path)
{
	return rc_open_cmdline(path, "stkrec record -a -d 3");
}

struct cap_writer *rc_open_cmdline(const char *path, const char *cmdline)
{
	struct cap_header h = {
		.major = CAP_VERSION_MAJOR, .minor = CAP_VERSION_MINOR,
		.start_time = RC_T0, .start_realtime = RC_REAL0,
		.clock_offset = RC_REAL0 - (int64_t)RC_T0,
		.ncpus = 2, .page_size = 4096, .recorder_pid = 1,
	};
	struct cap_writer_opts o = { .block_size = 512 };
	struct cap_writer *w;

	strcpy(h.hostname, "testhost");
	strcpy(h.release, "6.18.0-test");
	strcpy(h.machine, "x86_64");
	strcpy(h.version, "0.1.0");
	snprintf(h.cmdline, sizeof(h.cmdline), "%s", cmdline);
	return cap_writer__open(path, &h, &o, &w) ? NULL : w;
}

int rc_string(struct cap_writer *w, uint32_t id, const char *s)
{
	return cap_writer__string(w, id, s, strlen(s));
}

int rc_thread(struct cap_writer *w, uint64_t t, uint32_t tid, uint32_t pid, uint32_t flags,
	      const char *comm)
{
	struct cap_thread r = { .time = t, .tid = tid, .pid = pid, .flags = flags };

	memcpy(r.comm, comm, strnlen(comm, sizeof(r.comm)));
	return cap_writer__append(w, CAP_REC_THREAD, &r, sizeof(r), NULL, 0);
}

static int map_bid(struct cap_writer *w, uint64_t t, uint32_t pid, uint64_t start,
		   uint64_t end, uint64_t pgoff, uint32_t path_id, const uint8_t *bid,
		   uint8_t bsz)
{
	struct cap_mapping r = { .time = t, .start = start, .end = end, .pgoff = pgoff,
				 .pid = pid, .path_id = path_id, .flags = CAP_MAP_FROM_PROC,
				 .build_id_size = bsz };

	if (bsz)
		memcpy(r.build_id, bid, bsz);
	return cap_writer__append(w, CAP_REC_MAPPING, &r, sizeof(r), NULL, 0);
}

int rc_map(struct cap_writer *w, uint64_t t, uint32_t pid, uint64_t start, uint64_t end,
	   uint64_t pgoff, uint32_t path_id)
{
	/* a build ID no file on any machine has: these never get symbolized */
	static const uint8_t fake[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					  7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

	return map_bid(w, t, pid, start, end, pgoff, path_id, fake, sizeof(fake));
}

int rc_ksym(struct cap_writer *w, uint64_t addr, uint32_t size, const char *name,
	    uint32_t module_id)
{
	struct cap_ksym r = { .addr = addr, .size = size, .module_id = module_id,
			      .name_len = strlen(name) };

	return cap_writer__append(w, CAP_REC_KSYM, &r, sizeof(r), name, strlen(name));
}

int rc_offcpu(struct cap_writer *w, uint64_t start, uint64_t dur, uint32_t tid, uint32_t pid,
	      uint32_t state, uint32_t ustack, uint32_t kstack)
{
	struct cap_offcpu r = { .start = start, .duration = dur, .tid = tid, .pid = pid,
				.cpu = tid & 1, .state = state, .ustack = ustack,
				.kstack = kstack };

	return cap_writer__append(w, CAP_REC_OFFCPU, &r, sizeof(r), NULL, 0);
}

int rc_cpu(struct cap_writer *w, uint64_t t, uint32_t tid, uint32_t pid, uint32_t ustack,
	   uint32_t kstack)
{
	struct cap_cpu r = { .time = t, .tid = tid, .pid = pid, .cpu = tid & 1,
			     .ustack = ustack, .kstack = kstack };

	return cap_writer__append(w, CAP_REC_CPU, &r, sizeof(r), NULL, 0);
}

static int rc_bio(struct cap_writer *w, uint64_t issue, uint64_t lat, uint32_t pid,
		  const char *comm, uint8_t op, uint32_t bytes, uint32_t major, uint32_t minor)
{
	struct cap_bio r = { .issue_time = issue, .complete_time = issue + lat,
			     .sector = 2048, .bytes = bytes, .tid = pid, .pid = pid,
			     .major = major, .minor = minor, .op = op };

	memcpy(r.comm, comm, strnlen(comm, sizeof(r.comm)));
	return cap_writer__append(w, CAP_REC_BIO, &r, sizeof(r), NULL, 0);
}

static int defs(struct cap_writer *w, const struct rc_opts *o)
{
	struct cap_kmod km = { .base = K_EXT4, .size = 0x10000, .name_id = 3 };
	struct cap_blockdev bd = { .major = 8, .minor = 0, .name = "sda" };
	size_t i;
	int err;

	/* paths no host has (every host has /usr/bin/sh): the objects are
	 * missing, never a build-ID mismatch that would warn */
	err = rc_string(w, 1, RC_ROOT "/usr/bin/app") ?:
	      rc_string(w, 2, RC_ROOT "/usr/lib/libc.so.6") ?: rc_string(w, 3, "ext4") ?:
	      rc_string(w, 4, RC_ROOT "/usr/bin/sh") ?: rc_string(w, 5, RC_ROOT "/usr/bin/app2");
	for (i = 0; !err && i < sizeof(ksyms) / sizeof(ksyms[0]); i++)
		err = rc_ksym(w, ksyms[i].addr, 0x100, ksyms[i].name, 0);
	err = err ?: rc_ksym(w, K_EXT4, 0x100, "ext4_file_read_iter", 3) ?:
	      cap_writer__append(w, CAP_REC_KMOD, &km, sizeof(km), NULL, 0) ?:
	      cap_writer__append(w, CAP_REC_BLOCKDEV, &bd, sizeof(bd), NULL, 0) ?:
	      cap_writer__stack(w, 1, CAP_STACK_KERNEL, k_nanosleep, 8) ?:
	      cap_writer__stack(w, 2, CAP_STACK_KERNEL, k_futex, 6) ?:
	      cap_writer__stack(w, 3, CAP_STACK_KERNEL, k_ext4, 2) ?:
	      cap_writer__stack(w, 4, CAP_STACK_KERNEL, k_kworker, 6) ?:
	      cap_writer__stack(w, 10, CAP_STACK_USER, u_sleep, 3) ?:
	      cap_writer__stack(w, 11, CAP_STACK_USER, u_lock, 3) ?:
	      cap_writer__stack(w, 12, CAP_STACK_USER, u_exec, 1);
	if (err || !o->real_elf)
		return err;
	{
		uint64_t base = 0x555555554000ull;
		uint64_t ips[2] = { base + o->real_elf_off[0], base + o->real_elf_off[1] };
		uint64_t ips2[2] = { base + o->real_elf_off[2], base + o->real_elf_off[1] };

		return rc_string(w, 6, o->real_elf) ?:
		       map_bid(w, RC_T0, 500, base, base + 0x100000, 0, 6, o->real_bid,
			       o->real_bid_size) ?:
		       rc_thread(w, RC_T0, 500, 500, 0, "realprog") ?:
		       cap_writer__stack(w, 13, CAP_STACK_USER, ips, 2) ?:
		       (o->real_elf_off[2] ? cap_writer__stack(w, 14, CAP_STACK_USER, ips2, 2) : 0);
	}
}

static int tasks(struct cap_writer *w)
{
	struct cap_fork f = { .time = RC_T0 + 50 * RC_MS, .pid = 401, .tid = 401,
			      .ppid = RC_APP_PID, .ptid = RC_APP_PID };
	uint64_t t = RC_T0 - RC_S;

	return rc_thread(w, t, RC_APP_PID, RC_APP_PID, 0, "app") ?:
	       rc_thread(w, t, RC_WORKER_TID, RC_APP_PID, 0, "app-worker") ?:
	       rc_thread(w, t, RC_KTHREAD, RC_KTHREAD, CAP_THREAD_KERNEL, "kworker/0:1") ?:
	       rc_thread(w, RC_T0, RC_EXEC_PID, RC_EXEC_PID, 0, "sh") ?:
	       rc_map(w, t, RC_APP_PID, 0x400000, 0x402000, 0, 1) ?:
	       rc_map(w, t, RC_APP_PID, 0x7f0000000000, 0x7f0000100000, 0, 2) ?:
	       rc_map(w, RC_T0, RC_EXEC_PID, 0x400000, 0x410000, 0, 4) ?:
	       cap_writer__append(w, CAP_REC_FORK, &f, sizeof(f), NULL, 0) ?:
	       rc_thread(w, f.time, 401, 401, 0, "app") ?:
	       /* pid 400 runs app2 from 1 s on: its old mappings end there */
	       rc_thread(w, RC_T0 + RC_S, RC_EXEC_PID, RC_EXEC_PID, CAP_THREAD_EXEC, "app2") ?:
	       rc_map(w, RC_T0 + RC_S + 1000, RC_EXEC_PID, 0x400000, 0x410000, 0, 5);
}

static int events(struct cap_writer *w, const struct rc_opts *o)
{
	uint64_t t = RC_T0;
	unsigned i;
	int err;

	err = rc_offcpu(w, t + 100 * RC_MS, 1000000, 100, 100, 1, 10, 1) ?:
	      rc_offcpu(w, t + 500 * RC_MS, 3000000, 100, 100, 1, 10, 1) ?:
	      rc_offcpu(w, t + 1200 * RC_MS, 2500000, 101, 100, 1, 11, 2) ?:
	      rc_offcpu(w, t + 1500 * RC_MS, 500000, 200, 200, 2, CAP_STACK_NONE, 4) ?:
	      rc_offcpu(w, t + 2200 * RC_MS, 400, 101, 100, 1, 11, 2) ?:
	      rc_offcpu(w, t + 2500 * RC_MS, 1500499, 100, 100, 1, CAP_STACK_LOST, 2) ?:
	      rc_offcpu(w, t + 2600 * RC_MS, 700000, 101, 100, 0, 11, 99) ?:
	      rc_offcpu(w, t + 500 * RC_MS, 200000, 400, 400, 1, 12, 1) ?:
	      rc_offcpu(w, t + 2000 * RC_MS, 300000, 400, 400, 1, 12, 1) ?:
	      rc_offcpu(w, t + 300 * RC_MS, 600000, 401, 401, 1, 10, 1) ?:
	      rc_cpu(w, t + 200 * RC_MS, 100, 100, 10, CAP_STACK_NONE) ?:
	      rc_cpu(w, t + 300 * RC_MS, 100, 100, 10, CAP_STACK_NONE) ?:
	      rc_cpu(w, t + 400 * RC_MS, 101, 100, 11, 3) ?:
	      rc_cpu(w, t + 1100 * RC_MS, 200, 200, CAP_STACK_NONE, 3);
	if (!err && o->real_elf)
		err = rc_cpu(w, t + 1300 * RC_MS, 500, 500, 13, CAP_STACK_NONE) ?:
		      rc_cpu(w, t + 1310 * RC_MS, 500, 500, 13, CAP_STACK_NONE) ?:
		      rc_offcpu(w, t + 1320 * RC_MS, 2000000, 500, 500, 1, 13, 1);
	if (!err && o->real_elf && o->real_elf_off[2])
		err = rc_cpu(w, t + 1330 * RC_MS, 500, 500, 14, CAP_STACK_NONE);
	for (i = 0; !err && i < o->extra_cpu; i++)
		err = rc_cpu(w, t + 2900 * RC_MS + i, 100, 100, 10, 3);
	for (i = 0; !err && i < o->extra_offcpu; i++)
		err = rc_offcpu(w, t + 2900 * RC_MS + 2000 * (uint64_t)i, 1000, 100, 100, 1,
				10, 3);
	return err ?: rc_bio(w, t + 100 * RC_MS, 2 * RC_MS, 100, "app", CAP_BIO_READ, 4096, 8, 0) ?:
	       rc_bio(w, t + 150 * RC_MS, 4 * RC_MS, 100, "app", CAP_BIO_READ, 8192, 8, 0) ?:
	       rc_bio(w, t + 300 * RC_MS, RC_MS, 100, "app", CAP_BIO_WRITE, 16384, 8, 0) ?:
	       rc_bio(w, t + 400 * RC_MS, RC_MS / 2, 200, "kworker/0:1", CAP_BIO_FLUSH, 0, 8, 0) ?:
	       rc_bio(w, t + 1290 * RC_MS, 10 * RC_MS, 300, "fstrim", CAP_BIO_DISCARD, 1048576,
		      8, 0) ?:
	       rc_bio(w, t + 1400 * RC_MS, 2 * RC_MS, 100, "app", CAP_BIO_WRITE, 4096, 8, 16);
}

static int epilogue(struct cap_writer *w, const struct rc_opts *o)
{
	struct cap_lost l1 = { .count = 5, .kind = CAP_KIND_OFFCPU, .reason = CAP_LOST_RINGBUF,
			       .cpu = 0xffffffff };
	struct cap_lost l2 = { .count = 2, .kind = CAP_KIND_CPU, .reason = CAP_LOST_USTACK,
			       .cpu = 0xffffffff };
	struct cap_stat st = { .value = 10, .key_id = 7 };
	struct cap_end end = { .time = RC_T0 + 3 * RC_S, .reason = CAP_STOP_DURATION,
			       .status = -1 };
	unsigned i;
	int err;

	err = cap_writer__append(w, CAP_REC_LOST, &l1, sizeof(l1), NULL, 0) ?:
	      cap_writer__append(w, CAP_REC_LOST, &l2, sizeof(l2), NULL, 0) ?:
	      rc_string(w, 7, "ringbuf_polls") ?:
	      cap_writer__append(w, CAP_REC_STAT, &st, sizeof(st), NULL, 0);
	for (i = 0; !err && i < o->ntriggers; i++)
		err = cap_writer__append(w, CAP_REC_TRIGGER, &o->triggers[i],
					 o->trigger_lens ? o->trigger_lens[i] :
					 sizeof(o->triggers[i]), NULL, 0);
	return err ?: cap_writer__append(w, CAP_REC_END, &end, sizeof(end), NULL, 0);
}

int rc_write_scene(const char *path, const struct rc_opts *opts)
{
	static const struct rc_opts none;
	const struct rc_opts *o = opts ? opts : &none;
	struct cap_writer *w = o->cmdline ? rc_open_cmdline(path, o->cmdline) : rc_open(path);
	int err;

	if (!w)
		return -EIO;
	err = defs(w, o) ?: tasks(w) ?: events(w, o);
	if (!err && o->truncate) {
		/* a killed recorder: blocks on disk, no END, no trailer, and the
		 * last block cut short */
		uint64_t size;

		err = cap_writer__flush(w);
		size = cap_writer__file_size(w);
		cap_writer__free(w);
		if (!err && truncate(path, (off_t)size - 7) != 0)
			err = -errno;
		return err;
	}
	err = err ?: epilogue(w, o);
	if (err) {
		cap_writer__free(w);
		return err;
	}
	return cap_writer__finish(w);
}

uint64_t rc_elf_offset(Elf *e, uint64_t vaddr)
{
	GElf_Phdr ph;
	size_t k, n;

	if (elf_getphdrnum(e, &n))
		return 0;
	for (k = 0; k < n; k++) {
		if (!gelf_getphdr(e, k, &ph))
			return 0;
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

char *rc_tmpname(const char *tag)
{
	static unsigned seq;
	char *p;

	if (asprintf(&p, "/tmp/stkrec-report-%s-%d-%u.cap", tag, (int)getpid(), seq++) < 0)
		return NULL;
	return p;
}

char *rc_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *p;

			cap = cap ? cap * 2 : 8192;
			p = realloc(buf, cap);
			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		r = fread(buf + n, 1, 4096, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}
