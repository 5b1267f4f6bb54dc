// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec scrub CAPTURE -o OUT [--paths]: a copy of a capture to attach to
 * a bug report. It reports the same (names, offsets, build IDs, times,
 * counts stay) but holds no raw kernel address (the KASLR offset), no
 * hostname, no recorded command beyond the recorder's options and, with
 * --paths, no home directory. The rewrite is pack/pack.h's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "format/capture.h"
#include "pack/pack.h"
#include "src/commands.h"
#include "src/log.h"
#include "src/opts.h"
#include "src/report_cli.h"

struct scrub_cli {
	const char *in;
	const char *out;
	uint32_t what;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: stkrec scrub [-h] [--paths] -o OUT CAPTURE\n\n"
		"Write a copy of a capture fit to attach to a bug report. It reports the\n"
		"same: every view gives the same rows with the same names (function\n"
		"names, offsets, build IDs, times and counts stay). Removed:\n"
		"  - raw kernel addresses, which tell the kernel's KASLR offset: kernel\n"
		"    frames, the kernel symbol table and modules become offsets from\n"
		"    _stext (they name the same functions);\n"
		"  - the recording host's name;\n"
		"  - the recorded command and its arguments (the recorder's options stay);\n"
		"  - with --paths, home directories: /home/NAME becomes " CAP_SCRUB_HOME "\n"
		"    and /root " CAP_SCRUB_ROOT ", in every path and the command line.\n"
		"`stkrec info` says what was removed; `stkrec pack` of a scrubbed capture\n"
		"keeps it scrubbed. OUT is created 0600 and replaced only once complete.\n\n"
		"Options:\n"
		"  -o, --output OUT   the scrubbed copy (may be CAPTURE itself)\n"
		"      --paths        also replace home directories by placeholders\n"
		"  -h, --help         show this help\n\n"
		"Exit status: 0 scrubbed, 1 failed, 2 bad usage, 3 CAPTURE was damaged or\n"
		"cut (OUT holds what could be read, scrubbed), 4 CAPTURE unreadable.\n\n"
		"Examples:\n"
		"  stkrec scrub web.cap -o web.scrubbed.cap        # for a bug report\n"
		"  stkrec scrub --paths web.cap -o web.public.cap  # and no /home/NAME\n"
		"  stkrec info web.scrubbed.cap | grep scrubbed\n");
}

enum { OPT_PATHS = OPT_OWN };

static int parse_opt(void *arg, int opt, const char *val)
{
	struct scrub_cli *c = arg;

	switch (opt) {
	case 'o':
		c->out = val;
		return 0;
	case OPT_PATHS:
		c->what |= CAP_FEAT_SCRUBBED_PATHS;
		return 0;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct scrub_cli *c)
{
	static const struct option opts[] = {
		OPTS_OUTPUT,
		{ "paths", no_argument, NULL, OPT_PATHS },
		OPTS_HELP,
		{ NULL, 0, NULL, 0 },
	};
	int err = report_getopt("scrub", argc, argv, ":ho:", opts, parse_opt, c);

	if (err > 0)
		usage(stdout);
	if (err)
		return err;
	if (report_one_input("scrub", argc, argv, &c->in))
		return -EINVAL;
	if (!c->out || !*c->out || !strcmp(c->out, "-")) {
		log_usage_error("scrub", "-o OUT: name the file the scrubbed copy goes to");
		return -EINVAL;
	}
	return 0;
}

int cmd_scrub(int argc, char **argv)
{
	struct scrub_cli c = { .what = CAP_FEAT_SCRUBBED };
	struct pack_rewrite res;
	struct cap_reader *r;
	int err;

	err = parse_args(argc, argv, &c);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	err = cap_reader__open(c.in, &r);
	if (err) {
		log_capture_error(c.in, NULL, err);
		return EXIT_UNREADABLE;
	}
	cap_reader__close(r);
	err = pack__scrub(c.in, c.out, c.what, &res);
	if (err == CAP_ERR_VERSION)
		log_error("scrub: %s holds records this stkrec does not know (a newer version "
			  "wrote it): scrub it with that version", c.in);
	else if (err == -ENOEXEC)
		log_error("scrub: %s has kernel addresses before its KERNEL record: they "
			  "cannot be rebased", c.in);
	else if (err)
		log_error("scrub: cannot write %s: %s", c.out, cap_strerror(err));
	if (err)
		return EXIT_FAIL;
	if (res.recovered) {
		log_warn("%s: capture recovered with loss: %s; %s holds what could be read",
			 c.in, res.loss, c.out);
		return EXIT_RECOVERED;
	}
	return EXIT_OK;
}
