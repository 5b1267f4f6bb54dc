/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers of the host-information tests (test_record_hostinfo*.c): a temp
 * directory per test, programs compiled into it, build IDs as `readelf -n`
 * prints them, and a capture read back into memory. Depends on format/,
 * libc and Criterion only, as every test binary links it.
 */
#ifndef STKREC_TESTS_UTIL_HOSTINFO_H
#define STKREC_TESTS_UTIL_HOSTINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/capture.h"

extern char hostinfo_tmpdir[64];

/* Suite .init/.fini: create and remove hostinfo_tmpdir. */
void hostinfo_mk_tmpdir(void);
void hostinfo_rm_tmpdir(void);

void hostinfo_write_file(const char *path, const char *text);
/* A C program sleeping ms milliseconds, compiled with ldflags into
 * hostinfo_tmpdir/name; its path in out. */
void hostinfo_build_prog(const char *name, const char *ldflags, int ms, char *out,
			 size_t len);
/* Build ID bytes as `readelf -n` prints them; returns their count (0: none). */
int hostinfo_readelf_buildid(const char *path, uint8_t id[20]);
struct cap_header hostinfo_header(void);

/* A capture read back: every record, STRING records resolved by id. */
struct hostinfo_rec {
	struct cap_record rec;
	char tail[1024];
};

struct hostinfo_readback {
	struct hostinfo_rec *v;
	size_t n;
	char **strings; /* by STRING id - 1 */
	size_t nstrings;
};

/* Finish w (written to path) and read the capture into rb. */
void hostinfo_finish_read(struct cap_writer *w, const char *path,
			  struct hostinfo_readback *rb);
const char *hostinfo_rb_string(const struct hostinfo_readback *rb, uint32_t id);
size_t hostinfo_rb_count(const struct hostinfo_readback *rb, uint16_t type);
void hostinfo_rb_free(struct hostinfo_readback *rb);

#endif
