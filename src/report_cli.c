// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the commands that read captures share (src/report_cli.h): the
 * filter and symbol options of report, script and diff, the option loop
 * every reading command runs, loading a capture with the filters bound,
 * and the symbolization statistics. Diagnostics go to stderr here.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/filter.h"
#include "report/model.h"
#include "report/resolve.h"
#include "src/commands.h"
#include "src/input.h"
#include "src/log.h"
#include "src/report_cli.h"
#include "src/util.h"

const char report_common_help[] =
	"Filters (as at record time):\n"
	"  -p PID,...            only these processes\n"
	"  -t, --tid TID,...     only these threads\n"
	"  --comm NAME,...       only threads with these names\n"
	"  --cgroup PATTERN,...  only events of cgroups whose path, container ID or\n"
	"                        pod UID holds PATTERN (a substring), or matches it\n"
	"                        whole when it has * ? [ (a glob; * crosses /):\n"
	"                        --cgroup 3f4e5a6b7c8d, --cgroup '/system.slice/*'\n"
	"  --time START,END      a window: seconds from the capture start (1.5,),\n"
	"                        wall clock HH:MM:SS[.frac] on the capture's day,\n"
	"                        or ISO 8601 (2026-11-22T14:03:07Z); either side may\n"
	"                        be empty. Events are placed at switch-out (off-CPU),\n"
	"                        sample (CPU) or completion (block I/O) time\n"
	"  -m, --min-block-time US   off-CPU intervals of at least US microseconds\n"
	"  -M, --max-block-time US   ... and at most US microseconds (of the part\n"
	"                        the recording saw, for a wait open at its start\n"
	"                        or end)\n"
	"  --open-waits          only waits open at the start or the end of the\n"
	"                        recording (threads blocked before it began, or\n"
	"                        still blocked when it stopped)\n"
	"  --state MASK          off-CPU with task state & MASK (0: preempted only,\n"
	"                        1: TASK_INTERRUPTIBLE, 2: TASK_UNINTERRUPTIBLE)\n"
	"  -u, --user-threads-only    no kernel threads\n"
	"  -k, --kernel-threads-only  kernel threads only\n"
	"  -U, --user-stacks-only     show user stacks only (no kernel frames)\n"
	"  -K, --kernel-stacks-only   show kernel stacks only (no user frames)\n"
	"  --python MODE         stacks with Python frames: clean (default) hides\n"
	"                        the interpreter's own frames between two Python\n"
	"                        frames (a C extension's stay), all keeps them,\n"
	"                        none drops the Python frames\n"
	"Symbols:\n"
	"  --symfs DIR           look for the recorded binaries under DIR\n"
	"  --debug-dir DIR       debug files root (default /usr/lib/debug)\n"
	"  --inline              expand inlined functions (needs DWARF)\n"
	"  --srcline             file:line after function names where known (needs\n"
	"                        DWARF), \"func file.c:12\": rows and stacks split by\n"
	"                        line; script shows the file's whole path\n"
	"  -v, --verbose         symbolization statistics on stderr\n"
	"  --max-memory SIZE     stop loading past SIZE of tables (K, M, G; default\n"
	"                        4G): the output is then partial (exit status 3)\n"
	"  -h, --help            this text\n";

int report_bad_value(const char *cmd, const char *opt, const char *val)
{
	log_usage_error(cmd, "invalid value for %s: '%s'", opt, val);
	return -EINVAL;
}

static int opt_python(struct report_common *c, const char *arg)
{
	static const char *const modes[] = {
		[FILTER_PYTHON_CLEAN] = "clean", [FILTER_PYTHON_ALL] = "all",
		[FILTER_PYTHON_NONE] = "none",
	};
	unsigned i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(arg, modes[i])) {
			c->flt.python = i;
			return 0;
		}
	}
	return report_bad_value(c->cmd, "--python", arg);
}

static int opt_filter(struct report_common *c, int opt, const char *arg)
{
	struct filter *f = &c->flt;
	uint64_t v;

	switch (opt) {
	case 'p':
		return parse_u32_list(arg, 0, UINT32_MAX, &f->pids, &f->npids) ?
			       report_bad_value(c->cmd, "-p", arg) : 0;
	case 't':
		return parse_u32_list(arg, 0, UINT32_MAX, &f->tids, &f->ntids) ?
			       report_bad_value(c->cmd, "-t", arg) : 0;
	case OPT_COMM:
		return filter__add_comms(f, arg) ? report_bad_value(c->cmd, "--comm", arg) : 0;
	case OPT_CGROUP:
		return filter__add_cgroups(f, arg) ? report_bad_value(c->cmd, "--cgroup", arg) : 0;
	case OPT_TIME:
		return filter__parse_time(f, arg) ? report_bad_value(c->cmd, "--time", arg) : 0;
	case 'm':
	case 'M':
		if (parse_u64(arg, 0, UINT64_MAX / 1000, &v))
			return report_bad_value(c->cmd, opt == 'm' ? "-m" : "-M", arg);
		if (opt == 'm')
			f->min_ns = v * 1000;
		else
			f->max_ns = v ? v * 1000 : 1; /* -M 0: nothing but 0 ns */
		return 0;
	case OPT_STATE:
		if (parse_u64(arg, 0, UINT32_MAX, &v))
			return report_bad_value(c->cmd, "--state", arg);
		f->has_state = true;
		f->state = v;
		return 0;
	case 'e':
		return parse_kinds(arg, &f->kinds) ? report_bad_value(c->cmd, "-e", arg) : 0;
	case OPT_OPEN_WAITS:
		f->open_only = true;
		return 0;
	case OPT_PYTHON:
		return opt_python(c, arg);
	}
	return 1;
}

static int opt_threads(struct report_common *c, int opt)
{
	struct filter *f = &c->flt;
	bool user = opt == 'u' || opt == 'U';

	if (opt == 'u' || opt == 'k') {
		if (f->threads != FILTER_THREADS_ALL &&
		    f->threads != (user ? FILTER_THREADS_USER : FILTER_THREADS_KERNEL))
			goto conflict;
		f->threads = user ? FILTER_THREADS_USER : FILTER_THREADS_KERNEL;
	} else {
		if (f->stacks != FILTER_STACKS_BOTH &&
		    f->stacks != (user ? FILTER_STACKS_USER : FILTER_STACKS_KERNEL))
			goto conflict;
		f->stacks = user ? FILTER_STACKS_USER : FILTER_STACKS_KERNEL;
	}
	return 0;
conflict:
	log_usage_error(c->cmd, "-%c conflicts with -%c", opt,
			opt == 'u' ? 'k' : opt == 'k' ? 'u' : opt == 'U' ? 'K' : 'U');
	return -EINVAL;
}

int report_common_opt(struct report_common *c, int opt, const char *arg)
{
	int ret = opt_filter(c, opt, arg);

	if (ret <= 0)
		return ret;
	switch (opt) {
	case 'u': case 'k': case 'U': case 'K':
		return opt_threads(c, opt);
	case OPT_MAX_MEMORY:
		return parse_size(arg, 1 << 20, UINT64_MAX, &c->load.max_memory) ?
			       report_bad_value(c->cmd, "--max-memory", arg) : 0;
	}
	return report_sym_opt(&c->sym, opt, arg);
}

int report_sym_opt(struct symbolizer_opts *s, int opt, const char *arg)
{
	switch (opt) {
	case OPT_SYMFS:
		s->symfs = arg;
		return 0;
	case OPT_DEBUG_DIR:
		s->debug_dir = arg;
		return 0;
	case OPT_INLINE:
		s->inlines = true;
		return 0;
	case OPT_SRCLINE:
		s->srclines = true;
		return 0;
	case 'v':
		log_verbosity++;
		return 0;
	}
	return 1;
}

int report_common_check(struct report_common *c)
{
	if (c->flt.max_ns && c->flt.max_ns < c->flt.min_ns) {
		log_usage_error(c->cmd, "-M is below -m");
		return -EINVAL;
	}
	return 0;
}

int report_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
		  const struct option *opts, int (*fn)(void *arg, int opt, const char *val),
		  void *arg)
{
	char name[8];
	int opt, err = 0;

	opterr = 0;
	optind = 1;
	while (!err && (opt = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		if (opt == 'h') {
			err = 1;
		} else if (opt == '?' || opt == ':') {
			log_usage_error(cmd, "%s option '%s'",
					opt == ':' ? "missing value for" : "unknown",
					opt_name(optopt, argv[optind - 1], name, sizeof(name)));
			err = -EINVAL;
		} else {
			err = fn(arg, opt, optarg);
		}
	}
	return err;
}

int report_one_input(const char *cmd, int argc, char **argv, const char **in)
{
	if (optind < argc && !*in)
		*in = argv[optind++];
	if (optind < argc) {
		log_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (!*in) {
		log_usage_error(cmd, "missing capture file");
		return -EINVAL;
	}
	return 0;
}

/* A binary replaced since the recording is never named from the new file:
 * say so once, or its frames look like missing symbols (or, named from the
 * capture's symbol pack, like the file's). */
static void warn_mismatched(const char *path, const struct symbolizer_stats *st)
{
	const char *obj = st->first_mismatched ? st->first_mismatched : "?";
	const char *base = strrchr(obj, '/');
	const char *pk = st->first_mismatched_packed;

	if (st->modules_mismatched_packed == 1)
		log_warn("%s: %s on this host differs from the recorded one (another build ID): "
			 "its frames are named from the capture's symbol pack", path, pk);
	else if (st->modules_mismatched_packed)
		log_warn("%s: %llu files on this host differ from the recorded ones (other build "
			 "IDs), %s the first: their frames are named from the capture's symbol pack",
			 path, (unsigned long long)st->modules_mismatched_packed, pk);
	if (!st->modules_mismatched)
		return;
	if (st->modules_mismatched == 1)
		log_warn("%s: %s did not match its recorded build ID (frames shown as "
			 "%s+0xOFFSET); see --symfs", path, obj, base ? base + 1 : obj);
	else
		log_warn("%s: %llu files did not match their recorded build IDs, %s the first "
			 "(frames shown as module+0xOFFSET); see --symfs", path,
			 (unsigned long long)st->modules_mismatched, obj);
}

void report_common_sym_stats(const char *path, const struct resolver *res)
{
	struct symbolizer_stats st;

	resolver__sym_stats(res, &st);
	warn_mismatched(path, &st);
	log_debug(1, "symbols: %llu objects found, %llu missing (%llu of them in the symbol "
		  "pack), %llu build-ID mismatches; addresses named: %llu from files, %llu from "
		  "the symbol pack, %llu JIT entries from perf maps; %llu unnamed",
		  (unsigned long long)st.modules_found, (unsigned long long)st.modules_missing,
		  (unsigned long long)st.modules_packed, (unsigned long long)st.buildid_mismatches,
		  (unsigned long long)(st.resolved - st.resolved_pack),
		  (unsigned long long)st.resolved_pack,
		  (unsigned long long)resolver__jit_named(res), (unsigned long long)st.unresolved);
}

int report_common_load(struct report_common *c, const char *path, struct model **m)
{
	struct input in;
	int err;

	*m = NULL;
	err = input__open(&in, c->cmd, path);
	if (err)
		return err;
	err = input__model(&in, &c->load, m);
	if (err)
		log_capture_error(in.name, in.stream, err);
	input__close(&in);
	if (err)
		return err == -ENOMEM ? EXIT_FAIL : EXIT_UNREADABLE;
	err = filter__bind(&c->flt, *m);
	if (!err)
		return 0;
	if (err == -EINVAL)
		log_usage_error(c->cmd, "--time: START is after END");
	else
		log_error("%s", cap_strerror(err));
	model__free(*m);
	*m = NULL;
	return err == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
}
