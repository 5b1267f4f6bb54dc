/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Synthetic captures for the report tests: a small but realistic scene
 * (threads, a kernel thread, an exec, mappings, kernel symbols with the
 * tracer's own frames, a module, lost and missing stacks, block I/O of every
 * op) written through cap_writer, plus helpers to run a view into a string.
 */
#ifndef STKREC_TESTS_UTIL_REPORT_H
#define STKREC_TESTS_UTIL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "format/capture.h"

#define RC_T0 1000000000000ull                 /* monotonic start, ns */
#define RC_REAL0 1767323045000000000ll         /* 2026-01-02T03:04:05Z */
#define RC_MS 1000000ull
#define RC_S 1000000000ull

/* Scene contents that tests check against. */
#define RC_APP_PID 100
#define RC_WORKER_TID 101
#define RC_KTHREAD 200
#define RC_FSTRIM 300
#define RC_EXEC_PID 400
#define RC_ROOT "/nonexistent-stkrec-scene" /* prefix of the recorded paths */

struct rc_opts {
	const char *real_elf;     /* if set: pid 500 ("realprog") maps it */
	/* file offsets in it: user stack 13 is {[0], [1]} (2 CPU samples, one
	 * off-CPU wait under kernel stack 1); if [2] is set, stack 14 is
	 * {[2], [1]} (1 CPU sample) */
	uint64_t real_elf_off[3];
	const uint8_t *real_bid;  /* its build ID (or NULL) */
	uint8_t real_bid_size;
	bool truncate;            /* drop the trailer and cut the last block */
	unsigned extra_cpu;       /* this many more CPU samples (speed tests) */
	unsigned extra_offcpu;    /* this many more 1 us waits of tid 100 */
	const char *cmdline;      /* the header's; NULL: "stkrec record -a -d 3" */
	/* a flight recorder's dump: these TRIGGERs after LOST and STAT, before
	 * END, trigger_lens[i] bytes each (NULL: whole), hostile ones too */
	const struct cap_trigger *triggers;
	const size_t *trigger_lens;
	unsigned ntriggers;
};

/* Write the scene to path. 0 or a negative code. */
int rc_write_scene(const char *path, const struct rc_opts *opts);

/* Low-level pieces for tests that build their own capture. */
struct cap_writer *rc_open(const char *path);
struct cap_writer *rc_open_cmdline(const char *path, const char *cmdline);
int rc_string(struct cap_writer *w, uint32_t id, const char *s);
int rc_thread(struct cap_writer *w, uint64_t t, uint32_t tid, uint32_t pid, uint32_t flags,
	      const char *comm);
int rc_map(struct cap_writer *w, uint64_t t, uint32_t pid, uint64_t start, uint64_t end,
	   uint64_t pgoff, uint32_t path_id);
int rc_ksym(struct cap_writer *w, uint64_t addr, uint32_t size, const char *name,
	    uint32_t module_id);
int rc_offcpu(struct cap_writer *w, uint64_t start, uint64_t dur, uint32_t tid, uint32_t pid,
	      uint32_t state, uint32_t ustack, uint32_t kstack);
int rc_cpu(struct cap_writer *w, uint64_t t, uint32_t tid, uint32_t pid, uint32_t ustack,
	   uint32_t kstack);

/* The file offset of vaddr through an ELF's loaded segments (PT_LOAD); 0
 * when none holds it. */
uint64_t rc_elf_offset(Elf *e, uint64_t vaddr);

/* A unique temporary file name (removed by the caller). */
char *rc_tmpname(const char *tag);
/* Whole file into a NUL-terminated malloc()ed string; NULL on error. */
char *rc_slurp(const char *path, size_t *len);

#endif /* STKREC_TESTS_UTIL_REPORT_H */
