// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Code objects read from a live process (process_vm_readv). The memory is
 * hostile: each object's type is checked against the interpreter's own
 * type objects, each length capped before anything is allocated.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "python/python_int.h"

#define PAGE 4096u /* read granule: any page size is a multiple of it */

/*
 * Up to len bytes at addr: how many could be read (a read that runs into
 * an unmapped page stops there), or -errno. process_vm_readv stops at
 * the first remote iovec that fails, so the first page is one of its own.
 */
static ssize_t peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	uint64_t edge = (addr | (PAGE - 1)) + 1;
	struct iovec local = { buf, len }, remote[2] = { { (void *)(uintptr_t)addr, len } };
	unsigned long n = 1;
	ssize_t r;

	if (len > edge - addr) {
		remote[0].iov_len = edge - addr;
		remote[1] = (struct iovec){ (void *)(uintptr_t)edge, len - (edge - addr) };
		n = 2;
	}
	r = process_vm_readv(pid, &local, 1, remote, n, 0);
	return r < 0 ? -errno : r;
}

static int peek_all(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t r = peek(pid, addr, buf, len);

	if (r < 0)
		return r;
	return (size_t)r == len ? 0 : -EFAULT;
}

static uint64_t u64_at(const uint8_t *b, uint16_t at)
{
	uint64_t v;

	memcpy(&v, b + at, 8);
	return v;
}

static uint32_t u32_at(const uint8_t *b, uint16_t at)
{
	uint32_t v;

	memcpy(&v, b + at, 4);
	return v;
}

/* One character to UTF-8 at out[*n], within cap bytes. */
static int put_utf8(uint32_t c, char *out, size_t *n, size_t cap)
{
	uint8_t b[4];
	size_t len;

	if (!c || c > 0x10ffff)
		return -EBADMSG; /* names hold no NUL; nor does str hold more */
	if (c >= 0xd800 && c <= 0xdfff)
		c = 0xfffd; /* a lone surrogate (str allows it; UTF-8 does not) */
	if (c < 0x80) {
		b[0] = c;
		len = 1;
	} else if (c < 0x800) {
		b[0] = 0xc0 | c >> 6;
		b[1] = 0x80 | (c & 0x3f);
		len = 2;
	} else if (c < 0x10000) {
		b[0] = 0xe0 | c >> 12;
		b[1] = 0x80 | (c >> 6 & 0x3f);
		b[2] = 0x80 | (c & 0x3f);
		len = 3;
	} else {
		b[0] = 0xf0 | c >> 18;
		b[1] = 0x80 | (c >> 12 & 0x3f);
		b[2] = 0x80 | (c >> 6 & 0x3f);
		b[3] = 0x80 | (c & 0x3f);
		len = 4;
	}
	if (*n + len > cap)
		return -E2BIG;
	memcpy(out + *n, b, len);
	*n += len;
	return 0;
}

/* Character i of a string of kind bytes a character (1: Latin-1, 2: UCS-2,
 * 4: UCS-4), little-endian. */
static uint32_t char_at(const uint8_t *data, int64_t i, int kind)
{
	const uint8_t *p = data + i * kind;

	if (kind == 1)
		return p[0];
	if (kind == 2)
		return p[0] | p[1] << 8;
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static int to_utf8(const uint8_t *data, int64_t len, int kind, bool ascii, char **out)
{
	char *s = malloc(PY_MAX_STR + 1);
	size_t n = 0;
	int64_t i;
	int err = 0;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < len && !err; i++) {
		uint32_t c = char_at(data, i, kind);

		err = ascii && c >= 0x80 ? -EBADMSG : put_utf8(c, s, &n, PY_MAX_STR);
	}
	if (err) {
		free(s);
		return err;
	}
	s[n] = 0;
	*out = s;
	return 0;
}

/* The str object at addr, as UTF-8: compact strings only (every name and
 * file name a code object holds is one: interned, or made compact). */
static int read_str(const struct py_interp *pi, pid_t pid, uint64_t bias, uint64_t addr, char **out)
{
	const struct py_offsets *o = &pi->off;
	uint8_t buf[PY_CODE_HDR_MAX], *data = buf, *big = NULL;
	uint32_t state, kind;
	uint16_t at;
	ssize_t r;
	int64_t len;
	bool ascii;
	int err;

	r = peek(pid, addr, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (r < o->u_ascii_data)
		return -EFAULT;
	if (u64_at(buf, o->ob_type) != pi->addrs.unicode_type + bias)
		return -EBADMSG;
	state = u32_at(buf, o->u_state);
	kind = state >> o->u_kind_bit & 7;
	ascii = state >> o->u_ascii_bit & 1;
	memcpy(&len, buf + o->u_length, 8);
	if (!(state >> o->u_compact_bit & 1) || (kind != 1 && kind != 2 && kind != 4) ||
	    (ascii && kind != 1) || len < 0)
		return -EBADMSG;
	if (len > PY_MAX_STR)
		return -E2BIG;
	at = ascii ? o->u_ascii_data : o->u_compact_data;
	if ((uint64_t)at + len * kind > (uint64_t)r) {
		big = malloc(len * kind + 1);
		if (!big)
			return -ENOMEM;
		err = peek_all(pid, addr + at, big, len * kind);
		if (err) {
			free(big);
			return err;
		}
		data = big;
		at = 0;
	}
	err = to_utf8(data + at, len, kind, ascii, out);
	free(big);
	return err;
}

/* The bytes object at addr: its length (at most cap), and its bytes when
 * data is not NULL. */
static int read_bytes(const struct py_interp *pi, pid_t pid, uint64_t bias, uint64_t addr,
		      uint32_t cap, uint8_t **data, uint32_t *len)
{
	const struct py_offsets *o = &pi->off;
	uint8_t hdr[PY_CODE_HDR_MAX];
	int64_t size;
	int err;

	err = peek_all(pid, addr, hdr, o->b_sval);
	if (err)
		return err;
	if (u64_at(hdr, o->ob_type) != pi->addrs.bytes_type + bias)
		return -EBADMSG;
	memcpy(&size, hdr + o->ob_size, 8);
	if (size < 0)
		return -EBADMSG;
	if (size > cap)
		return -E2BIG;
	*len = size;
	if (!data)
		return 0;
	*data = malloc(size ? size : 1);
	if (!*data)
		return -ENOMEM;
	err = peek_all(pid, addr + o->b_sval, *data, size);
	if (err) {
		free(*data);
		*data = NULL;
	}
	return err;
}

/* Bytes of bytecode: the code object's own code units (3.11+), or its
 * co_code bytes object's length. */
static int code_size(const struct py_interp *pi, pid_t pid, uint64_t bias, const uint8_t *hdr,
		     uint32_t *size)
{
	const struct py_offsets *o = &pi->off;
	int64_t units;

	if (o->co_code != STKREC_PY_NONE)
		return read_bytes(pi, pid, bias, u64_at(hdr, o->co_code), PY_MAX_CODE, NULL, size);
	memcpy(&units, hdr + o->ob_size, 8);
	if (units <= 0)
		return -EBADMSG;
	if (units > PY_MAX_CODE / 2)
		return -E2BIG;
	*size = units * 2;
	return 0;
}

static int read_fields(const struct py_interp *pi, pid_t pid, uint64_t bias, const uint8_t *hdr,
		       struct py_code *c)
{
	const struct py_offsets *o = &pi->off;
	uint16_t qual = o->co_qualname != STKREC_PY_NONE ? o->co_qualname : o->co_name;
	int err;

	memcpy(&c->firstlineno, hdr + o->co_firstlineno, 4);
	c->stamp = stkrec_py_stamp(c->firstlineno, u64_at(hdr, o->co_name));
	err = code_size(pi, pid, bias, hdr, &c->code_size);
	if (!err)
		err = read_str(pi, pid, bias, u64_at(hdr, qual), &c->qualname);
	if (!err)
		err = read_str(pi, pid, bias, u64_at(hdr, o->co_filename), &c->filename);
	if (!err)
		err = read_bytes(pi, pid, bias, u64_at(hdr, o->co_linetable), PY_MAX_LINETABLE,
				 &c->linetable, &c->linetable_len);
	return err;
}

int py_interp__read_code(const struct py_interp *pi, pid_t pid, uint64_t bias, uint64_t addr,
			 struct py_code *out)
{
	uint8_t hdr[PY_CODE_HDR_MAX];
	int err;

	memset(out, 0, sizeof(*out));
	err = peek_all(pid, addr, hdr, pi->code_hdr);
	if (err)
		return err;
	if (u64_at(hdr, pi->off.ob_type) != pi->addrs.code_type + bias)
		return PY_ENOTCODE;
	err = read_fields(pi, pid, bias, hdr, out);
	if (err)
		py_code__release(out);
	return err;
}

void py_code__release(struct py_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}
