/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Synthetic captures for tests: every record type, deterministic values,
 * configurable size and block count. Depends only on format/ and libc.
 *
 * Layout written by capgen_write(): the prologue (STRING x3, STACK x2,
 * THREAD, FORK, MAPPING, KERNEL, KMOD, KSYM, BLOCKDEV), then `events`
 * triplets OFFCPU(i), CPU(i), BIO(i), then the epilogue (LOST x3, STAT,
 * END). The values of each record are what the capgen_*() fillers return.
 */
#ifndef STKREC_TESTS_UTIL_CAPGEN_H
#define STKREC_TESTS_UTIL_CAPGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/capture.h"

#define CAPGEN_PID 4242
#define CAPGEN_TID 4243
#define CAPGEN_COMM "capgen-worker"
#define CAPGEN_EXE "/usr/bin/capgen"      /* STRING 1, MAPPING path */
#define CAPGEN_KMOD "ext4"                /* STRING 2, KMOD name */
#define CAPGEN_STAT_KEY "ringbuf_polls"   /* STRING 3, STAT key */
#define CAPGEN_STAT_VALUE 777
#define CAPGEN_KSYM "schedule"
#define CAPGEN_USTACK 1                   /* STACK ids used by events */
#define CAPGEN_KSTACK 2
#define CAPGEN_T0 1000000000000ull        /* monotonic ns of event 0 */
#define CAPGEN_BLOCK_SIZE 512             /* default writer block size */
#define CAPGEN_LOST_OFFCPU 3              /* LOST: offcpu, ringbuf */
#define CAPGEN_LOST_CPU 2                 /* LOST: cpu, user stack */
#define CAPGEN_LOST_SIDEBAND 1            /* LOST: sideband, side band */
/* records besides the events: 12 prologue + 5 epilogue (4 without END) */
#define CAPGEN_PROLOGUE_RECORDS 12
#define CAPGEN_EPILOGUE_RECORDS 5

struct capgen_opts {
	size_t block_size;        /* 0: CAPGEN_BLOCK_SIZE */
	unsigned events;          /* OFFCPU+CPU+BIO triplets; 0: 8 */
	unsigned min_blocks;      /* if set, add triplets until this many blocks */
	bool no_finish;           /* flush but write no trailer (killed recorder) */
	bool no_end;              /* omit the END record */
	const struct cap_writer_opts *wopts; /* base writer options, or NULL */
};

struct capgen_info {
	unsigned events;          /* triplets written */
	uint64_t records;         /* records appended, BLOCK records excluded */
	struct cap_totals totals; /* the writer's totals before finish */
	uint64_t file_size;
};

/* Write a capture to path. Returns 0 or a negative code. */
int capgen_write(const char *path, const struct capgen_opts *opts,
		 struct capgen_info *info);
/* The same into a malloc()ed buffer the caller frees. */
int capgen_write_mem(const struct capgen_opts *opts, uint8_t **buf, size_t *len,
		     struct capgen_info *info);

/* The deterministic contents. */
void capgen_header(struct cap_header *h);
void capgen_offcpu(unsigned i, struct cap_offcpu *r);
void capgen_cpu(unsigned i, struct cap_cpu *r);
void capgen_bio(unsigned i, struct cap_bio *r);
extern const uint64_t capgen_uips[3];
extern const uint64_t capgen_kips[4];
void capgen_thread(struct cap_thread *r);
void capgen_fork(struct cap_fork *r);
void capgen_mapping(struct cap_mapping *r);
void capgen_kernel(struct cap_kernel *r);
void capgen_kmod(struct cap_kmod *r);
void capgen_ksym(struct cap_ksym *r);
void capgen_blockdev(struct cap_blockdev *r);
void capgen_stat(struct cap_stat *r);
void capgen_end(unsigned events, struct cap_end *r);

/* The pieces, for tests that build their own capture around them. */
int capgen_prologue(struct cap_writer *w);
int capgen_events(struct cap_writer *w, unsigned first, unsigned n);
int capgen_epilogue(struct cap_writer *w, unsigned events, bool end);

/* 0 when rec is byte-for-byte a record capgen writes (events are matched
 * to their index by time; *index receives it), -1 otherwise. */
int capgen_verify_record(const struct cap_record *rec, unsigned *index);

/* Everything capgen_read_mem() saw while reading a capture to its end. */
struct capgen_readout {
	struct cap_read_stats st;
	uint64_t count[256];      /* records per type (types < 256) */
	uint64_t records;         /* records returned */
	unsigned bad;             /* records that differ from what capgen writes */
	uint64_t events_seen;     /* bit i: OFFCPU, CPU and BIO of event i (< 64) */
	bool seq_ok;              /* BLOCK seqs strictly increasing */
	size_t max_block_raw;     /* largest sum of record sizes in a block */
	int err;                  /* cap_reader__next() error, or 0 */
};
/* Open buf, read every record, verify each with capgen_verify_record().
 * Returns cap_reader__open_mem()'s error, or 0. */
int capgen_read_mem(const void *buf, size_t len, struct capgen_readout *ro);
/* Whole contents of fd (from offset 0) in a malloc()ed buffer. */
uint8_t *capgen_slurp_fd(int fd, size_t *len);

/* A capture written into a memfd and read back, for tests of single
 * records: begin, append to c.w, end, then next() until 0, then free. */
struct capgen_mem {
	int fd;
	struct cap_writer *w;
	uint8_t *buf;
	size_t len;
	struct cap_reader *r;
};
int capgen_mem_begin(struct capgen_mem *c, const struct cap_writer_opts *wo);
int capgen_mem_end(struct capgen_mem *c);   /* finish, then open the reader */
int capgen_mem_next(struct capgen_mem *c, struct cap_record *rec); /* not BLOCK */
void capgen_mem_free(struct capgen_mem *c);

#endif
