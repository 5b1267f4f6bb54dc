// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every event in time order, one line each, for grep and awk, with the
 * stack below it like `perf script` (innermost first) or folded on the line:
 *
 *   comm  pid/tid [cpu] seconds.us: offcpu: 1234 us state 0x1
 *   comm  pid/tid [cpu] seconds.us: cpu:
 *   comm  pid/tid [---] seconds.us: bio: 4096 bytes W sda 8:0 sector 2048 lat 150 us
 *   comm  pid/tid [cpu] seconds.us: wakeup: woke comm pid/tid [io sda W 4K]
 *
 * Times are seconds since the capture start: off-CPU at switch-out, CPU at
 * the sample, block I/O at completion, a wakeup when it woke the thread
 * (the line's thread is the waker: "[hardirq] 0/0" for an interrupt; the
 * filters select the thread woken).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"

static int cmp_event(const void *pa, const void *pb)
{
	const struct view_event *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void print_head(const struct report_ctx *ctx, const char *comm, uint32_t pid,
		       uint32_t tid, int64_t cpu, uint64_t time, FILE *out)
{
	char rel[32], ec[VIEW_COMM_ESC], ns[VIEW_NS_MAX];

	view_fmt_reltime(ctx->model, time, rel, sizeof(rel));
	fprintf(out, "%16s %7" PRIu32 "/%-7" PRIu32 "%s ", esc__str(comm, ec, sizeof(ec)), pid,
		tid, view_ns_ids(ctx->model, pid, tid, time, ns));
	if (cpu >= 0)
		fprintf(out, "[%03" PRId64 "] %s: ", cpu, rel);
	else
		fprintf(out, "[---] %s: ", rel);
}

/* One stack line, "\t    %16lx NAME (DSO)\n", built without printf and
 * written at once: these lines are most of the output. */
static void put_frame(const struct rframe *f, FILE *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t nl = strlen(f->name), dl = strlen(f->dso), len;
	char buf[512], *p = buf + 21;
	uint64_t ip = f->ip;

	/* absurdly long names, or names to escape: no hurry */
	if (nl + dl + 26 > sizeof(buf) || !esc__clean(f->name) || !esc__clean(f->dso)) {
		fprintf(out, "\t    %16" PRIx64 " ", f->ip);
		esc__fputs(f->name, out);
		fputs(" (", out);
		esc__fputs(f->dso, out);
		fputs(")\n", out);
		return;
	}
	memcpy(buf, "\t    ", 5);
	memset(buf + 5, ' ', 16);
	do {
		*--p = hex[ip & 0xf];
		ip >>= 4;
	} while (ip && p > buf + 5);
	p = buf + 21;
	*p++ = ' ';
	memcpy(p, f->name, nl);
	p += nl;
	memcpy(p, " (", 2);
	memcpy(p + 2, f->dso, dl);
	p += dl + 2;
	memcpy(p, ")\n", 2);
	len = p + 2 - buf;
	fwrite_unlocked(buf, 1, len, out);
}

static void print_stack(const struct report_ctx *ctx, const struct rframe *fr, int n,
			FILE *out)
{
	int i;

	if (ctx->opts.script_folded) {
		fputc(' ', out);
		for (i = n - 1; i >= 0; i--) {
			esc__fputs(fr[i].name, out);
			putc_unlocked(i ? ';' : '\n', out);
		}
		if (!n)
			putc_unlocked('\n', out);
		return;
	}
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		if (ctx->opts.srcline && fr[i].srcfile) {
			fprintf(out, "\t    %16" PRIx64 " ", fr[i].ip);
			esc__fputs(fr[i].name, out);
			fputc(' ', out);
			esc__fputs(fr[i].srcfile, out);
			fprintf(out, ":%d (", fr[i].line);
			esc__fputs(fr[i].dso, out);
			fputs(")\n", out);
		} else
			put_frame(&fr[i], out);
	}
	if (n)
		fputc('\n', out);
}

/* A wait the recording did not see whole (FORMAT.md §4.11): its start
 * is before the capture's (":start"; "?" when the kernel did not say when
 * it began, so the start is when the recorder found it), or it was still
 * open at the end. */
static const char *open_mark(uint32_t open)
{
	static const char *const marks[8] = {
		"", " open:start", " open:end", " open:both",
		"", " open:start?", " open:end", " open:both?",
	};

	return marks[open & 7];
}

static int print_sampled(const struct report_ctx *ctx, const struct view_event *e,
			 struct rframe *fr, FILE *out)
{
	const struct model *m = ctx->model;
	struct view_evinfo ev;
	size_t nev;
	int n;

	view_event_info(ctx, e, &ev);
	print_head(ctx, model__comm_name(m, ev.comm), ev.pid, ev.tid, ev.cpu, ev.start, out);
	if (e->kind == CAP_KIND_OFFCPU) {
		const struct cap_offcpu *off = model__offcpu(m, &nev) + e->idx;

		fprintf(out, "offcpu: %" PRIu64 " us state 0x%" PRIx32 "%s",
			view_ns_to_us(off->duration), off->state, open_mark(off->open));
		view_put_cgroup(m, off->cgroup, out);
	} else {
		fputs("cpu:", out);
		view_put_cgroup(m, (model__cpu(m, &nev) + e->idx)->cgroup, out);
	}
	n = view_frames(ctx, ev.pid, ev.start, ev.ustack, ev.kstack, fr, NULL);
	if (n < 0)
		return n;
	print_stack(ctx, fr, n, out);
	return 0;
}

/* The completion line, then the submitter's stacks where recorded. */
static int print_bio(const struct report_ctx *ctx, const struct view_event *s,
		     struct rframe *fr, FILE *out)
{
	const struct model *m = ctx->model;
	const struct filter *f = ctx->filter;
	static const char ops[] = "RWFD?";
	size_t nev;
	const struct cap_bio *b = model__bio(m, &nev) + s->idx;
	const char *disk = model__blockdev(m, b->major, b->minor);
	uint64_t lat = b->complete_time > b->issue_time ? b->complete_time - b->issue_time : 0;
	int n;

	print_head(ctx, model__comm_name(m, model__bio_comms(m)[s->idx]), b->pid, b->tid, -1,
		   s->time, out);
	fprintf(out, "bio: %" PRIu32 " bytes %c %s %" PRIu32 ":%" PRIu32 " sector %" PRIu64
		" lat %" PRIu64 " us",
		b->bytes, ops[b->op < 4 ? b->op : 4], disk ? disk : "?", b->major, b->minor,
		b->sector, view_ns_to_us(lat));
	if (b->error)
		fprintf(out, " error %" PRId32, b->error);
	view_put_cgroup(m, b->cgroup, out);
	if (!b->ustack && !b->kstack) {
		fputc('\n', out);
		return 0;
	}
	n = view_frames(ctx, b->pid, b->issue_time, filter__ustack(f, b->ustack),
			filter__kstack(f, b->kstack), fr, NULL);
	if (n < 0)
		return n;
	print_stack(ctx, fr, n, out);
	return 0;
}

/* The waker's line, then its stacks. */
static int print_wakeup(const struct report_ctx *ctx, const struct view_event *s,
			struct rframe *fr, FILE *out)
{
	const struct model *m = ctx->model;
	size_t nev;
	const struct cap_wakeup *w = model__wakeups(m, &nev) + s->idx;
	const struct cap_bio *b;
	char label[48], ns[VIEW_NS_MAX];
	int n, nk;

	print_head(ctx, view_waker_comm(ctx, w), w->waker_pid, w->waker_tid, w->cpu, s->time, out);
	fputs("wakeup: woke ", out);
	esc__fputs(model__comm_name(m, model__comm_id(m, w->tid, w->time)), out);
	fprintf(out, " %" PRIu32 "/%" PRIu32 "%s", w->pid, w->tid,
		view_ns_ids(m, w->pid, w->tid, w->time, ns));
	view_put_cgroup(m, w->cgroup, out);
	n = view_waker_frames(ctx, w, fr, &nk);
	if (n < 0)
		return n;
	b = view_wake_bio(ctx, w, fr, nk);
	if (b) {
		view_bio_label(ctx, b, label, sizeof(label));
		fprintf(out, " [io %s]", label);
	}
	print_stack(ctx, fr, n, out);
	return 0;
}

int view_script(struct report_ctx *ctx, FILE *out)
{
	struct view_event *v = NULL;
	struct rframe *fr;
	size_t i, n = 0;
	int err;

	fr = malloc(VIEW_MAX_FRAMES * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	err = view_events(ctx, VIEW_EVENTS_ALL, &v, &n);
	if (!err)
		qsort(v, n, sizeof(*v), cmp_event);
	for (i = 0; !err && i < n; i++) {
		if (v[i].kind == CAP_KIND_BIO)
			err = print_bio(ctx, &v[i], fr, out);
		else if (v[i].kind == CAP_KIND_WAKEUP)
			err = print_wakeup(ctx, &v[i], fr, out);
		else
			err = print_sampled(ctx, &v[i], fr, out);
	}
	free(v);
	free(fr);
	return err;
}
