// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * biotop replayed from the capture: block I/O completions in intervals of
 * capture time (counted from the capture start), one table per interval
 * with BCC biotop's columns, rows by bytes. D is R (read), W (write),
 * F (flush), D (discard) or ? (other).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "report/views_int.h"
#include "util/array.h"

#define NS_PER_S 1000000000ull
#define BIOTOP_MAX_EMPTY 100000

struct bio_row {
	uint32_t pid, comm, major, minor;
	uint8_t op;
	uint64_t io, bytes, lat_ns;
};

struct biotop {
	const struct report_ctx *ctx;
	const struct cap_bio *bio;
	const uint32_t *comms;
	uint32_t *order;        /* filtered events by completion time */
	size_t n;
	struct bio_row *rows;
	size_t nrows, cap;
	struct idmap idx;
};

static char op_letter(uint8_t op)
{
	static const char letters[] = "RWFD";

	return op < 4 ? letters[op] : '?';
}

static int cmp_order(const void *pa, const void *pb, void *ctx)
{
	const struct cap_bio *bio = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (bio[a].complete_time != bio[b].complete_time)
		return bio[a].complete_time < bio[b].complete_time ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int cmp_row(const void *pa, const void *pb, void *ctx)
{
	const struct bio_row *a = pa, *b = pb;
	const struct model *m = ctx;
	int c;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->io != b->io)
		return a->io > b->io ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	c = strcmp(model__comm_name(m, a->comm), model__comm_name(m, b->comm));
	if (c)
		return c;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	return a->minor < b->minor ? -1 : a->minor > b->minor;
}

static int select_events(struct biotop *bt)
{
	const struct model *m = bt->ctx->model;
	size_t i, n;

	bt->bio = model__bio(m, &n);
	bt->comms = model__bio_comms(m);
	bt->order = malloc((n ? n : 1) * sizeof(*bt->order));
	if (!bt->order)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct cap_bio *b = &bt->bio[i];

		if (filter__task(bt->ctx->filter, m, b->pid, b->tid, bt->comms[i],
				 b->cgroup, b->complete_time))
			bt->order[bt->n++] = i;
	}
	qsort_r(bt->order, bt->n, sizeof(*bt->order), cmp_order, (void *)bt->bio);
	return 0;
}

static int add_row(struct biotop *bt, uint32_t i)
{
	const struct cap_bio *b = &bt->bio[i];
	uint8_t op = b->op < CAP_BIO_OTHER ? b->op : CAP_BIO_OTHER;
	struct bio_row *r;
	uint64_t *slot;
	int ret;

	ret = idmap__upsert(&bt->idx, (uint64_t)b->pid << 32 | b->major,
			    (uint64_t)b->minor << 32 | bt->comms[i] << 3 | op, bt->nrows, &slot);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		struct bio_row row = { .pid = b->pid, .comm = bt->comms[i],
			.major = b->major, .minor = b->minor, .op = op };

		if (ARRAY_PUSH(bt->rows, bt->nrows, bt->cap, row))
			return -ENOMEM;
	}
	r = &bt->rows[*slot];
	r->io++;
	r->bytes += b->bytes;
	if (b->complete_time > b->issue_time)
		r->lat_ns += b->complete_time - b->issue_time;
	return 0;
}

static void print_table(struct biotop *bt, uint64_t end, FILE *out)
{
	const struct model *m = bt->ctx->model;
	uint32_t max = bt->ctx->opts.max_rows ? bt->ctx->opts.max_rows : 20;
	int64_t real = (int64_t)end + model__header(m)->clock_offset;
	time_t t = real / (int64_t)NS_PER_S;
	char when[16], rel[32], ec[VIEW_COMM_ESC];
	const char *disk;
	struct tm tm;
	size_t i;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	view_fmt_reltime(m, end, rel, sizeof(rel));
	fprintf(out, "\n%-8s (capture time %s s)\n", when, rel);
	fprintf(out, "%-6s %-16s %1s %-3s %-3s %-8s %5s %7s %6s\n", "PID", "COMM",
		"D", "MAJ", "MIN", "DISK", "I/O", "Kbytes", "AVGms");
	if (bt->nrows)
		qsort_r(bt->rows, bt->nrows, sizeof(*bt->rows), cmp_row, (void *)m);
	for (i = 0; i < bt->nrows && i < max; i++) {
		const struct bio_row *r = &bt->rows[i];

		disk = model__blockdev(m, r->major, r->minor);
		fprintf(out, "%-6" PRIu32 " %-16s %c %-3" PRIu32 " %-3" PRIu32
			" %-8s %5" PRIu64 " %7" PRIu64 " %6.2f\n",
			r->pid, esc__str(model__comm_name(m, r->comm), ec, sizeof(ec)),
			op_letter(r->op), r->major,
			r->minor, disk ? disk : "?", r->io, r->bytes / 1024,
			(double)r->lat_ns / r->io / 1e6);
	}
}

static int replay(struct biotop *bt, FILE *out)
{
	const struct model *m = bt->ctx->model;
	const struct filter *f = bt->ctx->filter;
	uint64_t iv = bt->ctx->opts.interval_ns ? bt->ctx->opts.interval_ns : NS_PER_S;
	uint64_t start = model__header(m)->start_time, last = model__last_time(m);
	uint64_t k, kend, printed = 0;
	bool sparse;
	size_t j = 0;
	int err;

	if (bt->n && bt->bio[bt->order[bt->n - 1]].complete_time > last)
		last = bt->bio[bt->order[bt->n - 1]].complete_time;
	if (f->t_hi < last)
		last = f->t_hi;
	k = f->t_lo > start ? (f->t_lo - start) / iv : 0;
	kend = last > start ? (last - start - 1) / iv : 0; /* its interval ends at last */
	/* A long, mostly idle capture (or a hostile time stamp) would print
	 * millions of empty tables: then only intervals with I/O are shown. */
	sparse = kend - k > BIOTOP_MAX_EMPTY;
	/* events stamped before the capture start land in the first interval */
	for (; k <= kend; k++) {
		uint64_t hi, next;

		if (sparse) {
			if (j == bt->n)
				break;
			next = bt->bio[bt->order[j]].complete_time;
			if (next > start && (next - start) / iv > k)
				k = (next - start) / iv;
		}
		hi = start + (k + 1) * iv;

		bt->nrows = 0;
		idmap__fini(&bt->idx);
		for (; j < bt->n && bt->bio[bt->order[j]].complete_time < hi; j++) {
			err = add_row(bt, bt->order[j]);
			if (err)
				return err;
		}
		print_table(bt, hi, out);
		if (bt->ctx->opts.count && ++printed >= bt->ctx->opts.count)
			break;
	}
	return 0;
}

int view_biotop(struct report_ctx *ctx, FILE *out)
{
	struct biotop bt = { .ctx = ctx };
	int err = 0;

	if (filter__kind(ctx->filter, CAP_KIND_BIO)) {
		err = select_events(&bt);
		if (!err)
			err = replay(&bt, out);
	}
	free(bt.order);
	free(bt.rows);
	idmap__fini(&bt.idx);
	return err;
}
