// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stkrec pack IN [-o OUT]: add a symbol pack (FORMAT.md §4.18) to a
 * capture that has none (recorded with --no-pack, recovered after the
 * recorder was killed, written by an older stkrec), or refresh the one it
 * has. The rewrite is pack/pack.h's; a pack being replaced is read here
 * through the report's model (it keeps naming binaries gone since, and its
 * JIT entries, read while their processes ran, are carried over).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "format/capture.h"
#include "pack/pack.h"
#include "report/model.h"
#include "src/commands.h"
#include "src/input.h"
#include "src/log.h"
#include "src/opts.h"
#include "src/report_cli.h"

struct pack_cli {
	const char *in;
	const char *out;
	const char *in_name, *out_name; /* for messages: "<stdin>", "<stdout>" */
	char spool_in[PATH_MAX], spool_out[PATH_MAX]; /* '-' goes through these */
	struct symbolizer_opts sym; /* --symfs, --debug-dir */
	struct pack_opts o;
	struct model *old;  /* the capture as read, when it had a pack */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: stkrec pack [-h] [-o OUT] [--symfs DIR] [--debug-dir DIR] [-v] IN\n\n"
		"Add a symbol pack to a capture, or refresh the one it has: the names of\n"
		"the functions its user stacks hit, with their inlined functions and\n"
		"source lines where DWARF is found (the binary, /usr/lib/debug,\n"
		".gnu_debuglink, debuginfod), and the entries of JIT maps\n"
		"(/tmp/perf-PID.map) that hold its frames in JIT code, so that `stkrec\n"
		"report` names them on a host without the binaries. `stkrec record`\n"
		"packs every file it writes unless --no-pack; this is for captures\n"
		"recorded with --no-pack, recovered after the recorder was killed, or\n"
		"written by an older stkrec. Run it where the binaries are: the\n"
		"recording host, or --symfs with a copy of its files. Events are copied\n"
		"unchanged; a pack being refreshed keeps naming what is not found now.\n\n"
		"Options:\n"
		"  -o, --output OUT   write the packed capture to OUT (default: replace IN);\n"
		"                     OUT is replaced only once it is complete. IN '-'\n"
		"                     reads standard input and OUT '-' (its default then)\n"
		"                     writes standard output, each through a temporary\n"
		"                     file in $TMPDIR (default /var/tmp)\n"
		"      --symfs DIR    look for the recorded binaries, their debug files and\n"
		"                     tmp/perf-PID.map under DIR\n"
		"      --debug-dir DIR  debug files root (default /usr/lib/debug, under\n"
		"                     --symfs when given)\n"
		"  -v, --verbose      say what was left unnamed or out\n"
		"  -h, --help         show this help\n\n"
		"Exit status: 0 packed, 1 failed, 2 bad usage, 3 IN was damaged or cut\n"
		"(OUT holds what it could read, packed), 4 IN unreadable.\n\n"
		"Examples:\n"
		"  stkrec record --no-pack -o web.cap -d 30 && stkrec pack web.cap\n"
		"  stkrec pack killed.cap -o killed.packed.cap   # after a SIGKILL\n"
		"  stkrec pack --symfs /srv/target-root old.cap  # binaries copied from the host\n"
		"  stkrec info web.cap | grep pack               # what the pack holds\n");
}

/* -o, and the symbol options and -v as report takes them. */
static int parse_opt(void *arg, int opt, const char *val)
{
	struct pack_cli *c = arg;

	if (opt == 'o') {
		c->out = val;
		return 0;
	}
	return report_sym_opt(&c->sym, opt, val) ? -EINVAL : 0;
}

static int parse_args(int argc, char **argv, struct pack_cli *c)
{
	static const struct option opts[] = {
		OPTS_OUTPUT,
		OPTS_SYMBOLS,
		OPTS_VERBOSE,
		OPTS_HELP,
		{ NULL, 0, NULL, 0 },
	};
	int err = report_getopt("pack", argc, argv, ":ho:v", opts, parse_opt, c);

	if (err > 0)
		usage(stdout);
	if (err)
		return err;
	if (report_one_input("pack", argc, argv, &c->in))
		return -EINVAL;
	if (c->out && !*c->out) {
		log_usage_error("pack", "-o: empty file name");
		return -EINVAL;
	}
	return 0;
}

/* The pack being replaced: into the packer's symbolizer as the source of
 * last resort, and its JIT entries kept as they are. */
static int load_old(void *ctx, struct symbolizer *s, struct jitmaps *jm)
{
	struct pack_cli *c = ctx;
	struct jit_entry e;
	uint32_t pid;
	uint64_t time;
	size_t i;
	int err;

	err = model__load(c->in, &c->old);
	if (!err)
		err = model__pack_load(c->old, s);
	for (i = 0; !err && i < model__jit_entries(c->old); i++) {
		model__jit_entry(c->old, i, &pid, &time, &e.start, &e.size);
		e.name = model__jit_name(c->old, i);
		e.name_len = strlen(e.name);
		err = jitmaps__add(jm, pid, time, &e);
		err = err == -EINVAL ? 0 : err;
	}
	return err;
}

static void report_done(const struct pack_cli *c, const struct pack_rewrite *res)
{
	const struct cap_pack_info *k = &res->info;
	struct stat st;

	fprintf(stderr, "stkrec: %s %s: %" PRIu64 " binaries, %" PRIu64 " symbols, %" PRIu64
		" addresses (%" PRIu64 " unnamed), %" PRIu64 " JIT entries; %.2f s\n",
		res->had_pack ? "repacked" : "packed", c->out_name, k->objects, k->symbols,
		k->addresses, k->unnamed, k->jit_entries, res->pack_ns / 1e9);
	if (k->objects_missing)
		log_debug(1, "%" PRIu64 " binaries not found%s: their addresses are unnamed",
			  k->objects_missing, c->o.symfs ? " under --symfs" : "");
	if (k->left_out)
		log_warn("pack: %" PRIu64 " names left out at the pack's bounds", k->left_out);
	if (!stat(c->out, &st))
		log_debug(1, "%s: %lld bytes, %" PRIu64 " records copied", c->out_name,
			  (long long)st.st_size, res->records);
}

/* --- '-': pack reads IN more than once and replaces OUT whole, so
 * standard input and output go through temporary files ---------------- */

static int copy_fd(int from, int to)
{
	char buf[1 << 16];
	ssize_t n, w, off;

	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (off = 0; off < n; off += w) {
			w = write(to, buf + off, n - off);
			if (w < 0 && errno != EINTR)
				return -errno;
			w = w < 0 ? 0 : w;
		}
	}
	return 0;
}

static int spool_file(char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");

	snprintf(path, len, "%s/stkrec-pack.XXXXXX", dir && *dir ? dir : "/var/tmp");
	return cap_file__create_tmp(path, 0);
}

/* Standard input into c->spool_in, which then is IN. */
static int spool_stdin(struct pack_cli *c)
{
	int fd, err;

	if (isatty(STDIN_FILENO)) {
		log_usage_error("pack", "'-' reads a capture from standard input, which is a "
				"terminal: pipe one in, or name a file");
		return EXIT_USAGE;
	}
	fd = spool_file(c->spool_in, sizeof(c->spool_in));
	err = fd < 0 ? fd : copy_fd(STDIN_FILENO, fd);
	if (fd >= 0)
		close(fd);
	if (err) {
		log_error("pack: cannot keep standard input in %s: %s", c->spool_in, strerror(-err));
		return EXIT_FAIL;
	}
	c->in = c->spool_in;
	return 0;
}

/* OUT '-': the pack goes to c->spool_out, copied out at the end. */
static int spool_stdout(struct pack_cli *c)
{
	int fd;

	if (isatty(STDOUT_FILENO)) {
		log_usage_error("pack", "-o -: standard output is a terminal; a capture is "
				"binary: redirect it");
		return EXIT_USAGE;
	}
	fd = spool_file(c->spool_out, sizeof(c->spool_out));
	if (fd < 0) {
		log_error("pack: cannot make a temporary file: %s", strerror(-fd));
		return EXIT_FAIL;
	}
	close(fd);
	c->out = c->spool_out;
	return 0;
}

static int unspool_stdout(const struct pack_cli *c)
{
	int fd = open(c->spool_out, O_RDONLY | O_CLOEXEC), err;

	err = fd < 0 ? -errno : copy_fd(fd, STDOUT_FILENO);
	if (fd >= 0)
		close(fd);
	if (err)
		log_error("pack: cannot write '<stdout>': %s", strerror(-err));
	return err ? EXIT_FAIL : 0;
}

/* IN and OUT: '-' through temporary files; 0 or an exit code. */
static int set_files(struct pack_cli *c)
{
	int ret = 0;

	c->in_name = input__name(c->in);
	if (!c->out)
		c->out = c->in;
	c->out_name = input__is_stdin(c->out) ? "<stdout>" : c->out;
	if (input__is_stdin(c->out))
		ret = spool_stdout(c);
	if (!ret && input__is_stdin(c->in))
		ret = spool_stdin(c);
	return ret;
}

static void unspool(const struct pack_cli *c)
{
	if (c->spool_in[0])
		unlink(c->spool_in);
	if (c->spool_out[0])
		unlink(c->spool_out);
}

/* IN must be a capture this stkrec reads before anything is written. */
static int check_input(const struct pack_cli *c)
{
	struct cap_reader *r;
	int err = cap_reader__open(c->in, &r);

	if (err) {
		log_capture_error(c->in_name, NULL, err);
		return err;
	}
	cap_reader__close(r);
	return 0;
}

static int pack(struct pack_cli *c)
{
	struct pack_rewrite res;
	int err;

	if (check_input(c))
		return EXIT_UNREADABLE;
	c->o.symfs = c->sym.symfs;
	c->o.debug_dir = c->sym.debug_dir;
	c->o.old_pack = load_old;
	c->o.old_pack_ctx = c;
	err = pack__rewrite(c->in, c->out, &c->o, &res);
	model__free(c->old);
	if (err == CAP_ERR_VERSION)
		log_error("pack: %s holds records this stkrec does not know (a newer version "
			  "wrote it): pack it with that version", c->in_name);
	else if (err)
		log_error("pack: cannot write %s: %s", c->out_name, cap_strerror(err));
	if (err)
		return EXIT_FAIL;
	report_done(c, &res);
	if (c->spool_out[0] && unspool_stdout(c))
		return EXIT_FAIL;
	if (res.recovered) {
		log_warn("%s: capture recovered with loss: %s; %s holds what could be read",
			 c->in_name, res.loss, c->out_name);
		return EXIT_RECOVERED;
	}
	return EXIT_OK;
}

int cmd_pack(int argc, char **argv)
{
	struct pack_cli c = { 0 };
	int err, ret;

	err = parse_args(argc, argv, &c);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	ret = set_files(&c);
	if (!ret)
		ret = pack(&c);
	unspool(&c);
	return ret;
}
