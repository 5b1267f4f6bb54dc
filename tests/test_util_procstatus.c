// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* util/procstatus: the uid and namespace ids /proc/TID/status gives. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/procstatus.h"

Test(util_procstatus, this_thread_in_the_initial_namespace)
{
	struct proc_status st;

	cr_assert_eq(proc_status__read(gettid(), &st), 0);
	cr_assert_eq(st.uid, getuid());
	/* the tests run in the host's PID namespace: the same ids */
	cr_assert_eq(st.ns_tid, (uint32_t)gettid());
	cr_assert_eq(st.ns_pid, (uint32_t)getpid());
}

Test(util_procstatus, a_thread_gone_is_enoent)
{
	struct proc_status st = { .uid = 7, .ns_tid = 7, .ns_pid = 7 };
	pid_t child = fork();

	cr_assert_geq(child, 0);
	if (!child)
		_exit(0);
	cr_assert_eq(waitpid(child, NULL, 0), child);
	cr_assert_eq(proc_status__read(child, &st), -ENOENT);
	cr_assert_eq(st.uid + st.ns_tid + st.ns_pid, 0, "nothing left from before");
}
