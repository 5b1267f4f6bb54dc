// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec record: check what can be checked before touching BPF (privileges,
 * BTF, tracepoints, targets), run the recorder, and explain the result: a
 * status line on a terminal, a summary at the end, one line per error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "record/policy.h"
#include "record/record.h"
#include "src/commands.h"
#include "src/log.h"
#include "src/record_opts.h"
#include "src/util.h"
#include "util/heap.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static struct recorder *volatile active;
static volatile sig_atomic_t stop_pending; /* a signal came during setup */
static bool status_line;

static void on_signal(int sig)
{
	stop_pending = 1;
	if (active)
		recorder__stop(active);
}

/* SIGUSR2: a flight recorder's dump (perf's --switch-output=signal). */
static void on_dump_signal(int sig)
{
	(void)sig;
	if (active)
		recorder__dump(active);
}

static int install_signals(const struct record_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal }, ign = { .sa_handler = SIG_IGN };
	struct sigaction usr = { .sa_handler = on_dump_signal };

	/* no SA_RESTART: the poll loop must wake up to see the request */
	sigemptyset(&sa.sa_mask);
	sigemptyset(&ign.sa_mask);
	/* a capture pipe whose reader went away fails the write (EPIPE), and
	 * the recording stops as on any failed write: not killed mid-block */
	sigemptyset(&usr.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGPIPE, &ign, NULL))
		return -errno;
	if ((o->flight_ns || o->flight_bytes) && sigaction(SIGUSR2, &usr, NULL))
		return -errno;
	return 0;
}

/*
 * -o -: the capture goes to standard output, and standard output then holds
 * nothing else: a terminal is refused (binary), and COMMAND's own output,
 * which would land in the middle of the capture, goes to stderr. The
 * recorder holds the pipe alone, so its reader sees the end as soon as the
 * capture is finished. 0 or the exit code, the error printed.
 */
static int output_to_stdout(struct record_opts *o)
{
	int fd;

	if (strcmp(o->output, "-"))
		return 0;
	if (isatty(STDOUT_FILENO)) {
		log_usage_error("record", "-o -: standard output is a terminal, and a capture "
				"is binary: redirect it (> FILE, | stkrec report -i -) or use "
				"-o FILE");
		return EXIT_USAGE;
	}
	fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		log_error("record: standard output: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_FAIL;
	}
	o->output_fd = fd;
	o->output = "<stdout>";
	/* the pack is built from the file read back, which a pipe cannot */
	if (!o->no_pack) {
		o->no_pack = true;
		log_warn("record: -o -: no symbol pack on a pipe; where the binaries are, "
			 "'stkrec pack - -o FILE' adds one to what arrives");
	}
	return 0;
}

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static bool privileged(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d))
		return geteuid() == 0;
	if (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON))
		return true;
	return has_cap(d, CAP_SYS_ADMIN); /* kernels before 5.8 */
}

/* A -p PID must be a process (its tgid), a -t TID any thread. */
static int check_targets(const struct record_opts *o)
{
	char path[64], line[256];
	unsigned long tgid;
	FILE *f;
	int i;

	for (i = 0; i < o->nr_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%u/status", o->pids[i]);
		f = fopen(path, "r");
		if (!f) {
			log_error("record: no process with PID %u", o->pids[i]);
			return -ESRCH;
		}
		tgid = 0;
		while (fgets(line, sizeof(line), f) && sscanf(line, "Tgid: %lu", &tgid) != 1)
			;
		fclose(f);
		if (tgid != o->pids[i]) {
			log_error("record: %u is a thread of process %lu: use -t %u or -p %lu",
				  o->pids[i], tgid, o->pids[i], tgid);
			return -ESRCH;
		}
	}
	for (i = 0; i < o->nr_tids; i++) {
		snprintf(path, sizeof(path), "/proc/%u/task/%u", o->tids[i], o->tids[i]);
		if (access(path, F_OK) && (snprintf(path, sizeof(path), "/proc/%u", o->tids[i]),
					   access(path, F_OK))) {
			log_error("record: no thread with TID %u", o->tids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

/* What the kernel policy decided (record/policy.h), as its notes say. */
static void say_policy(const struct record_policy *p)
{
	const struct record_policy_note *n;
	int i;

	for (i = 0, n = p->notes; i < p->nr_notes; i++, n++) {
		if (n->level == RECORD_POLICY_ERROR)
			log_error("record: %s", n->text);
		else if (n->level == RECORD_POLICY_WARN)
			log_warn("record: %s", n->text);
		else
			log_debug(1, "record: %s", n->text);
	}
}

static int preflight(struct record_opts *o, struct record_policy *pol)
{
	int err;

	if (!privileged()) {
		log_error("record: needs root (or CAP_BPF and CAP_PERFMON)");
		return -EPERM;
	}
	err = record_policy__decide(o, pol);
	say_policy(pol);
	return err ? err : check_targets(o);
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* Warnings are expected while probing fallbacks: -v shows them,
	 * -vv adds libbpf's debug output (verifier logs). */
	if (log_verbosity < (level == LIBBPF_DEBUG ? 2 : 1))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void human_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= 10u << 20)
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else if (b >= 10u << 10)
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, len, "%" PRIu64 " B", b);
}

static uint64_t total(const uint64_t *v, int n)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += v[i];
	return t;
}

static void on_progress(void *ctx, const struct record_progress *p)
{
	uint64_t ev = total(p->events, CAP_KIND_MAX);
	double s = p->elapsed_ns / 1e9;
	char size[32];

	if (!status_line)
		return;
	human_bytes(p->bytes, size, sizeof(size));
	fprintf(stderr, "\r\033[K%6.0fs  %8.0f events/s  lost %" PRIu64 "  %s",
		s, s > 0 ? ev / s : 0.0, total(p->lost, CAP_KIND_MAX), size);
	fflush(stderr);
}

/* "wait of 812.3 ms by tid 1234 (app)", "SIGUSR2", "the end" */
static void print_trigger(FILE *f, const struct record_dump *d)
{
	const struct cap_trigger *t = &d->trigger;

	if (t->kind == CAP_TRIGGER_WAIT)
		fprintf(f, "a wait of %.1f ms by tid %u (%s)", t->wait_duration / 1e6, t->tid,
			d->comm);
	else if (t->kind == CAP_TRIGGER_SIGNAL)
		fprintf(f, "SIGUSR2");
	else
		fprintf(f, "the recording's end");
	if (t->triggers > 1)
		fprintf(f, " and %u more", t->triggers - 1);
}

/* One line per dump, in one write, whatever -q says: where it went. */
static void on_dump(void *ctx, const struct record_dump *d)
{
	char *line = NULL, size[32];
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	(void)ctx;
	if (!f)
		return;
	human_bytes(d->bytes, size, sizeof(size));
	fprintf(f, "%sstkrec: dump %u: %s (%.1f s window, %" PRIu64 " events, %s) for ",
		status_line ? "\r\033[K" : "", d->trigger.dump, d->path,
		(d->trigger.window_end - d->trigger.window_start) / 1e9, d->events, size);
	print_trigger(f, d);
	fprintf(f, ", complete %.2f s after it", d->latency_ns / 1e9);
	if (d->err)
		fprintf(f, "; INCOMPLETE: %s", cap_strerror(d->err));
	fprintf(f, "\n");
	if (!fclose(f) && write(STDERR_FILENO, line, len) < 0)
		log_debug(1, "record: stderr: %s", strerror(errno));
	free(line);
}

static const char *stop_name(enum cap_stop_reason r)
{
	switch (r) {
	case CAP_STOP_SIGNAL: return "signal";
	case CAP_STOP_DURATION: return "duration reached";
	case CAP_STOP_COMMAND: return "command exited";
	case CAP_STOP_ERROR: return "error";
	case CAP_STOP_MAX_SIZE: return "size limit";
	case CAP_STOP_SWITCH: return "output switched";
	}
	return "unknown";
}

/* The symbol pack of the last file, and the time all packs took; with -q
 * only what went wrong. */
static void pack_summary(const struct record_progress *p, bool quiet)
{
	const struct cap_pack_info *k = &p->pack;

	if (p->pack_err) {
		log_warn("record: %s: no symbol pack: %s (run 'stkrec pack %s' while the "
			 "binaries are here)", p->path, cap_strerror(p->pack_err), p->path);
		return;
	}
	if (!p->packs)
		return;
	if (!quiet)
		fprintf(stderr, "  symbol pack: %" PRIu64 " binaries, %" PRIu64 " symbols, %"
			PRIu64 " addresses (%" PRIu64 " unnamed), %" PRIu64 " JIT entries; "
			"%.3f s%s\n", k->objects, k->symbols, k->addresses, k->unnamed,
			k->jit_entries, p->pack_ns / 1e9, p->packs > 1 ? " for all files" : "");
	if (k->left_out)
		log_warn("record: symbol pack of %s: %" PRIu64 " names left out at its bounds "
			 "or the size limit", p->path, k->left_out);
}

/* What the flight recorder held and wrote (each dump had its line). */
static void flight_summary(const struct record_progress *p)
{
	char peak[32];

	human_bytes(p->held_peak, peak, sizeof(peak));
	fprintf(stderr, "  flight recorder: %u dump%s%s%s, at most %s held in memory", p->dumps,
		p->dumps == 1 ? "" : "s", p->dumps ? ", the last " : "", p->dumps ? p->path : "",
		peak);
	if (p->max_dumps_reached)
		fprintf(stderr, "; --max-dumps reached");
	if (p->triggers_ignored)
		fprintf(stderr, "; %" PRIu64 " triggers past it", p->triggers_ignored);
	fprintf(stderr, "\n");
}

static void summary(const struct recorder *r, const struct record_opts *o)
{
	struct record_progress p;
	uint64_t ev;
	char size[32];

	recorder__progress(r, &p);
	if (o->quiet) {
		pack_summary(&p, true);
		return;
	}
	ev = total(p.events, CAP_KIND_MAX);
	human_bytes(p.bytes, size, sizeof(size));
	if (status_line)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "stkrec: recorded %.1f s (%s", p.elapsed_ns / 1e9, stop_name(p.stop));
	if (p.command_status >= 0)
		fprintf(stderr, ", exit status %d", p.command_status);
	fprintf(stderr, ")\n  events: %" PRIu64 " off-CPU, %" PRIu64 " CPU, %" PRIu64
		" block I/O", p.events[CAP_KIND_OFFCPU], p.events[CAP_KIND_CPU],
		p.events[CAP_KIND_BIO]);
	if (o->events & RECORD_EV_WAKEUP)
		fprintf(stderr, ", %" PRIu64 " wakeups", p.events[CAP_KIND_WAKEUP]);
	fprintf(stderr, "\n  lost:   %" PRIu64 " off-CPU, %" PRIu64 " CPU, %" PRIu64
		" block I/O, %" PRIu64 " side band", p.lost[CAP_KIND_OFFCPU],
		p.lost[CAP_KIND_CPU], p.lost[CAP_KIND_BIO], p.lost[CAP_KIND_SIDEBAND]);
	if (o->events & RECORD_EV_WAKEUP)
		fprintf(stderr, ", %" PRIu64 " wakeups", p.lost[CAP_KIND_WAKEUP]);
	fprintf(stderr, "\n  stacks: %" PRIu64 " distinct; missed %" PRIu64 " user, %" PRIu64
		" kernel\n", p.stacks, p.ustack_missed, p.kstack_missed);
	if (o->flight_ns || o->flight_bytes)
		flight_summary(&p);
	else
		fprintf(stderr, "  wrote %s: %s, %.1f bytes/event\n", p.path, size,
			ev ? (double)p.bytes / ev : 0.0);
	if (o->nr_cgroups)
		fprintf(stderr, "  -G kept out: %" PRIu64 " off-CPU, %" PRIu64 " CPU, %" PRIu64
			" block I/O, %" PRIu64 " wakeups\n", p.cgroup_filtered[CAP_KIND_OFFCPU],
			p.cgroup_filtered[CAP_KIND_CPU], p.cgroup_filtered[CAP_KIND_BIO],
			p.cgroup_filtered[CAP_KIND_WAKEUP]);
	if (o->test_ucache == RECORD_UCACHE_VERIFY) {
		fprintf(stderr, "  test: %" PRIu64 " kept user stacks differed from a new walk\n",
			p.ucache_wrong);
		fprintf(stderr, "  test: %" PRIu64 " kept kernel stacks differed from a new walk\n",
			p.kcache_wrong);
	}
	if (p.untraced || p.recovered)
		fprintf(stderr, "  switches no probe saw: %" PRIu64 " waits ended by the scheduler's "
			"clock, %" PRIu64 " waits lost\n", p.recovered, p.untraced);
	if (p.untraced_wake)
		fprintf(stderr, "  wakeups no probe saw: %" PRIu64 " sleeps kept without their "
			"waker\n", p.untraced_wake);
	if (p.cgroups_unnamed)
		fprintf(stderr, "  cgroups: %" PRIu64 " ids found nowhere (gone before the "
			"recorder saw them): written without a path\n", p.cgroups_unnamed);
	if (p.files > 1 && !(o->flight_ns || o->flight_bytes))
		fprintf(stderr, "  %u files: the last one above, the others %s.<timestamp>\n",
			p.files, o->output);
	pack_summary(&p, false);
}

/* "PID 181" or "PIDs 181, 182": the first few ids of a -p or -t list. */
static void print_ids(FILE *f, const char *what, const uint32_t *ids, int n)
{
	int i;

	fprintf(f, "%s%s", what, n > 1 ? "s" : "");
	for (i = 0; i < n && i < 8; i++)
		fprintf(f, "%s %u", i ? "," : "", ids[i]);
	if (n > 8)
		fprintf(f, ", ...");
}

/* What is recorded: "off-CPU, CPU at 49 Hz, block I/O". */
static void print_kinds(FILE *f, const struct record_opts *o)
{
	const char *sep = "";

	if (o->events & RECORD_EV_OFFCPU) {
		fprintf(f, "off-CPU");
		sep = ", ";
	}
	if (o->events & RECORD_EV_CPU) {
		if (o->period)
			fprintf(f, "%sCPU every %" PRIu64 " ns", sep, o->period);
		else
			fprintf(f, "%sCPU at %" PRIu64 " Hz", sep, o->freq);
		sep = ", ";
	}
	if (o->events & RECORD_EV_BIO) {
		fprintf(f, "%sblock I/O", sep);
		sep = ", ";
	}
	if (o->events & RECORD_EV_WAKEUP)
		fprintf(f, "%swakeups", sep);
}

/* Whose: "the whole system", "PID 181", "sleep (PID 42) and its children". */
static void print_scope(FILE *f, const struct record_opts *o, int cmd_pid)
{
	if (o->nr_pids)
		print_ids(f, "PID", o->pids, o->nr_pids);
	else if (o->nr_tids)
		print_ids(f, "TID", o->tids, o->nr_tids);
	else if (o->command && !o->all_cpus)
		fprintf(f, "%.64s (PID %d) and its children", o->command[0], cmd_pid);
	else if (o->user_threads)
		fprintf(f, "user threads");
	else if (o->kernel_threads)
		fprintf(f, "kernel threads");
	else
		fprintf(f, "the whole system");
	if (o->nr_cgroups)
		fprintf(f, " in %d cgroup%s (-G)", o->nr_cgroups, o->nr_cgroups > 1 ? "s" : "");
	if (o->cpu >= 0)
		fprintf(f, " on CPU %d", o->cpu);
}

/* How it stops: "for 10 s or until sleep (PID 42) exits or Ctrl-C". */
static void print_stops(FILE *f, const struct record_opts *o, int cmd_pid)
{
	char what[3][96];
	int n = 0, i;

	if (o->command && !o->all_cpus)
		snprintf(what[n++], sizeof(what[0]), "it exits");
	else if (o->command)
		snprintf(what[n++], sizeof(what[0]), "%.64s (PID %d) exits", o->command[0],
			 cmd_pid);
	if (o->max_size)
		snprintf(what[n++], sizeof(what[0]), "the capture reaches %.1f MiB",
			 o->max_size / 1048576.0);
	snprintf(what[n++], sizeof(what[0]), "Ctrl-C");
	if (o->duration_ns)
		fprintf(f, "for %g s or ", o->duration_ns / 1e9);
	fprintf(f, "until");
	for (i = 0; i < n; i++)
		fprintf(f, "%s %s", !i ? "" : i < n - 1 ? "," : " or", what[i]);
}

/* With --flight-recorder: what is held, and what writes a file. */
static void print_flight(FILE *f, const struct record_opts *o)
{
	char size[32];

	if (!o->flight_ns && !o->flight_bytes)
		return;
	if (o->flight_ns) {
		fprintf(f, ", holding the last %g s", o->flight_ns / 1e9);
	} else {
		human_bytes(o->flight_bytes, size, sizeof(size));
		fprintf(f, ", holding the last %s", size);
	}
	fprintf(f, " in memory; a file at SIGUSR2");
	if (o->trigger_wait_ns)
		fprintf(f, " or a wait >= %g ms", o->trigger_wait_ns / 1e6);
	else
		fprintf(f, " or the end");
	if (o->post_ns)
		fprintf(f, " (%g s after it)", o->post_ns / 1e9);
	if (o->max_dumps)
		fprintf(f, ", at most %u", o->max_dumps);
}

/*
 * The one line that says recording has begun, printed once every program
 * is attached (recorder__new() returned) and before the held command runs
 * (recorder__run() releases it), in one write: a script may wait for it.
 * "stkrec: recording KINDS of SCOPE (call graph: MODE) [for N s or] until
 * STOPS".
 */
static void say_recording(const struct recorder *r, const struct record_opts *o)
{
	int pid = recorder__command_pid(r);
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&line, &len);
	if (!f)
		return;
	fprintf(f, "stkrec: recording ");
	print_kinds(f, o);
	fprintf(f, " of ");
	print_scope(f, o, pid);
	if (o->kernel_stacks_only)
		fprintf(f, " (kernel stacks only) ");
	else
		fprintf(f, " (%scall graph: %s) ", o->user_stacks_only ? "user stacks only, " : "",
			o->call_graph == RECORD_CG_DWARF ? "dwarf" : "fp");
	print_stops(f, o, pid);
	print_flight(f, o);
	fprintf(f, "\n");
	/* one write(2): a reader polling the file or pipe never sees half */
	if (!fclose(f) && write(STDERR_FILENO, line, len) < 0)
		log_debug(1, "record: stderr: %s", strerror(errno));
	free(line);
}

static char *join_cmdline(int argc, char **argv)
{
	size_t len = sizeof("stkrec"), off;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	off = snprintf(s, len, "stkrec");
	for (i = 0; i < argc; i++)
		off += snprintf(s + off, len - off, " %s", argv[i]);
	return s;
}

static void explain_start_failure(const struct record_opts *o, const char *step, int err)
{
	if (!strcmp(step, "open output"))
		log_error("record: cannot write '%s': %s", o->output, cap_strerror(err));
	else if (!strcmp(step, "load BPF"))
		log_error("record: cannot load the BPF programs: %s%s", cap_strerror(err),
			  log_verbosity ? "" : " (-v shows libbpf's messages)");
	else if (!strcmp(step, "open cpu-clock perf event") && err == -EINVAL && !o->period)
		log_error("record: cannot sample at %" PRIu64 " Hz: above "
			  "kernel.perf_event_max_sample_rate?", o->freq);
	else
		log_error("record: %s: %s", step, cap_strerror(err));
}

/* Errors a failing write(2) of the capture returns. */
static bool write_error(int err)
{
	return err == -ENOSPC || err == -EIO || err == -EDQUOT || err == -EFBIG ||
	       err == -EROFS || err == -EPIPE;
}

static int record(struct record_opts *o, const struct record_policy *pol)
{
	struct record_progress p;
	struct recorder *r = NULL;
	const char *step = NULL;
	int err;

	err = recorder__new(o, pol, &r, &step);
	if (err) {
		explain_start_failure(o, step, err);
		return EXIT_FAIL;
	}
	active = r;
	recorder__progress(r, &p);
	if (p.no_cgroup2)
		log_warn("record: no cgroup2 file system is mounted (cgroup v1 only): "
			 "events are recorded without their cgroup");
	if (p.tp_btf_err)
		log_warn("record: the kernel refused the tp_btf programs (%s%s): recording "
			 "through raw_tp, which walks every stack anew",
			 cap_strerror(p.tp_btf_err), log_verbosity ? "" : "; -v shows why");
	if (stop_pending) /* Ctrl-C while loading: stop at once, cleanly */
		recorder__stop(r);
	else if (!o->quiet)
		say_recording(r, o);
	status_line = !o->quiet && isatty(STDERR_FILENO);
	err = recorder__run(r);
	active = NULL;
	summary(r, o);
	recorder__progress(r, &p);
	if (write_error(err))
		log_error("record: cannot write '%s': %s (the capture ends at its last "
			  "complete block)", p.path, cap_strerror(err));
	else if (err && o->command && recorder__command_pid(r) && err > -4000)
		log_error("record: cannot run '%s': %s", o->command[0], cap_strerror(err));
	else if (err)
		log_error("record: stopped by an error: %s", cap_strerror(err));
	recorder__free(r);
	return err ? EXIT_FAIL : EXIT_OK;
}

/* Tests only: STKREC_TEST_SKIP_BIO=N[@MAJOR:MINOR] has the block I/O
 * completion program skip every Nth run (of that disk's requests),
 * STKREC_TEST_SKIP_IN=N the switch program every Nth switch-in of a
 * waiting thread, STKREC_TEST_SKIP_WAKE=N every Nth run of the sched_waking
 * program (of traced threads), as a kernel may, and STKREC_TEST_UCACHE=off|verify|user|kernel
 * turns the kept walks off, checks each against a new walk, or keeps the user
 * or the kernel ones only (DEVELOPERS.md). */
/* A test variable that is unset or a whole unsigned number N. */
static int test_env_u32(const char *name, uint32_t *out)
{
	const char *v = getenv(name);
	int len = 0;

	if (v && (sscanf(v, "%u%n", out, &len) != 1 || v[len])) {
		log_usage_error("record", "%s: '%s' is not N", name, v);
		return -EINVAL;
	}
	return 0;
}

static int test_env(struct record_opts *o)
{
	const char *v = getenv("STKREC_TEST_SKIP_BIO");
	const char *uc = getenv("STKREC_TEST_UCACHE");
	unsigned int n, major = 0, minor = 0;
	int len = 0;

	if (uc && !*uc)
		uc = NULL; /* set empty: as unset */
	if (uc && strcmp(uc, "off") && strcmp(uc, "verify") && strcmp(uc, "user") &&
	    strcmp(uc, "kernel")) {
		log_usage_error("record", "STKREC_TEST_UCACHE: '%s' is not off, verify, user or kernel",
				uc);
		return -EINVAL;
	}
	if (uc)
		o->test_ucache = !strcmp(uc, "off")    ? RECORD_UCACHE_OFF :
				 !strcmp(uc, "verify") ? RECORD_UCACHE_VERIFY :
				 !strcmp(uc, "user")   ? RECORD_UCACHE_USER :
							 RECORD_UCACHE_KERNEL;
	if (test_env_u32("STKREC_TEST_SKIP_IN", &o->test_skip_in) ||
	    test_env_u32("STKREC_TEST_SKIP_WAKE", &o->test_skip_wake))
		return -EINVAL;
	if (!v)
		return 0;
	if ((sscanf(v, "%u%n@%u:%u%n", &n, &len, &major, &minor, &len) < 1 || v[len]) ||
	    !major != !strchr(v, '@')) {
		log_usage_error("record", "STKREC_TEST_SKIP_BIO: '%s' is not N or N@MAJOR:MINOR", v);
		return -EINVAL;
	}
	o->test_skip_bio = n;
	o->test_skip_major = major;
	o->test_skip_minor = minor;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_policy pol;
	struct record_opts o;
	char err[256] = "";
	int ret;

	ret = record_opts__parse(argc, argv, &o, err, sizeof(err));
	if (ret == RECORD_OPTS_HELP) {
		record_opts__usage(stdout);
		record_opts__free(&o);
		return EXIT_OK;
	}
	if (ret) {
		log_usage_error("record", "%s", err);
		record_opts__free(&o);
		return EXIT_USAGE;
	}
	/* the kernel's BTF, parsed twice at the start, on huge pages;
	 * recorder__new() releases them */
	heap__reserve(24 << 20);
	log_verbosity = o.verbose;
	o.libbpf_log = libbpf_log;
	o.progress = on_progress;
	o.on_dump = on_dump;
	o.cmdline = join_cmdline(argc, argv); /* argv[0] is "record" */
	ret = test_env(&o) ? EXIT_USAGE : output_to_stdout(&o);
	if (!ret)
		ret = preflight(&o, &pol) || install_signals(&o) ? EXIT_FAIL : record(&o, &pol);
	free((char *)o.cmdline);
	record_opts__free(&o);
	return ret;
}
