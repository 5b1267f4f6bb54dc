// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report on a capture with a symbol pack (FORMAT.md §4.18-4.22), made
 * by hand: a binary that exists nowhere named from its PACK_ADDRs (inline
 * chain and lines as the options ask, return addresses looked up one byte
 * back, the pack's symbols never stretched to other addresses); JIT frames
 * named by the map read at or after the event (a pid reused later has a
 * later map) and, within a map, by the entry written last; hostile pack
 * records skipped, counted as damage, the rest still named.
 */
#include "tests/report_run.h"

#define PROG_PID 600
#define NODE_PID 700
#define ANON_START 0x7f0000000000ull
#define T1 (RC_T0 + 2 * RC_S)
#define T2 (RC_T0 + 4 * RC_S)

/* Occurrences of what in s. */
static int count_of(const char *what, const char *s)
{
	int n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static const uint8_t fake_bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				      7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static void object(struct cap_writer *w, uint32_t id, uint32_t path_id)
{
	struct cap_pack_object o = { .id = id, .path_id = path_id, .build_id_size = 20,
				     .flags = CAP_PACK_OBJ_DWARF };

	memcpy(o.build_id, fake_bid, 20);
	cr_assert_eq(cap_writer__append(w, CAP_REC_PACK_OBJECT, &o, sizeof(o), NULL, 0), 0);
}

static void symbol(struct cap_writer *w, uint32_t id, uint32_t name_id, uint64_t start,
		   uint64_t size)
{
	struct cap_pack_symbol s = { .id = id, .object = 1, .name_id = name_id, .start = start,
				     .size = size };

	cr_assert_eq(cap_writer__append(w, CAP_REC_PACK_SYMBOL, &s, sizeof(s), NULL, 0), 0);
}

static void addr(struct cap_writer *w, uint32_t obj, uint64_t off, uint32_t sym,
		 const struct cap_pack_frame *f, uint16_t nr, uint16_t claimed)
{
	struct cap_pack_addr a = { .offset = off, .object = obj, .symbol = sym, .nr = claimed };

	cr_assert_eq(cap_writer__append(w, CAP_REC_PACK_ADDR, &a, sizeof(a), f,
					nr * sizeof(*f)), 0);
}

static void jit(struct cap_writer *w, uint64_t time, uint64_t start, uint64_t size,
		const char *name)
{
	struct cap_pack_jit j = { .start = start, .size = size, .time = time, .pid = NODE_PID,
				  .name_len = strlen(name) };

	cr_assert_eq(cap_writer__append(w, CAP_REC_PACK_JIT, &j, sizeof(j), name,
					strlen(name)), 0);
}

static void mappings(struct cap_writer *w)
{
	struct cap_mapping anon = { .start = ANON_START, .end = ANON_START + 0x100000,
				    .pid = NODE_PID, .path_id = 6,
				    .flags = CAP_MAP_FROM_PROC | CAP_MAP_ANON };
	static const uint64_t prog[] = { 0x400120, 0x400200 };
	static const uint64_t js[] = { ANON_START + 0x1010, ANON_START + 0x2000 };

	cr_assert_eq(rc_map(w, 0, PROG_PID, 0x400000, 0x401000, 0, 1), 0);
	cr_assert_eq(cap_writer__append(w, CAP_REC_MAPPING, &anon, sizeof(anon), NULL, 0), 0);
	cr_assert_eq(cap_writer__stack(w, 1, CAP_STACK_USER, prog, 2), 0);
	cr_assert_eq(cap_writer__stack(w, 2, CAP_STACK_USER, js, 2), 0);
	/* another address of work()'s symbol, which the pack does not hold */
	cr_assert_eq(cap_writer__stack(w, 3, CAP_STACK_USER, (uint64_t[]){ 0x400130 }, 1), 0);
}

static void events(struct cap_writer *w)
{
	int i;

	for (i = 0; i < 3; i++)
		cr_assert_eq(rc_cpu(w, RC_T0 + (i + 1) * RC_MS, PROG_PID, PROG_PID, 1, 0), 0);
	cr_assert_eq(rc_cpu(w, RC_T0 + 5 * RC_MS, PROG_PID, PROG_PID, 3, 0), 0);
	cr_assert_eq(rc_cpu(w, T1 - RC_S, NODE_PID, NODE_PID, 2, 0), 0); /* before T1 */
	cr_assert_eq(rc_cpu(w, T1 + RC_S, NODE_PID, NODE_PID, 2, 0), 0); /* between */
	cr_assert_eq(rc_cpu(w, T2 + RC_S, NODE_PID, NODE_PID, 2, 0), 0); /* after T2 */
}

/* The pack: work() at 0x120 with helper() inlined in it, main() at the
 * return address 0x200 (looked up at 0x1ff); JIT maps read at T1 and T2. */
static void pack(struct cap_writer *w, bool hostile)
{
	static const struct cap_pack_frame chain[] = { { 5, 4, 7 }, { 3, 4, 12 } };
	static const struct cap_pack_info info = { 1, 2, 2, 5, 1, 0, 0, 0 };

	object(w, 1, 1);
	if (hostile)
		object(w, 1, 6); /* a second object 1: the first stands */
	symbol(w, 1, 3, 0x100, 0x40);
	symbol(w, 2, 2, 0x1c0, 0x80);
	addr(w, 1, 0x120, 1, chain, 2, 2);
	addr(w, 1, 0x1ff, 2, NULL, 0, 0);
	if (hostile) {
		addr(w, 9, 0x130, 1, NULL, 0, 0);   /* no object 9: ignored */
		addr(w, 1, 0x200, 2, chain, 1, 5);  /* claims 5 frames, holds 1: bad */
		addr(w, 1, 0x120, 2, NULL, 0, 0);   /* 0x120 again: the first stands */
	}
	jit(w, T1, ANON_START + 0x1000, 0x100, "JS:*a /app.js:1:1");
	jit(w, T1, ANON_START + 0x1f00, 0x200, "JS:*outer /app.js:9:1");
	jit(w, T2, ANON_START + 0x1000, 0x80, "JS:*b /app.js:1:1");
	jit(w, T2, ANON_START + 0x1000, 0x40, "JS:*c /app.js:1:1"); /* replaces b there */
	cr_assert_eq(cap_writer__append(w, CAP_REC_PACK_INFO, &info, sizeof(info), NULL, 0), 0);
}

static void write_capture(bool hostile)
{
	static const char *const strs[] = { NULL, "/nonexistent-stkrec-pack/prog", "main",
					    "work", "prog.c", "helper", "//anon" };
	struct cap_writer *w;
	uint32_t i;

	setenv("TZ", "UTC", 1);
	tzset();
	cap_path = rc_tmpname("pack");
	w = rc_open(cap_path);
	cr_assert_not_null(w);
	for (i = 1; i < 7; i++)
		cr_assert_eq(rc_string(w, i, strs[i]), 0);
	cr_assert_eq(rc_thread(w, 0, PROG_PID, PROG_PID, 0, "prog"), 0);
	cr_assert_eq(rc_thread(w, 0, NODE_PID, NODE_PID, 0, "node"), 0);
	mappings(w);
	events(w);
	pack(w, hostile);
	cr_assert_eq(cap_writer__finish(w), 0);
	cr_assert_eq(model__load(cap_path, &model), 0);
}

static void pack_setup(void)
{
	write_capture(false);
}

static char *folded(const struct symbolizer_opts *so, bool srcline)
{
	struct report_opts o = { .srcline = srcline };
	struct filter f = { .kinds = 1u << CAP_KIND_CPU };
	struct report_ctx ctx = { .model = model, .filter = &f, .opts = o };
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	cr_assert_eq(filter__bind(&f, model), 0);
	cr_assert_eq(resolver__new(model, so, &ctx.res), 0);
	out = open_memstream(&buf, &len);
	cr_assert_eq(view_folded(&ctx, out), 0);
	fclose(out);
	resolver__free(ctx.res);
	filter__free(&f);
	return buf;
}

TestSuite(report_pack, .init = pack_setup, .fini = teardown);

Test(report_pack, binary_nowhere_named_from_the_pack)
{
	char *s = folded(NULL, false);

	cr_assert_str_eq(s, "node;JS:*outer /app.js:9:1;JS:*a /app.js:1:1 3\n"
			    "prog;main;work 3\n"
			    "prog;prog+0x130 1\n");
	free(s);
}

Test(report_pack, inlines_and_lines_as_the_options_ask)
{
	struct symbolizer_opts inl = { .inlines = true }, src = { .srclines = true },
			       both = { .inlines = true, .srclines = true };
	char *a = folded(&inl, false), *b = folded(&src, true), *c = folded(&both, true);

	cr_assert(strstr(a, "prog;main;work;helper 3\n"), "%s", a);
	/* no inlines: the function's own line is the call site of helper */
	cr_assert(strstr(b, "prog;main;work prog.c:12 3\n"), "%s", b);
	cr_assert(strstr(c, "prog;main;work prog.c:12;helper prog.c:7 3\n"), "%s", c);
	free(a);
	free(b);
	free(c);
}

/* Aggregated views name a stack once, at its first event (as they do
 * mappings); script names each event's frames at its own time. */
Test(report_pack, jit_map_of_the_events_time)
{
	struct report_opts o = { 0 };
	struct filter f = { .kinds = 1u << CAP_KIND_CPU, .pids = malloc(4), .npids = 1 };
	char *s;

	f.pids[0] = NODE_PID;
	s = run(view_script, &f, &o);
	cr_assert_eq(strcount(s, '\n'), 3 * 4, "%s", s);
	/* before T1: T1's map; between: T2's, read after it; after T2: T2's */
	cr_assert_eq(count_of("JS:*a /app.js:1:1 (perf-700.map)", s), 1, "%s", s);
	cr_assert_eq(count_of("JS:*c /app.js:1:1 (perf-700.map)", s), 2, "%s", s);
	cr_assert_eq(count_of("JS:*b ", s), 0, "replaced by c in its map: %s", s);
	/* the return address 0x2000 is looked up at 0x1fff: only T1 has it */
	cr_assert_eq(count_of("JS:*outer /app.js:9:1 (perf-700.map)", s), 3, "%s", s);
	free(s);
	filter__free(&f);
}

Test(report_pack, dso_column_and_model)
{
	struct report_opts o = { .nsort = 2, .sort = { SORT_DSO, SORT_SYM } };
	char *s = run(view_perf, NULL, &o);

	cr_assert(strstr(s, "perf-700.map   [.] JS:*a /app.js:1:1\n"), "%s", s);
	cr_assert(strstr(s, "prog           [.] work\n"), "%s", s);
	free(s);
	cr_assert_not_null(model__pack_info(model));
	cr_assert_eq(model__pack_info(model)->jit_entries, 5);
	cr_assert_eq(model__pack_objects(model), 1);
	cr_assert_eq(model__pack_addresses(model), 2);
	cr_assert_eq(model__jit_entries(model), 4);
	cr_assert_not(model__recovered(model));
}

TestSuite(report_pack_hostile, .fini = teardown);

Test(report_pack_hostile, bad_records_skipped_rest_named)
{
	char *s;

	write_capture(true);
	cr_assert(model__recovered(model), "a malformed PACK_ADDR is damage");
	cr_assert(strstr(model__loss_text(model), "1 malformed record skipped"), "%s",
		  model__loss_text(model));
	s = folded(NULL, false);
	cr_assert_str_eq(s, "node;JS:*outer /app.js:9:1;JS:*a /app.js:1:1 3\n"
			    "prog;main;work 3\n"
			    "prog;prog+0x130 1\n");
	free(s);
}

/* The command line: damage in the pack is damage (exit 3), -v counts the
 * sources. */
Test(report_pack_hostile, cli_exit_3_and_sources)
{
	char *e;
	int st;

	write_capture(true);
	e = cli("script -e cpu -v", &st);
	cr_assert_eq(st, 3);
	cr_assert(strstr(e, "addresses named: 0 from files, 2 from the symbol pack, 3 JIT entries "
			    "from perf maps; 1 unnamed"), "%s", e);
	cr_assert(strstr(e, "output is partial: 1 malformed record skipped"), "%s", e);
	free(e);
}

/* info: the pack as read, its summary beside it. */
Test(report_pack, info_shows_the_pack)
{
	char *s, *j;
	int st;

	s = cli("info", &st);
	cr_assert_eq(st, 0);
	j = cli("info --json", &st);
	cr_assert_eq(st, 0);
	/* 36 + 2 x 36 + (28 + 24) + 28 + 4 x 36 + 17 + 21 + 17 + 17 + 68 bytes */
	cr_assert(strstr(s, "\nsymbol pack:  1 binaries, 2 symbols, 2 addresses, 4 JIT entries, "
			    "472 bytes uncompressed; 0 addresses unnamed, 0 binaries not found, 1 "
			    "JIT maps, 0 left out (bounds, size limit)\n"), "%s", s);
	cr_assert(strstr(j, "\"pack\":{\"binaries\":1,\"symbols\":2,\"addresses\":2,"
			    "\"jit_entries\":4,\"bytes\":472,\"complete\":true,\"unnamed\":0,"
			    "\"binaries_missing\":0,\"jit_maps\":1,\"left_out\":0},"), "%s", j);
	free(s);
	free(j);
}
