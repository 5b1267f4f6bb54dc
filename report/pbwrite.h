/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Protocol Buffers wire format, writing only (protobuf.dev, "Encoding"):
 * varints, field keys, length-delimited fields and nested messages, into a
 * growable buffer. What report/view_pprof.c needs to write profile.proto
 * without a generated encoder: the caller knows its field numbers, and the
 * tools that read the file do the decoding.
 *
 * Errors are sticky: a failed allocation sets err (-ENOMEM) and later calls
 * write nothing, so a message is built without a check per field and
 * checked once.
 */
#ifndef STKREC_REPORT_PBWRITE_H
#define STKREC_REPORT_PBWRITE_H

#include <stddef.h>
#include <stdint.h>

/* Wire types (the low 3 bits of a key). */
#define PB_VARINT 0
#define PB_LEN 2

struct pbuf {
	uint8_t *b;
	size_t len, cap;
	int err;    /* 0 or -ENOMEM */
};

/* An empty buffer is all zeroes; pbuf__free() frees it. */
void pbuf__free(struct pbuf *p);
/* Empty it, keeping its memory and clearing err. */
void pbuf__reset(struct pbuf *p);

/* Bytes of v as a varint (1 to 10). */
int pb_varint_len(uint64_t v);
/* v as a varint: 7 bits a byte, least significant first. */
void pb_varint(struct pbuf *p, uint64_t v);
/* Field `field` of wire type `wire`: the key varint (field << 3 | wire). */
void pb_key(struct pbuf *p, uint32_t field, int wire);
/* A varint field (uint64, uint32, bool, enum; an int64 as its two's
 * complement, ten bytes when negative). */
void pb_uint(struct pbuf *p, uint32_t field, uint64_t v);
/* A length-delimited field: bytes, string. */
void pb_bytes(struct pbuf *p, uint32_t field, const void *data, size_t len);
void pb_str(struct pbuf *p, uint32_t field, const char *s);

/* A nested message or a packed repeated field: pb_begin() writes the key
 * and keeps room for the length, pb_end(mark) writes the length of what
 * came since (moving it when the length needs more than one byte). Nest
 * freely; end in the reverse order of begin. */
size_t pb_begin(struct pbuf *p, uint32_t field);
void pb_end(struct pbuf *p, size_t mark);

#endif /* STKREC_REPORT_PBWRITE_H */
