// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ring buffer reader (record/ringbuf.h) on a real BPF ring buffer of
 * one page, filled by a socket filter run with BPF_PROG_TEST_RUN: records
 * of 208 bytes with their header, so that they wrap past the end at a
 * new offset each time round. Each record carries its run's value
 * (skb->len) in its first and last word; every record is read whole, in
 * order, once. The data is mapped once: the map's mappings total two
 * pages and the data.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "record/ringbuf.h"

#define REC 200 /* bytes of a record, not counting its 8-byte header */

struct seen {
	uint64_t first[256], last[256];
	size_t size[256];
	int n;
	int stop_at; /* return -EAGAIN at this record, -1 never */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	int i = s->n++;

	if (i >= 256)
		return -E2BIG;
	s->size[i] = size;
	memcpy(&s->first[i], data, 8);
	memcpy(&s->last[i], (char *)data + size - 8, 8);
	return i == s->stop_at ? -EAGAIN : 0;
}

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off,
			      .imm = imm };
	return i;
}

/* r6 = skb->len; a zeroed REC-byte stack buffer with r6 in its first and
 * last word; bpf_ringbuf_output(map, buf, REC, 0); return 0. */
static int load_writer(int map_fd)
{
	struct bpf_insn p[64];
	int n = 0, off;

	p[n++] = insn(BPF_LDX | BPF_MEM | BPF_W, 6, 1, offsetof(struct __sk_buff, len), 0);
	for (off = -REC; off < 0; off += 8)
		p[n++] = insn(BPF_ST | BPF_MEM | BPF_DW, 10, 0, off, 0);
	p[n++] = insn(BPF_STX | BPF_MEM | BPF_DW, 10, 6, -REC, 0);
	p[n++] = insn(BPF_STX | BPF_MEM | BPF_DW, 10, 6, -8, 0);
	p[n++] = insn(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd);
	p[n++] = insn(0, 0, 0, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -REC);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, REC);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0);
	p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", p, n, NULL);
}

/* One run of the writer on a packet of an Ethernet header and v bytes:
 * skb->len, read past the header, is v. */
static void write_one(int prog, uint32_t v)
{
	static char pkt[14 + 512];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = 14 + v);

	cr_assert_eq(bpf_prog_test_run_opts(prog, &o), 0, "test run: %s", strerror(errno));
}

static void setup(int *map, int *prog, long *page)
{
	if (geteuid() != 0)
		cr_skip_test("BPF maps and programs need root");
	*page = sysconf(_SC_PAGESIZE);
	*map = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, (uint32_t)*page, NULL);
	if (*map < 0)
		cr_skip_test("no BPF ring buffer here: %s", strerror(errno));
	*prog = load_writer(*map);
	cr_assert_geq(*prog, 0, "socket filter refused: %s", strerror(errno));
}

/* Bytes of this process's mappings of BPF maps. */
static unsigned long map_mappings(void)
{
	unsigned long a, b, sum = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "anon_inode:bpf-map") && sscanf(line, "%lx-%lx", &a, &b) == 2)
			sum += b - a;
	fclose(f);
	return sum;
}

Test(record_ringbuf, wrapped_records_read_whole_in_order)
{
	struct seen s = { .stop_at = -1 };
	struct ringbuf *rb;
	int map, prog, i, got = 0;
	long page;

	setup(&map, &prog, &page);
	cr_assert_eq(ringbuf__new(map, on_record, &s, &rb), 0);
	cr_assert_eq(map_mappings(), 2 * page + page, "the data mapped once");
	/* 7 records (1,456 bytes) between reads: 200 records go round the
	 * page 10 times, wrapping at a new offset each time */
	for (i = 0; i < 200; i++) {
		write_one(prog, 14 + i);
		if (i % 7 == 6 || i == 199)
			got += ringbuf__consume(rb);
	}
	cr_assert_eq(got, 200);
	cr_assert_eq(s.n, 200);
	for (i = 0; i < 200; i++) {
		cr_assert_eq(s.size[i], REC, "record %d: %zu bytes", i, s.size[i]);
		cr_assert_eq(s.first[i], 14 + i, "record %d: head %lu", i,
			     (unsigned long)s.first[i]);
		cr_assert_eq(s.last[i], 14 + i, "record %d: tail %lu", i,
			     (unsigned long)s.last[i]);
	}
	cr_assert_eq(ringbuf__consume(rb), 0, "nothing left");
	ringbuf__free(rb);
	close(prog);
	close(map);
}

/* A callback's error stops the pass after its record, which is consumed;
 * the next pass starts at the record after it. */
Test(record_ringbuf, an_error_stops_after_its_record)
{
	struct seen s = { .stop_at = 2 };
	struct ringbuf *rb;
	int map, prog, i;
	long page;

	setup(&map, &prog, &page);
	cr_assert_eq(ringbuf__new(map, on_record, &s, &rb), 0);
	for (i = 0; i < 5; i++)
		write_one(prog, 100 + i);
	cr_assert_eq(ringbuf__consume(rb), -EAGAIN);
	cr_assert_eq(s.n, 3);
	cr_assert_eq(ringbuf__consume(rb), 2);
	cr_assert_eq(s.n, 5);
	for (i = 0; i < 5; i++)
		cr_assert_eq(s.first[i], 100 + i);
	ringbuf__free(rb);
	close(prog);
	close(map);
}

Test(record_ringbuf, refuses_a_map_that_is_not_a_ring)
{
	struct ringbuf *rb = (void *)1;
	int map;

	if (geteuid() != 0)
		cr_skip_test("BPF maps need root");
	map = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL);
	cr_assert_geq(map, 0);
	cr_assert_eq(ringbuf__new(map, on_record, NULL, &rb), -EINVAL);
	cr_assert_null(rb);
	close(map);
}
