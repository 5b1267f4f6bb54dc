// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `stkrec record` options. Option letters follow perf record and the BCC
 * tools (offcputime, profile): -p/-t/-u/-k, -U/-K, -F/-c, -I, -C, -m/-M. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record/cgroups.h"
#include "src/opts.h"
#include "src/record_opts.h"
#include "src/util.h"

enum {
	OPT_STORAGE = OPT_OWN,
	OPT_RINGBUF,
	OPT_MAX_SIZE,
	OPT_SWITCH,
	OPT_CALL_GRAPH,
	OPT_NO_PACK,
	OPT_NO_PYTHON,
	OPT_FLIGHT,
	OPT_TRIGGER,
	OPT_POST,
	OPT_MAX_DUMPS,
};

static const struct option long_opts[] = {
	OPTS_HELP,
	OPTS_OUTPUT,
	OPTS_TASKS,
	OPTS_VERBOSE,
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "cgroup", required_argument, NULL, 'G' },
	{ "frequency", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "include-idle", no_argument, NULL, 'I' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "duration", required_argument, NULL, 'd' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "stack-storage-size", required_argument, NULL, OPT_STORAGE },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "switch-output", required_argument, NULL, OPT_SWITCH },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "no-pack", no_argument, NULL, OPT_NO_PACK },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
	{ "flight-recorder", required_argument, NULL, OPT_FLIGHT },
	{ "trigger", required_argument, NULL, OPT_TRIGGER },
	{ "post", required_argument, NULL, OPT_POST },
	{ "max-dumps", required_argument, NULL, OPT_MAX_DUMPS },
	{ NULL, 0, NULL, 0 },
};

/* '+': stop at the first non-option, which starts the command (as perf). */
static const char short_opts[] = "+:ho:e:ap:t:G:ukUKF:c:IC:m:M:d:vq";

void record_opts__usage(FILE *f)
{
	fprintf(f,
"usage: stkrec record [-o FILE] [-e offcpu,cpu,bio,wakeup] [-a] [-p PID,...|-t TID,...]\n"
"                     [-G CGROUP,...] [-u|-k] [-U|-K] [--call-graph fp|dwarf] [-F HZ|-c N] [-I]\n"
"                     [-C CPU]\n"
"                     [-m MIN_US] [-M MAX_US]\n"
"                     [--state MASK] [--stack-storage-size N] [--ringbuf-size BYTES]\n"
"                     [-d SECONDS] [--max-size SIZE | --switch-output TIME|SIZE]\n"
"                     [--flight-recorder TIME|SIZE [--trigger wait>=DURATION]\n"
"                      [--post DURATION] [--max-dumps N]]\n"
"                     [--no-pack] [--no-python] [-v|-q] [-- COMMAND [ARGS...]]\n"
"\n"
"Record off-CPU intervals, CPU samples and block I/O completions with user and\n"
"kernel stacks into a capture file, until Ctrl-C, -d, or COMMAND exits. Once\n"
"every program is attached, one line on stderr says so ('stkrec: recording\n"
"KINDS of SCOPE (call graph: MODE) until ...'): -d counts from there, and\n"
"COMMAND starts after it.\n"
"\n"
"options:\n"
"  -o, --output FILE        capture file (default %s); '-': standard output,\n"
"                           block by block as written (not a terminal; a file\n"
"                           named '-': ./-); COMMAND's own output then goes to\n"
"                           stderr\n"
"  -e, --event LIST         event kinds: offcpu,cpu,bio (default all three),\n"
"                           wakeup: who woke each off-CPU wait, with the\n"
"                           waker's stacks (report --wakers, --chain)\n"
"  -a, --all-cpus           whole system (default); with COMMAND: until it exits\n"
"  -p, --pid PID,...        only these processes\n"
"  -t, --tid TID,...        only these threads\n"
"  -G, --cgroup PATH,...    only these cgroups (v2) and the cgroups below them,\n"
"                           filtered in the kernel: a path below the cgroup2\n"
"                           mount (/system.slice/docker-ID.scope) or in full\n"
"                           (/sys/fs/cgroup/...); at most %d\n"
"  -u, --user-threads-only  only user threads (no kernel threads)\n"
"  -k, --kernel-threads-only  only kernel threads\n"
"  -U, --user-stacks-only   take user stacks only (no kernel stacks)\n"
"  -K, --kernel-stacks-only\n"
"                           take kernel stacks only (no user stacks)\n"
"      --call-graph MODE    how user stacks are walked: dwarf (default on\n"
"                           x86-64, Linux 5.17+) unwinds in the kernel with each\n"
"                           binary's .eh_frame, so binaries built without frame\n"
"                           pointers (most distribution packages) have whole\n"
"                           stacks; fp follows frame pointers (starts ~0.15 s\n"
"                           faster; the default elsewhere and with -k or -K)\n"
"  -F, --frequency HZ       CPU samples per second per CPU (default %d)\n"
"  -c, --count N            one CPU sample every N ns of cpu-clock instead\n"
"  -I, --include-idle       sample the idle task too\n"
"  -C, --cpu CPU            only this CPU (off-CPU and CPU samples)\n"
"  -m, --min-block-time US  off-CPU intervals of at least US microseconds\n"
"                           (default %d)\n"
"  -M, --max-block-time US  off-CPU intervals of at most US microseconds\n"
"      --state MASK         off-CPU only in this task state at switch-out:\n"
"                           0 = preempted (running), else a TASK_* bit mask,\n"
"                           e.g. 1 interruptible, 2 uninterruptible\n"
"      --stack-storage-size N  threads that can be off CPU at once, and block\n"
"                           requests in flight, tracked in the kernel (default %d)\n"
"      --ringbuf-size BYTES kernel-to-user buffer, a power of 2 (default %uM)\n"
"  -d, --duration SECONDS   stop after this long\n"
"      --max-size SIZE      stop when the capture reaches SIZE bytes (K, M, G\n"
"                           suffixes; at least 64K): the file, its final\n"
"                           counts and END record included, stays within SIZE\n"
"                           (with -o -: the bytes written to standard output)\n"
"      --switch-output N    as perf: write FILE.<timestamp> files, a new one\n"
"                           every N seconds (N, Ns, Nm, Nh) or once one is\n"
"                           past N bytes (NK, NM, NG); each file is complete\n"
"                           and readable on its own (not with -o -)\n"
"      --flight-recorder SPAN  hold only the last SPAN in memory (a time: 30s,\n"
"                           5m; or a size: 64M of compressed capture) and write\n"
"                           nothing until a dump: SIGUSR2, --trigger, or (with\n"
"                           no --trigger) the end; each dump is a complete\n"
"                           FILE.<timestamp> of the window, said on stderr\n"
"      --trigger wait>=DURATION  with --flight-recorder: dump when a thread of\n"
"                           the recorded scope (-p, -t, -G, --state narrow it)\n"
"                           has been off CPU that long (500ms, 2s)\n"
"      --post DURATION      with --flight-recorder: record this long after a\n"
"                           trigger before the dump (triggers meanwhile join it)\n"
"      --max-dumps N        with --flight-recorder: stop after N dumps\n"
"      --no-pack            no symbol pack: by default each file ends with the\n"
"                           names of the functions its user stacks hit (and\n"
"                           their inlines and source lines where DWARF is\n"
"                           here, and JIT code from /tmp/perf-PID.map), so\n"
"                           that report names them on a host without the\n"
"                           binaries; `stkrec pack` adds one later\n"
"      --no-python          no Python frames: by default the user stacks of a\n"
"                           process running CPython 3.8-3.13 hold its Python\n"
"                           calls, function, file and line, in the native\n"
"                           frames of the interpreter that runs them\n"
"  -v, --verbose            more messages (repeat for libbpf's)\n"
"  -q, --quiet              no 'recording' line, status line or summary\n"
"                           (warnings and errors still)\n"
"  -h, --help               this text\n"
"\n"
"examples:\n"
"  stkrec record -d 10                 # whole system for 10 s, all event kinds\n"
"  stkrec record -p 181 -e offcpu      # why is PID 181 waiting?\n"
"  stkrec record -u -m 1000            # user threads blocked for 1 ms or more\n"
"  stkrec record --state 2 -e offcpu   # uninterruptible sleeps (D state) only\n"
"  stkrec record -e cpu -F 99 -C 0     # CPU profile of CPU 0 at 99 Hz\n"
"  stkrec record -e bio -d 30          # block I/O latency, by issuing process\n"
"  stkrec record -G /system.slice/docker-ID.scope -d 30  # one container\n"
"  stkrec record -o make.cap -- make -j2  # a command and its children\n"
"  stkrec record --call-graph fp -- ./app   # frame pointers: a faster start\n"
"  stkrec record --switch-output 60s   # one file a minute: stkrec.cap.2026...\n"
"  stkrec record -p 181 --flight-recorder 30s --trigger 'wait>=500ms'  # catch a stall\n"
"  ssh prod stkrec record -o - -d 30 > prod.cap  # nothing written on prod\n"
"  stkrec record -o - -d 30 | stkrec report -i -  # record and report at once\n"
"  stkrec record -- node --perf-basic-prof app.js  # JavaScript functions named\n"
"  stkrec report -i make.cap           # then explain it\n",
		RECORD_DEFAULT_OUTPUT, RECORD_MAX_CGROUPS, RECORD_DEFAULT_FREQ, RECORD_DEFAULT_MIN_US,
		RECORD_DEFAULT_STORAGE, RECORD_DEFAULT_RINGBUF >> 20);
}

int record_opts__parse_events(const char *s, unsigned *mask)
{
	return parse_kinds(s, mask);
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* What the options said, for the cross-checks after the loop. */
struct seen {
	bool all, freq, count, min, max;
	int targets; /* count of -p, -t, -u, -k */
};

static int parse_num(const char *name, const char *arg, uint64_t min, uint64_t max,
		     uint64_t *out, char *err, size_t len)
{
	int e = parse_u64(arg, min, max, out);

	if (e == -ERANGE)
		return fail(err, len, "%s: '%s' is out of range [%" PRIu64 ", %" PRIu64 "]",
			    name, arg, min, max);
	if (e)
		return fail(err, len, "%s: '%s' is not a number", name, arg);
	return 0;
}

static int parse_list(const char *name, const char *arg, uint32_t **out, int *n,
		      char *err, size_t len)
{
	if (parse_u32_list(arg, 1, INT32_MAX, out, n))
		return fail(err, len, "%s: '%s' is not a list of ids like 1,2,3", name, arg);
	return 0;
}

/* -G: each PATH to its depth and id, as the kernel compares them. */
static int parse_cgroups(const char *arg, struct record_opts *o, char *err, size_t len)
{
	char mount[PATH_MAX], *list = strdup(arg), *save = NULL, *p;
	int e = 0;

	if (!list)
		return fail(err, len, "-G: out of memory");
	if (cgroups__find_mount(mount, sizeof(mount))) {
		free(list);
		return fail(err, len, "-G: no cgroup2 file system is mounted (cgroup v1 only)");
	}
	for (p = strtok_r(list, ",", &save); p && !e; p = strtok_r(NULL, ",", &save)) {
		if (o->nr_cgroups == RECORD_MAX_CGROUPS)
			e = fail(err, len, "-G: more than %d cgroups", RECORD_MAX_CGROUPS);
		else if (cgroups__resolve(mount, p, &o->cgroup_levels[o->nr_cgroups],
					  &o->cgroup_ids[o->nr_cgroups]))
			e = fail(err, len, "-G: '%s' is not a cgroup (a directory below %s)", p,
				 mount);
		else
			o->nr_cgroups++;
	}
	if (!e && !o->nr_cgroups)
		e = fail(err, len, "-G: no cgroup given");
	free(list);
	return e;
}

static int parse_sizes(int c, const char *arg, struct record_opts *o, char *err, size_t len)
{
	int e;

	if (c == OPT_STORAGE)
		return parse_num("--stack-storage-size", arg, 1, 1u << 22,
				 &o->storage_entries, err, len);
	if (c == OPT_MAX_SIZE) {
		e = parse_size(arg, 64u << 10, 1ull << 40, &o->max_size);
		if (e == -ERANGE)
			return fail(err, len, "--max-size: '%s' is not in [64K, 1024G]", arg);
		if (e)
			return fail(err, len, "--max-size: '%s' is not a size", arg);
		return 0;
	}
	e = parse_size(arg, 64u << 10, 1ull << 30, &o->ringbuf_size);
	if (e == -ERANGE)
		return fail(err, len, "--ringbuf-size: '%s' is not in [64K, 1G]", arg);
	if (e)
		return fail(err, len, "--ringbuf-size: '%s' is not a size", arg);
	if (!is_pow2(o->ringbuf_size))
		return fail(err, len, "--ringbuf-size: '%s' is not a power of 2", arg);
	return 0;
}

/* perf's --switch-output, and --flight-recorder's SPAN: a time (s, m, h;
 * no suffix: seconds) or a size (B, K, M, G). At least a second or 64 KiB. */
static int parse_span(const char *name, const char *arg, uint64_t *ns, uint64_t *bytes,
		      char *err, size_t len)
{
	static const struct {
		char suffix;
		uint64_t ns;
	} units[] = { { 0, 1000000000ull }, { 's', 1000000000ull }, { 'm', 60000000000ull },
		      { 'h', 3600000000000ull } };
	uint64_t v = 0;
	size_t i;
	char *end = NULL;

	*ns = *bytes = 0;
	if (strpbrk(arg, "BKMGbkg")) { /* a size ('m' alone means minutes) */
		if (!parse_size(arg, 64u << 10, 1ull << 40, bytes))
			return 0;
		goto bad;
	}
	if (parse_leading_u64(arg, &v, &end))
		goto bad;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (*end != units[i].suffix || (*end && end[1]))
			continue;
		if (v < 1 || v > UINT64_MAX / units[i].ns)
			break;
		*ns = v * units[i].ns;
		return 0;
	}
bad:
	*bytes = 0;
	return fail(err, len, "%s: '%s' is neither a time (at least 1s; s, m, h) "
		    "nor a size (at least 64K; K, M, G)", name, arg);
}

/* --trigger wait>=DURATION: the one condition there is. */
static int parse_trigger(const char *arg, struct record_opts *o, char *err, size_t len)
{
	static const char pre[] = "wait>=";

	if (strncmp(arg, pre, sizeof(pre) - 1) ||
	    parse_duration(arg + sizeof(pre) - 1, &o->trigger_wait_ns) || !o->trigger_wait_ns)
		return fail(err, len, "--trigger: '%s' is not wait>=DURATION (e.g. wait>=500ms; "
			    "ns, us, ms, s, m, h)", arg);
	return 0;
}

static int parse_flight(int c, const char *arg, struct record_opts *o, char *err, size_t len)
{
	uint64_t v;

	switch (c) {
	case OPT_FLIGHT:
		return parse_span("--flight-recorder", arg, &o->flight_ns, &o->flight_bytes,
				  err, len);
	case OPT_TRIGGER:
		return parse_trigger(arg, o, err, len);
	case OPT_POST:
		if (parse_duration(arg, &o->post_ns))
			return fail(err, len, "--post: '%s' is not a duration (e.g. 2s, 500ms)",
				    arg);
		return 0;
	}
	if (parse_num("--max-dumps", arg, 1, 1000000, &v, err, len))
		return -EINVAL;
	o->max_dumps = v;
	return 0;
}

static int parse_cpu(const char *arg, struct record_opts *o, char *err, size_t len)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t v;

	if (parse_num("-C", arg, 0, 1u << 20, &v, err, len))
		return -EINVAL;
	if (ncpus > 0 && v >= (uint64_t)ncpus)
		return fail(err, len, "-C: CPU %s does not exist (%ld CPUs)", arg, ncpus);
	o->cpu = v;
	return 0;
}

static int parse_one(int c, const char *arg, struct record_opts *o, struct seen *s,
		     char *err, size_t len)
{
	uint64_t v;

	switch (c) {
	case 'o':
		if (!*arg)
			return fail(err, len, "-o: empty file name");
		o->output = arg;
		return 0;
	case 'e':
		if (record_opts__parse_events(arg, &o->events))
			return fail(err, len, "-e: '%s': event kinds are offcpu, cpu, bio, wakeup", arg);
		return 0;
	case 'a':
		s->all = true;
		o->all_cpus = true;
		return 0;
	case 'p':
		s->targets++;
		free(o->pids);
		o->pids = NULL;
		return parse_list("-p", arg, &o->pids, &o->nr_pids, err, len);
	case 't':
		s->targets++;
		free(o->tids);
		o->tids = NULL;
		return parse_list("-t", arg, &o->tids, &o->nr_tids, err, len);
	case 'G':
		return parse_cgroups(arg, o, err, len);
	case 'u':
		s->targets++;
		o->user_threads = true;
		return 0;
	case 'k':
		s->targets++;
		o->kernel_threads = true;
		return 0;
	case 'U':
		o->user_stacks_only = true;
		return 0;
	case 'K':
		o->kernel_stacks_only = true;
		return 0;
	case 'F':
		s->freq = true;
		return parse_num("-F", arg, 1, 100000, &o->freq, err, len);
	case 'c':
		s->count = true;
		return parse_num("-c", arg, 1, UINT64_MAX >> 1, &o->period, err, len);
	case 'I':
		o->idle = true;
		return 0;
	case 'C':
		return parse_cpu(arg, o, err, len);
	case 'm':
		s->min = true;
		return parse_num("-m", arg, 0, UINT64_MAX / 1000, &o->min_us, err, len);
	case 'M':
		s->max = true;
		return parse_num("-M", arg, 0, UINT64_MAX / 1000, &o->max_us, err, len);
	case 'd':
		if (parse_seconds(arg, &o->duration_ns) || !o->duration_ns)
			return fail(err, len, "-d: '%s' is not a positive number of seconds", arg);
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case OPT_STATE:
		if (parse_num("--state", arg, 0, UINT32_MAX, &v, err, len))
			return -EINVAL;
		o->state = v;
		return 0;
	case OPT_SWITCH:
		return parse_span("--switch-output", arg, &o->switch_ns, &o->switch_bytes, err, len);
	case OPT_FLIGHT:
	case OPT_TRIGGER:
	case OPT_POST:
	case OPT_MAX_DUMPS:
		return parse_flight(c, arg, o, err, len);
	case OPT_CALL_GRAPH:
		o->call_graph_set = true;
		if (!strcmp(arg, "fp"))
			o->call_graph = RECORD_CG_FP;
		else if (!strcmp(arg, "dwarf"))
			o->call_graph = RECORD_CG_DWARF;
		else if (!strncmp(arg, "dwarf,", 6))
			return fail(err, len, "--call-graph: '%s': stkrec unwinds in the kernel "
				    "and copies no stack, so dwarf takes no size", arg);
		else
			return fail(err, len, "--call-graph: '%s': modes are fp, dwarf", arg);
		return 0;
	case OPT_STORAGE:
	case OPT_RINGBUF:
	case OPT_MAX_SIZE:
		return parse_sizes(c, arg, o, err, len);
	case OPT_NO_PACK:
		o->no_pack = true;
		return 0;
	case OPT_NO_PYTHON:
		o->no_python = true;
		return 0;
	}
	return fail(err, len, "internal: unhandled option %d", c);
}

static int cross_check_flight(const struct record_opts *o, char *err, size_t len)
{
	bool flight = o->flight_ns || o->flight_bytes;

	if (!flight && (o->trigger_wait_ns || o->post_ns || o->max_dumps))
		return fail(err, len, "--trigger, --post and --max-dumps need --flight-recorder");
	if (flight && (o->switch_ns || o->switch_bytes || o->max_size))
		return fail(err, len, "--flight-recorder and --switch-output or --max-size are "
			    "mutually exclusive");
	if (flight && !strcmp(o->output, "-"))
		return fail(err, len, "--flight-recorder writes FILE.<timestamp> files: not with "
			    "-o - (standard output)");
	return 0;
}

static int cross_check(struct record_opts *o, const struct seen *s, char *err, size_t len)
{
	if (s->targets > 1)
		return fail(err, len, "-p, -t, -u and -k are mutually exclusive");
	if (s->all && (o->nr_pids || o->nr_tids))
		return fail(err, len, "-a and -p/-t are mutually exclusive");
	if (o->command && (o->nr_pids || o->nr_tids))
		return fail(err, len, "a COMMAND and -p/-t are mutually exclusive");
	if (s->freq && s->count)
		return fail(err, len, "-F and -c are mutually exclusive");
	if (o->user_stacks_only && o->kernel_stacks_only)
		return fail(err, len, "-U and -K are mutually exclusive");
	if (s->min && s->max && o->min_us > o->max_us)
		return fail(err, len, "-m %" PRIu64 " is greater than -M %" PRIu64,
			    o->min_us, o->max_us);
	if (!o->events)
		return fail(err, len, "-e: no event kind selected");
	if (o->max_size && (o->switch_ns || o->switch_bytes))
		return fail(err, len, "--max-size and --switch-output are mutually exclusive");
	if (!strcmp(o->output, "-") && (o->switch_ns || o->switch_bytes))
		return fail(err, len, "--switch-output writes FILE.<timestamp> files: not with "
			    "-o - (standard output)");
	return cross_check_flight(o, err, len);
}

static int bad_option(int c, char **argv, char *err, size_t len)
{
	char buf[8];
	const char *name = opt_name(optopt, argv[optind - 1], buf, sizeof(buf));

	if (c == ':')
		return fail(err, len, "option '%s' requires a value", name);
	return fail(err, len, "unknown option '%s'", name);
}

int record_opts__parse(int argc, char **argv, struct record_opts *o,
		       char *err, size_t errlen)
{
	struct seen s = {};
	int c;

	record_opts__init(o);
	optind = 0; /* full reinitialization: parse may run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		if (c == 'h')
			return RECORD_OPTS_HELP;
		if (c == '?' || c == ':')
			return bad_option(c, argv, err, errlen);
		if (parse_one(c, optarg, o, &s, err, errlen))
			return -EINVAL;
	}
	if (optind < argc)
		o->command = &argv[optind];
	return cross_check(o, &s, err, errlen);
}

void record_opts__free(struct record_opts *o)
{
	free(o->pids);
	free(o->tids);
	o->pids = o->tids = NULL;
	o->nr_pids = o->nr_tids = 0;
}
