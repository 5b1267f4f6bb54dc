// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cgroups and containers in the report (format 1.5): a scene of two
 * "containers" running the same command, told apart by the model, the
 * filters, the sort keys and the exports.
 *
 *   pid 1000 worker (tids 1000, 1001; ns pid 1, ns tids 1, 7) in docker A
 *   pid 2000 worker (ns pid 1) in containerd B, in a best-effort pod
 *   pid 3000 host, cgroup unknown (0)
 *   CPU:     A 3 + 2 samples, B 4, host 1
 *   off-CPU: A 1 ms, B 2 x 2 ms
 *   BIO:     B 8 KiB
 *   CGROUP:  A (11), B (22), cron.service (33, removed, no events), and a
 *            second definition of 11 that must not stand
 */
#include <inttypes.h>
#include <sys/wait.h>
#include "report/container.h"
#include "tests/report_run.h"

#define HEXA "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
#define HEXB "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
#define UID_US "1234abcd_5678_9abc_def0_123456789abc"
#define UID "1234abcd-5678-9abc-def0-123456789abc"
#define PATH_A "/system.slice/docker-" HEXA ".scope"
#define PATH_B "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_US \
	       ".slice/cri-containerd-" HEXB ".scope"
#define PATH_C "/system.slice/cron.service"
#define CG_A 11
#define CG_B 22
#define CG_C 33

static int cg_thread_at(struct cap_writer *w, uint64_t time, uint32_t tid, uint32_t pid,
			const char *comm, uint32_t ns_tid, uint32_t ns_pid)
{
	struct cap_thread r = { .time = time, .tid = tid, .pid = pid, .ns_tid = ns_tid,
				.ns_pid = ns_pid };

	memcpy(r.comm, comm, strlen(comm));
	return cap_writer__append(w, CAP_REC_THREAD, &r, sizeof(r), NULL, 0);
}

static int cg_thread(struct cap_writer *w, uint32_t tid, uint32_t pid, const char *comm,
		     uint32_t ns_tid, uint32_t ns_pid)
{
	return cg_thread_at(w, RC_T0, tid, pid, comm, ns_tid, ns_pid);
}

static int cg_cgroup(struct cap_writer *w, uint64_t id, uint32_t flags, const char *path)
{
	struct cap_cgroup r = { .id = id, .time = RC_T0, .flags = flags,
				.path_len = strlen(path) };

	return cap_writer__append(w, CAP_REC_CGROUP, &r, sizeof(r), path, strlen(path));
}

static int cg_cpu(struct cap_writer *w, uint64_t t, uint32_t tid, uint32_t pid, uint64_t cg)
{
	struct cap_cpu r = { .time = t, .tid = tid, .pid = pid, .ustack = 1, .cgroup = cg };

	return cap_writer__append(w, CAP_REC_CPU, &r, sizeof(r), NULL, 0);
}

static int cg_offcpu(struct cap_writer *w, uint64_t t, uint64_t dur, uint32_t tid,
		     uint32_t pid, uint64_t cg)
{
	struct cap_offcpu r = { .start = t, .duration = dur, .tid = tid, .pid = pid,
				.state = 1, .ustack = 2, .cgroup = cg };

	return cap_writer__append(w, CAP_REC_OFFCPU, &r, sizeof(r), NULL, 0);
}

static int cg_bio(struct cap_writer *w, uint64_t t, uint32_t pid, uint64_t cg)
{
	struct cap_bio r = { .issue_time = t, .complete_time = t + RC_MS, .sector = 8,
			     .bytes = 8192, .tid = pid, .pid = pid, .major = 8, .op = CAP_BIO_READ,
			     .ustack = 1, .cgroup = cg };

	memcpy(r.comm, "worker", 6);
	return cap_writer__append(w, CAP_REC_BIO, &r, sizeof(r), NULL, 0);
}

static int cg_wakeup(struct cap_writer *w, uint64_t t, uint32_t tid, uint32_t pid,
		     uint32_t waker, uint64_t cg, uint64_t waker_cg)
{
	struct cap_wakeup r = { .time = t, .tid = tid, .pid = pid, .waker_tid = waker,
				.waker_pid = waker, .ustack = 1, .cgroup = cg,
				.waker_cgroup = waker_cg };

	return cap_writer__append(w, CAP_REC_WAKEUP, &r, sizeof(r), NULL, 0);
}

/* The scene; with wakeup, B's 2000 wakes A's 1001 out of its wait. */
static int cg_scene(const char *path, bool wakeup)
{
	static const uint64_t u1[] = { 0x401000, 0x402000 }, u2[] = { 0x403000, 0x402000 };
	struct cap_writer *w = rc_open(path);
	uint64_t t = RC_T0 + RC_MS;
	int err, i;

	if (!w)
		return -EIO;
	err = rc_string(w, 1, "/usr/bin/worker") ?: rc_string(w, 2, "/usr/bin/host") ?:
	      cap_writer__stack(w, 1, 1, u1, 2) ?: cap_writer__stack(w, 2, 1, u2, 2) ?:
	      cg_thread(w, 1000, 1000, "worker", 1, 1) ?: cg_thread(w, 1001, 1000, "worker", 7, 1) ?:
	      /* the side band's record of a thread already gone: ids unknown */
	      cg_thread_at(w, RC_T0 + 1, 1001, 1000, "worker", 0, 0) ?:
	      cg_thread(w, 2000, 2000, "worker", 1, 1) ?: cg_thread(w, 3000, 3000, "host", 0, 0) ?:
	      rc_map(w, RC_T0, 1000, 0x400000, 0x500000, 0, 1) ?:
	      rc_map(w, RC_T0, 2000, 0x400000, 0x500000, 0, 1) ?:
	      rc_map(w, RC_T0, 3000, 0x400000, 0x500000, 0, 2) ?:
	      cg_cgroup(w, CG_A, 0, PATH_A) ?: cg_cgroup(w, CG_B, 0, PATH_B) ?:
	      cg_cgroup(w, CG_A, 0, "/evil") ?: cg_cgroup(w, CG_C, CAP_CGROUP_F_REMOVED, PATH_C);
	for (i = 0; !err && i < 5; i++)
		err = cg_cpu(w, t + i * RC_MS, i < 3 ? 1000 : 1001, 1000, CG_A);
	for (i = 0; !err && i < 4; i++)
		err = cg_cpu(w, t + (10 + i) * RC_MS, 2000, 2000, CG_B);
	err = err ?: cg_cpu(w, t + 20 * RC_MS, 3000, 3000, 0) ?:
	      cg_offcpu(w, t + 30 * RC_MS, RC_MS, 1001, 1000, CG_A) ?:
	      cg_offcpu(w, t + 40 * RC_MS, 2 * RC_MS, 2000, 2000, CG_B) ?:
	      cg_offcpu(w, t + 50 * RC_MS, 2 * RC_MS, 2000, 2000, CG_B) ?:
	      cg_bio(w, t + 60 * RC_MS, 2000, CG_B);
	if (!err && wakeup)
		err = cg_wakeup(w, t + 30 * RC_MS + RC_MS / 2, 1001, 1000, 2000, CG_A, CG_B);
	if (err) {
		cap_writer__free(w);
		return err;
	}
	return cap_writer__finish(w);
}

static void cg_setup(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	cap_path = rc_tmpname("cgroup");
	cr_assert_not_null(cap_path);
	cr_assert_eq(cg_scene(cap_path, false), 0);
	cr_assert_eq(model__load(cap_path, &model), 0);
}

TestSuite(report_cgroup, .init = cg_setup, .fini = teardown);

Test(report_cgroup, model_cgroups)
{
	struct model_cgroup_info g;
	const struct container *c;
	uint32_t pid, tid;

	cr_assert_eq(model__nr_cgroups(model), 3);
	cr_assert_eq(model__cgroup(model, 0, &g), 0);
	cr_assert_eq(g.id, CG_A);
	cr_assert_str_eq(g.path, PATH_A); /* the first definition stands */
	cr_assert_eq(g.container->kind, CONTAINER_DOCKER);
	cr_assert_eq(model__cgroup(model, 2, &g), 0);
	cr_assert_eq(g.flags, CAP_CGROUP_F_REMOVED);
	cr_assert_eq(g.container->kind, CONTAINER_SERVICE);
	cr_assert_eq(model__cgroup(model, 3, &g), -ENOENT);
	cr_assert_str_eq(model__cgroup_path(model, CG_B), PATH_B);
	cr_assert_null(model__cgroup_path(model, 0));
	cr_assert_null(model__cgroup_path(model, 44));
	c = model__cgroup_container(model, CG_B);
	cr_assert_eq(c->kind, CONTAINER_CONTAINERD);
	cr_assert_str_eq(c->id, HEXB);
	cr_assert_str_eq(c->pod_uid, UID);
	cr_assert(model__ns_ids(model, 1001, RC_T0 + RC_S, &pid, &tid));
	cr_assert(pid == 1 && tid == 7);
	cr_assert(!model__ns_ids(model, 3000, RC_T0 + RC_S, &pid, &tid));
	cr_assert(!model__ns_ids(model, 4242, RC_T0, &pid, &tid));
	cr_assert(pid == 0 && tid == 0);
}

/* The folded CPU stacks (with pids) under --cgroup list. */
static char *folded_cgroup(const char *list, unsigned kinds)
{
	static const struct report_opts o = { .with_pid = true };
	struct filter f = { .kinds = kinds };
	char *s;

	cr_assert_eq(filter__add_cgroups(&f, list), 0);
	s = run(view_folded, &f, &o);
	filter__free(&f);
	return s;
}

#define FOLD_A "worker-1000;worker+0x2000;worker+0x1000 5\n"
#define FOLD_B "worker-2000;worker+0x2000;worker+0x1000 4\n"
#define CPU (1u << CAP_KIND_CPU)

Test(report_cgroup, filter_substring_glob_id_uid)
{
	static const struct { const char *list, *want; } cases[] = {
		{ "a1a1a1a1a1a1", FOLD_A },            /* a short container ID */
		{ "docker", FOLD_A },                  /* part of the path */
		{ "/kubepods*", FOLD_B },              /* a glob over the whole path */
		{ "/kubepods", FOLD_B },
		{ UID, FOLD_B },                       /* the pod UID, with dashes */
		{ "*.scope", FOLD_A FOLD_B },
		{ "a1a1a1a1a1a1,/kubepods*", FOLD_A FOLD_B },
		{ "/system.slice", FOLD_A },
		{ "/system.slice/*.service", "" },     /* cron: no events */
		{ "*", FOLD_A FOLD_B },                /* never the unknown cgroup */
		{ "/evil", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = folded_cgroup(cases[i].list, CPU);

		cr_assert_str_eq(s, cases[i].want, "--cgroup %s", cases[i].list);
		free(s);
	}
}

Test(report_cgroup, filter_every_kind)
{
	struct filter f = { 0 };

	cr_assert_eq(filter__add_cgroups(&f, "b2b2"), 0);
	cr_assert_eq(filter__bind(&f, model), 0);
	cr_assert(!filter__none_match(&f, model));
	cr_assert(filter__cgroup(&f, model, CG_B));
	cr_assert(!filter__cgroup(&f, model, CG_A));
	cr_assert(!filter__cgroup(&f, model, 0));
	filter__free(&f);
	cr_assert_eq(filter__add_cgroups(&f, "nothing-like-it"), 0);
	cr_assert_eq(filter__bind(&f, model), 0);
	cr_assert(filter__none_match(&f, model));
	filter__free(&f);
	cr_assert_eq(filter__add_cgroups(&f, ""), -EINVAL);
	cr_assert_eq(filter__add_cgroups(&f, "a,"), -EINVAL);
	filter__free(&f);
}

Test(report_cgroup, filter_offcpu_and_bio)
{
	char *s = folded_cgroup("b2b2", 1u << CAP_KIND_OFFCPU);

	cr_assert_str_eq(s, "worker-2000;worker+0x2000;worker+0x3000 4000\n");
	free(s);
	s = folded_cgroup("a1a1", 1u << CAP_KIND_BIO);
	cr_assert_str_eq(s, "");
	free(s);
	s = folded_cgroup("b2b2", 1u << CAP_KIND_BIO);
	cr_assert_str_eq(s, "worker;worker+0x2000;worker+0x1000;8:0 8192\n");
	free(s);
}

/* The tables of the perf view under -e cpu (or kinds) and -s keys,
 * without the capture's header. */
static char *perf_sorted(const enum view_sort *keys, int n, unsigned kinds)
{
	struct report_opts o = { .nsort = n };
	struct filter f = { .kinds = kinds };
	char *s, *table;

	memcpy(o.sort, keys, n * sizeof(*keys));
	s = run(view_perf, &f, &o);
	filter__free(&f);
	table = strstr(s, "# Samples");
	cr_assert_not_null(table, "%s", s);
	table = strdup(table);
	free(s);
	return table;
}

Test(report_cgroup, sort_container)
{
	static const enum view_sort keys[] = { SORT_CONTAINER, SORT_COMM };
	char *s = perf_sorted(keys, 2, CPU);

	cr_assert_str_eq(s, "# Samples: 10 of event 'cpu'\n"
			    "# Event count (samples): 10\n"
			    "#\n"
			    "# Overhead  Container                Command\n"
			    "# ........  .......................  .......\n"
			    "#\n"
			    "    50.00%  docker:a1a1a1a1a1a1      worker\n"
			    "    40.00%  containerd:b2b2b2b2b2b2  worker\n"
			    "    10.00%  -                        host\n");
	free(s);
}

/* The block I/O table takes the container (or cgroup) as a column too. */
Test(report_cgroup, sort_container_bio)
{
	static const enum view_sort keys[] = { SORT_CONTAINER, SORT_COMM };
	char *s = perf_sorted(keys, 2, 1u << CAP_KIND_BIO), *row;

	cr_assert_not_null(strstr(s, "# Overhead  Container                 Command "), "%s", s);
	row = strstr(s, "   100.00%  containerd:b2b2b2b2b2b2   worker ");
	cr_assert_not_null(row, "%s", s);
	free(s);
}

Test(report_cgroup, sort_cgroup_offcpu)
{
	static const enum view_sort keys[] = { SORT_CGROUP, SORT_PID };
	char *s = perf_sorted(keys, 2, 1u << CAP_KIND_OFFCPU);

	golden("report_sort_cgroup.txt", s);
	free(s);
}

Test(report_cgroup, info_lists_cgroups)
{
	int st;
	char *s = cli("info", &st), *l = lines_with(s, "cgroup:");

	cr_assert_eq(st, 0);
	cr_assert_str_eq(l,
		"cgroup:       " PATH_B ": offcpu 2, cpu 4, bio 1, wakeup 0; "
		"containerd:b2b2b2b2b2b2\n"
		"cgroup:       " PATH_C ": offcpu 0, cpu 0, bio 0, wakeup 0; "
		"systemd:cron.service; removed while recording\n"
		"cgroup:       " PATH_A ": offcpu 1, cpu 5, bio 0, wakeup 0; docker:a1a1a1a1a1a1\n"
		"cgroup:       [unknown]: offcpu 0, cpu 1, bio 0, wakeup 0\n");
	free(s);
	free(l);
}

Test(report_cgroup, info_json_cgroups)
{
	int st;
	char *s = cli("info --json", &st), *a = strstr(s, "\"cgroups\":["), *b;

	cr_assert_eq(st, 0);
	cr_assert_not_null(a, "%s", s);
	b = strstr(a, "],");
	cr_assert_not_null(b);
	b[2] = '\0';
	cr_assert_str_eq(a, "\"cgroups\":["
		"{\"id\":22,\"path\":\"" PATH_B "\",\"runtime\":\"containerd\",\"container_id\":\""
		HEXB "\",\"pod_uid\":\"" UID "\",\"removed\":false,\"events\":{\"offcpu\":2,"
		"\"cpu\":4,\"bio\":1,\"wakeup\":0}},"
		"{\"id\":33,\"path\":\"" PATH_C "\",\"runtime\":\"systemd\",\"container_id\":"
		"\"cron.service\",\"pod_uid\":\"\",\"removed\":true,\"events\":{\"offcpu\":0,"
		"\"cpu\":0,\"bio\":0,\"wakeup\":0}},"
		"{\"id\":11,\"path\":\"" PATH_A "\",\"runtime\":\"docker\",\"container_id\":\""
		HEXA "\",\"pod_uid\":\"\",\"removed\":false,\"events\":{\"offcpu\":1,"
		"\"cpu\":5,\"bio\":0,\"wakeup\":0}},"
		"{\"id\":0,\"path\":null,\"runtime\":\"\",\"container_id\":\"\",\"pod_uid\":\"\","
		"\"removed\":false,\"events\":{\"offcpu\":0,\"cpu\":1,\"bio\":0,\"wakeup\":0}}],");
	free(s);
}

Test(report_cgroup, script_ns_ids_and_cgroups)
{
	static const struct report_opts o = { .script_folded = true };
	char *s = run(view_script, NULL, &o);

	golden("report_script_cgroup.txt", s);
	free(s);
}

Test(report_cgroup, script_one_container)
{
	static const struct report_opts o = { .script_folded = true };
	struct filter f = { 0 };
	char *s, *p;
	int n = 0;

	cr_assert_eq(filter__add_cgroups(&f, "a1a1a1a1a1a1"), 0);
	s = run(view_script, &f, &o);
	filter__free(&f);
	for (p = s; (p = strstr(p, " container docker:a1a1a1a1a1a1 ")); p++)
		n++;
	cr_assert_eq(n, 6, "%s", s); /* 5 CPU samples and 1 wait, all A's */
	cr_assert_eq(strcount(s, '\n'), 6, "%s", s);
	free(s);
}

Test(report_cgroup, topwaits_ns_ids)
{
	static const struct report_opts json = { .json = true };
	char *s = run(view_topwaits, NULL, NULL);

	golden("report_topwaits_cgroup.txt", s);
	free(s);
	s = run(view_topwaits, NULL, &json);
	cr_assert_not_null(strstr(s, "\"pid\": 1000, \"max_tid\": 1001, \"count\": 1"), "%s", s);
	cr_assert_not_null(strstr(s, "\"ns_pid\": 1, \"max_ns_tid\": 7"), "%s", s);
	free(s);
}

/* `go tool pprof ARGS` of the scene's --pprof (with REPORT_ARGS). */
static char *pprof_of(const char *report_args, const char *args)
{
	char *pb = rc_tmpname("pprof"), cmd[512], *s;
	int st;

	if (access("/usr/bin/go", X_OK) && system("command -v go >/dev/null 2>&1"))
		cr_skip_test("go not installed (Debian package golang-go): no go tool pprof");
	snprintf(cmd, sizeof(cmd), "report %s --pprof %s", report_args, pb);
	s = cli(cmd, &st);
	cr_assert_eq(st, 0, "%s: %s", cmd, s);
	free(s);
	snprintf(cmd, sizeof(cmd), "go tool pprof %s %s 2>/dev/null | grep -v '^ *$'", args, pb);
	s = NULL;
	{
		FILE *p = popen(cmd, "r");
		size_t len = 0;
		FILE *mem = open_memstream(&s, &len);
		int c;

		cr_assert(p && mem);
		while ((c = fgetc(p)) != EOF)
			fputc(c, mem);
		fclose(mem);
		pclose(p);
	}
	unlink(pb);
	free(pb);
	return s;
}

Test(report_cgroup, pprof_labels, .timeout = 300)
{
	char *s = pprof_of("-e cpu", "-raw");

	cr_assert_not_null(strstr(s, "cgroup:[" PATH_A "]"), "%s", s);
	cr_assert_not_null(strstr(s, "container_id:[" HEXA "]"), "%s", s);
	cr_assert_not_null(strstr(s, "container_id:[" HEXB "]"), "%s", s);
	cr_assert_not_null(strstr(s, "pod_uid:[" UID "]"), "%s", s);
	free(s);
	/* one container's samples by its label, and --cgroup alike */
	s = pprof_of("-e cpu", "-top -sample_index=samples -tagfocus=container_id=" HEXA);
	cr_assert_not_null(strstr(s, "accounting for 5, 50.00% of 10 total"), "%s", s);
	free(s);
	s = pprof_of("-e cpu --cgroup b2b2", "-top -sample_index=samples");
	cr_assert_not_null(strstr(s, "accounting for 4, 100% of 4 total"), "%s", s);
	free(s);
}

Test(report_cgroup, chrome_process_labels)
{
	char *s = run(view_chrome, NULL, NULL);

	cr_assert_not_null(strstr(s, "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":1000,"
				     "\"tid\":1000,\"args\":{\"labels\":\"docker:a1a1a1a1a1a1,"
				     PATH_A "\"}}"), "%s", s);
	cr_assert_not_null(strstr(s, "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":2000,"
				     "\"tid\":2000,\"args\":{\"labels\":\"containerd:b2b2b2b2b2b2,"
				     PATH_B "\"}}"), "%s", s);
	/* the host process, cgroup unknown, has none */
	cr_assert_null(strstr(s, "\"process_labels\",\"pid\":3000"), "%s", s);
	free(s);
}

Test(report_cgroup, speedscope_profile_names)
{
	char *s = run(view_speedscope, NULL, NULL);

	cr_assert_not_null(strstr(s, "\"name\":\"worker (docker:a1a1a1a1a1a1) 1000/1001: "), "%s",
			   s);
	cr_assert_not_null(strstr(s, "\"name\":\"worker (containerd:b2b2b2b2b2b2) 2000/2000: "),
			   "%s", s);
	cr_assert_not_null(strstr(s, "\"name\":\"host 3000/3000: "), "%s", s);
	free(s);
}

/* script --folded and the speedscope file tell the same events
 * (tests/export_lines.py), the container in both. */
Test(report_cgroup, exports_agree_with_script)
{
	static const struct report_opts fold = { .script_folded = true };
	const char *src = getenv("STKREC_SRCDIR") ? getenv("STKREC_SRCDIR") : ".";
	char *a = rc_tmpname("script"), *b = rc_tmpname("ss"), *s, cmd[2048];
	FILE *f;

	if (system("command -v python3 >/dev/null 2>&1"))
		cr_skip_test("python3 not installed (Debian package python3)");
	s = run(view_script, NULL, &fold);
	f = fopen(a, "w");
	cr_assert(f && fputs(s, f) >= 0 && !fclose(f));
	free(s);
	s = run(view_speedscope, NULL, NULL);
	f = fopen(b, "w");
	cr_assert(f && fputs(s, f) >= 0 && !fclose(f));
	free(s);
	snprintf(cmd, sizeof(cmd), "cd %s && python3 tests/export_lines.py script %s | grep -v ' bio ' "
		 "| LC_ALL=C sort > %s.l && python3 tests/export_lines.py speedscope %s | "
		 "grep -v ' bio ' | LC_ALL=C sort > %s.l && cmp -s %s.l %s.l", src, a, a, b, b, a, b);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "rm -f %s %s %s.l %s.l", a, b, a, b);
	cr_assert_eq(system(cmd), 0);
	free(a);
	free(b);
}

/* One container against the other in one capture: --cgroup-a, --cgroup-b. */
Test(report_cgroup, diff_per_side)
{
	char args[1024], *s;
	int st;

	snprintf(args, sizeof(args), "diff -e cpu --folded --cgroup-a a1a1 --cgroup-b '%s' %s %s",
		 "/kubepods*", cap_path, cap_path);
	s = cli_raw(args, &st);
	cr_assert_eq(st, 0, "%s", s);
	cr_assert_str_eq(s, "worker;worker+0x2000;worker+0x1000 5 4\n");
	free(s);
	/* --cgroup on both sides; a side's own in its place */
	snprintf(args, sizeof(args), "diff -e cpu --folded --no-normalize --cgroup b2b2 --cgroup-a '*' %s %s",
		 cap_path, cap_path);
	s = cli_raw(args, &st);
	cr_assert_eq(st, 0, "%s", s);
	cr_assert_str_eq(s, "worker;worker+0x2000;worker+0x1000 9 4\n");
	free(s);
	/* the header names each side's own patterns */
	snprintf(args, sizeof(args), "diff -e cpu --cgroup-b b2b2,x %s %s", cap_path, cap_path);
	s = cli_raw(args, &st);
	cr_assert_eq(st, 0, "%s", s);
	snprintf(args, sizeof(args), "\n# A: %s: host", cap_path);
	cr_assert_not_null(strstr(s, args), "%s", s);
	snprintf(args, sizeof(args), "\n# B: %s (--cgroup-b b2b2,x): host", cap_path);
	cr_assert_not_null(strstr(s, args), "%s", s);
	free(s);
	s = cli_raw("diff --cgroup-a '' x y", &st);
	cr_assert_eq(st, 2, "%s", s);
	free(s);
}

/* stkrec scrub keeps the cgroups (their paths name no user) and pack
 * keeps them too: info lists the same. */
Test(report_cgroup, scrub_and_pack_keep_cgroups)
{
	static const char *const cmds[] = { "scrub --paths -o %s %s", "pack -o %s %s" };
	char *out = rc_tmpname("rewritten"), args[1024], *want, *got, *s;
	size_t i;
	int st;

	s = cli("info", &st);
	want = lines_with(s, "cgroup:");
	free(s);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		unlink(out);
		snprintf(args, sizeof(args), cmds[i], out, cap_path);
		s = cli_raw(args, &st);
		cr_assert_eq(st, 0, "%s: %s", args, s);
		free(s);
		snprintf(args, sizeof(args), "info %s", out);
		s = cli_raw(args, &st);
		cr_assert_eq(st, 0, "%s: %s", args, s);
		got = lines_with(s, "cgroup:");
		cr_assert_str_eq(got, want, "%s", cmds[i]);
		free(got);
		free(s);
	}
	unlink(out);
	free(out);
	free(want);
}

/* --chain: the waiter and its waker with their namespace ids. */
Test(report_cgroup, chain_ns_ids)
{
	struct report_opts o = { .chain_id = 1001 };
	char *s;

	model__free(model);
	unlink(cap_path);
	cr_assert_eq(cg_scene(cap_path, true), 0);
	cr_assert_eq(model__load(cap_path, &model), 0);
	s = run(view_chain, NULL, &o);
	golden("report_chain_cgroup.txt", s);
	free(s);
}
