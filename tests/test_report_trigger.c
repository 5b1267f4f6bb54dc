// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A flight recorder's dump (format 1.6, FORMAT.md §4.26) in the model,
 * `report --top-waits` and `stkrec info`: the report scene (util_report.c)
 * with a TRIGGER after its LOST and STAT, of each kind, hostile ones too;
 * and a file of 1.5 (no TRIGGER) that reads as before.
 *
 * The WAIT trigger is the scene's wait of app-worker (100/101) at +1.2 s,
 * 2.5 ms under kernel stack 2 (futex) and user stack 11; the window is the
 * whole scene, 3 s.
 */
#include <inttypes.h>
#include <zlib.h>
#include "tests/report_run.h"

#define WINDOW "3.000 s, from 2026-01-02T03:04:05.000Z to 2026-01-02T03:04:08.000Z"
/* what info says of the WAIT and the SIGNAL triggers */
#define WAIT_HEAD \
	"flight recorder: dump 1 of the recording, written 1.80 s after a trigger\n" \
	"  trigger:  wait >= 2 ms: pid 100 tid 101 (app-worker) off CPU 2.5 ms from +1.200 s\n" \
	"  window:   " WINDOW "\n"
#define SIGNAL_HEAD \
	"flight recorder: dump 2 of the recording, written 1.00 s after a trigger\n" \
	"  trigger:  SIGUSR2 at +2.000 s\n" \
	"  window:   " WINDOW "\n" \
	"  triggers covered: 3\n"
#define SIGNAL_JSON \
	"\"trigger\":{\"kind\":\"signal\",\"dump\":2,\"triggers\":3,\"time_ns\":1002000000000," \
	"\"window_start_ns\":1000000000000,\"window_end_ns\":1003000000000," \
	"\"post_ns\":1000000000},"
#define WAIT_JSON \
	"\"trigger\":{\"kind\":\"wait\",\"dump\":1,\"triggers\":1,\"time_ns\":1001202500000," \
	"\"window_start_ns\":1000000000000,\"window_end_ns\":1003000000000," \
	"\"post_ns\":1797500000,\"threshold_ns\":2000000,\"pid\":100,\"tid\":101," \
	"\"comm\":\"app-worker\",\"wait_start_ns\":1001200000000,\"wait_duration_ns\":2500000," \
	"\"ustack\":11,\"kstack\":2},"

static const struct cap_trigger wait_trigger = {
	.time = RC_T0 + 1200 * RC_MS + 2500000, .window_start = RC_T0,
	.window_end = RC_T0 + 3 * RC_S, .wait_start = RC_T0 + 1200 * RC_MS,
	.wait_duration = 2500000, .threshold = 2 * RC_MS, .post = 1797500000,
	.kind = CAP_TRIGGER_WAIT, .tid = RC_WORKER_TID, .pid = RC_APP_PID, .ustack = 11,
	.kstack = 2, .triggers = 1, .dump = 1,
};

static const struct cap_trigger signal_trigger = {
	.time = RC_T0 + 2 * RC_S, .window_start = RC_T0, .window_end = RC_T0 + 3 * RC_S,
	.post = RC_S, .kind = CAP_TRIGGER_SIGNAL, .triggers = 3, .dump = 2,
};

static const struct cap_trigger end_trigger = {
	.time = RC_T0 + 3 * RC_S, .window_start = RC_T0, .window_end = RC_T0 + 3 * RC_S,
	.kind = CAP_TRIGGER_END, .triggers = 1, .dump = 1,
};

/* The scene with these TRIGGERs (lens: their sizes, NULL whole) as the
 * suite's capture, loaded. */
static void scene(const struct cap_trigger *t, unsigned n, const size_t *lens)
{
	struct rc_opts o = { .triggers = t, .trigger_lens = lens, .ntriggers = n };

	setenv("TZ", "UTC", 1);
	tzset();
	cap_path = rc_tmpname("trigger");
	cr_assert_not_null(cap_path);
	cr_assert_eq(rc_write_scene(cap_path, &o), 0);
	cr_assert_eq(model__load(cap_path, &model), 0);
}

static void fini(void)
{
	if (cap_path)
		teardown();
}

TestSuite(report_trigger, .fini = fini);

/* `report --top-waits` of the suite's capture (json: --json -r 2, as the
 * golden file) is what it prints of the same scene without a trigger, the
 * golden file, with head first (in JSON after the '['). */
static void assert_topwaits(bool json, const char *head)
{
	static const struct report_opts json_opts = { .json = true, .max_rows = 2 };
	const char *src = getenv("STKREC_SRCDIR");
	char path[512], *got, *want, *all;

	snprintf(path, sizeof(path), "%s/tests/golden/report_topwaits.%s", src ? src : ".",
		 json ? "json" : "txt");
	want = rc_slurp(path, NULL);
	cr_assert_not_null(want, "missing golden file %s", path);
	cr_assert_gt(asprintf(&all, "%.*s%s%s", json, want, head, want + json), 0);
	got = run(view_topwaits, NULL, json ? &json_opts : NULL);
	cr_assert_str_eq(got, all, "--- got\n%s", got);
	free(got);
	free(want);
	free(all);
}

Test(report_trigger, topwaits_wait_first_with_its_stack)
{
	scene(&wait_trigger, 1, NULL);
	assert_topwaits(false,
		"trigger: wait >= 2000 us, flight recorder dump 1\n"
		"100     app-worker       tid 101: 2500 us off CPU from "
		"2026-01-02T03:04:06.200000+00:00\n"
		"        __schedule\n"
		"        schedule\n"
		"        futex_wait\n"
		"        do_syscall_64\n"
		"        --\n"
		"        libc.so.6+0x2345\n"
		"        app+0x1200\n"
		"        app+0x1050\n"
		"\n");
	assert_topwaits(true,
		"\n  {\"trigger\": {\"kind\": \"wait\", \"dump\": 1, \"triggers\": 1, "
		"\"time\": \"2026-01-02T03:04:06.202500+00:00\", \"comm\": \"app-worker\", "
		"\"pid\": 100, \"tid\": 101, \"threshold_us\": 2000, \"duration_us\": 2500, "
		"\"start\": \"2026-01-02T03:04:06.200000+00:00\", \"stack\": [\"app+0x1050\", "
		"\"app+0x1200\", \"libc.so.6+0x2345\", \"do_syscall_64\", \"futex_wait\", "
		"\"schedule\", \"__schedule\"]}},");
}

Test(report_trigger, topwaits_signal_one_line)
{
	scene(&signal_trigger, 1, NULL);
	assert_topwaits(false, "trigger: SIGUSR2 at 2026-01-02T03:04:07.000000+00:00, "
			"flight recorder dump 2, 3 triggers\n\n");
	assert_topwaits(true, "\n  {\"trigger\": {\"kind\": \"signal\", \"dump\": 2, "
			"\"triggers\": 3, \"time\": \"2026-01-02T03:04:07.000000+00:00\"}},");
}

Test(report_trigger, topwaits_end_one_line)
{
	scene(&end_trigger, 1, NULL);
	assert_topwaits(false, "trigger: the recording's end at "
			"2026-01-02T03:04:08.000000+00:00 (no --trigger), flight recorder dump 1\n\n");
	assert_topwaits(true, "\n  {\"trigger\": {\"kind\": \"end\", \"dump\": 1, "
			"\"triggers\": 1, \"time\": \"2026-01-02T03:04:08.000000+00:00\"}},");
}

/* A trigger whose thread and stacks the file never defines: named as any
 * event's would be, nothing more. */
Test(report_trigger, topwaits_undefined_thread_and_stacks)
{
	struct cap_trigger t = wait_trigger;

	t.tid = 999;
	t.pid = 998;
	t.ustack = 77;
	t.kstack = 78;
	scene(&t, 1, NULL);
	assert_topwaits(false,
		"trigger: wait >= 2000 us, flight recorder dump 1\n"
		"998     [unknown]        tid 999: 2500 us off CPU from "
		"2026-01-02T03:04:06.200000+00:00\n"
		"        [lost stack]\n"
		"        --\n"
		"        [lost stack]\n"
		"\n");
}

/* What `stkrec info` says of the suite's capture: its exit status, the
 * lines of text between "host:" and "kernel:", and its JSON members from
 * "host" to "kernel" (a dump's "trigger" between them, or nothing). */
static void assert_info(int want_status, const char *want_head, const char *want_json)
{
	char *s, *a, *b, *want;
	int st;

	s = cli("info", &st);
	cr_assert_eq(st, want_status, "%s", s);
	a = strstr(s, "\nhost:");
	cr_assert_not_null(a, "%s", s);
	a = strchr(a + 1, '\n') + 1;
	b = strstr(a, "kernel:");
	cr_assert_not_null(b, "%s", s);
	*b = '\0';
	cr_assert_str_eq(a, want_head);
	free(s);
	s = cli("info --json", &st);
	cr_assert_eq(st, want_status, "%s", s);
	cr_assert_gt(asprintf(&want, "\"host\":\"testhost\",%s\"kernel\":", want_json), 0);
	cr_assert_not_null(strstr(s, want), "want %s in:\n%s", want, s);
	free(want);
	free(s);
}

Test(report_trigger, info_wait)
{
	scene(&wait_trigger, 1, NULL);
	assert_info(0, WAIT_HEAD, WAIT_JSON);
}

/* Of two TRIGGERs the first is the file's (FORMAT.md §4.26), in the model
 * and in info; the second is not damage. */
Test(report_trigger, first_of_two_stands)
{
	const struct cap_trigger two[] = { wait_trigger, signal_trigger };

	scene(two, 2, NULL);
	cr_assert_not_null(model__trigger(model));
	cr_assert_eq(memcmp(model__trigger(model), &wait_trigger, sizeof(wait_trigger)), 0);
	cr_assert_not(model__recovered(model));
	assert_info(0, WAIT_HEAD, WAIT_JSON);
}

Test(report_trigger, info_signal)
{
	scene(&signal_trigger, 1, NULL);
	assert_info(0, SIGNAL_HEAD, SIGNAL_JSON);
}

Test(report_trigger, info_end)
{
	scene(&end_trigger, 1, NULL);
	assert_info(0,
		"flight recorder: dump 1 of the recording, written when it ended\n"
		"  trigger:  the recording's end (no --trigger)\n"
		"  window:   " WINDOW "\n",
		"\"trigger\":{\"kind\":\"end\",\"dump\":1,\"triggers\":1,"
		"\"time_ns\":1003000000000,\"window_start_ns\":1000000000000,"
		"\"window_end_ns\":1003000000000,\"post_ns\":0},");
}

Test(report_trigger, info_undefined_thread)
{
	struct cap_trigger t = wait_trigger;

	t.tid = 999;
	t.pid = 998;
	scene(&t, 1, NULL);
	assert_info(0,
		"flight recorder: dump 1 of the recording, written 1.80 s after a trigger\n"
		"  trigger:  wait >= 2 ms: pid 998 tid 999 (?) off CPU 2.5 ms from +1.200 s\n"
		"  window:   " WINDOW "\n",
		"\"trigger\":{\"kind\":\"wait\",\"dump\":1,\"triggers\":1,\"time_ns\":1001202500000,"
		"\"window_start_ns\":1000000000000,\"window_end_ns\":1003000000000,"
		"\"post_ns\":1797500000,\"threshold_ns\":2000000,\"pid\":998,\"tid\":999,"
		"\"comm\":null,\"wait_start_ns\":1001200000000,\"wait_duration_ns\":2500000,"
		"\"ustack\":11,\"kstack\":2},");
}

/* Short, of unknown kinds, a window ending before it starts: refused and
 * counted (exit 3), never shown; the good one after them is the file's. */
Test(report_trigger, info_hostile_refused_then_the_good_one)
{
	struct cap_trigger t[5] = { wait_trigger, wait_trigger, wait_trigger, wait_trigger,
				    signal_trigger };
	static const size_t lens[5] = { 80, 88, 88, 88, 88 };
	char *s, *status;
	int st;

	t[1].kind = 0;
	t[2].kind = 4;
	t[3].window_start = t[3].window_end + 1;
	scene(t, 5, lens);
	cr_assert_eq(memcmp(model__trigger(model), &signal_trigger, sizeof(signal_trigger)), 0);
	cr_assert(model__recovered(model));
	assert_info(3, SIGNAL_HEAD, SIGNAL_JSON);
	s = cli("info", &st);
	status = lines_with(s, "status:");
	cr_assert_str_eq(status, "status:       RECOVERED: 4 malformed records skipped\n");
	free(status);
	free(s);
}

Test(report_trigger, info_hostile_only_is_no_dump)
{
	struct cap_trigger t[2] = { wait_trigger, wait_trigger };
	static const size_t lens[2] = { 87, 88 };

	t[1].kind = 0;
	scene(t, 2, lens);
	cr_assert_null(model__trigger(model));
	assert_info(3, "", "");
}

/* The header's minor version set to m, its CRC made right (FORMAT.md §3.1:
 * minor at payload byte 10, the CRC in its last 4). */
static void set_minor(const char *path, uint16_t m)
{
	size_t len;
	uint8_t *b = (uint8_t *)rc_slurp(path, &len);
	uint32_t n, crc;
	FILE *f;

	cr_assert_not_null(b);
	memcpy(&n, b + 4, 4);
	memcpy(b + 8 + 10, &m, 2);
	crc = crc32(0, b + 8, n - 4);
	memcpy(b + 8 + n - 4, &crc, 4);
	f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	free(b);
}

/* info without its "capture:" and "format:" lines */
static char *info_body(const char *path)
{
	char args[600], *s, *p, *e;
	int st;

	snprintf(args, sizeof(args), "info -i %s", path);
	s = cli_raw(args, &st);
	cr_assert_eq(st, 0, "%s", s);
	for (p = s; (e = strchr(p, '\n'));) {
		if (!strncmp(p, "capture:", 8) || !strncmp(p, "format:", 7))
			memmove(p, e + 1, strlen(e + 1) + 1);
		else
			p = e + 1;
	}
	return s;
}

/* A file of 1.5 and a 1.6 file that is not a dump read alike, and as the
 * golden files of the scene say. */
Test(report_trigger, file_of_1_5_reads_as_before)
{
	char *old = rc_tmpname("trigger-1.5"), cmd[600], *s, *a, *b;
	int st;

	scene(NULL, 0, NULL);
	cr_assert_null(model__trigger(model));
	snprintf(cmd, sizeof(cmd), "cp %s %s", cap_path, old);
	cr_assert_eq(system(cmd), 0);
	set_minor(old, 5);
	model__free(model);
	cr_assert_eq(model__load(old, &model), 0);
	cr_assert_eq(model__header(model)->minor, 5);
	cr_assert_null(model__trigger(model));
	s = run(view_topwaits, NULL, NULL);
	golden("report_topwaits.txt", s);
	free(s);
	snprintf(cmd, sizeof(cmd), "info -i %s", old);
	s = cli_raw(cmd, &st);
	a = lines_with(s, "format:");
	cr_assert_str_eq(a, "format:       1.5, written by stkrec 0.1.0 (pid 1)\n");
	free(a);
	free(s);
	a = info_body(old);
	b = info_body(cap_path);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
	unlink(old);
	free(old);
}

/* Where the TRIGGER of path is among its records (FORMAT.md §4.26: after
 * the last STAT, before the pack and END): 0, or the first rule broken. */
static const char *trigger_place(const char *path)
{
	long i = 0, stat = -1, trigger = -1, pack = -1, end = -1;
	struct cap_record rec;
	struct cap_reader *r;

	cr_assert_eq(cap_reader__open(path, &r), 0);
	for (; cap_reader__next(r, &rec) == 1; i++) {
		if (rec.type == CAP_REC_STAT)
			stat = i;
		else if (rec.type == CAP_REC_TRIGGER)
			trigger = i;
		else if (rec.type >= CAP_REC_PACK_OBJECT && rec.type <= CAP_REC_PACK_INFO &&
			 pack < 0)
			pack = i;
		else if (rec.type == CAP_REC_END)
			end = i;
	}
	cap_reader__close(r);
	if (trigger < 0)
		return "no TRIGGER";
	if (trigger < stat)
		return "TRIGGER before STAT";
	if (pack >= 0 && pack < trigger)
		return "TRIGGER after the pack";
	return end < trigger ? "TRIGGER after END" : NULL;
}

/* A dump of nothing but a thread, a STAT, its TRIGGER and END (no kernel
 * address: scrub takes it without a KERNEL record). */
static void small_dump(const char *path)
{
	struct cap_writer *w = rc_open(path);
	struct cap_stat st = { .value = 10, .key_id = 1 };
	struct cap_end end = { .time = RC_T0 + 3 * RC_S, .reason = CAP_STOP_SIGNAL };

	cr_assert_not_null(w);
	cr_assert_eq(rc_thread(w, RC_T0, RC_WORKER_TID, RC_APP_PID, 0, "app-worker") ?:
		     rc_string(w, 1, "ringbuf_polls") ?:
		     cap_writer__append(w, CAP_REC_STAT, &st, sizeof(st), NULL, 0) ?:
		     cap_writer__append(w, CAP_REC_TRIGGER, &wait_trigger, sizeof(wait_trigger),
					NULL, 0) ?:
		     cap_writer__append(w, CAP_REC_END, &end, sizeof(end), NULL, 0), 0);
	cr_assert_eq(cap_writer__finish(w), 0);
}

/* `stkrec pack` and `stkrec scrub` copy the TRIGGER unchanged and in its
 * place (the new pack goes after it). */
Test(report_trigger, pack_and_scrub_keep_it)
{
	static const char *const cmds[] = { "scrub --paths -o %s %s", "pack -o %s %s" };
	char *out = rc_tmpname("trigger-rewritten"), args[1024], *s;
	struct model *m;
	size_t i;
	int st;

	cap_path = rc_tmpname("trigger-small");
	small_dump(cap_path);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		unlink(out);
		snprintf(args, sizeof(args), cmds[i], out, cap_path);
		s = cli_raw(args, &st);
		cr_assert_eq(st, 0, "%s: %s", args, s);
		free(s);
		cr_assert_eq(model__load(out, &m), 0);
		cr_assert_not_null(model__trigger(m), "%s", cmds[i]);
		cr_assert_eq(memcmp(model__trigger(m), &wait_trigger, sizeof(wait_trigger)), 0,
			     "%s", cmds[i]);
		cr_assert_eq(model__pack_info(m) != NULL, i == 1, "%s", cmds[i]);
		model__free(m);
		cr_assert_null(trigger_place(out), "%s: %s", cmds[i], trigger_place(out));
	}
	unlink(out);
	free(out);
}
