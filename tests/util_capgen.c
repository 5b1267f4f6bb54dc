// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Synthetic captures for tests; see util_capgen.h for what they contain. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

const uint64_t capgen_uips[3] = { 0x401136, 0x4011a0, 0x7f0000021c8a };
const uint64_t capgen_kips[4] = {
	0xffffffff81e0a1b2, 0xffffffff81e0a3c4, 0xffffffff8110f00d,
	0xffffffffc0a01234,
};

void capgen_header(struct cap_header *h)
{
	memset(h, 0, sizeof(*h));
	h->start_time = CAPGEN_T0 - 5000000;
	h->clock_offset = 1700000000000000000ll - (int64_t)CAPGEN_T0;
	h->start_realtime = h->start_time + h->clock_offset;
	h->ncpus = 2;
	h->page_size = 4096;
	h->recorder_pid = 999;
	strcpy(h->hostname, "capgen-host");
	strcpy(h->release, "6.18.0-capgen");
	strcpy(h->machine, "x86_64");
	strcpy(h->version, "0.1.0");
	strcpy(h->cmdline, "stkrec record -a -o capgen.stkrec -- ./workload --fast");
}

void capgen_offcpu(unsigned i, struct cap_offcpu *r)
{
	memset(r, 0, sizeof(*r));
	r->start = CAPGEN_T0 + (uint64_t)i * 1000000;
	r->duration = 250000 + i;
	r->tid = CAPGEN_TID;
	r->pid = CAPGEN_PID;
	r->cpu = i % 2;
	r->state = i % 3 ? 1 : 2;
	r->ustack = CAPGEN_USTACK;
	r->kstack = CAPGEN_KSTACK;
}

void capgen_cpu(unsigned i, struct cap_cpu *r)
{
	memset(r, 0, sizeof(*r));
	r->time = CAPGEN_T0 + (uint64_t)i * 1000000 + 300000;
	r->tid = CAPGEN_TID;
	r->pid = CAPGEN_PID;
	r->cpu = (i + 1) % 2;
	r->ustack = CAPGEN_USTACK;
	r->kstack = i % 4 ? CAPGEN_KSTACK : CAP_STACK_LOST;
}

void capgen_bio(unsigned i, struct cap_bio *r)
{
	memset(r, 0, sizeof(*r));
	r->issue_time = CAPGEN_T0 + (uint64_t)i * 1000000 + 400000;
	r->complete_time = r->issue_time + 120000 + i * 10;
	r->sector = 2048 + (uint64_t)i * 8;
	r->bytes = 4096;
	r->tid = CAPGEN_TID;
	r->pid = CAPGEN_PID;
	r->major = 8;
	r->minor = 0;
	r->op = i % 2 ? CAP_BIO_WRITE : CAP_BIO_READ;
	r->flags = i % 2 ? CAP_BIO_F_SYNC : 0;
	r->error = i == 5 ? -EIO : 0;
	strcpy(r->comm, "capgen");
}

void capgen_thread(struct cap_thread *r)
{
	memset(r, 0, sizeof(*r));
	r->time = CAPGEN_T0 - 1000;
	r->tid = CAPGEN_TID;
	r->pid = CAPGEN_PID;
	r->flags = CAP_THREAD_EXEC;
	strcpy(r->comm, CAPGEN_COMM);
}

void capgen_fork(struct cap_fork *r)
{
	memset(r, 0, sizeof(*r));
	r->time = CAPGEN_T0 - 2000;
	r->pid = CAPGEN_PID;
	r->tid = CAPGEN_TID;
	r->ppid = 1;
	r->ptid = 1;
}

void capgen_mapping(struct cap_mapping *r)
{
	unsigned i;

	memset(r, 0, sizeof(*r));
	r->time = CAPGEN_T0 - 1500;
	r->start = 0x401000;
	r->end = 0x402000;
	r->pgoff = 0x1000;
	r->pid = CAPGEN_PID;
	r->path_id = 1;
	r->flags = CAP_MAP_FROM_PROC;
	r->build_id_size = 20;
	for (i = 0; i < 20; i++)
		r->build_id[i] = 0xa0 + i;
}

void capgen_kernel(struct cap_kernel *r)
{
	unsigned i;

	memset(r, 0, sizeof(*r));
	r->build_id_size = 20;
	for (i = 0; i < 20; i++)
		r->build_id[i] = 0x10 + i;
	r->stext = 0xffffffff81000000;
}

void capgen_kmod(struct cap_kmod *r)
{
	memset(r, 0, sizeof(*r));
	r->base = 0xffffffffc0a00000;
	r->size = 0x80000;
	r->name_id = 2;
	r->build_id_size = 3;
	r->build_id[0] = 1;
	r->build_id[1] = 2;
	r->build_id[2] = 3;
}

void capgen_ksym(struct cap_ksym *r)
{
	memset(r, 0, sizeof(*r));
	r->addr = 0xffffffff81e0a100;
	r->size = 0x200;
	r->module_id = 0;
	r->name_len = strlen(CAPGEN_KSYM);
}

void capgen_blockdev(struct cap_blockdev *r)
{
	memset(r, 0, sizeof(*r));
	r->major = 8;
	r->minor = 0;
	strcpy(r->name, "sda");
}

void capgen_stat(struct cap_stat *r)
{
	memset(r, 0, sizeof(*r));
	r->value = CAPGEN_STAT_VALUE;
	r->key_id = 3;
}

void capgen_end(unsigned events, struct cap_end *r)
{
	memset(r, 0, sizeof(*r));
	r->time = CAPGEN_T0 + (uint64_t)events * 1000000 + 900000;
	r->reason = CAP_STOP_COMMAND;
	r->status = 0;
}

#define APPEND(w, type, rec) cap_writer__append(w, type, &(rec), sizeof(rec), NULL, 0)

int capgen_prologue(struct cap_writer *w)
{
	struct cap_thread th;
	struct cap_fork fk;
	struct cap_mapping mp;
	struct cap_kernel kn;
	struct cap_kmod km;
	struct cap_ksym ks;
	struct cap_blockdev bd;
	int err;

	capgen_thread(&th);
	capgen_fork(&fk);
	capgen_mapping(&mp);
	capgen_kernel(&kn);
	capgen_kmod(&km);
	capgen_ksym(&ks);
	capgen_blockdev(&bd);
	if ((err = cap_writer__string(w, 1, CAPGEN_EXE, strlen(CAPGEN_EXE))) ||
	    (err = cap_writer__string(w, 2, CAPGEN_KMOD, strlen(CAPGEN_KMOD))) ||
	    (err = cap_writer__string(w, 3, CAPGEN_STAT_KEY, strlen(CAPGEN_STAT_KEY))) ||
	    (err = cap_writer__stack(w, CAPGEN_USTACK, CAP_STACK_USER, capgen_uips, 3)) ||
	    (err = cap_writer__stack(w, CAPGEN_KSTACK, CAP_STACK_KERNEL, capgen_kips, 4)) ||
	    (err = APPEND(w, CAP_REC_THREAD, th)) ||
	    (err = APPEND(w, CAP_REC_FORK, fk)) ||
	    (err = APPEND(w, CAP_REC_MAPPING, mp)) ||
	    (err = APPEND(w, CAP_REC_KERNEL, kn)) ||
	    (err = APPEND(w, CAP_REC_KMOD, km)) ||
	    (err = cap_writer__append(w, CAP_REC_KSYM, &ks, sizeof(ks), CAPGEN_KSYM,
				      strlen(CAPGEN_KSYM))) ||
	    (err = APPEND(w, CAP_REC_BLOCKDEV, bd)))
		return err;
	return 0;
}

int capgen_events(struct cap_writer *w, unsigned first, unsigned n)
{
	struct cap_offcpu oc;
	struct cap_cpu cpu;
	struct cap_bio bio;
	unsigned i;
	int err;

	for (i = first; i < first + n; i++) {
		capgen_offcpu(i, &oc);
		capgen_cpu(i, &cpu);
		capgen_bio(i, &bio);
		if ((err = APPEND(w, CAP_REC_OFFCPU, oc)) ||
		    (err = APPEND(w, CAP_REC_CPU, cpu)) ||
		    (err = APPEND(w, CAP_REC_BIO, bio)))
			return err;
	}
	return 0;
}

int capgen_epilogue(struct cap_writer *w, unsigned events, bool end)
{
	struct cap_lost l1 = { CAPGEN_LOST_OFFCPU, CAP_KIND_OFFCPU, CAP_LOST_RINGBUF, 0, 0 };
	struct cap_lost l2 = { CAPGEN_LOST_CPU, CAP_KIND_CPU, CAP_LOST_USTACK, 1, 0 };
	struct cap_lost l3 = { CAPGEN_LOST_SIDEBAND, CAP_KIND_SIDEBAND, CAP_LOST_SIDEBAND,
			       0xffffffff, 0 };
	struct cap_stat st;
	struct cap_end en;
	int err;

	capgen_stat(&st);
	capgen_end(events, &en);
	if ((err = APPEND(w, CAP_REC_LOST, l1)) || (err = APPEND(w, CAP_REC_LOST, l2)) ||
	    (err = APPEND(w, CAP_REC_LOST, l3)) || (err = APPEND(w, CAP_REC_STAT, st)))
		return err;
	if (end)
		return APPEND(w, CAP_REC_END, en);
	return 0;
}

static int gen_body(struct cap_writer *w, const struct capgen_opts *o,
		    struct capgen_info *info)
{
	unsigned n = o->events ? o->events : 8, i = 0;
	int err;

	err = capgen_prologue(w);
	if (o->min_blocks) {
		while (!err && cap_writer__totals(w)->blocks + 1 < o->min_blocks)
			err = capgen_events(w, i++, 1);
		n = i;
	} else if (!err) {
		err = capgen_events(w, 0, n);
	}
	if (!err)
		err = capgen_epilogue(w, n, !o->no_end);
	info->events = n;
	info->records = CAPGEN_PROLOGUE_RECORDS + 3ull * n +
			CAPGEN_EPILOGUE_RECORDS - (o->no_end ? 1 : 0);
	return err;
}

static int gen_fd(int fd, const struct capgen_opts *opts, struct capgen_info *info)
{
	struct capgen_opts o = { 0 };
	struct cap_writer_opts wo = { 0 };
	struct cap_header h;
	struct cap_writer *w;
	int err;

	if (opts)
		o = *opts;
	if (o.wopts)
		wo = *o.wopts;
	wo.block_size = o.block_size ? o.block_size :
			wo.block_size ? wo.block_size : CAPGEN_BLOCK_SIZE;
	capgen_header(&h);
	err = cap_writer__fdopen(fd, &h, &wo, &w);
	if (err)
		return err;
	err = gen_body(w, &o, info);
	if (!err)
		err = cap_writer__flush(w);
	info->totals = *cap_writer__totals(w);
	if (err || o.no_finish) {
		info->file_size = cap_writer__file_size(w);
		cap_writer__free(w);
		return err;
	}
	info->file_size = cap_writer__file_size(w);
	err = cap_writer__finish(w);
	if (!err)
		info->file_size += 8 + sizeof(struct cap_trailer_hdr) +
				   info->totals.blocks * sizeof(struct cap_index_entry) +
				   sizeof(struct cap_footer);
	return err;
}

int capgen_write(const char *path, const struct capgen_opts *opts,
		 struct capgen_info *info)
{
	struct capgen_info dummy;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	return gen_fd(fd, opts, info ? info : &dummy);
}

int capgen_write_mem(const struct capgen_opts *opts, uint8_t **buf, size_t *len,
		     struct capgen_info *info)
{
	struct capgen_info dummy;
	struct stat sb;
	uint8_t *p;
	int fd, wfd, err;

	fd = memfd_create("capgen", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	wfd = dup(fd);
	if (wfd < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = gen_fd(wfd, opts, info ? info : &dummy);
	if (!err && fstat(fd, &sb))
		err = -errno;
	if (!err) {
		p = malloc(sb.st_size ? sb.st_size : 1);
		if (!p)
			err = -ENOMEM;
		else if (pread(fd, p, sb.st_size, 0) != sb.st_size)
			err = -EIO;
		if (err) {
			free(p);
		} else {
			*buf = p;
			*len = sb.st_size;
		}
	}
	close(fd);
	return err;
}

static int verify_string(const struct cap_record *rec)
{
	static const char *const strs[] = { NULL, CAPGEN_EXE, CAPGEN_KMOD, CAPGEN_STAT_KEY };
	const char *s;

	if (rec->string.id < 1 || rec->string.id > 3)
		return -1;
	s = strs[rec->string.id];
	if (rec->string.len != strlen(s) || rec->tail_len != strlen(s) ||
	    memcmp(rec->tail, s, rec->tail_len) || rec->tail[rec->tail_len])
		return -1;
	return 0;
}

static int verify_stack(const struct cap_record *rec)
{
	const uint64_t *ips = rec->stack.id == CAPGEN_USTACK ? capgen_uips : capgen_kips;
	unsigned nr = rec->stack.id == CAPGEN_USTACK ? 3 : 4;
	uint8_t kind = rec->stack.id == CAPGEN_USTACK ? CAP_STACK_USER : CAP_STACK_KERNEL;

	if ((rec->stack.id != CAPGEN_USTACK && rec->stack.id != CAPGEN_KSTACK) ||
	    rec->stack.nr != nr || rec->stack.kind != kind || rec->stack.reserved ||
	    memcmp(rec->ips, ips, nr * sizeof(*ips)))
		return -1;
	return 0;
}

static int verify_event(const struct cap_record *rec, unsigned *index)
{
	union {
		struct cap_offcpu oc;
		struct cap_cpu cpu;
		struct cap_bio bio;
	} want;
	uint64_t t = rec->type == CAP_REC_OFFCPU ? rec->offcpu.start :
		     rec->type == CAP_REC_CPU ? rec->cpu.time : rec->bio.issue_time;
	unsigned i;

	if (t < CAPGEN_T0)
		return -1;
	i = (t - CAPGEN_T0) / 1000000;
	if (index)
		*index = i;
	if (rec->type == CAP_REC_OFFCPU) {
		capgen_offcpu(i, &want.oc);
		return memcmp(&want.oc, &rec->offcpu, sizeof(want.oc)) ? -1 : 0;
	}
	if (rec->type == CAP_REC_CPU) {
		capgen_cpu(i, &want.cpu);
		return memcmp(&want.cpu, &rec->cpu, sizeof(want.cpu)) ? -1 : 0;
	}
	capgen_bio(i, &want.bio);
	return memcmp(&want.bio, &rec->bio, sizeof(want.bio)) ? -1 : 0;
}

static int verify_lost(const struct cap_record *rec)
{
	const struct cap_lost *l = &rec->lost;

	switch (l->kind) {
	case CAP_KIND_OFFCPU:
		return l->count == CAPGEN_LOST_OFFCPU && l->reason == CAP_LOST_RINGBUF &&
		       l->cpu == 0 ? 0 : -1;
	case CAP_KIND_CPU:
		return l->count == CAPGEN_LOST_CPU && l->reason == CAP_LOST_USTACK &&
		       l->cpu == 1 ? 0 : -1;
	case CAP_KIND_SIDEBAND:
		return l->count == CAPGEN_LOST_SIDEBAND && l->reason == CAP_LOST_SIDEBAND &&
		       l->cpu == 0xffffffff ? 0 : -1;
	}
	return -1;
}

#define SAME(field, fill) ({ struct cap_##field _w; fill(&_w); \
			     memcmp(&_w, &rec->field, sizeof(_w)) ? -1 : 0; })

int capgen_verify_record(const struct cap_record *rec, unsigned *index)
{
	struct cap_end en;

	switch (rec->type) {
	case CAP_REC_BLOCK:
		return 0;
	case CAP_REC_STRING:
		return verify_string(rec);
	case CAP_REC_STACK:
		return verify_stack(rec);
	case CAP_REC_THREAD:
		return SAME(thread, capgen_thread);
	case CAP_REC_FORK:
		return SAME(fork, capgen_fork);
	case CAP_REC_MAPPING:
		return SAME(mapping, capgen_mapping);
	case CAP_REC_KERNEL:
		return SAME(kernel, capgen_kernel);
	case CAP_REC_KMOD:
		return SAME(kmod, capgen_kmod);
	case CAP_REC_KSYM:
		if (rec->tail_len != strlen(CAPGEN_KSYM) || strcmp(rec->tail, CAPGEN_KSYM))
			return -1;
		return SAME(ksym, capgen_ksym);
	case CAP_REC_BLOCKDEV:
		return SAME(blockdev, capgen_blockdev);
	case CAP_REC_OFFCPU:
	case CAP_REC_CPU:
	case CAP_REC_BIO:
		return verify_event(rec, index);
	case CAP_REC_LOST:
		return verify_lost(rec);
	case CAP_REC_STAT:
		return SAME(stat, capgen_stat);
	case CAP_REC_END:
		if (rec->end.time < CAPGEN_T0)
			return -1;
		capgen_end((rec->end.time - CAPGEN_T0) / 1000000, &en);
		return memcmp(&en, &rec->end, sizeof(en)) ? -1 : 0;
	}
	return -1;
}

static void readout_add(struct capgen_readout *ro, const struct cap_record *rec,
			uint64_t *last_seq, size_t *block_raw)
{
	unsigned idx = 0;

	ro->records++;
	if (rec->type < 256)
		ro->count[rec->type]++;
	if (rec->type == CAP_REC_BLOCK) {
		if (*last_seq != UINT64_MAX && rec->block.seq <= *last_seq)
			ro->seq_ok = false;
		*last_seq = rec->block.seq;
		*block_raw = 0;
	}
	*block_raw += rec->size;
	if (*block_raw > ro->max_block_raw)
		ro->max_block_raw = *block_raw;
	if (capgen_verify_record(rec, &idx))
		ro->bad++;
	else if (rec->type == CAP_REC_OFFCPU && idx < 64)
		ro->events_seen |= 1ull << idx;
}

int capgen_read_mem(const void *buf, size_t len, struct capgen_readout *ro)
{
	uint64_t last_seq = UINT64_MAX, oc[64] = { 0 };
	struct cap_record rec;
	struct cap_reader *r;
	size_t block_raw = 0;
	unsigned i;
	int err;

	memset(ro, 0, sizeof(*ro));
	ro->seq_ok = true;
	err = cap_reader__open_mem(buf, len, &r);
	if (err)
		return err;
	while ((err = cap_reader__next(r, &rec)) == 1) {
		readout_add(ro, &rec, &last_seq, &block_raw);
		if ((rec.type == CAP_REC_CPU || rec.type == CAP_REC_BIO) &&
		    !capgen_verify_record(&rec, &i) && i < 64)
			oc[i]++;
	}
	/* an event index counts as seen only with all three of its records */
	for (i = 0; i < 64; i++) {
		if (oc[i] != 2)
			ro->events_seen &= ~(1ull << i);
	}
	ro->err = err;
	ro->st = *cap_reader__stats(r);
	cap_reader__close(r);
	return 0;
}

uint8_t *capgen_slurp_fd(int fd, size_t *len)
{
	struct stat sb;
	uint8_t *p;

	if (fstat(fd, &sb))
		return NULL;
	p = malloc(sb.st_size ? sb.st_size : 1);
	if (p && pread(fd, p, sb.st_size, 0) != sb.st_size) {
		free(p);
		return NULL;
	}
	*len = sb.st_size;
	return p;
}

int capgen_mem_begin(struct capgen_mem *c, const struct cap_writer_opts *wo)
{
	struct cap_header h;

	memset(c, 0, sizeof(*c));
	capgen_header(&h);
	c->fd = memfd_create("capgen", 0);
	if (c->fd < 0)
		return -errno;
	return cap_writer__fdopen(dup(c->fd), &h, wo, &c->w);
}

int capgen_mem_end(struct capgen_mem *c)
{
	int err = cap_writer__finish(c->w);

	c->w = NULL;
	if (err)
		return err;
	c->buf = capgen_slurp_fd(c->fd, &c->len);
	if (!c->buf)
		return -ENOMEM;
	return cap_reader__open_mem(c->buf, c->len, &c->r);
}

int capgen_mem_next(struct capgen_mem *c, struct cap_record *rec)
{
	int ret;

	while ((ret = cap_reader__next(c->r, rec)) == 1 && rec->type == CAP_REC_BLOCK)
		;
	return ret;
}

void capgen_mem_free(struct capgen_mem *c)
{
	cap_writer__free(c->w);
	cap_reader__close(c->r);
	free(c->buf);
	close(c->fd);
}
