// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Packaging, as a user and a distribution meet it: `stkrec --version` names
 * the commit built; `make install` lays out the binary, the man pages and
 * the bash completion under DESTDIR and PREFIX; every page renders without
 * a warning and documents every option its -h lists; the completion offers
 * what -h lists; `make deb` builds a package lintian finds no error in and
 * dpkg installs into a fresh root. Runs make in $STKREC_SRCDIR, whose
 * build/stkrec must be $STKREC (as in `make test`).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/util_e2e.h"

#define NCMDS 7
static const char *const cmds[NCMDS] = { "record", "report", "script", "info",
					 "diff",   "pack",   "scrub" };

static const char *srcdir, *bin;
static char tmp[64];

static void setup(void)
{
	srcdir = e2e_env("STKREC_SRCDIR", ".");
	bin = e2e_env("STKREC", "build/stkrec");
	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	snprintf(tmp, sizeof(tmp), "/tmp/stkrec-install-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
	if (*tmp)
		e2e_shell("rm -rf '%s'", tmp);
	*tmp = 0;
}

TestSuite(install, .init = setup, .fini = teardown);

/* The stdout of a shell command line (stderr: the test's); *status its
 * exit status. */
static char *run(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *run(int *status, const char *fmt, ...)
{
	char *cmd, *out = NULL;
	size_t len = 0;
	va_list ap;
	FILE *f, *p;
	int st;

	va_start(ap, fmt);
	st = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	cr_assert_geq(st, 0);
	f = open_memstream(&out, &len);
	p = popen(cmd, "r");
	cr_assert(f && p, "%s", cmd);
	for (int c; (c = fgetc(p)) != EOF;)
		fputc(c, f);
	st = pclose(p);
	fclose(f);
	free(cmd);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

static void need(const char *cmd)
{
	if (!e2e_have(cmd))
		cr_skip_test("%s is missing (make deps installs it)", cmd);
}

/* `make ARGS` in the source tree, asserted to succeed; its output. Make's
 * variables from a `make test` around us are left out: its jobserver's
 * descriptors are not ours. */
static char *make(const char *args)
{
	char built[PATH_MAX], a[PATH_MAX], b[PATH_MAX], *out;
	int st;

	need("make");
	snprintf(built, sizeof(built), "%s/build/stkrec", srcdir);
	if (!realpath(built, a) || !realpath(bin, b) || strcmp(a, b))
		cr_skip_test("STKREC (%s) is not STKREC_SRCDIR's build/stkrec (%s)", bin, built);
	out = run(&st, "env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory -C '%s' %s 2>&1",
		  srcdir, args);
	cr_assert_eq(st, 0, "make %s: %s", args, out);
	return out;
}

/* make install into tmp/NAME; the destination's path. */
static char *install(const char *name, const char *prefix)
{
	static char dest[128];
	char args[2 * PATH_MAX];

	snprintf(dest, sizeof(dest), "%s/%s", tmp, name);
	snprintf(args, sizeof(args), "install DESTDIR=%s%s%s", dest, prefix ? " PREFIX=" : "",
		 prefix ? prefix : "");
	free(make(args));
	return dest;
}

/* Whitespace runs made one space: text as a reader sees it, whatever the
 * line breaks. */
static char *squeeze(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (isspace((unsigned char)*r)) {
			if (w > s && w[-1] != ' ')
				*w++ = ' ';
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
	return s;
}

static int optchar(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_';
}

/* The length of the -x or --long option token at s (0: none). */
static size_t token_at(const char *text, const char *s)
{
	size_t n = s[1] == '-' ? 2 : 1;

	if (*s != '-' || (s > text && optchar(s[-1])) || !isalpha((unsigned char)s[n]))
		return 0;
	while (optchar(s[n]) && s[n] != '_')
		n++;
	return n;
}

/* Does text hold the token tok (a string of len bytes) as a whole word? */
static bool has_token(const char *text, const char *tok, size_t len)
{
	for (const char *p = text; (p = strstr(p, tok)); p++) {
		if ((p == text || !optchar(p[-1])) && !optchar(p[len]) &&
		    !strncmp(p, tok, len))
			return true;
	}
	return false;
}

Test(install, version_names_the_commit)
{
	char *out, *mk, *head, *diff, expect[256], *v;
	int st, changed;

	out = run(&st, "'%s' --version", bin);
	cr_assert_eq(st, 0);
	mk = run(&st, "sed -n 's/^VERSION := //p' '%s/Makefile'", srcdir);
	cr_assert(st == 0 && *mk, "no VERSION in %s/Makefile", srcdir);
	mk[strcspn(mk, "\n")] = 0;
	head = run(&st, "[ -e '%s/.git' ] && git -C '%s' rev-parse --short HEAD", srcdir, srcdir);
	if (st) {
		/* Outside git: the version alone. */
		snprintf(expect, sizeof(expect), "stkrec %s\n", mk);
		cr_assert_str_eq(out, expect);
		cr_log_warn("%s is not a git tree: the commit is not checked", srcdir);
		return;
	}
	head[strcspn(head, "\n")] = 0;
	/* git describe --dirty: tracked files changed since HEAD. */
	diff = run(&changed, "git -C '%s' diff --quiet HEAD", srcdir);
	snprintf(expect, sizeof(expect), "stkrec %s (%s%s)\n", mk, head, changed ? "-dirty" : "");
	cr_assert_str_eq(out, expect, "'%s', not '%s': built from another commit than %s's HEAD?",
			 out, expect, srcdir);
	for (v = mk; *v; v++)
		cr_assert(isdigit((unsigned char)*v) || *v == '.', "VERSION %s", mk);
	free(out), free(mk), free(head), free(diff);
}

/* A make with nothing new relinks nothing; a changed `git describe` text
 * recompiles main.c alone and relinks. */
Test(install, make_relinks_only_for_a_new_commit)
{
	char path[PATH_MAX], *out, *again, *describe, expect[512];
	struct stat before, after;
	int st;
	FILE *f;

	free(make("all"));
	snprintf(path, sizeof(path), "%s/build/stkrec", srcdir);
	cr_assert_eq(stat(path, &before), 0);
	again = make("all");
	cr_assert_str_eq(again, "", "an up-to-date tree rebuilt");
	cr_assert_eq(stat(path, &after), 0);
	cr_assert_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	cr_assert_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);

	/* What an older commit left. */
	snprintf(path, sizeof(path), "%s/build/version.h", srcdir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "#define STKREC_COMMIT \"0000000\"\n");
	fclose(f);
	describe = run(&st, "cd '%s' && { [ -e .git ] && git describe --always --dirty --exclude='*'; }",
		       srcdir);
	describe[strcspn(describe, "\n")] = 0;
	out = make("all");
	snprintf(expect, sizeof(expect),
		 "  GEN      build/version.h (%s)\n"
		 "  CC       build/src/main.o\n"
		 "  LINK     build/stkrec\n", describe);
	cr_assert_str_eq(out, expect);
	free(out);
	out = run(&st, "'%s' --version", bin);
	snprintf(expect, sizeof(expect), "(%s)\n", describe);
	cr_assert(*describe ? strstr(out, expect) != NULL : strchr(out, '(') == NULL, "%s", out);
	free(again), free(describe), free(out);
}

/* The files under dest, one "MODE PATH" a line, sorted. */
static char *files_of(const char *dest)
{
	int st;
	char *out = run(&st, "cd '%s' && find . ! -type d -printf '%%m %%P\\n' | sort -k2", dest);

	cr_assert_eq(st, 0);
	return out;
}

static void assert_layout(const char *dest, const char *prefix)
{
	char expect[4096], *got;
	int n = 0;

	n += snprintf(expect + n, sizeof(expect) - n, "755 %s/bin/stkrec\n", prefix);
	n += snprintf(expect + n, sizeof(expect) - n,
		      "644 %s/share/bash-completion/completions/stkrec\n", prefix);
	n += snprintf(expect + n, sizeof(expect) - n, "644 %s/share/man/man1/stkrec-diff.1.gz\n"
		      "644 %s/share/man/man1/stkrec-info.1.gz\n"
		      "644 %s/share/man/man1/stkrec-pack.1.gz\n"
		      "644 %s/share/man/man1/stkrec-record.1.gz\n"
		      "644 %s/share/man/man1/stkrec-report.1.gz\n"
		      "644 %s/share/man/man1/stkrec-script.1.gz\n"
		      "644 %s/share/man/man1/stkrec-scrub.1.gz\n"
		      "644 %s/share/man/man1/stkrec.1.gz\n",
		      prefix, prefix, prefix, prefix, prefix, prefix, prefix, prefix);
	got = files_of(dest);
	cr_assert_str_eq(got, expect);
	free(got);
}

/* gzip -9n: no name, no time stamp, "maximum compression" (RFC 1952). */
static void assert_gzip_9n(const char *path)
{
	unsigned char h[10];
	FILE *f = fopen(path, "rb");

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fread(h, 1, sizeof(h), f), sizeof(h));
	fclose(f);
	cr_assert(h[0] == 0x1f && h[1] == 0x8b && h[2] == 8, "%s: not gzip", path);
	cr_assert_eq(h[3] & 0x08, 0, "%s: holds a file name (gzip -n)", path);
	cr_assert(!h[4] && !h[5] && !h[6] && !h[7], "%s: holds a time stamp (gzip -n)", path);
	cr_assert_eq(h[8], 2, "%s: not gzip -9", path);
}

Test(install, install_lays_out_exactly)
{
	char path[PATH_MAX], usr[160], *found;
	int st;

	need("help2man");
	need("man");
	snprintf(usr, sizeof(usr), "%s", install("usr", "/usr"));
	assert_layout(usr, "usr");
	for (int i = -1; i < NCMDS; i++) {
		snprintf(path, sizeof(path), "%s/usr/share/man/man1/stkrec%s%s.1.gz", usr,
			 i < 0 ? "" : "-", i < 0 ? "" : cmds[i]);
		assert_gzip_9n(path);
	}
	cr_assert_eq(e2e_shell("cmp -s '%s' '%s/usr/bin/stkrec'", bin, usr), 0);
	cr_assert_eq(e2e_shell("cmp -s '%s/build/stkrec.bash' "
			       "'%s/usr/share/bash-completion/completions/stkrec'", srcdir, usr), 0);
	/* `man stkrec-record` finds the page installed. */
	snprintf(path, sizeof(path), "%s/usr/share/man/man1/stkrec-record.1.gz\n", usr);
	found = run(&st, "MANPATH='%s/usr/share/man' man -w stkrec-record", usr);
	cr_assert_eq(st, 0);
	cr_assert_str_eq(found, path);
	free(found);
	/* PREFIX defaults to /usr/local. */
	assert_layout(install("local", NULL), "usr/local");
}

/* Render page (a file) as man shows it: asserts no warning; the text. */
static char *render(const char *page)
{
	char err[80], *out, *msg;
	int st;

	snprintf(err, sizeof(err), "%s/err", tmp);
	out = run(&st, "LANG=C.UTF-8 MANWIDTH=80 MANPAGER=cat PAGER=cat man -l --warnings '%s' 2>'%s'",
		  page, err);
	msg = run(&st, "cat '%s'", err);
	cr_assert_eq(st, 0);
	cr_assert_str_eq(msg, "", "%s: %s", page, msg);
	cr_assert_gt(strlen(out), 200, "%s rendered as '%s'", page, out);
	free(msg);
	return out;
}

/* Every -x and --long token of `stkrec CMD -h` is in the page. */
static void assert_documents(const char *page, const char *help, const char *text)
{
	int n = 0;

	for (const char *p = help; *p; p++) {
		size_t len = token_at(help, p);
		char tok[64];

		if (!len)
			continue;
		n++;
		snprintf(tok, sizeof(tok), "%.*s", (int)len, p);
		cr_expect(has_token(text, tok, len), "%s does not document %s", page, tok);
		p += len - 1;
	}
	cr_assert_gt(n, 2, "%s: no options in -h", page);
}

/* SYNOPSIS: -h's usage, word for word (its options whole: a line breaks
 * between words only). */
static void assert_synopsis(const char *page, const char *help, const char *text)
{
	char *usage = strdup(help), *end, expect[2048];

	cr_assert(usage && !strncmp(usage, "usage: ", 7), "%s: -h starts '%.20s'", page, help);
	end = strstr(usage, "\n\n");
	if (end)
		*end = 0;
	snprintf(expect, sizeof(expect), "SYNOPSIS %s DESCRIPTION", squeeze(usage) + 7);
	cr_assert_not_null(strstr(text, expect), "%s: no '%s' in '%s'", page, expect, text);
	free(usage);
}

/* NAME: the command's line of `stkrec -h` (stkrec(1): the first sentence
 * of its description); SEE ALSO: every other page. */
static void assert_name_and_see_also(const char *cmd, const char *list, const char *text)
{
	char expect[1024], desc[256];
	const char *line;
	int n;

	if (!cmd) {
		snprintf(expect, sizeof(expect), "NAME stkrec - Record what threads wait on, burn CPU "
			 "on, and what disk I/O they cause, into one portable capture SYNOPSIS");
		cr_assert_not_null(strstr(text, expect), "no '%s' in %s", expect, text);
	} else {
		snprintf(expect, sizeof(expect), "\n   %s", cmd);
		line = strstr(list, expect);
		cr_assert_not_null(line, "%s not in stkrec -h", cmd);
		sscanf(line + strlen(expect), " %255[^\n]", desc);
		snprintf(expect, sizeof(expect), "NAME stkrec-%s - %s SYNOPSIS", cmd, desc);
		cr_assert_not_null(strstr(text, expect), "no '%s' in %s", expect, text);
	}
	n = snprintf(expect, sizeof(expect), "SEE ALSO%s", cmd ? " stkrec(1)," : "");
	for (int i = 0; i < NCMDS; i++) {
		if (!cmd || strcmp(cmds[i], cmd))
			n += snprintf(expect + n, sizeof(expect) - n, " stkrec-%s(1),", cmds[i]);
	}
	expect[n - 1] = 0;
	cr_assert_not_null(strstr(text, expect), "no '%s' in %s", expect, text);
}

Test(install, man_pages_render_and_document_every_option)
{
	char page[PATH_MAX], *dest, *list, *help, *text;
	int st;

	need("help2man");
	need("man");
	dest = install("usr", "/usr");
	list = run(&st, "'%s' -h", bin);
	for (int i = -1; i < NCMDS; i++) {
		const char *cmd = i < 0 ? NULL : cmds[i];

		snprintf(page, sizeof(page), "%s/usr/share/man/man1/stkrec%s%s.1.gz", dest,
			 cmd ? "-" : "", cmd ? cmd : "");
		help = cmd ? run(&st, "'%s' %s -h", bin, cmd) : strdup(list);
		cr_assert_eq(st, 0);
		text = squeeze(render(page));
		assert_documents(page, help, text);
		assert_synopsis(page, help, text);
		assert_name_and_see_also(cmd, list, text);
		free(help), free(text);
	}
	free(list);
}

/* The completion of the command line words (shell words, the last one
 * being typed), run in directory dir: COMPREPLY, space-separated, sorted
 * when sort. */
static char *complete(const char *dir, bool sort, const char *words)
{
	char *out;
	int st;

	out = run(&st, "cd '%s' && bash --norc --noprofile '%s/tests/install/complete.sh' "
		  "'%s/build/stkrec.bash' %s%s", dir, srcdir, srcdir, words, sort ? " | sort" : "");
	cr_assert_eq(st, 0, "completing %s", words);
	for (char *p = out; *p; p++)
		*p = *p == '\n' ? ' ' : *p;
	if (*out)
		out[strlen(out) - 1] = 0;
	return out;
}

#define assert_completes(dir, sort, words, expect)                                 \
	do {                                                                       \
		char *got_ = complete(dir, sort, words);                           \
		cr_expect_str_eq(got_, expect, "%s: '%s'", words, got_);          \
		free(got_);                                                        \
	} while (0)

/* The options of `stkrec CMD -h`'s option lines (an option line: "-x" or
 * "--long" indented 1 to 10 columns), in order, space-separated: the
 * leading option tokens before the description. */
static char *options_of(const char *help)
{
	char *out = calloc(1, strlen(help) + 1), *w = out;
	const char *line = help;

	cr_assert_not_null(out);
	for (; *line; line = strchrnul(line, '\n') + (strchr(line, '\n') != NULL)) {
		size_t ind = strspn(line, " ");
		const char *p = line + ind, *end = strchrnul(line, '\n'), *gap = strstr(p, "  ");

		if (ind < 1 || ind > 10 || !token_at(line, p))
			continue;
		if (gap && gap < end)
			end = gap;
		while (p < end && token_at(line, p)) {
			size_t len = token_at(line, p);

			w += sprintf(w, "%s%.*s", w > out ? " " : "", (int)len, p);
			p += len;
			p += strspn(p, ", ");
		}
	}
	return out;
}

Test(install, completion_offers_every_option_of_h)
{
	char words[64], *help, *opts;
	int st;

	free(make("completion"));
	assert_completes(tmp, false, "stkrec ''",
			 "record report script info diff pack scrub --help --version");
	assert_completes(tmp, false, "stkrec re", "record report");
	for (int i = 0; i < NCMDS; i++) {
		help = run(&st, "'%s' %s -h", bin, cmds[i]);
		opts = options_of(help);
		cr_assert_gt(strlen(opts), 10, "%s -h: '%s'", cmds[i], opts);
		snprintf(words, sizeof(words), "stkrec %s -", cmds[i]);
		assert_completes(tmp, false, words, opts);
		free(help), free(opts);
	}
	assert_completes(tmp, false, "stkrec info -", "-i --input -j --json -h --help");
	assert_completes(tmp, false, "stkrec scrub --", "--output --paths --help");
	assert_completes(tmp, false, "stkrec record --max",
			 "--max-block-time --max-size --max-dumps");
	assert_completes(tmp, false, "stkrec nosuch -", "");
	{
		char *spec = run(&st, "bash --norc --noprofile '%s/tests/install/complete.sh' "
				 "'%s/build/stkrec.bash' --spec", srcdir, srcdir);

		cr_assert_str_eq(spec, "complete -F _stkrec stkrec\n");
		free(spec);
	}
}

Test(install, completion_of_arguments)
{
	free(make("completion"));
	/* Event kinds: record -h's, lists for record, report and script, one
	 * for diff, which takes no wakeup. */
	assert_completes(tmp, false, "stkrec record -e ''", "offcpu cpu bio wakeup");
	assert_completes(tmp, false, "stkrec record -e offcpu,",
			 "offcpu,cpu offcpu,bio offcpu,wakeup");
	assert_completes(tmp, false, "stkrec report --event = offcpu,bio,",
			 "offcpu,bio,cpu offcpu,bio,wakeup");
	assert_completes(tmp, false, "stkrec script -e w", "wakeup");
	assert_completes(tmp, false, "stkrec diff -e ''", "offcpu cpu bio");
	/* Sort keys, report -h's. */
	assert_completes(tmp, false, "stkrec report -s ''",
			 "comm pid dso sym wait usym cgroup container");
	assert_completes(tmp, false, "stkrec report -s c", "comm cgroup container");
	assert_completes(tmp, false, "stkrec report --sort comm,wait,u", "comm,wait,usym");
	/* A choice the usage spells; a value nothing completes. */
	assert_completes(tmp, false, "stkrec record --call-graph ''", "fp dwarf");
	assert_completes(tmp, false, "stkrec record -p ''", "");
	assert_completes(tmp, false, "stkrec report -d ''", "");

	/* Files for -i and -o (and the commands that take files), a
	 * directory for --symfs. */
	cr_assert_eq(e2e_shell("cd '%s' && mkdir sub && touch a.cap b.cap notes.txt", tmp), 0);
	assert_completes(tmp, true, "stkrec report -i ''", "a.cap b.cap notes.txt sub");
	assert_completes(tmp, true, "stkrec script --input a", "a.cap");
	assert_completes(tmp, true, "stkrec record -o b", "b.cap");
	assert_completes(tmp, true, "stkrec pack --output = ''", "a.cap b.cap notes.txt sub");
	assert_completes(tmp, true, "stkrec info ''", "a.cap b.cap notes.txt sub");
	assert_completes(tmp, true, "stkrec diff a.cap ''", "a.cap b.cap notes.txt sub");
	assert_completes(tmp, true, "stkrec report --symfs ''", "sub");
	assert_completes(tmp, true, "stkrec report ''", "");
	/* record -- COMMAND: commands, then files. */
	assert_completes(tmp, true, "stkrec record -e cpu -- stkrec-no-such-command", "");
	assert_completes(tmp, true, "stkrec record -- true n", "notes.txt");
	{
		char *got = complete(tmp, true, "stkrec record -- tru");

		cr_expect(has_token(got, "true", 4), "'%s'", got);
		free(got);
	}
}

/* The names of a Depends field, sorted, one a line. */
static char *depends_names(const char *deb)
{
	int st;
	char *out = run(&st, "dpkg-deb -f '%s' Depends | tr ',' '\\n' | "
			"sed 's/^ *//; s/[ (].*//' | sort", deb);

	cr_assert_eq(st, 0);
	return out;
}

/* Depends: the packages of the libraries the binary links, and those of
 * the libraries they link are among their own dependencies. */
static void assert_depends(const char *deb, const char *exe)
{
	char *names = depends_names(deb), *libs, *needed, *deps, *line, *save;
	int st;

	libs = run(&st, "'%s/tests/install/libpkgs.sh' '%s'", srcdir, exe);
	cr_assert_eq(st, 0);
	needed = run(&st, "echo '%s' | sed -n 's/ needed$//p'", libs);
	cr_assert_str_eq(names, needed, "Depends against ldd: %s", libs);
	deps = run(&st, "dpkg-query -W -f '${Depends}, ${Pre-Depends}\\n' $(echo '%s')", names);
	for (line = strtok_r(libs, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strstr(line, " indirect");

		if (!sp)
			continue;
		*sp = 0;
		cr_expect(has_token(deps, line, strlen(line)), "%s: no Depends brings it", line);
	}
	free(names), free(libs), free(needed), free(deps);
}

Test(install, deb_installs_into_a_fresh_root)
{
	const char *tools[] = { "dpkg-deb", "dpkg-shlibdeps", "lintian", "help2man", "readelf" };
	char deb[PATH_MAX], root[80], *ver, *arch, *out, *expect;
	int st;

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		need(tools[i]);
	free(make("deb"));
	ver = run(&st, "sed -n 's/^VERSION := //p' '%s/Makefile' | tr -d '\\n'", srcdir);
	arch = run(&st, "dpkg --print-architecture | tr -d '\\n'");
	snprintf(deb, sizeof(deb), "%s/build/stkrec_%s-1_%s.deb", srcdir, ver, arch);
	cr_assert_eq(access(deb, R_OK), 0, "no %s", deb);

	out = run(&st, "lintian '%s' 2>/dev/null", deb);
	cr_assert_null(strstr(out, "E: "), "lintian: %s", out);
	if (*out)
		cr_log_info("lintian: %s", out);
	free(out);

	snprintf(root, sizeof(root), "%s/root", tmp);
	cr_assert_eq(e2e_shell("mkdir -p '%s/var/lib/dpkg/info' '%s/var/lib/dpkg/updates' && "
			       "touch '%s/var/lib/dpkg/status'", root, root, root), 0);
	out = run(&st, "dpkg --root='%s' --log=/dev/null --force-depends -i '%s' 2>&1", root, deb);
	cr_assert_eq(st, 0, "dpkg -i: %s", out);
	free(out);

	out = run(&st, "'%s/usr/bin/stkrec' --version", root);
	expect = run(&st, "'%s' --version", bin);
	cr_assert_str_eq(out, expect);
	free(out), free(expect);
	out = run(&st, "dpkg --root='%s' -L stkrec", root);
	cr_assert_str_eq(out, "/.\n/usr\n/usr/bin\n/usr/bin/stkrec\n/usr/share\n"
			 "/usr/share/bash-completion\n/usr/share/bash-completion/completions\n"
			 "/usr/share/bash-completion/completions/stkrec\n"
			 "/usr/share/doc\n/usr/share/doc/stkrec\n"
			 "/usr/share/doc/stkrec/changelog.Debian.gz\n/usr/share/doc/stkrec/copyright\n"
			 "/usr/share/man\n/usr/share/man/man1\n"
			 "/usr/share/man/man1/stkrec-diff.1.gz\n/usr/share/man/man1/stkrec-info.1.gz\n"
			 "/usr/share/man/man1/stkrec-pack.1.gz\n/usr/share/man/man1/stkrec-record.1.gz\n"
			 "/usr/share/man/man1/stkrec-report.1.gz\n/usr/share/man/man1/stkrec-script.1.gz\n"
			 "/usr/share/man/man1/stkrec-scrub.1.gz\n/usr/share/man/man1/stkrec.1.gz\n");
	free(out);
	out = run(&st, "zcat '%s/usr/share/doc/stkrec/changelog.Debian.gz' | head -1", root);
	cr_assert_geq(asprintf(&expect, "stkrec (%s-1) unstable; urgency=medium\n", ver), 0);
	cr_assert_str_eq(out, expect);
	free(out), free(expect);
	out = run(&st, "readelf -S --wide '%s/usr/bin/stkrec' | grep -c ' \\.symtab '", root);
	cr_assert_str_eq(out, "0\n", "not stripped");
	free(out);
	assert_depends(deb, bin);
	free(ver), free(arch);
}

/* Installed, the completion is found and loaded by bash-completion on the
 * first TAB (sourced inside a function: its tables must still be global). */
Test(install, completion_loads_on_demand)
{
	const char *loader = "/usr/share/bash-completion/bash_completion";
	char *dest, *out;
	int st;

	if (access(loader, R_OK))
		cr_skip_test("no %s (make deps installs bash-completion)", loader);
	need("help2man");
	dest = install("usr", "/usr");
	out = run(&st, "XDG_DATA_DIRS='%s/usr/share' bash --norc --noprofile -c '"
		  "source %s && __load_completion stkrec && complete -p stkrec && "
		  "COMP_WORDS=(stkrec report -s c) COMP_CWORD=3 && _stkrec && "
		  "echo \"${COMPREPLY[*]}\"' 2>&1", dest, loader);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_str_eq(out, "complete -F _stkrec stkrec\ncomm cgroup container\n");
	free(out);
}
