// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Trace Event Format (Google's "Trace Event Format" document), JSON
 * object form, for ui.perfetto.dev and chrome://tracing:
 *
 *   - a track per thread: a complete event ("X") per off-CPU interval, from
 *     switch-out for its duration, named by its innermost user function
 *     (the innermost kernel one when it has no user frames), args the state,
 *     the CPU and the whole stack (outermost first, as top-waits --json),
 *     and for a wait the recording did not see whole its CAP_OFFCPU_OPEN_*
 *     flags ("open");
 *     an instant event ("i") per CPU sample, named by its innermost frame;
 *     a track has one name (the thread's last): an event of the thread
 *     under another name (before a rename or an exec) has it in args.comm;
 *   - a track per block device (a process of its own, pid 2^30 + N, beyond
 *     any Linux pid): each request an async span ("b" at issue, "e" at
 *     completion; spans in flight together overlap), args its op, bytes,
 *     device number, sector, error and submitter (comm, pid, tid, stacks);
 *   - with wakeups (record -e wakeup), a zero-length slice ("X", cat
 *     "wakeup", named "wakes COMM") on the waker's track when it woke a
 *     thread, args the CPU, the thread woken ("woke": "COMM PID/TID"), the
 *     request whose completion woke it ("io") and the waker's stack; an
 *     interrupt's on a track per CPU and kind in the pseudo process
 *     "interrupts" (pid 2^30 - 1). A wakeup that ended a wait of the trace
 *     (the model's join: the last wakeup of the thread inside the wait) is
 *     also a flow (v1 flow events "s" and "f", "bp":"e", one id per
 *     wakeup) from that slice to the end of the wait: Perfetto binds each
 *     to the slice open on its track at its time, chrome://tracing to the
 *     slice enclosing it, and draws an arrow. A thread's wakeup slice says
 *     in args.waited what the waker itself waited on last before (that
 *     wait's ts and dur): --chain's next hop, whose own arrow goes on;
 *   - process, thread and device names as metadata ("M"), last; a process
 *     whose cgroup is known gets "process_labels" too: its container
 *     (container__name()'s RUNTIME:ID) and its cgroup's path, as its
 *     main thread's (else first thread's) first event had them.
 *
 * Times are microseconds since the capture start, with nanoseconds as
 * three decimals. Events go out in the capture's order (viewers sort), as
 * they are read: memory grows with the events (24 bytes each, the filtered
 * index), the distinct stacks (their JSON text, made once) and the threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/views_int.h"
#include "util/array.h"

#define DEVICE_PID0 (1u << 30)
/* the interrupts' pseudo process; a track per CPU and kind (hardirq,
 * softirq) has tid IRQ_PID - 1 - (cpu << 1 | softirq) */
#define IRQ_PID (DEVICE_PID0 - 1)

/* One named stack: its JSON text in the blob, "stack" array then the two
 * event names. */
struct cstack {
	size_t off;
	uint32_t stack_len, offcpu_len, cpu_len;
};

struct cthread {
	uint32_t pid, tid, comm;
	uint64_t cgroup;      /* its first event's */
};

struct cdev {
	uint32_t major, minor;
};

struct chrome {
	const struct report_ctx *ctx;
	FILE *out;
	uint64_t t0;
	bool first;
	FILE *blobf;             /* open_memstream() of blob */
	char *blob;
	size_t blob_len;
	struct idmap stack_ids;  /* view_stack_key() -> index */
	struct cstack *stacks;
	size_t nstacks, stacks_cap;
	struct idmap thread_ids; /* pid << 32 | tid -> index */
	struct cthread *threads;
	size_t nthreads, threads_cap;
	struct idmap dev_ids;    /* major << 32 | minor -> index */
	struct cdev *devs;
	size_t ndevs, devs_cap;
	struct idmap irq_ids;    /* cpu << 1 | softirq -> index */
	uint32_t *irqs;          /* their keys */
	size_t nirqs, irqs_cap;
	uint32_t *ended;         /* per wakeup: 1 + the index of the wait of the
				  * trace it ended, or 0 */
	struct wait_index *waits;
	struct rframe *fr;
};

/* Off-CPU: the innermost user frame, else the innermost kernel one. */
static const char *offcpu_name(const struct rframe *fr, int n, int nk)
{
	if (nk < n && !fr[nk].special)
		return fr[nk].name;
	return n ? fr[0].name : "[unknown]";
}

/* Name a stack once: its JSON into the blob. NULL without memory. */
static const struct cstack *named_stack(struct chrome *c, const struct view_evinfo *ev)
{
	struct idmap_key k = view_stack_key(c->ctx->model, ev);
	uint64_t *v = idmap__find(&c->stack_ids, k.a, k.b);
	struct cstack s;
	long at[3];
	int n, nk;

	if (v)
		return &c->stacks[*v];
	n = view_frames(c->ctx, ev->pid, ev->start, ev->ustack, ev->kstack, c->fr, &nk);
	if (n < 0)
		return NULL;
	s.off = ftell(c->blobf);
	view_json_stack(c->ctx, c->fr, n, c->blobf);
	at[0] = ftell(c->blobf);
	view_json_str(c->blobf, offcpu_name(c->fr, n, nk), "");
	at[1] = ftell(c->blobf);
	view_json_str(c->blobf, n ? c->fr[0].name : "[unknown]", "");
	at[2] = ftell(c->blobf);
	if (fflush(c->blobf) || at[2] < 0)
		return NULL;
	s.stack_len = at[0] - s.off;
	s.offcpu_len = at[1] - at[0];
	s.cpu_len = at[2] - at[1];
	if (idmap__upsert(&c->stack_ids, k.a, k.b, c->nstacks, &v) < 0 ||
	    ARRAY_PUSH(c->stacks, c->nstacks, c->stacks_cap, s))
		return NULL;
	return &c->stacks[c->nstacks - 1];
}

/* The name of the thread's track into *comm: its last, as a thread names
 * itself after its first events (they carry its creator's name, as a
 * preempted wait before pthread_setname_np() does). */
static int note_thread(struct chrome *c, const struct view_evinfo *ev, uint32_t *comm)
{
	uint32_t last = model__comm_id(c->ctx->model, ev->tid, UINT64_MAX);
	struct cthread t = { ev->pid, ev->tid, last ? last : ev->comm, ev->cgroup };
	uint64_t *v;
	int ret = idmap__upsert(&c->thread_ids, (uint64_t)ev->pid << 32 | ev->tid, 0,
				c->nthreads, &v);

	if (ret < 0)
		return ret;
	*comm = ret ? t.comm : c->threads[*v].comm;
	return ret ? ARRAY_PUSH(c->threads, c->nthreads, c->threads_cap, t) : 0;
}

/* A device's pseudo pid. */
static int device_pid(struct chrome *c, uint32_t major, uint32_t minor, uint32_t *pid)
{
	struct cdev d = { major, minor };
	uint64_t *v;
	int ret = idmap__upsert(&c->dev_ids, (uint64_t)major << 32 | minor, 0, c->ndevs, &v);

	if (ret < 0)
		return ret;
	*pid = DEVICE_PID0 + *v;
	return ret ? ARRAY_PUSH(c->devs, c->ndevs, c->devs_cap, d) : 0;
}

static void sep(struct chrome *c)
{
	fputs_unlocked(c->first ? "\n" : ",\n", c->out);
	c->first = false;
}

/* `"pid":P,"tid":T,"ts":TS` */
static void put_task_ts(struct chrome *c, uint32_t pid, uint32_t tid, uint64_t t)
{
	char buf[128], *p = buf;

	memcpy(p, "\"pid\":", 6);
	p = view_put_u64(p + 6, pid);
	memcpy(p, ",\"tid\":", 7);
	p = view_put_u64(p + 7, tid);
	memcpy(p, ",\"ts\":", 6);
	p = view_put_us(p + 6, t, c->t0);
	fwrite_unlocked(buf, 1, p - buf, c->out);
}

static int put_sampled(struct chrome *c, const struct view_event *e, const struct view_evinfo *ev)
{
	const struct cstack *s = named_stack(c, ev);
	bool off = e->kind == CAP_KIND_OFFCPU;
	char buf[128], *p = buf;
	uint32_t track_comm;
	size_t n;

	if (!s || note_thread(c, ev, &track_comm))
		return -ENOMEM;
	sep(c);
	fputs_unlocked(off ? "{\"ph\":\"X\",\"cat\":\"offcpu\",\"name\":" :
			     "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu\",\"name\":", c->out);
	if (off)
		fwrite_unlocked(c->blob + s->off + s->stack_len, 1, s->offcpu_len, c->out);
	else
		fwrite_unlocked(c->blob + s->off + s->stack_len + s->offcpu_len, 1, s->cpu_len,
				c->out);
	putc_unlocked(',', c->out);
	put_task_ts(c, ev->pid, ev->tid, ev->start);
	if (off) {
		const struct cap_offcpu *o = model__offcpu(c->ctx->model, &n) + e->idx;

		memcpy(p, ",\"dur\":", 7);
		p = view_put_us(p + 7, ev->end, ev->start);
		memcpy(p, ",\"args\":{\"state\":", 17);
		p = view_put_u64(p + 17, o->state);
		*p++ = ',';
		if (o->open) { /* not seen whole: CAP_OFFCPU_OPEN_* */
			memcpy(p, "\"open\":", 7);
			p = view_put_u64(p + 7, o->open);
			*p++ = ',';
		}
	} else {
		memcpy(p, ",\"args\":{", 9);
		p += 9;
	}
	memcpy(p, "\"cpu\":", 6);
	p = view_put_u64(p + 6, ev->cpu);
	fwrite_unlocked(buf, 1, p - buf, c->out);
	/* a track has one name: a thread renamed since says so per event */
	if (ev->comm != track_comm) {
		fputs_unlocked(",\"comm\":", c->out);
		view_json_str(c->out, model__comm_name(c->ctx->model, ev->comm), "");
	}
	fputs_unlocked(",\"stack\":", c->out);
	fwrite_unlocked(c->blob + s->off, 1, s->stack_len, c->out);
	fputs_unlocked("}}", c->out);
	return 0;
}

/* `{"ph":PH,"cat":"bio","name":DISK,"id":N,"pid":DEV,"tid":DEV,"ts":T` */
static void put_bio_head(struct chrome *c, char ph, const char *disk, uint32_t id,
			 uint32_t dpid, uint64_t t)
{
	sep(c);
	fprintf(c->out, "{\"ph\":\"%c\",\"cat\":\"bio\",\"name\":", ph);
	view_json_str(c->out, disk, "");
	fprintf(c->out, ",\"id\":%" PRIu32 ",", id);
	put_task_ts(c, dpid, dpid, t);
}

/* A request: "b" at issue with its details, "e" at completion. */
static int put_bio(struct chrome *c, const struct view_event *e, const struct view_evinfo *ev)
{
	static const char ops[] = "RWFD?";
	const struct model *m = c->ctx->model;
	size_t nev;
	const struct cap_bio *b = model__bio(m, &nev) + e->idx;
	const struct cstack *s = NULL;
	char buf[VIEW_DISK_MAX];
	const char *disk = view_disk(m, b->major, b->minor, buf);
	uint32_t dpid;
	int err = device_pid(c, b->major, b->minor, &dpid);

	if (!err && (ev->ustack || ev->kstack) && !(s = named_stack(c, ev)))
		err = -ENOMEM;
	if (err)
		return err;
	put_bio_head(c, 'b', disk, e->idx, dpid, ev->start);
	fprintf(c->out, ",\"args\":{\"op\":\"%c\",\"bytes\":%" PRIu32 ",\"dev\":\"%" PRIu32
		":%" PRIu32 "\",\"sector\":%" PRIu64 ",\"error\":%" PRId32 ",\"comm\":",
		ops[b->op < 4 ? b->op : 4], b->bytes, b->major, b->minor, b->sector, b->error);
	view_json_str(c->out, model__comm_name(m, ev->comm), "");
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"stack\":", ev->pid, ev->tid);
	if (s)
		fwrite_unlocked(c->blob + s->off, 1, s->stack_len, c->out);
	else
		fputs_unlocked("[]", c->out);
	fputs_unlocked("}}", c->out);
	put_bio_head(c, 'e', disk, e->idx, dpid, ev->end);
	putc_unlocked('}', c->out);
	return 0;
}

/* The track of an interrupt's wakeup: its CPU's and kind's. */
static int irq_track(struct chrome *c, const struct cap_wakeup *w, uint32_t *tid)
{
	uint32_t key = w->cpu << 1 | !!(w->flags & CAP_WAKEUP_F_SOFTIRQ);
	uint64_t *v;
	int ret = idmap__upsert(&c->irq_ids, key, 0, c->nirqs, &v);

	if (ret < 0)
		return ret;
	*tid = IRQ_PID - 1 - key;
	return ret ? ARRAY_PUSH(c->irqs, c->nirqs, c->irqs_cap, key) : 0;
}

/* `,"waited":{"ts":T,"dur":D}`: the waker's last wait before it woke the
 * thread at t, if any. */
static void put_waited(struct chrome *c, uint32_t tid, uint64_t t)
{
	const struct cap_offcpu *o = wait_index__before(c->waits, tid, t);
	char buf[96], *p = buf;

	if (!o)
		return;
	memcpy(p, ",\"waited\":{\"ts\":", 16);
	p = view_put_us(p + 16, o->start, c->t0);
	memcpy(p, ",\"dur\":", 7);
	p = view_put_us(p + 7, o->start + o->duration, o->start);
	*p++ = '}';
	fwrite_unlocked(buf, 1, p - buf, c->out);
}

/* `"cat":"wakeup","name":"wakeup","id":N,"pid":P,"tid":T,"ts":TS}` */
static void put_flow(struct chrome *c, const char *ph, uint32_t id, uint32_t pid,
		     uint32_t tid, uint64_t t)
{
	sep(c);
	fprintf(c->out, "{\"ph\":%s,\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":%" PRIu32 ",",
		ph, id);
	put_task_ts(c, pid, tid, t);
	putc_unlocked('}', c->out);
}

/* The args of a wakeup's slice after "cpu": the thread woken, the request
 * whose completion woke it, the waker's name where its track has another
 * and its last wait. */
static int put_wakeup_args(struct chrome *c, const struct cap_wakeup *w, uint32_t comm,
			   uint32_t track_comm)
{
	const struct model *m = c->ctx->model;
	const struct cap_bio *b = NULL;
	char label[48];
	int n, nk;

	fputs_unlocked(",\"woke\":", c->out);
	snprintf(label, sizeof(label), " %" PRIu32 "/%" PRIu32, w->pid, w->tid);
	view_json_str(c->out, model__comm_name(m, model__comm_id(m, w->tid, w->time)), label);
	if (w->flags & CAP_WAKEUP_F_IO) {
		n = view_waker_frames(c->ctx, w, c->fr, &nk);
		if (n < 0)
			return n;
		b = view_wake_bio(c->ctx, w, c->fr, nk);
	}
	if (b) {
		view_bio_label(c->ctx, b, label, sizeof(label));
		fputs_unlocked(",\"io\":", c->out);
		view_json_str(c->out, label, "");
	}
	if (w->waker_tid && comm != track_comm) {
		fputs_unlocked(",\"comm\":", c->out);
		view_json_str(c->out, model__comm_name(m, comm), "");
	}
	if (w->waker_tid)
		put_waited(c, w->waker_tid, w->time);
	return 0;
}

/* A wakeup: a zero-length slice on the waker's track, and a flow from it
 * to the end of the wait it ended when the trace has that wait. */
static int put_wakeup(struct chrome *c, const struct view_event *e)
{
	const struct model *m = c->ctx->model;
	size_t n;
	const struct cap_wakeup *w = model__wakeups(m, &n) + e->idx;
	const struct cap_offcpu *o;
	struct view_evinfo ev = { w->time, w->time, w->waker_pid, w->waker_tid,
				  model__comm_id(m, w->waker_tid, w->time), w->cpu,
				  filter__ustack(c->ctx->filter, w->ustack),
				  filter__kstack(c->ctx->filter, w->kstack), w->waker_cgroup };
	const struct cstack *s = named_stack(c, &ev);
	uint32_t pid = w->waker_tid ? w->waker_pid : IRQ_PID, tid = w->waker_tid;
	uint32_t track_comm = ev.comm;
	int err = s ? 0 : -ENOMEM;

	if (!err)
		err = w->waker_tid ? note_thread(c, &ev, &track_comm) : irq_track(c, w, &tid);
	if (err)
		return err;
	sep(c);
	fputs_unlocked("{\"ph\":\"X\",\"cat\":\"wakeup\",\"name\":\"wakes ", c->out);
	view_json_chars(c->out, model__comm_name(m, model__comm_id(m, w->tid, w->time)));
	fputs_unlocked("\",", c->out);
	put_task_ts(c, pid, tid, w->time);
	fprintf(c->out, ",\"dur\":0,\"args\":{\"cpu\":%" PRIu32, w->cpu);
	err = put_wakeup_args(c, w, ev.comm, track_comm);
	if (err)
		return err;
	fputs_unlocked(",\"stack\":", c->out);
	fwrite_unlocked(c->blob + s->off, 1, s->stack_len, c->out);
	fputs_unlocked("}}", c->out);
	if (!c->ended[e->idx])
		return 0;
	o = model__offcpu(m, &n) + c->ended[e->idx] - 1;
	put_flow(c, "\"s\"", e->idx, pid, tid, w->time);
	put_flow(c, "\"f\",\"bp\":\"e\"", e->idx, o->pid, o->tid, o->start + o->duration);
	return 0;
}

static void put_meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
		     const char *name, const char *more)
{
	sep(c);
	fprintf(c->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"args\":{\"name\":", what, pid, tid);
	view_json_str(c->out, name, more);
	fputs("}}", c->out);
}

/* A process is named by its main thread when seen, else by the capture's
 * name of the pid, else by its first thread seen. */
static const char *process_name(const struct chrome *c, const struct cthread *t)
{
	const struct model *m = c->ctx->model;
	const uint64_t *v = idmap__find(&c->thread_ids, (uint64_t)t->pid << 32 | t->pid, 0);
	uint32_t comm = v ? c->threads[*v].comm : model__comm_id(m, t->pid, c->t0);

	return model__comm_name(m, comm ? comm : t->comm);
}

/* "process_labels" of a process with a known cgroup: "CONTAINER,PATH"
 * (the container left out when none is named). */
static void put_labels(struct chrome *c, const struct cthread *t)
{
	const struct model *m = c->ctx->model;
	const uint64_t *v = idmap__find(&c->thread_ids, (uint64_t)t->pid << 32 | t->pid, 0);
	uint64_t cg = v ? c->threads[*v].cgroup : t->cgroup;
	char cbuf[VIEW_CONTAINER_MAX], gbuf[VIEW_CGROUP_MAX];
	const char *ctr, *path;

	if (!cg)
		return;
	ctr = view_container(m, cg, cbuf, NULL);
	path = view_cgroup(m, cg, gbuf);
	sep(c);
	fprintf(c->out, "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%" PRIu32
		",\"tid\":%" PRIu32 ",\"args\":{\"labels\":\"", t->pid, t->pid);
	if (strcmp(ctr, "-")) {
		view_json_chars(c->out, ctr);
		fputc(',', c->out);
	}
	view_json_chars(c->out, path);
	fputs("\"}}", c->out);
}

/* Process and thread names, then the devices'. */
static int put_names(struct chrome *c)
{
	const struct model *m = c->ctx->model;
	char disk[VIEW_DISK_MAX], more[48];
	struct idmap pids = { 0 };
	uint64_t *v;
	size_t i;
	int ret = 0;

	for (i = 0; i < c->nthreads; i++) {
		const struct cthread *t = &c->threads[i];

		ret = idmap__upsert(&pids, t->pid, 0, 0, &v);
		if (ret < 0)
			break;
		if (ret) {
			put_meta(c, "process_name", t->pid, t->pid, process_name(c, t), "");
			put_labels(c, t);
		}
		put_meta(c, "thread_name", t->pid, t->tid, model__comm_name(m, t->comm), "");
	}
	idmap__fini(&pids);
	if (ret >= 0 && c->nirqs)
		put_meta(c, "process_name", IRQ_PID, IRQ_PID, "interrupts", "");
	for (i = 0; ret >= 0 && i < c->nirqs; i++) {
		snprintf(more, sizeof(more), " CPU %" PRIu32, c->irqs[i] >> 1);
		put_meta(c, "thread_name", IRQ_PID, IRQ_PID - 1 - c->irqs[i],
			 c->irqs[i] & 1 ? "[softirq]" : "[hardirq]", more);
	}
	for (i = 0; ret >= 0 && i < c->ndevs; i++) {
		snprintf(more, sizeof(more), " (%" PRIu32 ":%" PRIu32 ")", c->devs[i].major,
			 c->devs[i].minor);
		put_meta(c, "process_name", DEVICE_PID0 + i, DEVICE_PID0 + i,
			 view_disk(m, c->devs[i].major, c->devs[i].minor, disk), more);
	}
	return ret < 0 ? ret : 0;
}

/* Which wakeups ended a wait of the trace (c->ended). */
static int note_ended(struct chrome *c, const struct view_event *v, size_t n)
{
	const struct model *m = c->ctx->model;
	size_t i, nw, no;
	const struct cap_wakeup *w0 = model__wakeups(m, &nw), *w;
	const struct cap_offcpu *o = model__offcpu(m, &no);

	c->ended = calloc(nw ? nw : 1, sizeof(*c->ended));
	if (!c->ended || wait_index__new(m, &c->waits))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		w = v[i].kind == CAP_KIND_OFFCPU ? model__waker(m, &o[v[i].idx]) : NULL;
		if (w)
			c->ended[w - w0] = v[i].idx + 1;
	}
	return 0;
}

static int put_events(struct chrome *c)
{
	struct view_event *v = NULL;
	struct view_evinfo ev;
	size_t i, n = 0;
	int err;

	err = view_events(c->ctx, VIEW_EVENTS_ALL, &v, &n) ?: note_ended(c, v, n);
	for (i = 0; !err && i < n; i++) {
		if (v[i].kind == CAP_KIND_WAKEUP) {
			err = put_wakeup(c, &v[i]);
			continue;
		}
		view_event_info(c->ctx, &v[i], &ev);
		if (v[i].kind == CAP_KIND_BIO)
			err = put_bio(c, &v[i], &ev);
		else
			err = put_sampled(c, &v[i], &ev);
	}
	free(v);
	return err;
}

static void put_head(struct chrome *c)
{
	const struct model *m = c->ctx->model;
	const struct cap_header *h = model__header(m);
	char when[64];

	view_fmt_walltime(m, c->t0, when, sizeof(when));
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"host\":", c->out);
	view_json_str(c->out, h->hostname, "");
	fprintf(c->out, ",\"start\":\"%s\",\"stkrec\":\"" STKREC_VERSION "\",\"cmdline\":", when);
	view_json_str(c->out, h->cmdline, "");
	fputs("},\"traceEvents\":[", c->out);
}

int view_chrome(struct report_ctx *ctx, FILE *out)
{
	struct chrome c = { .ctx = ctx, .out = out, .first = true };
	int err;

	c.t0 = model__header(ctx->model)->start_time;
	c.fr = malloc(VIEW_MAX_FRAMES * sizeof(*c.fr));
	c.blobf = open_memstream(&c.blob, &c.blob_len);
	err = c.fr && c.blobf ? 0 : -ENOMEM;
	if (!err) {
		put_head(&c);
		err = put_events(&c) ?: put_names(&c);
	}
	if (!err)
		fputs("\n]}\n", out);
	if (c.blobf)
		fclose(c.blobf);
	free(c.blob);
	free(c.fr);
	free(c.stacks);
	free(c.threads);
	free(c.devs);
	free(c.irqs);
	free(c.ended);
	wait_index__free(c.waits);
	idmap__fini(&c.irq_ids);
	idmap__fini(&c.stack_ids);
	idmap__fini(&c.thread_ids);
	idmap__fini(&c.dev_ids);
	return err;
}
