// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Waits open at the start and at the stop (bpf/waits.bpf.h): the threads
 * of the recorded scope already off CPU when the recording starts get
 * their slot from the start iterator, run once after the tracepoints are
 * attached; at each file's end, the stop iterator lists every wait still
 * open, as OFFCPU ring buffer records ending at the stop, which become
 * capture records like any other (events.c). A kernel without the
 * iterators (kfeatures: KF_TASK_ITER) records without them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "stkrec.skel.h"
#include "record/recorder_int.h"

#define ITER_BUF (64 * 1024)

/* The iterator programs of the slot map in use (task storage or hash);
 * user: the start's sleepable one, which reads the user stacks. */
void waits__set_autoload(struct stkrec_bpf *s, bool on, bool raw, bool user)
{
	bpf_program__set_autoload(s->progs.stkrec_waits_start, on && !raw && !user);
	bpf_program__set_autoload(s->progs.stkrec_waits_start_u, on && !raw && user);
	bpf_program__set_autoload(s->progs.stkrec_waits_stop, on && !raw);
	bpf_program__set_autoload(s->progs.stkrec_waits_start_raw, on && raw && !user);
	bpf_program__set_autoload(s->progs.stkrec_waits_start_u_raw, on && raw && user);
	bpf_program__set_autoload(s->progs.stkrec_waits_stop_raw, on && raw);
}

/* The loaded one of a program's variants, or NULL. */
static struct bpf_program *loaded(struct bpf_program *const p[], int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (bpf_program__autoload(p[i]))
			return p[i];
	return NULL;
}

static struct bpf_program *iter_prog(const struct recorder *r, bool stop)
{
	const struct stkrec_bpf *s = r->skel;
	struct bpf_program *start[] = { s->progs.stkrec_waits_start, s->progs.stkrec_waits_start_u,
					s->progs.stkrec_waits_start_raw,
					s->progs.stkrec_waits_start_u_raw };
	struct bpf_program *end[] = { s->progs.stkrec_waits_stop, s->progs.stkrec_waits_stop_raw };

	return stop ? loaded(end, 2) : loaded(start, 4);
}

int waits__attach(struct recorder *r)
{
	struct bpf_program *start = iter_prog(r, false), *stop = iter_prog(r, true);

	if (!start)
		return 0;
	r->waits_start = bpf_program__attach_iter(start, NULL);
	if (!r->waits_start)
		return -errno;
	r->waits_stop = bpf_program__attach_iter(stop, NULL);
	return r->waits_stop ? 0 : -errno;
}

void waits__detach(struct recorder *r)
{
	bpf_link__destroy(r->waits_start);
	bpf_link__destroy(r->waits_stop);
	r->waits_start = r->waits_stop = NULL;
}

/* Where an iterator's output goes: records through events.c, until the
 * writer refuses one (--max-size): the rest are counted. */
struct iter_out {
	struct recorder *r; /* NULL: the output is not read (the start) */
	bool full;
	uint64_t unwritten;
};

/* The complete records at the front of buf[0, len); returns the bytes
 * used, or the error. */
static ssize_t take_records(struct iter_out *o, const uint8_t *buf, size_t len)
{
	struct stkrec_stack_ev e;
	size_t used = 0, n;
	int err;

	while (len - used >= STKREC_STACK_EV_HDR_SIZE) {
		memcpy(&e, buf + used, STKREC_STACK_EV_HDR_SIZE);
		n = stkrec_stack_ev_size(&e);
		if (n > sizeof(e))
			return -EPROTO; /* no such record: the stream cannot go on */
		if (len - used < n)
			break;
		memcpy(&e, buf + used, n);
		err = o->full ? CAP_ERR_FULL : recorder__convert(o->r, &e, n);
		if (err == CAP_ERR_FULL) {
			o->full = true;
			o->unwritten++;
		} else if (err < 0) {
			return err;
		}
		used += n;
	}
	return used;
}

/* Run iterator link to its end, its output into o. */
static int run_iter(struct bpf_link *link, struct iter_out *o)
{
	int fd = bpf_iter_create(bpf_link__fd(link)), err = 0;
	uint8_t *buf = malloc(ITER_BUF);
	size_t have = 0;
	ssize_t n, used;

	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	while ((n = read(fd, buf + have, ITER_BUF - have)) > 0 || (n < 0 && errno == EINTR)) {
		if (n < 0 || !o->r)
			continue;
		have += n;
		used = take_records(o, buf, have);
		if (used < 0) {
			err = used;
			goto out;
		}
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	if (n < 0)
		err = -errno;
	else if (have)
		err = -EPROTO; /* a record cut short */
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

int recorder__scan_waits(struct recorder *r)
{
	struct iter_out o = { NULL };

	return r->waits_start ? run_iter(r->waits_start, &o) : 0;
}

int recorder__write_open_waits(struct recorder *r, uint64_t now)
{
	struct cap_lost l = { .kind = CAP_KIND_OFFCPU, .reason = CAP_LOST_FILE_FULL,
			      .cpu = 0xffffffffu };
	struct iter_out o = { r };
	int err;

	if (!r->waits_stop)
		return 0;
	r->skel->bss->stop_ns = now;
	err = run_iter(r->waits_stop, &o);
	if (err || !o.unwritten)
		return err;
	l.count = o.unwritten;
	return cap_writer__append(r->w, CAP_REC_LOST, &l, sizeof(l), NULL, 0);
}
