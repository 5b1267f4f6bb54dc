/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recorder's side of CPython frames: which processes run CPython (a
 * mapping of python3.X or libpython3.X; python/ reads the file), their
 * entries in the BPF map `pyprocs` (bpf/python.bpf.h), and the Python
 * frames of each event turned into capture frames: each code object read
 * once from the process (checked against the stamp the kernel saw, so a
 * code object freed and another allocated at its address is not taken for
 * it), written once per file as a PY_CODE record, and the frames placed
 * inside the native eval frames that run them (record/pystack.h).
 *
 * Never prints; what it counts becomes STAT records.
 */
#ifndef STKREC_RECORD_PYTRACK_H
#define STKREC_RECORD_PYTRACK_H

#include <stdint.h>
#include "bpf/stkrec.h"
#include "format/capture.h"
#include "format/intern.h"

struct pytrack;

struct pytrack_stats {
	uint64_t processes;   /* processes marked as CPython */
	uint64_t unsupported; /* CPython processes of a version not read (once each) */
	uint64_t code_reads;  /* code objects read from processes */
	uint64_t code_unread; /* frames whose code object could not be read or
			       * was no longer the one the kernel saw */
	uint64_t merged_cut;  /* stacks over CAP_MAX_STACK_DEPTH once merged */
};

/* pyprocs_fd: the BPF map; py_procs: the BPF program's flag, set once a
 * process is in the map (NULL: none). */
int pytrack__new(int pyprocs_fd, volatile uint32_t *py_procs, struct pytrack **out);
void pytrack__free(struct pytrack *t);
/* An executable file mapping of pid, with the file open on fd (procmaps'
 * sink): marks the process when the file is CPython. path names the file
 * (the name test: python3.X, libpython3.X). */
int pytrack__map(struct pytrack *t, uint32_t pid, const struct cap_mapping *m, int fd,
		 const char *path);
/* pid exec'd or exited: its interpreter is gone, the kernel's entry at
 * once, this side's a few seconds later (its last events may be still in
 * the ring buffer). */
void pytrack__forget(struct pytrack *t, uint32_t pid);
/* A new capture file (a --switch-output file, a flight recorder's
 * segment): its PY_CODE records are written again as its stacks use them. */
void pytrack__new_file(struct pytrack *t);
/* child was forked from parent: the same interpreter at the same place. */
int pytrack__fork(struct pytrack *t, uint32_t parent, uint32_t child);
/*
 * The user stack of e with its Python frames in place, into out (at most
 * CAP_MAX_STACK_DEPTH frames): the count. Code objects new to this file
 * are written through in as PY_CODE records first.
 */
int pytrack__stack(struct pytrack *t, struct intern *in, const struct stkrec_stack_ev *e,
		   uint64_t *out);
void pytrack__stats(const struct pytrack *t, struct pytrack_stats *st);

#endif /* STKREC_RECORD_PYTRACK_H */
