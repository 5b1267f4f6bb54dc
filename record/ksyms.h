/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel symbols for offline symbolization: /proc/kallsyms, /proc/modules,
 * the kernel build ID from /sys/kernel/notes. Only the symbols that recorded
 * kernel stacks use are written (KSYM records, before the stack that needs
 * them), so a capture stays small and survives a kill.
 */
#ifndef STKREC_RECORD_KSYMS_H
#define STKREC_RECORD_KSYMS_H

#include <stdbool.h>
#include <stdint.h>
#include "format/capture.h"
#include "format/intern.h"

struct ksyms;

/* Load kallsyms (needs root for real addresses: -EPERM when all are 0). */
int ksyms__load(struct ksyms **out);
/* The same from other files (tests); a missing modules file means none. */
int ksyms__load_files(const char *kallsyms, const char *modules, struct ksyms **out);
void ksyms__free(struct ksyms *ks);
/* Write the KERNEL record and one KMOD record per loaded module. */
int ksyms__write_kernel(struct ksyms *ks, struct cap_writer *w, struct intern *in);
/* Write KSYM records for the symbols covering ips[] not written before.
 * An address no symbol covers makes kallsyms be reread (BPF programs and
 * modules loaded since), at most once a second and 16 times in all.
 * Matches intern_kstack_fn when ctx is a struct ksyms_sink. */
int ksyms__write_for_ips(struct ksyms *ks, struct cap_writer *w, struct intern *in,
			 const uint64_t *ips, uint16_t nr);
/* intern_kstack_fn adapter: ctx must point to this. */
struct ksyms_sink {
	struct ksyms *ks;
	struct cap_writer *w;
	struct intern *in;
};
int ksyms__kstack_hook(void *ctx, const uint64_t *ips, uint16_t nr);

/* A new capture file: every symbol is written again when a stack needs it. */
void ksyms__new_file(struct ksyms *ks);

/* The recorder's own BPF program of fd, named as kallsyms names it
 * (bpf_prog_TAG_NAME, module bpf): kallsyms is read while the programs
 * load, and an address it lacks makes it be read again. 0, -ENOSPC past
 * 32 programs, or -errno. */
int ksyms__add_prog(struct ksyms *ks, int prog_fd);

/* A kernel stack (innermost first) taken in an interrupt: the number of
 * its frames down to the interrupt's entry (a hardware interrupt's entry
 * code, or the softirq loop: *softirq), which are the interrupt's own;
 * the frames after are the task it interrupted. 0 in task context. */
int ksyms__irq_frames(const struct ksyms *ks, const uint64_t *ips, int n, bool *softirq);

/* Symbol lookup (name of the function containing addr), NULL if none. */
const char *ksyms__name(const struct ksyms *ks, uint64_t addr, uint64_t *sym_start);
size_t ksyms__count(const struct ksyms *ks);
/* How many times kallsyms was reread for unknown addresses. */
unsigned ksyms__reloads(const struct ksyms *ks);
/* Address of _stext, or 0 when kallsyms does not list it. */
uint64_t ksyms__stext(const struct ksyms *ks);

/* The kernel's ORC unwind tables (bpf/kstack.bpf.h walks them): the
 * entries' addresses (s32 offsets, __start_orc_unwind_ip up to
 * __stop_orc_unwind_ip), the entries, and the core text [_stext, _etext). */
struct ksyms_orc {
	uint64_t ip_start, ip_stop, tab, text_lo, text_hi;
};
/* 0, or -ENOENT when kallsyms lacks any of them. */
int ksyms__orc(const struct ksyms *ks, struct ksyms_orc *out);

#endif
