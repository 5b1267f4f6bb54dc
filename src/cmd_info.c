// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec info: describe a capture without symbolizing it. Reads every
 * block (so the counts are what is really in the file, not what the trailer
 * claims) and says plainly when the capture was damaged or cut short.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "format/capture.h"
#include "report/views.h"
#include "src/commands.h"
#include "src/info_cgroups.h"
#include "src/info_trigger.h"
#include "src/input.h"
#include "src/log.h"
#include "src/report_cli.h"
#include "src/util.h"
#include "util/escape.h"
#include "util/hashtab.h"

#define INFO_REFUSED_MAX 16 /* refused JIT maps named; the rest counted */

/* A thread's name: its latest THREAD record (a process's: its main
 * thread's, tid == pid). */
struct info_comm {
	uint32_t tid;
	char comm[17];
};

struct info {
	const char *path;
	const struct cap_header *hdr;
	const struct cap_read_stats *st;
	const struct cap_lost_detail *lost;
	uint64_t end_time;      /* END time, else the latest event time seen */
	struct cap_end end;     /* the END record, if has_end */
	uint64_t types[CAP_REC_END + 1]; /* records read per type */
	struct cap_loss lost_split; /* events lost, stacks missed (events kept) */
	uint32_t stat_id[CAP_STAT_MAX]; /* STRING id of each known key, 0 unseen */
	uint64_t stat[CAP_STAT_MAX];    /* STAT values of known keys */
	/* by class: events no program ran for; requests not seen ending */
	uint64_t not_run[CAP_STAT_INCOMPLETE + 1];
	char loss[512];
	/* the symbol pack (FORMAT.md §4.18): its summary and its raw bytes,
	 * the STRINGs after its first record included */
	struct cap_pack_info pack;
	bool has_pack, has_pack_info;
	uint64_t pack_bytes;
	/* JIT maps refused (§4.15): their keys' STRING ids, which process, why */
	uint32_t refusal_id[CAP_JIT_REFUSED_MAX];
	struct {
		uint32_t pid;
		int why;
	} refused[INFO_REFUSED_MAX];
	size_t nrefused;
	struct hashtab comms; /* of struct info_comm */
	struct info_cgroups cgroups;
	struct info_trigger trigger;
};

/* Definition records worth counting in the summary. */
static const unsigned short def_types[] = {
	CAP_REC_STRING, CAP_REC_STACK, CAP_REC_THREAD, CAP_REC_FORK, CAP_REC_MAPPING,
	CAP_REC_KMOD, CAP_REC_KSYM, CAP_REC_BLOCKDEV, CAP_REC_STAT,
};
#define NR_DEF_TYPES (sizeof(def_types) / sizeof(def_types[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: stkrec info [-h] [--json] [-i] FILE\n\n"
		"Describe a capture: host, kernel, recorded command, time span, events\n"
		"and losses per kind, blocks, sizes, and whether it had to be recovered.\n\n"
		"Options:\n"
		"  -i, --input FILE  capture to describe (or give it as the argument);\n"
		"                    '-': standard input, read once (a file named '-': ./-)\n"
		"  -j, --json        print one JSON object instead of text\n"
		"  -h, --help        show this help\n\n"
		"Exit status: 0 complete capture, 3 read but damaged or truncated\n"
		"(the loss is described), 4 unreadable, 2 bad usage.\n\n"
		"Examples:\n"
		"  stkrec info capture.stkrec           # human-readable summary\n"
		"  stkrec info --json capture.stkrec    # for scripts: jq .events.offcpu\n"
		"  stkrec info -i /tmp/killed.stkrec || echo \"status $?\"\n"
		"  ssh prod stkrec record -o - -d 10 | stkrec info -\n");
}

/* Latest monotonic time an event record carries (used when END is gone). */
static uint64_t record_time(const struct cap_record *rec)
{
	switch (rec->type) {
	case CAP_REC_OFFCPU:
		return rec->offcpu.start + rec->offcpu.duration;
	case CAP_REC_CPU:
		return rec->cpu.time;
	case CAP_REC_BIO:
		return rec->bio.complete_time;
	case CAP_REC_END:
		return rec->end.time;
	default:
		return 0;
	}
}

static bool comm_eq(const void *ent, const void *key)
{
	return ((const struct info_comm *)ent)->tid == *(const uint32_t *)key;
}

static void scan_comm(struct info *in, const struct cap_thread *t)
{
	struct info_comm *c;

	if (hashtab__upsert(&in->comms, hashtab__mix(t->tid), &t->tid, comm_eq, (void **)&c) < 0)
		return; /* no memory: the thread goes unnamed */
	c->tid = t->tid;
	memcpy(c->comm, t->comm, sizeof(t->comm));
	c->comm[sizeof(t->comm)] = '\0'; /* a name of 16 bytes has no NUL */
}

/* The name of thread tid, NULL when no THREAD record names it. */
static const char *comm_of(const struct info *in, uint32_t tid)
{
	const struct info_comm *c = hashtab__find(&in->comms, hashtab__mix(tid), &tid, comm_eq);

	return c ? c->comm : NULL;
}

/* A refused JIT map's STAT record (§4.15): its value is the pid. */
static bool scan_refused(struct info *in, const struct cap_record *rec)
{
	int k;

	for (k = 0; k < CAP_JIT_REFUSED_MAX; k++) {
		if (!in->refusal_id[k] || rec->stat.key_id != in->refusal_id[k])
			continue;
		if (in->nrefused < INFO_REFUSED_MAX) {
			in->refused[in->nrefused].pid = rec->stat.value;
			in->refused[in->nrefused++].why = k;
		}
		return true;
	}
	return false;
}

static void scan_stat(struct info *in, const struct cap_record *rec)
{
	int k;

	if (rec->type == CAP_REC_THREAD)
		scan_comm(in, &rec->thread);
	if (rec->type == CAP_REC_STRING) {
		k = cap_stat_key_of(rec->tail);
		if (k >= 0)
			in->stat_id[k] = rec->string.id;
		k = cap_jit_refusal_of(rec->tail);
		if (k >= 0)
			in->refusal_id[k] = rec->string.id;
		return;
	}
	if (rec->type != CAP_REC_STAT || scan_refused(in, rec))
		return;
	for (k = 0; k < CAP_STAT_MAX; k++) {
		if (in->stat_id[k] && rec->stat.key_id == in->stat_id[k]) {
			in->stat[k] += rec->stat.value;
			in->not_run[cap_stat_classify(cap_stat_key_name(k))] += rec->stat.value;
		}
	}
}

static bool is_pack_record(uint16_t type)
{
	return type >= CAP_REC_PACK_OBJECT && type <= CAP_REC_PACK_INFO;
}

static void scan_pack(struct info *in, const struct cap_record *rec)
{
	if (is_pack_record(rec->type))
		in->has_pack = true;
	if (in->has_pack && (is_pack_record(rec->type) || rec->type == CAP_REC_STRING))
		in->pack_bytes += rec->size;
	if (rec->type == CAP_REC_PACK_INFO && !in->has_pack_info) {
		in->pack = rec->pack_info;
		in->has_pack_info = true;
	}
}

static int scan(struct cap_reader *r, struct info *in)
{
	struct cap_record rec;
	uint64_t t, latest = 0;
	int ret;

	while ((ret = cap_reader__next(r, &rec)) == 1) {
		t = record_time(&rec);
		if (t > latest)
			latest = t;
		if (rec.type == CAP_REC_END)
			in->end = rec.end;
		scan_stat(in, &rec);
		scan_pack(in, &rec);
		info_cgroups__add(&in->cgroups, &rec);
		info_trigger__add(&in->trigger, &rec);
	}
	if (ret < 0)
		return ret;
	in->st = cap_reader__stats(r);
	in->lost = cap_reader__lost_detail(r);
	for (t = 0; t <= CAP_REC_END; t++)
		in->types[t] = cap_reader__type_count(r, t);
	cap_loss__split(in->lost, &in->lost_split);
	in->end_time = in->st->has_end ? in->st->counted.end_time : latest;
	if (in->end_time < in->hdr->start_time)
		in->end_time = in->hdr->start_time;
	cap_reader__describe_loss(r, in->loss, sizeof(in->loss));
	return 0;
}

static double ratio(const struct cap_read_stats *st)
{
	return st->file_size ? (double)st->bytes_raw / st->file_size : 0;
}

static double per_event(const struct cap_read_stats *st)
{
	uint64_t n = st->counted.events[CAP_KIND_OFFCPU] + st->counted.events[CAP_KIND_CPU] +
		     st->counted.events[CAP_KIND_BIO];

	return n ? (double)st->file_size / n : 0;
}

static void print_defs_text(const struct info *in)
{
	size_t i;

	printf("definitions:  ");
	for (i = 0; i < NR_DEF_TYPES; i++)
		printf("%s %" PRIu64 "%s", cap_rec_type_name(def_types[i]),
		       in->types[def_types[i]], i + 1 < NR_DEF_TYPES ? ", " : "\n");
}

static void print_stop_text(const struct info *in)
{
	const struct cap_end *e = &in->end;

	if (!in->st->has_end) {
		printf("stopped:      unknown (no END record)\n");
		return;
	}
	printf("stopped:      %s", cap_stop_reason_name(e->reason));
	if (e->reason == CAP_STOP_ERROR)
		printf(" (%s)", cap_strerror(e->error));
	if (e->status >= 0)
		printf(", command exit status %d", e->status);
	printf("\n");
}

static void print_lost_text(const struct info *in, int kind)
{
	const char *sep = " (";
	int reason;

	printf("%s %" PRIu64, cap_kind_name(kind), in->lost_split.events[kind]);
	for (reason = 0; reason < CAP_LOST_MAX; reason++) {
		if (!in->lost->count[kind][reason] || reason == CAP_LOST_USTACK ||
		    reason == CAP_LOST_KSTACK)
			continue;
		printf("%s%s %" PRIu64, sep, cap_lost_reason_name(reason),
		       in->lost->count[kind][reason]);
		sep = ", ";
	}
	printf("%s", *sep == ',' ? ")" : "");
}

static uint64_t total_lost(const struct info *in)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < CAP_KIND_MAX; k++)
		n += in->lost_split.events[k];
	return n;
}

static bool dwarf_mode(const struct info *in)
{
	return in->hdr->features & CAP_FEAT_DWARF_UNWIND;
}

/* The stacks threads' kept walks gave again (bpf/unwind.bpf.h, kstack.bpf.h). */
static void print_kept_text(const struct info *in)
{
	const uint64_t *s = in->stat;

	printf("kept walks:   stacks the thread's last walk gave again, exact: user offcpu %" PRIu64
	       ", wakeup %" PRIu64 "; kernel offcpu %" PRIu64 ", wakeup %" PRIu64 "\n",
	       s[CAP_STAT_UNWIND_CACHED_OFFCPU], s[CAP_STAT_UNWIND_CACHED_WAKEUP],
	       s[CAP_STAT_KSTACK_CACHED_OFFCPU], s[CAP_STAT_KSTACK_CACHED_WAKEUP]);
}

/* How user stacks were walked and, for dwarf, what the unwinder could not
 * do: stacks it ended early, events before their process had tables. */
static void print_unwind_text(const struct info *in)
{
	const uint64_t *s = in->stat;

	if (!dwarf_mode(in)) {
		printf("call graph:   fp (user stacks from frame pointers)\n");
		print_kept_text(in);
		return;
	}
	printf("call graph:   dwarf (user stacks unwound in the kernel from .eh_frame)\n");
	printf("unwinding:    truncated offcpu %" PRIu64 ", cpu %" PRIu64 ", bio %" PRIu64
	       "; frame pointers before tables: offcpu %" PRIu64 ", cpu %" PRIu64 ", bio %"
	       PRIu64 "; for some frames (JIT, anonymous, CFI-less or not yet mapped code): offcpu %"
	       PRIu64 ", cpu %" PRIu64 ", bio %" PRIu64 "\n",
	       s[CAP_STAT_UNWIND_TRUNC_OFFCPU], s[CAP_STAT_UNWIND_TRUNC_CPU],
	       s[CAP_STAT_UNWIND_TRUNC_BIO], s[CAP_STAT_UNWIND_NO_TABLES_OFFCPU],
	       s[CAP_STAT_UNWIND_NO_TABLES_CPU], s[CAP_STAT_UNWIND_NO_TABLES_BIO],
	       s[CAP_STAT_UNWIND_FP_FRAMES_OFFCPU], s[CAP_STAT_UNWIND_FP_FRAMES_CPU],
	       s[CAP_STAT_UNWIND_FP_FRAMES_BIO]);
	print_kept_text(in);
	printf("unwind tables: %" PRIu64 " files, %" PRIu64 " rows; %" PRIu64 " files without "
	       "CFI, %" PRIu64 " not loaded (table full)\n", s[CAP_STAT_UNWIND_FILES],
	       s[CAP_STAT_UNWIND_ROWS], s[CAP_STAT_UNWIND_FILES_FAILED], s[CAP_STAT_UNWIND_FULL]);
}

/* Python frames (FORMAT.md §4.24): the processes read, and every stack
 * whose Python part is not whole. */
static void print_python_text(const struct info *in)
{
	const uint64_t *s = in->stat;

	if (!(in->hdr->features & CAP_FEAT_PYTHON))
		return;
	printf("python:       %" PRIu64 " processes, %" PRIu64 " of a version not read "
	       "(native frames only); %" PRIu64 " code objects\n", s[CAP_STAT_PY_PROCESSES],
	       s[CAP_STAT_PY_UNSUPPORTED], in->types[CAP_REC_PY_CODE]);
	printf("python stacks cut: offcpu %" PRIu64 ", cpu %" PRIu64 ", bio %" PRIu64
	       ", wakeup %" PRIu64 "; frames whose code was not read %" PRIu64
	       "; stacks over %d frames %" PRIu64 "\n", s[CAP_STAT_PY_CUT_OFFCPU],
	       s[CAP_STAT_PY_CUT_CPU], s[CAP_STAT_PY_CUT_BIO], s[CAP_STAT_PY_CUT_WAKEUP],
	       s[CAP_STAT_PY_CODES_UNREAD], CAP_MAX_STACK_DEPTH, s[CAP_STAT_PY_TOO_DEEP]);
}

/* Records counted as read; what only the summary knows from PACK_INFO. */
static void print_pack_text(const struct info *in)
{
	const struct cap_pack_info *k = &in->pack;

	if (!in->has_pack) {
		printf("symbol pack:  none: frames are named only where the binaries are "
		       "('stkrec pack' adds one)\n");
		return;
	}
	printf("symbol pack:  %" PRIu64 " binaries, %" PRIu64 " symbols, %" PRIu64
	       " addresses, %" PRIu64 " JIT entries, %" PRIu64 " bytes uncompressed",
	       in->types[CAP_REC_PACK_OBJECT], in->types[CAP_REC_PACK_SYMBOL],
	       in->types[CAP_REC_PACK_ADDR], in->types[CAP_REC_PACK_JIT], in->pack_bytes);
	if (in->has_pack_info)
		printf("; %" PRIu64 " addresses unnamed, %" PRIu64 " binaries not found, %"
		       PRIu64 " JIT maps, %" PRIu64 " left out (bounds, size limit)\n", k->unnamed,
		       k->objects_missing, k->jit_maps, k->left_out);
	else
		printf("; no PACK_INFO: the pack is incomplete\n");
}

/* "label value\n", the value escaped (a capture's strings are others'). */
static void print_field(const char *label, const char *value)
{
	fputs(label, stdout);
	esc__fputs(value, stdout);
	fputc('\n', stdout);
}

/* How CPU samples were taken (FORMAT.md §3.1, 1.3): "cpu-clock at 99 Hz",
 * "cpu-clock every 250000 ns"; nothing when the capture does not say. */
static void print_sampling(const struct cap_header *h, bool json)
{
	const char *clock = cap_clock_name(h->sample_clock);
	bool freq = h->sample_flags & CAP_SAMPLE_FREQ;

	if (h->sample_clock == CAP_CLOCK_NONE)
		return;
	if (json)
		printf("\"sampling\":{\"clock\":\"%s\",\"%s\":%" PRIu64 "},",
		       clock ? clock : "unknown", freq ? "frequency_hz" : "period_ns",
		       h->sample_rate);
	else
		printf("sampling:     %s %s %" PRIu64 " %s\n", clock ? clock : "unknown clock",
		       freq ? "at" : "every", h->sample_rate, freq ? "Hz" : "ns");
}

/* JIT maps the recorder did not trust: which process, and why. */
static void print_refused_text(const struct info *in)
{
	uint64_t n = in->stat[CAP_STAT_JIT_MAPS_REFUSED];
	const char *comm;
	size_t i;

	if (!n && !in->nrefused)
		return;
	printf("JIT maps refused: %" PRIu64 " (their names are not in the capture)\n",
	       n > in->nrefused ? n : in->nrefused);
	for (i = 0; i < in->nrefused; i++) {
		comm = comm_of(in, in->refused[i].pid);
		printf("  pid %u (", in->refused[i].pid);
		esc__fputs(comm ? comm : "?", stdout);
		printf("): /tmp/perf-%u.map %s\n", in->refused[i].pid,
		       cap_jit_refusal_text(in->refused[i].why));
	}
}

static void print_text(const struct info *in)
{
	const struct cap_header *h = in->hdr;
	const struct cap_read_stats *st = in->st;
	char start[48], end[48];
	int k;

	fmt_walltime(h, h->start_time, start, sizeof(start));
	fmt_walltime(h, in->end_time, end, sizeof(end));
	print_field("capture:      ", in->path);
	printf("format:       %u.%u, written by stkrec ", h->major, h->minor);
	esc__fputs(h->version[0] ? h->version : "?", stdout);
	printf(" (pid %u)\n", h->recorder_pid);
	print_field("host:         ", h->hostname);
	info_trigger__print_text(&in->trigger, h, comm_of(in, in->trigger.t.tid));
	print_field("kernel:       ", h->release);
	print_field("arch:         ", h->machine);
	printf("cpus:         %u\n", h->ncpus);
	print_field("command:      ", h->cmdline);
	if (h->features & CAP_FEAT_SCRUBBED)
		printf("scrubbed:     yes (stkrec scrub): kernel addresses are offsets from _stext, "
		       "hostname and recorded command removed%s\n",
		       h->features & CAP_FEAT_SCRUBBED_PATHS ?
		       ", home directories replaced (" CAP_SCRUB_HOME ", " CAP_SCRUB_ROOT ")" : "");
	print_sampling(h, false);
	printf("start:        %s\n", start);
	printf("end:          %s%s\n", end, st->has_end ? "" : " (last event; no END record)");
	printf("duration:     %.3f s\n", (in->end_time - h->start_time) / 1e9);
	printf("events:       offcpu %" PRIu64 ", cpu %" PRIu64 ", bio %" PRIu64 ", wakeup %"
	       PRIu64 "\n", st->counted.events[CAP_KIND_OFFCPU], st->counted.events[CAP_KIND_CPU],
	       st->counted.events[CAP_KIND_BIO], st->counted.events[CAP_KIND_WAKEUP]);
	printf("lost events:  ");
	for (k = 0; k < CAP_KIND_MAX; k++) {
		print_lost_text(in, k);
		printf("%s", k + 1 < CAP_KIND_MAX ? ", " : "\n");
	}
	if (total_lost(in))
		printf("WARNING:      %" PRIu64 " events lost while recording: counts and "
		       "profiles undercount\n", total_lost(in));
	if (in->not_run[CAP_STAT_NOT_RUN])
		printf("WARNING:      %" PRIu64 " events not recorded: the kernel did not run "
		       "the recorder's program (bpf.skipped.*, bpf.untraced.*, "
		       "bio.missed_completions)\n",
		       in->not_run[CAP_STAT_NOT_RUN]);
	if (in->not_run[CAP_STAT_INCOMPLETE])
		printf("WARNING:      %" PRIu64 " block requests not seen completing: in flight "
		       "at the end, or not recorded (bio.incomplete)\n",
		       in->not_run[CAP_STAT_INCOMPLETE]);
	printf("stacks missed: user %" PRIu64 ", kernel %" PRIu64 " (events kept)\n",
	       in->lost_split.stacks_missed[0], in->lost_split.stacks_missed[1]);
	print_unwind_text(in);
	print_python_text(in);
	print_pack_text(in);
	print_refused_text(in);
	info_cgroups__print_text(&in->cgroups);
	print_defs_text(in);
	print_stop_text(in);
	printf("blocks:       %" PRIu64 "\n", st->blocks);
	printf("file bytes:   %" PRIu64 "\n", st->file_size);
	printf("uncompressed: %" PRIu64 " bytes (compression ratio %.1f, %.1f bytes/event)\n",
	       st->bytes_raw, ratio(st), per_event(st));
	if (st->recovered)
		printf("status:       RECOVERED: %s\n", in->loss);
	else
		printf("status:       complete\n");
}

static void json_str(const char *key, const char *s, const char *after)
{
	printf("\"%s\":\"", key);
	view_json_chars(stdout, s);
	printf("\"%s", after);
}

static void json_kinds(const char *key, const uint64_t *v, int n)
{
	int k;

	printf("\"%s\":{", key);
	for (k = 0; k < n; k++)
		printf("\"%s\":%" PRIu64 "%s", cap_kind_name(k), v[k], k + 1 < n ? "," : "");
	printf("},");
}

/* The event kinds (all but the side band, which has lost counts only). */
static void json_events(const uint64_t *v)
{
	printf("\"events\":{\"offcpu\":%" PRIu64 ",\"cpu\":%" PRIu64 ",\"bio\":%" PRIu64
	       ",\"wakeup\":%" PRIu64 "},", v[CAP_KIND_OFFCPU], v[CAP_KIND_CPU], v[CAP_KIND_BIO],
	       v[CAP_KIND_WAKEUP]);
}

static void json_lost_reasons(const struct info *in)
{
	int k, reason;
	const char *sep;

	printf("\"lost_reasons\":{");
	for (k = 0; k < CAP_KIND_MAX; k++) {
		printf("\"%s\":{", cap_kind_name(k));
		sep = "";
		for (reason = 0; reason < CAP_LOST_MAX; reason++) {
			if (!in->lost->count[k][reason])
				continue;
			printf("%s\"%s\":%" PRIu64, sep, cap_lost_reason_name(reason),
			       in->lost->count[k][reason]);
			sep = ",";
		}
		printf("}%s", k + 1 < CAP_KIND_MAX ? "," : "},");
	}
}

static void json_defs(const struct info *in)
{
	size_t i;

	printf("\"definitions\":{");
	for (i = 0; i < NR_DEF_TYPES; i++)
		printf("\"%s\":%" PRIu64 "%s", cap_rec_type_name(def_types[i]),
		       in->types[def_types[i]], i + 1 < NR_DEF_TYPES ? "," : "},");
}

static void json_pack(const struct info *in)
{
	const struct cap_pack_info *k = &in->pack;

	if (!in->has_pack) {
		printf("\"pack\":null,");
		return;
	}
	printf("\"pack\":{\"binaries\":%" PRIu64 ",\"symbols\":%" PRIu64 ",\"addresses\":%"
	       PRIu64 ",\"jit_entries\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"complete\":%s,"
	       "\"unnamed\":%" PRIu64 ",\"binaries_missing\":%" PRIu64 ",\"jit_maps\":%" PRIu64
	       ",\"left_out\":%" PRIu64 "},", in->types[CAP_REC_PACK_OBJECT],
	       in->types[CAP_REC_PACK_SYMBOL], in->types[CAP_REC_PACK_ADDR],
	       in->types[CAP_REC_PACK_JIT], in->pack_bytes, in->has_pack_info ? "true" : "false",
	       k->unnamed, k->objects_missing, k->jit_maps, k->left_out);
}

static void print_json(const struct info *in)
{
	const struct cap_header *h = in->hdr;
	const struct cap_read_stats *st = in->st;
	char start[48], end[48], ver[16];

	fmt_walltime(h, h->start_time, start, sizeof(start));
	fmt_walltime(h, in->end_time, end, sizeof(end));
	snprintf(ver, sizeof(ver), "%u.%u", h->major, h->minor);
	printf("{");
	json_str("file", in->path, ",");
	json_str("version", ver, ",");
	json_str("stkrec_version", h->version, ",");
	json_str("host", h->hostname, ",");
	info_trigger__print_json(&in->trigger, comm_of(in, in->trigger.t.tid));
	json_str("kernel", h->release, ",");
	json_str("arch", h->machine, ",");
	printf("\"cpus\":%u,\"page_size\":%u,\"recorder_pid\":%u,", h->ncpus, h->page_size,
	       h->recorder_pid);
	json_str("cmdline", h->cmdline, ",");
	print_sampling(h, true);
	json_str("start", start, ",");
	json_str("end", end, ",");
	printf("\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"duration_s\":%.6f,",
	       h->start_time, in->end_time, (in->end_time - h->start_time) / 1e9);
	json_events(st->counted.events);
	json_kinds("lost", in->lost_split.events, CAP_KIND_MAX);
	json_lost_reasons(in);
	printf("\"stacks_missed\":{\"user\":%" PRIu64 ",\"kernel\":%" PRIu64 "},",
	       in->lost_split.stacks_missed[0], in->lost_split.stacks_missed[1]);
	printf("\"not_run\":%" PRIu64 ",\"bio_incomplete\":%" PRIu64 ",", in->not_run[CAP_STAT_NOT_RUN],
	       in->not_run[CAP_STAT_INCOMPLETE]);
	json_str("call_graph", dwarf_mode(in) ? "dwarf" : "fp", ",");
	json_kinds("unwind_truncated", &in->stat[CAP_STAT_UNWIND_TRUNC_OFFCPU], CAP_KIND_BIO + 1);
	json_kinds("unwind_no_tables", &in->stat[CAP_STAT_UNWIND_NO_TABLES_OFFCPU],
		   CAP_KIND_BIO + 1);
	json_kinds("unwind_fp_frames", &in->stat[CAP_STAT_UNWIND_FP_FRAMES_OFFCPU],
		   CAP_KIND_BIO + 1);
	printf("\"unwind_cached\":{\"offcpu\":%" PRIu64 ",\"wakeup\":%" PRIu64 "},",
	       in->stat[CAP_STAT_UNWIND_CACHED_OFFCPU], in->stat[CAP_STAT_UNWIND_CACHED_WAKEUP]);
	printf("\"kstack_cached\":{\"offcpu\":%" PRIu64 ",\"wakeup\":%" PRIu64 "},",
	       in->stat[CAP_STAT_KSTACK_CACHED_OFFCPU], in->stat[CAP_STAT_KSTACK_CACHED_WAKEUP]);
	json_defs(in);
	json_pack(in);
	info_cgroups__print_json(&in->cgroups);
	if (in->st->has_end)
		printf("\"stop_reason\":\"%s\",\"exit_status\":%d,",
		       cap_stop_reason_name(in->end.reason), in->end.status);
	printf("\"records\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64
	       ",\"bytes_uncompressed\":%" PRIu64 ",\"compression_ratio\":%.2f,"
	       "\"bytes_per_event\":%.2f,", st->counted.records, st->blocks, st->file_size,
	       st->bytes_raw, ratio(st), per_event(st));
	printf("\"has_trailer\":%s,\"has_end\":%s,\"bad_blocks\":%" PRIu64
	       ",\"truncated_at\":%" PRIu64 ",\"recovered\":%s,",
	       st->has_trailer ? "true" : "false", st->has_end ? "true" : "false",
	       st->bad_blocks, st->truncated_at, st->recovered ? "true" : "false");
	json_str("loss", st->recovered ? in->loss : "", "}\n");
}

static int parse_args(int argc, char **argv, const char **path, bool *json)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char name[8];
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:i:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			*path = optarg;
			break;
		case 'j':
			*json = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			log_usage_error("info", "option '%s' requires a value",
					opt_name(optopt, argv[optind - 1], name, sizeof(name)));
			return -1;
		default:
			log_usage_error("info", "unknown option '%s'",
					opt_name(optopt, argv[optind - 1], name, sizeof(name)));
			return -1;
		}
	}
	return report_one_input("info", argc, argv, path) ? -1 : 0;
}

/* The capture described, its name in in->path: 0, or the exit code. */
static int describe(struct input *src, struct info *in, bool json)
{
	struct cap_reader *r;
	int err;

	err = input__reader(src, &r);
	if (err) {
		log_capture_error(src->name, src->stream, err);
		return EXIT_UNREADABLE;
	}
	in->hdr = cap_reader__header(r);
	err = scan(r, in);
	if (err) {
		log_error("%s: %s", in->path, cap_strerror(err));
		cap_reader__close(r);
		return EXIT_FAIL;
	}
	if (json)
		print_json(in);
	else
		print_text(in);
	if (in->st->recovered)
		log_warn("%s: capture recovered with loss: %s", in->path, in->loss);
	err = in->st->recovered ? EXIT_RECOVERED : EXIT_OK;
	cap_reader__close(r);
	return err;
}

int cmd_info(int argc, char **argv)
{
	struct info in = { 0 };
	struct input src;
	bool json = false;
	int err;

	err = parse_args(argc, argv, &in.path, &json);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	err = input__open(&src, "info", in.path);
	if (err)
		return err;
	in.path = src.name;
	hashtab__init(&in.comms, sizeof(struct info_comm));
	info_cgroups__init(&in.cgroups);
	err = describe(&src, &in, json);
	input__close(&src);
	hashtab__free(&in.comms);
	info_cgroups__free(&in.cgroups);
	return err;
}
