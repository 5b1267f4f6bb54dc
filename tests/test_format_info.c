// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `stkrec info` end to end: the built binary ($STKREC, default build/stkrec)
 * on captures made by util_capgen; output fields and exit codes. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "format/capture.h"
#include "tests/util_capgen.h"

struct run {
	int status;
	char out[8192];
	char err[2048];
};

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	unlink(path);
}

/* Run `stkrec info ARGS` and capture both streams and the exit status. */
/* stkrec CMD ARGS, its exit status, stdout and stderr. */
static void stkrec(struct run *r, const char *cmd_args)
{
	const char *bin = getenv("STKREC") ? getenv("STKREC") : "build/stkrec";
	char cmd[1024], out[] = "/tmp/stkrec-info-outXXXXXX", err[] = "/tmp/stkrec-info-errXXXXXX";
	int st;

	if (access(bin, X_OK))
		cr_skip_test("%s not built", bin);
	close(mkstemp(out));
	close(mkstemp(err));
	snprintf(cmd, sizeof(cmd), "'%s' %s >%s 2>%s", bin, cmd_args, out, err);
	st = system(cmd);
	cr_assert(WIFEXITED(st));
	r->status = WEXITSTATUS(st);
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
	unlink(out);
	unlink(err);
}

static void info(struct run *r, const char *args)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "info %s", args);
	stkrec(r, cmd);
}

static char *tmp_capture(const struct capgen_opts *o, struct capgen_info *ci)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/stkrec-info-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(capgen_write(path, o, ci), 0);
	return path;
}

#define cr_assert_has(hay, needle) \
	cr_assert_not_null(strstr(hay, needle), "missing %s in:\n%s", needle, hay)

Test(format_info, json_complete_capture)
{
	struct capgen_opts o = { .events = 8, .block_size = 512 };
	struct capgen_info ci;
	char want[128], args[128], cmd[256];
	struct run r;
	char *path = tmp_capture(&o, &ci);

	snprintf(args, sizeof(args), "--json %s", path);
	info(&r, args);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert_has(r.out, "\"events\":{\"offcpu\":8,\"cpu\":8,\"bio\":8,\"wakeup\":0}");
	/* the CPU "loss" is a missed user stack: the events were kept */
	cr_assert_has(r.out, "\"lost\":{\"offcpu\":3,\"cpu\":0,\"bio\":0,\"sideband\":1,\"wakeup\":0}");
	cr_assert_has(r.out, "\"stacks_missed\":{\"user\":2,\"kernel\":0}");
	cr_assert_has(r.out, "\"lost_reasons\":{\"offcpu\":{\"ringbuf full\":3},"
			     "\"cpu\":{\"user stack\":2},\"bio\":{},\"sideband\":{\"side band\":1},"
			     "\"wakeup\":{}}");
	cr_assert_has(r.out, "\"recovered\":false");
	cr_assert_has(r.out, "\"stop_reason\":\"command exited\",\"exit_status\":0,");
	cr_assert_has(r.out, "\"definitions\":{\"string\":3,\"stack\":2,");
	cr_assert_has(r.out, "\"version\":\"1.6\"");
	cr_assert_has(r.out, "\"host\":\"capgen-host\"");
	cr_assert_has(r.out, "\"kernel\":\"6.18.0-capgen\"");
	cr_assert_has(r.out, "\"start\":\"2023-11-14T22:13:19.995Z\"");
	cr_assert_has(r.out, "\"end\":\"2023-11-14T22:13:20.008Z\"");
	cr_assert_has(r.out, "\"duration_s\":0.013900");
	snprintf(want, sizeof(want), "\"blocks\":%lu,", ci.totals.blocks);
	cr_assert_has(r.out, want);
	snprintf(want, sizeof(want), "\"bytes\":%lu,", ci.file_size);
	cr_assert_has(r.out, want);
	cr_assert_eq(r.out[0], '{');
	cr_assert_eq(strchr(r.out, '\n'), r.out + strlen(r.out) - 1, "one line");
	/* last, so that without python3 every check above has run */
	if (access("/usr/bin/python3", X_OK)) {
		unlink(path);
		cr_skip_test("parsing the JSON needs /usr/bin/python3 (python3)");
	}
	snprintf(cmd, sizeof(cmd), "'%s' info --json %s | /usr/bin/python3 -c "
		 "'import json,sys; d=json.load(sys.stdin); sys.exit(d[\"events\"][\"cpu\"] != 8)'",
		 getenv("STKREC") ? getenv("STKREC") : "build/stkrec", path);
	cr_assert_eq(system(cmd), 0, "not valid JSON");
	unlink(path);
}

Test(format_info, text_complete_capture)
{
	struct run r;
	char args[128];
	char *path = tmp_capture(NULL, NULL);

	snprintf(args, sizeof(args), "-i %s", path);
	info(&r, args);
	cr_assert_eq(r.status, 0);
	cr_assert_has(r.out, "host:         capgen-host\n");
	cr_assert_has(r.out, "events:       offcpu 8, cpu 8, bio 8, wakeup 0\n");
	cr_assert_has(r.out, "lost events:  offcpu 3 (ringbuf full 3), cpu 0, bio 0, "
			     "sideband 1 (side band 1), wakeup 0\n");
	cr_assert_has(r.out, "stacks missed: user 2, kernel 0 (events kept)\n");
	cr_assert_has(r.out, "command:      stkrec record -a -o capgen.stkrec -- ./workload --fast\n");
	cr_assert_has(r.out, "definitions:  string 3, stack 2, thread 1, fork 1, mapping 1, "
			     "kmod 1, ksym 1, blockdev 1, stat 1\n");
	cr_assert_has(r.out, "stopped:      command exited, command exit status 0\n");
	cr_assert_has(r.out, "status:       complete\n");
	cr_assert_eq(r.err[0], 0);
	unlink(path);
}

Test(format_info, recovered_capture_exit_3)
{
	struct capgen_opts o = { .events = 20, .block_size = 512, .no_finish = true };
	struct capgen_info ci;
	struct run r;
	char args[128], want[256];
	char *path = tmp_capture(&o, &ci);

	snprintf(args, sizeof(args), "--json %s", path);
	info(&r, args);
	cr_assert_eq(r.status, 3);
	cr_assert_has(r.out, "\"recovered\":true");
	cr_assert_has(r.out, "\"events\":{\"offcpu\":20,\"cpu\":20,\"bio\":20,\"wakeup\":0}");
	snprintf(want, sizeof(want), "file ends at byte %lu after block %lu: no trailer",
		 ci.file_size, ci.totals.blocks - 1);
	cr_assert_has(r.out, want);
	cr_assert_has(r.err, "capture recovered with loss");
	unlink(path);
}

Test(format_info, unreadable_exit_4)
{
	struct run r;
	char args[128], want[256];
	char path[] = "/tmp/stkrec-info-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_eq(write(fd, "hello, not a capture", 20), 20);
	close(fd);
	info(&r, path);
	cr_assert_eq(r.status, 4);
	snprintf(want, sizeof(want), "stkrec: %s: not a stkrec capture (bad magic)\n", path);
	cr_assert_str_eq(r.err, want);
	cr_assert_eq(r.out[0], 0);
	cr_assert_eq(truncate(path, 0), 0);
	info(&r, path);
	cr_assert_eq(r.status, 4);
	cr_assert_has(r.err, "capture file is empty");
	unlink(path);
	info(&r, "/tmp");
	cr_assert_eq(r.status, 4);
	cr_assert_str_eq(r.err, "stkrec: /tmp: not a regular file\n");
	snprintf(args, sizeof(args), "%s", path);
	info(&r, args);
	cr_assert_eq(r.status, 4);
	cr_assert_has(r.err, "No such file or directory");
}

/* A copy of the generated capture with another version in its header. */
static void write_version(const char *path, uint8_t major, uint8_t minor)
{
	uint8_t *buf;
	size_t len;
	uint32_t size, crc;
	int fd = open(path, O_WRONLY | O_TRUNC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(capgen_write_mem(NULL, &buf, &len, NULL), 0);
	buf[16] = major;        /* header payload offset 8 -> file 16 */
	buf[18] = minor;
	memcpy(&size, buf + 4, 4);
	crc = cap_crc32(0, buf + 8, size - 4);
	memcpy(buf + 8 + size - 4, &crc, 4);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
}

/* Every command that reads a capture names both versions, in one line. */
Test(format_info, newer_version_named)
{
	static const char *const cmds[] = { "info", "report -i", "script -i", "diff" };
	char path[] = "/tmp/stkrec-info-XXXXXX", want[256], cmd[256];
	struct run r;
	size_t i;

	close(mkstemp(path));
	write_version(path, 9, 2);
	snprintf(want, sizeof(want), "stkrec: %s: capture format 9.2 is newer than this "
		 "stkrec's %d.%d (upgrade stkrec to read it)\n", path,
		 CAP_VERSION_MAJOR, CAP_VERSION_MINOR);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s %s%s%s", cmds[i], path, i == 3 ? " " : "",
			 i == 3 ? path : "");
		stkrec(&r, cmd);
		cr_assert_eq(r.status, 4, "%s", cmds[i]);
		cr_assert_str_eq(r.err, want, "%s", cmds[i]);
	}
	unlink(path);
}

/* Major 0 never existed: not "newer". */
Test(format_info, major_zero_is_not_newer)
{
	char path[] = "/tmp/stkrec-info-XXXXXX", want[256];
	struct run r;

	close(mkstemp(path));
	write_version(path, 0, 3);
	info(&r, path);
	cr_assert_eq(r.status, 4);
	snprintf(want, sizeof(want), "stkrec: %s: capture format 0.3 does not exist (this "
		 "stkrec reads %d.x): not a capture, or a damaged one\n", path,
		 CAP_VERSION_MAJOR);
	cr_assert_str_eq(r.err, want);
	unlink(path);
}

Test(format_info, usage_errors_exit_2)
{
	struct run r;

	info(&r, "");
	cr_assert_eq(r.status, 2);
	cr_assert_has(r.err, "missing capture file");
	info(&r, "--bogus x.stkrec");
	cr_assert_eq(r.status, 2);
	cr_assert_has(r.err, "Try 'stkrec info -h'");
	info(&r, "a.stkrec b.stkrec");
	cr_assert_eq(r.status, 2);
	info(&r, "-h");
	cr_assert_eq(r.status, 0);
	cr_assert_has(r.out, "Examples:");
	cr_assert_has(r.out, "--json");
}

/* Events the kernel ran no recorder program for are missing without a LOST
 * record; the recorder's STATs count them and info warns (text and JSON). */
Test(format_info, stats_of_events_not_run_warned)
{
	static const char *const keys[] = { "bpf.skipped.cpu", "bio.missed_completions",
					    "bpf.skipped.bio", "bio.incomplete", "threads" };
	static const uint64_t vals[] = { 5, 2, 1, 4, 9 };
	char path[] = "/tmp/stkrec-info-XXXXXX", args[64];
	struct cap_header h;
	struct cap_writer *w;
	struct cap_stat st;
	struct run r;
	uint32_t i;
	int fd = mkstemp(path);

	capgen_header(&h);
	cr_assert_eq(cap_writer__fdopen(fd, &h, NULL, &w), 0);
	cr_assert_eq(capgen_prologue(w), 0);
	cr_assert_eq(capgen_events(w, 0, 4), 0);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(cap_writer__string(w, 100 + i, keys[i], strlen(keys[i])), 0);
		st = (struct cap_stat){ .value = vals[i], .key_id = 100 + i };
		cr_assert_eq(cap_writer__append(w, CAP_REC_STAT, &st, sizeof(st), NULL, 0), 0);
	}
	cr_assert_eq(capgen_epilogue(w, 4, true), 0);
	cr_assert_eq(cap_writer__finish(w), 0);

	info(&r, path);
	cr_assert_eq(r.status, 0);
	cr_assert_has(r.out, "WARNING:      8 events not recorded: the kernel did not run "
			     "the recorder's program (bpf.skipped.*, bpf.untraced.*, "
			     "bio.missed_completions)\n");
	cr_assert_has(r.out, "WARNING:      4 block requests not seen completing: in flight "
			     "at the end, or not recorded (bio.incomplete)\n");
	snprintf(args, sizeof(args), "--json %s", path);
	info(&r, args);
	cr_assert_has(r.out, "\"not_run\":8,\"bio_incomplete\":4,");
	unlink(path);
}
