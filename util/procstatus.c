// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/procstatus.h"

/* The last number of a "Key:\t1\t2" line. */
static uint32_t last_field(const char *line)
{
	const char *p = strrchr(line, '\t') ?: strrchr(line, ' ');

	return strtoul(p ? p + 1 : line, NULL, 10);
}

int proc_status__read(uint32_t tid, struct proc_status *out)
{
	char path[48], line[256];
	int found = 0;
	FILE *f;

	*out = (struct proc_status){ 0 };
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (found != 7 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u", &out->uid) == 1) {
			found |= 1;
		} else if (!strncmp(line, "NStgid:", 7)) {
			out->ns_pid = last_field(line);
			found |= 2;
		} else if (!strncmp(line, "NSpid:", 6)) {
			out->ns_tid = last_field(line);
			found |= 4;
		}
	}
	fclose(f);
	return found & 1 ? 0 : -ENOENT;
}
