// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* format/: error codes and names, open errors, write faults, max_size. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

Test(format_errors, strerror_names_every_code)
{
	static const struct { int code; const char *text; } want[] = {
		{ CAP_ERR_BAD_MAGIC, "not a stkrec capture (bad magic)" },
		{ CAP_ERR_VERSION, "capture format version is newer than this stkrec" },
		{ CAP_ERR_FEATURE, "capture uses an unknown incompatible feature" },
		{ CAP_ERR_TRUNCATED, "capture header is truncated" },
		{ CAP_ERR_CORRUPT, "capture structure is corrupt" },
		{ CAP_ERR_TOO_LARGE, "a size in the capture exceeds a limit" },
		{ CAP_ERR_CHECKSUM, "block checksum mismatch" },
		{ CAP_ERR_ZSTD, "zstd (de)compression failed" },
		{ CAP_ERR_EMPTY, "capture file is empty" },
		{ CAP_ERR_NOT_FILE, "not a regular file" },
		{ CAP_ERR_RECORD, "record too short for its type" },
		{ CAP_ERR_INVAL, "invalid argument" },
		{ CAP_ERR_FULL, "capture reached its maximum size" },
	};
	size_t i;

	cr_assert_eq(sizeof(want) / sizeof(want[0]), -(CAP_ERR_LAST + CAP_ERR_BASE) - 1);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert_str_eq(cap_strerror(want[i].code), want[i].text);
	cr_assert_str_eq(cap_strerror(-ENOSPC), strerror(ENOSPC));
	cr_assert_str_eq(cap_strerror(-EIO), strerror(EIO));
	cr_assert_str_eq(cap_strerror(0), "success");
	cr_assert_str_eq(cap_strerror(CAP_ERR_LAST), "unknown error");
	cr_assert_str_eq(cap_strerror(-CAP_ERR_BASE), "unknown error");
	cr_assert_str_eq(cap_strerror(17), "unknown error");
}

Test(format_errors, names)
{
	cr_assert_str_eq(cap_kind_name(CAP_KIND_OFFCPU), "offcpu");
	cr_assert_str_eq(cap_kind_name(CAP_KIND_CPU), "cpu");
	cr_assert_str_eq(cap_kind_name(CAP_KIND_BIO), "bio");
	cr_assert_str_eq(cap_kind_name(CAP_KIND_SIDEBAND), "sideband");
	cr_assert_str_eq(cap_kind_name(CAP_KIND_MAX), "unknown");
	cr_assert_str_eq(cap_lost_reason_name(CAP_LOST_RINGBUF), "ringbuf full");
	cr_assert_str_eq(cap_lost_reason_name(CAP_LOST_USTACK), "user stack");
	cr_assert_str_eq(cap_lost_reason_name(CAP_LOST_KSTACK), "kernel stack");
	cr_assert_str_eq(cap_lost_reason_name(CAP_LOST_SIDEBAND), "side band");
	cr_assert_str_eq(cap_lost_reason_name(CAP_LOST_STATE), "state table full");
	cr_assert_str_eq(cap_lost_reason_name(CAP_LOST_MAX), "unknown");
	cr_assert_str_eq(cap_rec_type_name(CAP_REC_OFFCPU), "offcpu");
	cr_assert_str_eq(cap_rec_type_name(CAP_REC_BLOCKDEV), "blockdev");
	cr_assert_str_eq(cap_rec_type_name(CAP_REC_PACK_INFO), "pack_info");
	cr_assert_str_eq(cap_rec_type_name(CAP_REC_PY_CODE), "py_code");
	cr_assert_str_eq(cap_rec_type_name(CAP_REC_CGROUP), "cgroup");
	cr_assert_str_eq(cap_rec_type_name(CAP_REC_TRIGGER), "trigger");
	cr_assert_eq(cap_rec_fixed_size(CAP_REC_TRIGGER), 88);
	cr_assert_null(cap_rec_type_name(19));
	cr_assert_null(cap_rec_type_name(65535));
	cr_assert_str_eq(cap_stop_reason_name(CAP_STOP_MAX_SIZE), "max size");
	cr_assert_str_eq(cap_stop_reason_name(99), "unknown");
	cr_assert_str_eq(cap_trigger_kind_name(CAP_TRIGGER_SIGNAL), "signal");
	cr_assert_str_eq(cap_trigger_kind_name(CAP_TRIGGER_WAIT), "wait");
	cr_assert_str_eq(cap_trigger_kind_name(CAP_TRIGGER_END), "end");
	cr_assert_null(cap_trigger_kind_name(0));
	cr_assert_null(cap_trigger_kind_name(4));
	cr_assert_null(cap_trigger_kind_name(UINT32_MAX));
}

Test(format_errors, open_errors)
{
	char dir[] = "/tmp/stkrec-fmt-XXXXXX", path[64];
	struct cap_reader *r = NULL;
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(cap_reader__open(dir, &r), CAP_ERR_NOT_FILE);
	snprintf(path, sizeof(path), "%s/empty", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	cr_assert_eq(cap_reader__open(path, &r), CAP_ERR_EMPTY);
	cr_assert_eq(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
	close(fd);
	cr_assert_eq(cap_reader__open(path, &r), CAP_ERR_BAD_MAGIC);
	cr_assert_eq(cap_file_version(path, NULL, NULL, NULL), CAP_ERR_BAD_MAGIC);
	unlink(path);
	cr_assert_eq(cap_reader__open(path, &r), -ENOENT);
	cr_assert_eq(cap_reader__open_mem("", 0, &r), CAP_ERR_EMPTY);
	cr_assert_eq(cap_reader__open_mem("\x53\x2a", 2, &r), CAP_ERR_TRUNCATED);
	cr_assert_eq(cap_reader__open_mem("\x28\xb5\x2f\xfd", 4, &r), CAP_ERR_BAD_MAGIC);
	cr_assert_eq(cap_reader__open("/dev/null", &r), CAP_ERR_NOT_FILE);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_eq(cap_reader__open(path, &r), CAP_ERR_NOT_FILE, "a FIFO, without blocking");
	cr_assert_eq(cap_file_version(path, NULL, NULL, NULL), CAP_ERR_NOT_FILE);
	unlink(path);
	cr_assert_null(r);
	rmdir(dir);
}

/* A write(2) stand-in that records what reached "disk" and fails the k-th
 * call (1-based) with ENOSPC, optionally after a short write. */
struct sink {
	uint8_t *buf;
	size_t len, cap;
	int calls, fail_at;
	bool partial;   /* the failing call first writes half */
};

static ssize_t sink_write(int fd, const void *p, size_t len, void *ctx)
{
	struct sink *s = ctx;

	(void)fd;
	s->calls++;
	if (s->calls == s->fail_at && s->partial) {
		s->partial = false;
		s->calls--;
		len = len / 2 ? len / 2 : 1;
	} else if (s->calls >= s->fail_at && s->fail_at) {
		errno = ENOSPC;
		return -1;
	}
	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2;
		s->buf = realloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->len, p, len);
	s->len += len;
	return len;
}

static int run_sink(struct sink *s, struct capgen_info *info)
{
	struct cap_writer_opts wo = { .write_fn = sink_write, .write_ctx = s };
	struct capgen_opts o = { .block_size = 512, .events = 20, .wopts = &wo };
	char path[] = "/tmp/stkrec-fmt-XXXXXX";
	int fd = mkstemp(path), err;

	close(fd);
	err = capgen_write(path, &o, info);
	unlink(path);
	return err;
}

/* before[b]: records (BLOCK records included) in the blocks before block b
 * of the capture in buf; before[nblocks]: all of them. Returns nblocks. */
static unsigned records_before_blocks(const uint8_t *buf, size_t len, uint64_t *before,
				      unsigned max)
{
	struct cap_record rec;
	struct cap_reader *r;
	uint64_t n = 0;
	unsigned b = 0;
	int ret;

	cr_assert_eq(cap_reader__open_mem(buf, len, &r), 0);
	while ((ret = cap_reader__next(r, &rec)) == 1) {
		if (rec.type == CAP_REC_BLOCK) {
			cr_assert_lt(b, max);
			before[b++] = n;
		}
		n++;
	}
	cr_assert_eq(ret, 0);
	before[b] = n;
	cap_reader__close(r);
	return b;
}

Test(format_errors, write_fault_at_every_call)
{
	struct capgen_info info;
	struct capgen_readout ro, full;
	struct sink s = { 0 };
	uint64_t before[64];
	uint8_t *full_buf;
	size_t full_len;
	int k, calls, err, t;
	bool partial;

	cr_assert_eq(run_sink(&s, &info), 0);
	calls = s.calls;
	full_buf = s.buf;
	full_len = s.len;
	cr_assert_eq(capgen_read_mem(full_buf, full_len, &full), 0);
	cr_assert_eq(calls, (int)info.totals.blocks + 2, "header + blocks + trailer");
	/* the reference itself: complete, clean, every record as written */
	cr_assert_eq(full.err, 0);
	cr_assert_eq(full.bad, 0);
	cr_assert_not(full.st.recovered);
	cr_assert_eq(full.records, info.records + info.totals.blocks);
	cr_assert_eq(full.events_seen, (1ull << info.events) - 1);
	cr_assert_eq(records_before_blocks(full_buf, full_len, before, 63), info.totals.blocks);
	for (partial = false; ; partial = true) {
		for (k = 1; k <= calls; k++) {
			memset(&s, 0, sizeof(s));
			s.fail_at = k;
			s.partial = partial;
			err = run_sink(&s, &info);
			cr_assert_eq(err, -ENOSPC, "fault at write %d: %d", k, err);
			if (k == 1 && !s.len) {
				free(s.buf);
				continue;
			}
			/* what reached the disk is the start of the unfaulted file */
			cr_assert_lt(s.len, full_len, "fault at write %d", k);
			cr_assert_eq(memcmp(s.buf, full_buf, s.len), 0, "fault at write %d", k);
			err = capgen_read_mem(s.buf, s.len, &ro);
			if (k == 1) {
				cr_assert_eq(err, CAP_ERR_TRUNCATED);
				free(s.buf);
				continue;
			}
			cr_assert_eq(err, 0, "fault at write %d", k);
			cr_assert_eq(ro.bad, 0);
			cr_assert_eq(ro.st.blocks, (uint64_t)(k - 2), "fault at write %d", k);
			cr_assert(ro.st.recovered);
			cr_assert_eq(ro.st.bad_blocks, 0);
			/* every record of the k - 2 blocks written before the fault, of
			 * the reference's, and no other (the trailer adds none) */
			cr_assert_eq(ro.records, before[k - 2], "fault at write %d", k);
			cr_assert_eq(ro.count[CAP_REC_BLOCK], (uint64_t)(k - 2));
			cr_assert_eq(ro.events_seen & ~full.events_seen, 0);
			for (t = 0; t < 256; t++)
				cr_assert_leq(ro.count[t], full.count[t], "type %d, fault at write %d",
					      t, k);
			if (k == calls) {
				cr_assert_arr_eq(ro.count, full.count, sizeof(full.count));
				cr_assert_eq(ro.events_seen, full.events_seen);
			}
			free(s.buf);
		}
		if (partial)
			break;
	}
	free(full_buf);
}

Test(format_errors, writer_stays_failed)
{
	struct cap_writer_opts wo = { .write_fn = sink_write, .block_size = 256 };
	struct sink s = { .fail_at = 2 };
	struct cap_header h;
	struct cap_writer *w;
	struct cap_cpu cpu;
	int i, err = 0;

	wo.write_ctx = &s;
	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(open("/dev/null", O_WRONLY), &h, &wo, &w), 0);
	capgen_cpu(0, &cpu);
	for (i = 0; i < 20 && !err; i++)
		err = cap_writer__append(w, CAP_REC_CPU, &cpu, sizeof(cpu), NULL, 0);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(cap_writer__append(w, CAP_REC_CPU, &cpu, sizeof(cpu), NULL, 0), -ENOSPC);
	cr_assert_eq(cap_writer__tick(w, UINT64_MAX), -ENOSPC);
	cr_assert_eq(cap_writer__flush(w), -ENOSPC);
	cr_assert_eq(s.calls, 2, "no write after the failure");
	cr_assert_eq(cap_writer__finish(w), -ENOSPC);
	free(s.buf);
}

Test(format_errors, max_size_stops_with_room_for_the_end)
{
	struct cap_writer_opts wo = { .block_size = 4096, .max_size = 20000 };
	struct capgen_readout ro;
	struct cap_header h;
	struct cap_writer *w;
	struct cap_lost l = { 5, CAP_KIND_CPU, CAP_LOST_RINGBUF, 0, 0 };
	struct cap_end end = { .time = 42, .reason = CAP_STOP_MAX_SIZE };
	unsigned i = 0;
	uint8_t *buf;
	size_t len;
	int fd = memfd_create("t", 0), err = 0;

	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(dup(fd), &h, &wo, &w), 0);
	while (!err && i < 100000)
		err = capgen_events(w, i++, 1);
	cr_assert_eq(err, CAP_ERR_FULL);
	cr_assert_gt(i, 50);
	cr_assert_eq(capgen_events(w, i, 1), CAP_ERR_FULL, "FULL is sticky");
	cr_assert_eq(cap_writer__append(w, CAP_REC_LOST, &l, sizeof(l), NULL, 0), 0);
	cr_assert_eq(cap_writer__append(w, CAP_REC_END, &end, sizeof(end), NULL, 0), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
	buf = capgen_slurp_fd(fd, &len);
	cr_assert_leq(len, 20000);
	cr_assert_gt(len, 10000, "the limit is used, not wasted: %zu", len);
	cr_assert_eq(capgen_read_mem(buf, len, &ro), 0);
	cr_assert_not(ro.st.recovered);
	cr_assert(ro.st.has_end);
	cr_assert_eq(ro.st.counted.lost[CAP_KIND_CPU], 5);
	free(buf);
	close(fd);
}
