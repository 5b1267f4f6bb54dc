/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * GNU build IDs (NT_GNU_BUILD_ID notes) from ELF files, from open file
 * descriptors and from raw note blobs such as /sys/kernel/notes and
 * /sys/module/NAME/notes/.note.gnu.build-id. A build ID longer than 20
 * bytes is reported as absent (size 0), as the kernel does.
 */
#ifndef STKREC_RECORD_BUILDID_H
#define STKREC_RECORD_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILDID_MAX 20

/* Build ID from the ELF notes of the file at path; size 0 if it has none.
 * Returns 0 or -errno (-ENOEXEC: not an ELF file). */
int buildid__read_file(const char *path, uint8_t id[BUILDID_MAX], uint8_t *size);

/* Build ID from a sequence of ELF notes (4-byte aligned Elf_Nhdr + name +
 * desc). Returns 0 (size 0 when there is none). */
int buildid__parse_notes(const void *buf, size_t len, uint8_t id[BUILDID_MAX],
			 uint8_t *size);
/* Build ID of the ELF file open on fd (PT_NOTE segments, then SHT_NOTE
 * sections). Returns 0, or -ENOEXEC when fd is not an ELF file. */
int buildid__read_fd(int fd, uint8_t id[BUILDID_MAX], uint8_t *size);
/* Build ID from a file that holds raw notes (sysfs note files). */
int buildid__read_notes_file(const char *path, uint8_t id[BUILDID_MAX], uint8_t *size);

#endif
