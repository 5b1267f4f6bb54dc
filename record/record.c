// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Recorder lifecycle, in the order a capture needs it: the BPF skeleton
 * (open -> tunables and map sizes -> load), while a thread reads the kernel
 * symbols; the first file (output.c: header, kernel identity, block
 * devices); the held command; the skeleton's filters and tables; the side band,
 * opened before the /proc scan so no mapping falls between the two; then
 * attach. recorder__run() streams events (drain.c) until a stop, then
 * closes the file (output.c). Teardown in recorder__free(), one place for
 * every path. Calls go one way: record.c -> drain.c -> output.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "stkrec.skel.h"
#include "pack/pack.h"
#include "record/policy.h"
#include "record/recorder_int.h"
#include "record/ringbuf.h"
#include "util/array.h"
#include "util/heap.h"

_Static_assert((int)STKREC_KIND_OFFCPU == CAP_KIND_OFFCPU && (int)STKREC_KIND_CPU == CAP_KIND_CPU &&
	       (int)STKREC_KIND_BIO == CAP_KIND_BIO && (int)STKREC_KIND_WAKEUP == CAP_KIND_WAKEUP &&
	       (int)STKREC_KIND_NR == CAP_KIND_MAX, "kind values match format");
_Static_assert((int)STKREC_LOST_RINGBUF == CAP_LOST_RINGBUF &&
	       (int)STKREC_LOST_USTACK == CAP_LOST_USTACK &&
	       (int)STKREC_LOST_KSTACK == CAP_LOST_KSTACK &&
	       (int)STKREC_LOST_STATE == CAP_LOST_STATE &&
	       (int)STKREC_LOST_FILE_FULL == CAP_LOST_FILE_FULL &&
	       (int)STKREC_LOST_NR == CAP_LOST_MAX, "lost reasons match format");
_Static_assert(STKREC_MAX_STACK == CAP_MAX_STACK_DEPTH, "stack depth matches format");

#define SIDEBAND_PAGES 128 /* 512 KiB per CPU */

void record_opts__init(struct record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->output = RECORD_DEFAULT_OUTPUT;
	o->output_fd = -1;
	o->events = RECORD_EV_ALL;
	o->freq = RECORD_DEFAULT_FREQ;
	o->cpu = -1;
	o->min_us = RECORD_DEFAULT_MIN_US;
	o->max_us = UINT64_MAX / 1000;
	o->state = -1;
	o->storage_entries = RECORD_DEFAULT_STORAGE;
	o->ringbuf_size = RECORD_DEFAULT_RINGBUF;
	o->call_graph = RECORD_CG_DWARF;
	o->unwind_rows = RECORD_DEFAULT_UNWIND_ROWS;
}

/* "0-3,5" from /sys/devices/system/cpu/online */
static int online_cpus(int **out, int *n)
{
	char buf[4096], *p = buf, *end;
	int *cpus = NULL, cnt = 0;
	size_t cap = 0;
	long a, b;
	ssize_t len;
	int fd;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = 0;
	while (*p && *p != '\n') {
		a = b = strtol(p, &end, 10);
		if (end == p || a < 0)
			goto bad;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (b < a || b > 65535)
			goto bad;
		if (ARRAY_RESERVE(cpus, cap, (size_t)(cnt + b - a + 1)))
			goto bad;
		while (a <= b)
			cpus[cnt++] = a++;
		p = *end == ',' ? end + 1 : end;
	}
	*out = cpus;
	*n = cnt;
	return cnt ? 0 : -EIO;
bad:
	free(cpus);
	return -EIO;
}


_Static_assert(RECORD_MAX_CGROUPS == STKREC_MAX_CGROUPS, "-G entries");

static void set_cgroup_tunables(struct recorder *r, struct stkrec_bpf *s)
{
	const struct record_opts *o = &r->opts;
	int i;

	s->rodata->record_cgroups = r->cg != NULL;
	s->rodata->nr_cgroup_filter = o->nr_cgroups;
	for (i = 0; i < o->nr_cgroups && i < RECORD_MAX_CGROUPS; i++) {
		s->rodata->cgroup_filter_level[i] = o->cgroup_levels[i];
		s->rodata->cgroup_filter_id[i] = o->cgroup_ids[i];
	}
	bpf_program__set_autoload(s->progs.stkrec_cgroup_mkdir, r->cg != NULL);
	bpf_program__set_autoload(s->progs.stkrec_cgroup_rmdir, r->cg != NULL);
}

static void set_tunables(struct recorder *r, struct stkrec_bpf *s)
{
	const struct record_opts *o = &r->opts;

	s->rodata->min_ns = o->min_us * 1000;
	s->rodata->max_ns = o->max_us >= UINT64_MAX / 1000 ? UINT64_MAX : o->max_us * 1000;
	s->rodata->state_filter = o->state;
	s->rodata->self_tgid = getpid();
	s->rodata->filter_tgid = o->nr_pids > 0 || (o->command && !o->all_cpus);
	s->rodata->follow_fork = o->command && !o->all_cpus;
	s->rodata->filter_tid = o->nr_tids > 0;
	s->rodata->user_only = o->user_threads;
	s->rodata->kernel_only = o->kernel_threads;
	s->rodata->want_ustack = !o->kernel_stacks_only;
	s->rodata->want_kstack = !o->user_stacks_only;
	s->rodata->include_idle = o->idle;
	s->rodata->target_cpu = o->cpu;
	/* Wake the reader at 1/8 full: the rest absorbs bursts while it runs. */
	s->rodata->wakeup_bytes = o->ringbuf_size / 8;
	s->rodata->test_skip_complete = o->test_skip_bio;
	s->rodata->test_skip_major = o->test_skip_major;
	s->rodata->test_skip_minor = o->test_skip_minor;
	s->rodata->test_skip_in = o->test_skip_in;
	s->rodata->test_skip_wake = o->test_skip_wake;
	s->rodata->dwarf_unwind = o->call_graph == RECORD_CG_DWARF;
	s->rodata->ucache_on = o->call_graph == RECORD_CG_DWARF && o->test_ucache != RECORD_UCACHE_OFF &&
			       o->test_ucache != RECORD_UCACHE_KERNEL;
	s->rodata->kcache_on = o->test_ucache != RECORD_UCACHE_OFF &&
			       o->test_ucache != RECORD_UCACHE_USER;
	s->rodata->test_ucache_verify = o->test_ucache == RECORD_UCACHE_VERIFY;
	s->rodata->want_python = record_wants_python(o);
	set_cgroup_tunables(r, s);
}

/* Open, size and load the skeleton as the policy (policy.h) decided;
 * raw_tp/sched_switch when tp_btf fails. */
static int load_bpf(struct recorder *r, bool raw_switch)
{
	const struct record_opts *o = &r->opts;
	bool off = o->events & RECORD_EV_OFFCPU, bio = o->events & RECORD_EV_BIO;
	bool wake = o->events & RECORD_EV_WAKEUP;
	unsigned with = r->with;
	struct stkrec_bpf *s;
	int err;

	s = stkrec_bpf__open();
	if (!s)
		return -errno;
	set_tunables(r, s);
	bpf_map__set_max_entries(s->maps.events, o->ringbuf_size);
	bpf_map__set_max_entries(s->maps.offcpu_start, o->storage_entries);
	if (!(with & RP_SLOT_ALLOC)) /* PREEMPT_RT: preallocated */
		bpf_map__set_map_flags(s->maps.offcpu_start, 0);
	/* tp_btf keeps off-CPU slots in task storage (5.11+), raw_tp in the hash */
	bpf_map__set_autocreate(s->maps.offcpu_task, off && !raw_switch);
	bpf_map__set_autocreate(s->maps.ucache, !raw_switch); /* the tp_btf programs' */
	bpf_map__set_max_entries(s->maps.bio_inflight, o->storage_entries);
	bpf_map__set_max_entries(s->maps.bio_submit, o->storage_entries);
	bpf_map__set_max_entries(s->maps.tids, o->nr_tids > 0 ? o->nr_tids : 1);
	if (o->call_graph == RECORD_CG_DWARF) {
		bpf_map__set_max_entries(s->maps.cfi_rows, UNWIND_CHUNKS(o->unwind_rows));
		bpf_map__set_max_entries(s->maps.umaps, UNWIND_PROCS);
		bpf_map__set_max_entries(s->maps.ufiles, UNWIND_FILES);
	}
	if (o->nr_pids > (int)bpf_map__max_entries(s->maps.tgids))
		bpf_map__set_max_entries(s->maps.tgids, o->nr_pids);
	bpf_program__set_autoload(s->progs.stkrec_switch, off && !raw_switch);
	bpf_program__set_autoload(s->progs.stkrec_exit_task, off && !raw_switch);
	bpf_program__set_autoload(s->progs.stkrec_switch_raw, off && raw_switch);
	/* the waker's program reads the slot map the switch programs use */
	s->rodata->wakeups_need_slot = off;
	s->rodata->wakeups_kept = off && wake;
	bpf_program__set_autoload(s->progs.stkrec_waking, wake && off && !raw_switch);
	bpf_program__set_autoload(s->progs.stkrec_waking_raw, wake && !(off && !raw_switch));
	waits__set_autoload(s, with & RP_WAITS, raw_switch, with & RP_WAITS_USER);
	bpf_program__set_autoload(s->progs.stkrec_cpu, o->events & RECORD_EV_CPU);
	bpf_program__set_autoload(s->progs.stkrec_exec, o->call_graph == RECORD_CG_DWARF);
	bpf_program__set_autoload(s->progs.stkrec_io_start, with & RP_IO_START);
	bpf_program__set_autoload(s->progs.stkrec_getrq, with & RP_GETRQ);
	bpf_program__set_autoload(s->progs.stkrec_rq_insert, bio);
	bpf_program__set_autoload(s->progs.stkrec_rq_issue, bio);
	bpf_program__set_autoload(s->progs.stkrec_rq_complete, bio);
	err = stkrec_bpf__load(s);
	if (err) {
		stkrec_bpf__destroy(s);
		return err;
	}
	r->skel = s;
	return 0;
}

static int fill_filters(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	int tg = bpf_map__fd(r->skel->maps.tgids), td = bpf_map__fd(r->skel->maps.tids);
	uint8_t one = 1;
	uint32_t id;
	int i;

	for (i = 0; i < o->nr_pids; i++) {
		if (bpf_map_update_elem(tg, &o->pids[i], &one, BPF_ANY))
			return -errno;
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (bpf_map_update_elem(td, &o->tids[i], &one, BPF_ANY))
			return -errno;
	}
	if (r->cmd.pid) {
		id = r->cmd.pid;
		if (bpf_map_update_elem(tg, &id, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int add_link(struct recorder *r, struct bpf_link *l)
{
	if (!l)
		return -errno;
	if (ARRAY_PUSH(r->links, r->nr_links, r->links_cap, l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	return 0;
}

static int attach_tracepoints(struct recorder *r, const char **step)
{
	static const struct {
		size_t off;
		const char *step;
	} progs[] = {
#define P(name, what) { offsetof(struct stkrec_bpf, progs.name), "attach " what }
		P(stkrec_fork, "sched_process_fork"),
		P(stkrec_exit, "sched_process_exit"),
		P(stkrec_exit_task, "sched_process_exit"),
		P(stkrec_exec, "sched_process_exec"),
		P(stkrec_io_start, "block_io_start"),
		P(stkrec_getrq, "block_getrq"),
		P(stkrec_rq_insert, "block_rq_insert"),
		P(stkrec_rq_issue, "block_rq_issue"),
		P(stkrec_rq_complete, "block_rq_complete"),
		P(stkrec_switch, "sched_switch"),
		P(stkrec_switch_raw, "sched_switch (raw_tp)"),
		P(stkrec_waking, "sched_waking"),
		P(stkrec_waking_raw, "sched_waking (raw_tp)"),
		P(stkrec_cgroup_mkdir, "cgroup_mkdir"),
		P(stkrec_cgroup_rmdir, "cgroup_rmdir"),
#undef P
	};
	struct bpf_program *p;
	size_t i;
	int err;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		p = *(struct bpf_program **)((char *)r->skel + progs[i].off);
		if (!bpf_program__autoload(p))
			continue;
		*step = progs[i].step;
		err = add_link(r, bpf_program__attach(p));
		if (err)
			return err;
	}
	return 0;
}

static int open_cpu_clock(const struct record_opts *o, int cpu)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};

	if (o->period) {
		a.sample_period = o->period;
	} else {
		a.freq = 1;
		a.sample_freq = o->freq;
	}
	return syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach_cpu_sampling(struct recorder *r, const char **step)
{
	int i, fd, err;

	*step = "open cpu-clock perf event";
	r->perf_fds = calloc(r->ncpus, sizeof(int));
	if (!r->perf_fds)
		return -ENOMEM;
	for (i = 0; i < r->ncpus; i++) {
		if (r->opts.cpu >= 0 && r->cpus[i] != r->opts.cpu)
			continue;
		fd = open_cpu_clock(&r->opts, r->cpus[i]);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* went offline meanwhile */
			return -errno;
		}
		r->perf_fds[r->nr_perf_fds++] = fd;
		*step = "attach perf_event program";
		err = add_link(r, bpf_program__attach_perf_event(r->skel->progs.stkrec_cpu, fd));
		if (err)
			return err;
	}
	return 0;
}

/* tp_btf/sched_switch where the policy allows it, else raw_tp. */
static int load_skeleton(struct recorder *r)
{
	int err = load_bpf(r, !(r->with & RP_TP_SWITCH));

	if (err && (r->with & RP_TP_SWITCH)) {
		r->tp_btf_err = err;
		err = load_bpf(r, true);
	}
	return err;
}

/* The kernel's ORC tables, for the kept kernel walks (bpf/kstack.bpf.h):
 * without them (kallsyms without data symbols) every stack is walked. */
static void set_orc(struct recorder *r)
{
	struct stkrec_bpf *s = r->skel;
	struct ksyms_orc orc;

	if (!s->rodata->kcache_on || ksyms__orc(r->ks, &orc))
		return;
	s->bss->korc_ip = orc.ip_start;
	s->bss->korc_nr = (orc.ip_stop - orc.ip_start) / 4;
	s->bss->korc_tab = orc.tab;
	s->bss->ktext_hi = orc.text_hi;
	s->bss->ktext_lo = orc.text_lo; /* last: the walks start keeping */
}

/* Our programs' own symbols, which kallsyms, read while they loaded, may
 * lack: the first kernel stack would read it all again (~0.1 s of CPU). */
static void name_progs(struct recorder *r)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, r->skel->obj)
		if (bpf_program__fd(p) >= 0 && ksyms__add_prog(r->ks, bpf_program__fd(p)))
			break;
}

/* What the loaded skeleton needs before the attach. */
static int setup_bpf(struct recorder *r, const char **step)
{
	int err;

	set_orc(r);
	name_progs(r);
	*step = "set BPF filters";
	err = fill_filters(r);
	if (err)
		return err;
	if (r->opts.call_graph == RECORD_CG_DWARF) {
		*step = "map unwind tables";
		struct unwind_maps um = {
			.rows_fd = bpf_map__fd(r->skel->maps.cfi_rows),
			.rows_max = r->opts.unwind_rows,
			.umaps_fd = bpf_map__fd(r->skel->maps.umaps),
			.ufiles_fd = bpf_map__fd(r->skel->maps.ufiles),
		};

		err = unwind__new(&um, &r->uw);
		if (err)
			return err;
	}
	if (record_wants_python(&r->opts)) {
		*step = "CPython frames";
		err = pytrack__new(bpf_map__fd(r->skel->maps.pyprocs), &r->skel->bss->py_procs,
				   &r->py);
		if (err)
			return err;
	}
	if (!r->opts.no_pack) {
		*step = "symbol pack";
		err = jitmaps__new(&r->jm);
		if (!err)
			err = jitroots__new(&r->jr);
		if (err)
			return err;
	}
	if (r->opts.events & RECORD_EV_BIO) {
		/* twice the requests the kernel tracks in flight, up to 1M */
		r->bio_stacks_mask = 1;
		while (r->bio_stacks_mask < 2 * r->opts.storage_entries - 1 &&
		       r->bio_stacks_mask < (1u << 20) - 1)
			r->bio_stacks_mask = r->bio_stacks_mask * 2 + 1;
		r->bio_stacks = calloc((size_t)r->bio_stacks_mask + 1, sizeof(*r->bio_stacks));
		if (!r->bio_stacks)
			return -ENOMEM;
	}
	*step = "create ring buffer reader";
	err = ringbuf__new(bpf_map__fd(r->skel->maps.events), recorder__on_event, r, &r->rb);
	if (err)
		return err;
	r->percpu_buf = calloc(r->ncpus_possible, sizeof(uint64_t));
	return r->percpu_buf ? 0 : -ENOMEM;
}

static int epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* A pipe or socket written to reports its reader gone (EPOLLERR, EPOLLHUP,
 * which need no event asked for): the recording then stops at once, even
 * with nothing to write. A file cannot be polled, and needs not be. */
static int watch_output(struct recorder *r)
{
	struct epoll_event ev = { .events = 0, .data.fd = r->opts.output_fd };

	if (r->opts.output_fd < 0 ||
	    !epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->opts.output_fd, &ev))
		return 0;
	return errno == EPERM ? 0 : -errno;
}

static int setup_poll(struct recorder *r)
{
	const int *fds;
	int i, n, err;

	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0)
		return -errno;
	err = watch_output(r);
	if (!err)
		err = epoll_add(r->epfd, ringbuf__fd(r->rb));
	n = sideband__fds(r->sb, &fds);
	for (i = 0; !err && i < n; i++)
		err = epoll_add(r->epfd, fds[i]);
	if (!err && r->cmd.pidfd >= 0)
		err = epoll_add(r->epfd, r->cmd.pidfd);
	return err;
}

/*
 * --call-graph dwarf with a command: the files it is about to map get their
 * rows before it runs (its program, found as execvp() will, and the
 * libraries the recorder maps too, libc and the dynamic loader among
 * them), so its first events wait only for its mappings, not for rows.
 * Best effort: a file that cannot be read is loaded when mapped, if ever.
 */
static void preload_tables(struct recorder *r)
{
	const char *prog = r->opts.command[0], *path = getenv("PATH");
	char buf[PATH_MAX], *line = NULL, *file;
	size_t cap = 0;
	FILE *f;

	while (!strchr(prog, '/') && path && *path) {
		size_t n = strcspn(path, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog) < (int)sizeof(buf) &&
		    !access(buf, X_OK)) {
			unwind__preload(r->uw, buf);
			break;
		}
		path += n + (path[n] == ':');
	}
	if (strchr(prog, '/'))
		unwind__preload(r->uw, prog);
	f = fopen("/proc/self/maps", "r");
	while (f && getline(&line, &cap, f) > 0) {
		file = strchr(line, '/');
		if (!file || !strstr(line, " r-xp "))
			continue;
		file[strcspn(file, "\n")] = '\0';
		unwind__preload(r->uw, file);
	}
	free(line);
	if (f)
		fclose(f);
}

/* No cgroup2 mount: recorded without cgroups (ids 0, no feature bit). */
static int open_cgroups(struct recorder *r)
{
	char mount[PATH_MAX];
	int err = cgroups__find_mount(mount, sizeof(mount));

	if (err == -ENOENT && !r->opts.nr_cgroups)
		return 0;
	if (!err)
		err = cgroups__new(mount, &r->cg);
	return err;
}

/* Kernel symbols are read on a thread while the kernel verifies the
 * programs: the two take about as long (60 ms; 100 ms and more). */
struct ksyms_job {
	pthread_t thread;
	struct ksyms **out;
	int err;
	bool started;
};

static void *ksyms_job__run(void *arg)
{
	struct ksyms_job *j = arg;

	j->err = ksyms__load(j->out);
	return NULL;
}

static void ksyms_job__start(struct ksyms_job *j, struct ksyms **out)
{
	j->out = out;
	j->started = !pthread_create(&j->thread, NULL, ksyms_job__run, j);
	if (!j->started)
		ksyms_job__run(j);
}

static int ksyms_job__join(struct ksyms_job *j)
{
	if (j->started)
		pthread_join(j->thread, NULL);
	j->started = false;
	return j->err;
}

/* The kernel symbols, the cgroups and the loaded programs. */
static int load_all(struct recorder *r, const char **step)
{
	struct ksyms_job kj;
	int err, kerr;

	ksyms_job__start(&kj, &r->ks);
	*step = "read the cgroup v2 hierarchy";
	err = open_cgroups(r);
	if (!err) {
		*step = "load BPF";
		err = load_skeleton(r);
	}
	kerr = ksyms_job__join(&kj);
	if (!err && kerr)
		*step = "read kernel symbols";
	return err ?: kerr;
}

static int start(struct recorder *r, const char **step)
{
	int err;

	*step = "list online CPUs";
	err = online_cpus(&r->cpus, &r->ncpus);
	if (err)
		return err;
	r->ncpus_possible = libbpf_num_possible_cpus();
	if (r->ncpus_possible <= 0)
		return r->ncpus_possible ? r->ncpus_possible : -ENODEV;
	err = load_all(r, step);
	if (err)
		return err;
	/* The free pages of the load (vmlinux BTF, kallsyms' growing arrays,
	 * on two arenas) go back before the ring and the tables come. */
	heap__release();
	if (r->opts.flight_ns || r->opts.flight_bytes) {
		*step = "open output";
		err = flight__new(&r->opts, &r->fl, &r->trg);
		if (err)
			return err;
	}
	err = recorder__open_output(r, step);
	if (err)
		return err;
	if (r->opts.command) {
		*step = "start command";
		err = command__fork_held(&r->cmd, r->opts.command);
		if (err)
			return err;
	}
	err = setup_bpf(r, step);
	if (err)
		return err;
	*step = "open perf side band";
	err = sideband__open(r->cpus, r->ncpus, SIDEBAND_PAGES,
			     r->uw ? SIDEBAND_EAGER : 0, &r->sb);
	if (err)
		return err;
	*step = "scan /proc";
	err = recorder__scan_proc(r, now_ns());
	if (err)
		return err;
	if (r->uw && r->opts.command)
		preload_tables(r);
	err = attach_tracepoints(r, step);
	if (!err && (r->opts.events & RECORD_EV_CPU))
		err = attach_cpu_sampling(r, step);
	if (err)
		return err;
	*step = "attach task iterators";
	err = waits__attach(r);
	/* a command's threads do not exist yet (but for the one held) */
	if (!err && !r->opts.command) {
		*step = "find waiting threads";
		err = recorder__scan_waits(r);
	}
	if (err)
		return err;
	*step = "set up polling";
	err = setup_poll(r);
	/* recording from here: -d and the first --switch-output period count
	 * from the attach, not the load */
	r->start_ns = now_ns();
	r->switch_from_ns = r->start_ns;
	return err;
}

int recorder__new(const struct record_opts *opts, const struct record_policy *policy,
		  struct recorder **out, const char **step)
{
	const char *dummy;
	struct recorder *r;
	int err;

	if (!step)
		step = &dummy;
	*step = "start";
	if (!opts || !policy || !out || !opts->output || !opts->events ||
	    (opts->output_fd >= 0 && (opts->switch_ns || opts->switch_bytes ||
				      opts->flight_ns || opts->flight_bytes))) {
		if (opts && opts->output_fd >= 0)
			close(opts->output_fd);
		return CAP_ERR_INVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		if (opts->output_fd >= 0)
			close(opts->output_fd);
		return -ENOMEM;
	}
	r->opts = *opts;
	r->with = policy->with;
	r->epfd = -1;
	r->seg_fd = -1;
	r->cmd.go_fd = r->cmd.err_fd = r->cmd.pidfd = -1;
	r->cmd.status = -1;
	libbpf_set_print(opts->libbpf_log);
	err = start(r, step);
	if (err) {
		recorder__free(r);
		return err;
	}
	*out = r;
	return 0;
}

static void detach_all(struct recorder *r)
{
	int i;

	for (i = 0; i < r->nr_links; i++)
		bpf_link__destroy(r->links[i]);
	r->nr_links = 0;
	for (i = 0; i < r->nr_perf_fds; i++)
		close(r->perf_fds[i]);
	r->nr_perf_fds = 0;
}

static int finish(struct recorder *r, int err)
{
	int e2;

	detach_all(r);
	if (!r->w) { /* a failed --switch-output left no file open */
		r->stop = CAP_STOP_ERROR;
		r->error = err;
		command__kill(&r->cmd);
		r->end_ns = now_ns();
		recorder__report_progress(r);
		return err;
	}
	if (!err)
		err = recorder__drain(r, UINT64_MAX / 2);
	/* Nothing more comes: the ring's pages leave before the pack's own
	 * memory comes (the default 16 MiB would add to its peak). */
	ringbuf__free(r->rb);
	r->rb = NULL;
	if (err) {
		r->stop = err == CAP_ERR_FULL ? CAP_STOP_MAX_SIZE : CAP_STOP_ERROR;
		r->error = err;
	}
	if (r->stop != CAP_STOP_COMMAND)
		command__kill(&r->cmd);
	r->end_ns = now_ns();
	if (r->fl)
		e2 = recorder__flight_end(r, r->end_ns);
	else
		e2 = recorder__close_output(r, r->stop, r->error, r->end_ns);
	recorder__report_progress(r);
	return err == CAP_ERR_FULL ? e2 : (err ? err : e2);
}

int recorder__run(struct recorder *r)
{
	int err = 0;

	if (!r->w)
		return CAP_ERR_INVAL; /* already run */
	r->stop = CAP_STOP_SIGNAL;
	if (r->cmd.pid) {
		err = command__release(&r->cmd);
		if (err)
			command__kill(&r->cmd);
	}
	if (!err)
		err = recorder__loop(r);
	return finish(r, err);
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	recorder__join_tail(r);
	flight__free(r->fl);
	if (r->seg_fd >= 0)
		close(r->seg_fd);
	if (r->opts.output_fd >= 0 && !r->files) /* never handed to a writer */
		close(r->opts.output_fd);
	command__kill(&r->cmd);
	command__close(&r->cmd);
	detach_all(r);
	waits__detach(r);
	free(r->links);
	free(r->perf_fds);
	if (r->epfd >= 0)
		close(r->epfd);
	ringbuf__free(r->rb);
	stkrec_bpf__destroy(r->skel);
	sideband__free(r->sb);
	procmaps__free(r->pm);
	unwind__free(r->uw);
	pytrack__free(r->py);
	jitmaps__free(r->jm);
	jitroots__free(r->jr);
	cgroups__free(r->cg);
	intern__free(r->in);
	ksyms__free(r->ks);
	cap_writer__free(r->w); /* NULL once recorder__run() finished it */
	pack__free(r->pk);      /* the same */
	threads__free(&r->threads);
	free(r->percpu_buf);
	free(r->bio_stacks);
	free(r->cpus);
	free(r);
}

void recorder__stop(struct recorder *r)
{
	r->stop_requested = 1;
}

int recorder__command_pid(const struct recorder *r)
{
	return r->cmd.pid;
}
