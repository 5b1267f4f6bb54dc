// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel symbol table: exact lookups, bounds, modules, tracer frames. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sym/sym.h"

static struct ksymtab *t;

static void add(uint64_t addr, uint32_t size, const char *name, const char *mod)
{
	cr_assert_eq(ksymtab__add(t, addr, size, name, strlen(name), mod), 0);
}

static void setup(void)
{
	cr_assert_eq(ksymtab__new(&t), 0);
	/* deliberately out of order, with duplicates and aliases */
	add(0xffffffff81200000, 0x100, "schedule", NULL);
	add(0xffffffff81100000, 0x80, "__schedule", NULL);
	add(0xffffffff81100000, 0x80, "__schedule", NULL);
	add(0xffffffff81300000, 0, "finish_task_switch.isra.0", NULL);
	add(0xffffffff81300400, 0x40, "do_nanosleep", NULL);
	add(0xffffffff81300400, 0x40, "do_nanosleep_alias_long", NULL);
	add(0xffffffffc0001000, 0x200, "ext4_file_read_iter", "ext4");
	add(0xffffffffc0001200, 0, "ext4_map_blocks", "ext4");
	add(0xffffffffc0002000, 0x10, "xfs_trans_commit", "xfs");
	cr_assert_eq(ksymtab__finalize(t), 0);
}

static void teardown(void)
{
	ksymtab__free(t);
}

static void expect(uint64_t addr, const char *name, const char *mod, uint64_t off)
{
	const char *m = "unset";
	uint64_t o = ~0ull;
	const char *n = ksymtab__lookup(t, addr, &m, &o);

	cr_assert_not_null(n, "0x%lx: no symbol", (unsigned long)addr);
	cr_assert_str_eq(n, name);
	if (mod)
		cr_assert_str_eq(m, mod);
	else
		cr_assert_null(m);
	cr_assert_eq(o, off);
}

static void expect_none(uint64_t addr)
{
	const char *n = ksymtab__lookup(t, addr, NULL, NULL);

	cr_assert_null(n, "0x%lx: named %s", (unsigned long)addr, n);
}

TestSuite(sym_ksymtab, .init = setup, .fini = teardown);

Test(sym_ksymtab, exact_lookups_and_offsets)
{
	cr_assert_eq(ksymtab__count(t), 7); /* one name per address */
	expect(0xffffffff81100000, "__schedule", NULL, 0);
	expect(0xffffffff8110007f, "__schedule", NULL, 0x7f);
	expect(0xffffffff81200010, "schedule", NULL, 0x10);
	expect(0xffffffffc0001004, "ext4_file_read_iter", "ext4", 4);
	expect(0xffffffffc000200f, "xfs_trans_commit", "xfs", 0xf);
}

Test(sym_ksymtab, sized_symbols_end_at_their_size)
{
	expect_none(0xffffffff81100080); /* one past __schedule */
	expect_none(0xffffffff81000000); /* below every symbol */
	expect_none(0xffffffffc0002010); /* past the last symbol */
}

Test(sym_ksymtab, unsized_symbols_end_at_the_next_one)
{
	expect(0xffffffff813003ff, "finish_task_switch.isra.0", NULL, 0x3ff);
	expect(0xffffffff81300400, "do_nanosleep", NULL, 0);
	/* an unsized module symbol never runs into the next module... */
	expect_none(0xffffffffc0001300);
}

Test(sym_ksymtab, module_extent_bounds_unsized_symbols)
{
	struct ksymtab *u;
	const char *m;
	uint64_t o;

	cr_assert_eq(ksymtab__new(&u), 0);
	cr_assert_eq(ksymtab__add(u, 0xffffffffc0001200, 0, "ext4_map_blocks", 15, "ext4"), 0);
	cr_assert_eq(ksymtab__add(u, 0xffffffffc0002000, 0x10, "xfs_trans_commit", 16, "xfs"), 0);
	cr_assert_eq(ksymtab__add_module(u, "ext4", 0xffffffffc0000000, 0x1400), 0);
	cr_assert_eq(ksymtab__add_module(u, "ext4", 0, 0), -EINVAL);
	cr_assert_eq(ksymtab__finalize(u), 0);
	/* ...but its module's extent from KMOD bounds it */
	cr_assert_str_eq(ksymtab__lookup(u, 0xffffffffc00013ff, &m, &o), "ext4_map_blocks");
	cr_assert_str_eq(m, "ext4");
	cr_assert_eq(o, 0x1ff);
	cr_assert_null(ksymtab__lookup(u, 0xffffffffc0001400, NULL, NULL));
	ksymtab__free(u);
}

static void swap(unsigned *a, unsigned *b)
{
	unsigned x = *a;

	*a = *b;
	*b = x;
}

/* Next permutation of v[0..n) in lexical order; false after the last. */
static bool next_perm(unsigned *v, unsigned n)
{
	unsigned i = n - 1, j = n - 1;

	while (i && v[i - 1] >= v[i])
		i--;
	if (!i)
		return false;
	while (v[j] <= v[i - 1])
		j--;
	swap(&v[i - 1], &v[j]);
	for (j = n - 1; i < j; i++, j--)
		swap(&v[i], &v[j]);
	return true;
}

Test(sym_ksymtab, aliases_resolve_deterministically)
{
	/* four names at 0x1000, each preference rule deciding against one:
	 * sized before unsized, shorter first, then lexically smaller */
	static const struct { uint64_t addr; uint32_t size; const char *name; } in[] = {
		{ 0x1000, 0x40, "zz_sized" }, { 0x1000, 0, "u" },
		{ 0x1000, 0x40, "aa_sized" }, { 0x1000, 0x40, "do_nanosleep_alias_long" },
		{ 0x800, 0x10, "prev" }, { 0x2000, 0x10, "next" },
	};
	enum { N = sizeof(in) / sizeof(in[0]) };
	unsigned v[N], i, orders = 0;
	struct ksymtab *u;
	uint64_t o;

	/* the fixture's pair, added in one order */
	expect(0xffffffff81300410, "do_nanosleep", NULL, 0x10);
	for (i = 0; i < N; i++)
		v[i] = i;
	do {	/* every one of the 720 input orders */
		cr_assert_eq(ksymtab__new(&u), 0);
		for (i = 0; i < N; i++)
			cr_assert_eq(ksymtab__add(u, in[v[i]].addr, in[v[i]].size, in[v[i]].name,
						  strlen(in[v[i]].name), NULL), 0);
		cr_assert_eq(ksymtab__finalize(u), 0);
		cr_assert_eq(ksymtab__count(u), 3);
		cr_assert_str_eq(ksymtab__lookup(u, 0x1010, NULL, &o), "aa_sized",
				 "order %u%u%u%u%u%u", v[0], v[1], v[2], v[3], v[4], v[5]);
		cr_assert_eq(o, 0x10);
		cr_assert_null(ksymtab__lookup(u, 0x1040, NULL, NULL), "the winner's size");
		cr_assert_str_eq(ksymtab__lookup(u, 0x800, NULL, NULL), "prev");
		cr_assert_str_eq(ksymtab__lookup(u, 0x200f, NULL, NULL), "next");
		ksymtab__free(u);
		orders++;
	} while (next_perm(v, N));
	cr_assert_eq(orders, 720);
}

Test(sym_ksymtab, names_need_no_terminator_and_add_after_finalize_fails)
{
	struct ksymtab *u;
	const char raw[] = "vfs_readXXXX";

	cr_assert_eq(ksymtab__new(&u), 0);
	cr_assert_eq(ksymtab__add(u, 0x1000, 0x10, raw, 8, ""), 0);
	cr_assert_eq(ksymtab__add(u, 0x2000, 0x10, "", 0, NULL), -EINVAL);
	cr_assert_null(ksymtab__lookup(u, 0x1000, NULL, NULL)); /* not final */
	cr_assert_eq(ksymtab__finalize(u), 0);
	cr_assert_str_eq(ksymtab__lookup(u, 0x1008, NULL, NULL), "vfs_read");
	cr_assert_eq(ksymtab__add(u, 0x3000, 0x10, "x", 1, NULL), -EINVAL);
	ksymtab__free(u);
}

Test(sym_ksymtab, tracer_frames)
{
	static const char *const tracer[] = {
		"bpf_get_stack", "bpf_get_stackid_raw_tp", "bpf_get_stack_raw_tp",
		"bpf_prog_6deef7357e7b4530_on_switch", "__bpf_prog_run",
		"bpf_trace_run4", "__bpf_trace_sched_switch",
		"__traceiter_sched_switch", "perf_trace_sched_switch",
		"bpf_perf_event_output", "bpf_overflow_handler",
		"__perf_event_overflow", "perf_swevent_hrtimer", "perf_tp_event",
	};
	static const char *const real[] = {
		"__schedule", "schedule", "finish_task_switch.isra.0",
		"hrtimer_interrupt", "__hrtimer_run_queues", "do_nanosleep",
		"bpf_map_lookup_elem", "perf_event_open", "__x64_sys_bpf",
		"trace_sched_switch", "",
	};

	for (size_t i = 0; i < sizeof(tracer) / sizeof(*tracer); i++)
		cr_assert(ksymtab__is_tracer_frame(tracer[i]), "%s", tracer[i]);
	for (size_t i = 0; i < sizeof(real) / sizeof(*real); i++)
		cr_assert_not(ksymtab__is_tracer_frame(real[i]), "%s", real[i]);
	cr_assert_not(ksymtab__is_tracer_frame(NULL));
}
