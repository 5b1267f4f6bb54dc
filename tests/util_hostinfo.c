// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Helpers of the host-information tests; see util_hostinfo.h. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/util_hostinfo.h"

char hostinfo_tmpdir[64];

void hostinfo_mk_tmpdir(void)
{
	strcpy(hostinfo_tmpdir, "/tmp/stkrec-hostinfo-XXXXXX");
	cr_assert_not_null(mkdtemp(hostinfo_tmpdir));
}

void hostinfo_rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", hostinfo_tmpdir);
	if (hostinfo_tmpdir[0] && system(cmd) != 0)
		cr_log_warn("could not remove %s", hostinfo_tmpdir);
}

void hostinfo_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

void hostinfo_build_prog(const char *name, const char *ldflags, int ms, char *out,
			 size_t len)
{
	char src[PATH_MAX], cmd[PATH_MAX * 3], text[256];

	snprintf(src, sizeof(src), "%s/%s.c", hostinfo_tmpdir, name);
	snprintf(text, sizeof(text),
		 "#include <time.h>\nint main(void)\n{\n\tstruct timespec ts = "
		 "{ %d / 1000, %d %% 1000 * 1000000L };\n\tnanosleep(&ts, 0);\n"
		 "\treturn 0;\n}\n", ms, ms);
	hostinfo_write_file(src, text);
	snprintf(out, len, "%s/%s", hostinfo_tmpdir, name);
	snprintf(cmd, sizeof(cmd), "cc -O1 %s -o '%s' '%s'", ldflags, out, src);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

int hostinfo_readelf_buildid(const char *path, uint8_t id[20])
{
	char cmd[PATH_MAX + 64], line[512], *p;
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "Build ID: ");
		if (!p)
			continue;
		for (p += 10; n < 20 && sscanf(p, "%2hhx", &id[n]) == 1; p += 2)
			n++;
		break;
	}
	pclose(f);
	return n;
}

struct cap_header hostinfo_header(void)
{
	struct cap_header h = { .major = CAP_VERSION_MAJOR, .ncpus = 1, .page_size = 4096 };

	return h;
}

static void keep_record(struct hostinfo_readback *rb, const struct cap_record *rec)
{
	struct hostinfo_rec *rc;

	rb->v = realloc(rb->v, (rb->n + 1) * sizeof(*rb->v));
	cr_assert_not_null(rb->v);
	rc = &rb->v[rb->n++];
	rc->rec = *rec;
	memset(rc->tail, 0, sizeof(rc->tail));
	if (rec->tail)
		memcpy(rc->tail, rec->tail,
		       rec->tail_len < sizeof(rc->tail) ? rec->tail_len : sizeof(rc->tail) - 1);
	if (rec->type != CAP_REC_STRING)
		return;
	cr_assert_eq(rec->string.id, rb->nstrings + 1, "STRING ids are dense");
	rb->strings = realloc(rb->strings, (rb->nstrings + 1) * sizeof(char *));
	cr_assert_not_null(rb->strings);
	rb->strings[rb->nstrings++] = strndup(rec->tail, rec->tail_len);
}

void hostinfo_finish_read(struct cap_writer *w, const char *path,
			  struct hostinfo_readback *rb)
{
	struct cap_reader *r;
	struct cap_record rec;
	int err;

	cr_assert_eq(cap_writer__finish(w), 0);
	memset(rb, 0, sizeof(*rb));
	cr_assert_eq(cap_reader__open(path, &r), 0);
	while ((err = cap_reader__next(r, &rec)) == 1)
		keep_record(rb, &rec);
	cr_assert_eq(err, 0);
	cr_assert_eq(cap_reader__stats(r)->bad_records, 0);
	cap_reader__close(r);
}

const char *hostinfo_rb_string(const struct hostinfo_readback *rb, uint32_t id)
{
	cr_assert(id >= 1 && id <= rb->nstrings, "STRING %u defined before use", id);
	return rb->strings[id - 1];
}

size_t hostinfo_rb_count(const struct hostinfo_readback *rb, uint16_t type)
{
	size_t i, n = 0;

	for (i = 0; i < rb->n; i++)
		n += rb->v[i].rec.type == type;
	return n;
}

void hostinfo_rb_free(struct hostinfo_readback *rb)
{
	size_t i;

	for (i = 0; i < rb->nstrings; i++)
		free(rb->strings[i]);
	free(rb->strings);
	free(rb->v);
}
