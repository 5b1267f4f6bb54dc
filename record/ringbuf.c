// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A BPF ring buffer read through one mapping of its data (record/ringbuf.h).
 * The positions only grow; a position's offset in the data is its value
 * modulo the size. The consumer's position is stored after each record so
 * that the kernel can reuse the space at once, as libbpf does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "record/ringbuf.h"

#define CONSUMED_BATCH 64 /* records between updates of the consumer's position */

struct ringbuf {
	int fd;
	size_t size, page;
	unsigned long *consumer;  /* the first page, read-write */
	unsigned long *producer;  /* the second page, then the data */
	uint8_t *data;
	uint8_t *wrap;            /* a wrapped record, copied whole */
	size_t wrap_cap;
	ringbuf_fn fn;
	void *ctx;
};

static int map_size(int fd, size_t *size)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	*size = info.max_entries;
	return 0;
}

int ringbuf__new(int map_fd, ringbuf_fn fn, void *ctx, struct ringbuf **out)
{
	struct ringbuf *rb;
	void *p;
	int err;

	*out = NULL;
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return -ENOMEM;
	rb->fd = map_fd;
	rb->fn = fn;
	rb->ctx = ctx;
	rb->page = (size_t)sysconf(_SC_PAGESIZE);
	err = map_size(map_fd, &rb->size);
	if (err)
		goto fail;
	p = mmap(NULL, rb->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail_errno;
	rb->consumer = p;
	p = mmap(NULL, rb->page + rb->size, PROT_READ, MAP_SHARED, map_fd, (off_t)rb->page);
	if (p == MAP_FAILED)
		goto fail_errno;
	rb->producer = p;
	rb->data = (uint8_t *)p + rb->page;
	*out = rb;
	return 0;
fail_errno:
	err = -errno;
fail:
	ringbuf__free(rb);
	return err;
}

/* The record's bytes at data offset off, len long: in place, or copied
 * whole when they wrap past the end. NULL: no memory for the copy. */
static void *record_at(struct ringbuf *rb, size_t off, size_t len)
{
	size_t first = rb->size - off;
	void *p;

	if (len <= first)
		return rb->data + off;
	if (len > rb->wrap_cap) {
		p = realloc(rb->wrap, len);
		if (!p)
			return NULL;
		rb->wrap = p;
		rb->wrap_cap = len;
	}
	memcpy(rb->wrap, rb->data + off, first);
	memcpy(rb->wrap + first, rb->data, len - first);
	return rb->wrap;
}

/* One record at position cons: its size with the header (0: still being
 * written), *err the callback's return, *n counting the records given. */
static size_t consume_one(struct ringbuf *rb, unsigned long cons, int *n, int *err)
{
	size_t off = cons & (rb->size - 1);
	uint32_t len = __atomic_load_n((uint32_t *)(rb->data + off), __ATOMIC_ACQUIRE);
	size_t body = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	void *rec;

	if (len & BPF_RINGBUF_BUSY_BIT)
		return 0;
	if (body > rb->size - BPF_RINGBUF_HDR_SZ) {
		*err = -EINVAL;
		return 0;
	}
	if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
		rec = record_at(rb, (off + BPF_RINGBUF_HDR_SZ) & (rb->size - 1), body);
		if (!rec) {
			*err = -ENOMEM; /* the record stays for the next pass */
			return 0;
		}
		*err = rb->fn(rb->ctx, rec, body);
		++*n;
	}
	return (body + BPF_RINGBUF_HDR_SZ + 7) & ~(size_t)7;
}

/* As libbpf's ring_buffer__consume(): until the producer stops moving, or
 * a record still being written. */
int ringbuf__consume(struct ringbuf *rb)
{
	unsigned long cons, prod;
	int n = 0, err = 0;
	size_t step = 0;

	cons = __atomic_load_n(rb->consumer, __ATOMIC_ACQUIRE);
	for (;;) {
		prod = __atomic_load_n(rb->producer, __ATOMIC_ACQUIRE);
		if (cons >= prod)
			return n;
		while (cons < prod) {
			step = consume_one(rb, cons, &n, &err);
			if (!step)
				break;
			cons += step;
			/* the consumer's position is read by every reserve
			 * in the kernel: written once per chunk, not once
			 * per record, its cache line stays put meanwhile */
			if (!(n & (CONSUMED_BATCH - 1)) || err < 0)
				__atomic_store_n(rb->consumer, cons, __ATOMIC_RELEASE);
			if (err < 0)
				return err;
		}
		__atomic_store_n(rb->consumer, cons, __ATOMIC_RELEASE);
		if (!step)
			return err < 0 ? err : n;
	}
}

int ringbuf__fd(const struct ringbuf *rb)
{
	return rb->fd;
}

void ringbuf__free(struct ringbuf *rb)
{
	if (!rb)
		return;
	if (rb->consumer)
		munmap(rb->consumer, rb->page);
	if (rb->producer)
		munmap(rb->producer, rb->page + rb->size);
	free(rb->wrap);
	free(rb);
}
