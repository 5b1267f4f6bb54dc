/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the end-to-end tests share: the environment (STKREC, STKREC_WORKLOADS,
 * STKREC_SRCDIR), shell commands, recording a workload with the real
 * recorder (skipping, visibly, where it cannot run) and the headless
 * Chromium checks' setup (tests/browser).
 */
#ifndef STKREC_TESTS_UTIL_E2E_H
#define STKREC_TESTS_UTIL_E2E_H

#include <stdbool.h>

/* getenv(name) when set and not empty, else def. */
const char *e2e_env(const char *name, const char *def);
/* system() of a formatted command line: its exit status, -1 when it did
 * not exit. */
int e2e_shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Is cmd on the PATH? */
bool e2e_have(const char *cmd);
/* `BIN record -o CAP ROPTS -- LAUNCHER WORKLOAD ARGS`, the workload from
 * $STKREC_WORKLOADS, its stdout into out_path. Skips without root, without
 * the workload or where BPF cannot load; asserts that it succeeded. */
void e2e_record(const char *bin, const char *cap, const char *ropts, const char *launcher,
		const char *name, const char *args, const char *out_path);
/* The number after "KEY=" in a workload's output (its pid=, tid=, ...). */
long long e2e_value_of(const char *text, const char *key);
/* The number README.md gives just before `phrase` ("1,336 files" for
 * " files"), the phrase found once: a count the README states is asserted
 * by the test that counts it, so that it cannot go stale. */
long e2e_readme_count(const char *phrase);
/* tests/browser, with its locked npm packages installed (npm ci, once);
 * skips without chromium, node or npm. */
const char *e2e_browser_dir(void);

#endif /* STKREC_TESTS_UTIL_E2E_H */
