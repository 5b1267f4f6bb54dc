// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The default view, laid out like `perf report --stdio --no-children`: a
 * header describing the capture (and any loss, prominently), then per event
 * kind a table of self overhead by the innermost frame; off-CPU rows by
 * where the threads waited instead (the wait's site outside the scheduler,
 * and the user function), as the innermost frame of every wait is the
 * scheduler's. Off-CPU rows weigh by blocked time (the part the recording
 * saw), CPU rows by samples, block I/O rows by bytes per command and
 * device. -g draws the callers of each row as perf's graph (absolute
 * percentages). Ties sort by the row's keys, so output is deterministic.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"
#include "util/array.h"

#define GRAPH_PREFIX_MAX 4096
#define GRAPH_LABEL_MAX 1024

static const char *const col_names[SORT_MAX] = { "Command", "Pid", "Shared Object", "Symbol",
						 "Wait site", "User symbol", "Cgroup",
						 "Container" };

struct prow {
	uint32_t grp, comm, pid;
	uint64_t cgroup;
	bool kernel, wkernel;
	bool kthread;         /* a kernel thread's, without user frames */
	const char *dso, *sym;
	const char *wait;     /* the wait's site (view_wait_site()) */
	const char *usym;     /* the user function (view_user_site()) */
	const char *src;      /* source file of sym's line (--srcline), or NULL */
	int line;
	uint64_t weight;
};

struct pentry {
	size_t first, n;
	uint64_t weight;
};

struct ptable {
	const struct report_ctx *ctx;
	const enum view_sort *keys;
	int nkeys;
	struct agg a;
	unsigned agg_flags;   /* AGG_BY_CGROUP when a key needs it */
	struct prow *rows;
	struct pentry *ent;
	size_t nent;
	int width[SORT_MAX];
};

static int cmp_key(const struct ptable *t, const struct prow *a, const struct prow *b,
		   enum view_sort k)
{
	char ba[VIEW_CONTAINER_MAX], bb[VIEW_CONTAINER_MAX];
	int c;

	switch (k) {
	case SORT_COMM:
		return strcmp(model__comm_name(t->ctx->model, a->comm),
			      model__comm_name(t->ctx->model, b->comm));
	case SORT_PID:
		return a->pid < b->pid ? -1 : a->pid > b->pid;
	case SORT_DSO:
		return strcmp(a->dso, b->dso);
	case SORT_WAIT:
		c = strcmp(a->wait, b->wait);
		return c ? c : (int)a->wkernel - (int)b->wkernel;
	case SORT_USYM:
		return strcmp(a->usym, b->usym);
	case SORT_CGROUP:
		return strcmp(view_cgroup(t->ctx->model, a->cgroup, ba),
			      view_cgroup(t->ctx->model, b->cgroup, bb));
	case SORT_CONTAINER:
		return strcmp(view_container(t->ctx->model, a->cgroup, ba, NULL),
			      view_container(t->ctx->model, b->cgroup, bb, NULL));
	default:
		c = strcmp(a->sym, b->sym);
		if (c || a->kernel != b->kernel)
			return c ? c : (int)a->kernel - (int)b->kernel;
		/* --srcline: a row per source line, as perf's sym,srcline */
		if (!a->src || !b->src)
			return !!a->src - !!b->src;
		c = strcmp(a->src, b->src);
		return c ? c : (a->line > b->line) - (a->line < b->line);
	}
}

static int cmp_keys(const struct ptable *t, const struct prow *a, const struct prow *b)
{
	int i, c;

	for (i = 0; i < t->nkeys; i++) {
		c = cmp_key(t, a, b, t->keys[i]);
		if (c)
			return c;
	}
	return 0;
}

static int cmp_row(const void *pa, const void *pb, void *t)
{
	const struct prow *a = pa, *b = pb;

	return cmp_keys(t, a, b) ?: (a->grp < b->grp ? -1 : a->grp > b->grp);
}

static int cmp_ent(const void *pa, const void *pb, void *arg)
{
	const struct ptable *t = arg;
	const struct pentry *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return cmp_keys(t, &t->rows[a->first], &t->rows[b->first]);
}

static void cell_raw(const struct ptable *t, const struct prow *r, enum view_sort k,
		     char *buf, size_t len)
{
	char src[VIEW_SRCLINE_MAX], cb[VIEW_CONTAINER_MAX];

	switch (k) {
	case SORT_COMM:
		snprintf(buf, len, "%s", model__comm_name(t->ctx->model, r->comm));
		break;
	case SORT_PID:
		snprintf(buf, len, "%" PRIu32, r->pid);
		break;
	case SORT_DSO:
		snprintf(buf, len, "%s", r->dso);
		break;
	case SORT_WAIT:
		snprintf(buf, len, "[%c] %s", r->wkernel ? 'k' : '.', r->wait);
		break;
	case SORT_USYM:
		snprintf(buf, len, r->kthread ? "%s" : "[.] %s", r->usym);
		break;
	case SORT_CGROUP:
		snprintf(buf, len, "%s", view_cgroup(t->ctx->model, r->cgroup, cb));
		break;
	case SORT_CONTAINER:
		snprintf(buf, len, "%s", view_container(t->ctx->model, r->cgroup, cb, NULL));
		break;
	default:
		snprintf(buf, len, "[%c] %s%s", r->kernel ? 'k' : '.', r->sym,
			 view_srcline(t->ctx, r->src, r->line, src));
		break;
	}
}

/* A cell as printed: its names escaped (escape.h). */
static void cell(const struct ptable *t, const struct prow *r, enum view_sort k,
		 char *buf, size_t len)
{
	char raw[512];

	cell_raw(t, r, k, raw, sizeof(raw));
	if (esc__str(raw, buf, len) == raw)
		snprintf(buf, len, "%s", raw);
}

/* The innermost Python function of user frames fr[nk..n), or NULL: a
 * Python thread's own function, where the interpreter's are like the C
 * library's wrappers. */
static const char *python_site(const struct rframe *fr, int nk, int n)
{
	int i;

	for (i = nk; i < n; i++)
		if (fr[i].python && fr[i].func)
			return fr[i].func;
	return NULL;
}

/* The row's wait site and user function, of frames fr[0..n), nk kernel. */
static void row_sites(const struct ptable *t, struct prow *r, const struct rframe *fr, int n,
		      int nk)
{
	int w = view_wait_site(t->ctx, fr, nk), u = view_user_site(fr, nk, n);

	r->wait = fr[w].name;
	r->wkernel = fr[w].kernel;
	if (u >= 0)
		r->usym = python_site(fr, nk, n) ?: fr[u].name;
}

static int build_rows(struct ptable *t, enum cap_kind kind, struct rframe *fr)
{
	size_t i;
	int n, nk;

	t->rows = calloc(t->a.n ? t->a.n : 1, sizeof(*t->rows));
	if (!t->rows)
		return -ENOMEM;
	for (i = 0; i < t->a.n; i++) {
		const struct agg_group *g = &t->a.g[i];
		struct prow *r = &t->rows[i];

		n = view_frames(t->ctx, g->pid, g->first_time, g->ustack, g->kstack, fr, &nk);
		if (n < 0)
			return n;
		*r = (struct prow){ .grp = i, .comm = g->comm, .pid = g->pid, .cgroup = g->cgroup,
				    .dso = "[unknown]", .sym = "[unknown]", .wait = "[unknown]",
				    .usym = "[unknown]",
				    .weight = kind == CAP_KIND_OFFCPU ? g->total : g->count };
		if (n) {
			row_sites(t, r, fr, n, nk);
			r->kernel = fr[0].kernel;
			r->dso = fr[0].dso;
			r->sym = fr[0].name;
			if (t->ctx->opts.srcline) {
				r->src = fr[0].srcfile;
				r->line = fr[0].line;
			}
		}
		if (n == nk && model__is_kthread(t->ctx->model, g->max_tid)) {
			r->usym = "[kernel thread]";
			r->kthread = true;
		}
	}
	return 0;
}

static int merge_rows(struct ptable *t)
{
	size_t i, j, n = t->a.n;

	qsort_r(t->rows, n, sizeof(*t->rows), cmp_row, t);
	t->ent = calloc(n ? n : 1, sizeof(*t->ent));
	if (!t->ent)
		return -ENOMEM;
	for (i = 0; i < n; i = j) {
		struct pentry *e = &t->ent[t->nent++];

		e->first = i;
		for (j = i; j < n && !cmp_keys(t, &t->rows[i], &t->rows[j]); j++)
			e->weight += t->rows[j].weight;
		e->n = j - i;
	}
	qsort_r(t->ent, t->nent, sizeof(*t->ent), cmp_ent, t);
	return 0;
}

static void print_columns(struct ptable *t, FILE *out)
{
	char buf[512];
	size_t i;
	int k;

	for (k = 0; k < t->nkeys; k++) {
		t->width[k] = strlen(col_names[t->keys[k]]);
		for (i = 0; i < t->nent; i++) {
			cell(t, &t->rows[t->ent[i].first], t->keys[k], buf, sizeof(buf));
			if ((int)strlen(buf) > t->width[k])
				t->width[k] = strlen(buf);
		}
	}
	fputs("# Overhead", out);
	for (k = 0; k < t->nkeys; k++)
		fprintf(out, "  %-*s", k == t->nkeys - 1 ? 0 : t->width[k], col_names[t->keys[k]]);
	fputs("\n# ........", out);
	for (k = 0; k < t->nkeys; k++) {
		fputs("  ", out);
		for (i = 0; i < (size_t)t->width[k]; i++)
			fputc('.', out);
	}
	fputs("\n#\n", out);
}

static void print_row(const struct ptable *t, const struct pentry *e, uint64_t total,
		      FILE *out)
{
	char buf[512];
	int k;

	fprintf(out, "%9.2f%%", total ? 100.0 * e->weight / total : 0.0);
	for (k = 0; k < t->nkeys; k++) {
		cell(t, &t->rows[e->first], t->keys[k], buf, sizeof(buf));
		fprintf(out, "  %-*s", k == t->nkeys - 1 ? 0 : t->width[k], buf);
	}
	fputc('\n', out);
}

/* ---- header ------------------------------------------------------------ */

/* Events the kernel did not run the recorder's program for: the recorder
 * stats count them (README), and they are missing all the same. */
static void print_not_run(const struct model *m, FILE *out)
{
	const char *key;
	uint64_t v;
	size_t i;

	for (i = 0; !model__stat(m, i, &key, &v); i++) {
		if (!v)
			continue;
		if (cap_stat_classify(key) == CAP_STAT_NOT_RUN)
			fprintf(out, "# WARNING: %" PRIu64 " events not recorded, the kernel "
				"did not run the recorder's program (%s)\n", v, key);
		else if (cap_stat_classify(key) == CAP_STAT_INCOMPLETE)
			fprintf(out, "# WARNING: %" PRIu64 " block requests not seen completing: "
				"in flight at the end, or not recorded (%s)\n", v, key);
	}
}

static void print_loss(const struct model *m, FILE *out)
{
	static const char *const what[CAP_LOST_MAX] = {
		"events lost (ring buffer full)", "user stacks not taken",
		"kernel stacks not taken", "side-band records lost",
		"events lost (in-kernel state table full)",
	};
	uint64_t v;
	int k, r;

	for (k = 0; k < CAP_KIND_MAX; k++) {
		for (r = 0; r < CAP_LOST_MAX; r++) {
			v = model__lost(m, k, r);
			if (v)
				fprintf(out, "# WARNING: %" PRIu64 " %s %s\n", v,
					cap_kind_name(k), what[r]);
		}
	}
	print_not_run(m, out);
	if (model__recovered(m))
		fprintf(out, "# WARNING: output is partial: %s\n",
			model__loss_text(m));
}

/* The recorder's own counters (STAT records), four to a line. */
static void print_stats(const struct model *m, FILE *out)
{
	const char *key, *next;
	uint64_t v, nv;
	size_t i;

	for (i = 0; !model__stat(m, i, &key, &v); i++) {
		bool more = !model__stat(m, i + 1, &next, &nv);

		if (!(i % 4))
			fputs(i ? "\n#                 " : "# recorder stats :", out);
		view_put_name(" ", key, out);
		fprintf(out, " %" PRIu64 "%s", v, more && (i + 1) % 4 ? "," : "");
	}
	if (i)
		fputc('\n', out);
}

static void put_duration(const struct model *m, FILE *out)
{
	uint64_t span = model__last_time(m) - model__header(m)->start_time;

	fprintf(out, "# duration       : %" PRIu64 ".%03" PRIu64 " s\n", span / 1000000000,
		span % 1000000000 / 1000000);
}

static void put_events(const struct model *m, FILE *out)
{
	struct cap_loss loss;
	int k;

	cap_loss__split(model__lost_detail(m), &loss);
	fputs("# events         :", out);
	for (k = 0; k < CAP_KIND_MAX; k++)
		if (k < CAP_KIND_SIDEBAND || (k == CAP_KIND_WAKEUP &&
					      (model__nr_events(m, k) || loss.events[k])))
			fprintf(out, "%s %s %zu (lost %" PRIu64 ")", k ? "," : "",
				cap_kind_name(k), model__nr_events(m, k), loss.events[k]);
	fputc('\n', out);
}

/* The recorder's counters of the stat keys from key on, one per event
 * kind that has stacks (offcpu, cpu, bio, wakeup), added up. */
static uint64_t stat_sum(const uint64_t *v, int key, int wakeup_key)
{
	return v[key] + v[key + 1] + v[key + 2] + v[wakeup_key];
}

/* How user stacks were walked, and what the dwarf unwinder could not do
 * (the counters, with --header). */
static void put_unwinding(const struct model *m, FILE *out)
{
	uint64_t v[CAP_STAT_MAX] = { 0 }, value, n = 0, cut, fp;
	const char *key;
	size_t i;
	int k;

	fputs("# unwinding      : ", out);
	if (!(model__header(m)->features & CAP_FEAT_DWARF_UNWIND)) {
		fputs("fp (frame pointers)\n", out);
		return;
	}
	for (i = 0; !model__stat(m, i, &key, &value); i++) {
		k = cap_stat_key_of(key);
		if (k >= 0)
			v[k] += value;
	}
	for (k = 0; k < CAP_KIND_MAX; k++)
		if (k != CAP_KIND_SIDEBAND)
			n += model__nr_events(m, k);
	cut = stat_sum(v, CAP_STAT_UNWIND_TRUNC_OFFCPU, CAP_STAT_UNWIND_TRUNC_WAKEUP);
	fp = stat_sum(v, CAP_STAT_UNWIND_NO_TABLES_OFFCPU, CAP_STAT_UNWIND_NO_TABLES_WAKEUP);
	fprintf(out, "dwarf, %" PRIu64 " of %" PRIu64 " user stacks cut short (%.1f%%), %" PRIu64
		" by frame pointers before their tables\n", cut, n, n ? 100.0 * cut / n : 0.0, fp);
}

/* The default: what was recorded, when, for how long, the events and
 * their losses, the unwinding, in a few lines. */
static void header_short(const struct model *m, FILE *out)
{
	const struct cap_header *h = model__header(m);
	char when[64];

	view_fmt_walltime(m, h->start_time, when, sizeof(when));
	fprintf(out, "# captured on    : %s", when);
	if (h->hostname[0]) /* scrubbed: none */
		view_put_name(" on ", h->hostname, out);
	view_put_name(" (", h->release, out);
	view_put_name(", ", h->machine, out);
	fprintf(out, ", %" PRIu32 " cpus)\n", h->ncpus);
	view_put_name("# cmdline        : ", h->cmdline, out);
	fputc('\n', out);
}

/* --header, -v: a line per fact, perf's, and every recorder counter. */
static void header_full(const struct model *m, FILE *out)
{
	const struct cap_header *h = model__header(m);
	char when[64];

	view_fmt_walltime(m, h->start_time, when, sizeof(when));
	fprintf(out, "# captured on    : %s\n", when);
	view_put_name("# hostname       : ", h->hostname, out);
	view_put_name("\n# os release     : ", h->release, out);
	view_put_name("\n# arch           : ", h->machine, out);
	fprintf(out, "\n# nr cpus        : %" PRIu32 "\n", h->ncpus);
	view_put_name("# stkrec version : ", h->version, out);
	view_put_name("\n# cmdline        : ", h->cmdline, out);
	fputc('\n', out);
}

static void perf_header(const struct report_ctx *ctx, FILE *out)
{
	const struct model *m = ctx->model;

	fputs("# ========\n", out);
	if (ctx->opts.header)
		header_full(m, out);
	else
		header_short(m, out);
	put_duration(m, out);
	put_events(m, out);
	put_unwinding(m, out);
	if (ctx->opts.header)
		print_stats(m, out);
	fputs("# ========\n", out);
	print_loss(m, out);
}

/* ---- block I/O table --------------------------------------------------- */

struct biorow {
	uint32_t comm, major, minor;
	uint64_t cgroup; /* with -s cgroup or container; else 0 */
	uint64_t io, bytes;
};

static int cmp_biorow(const void *pa, const void *pb, void *arg)
{
	const struct biorow *a = pa, *b = pb;
	int c;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	c = strcmp(model__comm_name(arg, a->comm), model__comm_name(arg, b->comm));
	if (c)
		return c;
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	return a->cgroup < b->cgroup ? -1 : a->cgroup > b->cgroup;
}

/* The cgroup column -s asks of the block I/O table: SORT_CGROUP or
 * SORT_CONTAINER (the first one given), else SORT_MAX (none). */
static enum view_sort bio_cgroup_key(const struct report_ctx *ctx)
{
	int i;

	for (i = 0; i < ctx->opts.nsort; i++)
		if (ctx->opts.sort[i] == SORT_CGROUP || ctx->opts.sort[i] == SORT_CONTAINER)
			return ctx->opts.sort[i];
	return SORT_MAX;
}

static int bio_rows(const struct report_ctx *ctx, struct biorow **out, size_t *nout)
{
	const struct model *m = ctx->model;
	const uint32_t *comms = model__bio_comms(m);
	struct idmap idx = { 0 };
	bool by_cgroup = bio_cgroup_key(ctx) != SORT_MAX;
	struct biorow *rows;
	size_t i, n, nr = 0;
	const struct cap_bio *b = model__bio(m, &n);
	uint64_t *slot, cg;
	int ret = 0;

	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (i = 0; i < n; i++, b++) {
		if (!filter__task(ctx->filter, m, b->pid, b->tid, comms[i], b->cgroup,
				  b->complete_time))
			continue;
		/* a row per command, disk (MKDEV's 12 + 20 bits) and cgroup */
		cg = by_cgroup ? b->cgroup : 0;
		ret = idmap__upsert(&idx, cg, (uint64_t)comms[i] << 32 | b->major << 20 | b->minor,
				    nr, &slot);
		if (ret < 0)
			break;
		if (ret == 1)
			rows[nr++] = (struct biorow){ comms[i], b->major, b->minor, cg, 0, 0 };
		rows[*slot].io++;
		rows[*slot].bytes += b->bytes;
		ret = 0;
	}
	idmap__fini(&idx);
	if (ret < 0) {
		free(rows);
		return ret;
	}
	qsort_r(rows, nr, sizeof(*rows), cmp_biorow, (void *)m);
	*out = rows;
	*nout = nr;
	return 0;
}

/* The block I/O table's head: Command, Device, I/Os, Bytes, after the
 * cgroup or container -s asks for. */
static void print_bio_columns(const struct report_ctx *ctx, FILE *out)
{
	enum view_sort k = bio_cgroup_key(ctx);

	fputs("# Overhead  ", out);
	if (k != SORT_MAX)
		fprintf(out, "%-24s  ", k == SORT_CGROUP ? "Cgroup" : "Container");
	fprintf(out, "%-16s  %-20s  %8s  %14s\n", "Command", "Device", "I/Os", "Bytes");
	fputs("# ........  ", out);
	if (k != SORT_MAX)
		fputs("........................  ", out);
	fputs("................  ....................  ........  ..............\n#\n", out);
}

static void put_bio_cgroup(const struct report_ctx *ctx, uint64_t cg, FILE *out)
{
	enum view_sort k = bio_cgroup_key(ctx);
	char buf[VIEW_CONTAINER_MAX], ec[VIEW_CONTAINER_MAX * 4];
	const char *v;

	if (k == SORT_MAX)
		return;
	v = k == SORT_CGROUP ? view_cgroup(ctx->model, cg, buf) :
			       view_container(ctx->model, cg, buf, NULL);
	fprintf(out, "%-24s  ", esc__str(v, ec, sizeof(ec)));
}

static int perf_bio_table(const struct report_ctx *ctx, FILE *out)
{
	struct biorow *rows;
	uint64_t total = 0, ios = 0;
	size_t i, n;
	char dev[64], ec[VIEW_COMM_ESC];
	const char *name;
	int err;

	err = bio_rows(ctx, &rows, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		total += rows[i].bytes;
		ios += rows[i].io;
	}
	fprintf(out, "#\n# Samples: %" PRIu64 " of event 'bio'\n"
		"# Event count (bytes): %" PRIu64 "\n#\n", ios, total);
	print_bio_columns(ctx, out);
	for (i = 0; i < n; i++) {
		name = model__blockdev(ctx->model, rows[i].major, rows[i].minor);
		snprintf(dev, sizeof(dev), "%s (%" PRIu32 ":%" PRIu32 ")", name ? name : "?",
			 rows[i].major, rows[i].minor);
		fprintf(out, "%9.2f%%  ", total ? 100.0 * rows[i].bytes / total : 0.0);
		put_bio_cgroup(ctx, rows[i].cgroup, out);
		fprintf(out, "%-16s  %-20s  %8" PRIu64 "  %14" PRIu64 "\n",
			esc__str(model__comm_name(ctx->model, rows[i].comm), ec, sizeof(ec)), dev,
			rows[i].io, rows[i].bytes);
	}
	free(rows);
	return 0;
}

/* ---- call graph (-g) ----------------------------------------------------- */

struct gnode {
	const char *name;
	const char *src;      /* --srcline: the frame's source file and line */
	int line;
	uint64_t weight;
	uint32_t child, next; /* first child, next sibling; 0 = none */
};

struct graph {
	const struct report_ctx *ctx;
	struct gnode *n;
	size_t len, cap;
	uint64_t total;
	bool srcline;
};

static bool gnode_is(const struct gnode *n, const struct rframe *f, bool srcline)
{
	if (strcmp(n->name, f->name))
		return false;
	if (!srcline)
		return true;
	if (!n->src || !f->srcfile)
		return !n->src && !f->srcfile;
	return n->line == f->line && !strcmp(n->src, f->srcfile);
}

static int gnode_child(struct graph *g, uint32_t parent, const struct rframe *f,
		       uint32_t *out)
{
	uint32_t c;

	for (c = g->n[parent].child; c; c = g->n[c].next) {
		if (gnode_is(&g->n[c], f, g->srcline)) {
			*out = c;
			return 0;
		}
	}
	if (ARRAY_RESERVE(g->n, g->cap, g->len + 1))
		return -ENOMEM;
	c = g->len++;
	g->n[c] = (struct gnode){ .name = f->name, .next = g->n[parent].child };
	if (g->srcline) {
		g->n[c].src = f->srcfile;
		g->n[c].line = f->line;
	}
	g->n[parent].child = c;
	*out = c;
	return 0;
}

static int graph_add(struct graph *g, const struct rframe *fr, int n, uint64_t w)
{
	uint32_t cur = 0;
	int i, err;

	g->n[0].weight += w;
	for (i = 0; i < n; i++) {
		err = gnode_child(g, cur, &fr[i], &cur);
		if (err)
			return err;
		g->n[cur].weight += w;
	}
	return 0;
}

static int gnode_cmp(const struct gnode *a, const struct gnode *b)
{
	int c = strcmp(a->name, b->name);

	if (c || (!a->src && !b->src))
		return c;
	if (!a->src || !b->src)
		return !!a->src - !!b->src;
	c = strcmp(a->src, b->src);
	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* "name" or, with --srcline, "name file:line" into buf. */
static const char *gnode_label(const struct graph *g, const struct gnode *n, char *buf,
			       size_t len)
{
	char src[VIEW_SRCLINE_MAX], raw[GRAPH_LABEL_MAX];
	const char *s = n->name;

	if (n->src) {
		snprintf(raw, sizeof(raw), "%s%s", n->name,
			 view_srcline(g->ctx, n->src, n->line, src));
		s = raw;
	}
	s = esc__str(s, buf, len);
	if (s != raw)
		return s;
	snprintf(buf, len, "%s", raw);
	return buf;
}

/* Children by weight, then name: deterministic. */
static int sorted_children(const struct graph *g, uint32_t node, uint32_t **out)
{
	uint32_t c, *v, n = 0, i, j, t;

	for (c = g->n[node].child; c; c = g->n[c].next)
		n++;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (c = g->n[node].child, i = 0; c; c = g->n[c].next)
		v[i++] = c;
	for (i = 1; i < n; i++) { /* insertion sort: fan-out is small */
		for (j = i; j > 0; j--) {
			const struct gnode *a = &g->n[v[j - 1]], *b = &g->n[v[j]];

			if (a->weight > b->weight ||
			    (a->weight == b->weight && gnode_cmp(a, b) <= 0))
				break;
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	}
	*out = v;
	return n;
}

static int graph_print(const struct graph *g, uint32_t node, char *prefix, size_t plen,
		       FILE *out);

static int graph_chain(const struct graph *g, uint32_t node, char *prefix, size_t plen,
		       FILE *out)
{
	uint32_t c = g->n[node].child;
	char label[GRAPH_LABEL_MAX];

	/* a single caller carrying all the weight continues the straight line */
	while (c && !g->n[c].next && g->n[c].weight == g->n[node].weight) {
		fprintf(out, "%.*s%s\n", (int)plen, prefix,
			gnode_label(g, &g->n[c], label, sizeof(label)));
		node = c;
		c = g->n[c].child;
	}
	return c ? graph_print(g, node, prefix, plen, out) : 0;
}

static int graph_print(const struct graph *g, uint32_t node, char *prefix, size_t plen,
		       FILE *out)
{
	uint32_t *kids;
	char pct[32], label[GRAPH_LABEL_MAX];
	int n, i, err = 0;
	size_t add;

	n = sorted_children(g, node, &kids);
	if (n < 0)
		return n;
	for (i = 0; i < n && !err; i++) {
		const struct gnode *c = &g->n[kids[i]];
		bool last = i == n - 1;

		snprintf(pct, sizeof(pct), "%.2f%%", g->total ? 100.0 * c->weight / g->total : 0.0);
		fprintf(out, "%.*s|\n", (int)plen, prefix);
		fprintf(out, "%.*s%c--%s--%s\n", (int)plen, prefix, last ? ' ' : '|', pct,
			gnode_label(g, c, label, sizeof(label)));
		add = 1 + 2 + strlen(pct) + 2;
		if (plen + add >= GRAPH_PREFIX_MAX)
			continue; /* absurdly deep: stop drawing this branch */
		prefix[plen] = last ? ' ' : '|';
		memset(prefix + plen + 1, ' ', add - 1);
		err = graph_chain(g, kids[i], prefix, plen + add, out);
	}
	free(kids);
	return err;
}

static int perf_callgraph(const struct report_ctx *ctx, const struct ptable *t,
			  const struct pentry *e, enum cap_kind kind, uint64_t total,
			  struct rframe *fr, FILE *out)
{
	struct graph g = { .ctx = ctx, .cap = 64, .len = 1, .total = total,
			   .srcline = ctx->opts.srcline };
	char *prefix, label[GRAPH_LABEL_MAX];
	size_t i;
	int n, err = 0;

	g.n = calloc(g.cap, sizeof(*g.n));
	prefix = malloc(GRAPH_PREFIX_MAX);
	if (!g.n || !prefix) {
		free(g.n);
		free(prefix);
		return -ENOMEM;
	}
	for (i = 0; i < e->n && !err; i++) {
		const struct agg_group *ag = &t->a.g[t->rows[e->first + i].grp];

		n = view_frames(ctx, ag->pid, ag->first_time, ag->ustack, ag->kstack, fr, NULL);
		err = n < 0 ? n : graph_add(&g, fr, n, kind == CAP_KIND_OFFCPU ? ag->total : ag->count);
	}
	if (!err && g.n[0].child) {
		memset(prefix, ' ', 12);
		if (!g.n[g.n[0].child].next) {
			fprintf(out, "            |\n            ---%s\n",
				gnode_label(&g, &g.n[g.n[0].child], label, sizeof(label)));
			memset(prefix, ' ', 15);
			err = graph_chain(&g, g.n[0].child, prefix, 15, out);
		} else {
			err = graph_print(&g, 0, prefix, 12, out);
		}
		fputc('\n', out);
	}
	free(g.n);
	free(prefix);
	return err;
}

static void print_kind_head(const struct report_ctx *ctx, enum cap_kind kind,
			    uint64_t events, uint64_t total, FILE *out)
{
	fprintf(out, "#\n# Samples: %" PRIu64 " of event '%s'\n", events, cap_kind_name(kind));
	if (kind == CAP_KIND_OFFCPU)
		fprintf(out, "# Event count (off-CPU time): %" PRIu64 " us\n", view_ns_to_us(total));
	else
		fprintf(out, "# Event count (samples): %" PRIu64 "\n", total);
	fputs("#\n", out);
}

/* The table's columns and how its events group. */
static void table_setup(const struct report_ctx *ctx, enum cap_kind kind, struct ptable *t)
{
	static const enum view_sort dflt[] = { SORT_COMM, SORT_DSO, SORT_SYM };
	static const enum view_sort waits[] = { SORT_COMM, SORT_WAIT, SORT_USYM };
	int i;

	t->ctx = ctx;
	/* off-CPU rows by where threads waited; -g keeps perf's leaf rows */
	t->keys = kind == CAP_KIND_OFFCPU && !ctx->opts.callgraph ? waits : dflt;
	t->nkeys = 3;
	if (ctx->opts.nsort) {
		t->keys = ctx->opts.sort;
		t->nkeys = ctx->opts.nsort;
	}
	for (i = 0; i < t->nkeys; i++)
		if (t->keys[i] == SORT_CGROUP || t->keys[i] == SORT_CONTAINER)
			t->agg_flags = AGG_BY_CGROUP;
	if (kind == CAP_KIND_OFFCPU && ctx->filter->threads != FILTER_THREADS_KERNEL)
		t->agg_flags |= AGG_FOLD_IDLE;
}

/* The table of t's groups (collected), its call graphs with -g. */
static int stack_table(struct ptable *t, enum cap_kind kind, FILE *out)
{
	const struct report_ctx *ctx = t->ctx;
	uint64_t total = 0, events = 0;
	struct rframe *fr;
	size_t i;
	int err;

	fr = malloc(VIEW_MAX_FRAMES * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	err = build_rows(t, kind, fr);
	if (!err)
		err = merge_rows(t);
	for (i = 0; !err && i < t->a.n; i++) {
		total += t->rows[i].weight;
		events += t->a.g[t->rows[i].grp].count;
	}
	if (!err) {
		print_kind_head(ctx, kind, events, total, out);
		print_columns(t, out);
	}
	for (i = 0; !err && i < t->nent; i++) {
		print_row(t, &t->ent[i], total, out);
		if (ctx->opts.callgraph)
			err = perf_callgraph(ctx, t, &t->ent[i], kind, total, fr, out);
	}
	if (!err && t->a.nidle)
		fprintf(out, "#\n# %zu kernel thread%s idle throughout the recording, not in this "
			"table: -k lists %s\n", t->a.nidle, t->a.nidle == 1 ? "" : "s",
			t->a.nidle == 1 ? "it" : "them");
	free(fr);
	return err;
}

static bool shown(const struct report_ctx *ctx, enum cap_kind kind)
{
	return filter__kind(ctx->filter, kind) && model__nr_events(ctx->model, kind);
}

static void table_free(struct ptable *t)
{
	free(t->rows);
	free(t->ent);
	agg__fini(&t->a);
}

int view_perf(struct report_ctx *ctx, FILE *out)
{
	bool off = shown(ctx, CAP_KIND_OFFCPU), cpu = shown(ctx, CAP_KIND_CPU);
	struct ptable toff = { 0 }, tcpu = { 0 };
	int err;

	perf_header(ctx, out);
	table_setup(ctx, CAP_KIND_OFFCPU, &toff);
	table_setup(ctx, CAP_KIND_CPU, &tcpu);
	/* both kinds in one pass over the events */
	err = agg__collect_kinds(off ? &toff.a : NULL, toff.agg_flags, cpu ? &tcpu.a : NULL,
				 tcpu.agg_flags, ctx);
	if (!err && off)
		err = stack_table(&toff, CAP_KIND_OFFCPU, out);
	if (!err && cpu)
		err = stack_table(&tcpu, CAP_KIND_CPU, out);
	if (!err && shown(ctx, CAP_KIND_BIO))
		err = perf_bio_table(ctx, out);
	if (!err && !off && !cpu && !shown(ctx, CAP_KIND_BIO))
		fputs("#\n# no events of the selected kinds in the capture\n", out);
	table_free(&toff);
	table_free(&tcpu);
	return err;
}
