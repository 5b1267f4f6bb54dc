// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Aggregation and frame helpers shared by the views. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"
#include "util/array.h"

void agg__fini(struct agg *a)
{
	free(a->g);
	idmap__fini(&a->idx);
	memset(a, 0, sizeof(*a));
}

static int agg_add(struct agg *a, const struct agg_group *key, uint64_t value,
		   uint64_t time, uint32_t tid, uint32_t comm)
{
	struct agg_group *g;
	uint64_t *slot;
	int ret;

	ret = idmap__upsert(&a->idx, (uint64_t)key->pid << 32 | key->comm,
			    (uint64_t)key->ustack << 32 | key->kstack, a->n, &slot);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		if (ARRAY_RESERVE(a->g, a->cap, a->n + 1))
			return -ENOMEM;
		g = &a->g[a->n++];
		*g = *key;
		g->first_time = time;
		g->max_time = time;
		g->max_tid = tid;
		g->max_comm = comm;
	} else {
		g = &a->g[*slot];
	}
	g->count++;
	g->total += value;
	if (value > g->max) {
		g->max = value;
		g->max_time = time;
		g->max_tid = tid;
		g->max_comm = comm;
	}
	return 0;
}

static int collect_offcpu(struct agg *a, const struct report_ctx *ctx, unsigned flags)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	const struct cap_offcpu *e;
	struct agg_group key = { 0 };
	size_t i, n;
	uint32_t comm;
	int err;

	e = model__offcpu(m, &n);
	for (i = 0; i < n; i++, e++) {
		comm = model__comm_id(m, e->tid, e->start);
		if (!filter__offcpu(f, m, e, comm))
			continue;
		key.pid = e->pid;
		key.comm = (flags & AGG_ANY_COMM) ? 0 : comm;
		key.ustack = filter__ustack(f, e->ustack);
		key.kstack = filter__kstack(f, e->kstack);
		err = agg_add(a, &key, e->duration, e->start, e->tid, comm);
		if (err)
			return err;
	}
	return 0;
}

static int collect_cpu(struct agg *a, const struct report_ctx *ctx, unsigned flags)
{
	const struct filter *f = ctx->filter;
	const struct model *m = ctx->model;
	const struct cap_cpu *e;
	struct agg_group key = { 0 };
	size_t i, n;
	uint32_t comm;
	int err;

	e = model__cpu(m, &n);
	for (i = 0; i < n; i++, e++) {
		comm = model__comm_id(m, e->tid, e->time);
		if (!filter__task(f, m, e->pid, e->tid, comm, e->time))
			continue;
		key.pid = e->pid;
		key.comm = (flags & AGG_ANY_COMM) ? 0 : comm;
		key.ustack = filter__ustack(f, e->ustack);
		key.kstack = filter__kstack(f, e->kstack);
		err = agg_add(a, &key, 1, e->time, e->tid, comm);
		if (err)
			return err;
	}
	return 0;
}

int agg__collect(struct agg *a, const struct report_ctx *ctx, enum cap_kind kind,
		 unsigned flags)
{
	if (kind == CAP_KIND_OFFCPU)
		return collect_offcpu(a, ctx, flags);
	if (kind == CAP_KIND_CPU)
		return collect_cpu(a, ctx, flags);
	return -EINVAL;
}

int view_frames(const struct report_ctx *ctx, uint32_t pid, uint64_t time,
		uint32_t ustack, uint32_t kstack, struct rframe *buf, int *nkernel)
{
	int nk, nu;

	nk = resolver__kernel(ctx->res, kstack, buf, RESOLVE_MAX_FRAMES);
	if (nk < 0)
		return nk;
	nu = resolver__user(ctx->res, pid, time, ustack, buf + nk, RESOLVE_MAX_FRAMES);
	if (nu < 0)
		return nu;
	if (nkernel)
		*nkernel = nk;
	return nk + nu;
}

const char *view_srcline(const struct report_ctx *ctx, const char *file, int line, char *buf)
{
	const char *base;

	if (!ctx->opts.srcline || !file || !*file)
		return "";
	base = strrchr(file, '/');
	base = base && base[1] ? base + 1 : file;
	if (line > 0)
		snprintf(buf, VIEW_SRCLINE_MAX, " %s:%d", base, line);
	else
		snprintf(buf, VIEW_SRCLINE_MAX, " %s", base);
	return buf;
}

void view_fmt_reltime(const struct model *m, uint64_t t, char *buf, size_t len)
{
	uint64_t start = model__header(m)->start_time, d;

	if (t >= start) {
		d = t - start;
		snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, d / 1000000000,
			 d % 1000000000 / 1000);
	} else {
		d = start - t;
		snprintf(buf, len, "-%" PRIu64 ".%06" PRIu64, d / 1000000000,
			 d % 1000000000 / 1000);
	}
}

void view_fmt_walltime(const struct model *m, uint64_t t, char *buf, size_t len)
{
	filter_fmt_iso((int64_t)t + model__header(m)->clock_offset, buf, len);
}

void view_json_chars(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}
