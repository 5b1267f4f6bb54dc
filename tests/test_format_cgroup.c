// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/ 1.5: cgroup ids in the event records, namespace ids in THREAD,
 * CGROUP records (FORMAT.md §4.4, §4.11-4.13, §4.17, §4.23, §4.25); the
 * records of 1.4 writers read with those fields 0. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

#define BIG_CGROUP 0xfedcba9876543210ull

static void begin(struct capgen_mem *c, bool fixed)
{
	struct cap_writer_opts wo = { .fixed_offcpu = fixed };

	cr_assert_eq(capgen_mem_begin(c, &wo), 0);
}

/* One record of each kind with the fields of 1.5 set, written whole. */
static void write_all(struct capgen_mem *c, uint64_t cg)
{
	struct cap_thread t = { .time = 5, .tid = 41, .pid = 40, .comm = "svc",
				.ns_tid = 2, .ns_pid = 1 };
	struct cap_wakeup w = { .time = 9, .tid = 41, .pid = 40, .waker_tid = 7,
				.waker_pid = 7, .cgroup = cg, .waker_cgroup = cg + 1 };
	struct cap_offcpu o;
	struct cap_cpu u;
	struct cap_bio b;

	capgen_offcpu(1, &o);
	capgen_cpu(2, &u);
	capgen_bio(3, &b);
	o.cgroup = u.cgroup = b.cgroup = cg;
	cr_assert_eq(cap_writer__append(c->w, CAP_REC_THREAD, &t, sizeof(t), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c->w, CAP_REC_OFFCPU, &o, sizeof(o), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c->w, CAP_REC_CPU, &u, sizeof(u), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c->w, CAP_REC_BIO, &b, sizeof(b), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c->w, CAP_REC_WAKEUP, &w, sizeof(w), NULL, 0), 0);
}

static void read_all(struct capgen_mem *c, uint64_t cg)
{
	struct cap_record rec;

	cr_assert_eq(capgen_mem_next(c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_THREAD);
	cr_assert_eq(rec.thread.ns_tid, 2);
	cr_assert_eq(rec.thread.ns_pid, 1);
	cr_assert_eq(capgen_mem_next(c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_OFFCPU);
	cr_assert_eq(rec.offcpu.cgroup, cg, "%#llx", (unsigned long long)rec.offcpu.cgroup);
	cr_assert_eq(rec.offcpu.open, 0);
	cr_assert_eq(capgen_mem_next(c, &rec), 1);
	cr_assert_eq(rec.cpu.cgroup, cg);
	cr_assert_eq(capgen_mem_next(c, &rec), 1);
	cr_assert_eq(rec.bio.cgroup, cg);
	cr_assert_eq(capgen_mem_next(c, &rec), 1);
	cr_assert_eq(rec.wakeup.cgroup, cg);
	cr_assert_eq(rec.wakeup.waker_cgroup, cg + 1);
	cr_assert_eq(capgen_mem_next(c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c->r)->bad_records, 0);
}

Test(format_cgroup, every_kind_carries_its_cgroup)
{
	struct capgen_mem c;

	begin(&c, true);
	write_all(&c, BIG_CGROUP);
	cr_assert_eq(capgen_mem_end(&c), 0);
	read_all(&c, BIG_CGROUP);
	capgen_mem_free(&c);
	/* compact OFFCPU: a 64-bit id in field 9, `open` 0 written before it */
	begin(&c, false);
	write_all(&c, BIG_CGROUP);
	cr_assert_eq(capgen_mem_end(&c), 0);
	read_all(&c, BIG_CGROUP);
	capgen_mem_free(&c);
}

/* A compact OFFCPU with cgroup 0 is the 1.4 record, byte for byte; with
 * one, two more fields: open (a 0 byte) and the id's LEB128. */
Test(format_cgroup, compact_sizes)
{
	struct cap_offcpu o = { 1000, 4000, 100, 100, 0, 1, 5, 6 };
	struct cap_record rec;
	struct capgen_mem c;

	begin(&c, false);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &o, sizeof(o), NULL, 0), 0);
	o.start += o.duration;
	o.cgroup = 300; /* two LEB128 bytes */
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &o, sizeof(o), NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.size, 4 + 2 + 2 + 1 + 1 + 1 + 1 + 1 + 1);
	cr_assert_eq(rec.offcpu.cgroup, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.size, 4 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 2);
	cr_assert_eq(rec.offcpu.cgroup, 300);
	cr_assert_eq(rec.offcpu.open, 0);
	capgen_mem_free(&c);
}

/* Records at the sizes 1.4 wrote them: the new fields read as 0. */
Test(format_cgroup, records_of_1_4_read_as_0)
{
	struct cap_thread t = { .time = 5, .tid = 41, .pid = 40, .ns_tid = 2, .ns_pid = 1 };
	struct cap_wakeup w = { .time = 9, .tid = 41, .cgroup = 3, .waker_cgroup = 4 };
	struct cap_offcpu o;
	struct cap_cpu u;
	struct cap_bio b;
	struct cap_record rec;
	struct capgen_mem c;

	capgen_offcpu(1, &o);
	capgen_cpu(2, &u);
	capgen_bio(3, &b);
	o.cgroup = u.cgroup = b.cgroup = 77; /* past the old sizes: not written */
	begin(&c, true);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_THREAD, &t, CAP_THREAD_SIZE_1_4, NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_OFFCPU, &o, CAP_OFFCPU_SIZE_1_4, NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_CPU, &u, CAP_CPU_SIZE_1_4, NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_BIO, &b, CAP_BIO_SIZE_1_4, NULL, 0), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_WAKEUP, &w, CAP_WAKEUP_SIZE_1_4, NULL, 0), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.thread.tid, 41);
	cr_assert_eq(rec.thread.ns_tid + rec.thread.ns_pid, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.offcpu.kstack, o.kstack);
	cr_assert_eq(rec.offcpu.cgroup, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.cpu.kstack, u.kstack);
	cr_assert_eq(rec.cpu.cgroup, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.bio.kstack, b.kstack);
	cr_assert_eq(rec.bio.cgroup, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.wakeup.time, 9);
	cr_assert_eq(rec.wakeup.cgroup + rec.wakeup.waker_cgroup, 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 0);
	cr_assert_eq(cap_reader__stats(c.r)->counted.events[CAP_KIND_CPU], 1);
	capgen_mem_free(&c);
}

/* CGROUP: the path is the tail; a length past 4096 or past the record is
 * a bad record, never decoded. */
Test(format_cgroup, cgroup_record_and_hostile_paths)
{
	static const char path[] = "/system.slice/docker-0123456789abcdef.scope";
	struct cap_cgroup g = { .id = 4242, .time = 7, .flags = CAP_CGROUP_F_REMOVED,
				.path_len = sizeof(path) - 1 };
	struct cap_cgroup huge = { .id = 1, .path_len = 5000 };
	struct cap_cgroup past = { .id = 2, .path_len = 10 };
	static char big[5000];
	struct cap_record rec;
	struct capgen_mem c;

	memset(big, 'a', sizeof(big));
	begin(&c, true);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_CGROUP, &huge, sizeof(huge), big, 5000), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_CGROUP, &past, sizeof(past), "/a", 2), 0);
	cr_assert_eq(cap_writer__append(c.w, CAP_REC_CGROUP, &g, sizeof(g), path, g.path_len), 0);
	cr_assert_eq(capgen_mem_end(&c), 0);
	cr_assert_eq(capgen_mem_next(&c, &rec), 1);
	cr_assert_eq(rec.type, CAP_REC_CGROUP);
	cr_assert_eq(rec.cgroup.id, 4242);
	cr_assert_eq(rec.cgroup.time, 7);
	cr_assert_eq(rec.cgroup.flags, CAP_CGROUP_F_REMOVED);
	cr_assert_eq(rec.tail_len, g.path_len);
	cr_assert_str_eq(rec.tail, path);
	cr_assert_eq(capgen_mem_next(&c, &rec), 0);
	cr_assert_eq(cap_reader__stats(c.r)->bad_records, 2);
	capgen_mem_free(&c);
}
