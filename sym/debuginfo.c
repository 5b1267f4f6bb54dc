// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Finding the files that describe an object: the object itself (recorded
 * path, --symfs tree, build-id directory, debuginfod) and its separate debug
 * file (build-id directory, .gnu_debuglink, debuginfod). Every candidate is
 * checked against the recorded build ID: a file of another build is never
 * used, whatever its path.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include "sym/sym_int.h"

/* libdebuginfod's client API (debuginfod.h), resolved at run time so that
 * stkrec has no link dependency on it. */
typedef void *(*dbgd_begin_fn)(void);
typedef void (*dbgd_end_fn)(void *client);
typedef int (*dbgd_find_fn)(void *client, const unsigned char *build_id,
			    int build_id_len, char **path);

/* CRC32 of the whole file, from libelf's image of it. */
static int file_crc32(const struct elf_file *f, uint32_t *crc)
{
	size_t len;
	const char *raw = elf_rawfile(f->elf, &len);

	if (!raw)
		return -EIO;
	*crc = crc32_z(0, (const Bytef *)raw, len);
	return 0;
}

/* Open path and accept it only if its build ID is the recorded one. */
static int try_file(struct sym_locator *l, const char *path, const uint8_t *id,
		    uint8_t id_size, struct elf_file **out)
{
	struct elf_file *f;
	int err = elf_file__open(path, &f);

	*out = NULL;
	if (err)
		return err == -ENOMEM ? err : 0;
	if (id_size && !elf_file__build_id_is(f, id, id_size)) {
		l->stats->buildid_mismatches++;
		elf_file__close(f);
		return 0;
	}
	*out = f;
	return 0;
}

static void build_id_path(char *buf, size_t len, const char *dir,
			  const uint8_t *id, uint8_t id_size, const char *suffix)
{
	int n = snprintf(buf, len, "%s/.build-id/%02x/", dir, id[0]);

	for (int i = 1; i < id_size && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - n, "%02x", id[i]);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "%s", suffix);
}

static bool debuginfod_ready(struct sym_locator *l)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	dbgd_begin_fn begin;

	if (!l->debuginfod || !urls || !*urls || l->dl_failed)
		return false;
	if (l->client)
		return true;
	l->dl = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	begin = l->dl ? (dbgd_begin_fn)dlsym(l->dl, "debuginfod_begin") : NULL;
	l->client = begin ? begin() : NULL;
	if (!l->client) {
		l->dl_failed = true;
		return false;
	}
	return true;
}

/* Ask debuginfod; sym = "debuginfod_find_executable" or "..._debuginfo". */
static int try_debuginfod(struct sym_locator *l, const char *sym,
			  const uint8_t *id, uint8_t id_size,
			  struct elf_file **out)
{
	dbgd_find_fn find;
	char *path = NULL;
	int fd, err;

	*out = NULL;
	if (!id_size || !debuginfod_ready(l))
		return 0;
	find = (dbgd_find_fn)dlsym(l->dl, sym);
	if (!find)
		return 0;
	fd = find(l->client, id, id_size, &path);
	if (fd < 0) {
		free(path);
		return 0;
	}
	err = elf_file__open_fd(fd, path ? path : "(debuginfod)", out);
	free(path);
	if (err)
		return err == -ENOMEM ? err : 0;
	if (!elf_file__build_id_is(*out, id, id_size)) {
		l->stats->buildid_mismatches++;
		elf_file__close(*out);
		*out = NULL;
		return 0;
	}
	l->stats->debuginfod_fetches++;
	return 0;
}

int locate_object(struct sym_locator *l, const char *path, const uint8_t *id,
		  uint8_t id_size, struct elf_file **out)
{
	char buf[PATH_MAX];
	int err = 0;

	*out = NULL;
	if (path[0] == '/') {
		if (!l->symfs)
			err = try_file(l, path, id, id_size, out);
		else if (snprintf(buf, sizeof(buf), "%s%s", l->symfs, path) <
			 (int)sizeof(buf))
			err = try_file(l, buf, id, id_size, out);
	}
	if (err || *out)
		return err;
	if (id_size) {
		build_id_path(buf, sizeof(buf), l->debug_dir, id, id_size, "");
		err = try_file(l, buf, id, id_size, out);
		if (err || *out)
			return err;
	}
	return try_debuginfod(l, "debuginfod_find_executable", id, id_size, out);
}

/* Is f the debug file that debuglink (name, crc) of the object names? The
 * build ID decides when both sides have one, else the CRC of the file. */
static bool debuglink_matches(struct sym_locator *l, struct elf_file *f,
			      const uint8_t *id, uint8_t id_size, uint32_t crc)
{
	uint32_t got;

	if (id_size && f->build_id_size) {
		if (elf_file__build_id_is(f, id, id_size))
			return true;
		l->stats->buildid_mismatches++;
		return false;
	}
	return !file_crc32(f, &got) && got == crc;
}

static int try_debuglink(struct sym_locator *l, const char *cand,
			 const struct elf_file *obj, const uint8_t *id,
			 uint8_t id_size, uint32_t crc, struct elf_file **out)
{
	struct elf_file *f;
	int err;

	*out = NULL;
	if (!strcmp(cand, obj->path))
		return 0;
	err = elf_file__open(cand, &f);
	if (err)
		return err == -ENOMEM ? err : 0;
	if (!debuglink_matches(l, f, id, id_size, crc)) {
		elf_file__close(f);
		return 0;
	}
	*out = f;
	return 0;
}

/* Candidates as gdb orders them: next to the object, in its .debug/
 * subdirectory, then under the debug directory at the object's path. */
static int locate_debuglink(struct sym_locator *l, const char *path,
			    const uint8_t *id, uint8_t id_size,
			    const struct elf_file *obj, struct elf_file **out)
{
	const char *name, *slash;
	char buf[PATH_MAX];
	uint32_t crc;
	int i, err, dlen, rlen;

	*out = NULL;
	if (elf_file__debuglink(obj, &name, &crc))
		return 0;
	slash = strrchr(obj->path, '/');
	dlen = slash ? (int)(slash - obj->path) : 0;
	slash = strrchr(path, '/');
	rlen = slash ? (int)(slash - path) : 0;
	for (i = 0; i < 3; i++) {
		int n;

		if (i == 0)
			n = snprintf(buf, sizeof(buf), "%.*s/%s", dlen, obj->path, name);
		else if (i == 1)
			n = snprintf(buf, sizeof(buf), "%.*s/.debug/%s", dlen,
				     obj->path, name);
		else
			n = snprintf(buf, sizeof(buf), "%s%.*s/%s", l->debug_dir,
				     rlen, path, name);
		if (n < 0 || n >= (int)sizeof(buf))
			continue;
		err = try_debuglink(l, buf, obj, id, id_size, crc, out);
		if (err || *out)
			return err;
	}
	return 0;
}

int locate_debug(struct sym_locator *l, const char *path, const uint8_t *id,
		 uint8_t id_size, const struct elf_file *obj,
		 struct elf_file **out)
{
	char buf[PATH_MAX];
	int err;

	*out = NULL;
	if (id_size) {
		build_id_path(buf, sizeof(buf), l->debug_dir, id, id_size, ".debug");
		err = try_file(l, buf, id, id_size, out);
		if (err || *out)
			return err;
	}
	if (obj) {
		err = locate_debuglink(l, path, id, id_size, obj, out);
		if (err || *out)
			return err;
	}
	return try_debuginfod(l, "debuginfod_find_debuginfo", id, id_size, out);
}

int locate_altlink(struct sym_locator *l, const char *name, const uint8_t *id,
		   uint8_t id_size, const char *dbg_path, struct elf_file **out)
{
	const char *slash = strrchr(dbg_path, '/');
	char buf[PATH_MAX];
	int err, n;

	*out = NULL;
	if (!id_size)
		return 0;
	build_id_path(buf, sizeof(buf), l->debug_dir, id, id_size, ".debug");
	err = try_file(l, buf, id, id_size, out);
	if (err || *out)
		return err;
	if (name[0] == '/')
		n = snprintf(buf, sizeof(buf), "%s%s", l->symfs ? l->symfs : "", name);
	else
		n = snprintf(buf, sizeof(buf), "%.*s/%s",
			     slash ? (int)(slash - dbg_path) : 1,
			     slash ? dbg_path : ".", name);
	if (n < 0 || n >= (int)sizeof(buf))
		return 0;
	return try_file(l, buf, id, id_size, out);
}

void sym_locator__free(struct sym_locator *l)
{
	if (l->client && l->dl) {
		dbgd_end_fn end = (dbgd_end_fn)dlsym(l->dl, "debuginfod_end");

		if (end)
			end(l->client);
	}
	if (l->dl)
		dlclose(l->dl);
	l->client = NULL;
	l->dl = NULL;
}
