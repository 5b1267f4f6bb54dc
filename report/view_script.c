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

struct sev {
	uint64_t time;
	uint32_t idx;
	uint8_t kind;
};

static int cmp_sev(const void *pa, const void *pb)
{
	const struct sev *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int collect(const struct report_ctx *ctx, struct sev **out, size_t *nout)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	size_t i, n0, n1, n2, k = 0;
	const struct cap_offcpu *off = model__offcpu(m, &n0);
	const struct cap_cpu *cpu = model__cpu(m, &n1);
	const struct cap_bio *bio = model__bio(m, &n2);
	const uint32_t *bcomm = model__bio_comms(m);
	size_t n3;
	const struct cap_wakeup *w = model__wakeups(m, &n3);
	struct sev *v;

	v = malloc((n0 + n1 + n2 + n3 + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; filter__kind(f, CAP_KIND_OFFCPU) && i < n0; i++) {
		if (filter__offcpu(f, m, &off[i], model__comm_id(m, off[i].tid, off[i].start)))
			v[k++] = (struct sev){ off[i].start, i, CAP_KIND_OFFCPU };
	}
	for (i = 0; filter__kind(f, CAP_KIND_CPU) && i < n1; i++) {
		if (filter__task(f, m, cpu[i].pid, cpu[i].tid,
				 model__comm_id(m, cpu[i].tid, cpu[i].time), cpu[i].time))
			v[k++] = (struct sev){ cpu[i].time, i, CAP_KIND_CPU };
	}
	for (i = 0; filter__kind(f, CAP_KIND_BIO) && i < n2; i++) {
		if (filter__task(f, m, bio[i].pid, bio[i].tid, bcomm[i], bio[i].complete_time))
			v[k++] = (struct sev){ bio[i].complete_time, i, CAP_KIND_BIO };
	}
	for (i = 0; filter__kind(f, CAP_KIND_WAKEUP) && i < n3; i++) {
		if (filter__task(f, m, w[i].pid, w[i].tid, model__comm_id(m, w[i].tid, w[i].time),
				 w[i].time))
			v[k++] = (struct sev){ w[i].time, i, CAP_KIND_WAKEUP };
	}
	qsort(v, k, sizeof(*v), cmp_sev);
	*out = v;
	*nout = k;
	return 0;
}

static void print_head(const struct report_ctx *ctx, const char *comm, uint32_t pid,
		       uint32_t tid, int64_t cpu, uint64_t time, FILE *out)
{
	char rel[32];

	view_fmt_reltime(ctx->model, time, rel, sizeof(rel));
	fprintf(out, "%16s %7" PRIu32 "/%-7" PRIu32 " ", comm, pid, tid);
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

	if (nl + dl + 26 > sizeof(buf)) { /* absurdly long names: no hurry */
		fprintf(out, "\t    %16" PRIx64 " %s (%s)\n", f->ip, f->name, f->dso);
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
			fputs_unlocked(fr[i].name, out);
			putc_unlocked(i ? ';' : '\n', out);
		}
		if (!n)
			putc_unlocked('\n', out);
		return;
	}
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		if (ctx->opts.srcline && fr[i].srcfile)
			fprintf(out, "\t    %16" PRIx64 " %s %s:%d (%s)\n", fr[i].ip, fr[i].name,
				fr[i].srcfile, fr[i].line, fr[i].dso);
		else
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

static int print_sampled(const struct report_ctx *ctx, const struct sev *s,
			 struct rframe *fr, FILE *out)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	const struct cap_offcpu *off = NULL;
	uint32_t pid, tid, us, ks, cpu;
	size_t nev;
	int n;

	if (s->kind == CAP_KIND_OFFCPU) {
		off = model__offcpu(m, &nev) + s->idx;
		pid = off->pid, tid = off->tid, cpu = off->cpu;
		us = off->ustack, ks = off->kstack;
	} else {
		const struct cap_cpu *e = model__cpu(m, &nev) + s->idx;

		pid = e->pid, tid = e->tid, cpu = e->cpu, us = e->ustack, ks = e->kstack;
	}
	print_head(ctx, model__comm_name(m, model__comm_id(m, tid, s->time)), pid, tid,
		   cpu, s->time, out);
	if (off)
		fprintf(out, "offcpu: %" PRIu64 " us state 0x%" PRIx32 "%s",
			view_ns_to_us(off->duration), off->state, open_mark(off->open));
	else
		fputs("cpu:", out);
	n = view_frames(ctx, pid, s->time, filter__ustack(f, us), filter__kstack(f, ks), fr, NULL);
	if (n < 0)
		return n;
	print_stack(ctx, fr, n, out);
	return 0;
}

/* The completion line, then the submitter's stacks where recorded. */
static int print_bio(const struct report_ctx *ctx, const struct sev *s, struct rframe *fr,
		     FILE *out)
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
static int print_wakeup(const struct report_ctx *ctx, const struct sev *s, struct rframe *fr,
			FILE *out)
{
	const struct model *m = ctx->model;
	size_t nev;
	const struct cap_wakeup *w = model__wakeups(m, &nev) + s->idx;
	const struct cap_bio *b;
	char label[48];
	int n, nk;

	print_head(ctx, view_waker_comm(ctx, w), w->waker_pid, w->waker_tid, w->cpu, s->time, out);
	fprintf(out, "wakeup: woke %s %" PRIu32 "/%" PRIu32,
		model__comm_name(m, model__comm_id(m, w->tid, w->time)), w->pid, w->tid);
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
	struct sev *v = NULL;
	struct rframe *fr;
	size_t i, n = 0;
	int err;

	fr = malloc(VIEW_MAX_FRAMES * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	err = collect(ctx, &v, &n);
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
