// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel matrix: every event kind recorded on each kernel stkrec
 * promises to run on, with known workloads, by tests/kernels/run.sh (this
 * machine's kernel directly; Debian 12's 6.1 flavours booted under qemu).
 * The checks run on the kernel under test and print "ok NAME" or
 * "FAIL NAME: why"; here every expected check must say ok, so a check that
 * silently stopped running fails too; so does a guest that froze, even
 * when the boot after it passed. A machine that cannot run a kernel (no
 * qemu, not root, its package not downloadable) skips it with the reason.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* What tests/kernels/check.sh checks, for each I/O scheduler. */
static const char *const checks[] = {
	"default.record", "default.events", "default.lost0",
	"offcpu.record", "offcpu.lost0", "offcpu.warnings", "offcpu.stack",
	"mutex.record", "mutex.lost0", "mutex.warnings", "mutex.stack",
	"cpu.record", "cpu.lost0", "cpu.warnings", "cpu.burn_a", "cpu.burn_b",
	"btf.missing",
	"waits.record", "waits.lost0", "waits.warnings", "waits.open_both",
	"wakeup.record", "wakeup.lost0", "wakeup.warnings", "wakeup.pipe_writer",
	"wakeio.record", "wakeup.io_request",
	"cgroup.record", "cgroup.lost0", "cgroup.warnings", "cgroup.events",
};
/* --call-graph dwarf on a program without frame pointers: x86-64 unwinds
 * it (whole chains, which fp on the same program lacks); other
 * architectures fall back to fp with one warning line. */
static const char *const dwarf_checks_x86[] = {
	"dwarf.record", "dwarf.lost0", "dwarf.warnings", "dwarf.call_graph",
	"dwarf.burn_chain", "fp.record", "fp.burn_cut",
};
static const char *const dwarf_checks_other[] = {
	"dwarf.record", "dwarf.lost0", "dwarf.warnings", "dwarf.fallback", "dwarf.call_graph",
};
static const char *const bio_checks[] = {
	"scheduler", "record", "lost0", "warnings", "writer", "no_unknown",
};
static const char *const schedulers[] = { "none", "mq-deadline" };

/* The call graph a plain `stkrec record` must choose (check.sh's
 * default.call_graph.*): dwarf on x86-64 kernels, PREEMPT_RT ones too, fp
 * elsewhere. */
static const char *default_call_graph_check(bool x86)
{
	return x86 ? "default.call_graph.dwarf" : "default.call_graph.fp";
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/* Run the kernel's checks; their output (malloc()ed) in *out. */
static int run_kernel(const char *kernel, char **out)
{
	const char *src = env_or("STKREC_SRCDIR", ".");
	char cmd[4096], *buf = NULL;
	size_t len = 0;
	FILE *f, *mem;
	int st, c;

	snprintf(cmd, sizeof(cmd), "bash %s/tests/kernels/run.sh %s 2>&1", src, kernel);
	f = popen(cmd, "r");
	cr_assert(f, "popen %s", cmd);
	mem = open_memstream(&buf, &len);
	cr_assert(mem);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	st = pclose(f);
	fclose(mem);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "ok NAME" alone on a line of out */
static bool has_ok(const char *out, const char *name)
{
	char line[128];
	const char *p = out;
	size_t n;

	n = snprintf(line, sizeof(line), "ok %s\n", name);
	while ((p = strstr(p, line))) {
		if (p == out || p[-1] == '\n')
			return true;
		p += n;
	}
	return false;
}

static void assert_names(const char *kernel, const char *out, const char *const *names,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cr_assert(has_ok(out, names[i]), "%s\n%s: check %s did not pass", out, kernel,
			  names[i]);
}

#define ASSERT_NAMES(kernel, out, names) \
	assert_names(kernel, out, names, sizeof(names) / sizeof(names[0]))

/* x86: the guest's (or, for "host", this machine's) architecture */
static void assert_checks(const char *kernel, bool x86, const char *out)
{
	char name[64];
	const char *fail;
	size_t i, j;

	/* everything the run printed (~60 lines), then the first failure:
	 * last, where the tail of a long log shows it */
	fail = strstr(out, "\nFAIL ");
	cr_assert_null(fail, "%s\n%s: %.*s", out, kernel, (int)strcspn(fail ? fail + 1 : "", "\n"),
		       fail ? fail + 1 : "");
	ASSERT_NAMES(kernel, out, checks);
	cr_assert(has_ok(out, default_call_graph_check(x86)), "%s\n%s: check %s did not "
		  "pass", out, kernel, default_call_graph_check(x86));
	if (x86)
		ASSERT_NAMES(kernel, out, dwarf_checks_x86);
	else
		ASSERT_NAMES(kernel, out, dwarf_checks_other);
	for (i = 0; i < sizeof(schedulers) / sizeof(schedulers[0]); i++) {
		for (j = 0; j < sizeof(bio_checks) / sizeof(bio_checks[0]); j++) {
			snprintf(name, sizeof(name), "bio-%s.%s", schedulers[i], bio_checks[j]);
			cr_assert(has_ok(out, name), "%s\n%s: check %s did not pass", out,
				  kernel, name);
		}
	}
	cr_assert(strstr(out, "\nchecks done\n"), "%s\n%s: the checks did not finish", out,
		  kernel);
}

static void matrix_kernel(const char *kernel)
{
	char *out = NULL;
	int st = run_kernel(kernel, &out);
#if defined(__x86_64__)
	bool host_x86 = true;
#else
	bool host_x86 = false;
#endif
	bool x86 = strcmp(kernel, "host") ? strstr(kernel, "amd64") != NULL : host_x86;

	if (st == 77)
		cr_skip_test("kernel %s cannot run here: %s", kernel, out);
	cr_assert_eq(st, 0, "%s\ntests/kernels/run.sh %s failed (exit %d)", out, kernel, st);
	/* a frozen guest is a "FAIL boot.hung" line: assert_checks() fails
	 * on it, whatever the boot after it found */
	assert_checks(kernel, x86, out);
	free(out);
}

/* This machine's kernel, directly (a loop device for the disk). */
Test(kernels, host, .timeout = 600)
{
	matrix_kernel("host");
}

/* Debian 12's generic 6.1: no block_io_start, x86 pt_regs without FRED. */
Test(kernels, debian12_amd64, .timeout = 1800)
{
	matrix_kernel("amd64");
}

/* Debian 12's cloud 6.1: its drivers built in, a smaller config. */
Test(kernels, debian12_cloud_amd64, .timeout = 1800)
{
	matrix_kernel("cloud-amd64");
}

/* Debian 12's PREEMPT_RT 6.1: preemptible BPF programs and softirqs. */
Test(kernels, debian12_rt_amd64, .timeout = 1800)
{
	matrix_kernel("rt-amd64");
}

/* Debian 12's arm64 6.1, under qemu-system-aarch64 (TCG), with the cross
 * build of stkrec (build/arm64): another architecture's registers, stack
 * walker and BTF. */
Test(kernels, debian12_arm64, .timeout = 1800)
{
	matrix_kernel("arm64");
}
