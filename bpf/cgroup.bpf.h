/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cgroups (cgroup v2, the default hierarchy): the id each event carries,
 * the PID namespace ids of the task, the -G filter, and the directories
 * made and removed while recording (sent so that user space can name a
 * cgroup gone before it looks).
 *
 * The id is the cgroup's kernfs node id, the directory's inode number on
 * 64-bit: what bpf_get_current_cgroup_id() returns. For another task it
 * is read as task->cgroups->dfl_cgrp->kn->id.
 *
 * -G compares the ancestor at each PATH's level (root 0) with its id:
 * bpf_get_current_ancestor_cgroup_id() for the current task, else
 * cgroup->ancestors[level] (6.0+) or cgroup->ancestor_ids[level] (5.x).
 *
 * Included by stkrec.bpf.c before the programs that use it.
 */
#ifndef STKREC_BPF_CGROUP_BPF_H
#define STKREC_BPF_CGROUP_BPF_H

const volatile bool record_cgroups = true; /* false: no cgroup2 mount */
const volatile __u32 nr_cgroup_filter = 0; /* -G entries */
const volatile __u64 cgroup_filter_id[STKREC_MAX_CGROUPS];
const volatile __u32 cgroup_filter_level[STKREC_MAX_CGROUPS];

/* 5.x kept the ancestors' ids, 6.0+ their cgroups. */
struct cgroup___old {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

static __always_inline __u64 cgroup_id_of(struct cgroup *cg)
{
	return BPF_CORE_READ(cg, kn, id);
}

static __always_inline struct cgroup *task_dfl_cgroup(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp);
}

/* t's cgroup v2 id, 0 when not recorded. */
static __always_inline __u64 task_cgroup(struct task_struct *t, bool btf)
{
	if (!record_cgroups)
		return 0;
	if (btf)
		return t->cgroups->dfl_cgrp->kn->id;
	return cgroup_id_of(task_dfl_cgroup(t));
}

static __always_inline __u64 current_cgroup(void)
{
	return record_cgroups ? bpf_get_current_cgroup_id() : 0;
}

/* 5.x: the id at ancestor_ids[level]. A subprogram of its own: inline,
 * the compiler may hoist its offset (a failed CO-RE relocation on 6.0+)
 * above the test that rules it out, and the verifier rejects it. */
static __noinline __u64 old_ancestor_id(__u64 cg, __u32 level)
{
	struct cgroup___old *old = (void *)cg;
	__u64 id = 0;

	bpf_probe_read_kernel(&id, sizeof(id),
			      (void *)old + bpf_core_field_offset(old->ancestor_ids) +
				      (level & 0xff) * sizeof(id));
	return id;
}

/* The id of cg's ancestor at level (cg itself at its own level), 0 when
 * cg is above it. */
static __always_inline __u64 cgroup_ancestor(struct cgroup *cg, __u32 level)
{
	struct cgroup *a = NULL;

	if (level > (__u32)BPF_CORE_READ(cg, level))
		return 0;
	if (!bpf_core_field_exists(cg->ancestors))
		return old_ancestor_id((__u64)cg, level);
	bpf_probe_read_kernel(&a, sizeof(a), (void *)cg + bpf_core_field_offset(cg->ancestors) +
					       level * sizeof(a));
	return a ? cgroup_id_of(a) : 0;
}

/* -G: t (any task) is in one of the cgroups or below. */
static __always_inline bool task_cgroup_allowed(struct task_struct *t)
{
	struct cgroup *cg;
	__u32 i;

	if (!nr_cgroup_filter)
		return true;
	cg = task_dfl_cgroup(t);
	for (i = 0; i < STKREC_MAX_CGROUPS; i++) {
		if (i >= nr_cgroup_filter)
			break;
		if (cgroup_ancestor(cg, cgroup_filter_level[i]) == cgroup_filter_id[i])
			return true;
	}
	return false;
}

/* The same for the current task, without reading its cgroup. */
static __always_inline bool current_cgroup_allowed(void)
{
	__u32 i;

	if (!nr_cgroup_filter)
		return true;
	for (i = 0; i < STKREC_MAX_CGROUPS; i++) {
		if (i >= nr_cgroup_filter)
			break;
		if (bpf_get_current_ancestor_cgroup_id(cgroup_filter_level[i]) ==
		    cgroup_filter_id[i])
			return true;
	}
	return false;
}

/* Counted per kind: what -G kept out. */
static __always_inline bool cgroup_keeps(bool allowed, __u32 kind)
{
	if (!allowed)
		count_stat(STKREC_STAT_CGROUP_FILTERED + kind);
	return allowed;
}

/* The nr of pid in the namespace it was made in (numbers[level]). */
static __always_inline __u32 pid_ns_nr(struct pid *p)
{
	__u32 level = BPF_CORE_READ(p, level);
	int nr = 0;

	if (level > 32) /* MAX_PID_NS_LEVEL */
		return 0;
	bpf_probe_read_kernel(&nr, sizeof(nr), (void *)p + bpf_core_field_offset(p->numbers) +
				       level * bpf_core_type_size(struct upid) +
				       bpf_core_field_offset(struct upid, nr));
	return nr;
}

/* t's tid and pid in its own PID namespace: a task in the initial one
 * (level 0) has its host ids, read no further. */
static __always_inline void task_ns_ids(struct task_struct *t, __u32 tid, __u32 tgid,
					__u32 *ns_tid, __u32 *ns_pid, bool btf)
{
	struct pid *p = KREAD(btf, t, thread_pid);

	if (!KREAD(btf, p, level)) {
		*ns_tid = tid;
		*ns_pid = tgid;
		return;
	}
	*ns_tid = pid_ns_nr(p);
	*ns_pid = tid == tgid ? *ns_tid : pid_ns_nr(BPF_CORE_READ(t, group_leader, thread_pid));
}

/* btf: t is a BTF pointer (KREAD). */
static __always_inline void task_ev_ids(struct stkrec_stack_ev *e, struct task_struct *t,
					bool btf)
{
	task_ns_ids(t, e->tid, e->pid, &e->ns_tid, &e->ns_pid, btf);
}

/* A directory of the default hierarchy (hierarchy_id 0) made or removed. */
static __always_inline void cgroup_dir_ev(struct cgroup *cg, const char *path, __u32 flags)
{
	struct stkrec_cgroup_ev *e;
	long n;

	if (!record_cgroups || BPF_CORE_READ(cg, root, hierarchy_id) != 0)
		return;
	/* Not counted when the ring buffer is full: user space names an id
	 * it has no record of by scanning the hierarchy again. */
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return;
	e->type = STKREC_EV_CGROUP;
	e->flags = flags;
	e->id = cgroup_id_of(cg);
	e->time = bpf_ktime_get_ns();
	e->reserved = 0;
	n = bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
	e->path_len = n > 0 ? n - 1 : 0;
	bpf_ringbuf_submit(e, wake_flags());
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(stkrec_cgroup_mkdir, struct cgroup *cg, const char *path)
{
	cgroup_dir_ev(cg, path, 0);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(stkrec_cgroup_rmdir, struct cgroup *cg, const char *path)
{
	cgroup_dir_ev(cg, path, STKREC_CGROUP_RMDIR);
	return 0;
}

#endif /* STKREC_BPF_CGROUP_BPF_H */
