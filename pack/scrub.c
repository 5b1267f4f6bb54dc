// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `stkrec scrub`'s changes to a capture (FORMAT.md §3.1 SCRUBBED), one
 * record at a time, for repack.c's rewrite: kernel addresses become offsets
 * from _stext, so that the capture no longer tells the kernel's KASLR
 * offset (the frames, the KSYMs naming them and the KMODs holding them
 * move together, and name the same); the hostname and the recorded
 * command go; with --paths, home directories become placeholders. Names,
 * offsets, build IDs, times and counts stay: a report reads the same.
 */
#include <errno.h>
#include <string.h>

#include "pack/pack_int.h"

/* Where a home directory begins at s (length n): the bytes it spans and
 * its placeholder, else 0. */
static size_t home_at(const char *s, size_t n, const char **ph)
{
	size_t k;

	if (n >= 6 && !memcmp(s, "/home/", 6)) {
		for (k = 6; k < n && s[k] != '/' && s[k] != ' ' && s[k] != ':'; k++)
			;
		*ph = CAP_SCRUB_HOME;
		return k > 6 ? k : 0;
	}
	if (n >= 5 && !memcmp(s, "/root", 5) &&
	    (n == 5 || s[5] == '/' || s[5] == ' ' || s[5] == ':')) {
		*ph = CAP_SCRUB_ROOT;
		return 5;
	}
	return 0;
}

/* s[0..n) with every home directory replaced, into out (cap bytes, cut
 * there); its length. */
static size_t scrub_paths(const char *s, size_t n, char *out, size_t cap)
{
	size_t i = 0, o = 0, k, pl;
	const char *ph;

	while (i < n && o < cap) {
		k = home_at(s + i, n - i, &ph);
		if (!k) {
			out[o++] = s[i++];
			continue;
		}
		pl = strlen(ph);
		if (o + pl > cap)
			break;
		memcpy(out + o, ph, pl);
		o += pl;
		i += k;
	}
	return o;
}

void scrub__header(uint32_t what, struct cap_header *h)
{
	char *cut = strstr(h->cmdline, " -- ");
	char tmp[sizeof(h->cmdline)];
	size_t n;

	memset(h->hostname, 0, sizeof(h->hostname));
	if (cut) /* the recorded command and its arguments */
		memset(cut, 0, sizeof(h->cmdline) - (cut - h->cmdline));
	if (what & CAP_FEAT_SCRUBBED_PATHS) {
		n = scrub_paths(h->cmdline, strlen(h->cmdline), tmp, sizeof(tmp) - 1);
		memcpy(h->cmdline, tmp, n);
		h->cmdline[n] = 0;
	}
	h->features |= CAP_FEAT_SCRUBBED | (what & CAP_FEAT_SCRUBBED_PATHS);
}

static uint64_t rebase(const struct scrub *s, uint64_t addr)
{
	return addr ? addr - s->kbase : 0;
}

/* The kernel's records: _stext is where offsets start, and becomes 0. */
static int scrub_kernel(struct scrub *s, struct cap_record *r)
{
	struct cap_kernel *k = &r->kernel;

	s->kbase = k->stext;
	s->has_kernel = true;
	k->stext = 0;
	k->sched_text_start = rebase(s, k->sched_text_start);
	k->sched_text_end = rebase(s, k->sched_text_end);
	k->lock_text_start = rebase(s, k->lock_text_start);
	k->lock_text_end = rebase(s, k->lock_text_end);
	return 0;
}

int scrub__record(struct scrub *s, struct cap_record *r)
{
	uint16_t i;

	switch (r->type) {
	case CAP_REC_KERNEL:
		return scrub_kernel(s, r);
	case CAP_REC_KMOD:
	case CAP_REC_KSYM:
	case CAP_REC_STACK:
		if (r->type == CAP_REC_STACK && r->stack.kind != CAP_STACK_KERNEL)
			return 0;
		if (!s->has_kernel)
			return -ENOEXEC; /* no base: nothing to rebase to */
		if (r->type == CAP_REC_KMOD)
			r->kmod.base = rebase(s, r->kmod.base);
		else if (r->type == CAP_REC_KSYM)
			r->ksym.addr = rebase(s, r->ksym.addr);
		for (i = 0; r->type == CAP_REC_STACK && i < r->stack.nr; i++)
			s->ips[i] = rebase(s, r->ips[i]);
		if (r->type == CAP_REC_STACK)
			r->ips = s->ips;
		return 0;
	case CAP_REC_STRING:
		if (!(s->what & CAP_FEAT_SCRUBBED_PATHS))
			return 0;
		r->tail_len = scrub_paths(r->tail, r->tail_len, s->str, CAP_MAX_STRING);
		r->string.len = r->tail_len;
		r->tail = s->str;
		return 0;
	}
	return 0;
}
