/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A reader of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF) that maps its data
 * once. libbpf's ring_buffer maps the data pages twice, back to back, so
 * that a record wrapping past the end reads as one piece; every page then
 * counts twice in the recorder's RSS (the kernel inserts the pages when
 * mapped: a 16 MiB ring was 32 MB of RSS from the start). Here a record
 * that wraps is copied whole into a buffer of the largest such record.
 *
 * The kernel's layout (kernel/bpf/ringbuf.c): a page with the consumer's
 * position, written by us; a page with the producer's position, then the
 * data, both read-only. Each record has an 8-byte header: its length with
 * a BUSY bit (still being written: stop there) and a DISCARD bit (skip
 * it), rounded up to 8 bytes with the header.
 */
#ifndef STKREC_RECORD_RINGBUF_H
#define STKREC_RECORD_RINGBUF_H

#include <stddef.h>

struct ringbuf;

/* Called once per record, in order; a negative return stops the pass
 * after this record (which is consumed) and is returned by
 * ringbuf__consume(). */
typedef int (*ringbuf_fn)(void *ctx, void *data, size_t size);

/* map_fd: a ring buffer map (its size asked of the kernel). 0, or -errno
 * (-EINVAL: not a ring buffer). */
int ringbuf__new(int map_fd, ringbuf_fn fn, void *ctx, struct ringbuf **out);
/* Every record written so far: how many, or the callback's error, or
 * -EINVAL when a record's length runs past the ring (not the kernel's). */
int ringbuf__consume(struct ringbuf *rb);
/* The fd to poll for EPOLLIN (the map's own). */
int ringbuf__fd(const struct ringbuf *rb);
void ringbuf__free(struct ringbuf *rb);

#endif /* STKREC_RECORD_RINGBUF_H */
