/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The perf side band: one PERF_COUNT_SW_DUMMY event per CPU with mmap2,
 * comm (with exec), and task records, timed with CLOCK_MONOTONIC (same clock
 * as bpf_ktime_get_ns). It tells about every mapping as it happens, so
 * processes that live for 300 ms are still symbolizable.
 */
#ifndef STKREC_RECORD_SIDEBAND_H
#define STKREC_RECORD_SIDEBAND_H

#include <stdint.h>
#include "format/capture.h"
#include "record/procmaps.h"

struct sideband;

/* sideband__open() flags */
#define SIDEBAND_EAGER 0x1 /* wake the poller at every record, not a quarter full */

/* Open on cpus[0..ncpus) with pages data pages per CPU (a power of 2). */
int sideband__open(const int *cpus, int ncpus, unsigned pages, unsigned flags,
		   struct sideband **out);
void sideband__free(struct sideband *sb);
/* File descriptors to poll (one per CPU). */
int sideband__fds(const struct sideband *sb, const int **fds);
/* Drain all rings: MAPPING via procmaps__add, THREAD (exec/comm changes),
 * FORK records through w; LOST records for PERF_RECORD_LOST. Returns the
 * number of records handled or -errno. */
int sideband__drain(struct sideband *sb, struct cap_writer *w, struct procmaps *pm);
uint64_t sideband__lost(const struct sideband *sb);
/* Whether the kernel fills build IDs into MMAP2 records (Linux 5.12+). */
bool sideband__has_build_id(const struct sideband *sb);

#endif
