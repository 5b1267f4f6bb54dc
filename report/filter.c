// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "report/container.h"
#include "report/filter.h"
#include "util/array.h"

#define NS 1000000000LL
#define DAY_NS (86400 * NS)

/* "SS[.frac]" with at most 9 fraction digits: ns; -1 on junk. */
static int64_t parse_sec_frac(const char *s, const char **end)
{
	int64_t v = 0, frac = 0, scale = NS;
	int digits = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s) && v < 1000000000LL)
		v = v * 10 + (*s++ - '0');
	if (isdigit((unsigned char)*s))
		return -1;
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			if (digits++ < 9) {
				scale /= 10;
				frac += (*s - '0') * scale;
			}
			s++;
		}
	}
	*end = s;
	return v * NS + frac;
}

static int parse_2d(const char *s, int max)
{
	if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]))
		return -1;
	return (s[0] - '0') * 10 + (s[1] - '0') <= max ? (s[0] - '0') * 10 + (s[1] - '0') : -1;
}

/* "HH:MM:SS[.frac]" -> ns since midnight */
static int64_t parse_tod(const char *s, const char **end)
{
	int h = parse_2d(s, 23), m, sec;
	int64_t ns;

	if (h < 0 || s[2] != ':')
		return -1;
	m = parse_2d(s + 3, 59);
	if (m < 0 || s[5] != ':')
		return -1;
	sec = parse_2d(s + 6, 60);
	if (sec < 0 || isdigit((unsigned char)s[8]))
		return -1;
	ns = parse_sec_frac(s + 6, end);
	if (ns < 0)
		return -1;
	return (h * 3600LL + m * 60) * NS + ns;
}

/* "YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+HH:MM|-HH:MM]" -> realtime ns */
static int parse_iso(const char *s, int64_t *out)
{
	struct tm tm = { 0 };
	int64_t tod, off = 0;
	const char *p;
	time_t t;
	int n = 0;

	if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3 ||
	    n != 10 || (s[10] != 'T' && s[10] != ' '))
		return -EINVAL;
	tod = parse_tod(s + 11, &p);
	if (tod < 0 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	if (!*p) {
		t = mktime(&tm); /* local time */
	} else {
		if (*p == '+' || *p == '-') {
			int hh = parse_2d(p + 1, 23), mm = hh >= 0 && p[3] == ':' ? parse_2d(p + 4, 59) : -1;

			if (mm < 0 || p[6])
				return -EINVAL;
			off = (hh * 3600LL + mm * 60) * (*p == '-' ? -1 : 1);
		} else if (strcmp(p, "Z")) {
			return -EINVAL;
		}
		t = timegm(&tm) - off;
	}
	if (t == (time_t)-1)
		return -EINVAL;
	*out = (int64_t)t * NS + tod; /* tm holds midnight */
	return 0;
}

static int parse_when(const char *s, size_t len, struct filter_when *w)
{
	char buf[64];
	const char *end;
	int64_t v;

	memset(w, 0, sizeof(*w));
	if (!len)
		return 0;
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (len >= 10 && buf[4] == '-') {
		w->kind = 3;
		return parse_iso(buf, &w->abs_ns);
	}
	if (strchr(buf, ':')) {
		w->kind = 2;
		w->tod_ns = parse_tod(buf, &end);
		return w->tod_ns >= 0 && !*end ? 0 : -EINVAL;
	}
	v = parse_sec_frac(buf, &end);
	if (v < 0 || *end)
		return -EINVAL;
	w->kind = 1;
	w->rel_ns = v;
	return 0;
}

int filter__parse_time(struct filter *f, const char *spec)
{
	const char *comma = strchr(spec, ',');
	int err;

	if (!comma)
		return parse_when(spec, strlen(spec), &f->from) ?: (*spec ? 0 : -EINVAL);
	err = parse_when(spec, comma - spec, &f->from);
	if (!err)
		err = parse_when(comma + 1, strlen(comma + 1), &f->to);
	if (!err && !f->from.kind && !f->to.kind)
		err = -EINVAL;
	return err;
}

/* Comma-separated items of list pushed onto *v: 0, -EINVAL or -ENOMEM. */
static int add_list(char ***v, int *n, size_t *cap, const char *list)
{
	const char *p = list, *e;

	if (!*list)
		return -EINVAL;
	while (*p) {
		e = strchrnul(p, ',');
		if (e == p)
			return -EINVAL;
		if (ARRAY_RESERVE(*v, *cap, (size_t)*n + 1))
			return -ENOMEM;
		(*v)[*n] = strndup(p, e - p);
		if (!(*v)[*n])
			return -ENOMEM;
		(*n)++;
		p = *e ? e + 1 : e;
		if (!*p && *e)
			return -EINVAL; /* trailing comma */
	}
	return 0;
}

int filter__add_comms(struct filter *f, const char *list)
{
	return add_list(&f->comms, &f->ncomms, &f->comms_cap, list);
}

int filter__add_cgroups(struct filter *f, const char *list)
{
	return add_list(&f->cgroups, &f->ncgroups, &f->cgroups_cap, list);
}

static bool pattern_match(const char *pat, const char *s)
{
	if (!*s)
		return false;
	if (strpbrk(pat, "*?["))
		return !fnmatch(pat, s, 0);
	return strstr(s, pat) != NULL;
}

static bool cgroup_matches(const struct filter *f, const struct model_cgroup_info *g)
{
	int j;

	for (j = 0; j < f->ncgroups; j++) {
		if (pattern_match(f->cgroups[j], g->path) ||
		    pattern_match(f->cgroups[j], g->container->id) ||
		    pattern_match(f->cgroups[j], g->container->pod_uid))
			return true;
	}
	return false;
}

static int bind_cgroups(struct filter *f, const struct model *m)
{
	size_t i, n = model__nr_cgroups(m);
	struct model_cgroup_info g;

	free(f->cgroup_ok);
	f->cgroup_ok = NULL;
	if (!f->ncgroups)
		return 0;
	f->cgroup_ok = calloc(n ? n : 1, 1);
	if (!f->cgroup_ok)
		return -ENOMEM;
	for (i = 0; i < n && !model__cgroup(m, i, &g); i++)
		f->cgroup_ok[i] = cgroup_matches(f, &g);
	return 0;
}

bool filter__cgroup(const struct filter *f, const struct model *m, uint64_t cgroup)
{
	long i;

	if (!f->cgroup_ok)
		return true;
	i = model__cgroup_index(m, cgroup);
	return i >= 0 && f->cgroup_ok[i];
}

/* A time-of-day on the capture's (local) day; the next day when that is
 * more than 12 hours before the start (a capture across midnight). */
static uint64_t bind_when(const struct filter_when *w, const struct cap_header *h,
			  uint64_t dflt)
{
	int64_t real;
	struct tm tm;
	time_t t;

	switch (w->kind) {
	case 1:
		return h->start_time + w->rel_ns;
	case 2:
		t = h->start_realtime / NS;
		localtime_r(&t, &tm);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		real = (int64_t)mktime(&tm) * NS + w->tod_ns;
		if (real < (int64_t)h->start_realtime - DAY_NS / 2)
			real += DAY_NS;
		break;
	case 3:
		real = w->abs_ns;
		break;
	default:
		return dflt;
	}
	real -= h->clock_offset;
	return real < 0 ? 0 : (uint64_t)real;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int filter__bind(struct filter *f, const struct model *m)
{
	size_t i, n = model__nr_comms(m);
	int j;

	f->t_lo = bind_when(&f->from, model__header(m), 0);
	f->t_hi = bind_when(&f->to, model__header(m), UINT64_MAX);
	if (f->t_lo > f->t_hi)
		return -EINVAL;
	if (f->npids)
		qsort(f->pids, f->npids, sizeof(*f->pids), cmp_u32);
	if (f->ntids)
		qsort(f->tids, f->ntids, sizeof(*f->tids), cmp_u32);
	free(f->comm_ok);
	f->comm_ok = NULL;
	if (f->ncomms) {
		f->comm_ok = calloc(n ? n : 1, 1);
		if (!f->comm_ok)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			for (j = 0; j < f->ncomms; j++) {
				/* names are at most 15 bytes in the kernel */
				if (!strncmp(model__comm_name(m, i), f->comms[j], 15))
					f->comm_ok[i] = 1;
			}
		}
	}
	f->bound = true;
	return bind_cgroups(f, m);
}

void filter__free(struct filter *f)
{
	int i;

	for (i = 0; i < f->ncomms; i++)
		free(f->comms[i]);
	free(f->comms);
	for (i = 0; i < f->ncgroups; i++)
		free(f->cgroups[i]);
	free(f->cgroups);
	free(f->cgroup_ok);
	free(f->pids);
	free(f->tids);
	free(f->comm_ok);
	memset(f, 0, sizeof(*f));
}

bool filter__kind(const struct filter *f, enum cap_kind kind)
{
	return !f->kinds || (f->kinds & (1u << kind));
}

static bool in_list(const uint32_t *v, int n, uint32_t x)
{
	return bsearch(&x, v, n, sizeof(*v), cmp_u32) != NULL;
}

bool filter__task(const struct filter *f, const struct model *m, uint32_t pid,
		  uint32_t tid, uint32_t comm, uint64_t cgroup, uint64_t time)
{
	if (time < f->t_lo || time > f->t_hi)
		return false;
	if (f->npids && !in_list(f->pids, f->npids, pid))
		return false;
	if (f->ntids && !in_list(f->tids, f->ntids, tid))
		return false;
	if (f->comm_ok && (comm >= model__nr_comms(m) || !f->comm_ok[comm]))
		return false;
	if (!filter__cgroup(f, m, cgroup))
		return false;
	if (f->threads != FILTER_THREADS_ALL &&
	    model__is_kthread(m, tid) != (f->threads == FILTER_THREADS_KERNEL))
		return false;
	return true;
}

bool filter__offcpu(const struct filter *f, const struct model *m,
		    const struct cap_offcpu *e, uint32_t comm)
{
	uint64_t from, seen = model__offcpu_seen(m, e, &from);

	if (seen < f->min_ns || (f->max_ns && seen > f->max_ns))
		return false;
	if (f->has_state && (f->state ? !(e->state & f->state) : e->state != 0))
		return false;
	if (f->open_only && !(e->open & (CAP_OFFCPU_OPEN_START | CAP_OFFCPU_OPEN_END)))
		return false;
	return filter__task(f, m, e->pid, e->tid, comm, e->cgroup, from);
}

const struct model_group *filter__groups(const struct filter *f, const struct model *m,
					 size_t *n)
{
	const struct model_group *g = model__groups(m, n);

	if (g && !f->min_ns && !f->max_ns && !f->t_lo && f->t_hi == UINT64_MAX)
		return g;
	*n = 0;
	return NULL;
}

bool filter__offcpu_event(const struct filter *f, const struct model *m,
			  const struct cap_offcpu *e)
{
	return filter__offcpu(f, m, e, model__comm_id(m, e->tid, e->start));
}

bool filter__cpu_event(const struct filter *f, const struct model *m, const struct cap_cpu *e)
{
	return filter__task(f, m, e->pid, e->tid, model__comm_id(m, e->tid, e->time), e->cgroup,
			    e->time);
}

/* A streamed model's events (model__replay()) until one of kind matches. */
struct any_replay {
	const struct filter *f;
	const struct model *m;
	enum cap_kind kind;
};

static int replay_matches(void *arg, const struct cap_offcpu *off, const struct cap_cpu *cpu)
{
	struct any_replay *a = arg;

	if (off)
		return a->kind == CAP_KIND_OFFCPU && filter__offcpu_event(a->f, a->m, off);
	return a->kind == CAP_KIND_CPU && filter__cpu_event(a->f, a->m, cpu);
}

/* Whether an event of kind matches; a replay that fails to read counts as
 * a match, so that the view runs and reports the error. */
static bool any_replayed(const struct filter *f, const struct model *m, enum cap_kind kind)
{
	struct any_replay a = { .f = f, .m = m, .kind = kind };

	return model__replay(m, replay_matches, &a) != 0;
}

/* Whether a model group of kind matches, when the filters take or leave
 * groups whole (1 or 0); -1 when they cannot say (no groups). */
static int any_group(const struct filter *f, const struct model *m, enum cap_kind kind)
{
	const struct model_group *g;
	struct cap_cpu c;
	size_t i, n;

	g = filter__groups(f, m, &n);
	if (!g)
		return -1;
	for (i = 0; i < n; i++, g++) {
		if (g->k.kind != kind)
			continue;
		if (kind == CAP_KIND_OFFCPU) {
			if (filter__offcpu_event(f, m, model__group_offcpu(g)))
				return 1;
			continue;
		}
		model__group_cpu(g, &c);
		if (filter__cpu_event(f, m, &c))
			return 1;
	}
	return 0;
}

static bool any_streamed(const struct filter *f, const struct model *m, enum cap_kind kind)
{
	int ret = any_group(f, m, kind);

	return ret < 0 ? any_replayed(f, m, kind) : ret;
}

static bool any_offcpu(const struct filter *f, const struct model *m)
{
	size_t i, n;
	const struct cap_offcpu *e = model__offcpu(m, &n);

	if (model__streamed(m))
		return any_streamed(f, m, CAP_KIND_OFFCPU);
	for (i = 0; i < n; i++, e++)
		if (filter__offcpu_event(f, m, e))
			return true;
	return false;
}

static bool any_cpu(const struct filter *f, const struct model *m)
{
	size_t i, n;
	const struct cap_cpu *e = model__cpu(m, &n);

	if (model__streamed(m))
		return any_streamed(f, m, CAP_KIND_CPU);
	for (i = 0; i < n; i++, e++)
		if (filter__cpu_event(f, m, e))
			return true;
	return false;
}

static bool any_bio(const struct filter *f, const struct model *m)
{
	size_t i, n;
	const struct cap_bio *b = model__bio(m, &n);
	const uint32_t *comms = model__bio_comms(m);

	for (i = 0; i < n; i++, b++)
		if (filter__task(f, m, b->pid, b->tid, comms[i], b->cgroup, b->complete_time))
			return true;
	return false;
}

bool filter__none_match(const struct filter *f, const struct model *m)
{
	bool some = false;

	if (filter__kind(f, CAP_KIND_OFFCPU) && model__nr_events(m, CAP_KIND_OFFCPU)) {
		if (any_offcpu(f, m))
			return false;
		some = true;
	}
	if (filter__kind(f, CAP_KIND_CPU) && model__nr_events(m, CAP_KIND_CPU)) {
		if (any_cpu(f, m))
			return false;
		some = true;
	}
	if (filter__kind(f, CAP_KIND_BIO) && model__nr_events(m, CAP_KIND_BIO)) {
		if (any_bio(f, m))
			return false;
		some = true;
	}
	return some;
}

uint32_t filter__ustack(const struct filter *f, uint32_t id)
{
	return f->stacks == FILTER_STACKS_KERNEL ? CAP_STACK_NONE : id;
}

uint32_t filter__kstack(const struct filter *f, uint32_t id)
{
	return f->stacks == FILTER_STACKS_USER ? CAP_STACK_NONE : id;
}

char *filter_fmt_iso(int64_t realtime_ns, char *buf, size_t len)
{
	time_t t = realtime_ns / NS;
	long off, us = (realtime_ns % NS) / 1000;
	struct tm tm;

	if (realtime_ns < 0) {
		t = 0;
		us = 0;
	}
	localtime_r(&t, &tm);
	off = tm.tm_gmtoff / 60;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld%c%02ld:%02ld",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec, us, off < 0 ? '-' : '+', labs(off) / 60, labs(off) % 60);
	return buf;
}
