// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Error strings, names and the per-type tables of FORMAT.md §4, plus the
 * CRC-32 of §3 and §6. Every on-disk struct size is asserted here: a change
 * that moves a field fails the build instead of silently changing the format.
 */
#include <stddef.h>
#include <string.h>
#include <zlib.h>
#include "format/capture.h"
#include "format/internal.h"

_Static_assert(sizeof(struct cap_rec_hdr) == 4, "§4.0");
_Static_assert(sizeof(struct cap_block) == 16, "§4.1");
_Static_assert(sizeof(struct cap_string) == 8, "§4.2");
_Static_assert(sizeof(struct cap_stack) == 8, "§4.3");
_Static_assert(sizeof(struct cap_thread) == 48, "§4.4");
_Static_assert(offsetof(struct cap_thread, ns_tid) == CAP_THREAD_SIZE_1_4, "§4.4");
_Static_assert(sizeof(struct cap_fork) == 24, "§4.5");
_Static_assert(sizeof(struct cap_mapping) == 72, "§4.6");
_Static_assert(sizeof(struct cap_kernel) == 64, "§4.7");
_Static_assert(sizeof(struct cap_kmod) == 40, "§4.8");
_Static_assert(sizeof(struct cap_ksym) == 24, "§4.9");
_Static_assert(sizeof(struct cap_blockdev) == 40, "§4.10");
_Static_assert(sizeof(struct cap_pack_object) == 32, "§4.19");
_Static_assert(sizeof(struct cap_pack_symbol) == 32, "§4.19");
_Static_assert(sizeof(struct cap_pack_addr) == 24, "§4.20");
_Static_assert(sizeof(struct cap_pack_frame) == 12, "§4.20");
_Static_assert(sizeof(struct cap_pack_jit) == 32, "§4.21");
_Static_assert(sizeof(struct cap_py_code) == 20, "§4.24");
_Static_assert(sizeof(struct cap_pack_info) == 64, "§4.22");
_Static_assert(offsetof(struct cap_pack_object, build_id) == 12, "§4.19");
_Static_assert(sizeof(struct cap_offcpu) == 56, "§4.11");
_Static_assert(offsetof(struct cap_offcpu, cgroup) == CAP_OFFCPU_SIZE_1_4, "§4.11");
_Static_assert(sizeof(struct cap_cpu) == 40, "§4.12");
_Static_assert(offsetof(struct cap_cpu, cgroup) == CAP_CPU_SIZE_1_4, "§4.12");
_Static_assert(sizeof(struct cap_bio) == 88, "§4.13");
_Static_assert(offsetof(struct cap_bio, cgroup) == CAP_BIO_SIZE_1_4, "§4.13");
_Static_assert(offsetof(struct cap_bio, ustack) == CAP_BIO_SIZE_1_0, "§4.13");
_Static_assert(sizeof(struct cap_lost) == 24, "§4.14");
_Static_assert(sizeof(struct cap_stat) == 16, "§4.15");
_Static_assert(sizeof(struct cap_end) == 24, "§4.16");
_Static_assert(CAP_KIND_SIDEBAND == 3 && CAP_KIND_WAKEUP == 4, "§5.5: the trailer's order");
_Static_assert(sizeof(struct cap_file_header) == 312, "§3.1");
_Static_assert(offsetof(struct cap_file_header, sample_clock) == CAP_HEADER_FIXED_1_2, "§3.1");
_Static_assert(offsetof(struct cap_file_header, hostname) == 64, "§3.1");
_Static_assert(offsetof(struct cap_file_header, cmdline_len) + 4 ==
	       CAP_HEADER_MIN_FIXED, "§3.1");
_Static_assert(sizeof(struct cap_trailer_hdr) == 144, "§6.1");
_Static_assert(offsetof(struct cap_trailer_hdr, events_wakeup) == CAP_TRAILER_SIZE_1_1, "§6.1");
_Static_assert(sizeof(struct cap_wakeup) == 80, "§4.23");
_Static_assert(offsetof(struct cap_wakeup, cgroup) == CAP_WAKEUP_SIZE_1_4, "§4.23");
_Static_assert(sizeof(struct cap_cgroup) == 24, "§4.25");
_Static_assert(sizeof(struct cap_trigger) == 88, "§4.26");
_Static_assert(offsetof(struct cap_trigger, kind) == 56, "§4.26");
_Static_assert(sizeof(struct cap_index_entry) == 32, "§6.2");
_Static_assert(sizeof(struct cap_footer) == 16, "§6.3");
_Static_assert(offsetof(struct cap_mapping, build_id) == 48, "§4.6");
_Static_assert(offsetof(struct cap_bio, comm) == 52, "§4.13");
/* the reader copies up to the largest fixed part into cap_record's union */
_Static_assert(offsetof(struct cap_record, tail) - offsetof(struct cap_record, block) >=
	       sizeof(struct cap_bio), "cap_record union too small");
_Static_assert(sizeof(struct cap_bio) >= sizeof(struct cap_mapping), "largest record");
_Static_assert(sizeof(struct cap_bio) >= sizeof(struct cap_pack_info), "largest record");

static const char *const err_text[] = {
	[1] = "not a stkrec capture (bad magic)",
	[2] = "capture format version is newer than this stkrec",
	[3] = "capture uses an unknown incompatible feature",
	[4] = "capture header is truncated",
	[5] = "capture structure is corrupt",
	[6] = "a size in the capture exceeds a limit",
	[7] = "block checksum mismatch",
	[8] = "zstd (de)compression failed",
	[9] = "capture file is empty",
	[10] = "not a regular file",
	[11] = "record too short for its type",
	[12] = "invalid argument",
	[13] = "capture reached its maximum size",
};

const char *cap_strerror(int err)
{
	int idx = -err - CAP_ERR_BASE;

	if (err == 0)
		return "success";
	if (err < 0 && idx > 0 && idx < (int)(sizeof(err_text) / sizeof(err_text[0])))
		return err_text[idx];
	if (err < 0 && -err < CAP_ERR_BASE)
		return strerror(-err);
	return "unknown error";
}

const char *cap_kind_name(enum cap_kind kind)
{
	static const char *const names[CAP_KIND_MAX] = {
		"offcpu", "cpu", "bio", "sideband", "wakeup",
	};

	if ((unsigned)kind < CAP_KIND_MAX)
		return names[kind];
	return "unknown";
}

const char *cap_lost_reason_name(enum cap_lost_reason reason)
{
	static const char *const names[CAP_LOST_MAX] = {
		"ringbuf full", "user stack", "kernel stack", "side band",
		"state table full", "file full",
	};

	if ((unsigned)reason < CAP_LOST_MAX)
		return names[reason];
	return "unknown";
}

/* §4.15: one entry per enum cap_stat_key, in its order. */
static const struct {
	const char *key;
	enum cap_stat_class class;
} stat_keys[CAP_STAT_MAX] = {
	[CAP_STAT_EVENTS_OFFCPU] = { "events.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_EVENTS_CPU] = { "events.cpu", CAP_STAT_COUNT },
	[CAP_STAT_EVENTS_BIO] = { "events.bio", CAP_STAT_COUNT },
	[CAP_STAT_STACKS] = { "stacks", CAP_STAT_COUNT },
	[CAP_STAT_STRINGS] = { "strings", CAP_STAT_COUNT },
	[CAP_STAT_THREADS] = { "threads", CAP_STAT_COUNT },
	[CAP_STAT_RINGBUF_SIZE] = { "ringbuf_size", CAP_STAT_COUNT },
	[CAP_STAT_BAD_RINGBUF_RECORDS] = { "bad_ringbuf_records", CAP_STAT_COUNT },
	[CAP_STAT_MAPS_UNREADABLE] = { "maps_unreadable", CAP_STAT_COUNT },
	[CAP_STAT_SIDEBAND_LOST] = { "sideband_lost", CAP_STAT_COUNT },
	[CAP_STAT_BIO_UNSEEN] = { "bio.unseen_completions", CAP_STAT_COUNT },
	[CAP_STAT_BIO_FILTERED] = { "bio.filtered_completions", CAP_STAT_COUNT },
	[CAP_STAT_DURATION_NS] = { "duration_ns", CAP_STAT_COUNT },
	[CAP_STAT_BYTES_RAW] = { "bytes_raw", CAP_STAT_COUNT },
	[CAP_STAT_SKIPPED_OFFCPU] = { "bpf.skipped.offcpu", CAP_STAT_NOT_RUN },
	[CAP_STAT_SKIPPED_CPU] = { "bpf.skipped.cpu", CAP_STAT_NOT_RUN },
	[CAP_STAT_SKIPPED_BIO] = { "bpf.skipped.bio", CAP_STAT_NOT_RUN },
	[CAP_STAT_BIO_MISSED] = { "bio.missed_completions", CAP_STAT_NOT_RUN },
	[CAP_STAT_BIO_INCOMPLETE] = { "bio.incomplete", CAP_STAT_INCOMPLETE },
	[CAP_STAT_UNWIND_TRUNC_OFFCPU] = { "unwind.truncated.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_TRUNC_CPU] = { "unwind.truncated.cpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_TRUNC_BIO] = { "unwind.truncated.bio", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_NO_TABLES_OFFCPU] = { "unwind.no_tables.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_NO_TABLES_CPU] = { "unwind.no_tables.cpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_NO_TABLES_BIO] = { "unwind.no_tables.bio", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_FP_FRAMES_OFFCPU] = { "unwind.fp_frames.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_FP_FRAMES_CPU] = { "unwind.fp_frames.cpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_FP_FRAMES_BIO] = { "unwind.fp_frames.bio", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_FILES] = { "unwind.files", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_FILES_FAILED] = { "unwind.files_without_cfi", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_ROWS] = { "unwind.rows", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_FULL] = { "unwind.files_not_loaded", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_MAPS_DROPPED] = { "unwind.maps_dropped", CAP_STAT_COUNT },
	[CAP_STAT_EVENTS_WAKEUP] = { "events.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_SKIPPED_WAKEUP] = { "bpf.skipped.wakeup", CAP_STAT_NOT_RUN },
	[CAP_STAT_UNWIND_TRUNC_WAKEUP] = { "unwind.truncated.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_NO_TABLES_WAKEUP] = { "unwind.no_tables.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_FP_FRAMES_WAKEUP] = { "unwind.fp_frames.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_JIT_MAPS_REFUSED] = { "jit.maps_refused", CAP_STAT_COUNT },
	[CAP_STAT_PY_PROCESSES] = { "py.processes", CAP_STAT_COUNT },
	[CAP_STAT_PY_UNSUPPORTED] = { "py.unsupported", CAP_STAT_COUNT },
	[CAP_STAT_PY_CODES_UNREAD] = { "py.codes_unread", CAP_STAT_COUNT },
	[CAP_STAT_PY_CUT_OFFCPU] = { "py.cut.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_PY_CUT_CPU] = { "py.cut.cpu", CAP_STAT_COUNT },
	[CAP_STAT_PY_CUT_BIO] = { "py.cut.bio", CAP_STAT_COUNT },
	[CAP_STAT_PY_CUT_WAKEUP] = { "py.cut.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_PY_TOO_DEEP] = { "py.stacks_too_deep", CAP_STAT_COUNT },
	[CAP_STAT_CGROUP_FILTERED_OFFCPU] = { "cgroup.filtered.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_CGROUP_FILTERED_CPU] = { "cgroup.filtered.cpu", CAP_STAT_COUNT },
	[CAP_STAT_CGROUP_FILTERED_WAKEUP] = { "cgroup.filtered.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_CGROUPS_UNNAMED] = { "cgroups.unnamed", CAP_STAT_COUNT },
	[CAP_STAT_UNTRACED_OFFCPU] = { "bpf.untraced.offcpu", CAP_STAT_NOT_RUN },
	[CAP_STAT_RECOVERED_OFFCPU] = { "bpf.recovered.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_CACHED_OFFCPU] = { "unwind.cached.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_UNWIND_CACHED_WAKEUP] = { "unwind.cached.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_KSTACK_CACHED_OFFCPU] = { "kstack.cached.offcpu", CAP_STAT_COUNT },
	[CAP_STAT_KSTACK_CACHED_WAKEUP] = { "kstack.cached.wakeup", CAP_STAT_COUNT },
	[CAP_STAT_UNTRACED_WAKEUP] = { "bpf.untraced.wakeup", CAP_STAT_NOT_RUN },
};

/* §4.15: the keys of refused JIT maps, and why. */
static const struct {
	const char *key;
	const char *text;
} jit_refusals[CAP_JIT_REFUSED_MAX] = {
	[CAP_JIT_REFUSED_NOT_REGULAR] = { "jit.refused.not_regular",
					  "a symlink or not a regular file" },
	[CAP_JIT_REFUSED_OWNER] = { "jit.refused.owner",
				    "owned by neither the process's user nor root" },
};

const char *cap_jit_refusal_key(enum cap_jit_refusal why)
{
	return (unsigned)why < CAP_JIT_REFUSED_MAX ? jit_refusals[why].key : NULL;
}

const char *cap_jit_refusal_text(enum cap_jit_refusal why)
{
	return (unsigned)why < CAP_JIT_REFUSED_MAX ? jit_refusals[why].text : NULL;
}

int cap_jit_refusal_of(const char *key)
{
	int k;

	for (k = 0; key && k < CAP_JIT_REFUSED_MAX; k++)
		if (!strcmp(key, jit_refusals[k].key))
			return k;
	return -1;
}

const char *cap_stat_key_name(enum cap_stat_key k)
{
	return (unsigned)k < CAP_STAT_MAX ? stat_keys[k].key : NULL;
}

int cap_stat_key_of(const char *key)
{
	int k;

	for (k = 0; key && k < CAP_STAT_MAX; k++)
		if (!strcmp(key, stat_keys[k].key))
			return k;
	return -1;
}

enum cap_stat_class cap_stat_classify(const char *key)
{
	int k = cap_stat_key_of(key);

	return k < 0 ? CAP_STAT_COUNT : stat_keys[k].class;
}

void cap_loss__split(const struct cap_lost_detail *d, struct cap_loss *out)
{
	int k, r;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < CAP_KIND_MAX; k++) {
		for (r = 0; r < CAP_LOST_MAX; r++) {
			if (r == CAP_LOST_USTACK || r == CAP_LOST_KSTACK)
				out->stacks_missed[r == CAP_LOST_KSTACK] += d->count[k][r];
			else
				out->events[k] += d->count[k][r];
		}
	}
}

const char *cap_stop_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		"signal", "duration", "command exited", "error", "max size",
		"output switched",
	};

	if (reason < sizeof(names) / sizeof(names[0]))
		return names[reason];
	return "unknown";
}

const char *cap_trigger_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[CAP_TRIGGER_SIGNAL] = "signal",
		[CAP_TRIGGER_WAIT] = "wait",
		[CAP_TRIGGER_END] = "end",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}

const char *cap_clock_name(uint32_t clock)
{
	return clock == CAP_CLOCK_CPU ? "cpu-clock" : NULL;
}

uint64_t cap_sample_period(uint32_t flags, uint64_t rate)
{
	if (!(flags & CAP_SAMPLE_FREQ))
		return rate;
	return rate ? (1000000000ull + rate / 2) / rate : 0;
}

/* Per type: name, fixed size, offset of its time field (-1: none), and
 * the event kind it counts as (-1: none). Indexed by enum cap_rec_type. */
struct type_info {
	const char *name;
	uint32_t size;
	int time_off;
	int kind;
	uint32_t min_size; /* an older writer's shorter record, 0: size */
};

static const struct type_info types[] = {
	[CAP_REC_BLOCK] = { "block", sizeof(struct cap_block), -1, -1 },
	[CAP_REC_STRING] = { "string", sizeof(struct cap_string), -1, -1 },
	[CAP_REC_STACK] = { "stack", sizeof(struct cap_stack), -1, -1 },
	[CAP_REC_THREAD] = { "thread", sizeof(struct cap_thread),
			     offsetof(struct cap_thread, time), -1, CAP_THREAD_SIZE_1_4 },
	[CAP_REC_FORK] = { "fork", sizeof(struct cap_fork),
			   offsetof(struct cap_fork, time), -1 },
	[CAP_REC_MAPPING] = { "mapping", sizeof(struct cap_mapping),
			      offsetof(struct cap_mapping, time), -1 },
	[CAP_REC_KERNEL] = { "kernel", sizeof(struct cap_kernel), -1, -1, CAP_KERNEL_SIZE_1_1 },
	[CAP_REC_KMOD] = { "kmod", sizeof(struct cap_kmod), -1, -1 },
	[CAP_REC_KSYM] = { "ksym", sizeof(struct cap_ksym), -1, -1 },
	[CAP_REC_BLOCKDEV] = { "blockdev", sizeof(struct cap_blockdev), -1, -1 },
	[CAP_REC_PACK_OBJECT] = { "pack_object", sizeof(struct cap_pack_object), -1, -1 },
	[CAP_REC_PACK_SYMBOL] = { "pack_symbol", sizeof(struct cap_pack_symbol), -1, -1 },
	[CAP_REC_PACK_ADDR] = { "pack_addr", sizeof(struct cap_pack_addr), -1, -1 },
	[CAP_REC_PACK_JIT] = { "pack_jit", sizeof(struct cap_pack_jit), -1, -1 },
	[CAP_REC_PACK_INFO] = { "pack_info", sizeof(struct cap_pack_info), -1, -1 },
	[CAP_REC_PY_CODE] = { "py_code", sizeof(struct cap_py_code), -1, -1 },
	[CAP_REC_CGROUP] = { "cgroup", sizeof(struct cap_cgroup),
			     offsetof(struct cap_cgroup, time), -1 },
	[CAP_REC_TRIGGER] = { "trigger", sizeof(struct cap_trigger),
			      offsetof(struct cap_trigger, time), -1 },
	[CAP_REC_OFFCPU] = { "offcpu", sizeof(struct cap_offcpu),
			     offsetof(struct cap_offcpu, start), CAP_KIND_OFFCPU,
			     CAP_OFFCPU_SIZE_1_1 },
	[CAP_REC_CPU] = { "cpu", sizeof(struct cap_cpu),
			  offsetof(struct cap_cpu, time), CAP_KIND_CPU, CAP_CPU_SIZE_1_4 },
	[CAP_REC_BIO] = { "bio", sizeof(struct cap_bio),
			  offsetof(struct cap_bio, issue_time), CAP_KIND_BIO, CAP_BIO_SIZE_1_0 },
	[CAP_REC_LOST] = { "lost", sizeof(struct cap_lost), -1, -1 },
	[CAP_REC_STAT] = { "stat", sizeof(struct cap_stat), -1, -1 },
	[CAP_REC_END] = { "end", sizeof(struct cap_end),
			  offsetof(struct cap_end, time), -1 },
	[CAP_REC_WAKEUP] = { "wakeup", sizeof(struct cap_wakeup),
			     offsetof(struct cap_wakeup, time), CAP_KIND_WAKEUP,
			     CAP_WAKEUP_SIZE_1_4 },
};

static const struct type_info *type_info(uint16_t type)
{
	if (type >= sizeof(types) / sizeof(types[0]) || !types[type].name)
		return NULL;
	return &types[type];
}

const char *cap_rec_type_name(uint16_t type)
{
	const struct type_info *t = type_info(type);

	return t ? t->name : NULL;
}

uint32_t cap__fixed_size(uint16_t type)
{
	const struct type_info *t = type_info(type);

	return t ? t->size : 0;
}

size_t cap_rec_fixed_size(uint16_t type)
{
	return cap__fixed_size(type);
}

uint32_t cap__min_size(uint16_t type)
{
	const struct type_info *t = type_info(type);

	return t ? (t->min_size ? t->min_size : t->size) : 0;
}

int cap__time_offset(uint16_t type)
{
	const struct type_info *t = type_info(type);

	return t ? t->time_off : -1;
}

int cap__event_kind(uint16_t type)
{
	const struct type_info *t = type_info(type);

	return t ? t->kind : -1;
}

/* §6.1: the trailer header's totals from the writer's, and back (the
 * fields a 1.1 trailer lacks, past fixed_size, read as 0). */
void cap__totals_to_trailer(const struct cap_totals *t, struct cap_trailer_hdr *th)
{
	memcpy(th->events, t->events, sizeof(th->events));
	memcpy(th->lost, t->lost, sizeof(th->lost));
	th->records = t->records;
	th->blocks = t->blocks;
	th->end_time = t->end_time;
	th->bytes_raw = t->bytes_raw;
	th->bytes_file = t->bytes_file;
	th->events_wakeup = t->events[CAP_KIND_WAKEUP];
	th->lost_wakeup = t->lost[CAP_KIND_WAKEUP];
}

void cap__totals_from_trailer(const struct cap_trailer_hdr *th, struct cap_totals *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->events, th->events, sizeof(th->events));
	memcpy(t->lost, th->lost, sizeof(th->lost));
	t->records = th->records;
	t->blocks = th->blocks;
	t->end_time = th->end_time;
	t->bytes_raw = th->bytes_raw;
	t->bytes_file = th->bytes_file;
	t->events[CAP_KIND_WAKEUP] = th->events_wakeup;
	t->lost[CAP_KIND_WAKEUP] = th->lost_wakeup;
}

/* zlib's CRC-32 (reflected, polynomial 0xEDB88320), size_t lengths. */
uint32_t cap_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_z(crc, buf, len);
}
