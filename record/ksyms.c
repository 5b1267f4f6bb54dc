// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel symbols for offline symbolization.
 *
 * /proc/kallsyms is read whole (text symbols of vmlinux and of every module,
 * including pseudo-modules such as [bpf]); every symbol of any type bounds
 * the size of the text symbol before it, so a function ends where the next
 * symbol of its region starts. Only the symbols that recorded kernel stacks
 * hit are written, each once, before the STACK that needs them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include "record/buildid.h"
#include "record/ksyms.h"
#include "util/array.h"
#include "util/ranges.h"

#define KSYM_GAP_MAX (1u << 20)     /* larger distances are not one function */
#define KSYM_LAST_SIZE 4096u        /* last symbol of a region of unknown end */
#define KSYM_MAX_MODULES 65535u
#define KSYM_MAX_NAME 1024u
#define KSYM_RELOAD_GAP_NS 1000000000ull /* at most one reread a second */
#define KSYM_MAX_RELOADS 16u             /* ~80 ms each on a 120k-symbol kernel */
#define KSYM_MAX_MISSES 4096u

struct ksym {
	uint64_t addr;
	uint32_t name_off;
	uint32_t size;
	uint16_t mod;   /* 0 = vmlinux, else index into mods */
	uint8_t text;
	uint8_t rank;   /* preference among aliases: lower wins */
	uint32_t seq;   /* file order, the last tie-breaker */
};

_Static_assert(offsetof(struct ksym, addr) == 0, "ranges__after() reads addr first");

struct kmod_info {
	uint64_t base;
	uint32_t size;
	uint32_t name_off;
};

#define KSYM_MAX_OWN 32

struct ksyms {
	struct ksym *syms;
	size_t nr, cap;
	char *pool;              /* NUL-terminated names */
	size_t pool_len, pool_cap;
	uint32_t *mods;          /* pool offsets of "[mod]" names; [0] unused */
	size_t nr_mods, mods_cap;
	struct kmod_info *kmods; /* /proc/modules */
	size_t nr_kmods, kmods_cap;
	uint64_t *written;       /* bitmap over syms[] */
	uint64_t stext;
	/* start and end of .sched.text, .spinlock.text, .irqentry.text and
	 * .softirqentry.text (enum text_mark) */
	uint64_t text_marks[8];
	struct ksyms_orc orc;    /* the kernel's ORC tables */
	/* the recorder's own programs (ksyms__add_prog()), which kallsyms,
	 * read while they were loaded, may not list */
	struct own_sym {
		uint64_t addr;
		uint32_t size;
		bool written;
		char name[48];
	} own[KSYM_MAX_OWN];
	unsigned nr_own;
	struct ksyms_reload {
		char *kallsyms, *modules;
		uint64_t last_ns;    /* CLOCK_MONOTONIC of the last (re)read */
		unsigned count;
		uint64_t *misses;    /* sorted addresses unknown after a reread */
		size_t nr_misses;
	} rl;
};

static int pool_add(struct ksyms *ks, const char *s, size_t len, uint32_t *off)
{
	int err;

	/* names are found by 32-bit offsets */
	if (ks->pool_len + len + 1 > UINT32_MAX)
		return -E2BIG;
	err = ARRAY_RESERVE(ks->pool, ks->pool_cap, ks->pool_len + len + 1);
	if (err)
		return err;
	memcpy(ks->pool + ks->pool_len, s, len);
	ks->pool[ks->pool_len + len] = '\0';
	*off = (uint32_t)ks->pool_len;
	ks->pool_len += len + 1;
	return 0;
}

/* Index of module name s (added when new); consecutive lines share one. */
static int mod_index(struct ksyms *ks, const char *s, size_t len, uint16_t *idx)
{
	size_t i;
	uint32_t off;
	int err;

	for (i = ks->nr_mods; i-- > 1;) {
		const char *n = ks->pool + ks->mods[i];

		if (strlen(n) == len && memcmp(n, s, len) == 0) {
			*idx = (uint16_t)i;
			return 0;
		}
	}
	if (ks->nr_mods == 0)
		ks->nr_mods = 1;
	if (ks->nr_mods > KSYM_MAX_MODULES)
		return -E2BIG;
	err = ARRAY_RESERVE(ks->mods, ks->mods_cap, ks->nr_mods + 1) ?:
	      pool_add(ks, s, len, &off);
	if (err)
		return err;
	ks->mods[ks->nr_mods] = off;
	*idx = (uint16_t)ks->nr_mods++;
	return 0;
}

static uint8_t sym_rank(char type, const char *name)
{
	uint8_t r;

	switch (type) {
	case 'T': r = 0; break;
	case 't': r = 2; break;
	case 'W': r = 4; break;
	case 'w': r = 6; break;
	default: return 255;
	}
	/* "__foo" and "_foo" are usually aliases of "foo" */
	return (uint8_t)(r + (name[0] == '_'));
}

static struct ksym *sym_slot(struct ksyms *ks)
{
	if (ARRAY_RESERVE(ks->syms, ks->cap, ks->nr + 1))
		return NULL;
	return &ks->syms[ks->nr];
}

enum text_mark {
	SCHED_START, SCHED_END, LOCK_START, LOCK_END, IRQ_START, IRQ_END, SOFTIRQ_START,
	SOFTIRQ_END, NR_MARKS,
};

/* The kernel's markers of the code a wait's site skips (FORMAT.md §4.7)
 * and of interrupt entry (ksyms__irq_frames()). */
static void note_text_mark(struct ksyms *ks, const char *name, uint64_t addr)
{
	static const char *const marks[NR_MARKS] = {
		"__sched_text_start", "__sched_text_end", "__lock_text_start", "__lock_text_end",
		"__irqentry_text_start", "__irqentry_text_end", "__softirqentry_text_start",
		"__softirqentry_text_end",
	};
	int i;

	for (i = 0; i < NR_MARKS; i++)
		if (!strcmp(name, marks[i]))
			ks->text_marks[i] = addr;
}

/* Where the kernel's ORC tables are (data symbols, kallsyms lists them
 * with CONFIG_KALLSYMS_ALL) and the core text they cover. */
static void note_orc(struct ksyms_orc *o, const char *name, uint64_t addr)
{
	if (!strcmp(name, "__start_orc_unwind_ip"))
		o->ip_start = addr;
	else if (!strcmp(name, "__stop_orc_unwind_ip"))
		o->ip_stop = addr;
	else if (!strcmp(name, "__start_orc_unwind"))
		o->tab = addr;
	else if (!strcmp(name, "_stext"))
		o->text_lo = addr;
	else if (!strcmp(name, "_etext"))
		o->text_hi = addr;
}

int ksyms__orc(const struct ksyms *ks, struct ksyms_orc *out)
{
	const struct ksyms_orc *o = &ks->orc;

	if (!o->ip_start || o->ip_stop <= o->ip_start || !o->tab || !o->text_lo ||
	    o->text_hi <= o->text_lo)
		return -ENOENT;
	*out = *o;
	return 0;
}

static bool marked(const struct ksyms *ks, uint64_t ip, enum text_mark start)
{
	return ks->text_marks[start] && ip >= ks->text_marks[start] &&
	       ip < ks->text_marks[start + 1];
}

/* A softirq's own loop: .softirqentry.text held it up to 6.7 (__do_softirq),
 * later kernels run it from handle_softirqs(), outside that section. */
static bool softirq_entry(const struct ksyms *ks, uint64_t ip)
{
	const char *name;

	if (marked(ks, ip, SOFTIRQ_START))
		return true;
	name = ksyms__name(ks, ip, NULL);
	return name && (!strcmp(name, "handle_softirqs") || !strcmp(name, "__do_softirq"));
}

int ksyms__irq_frames(const struct ksyms *ks, const uint64_t *ips, int n, bool *softirq)
{
	int i;

	for (i = 0; i < n; i++) {
		*softirq = softirq_entry(ks, ips[i]);
		if (*softirq || marked(ks, ips[i], IRQ_START))
			return i + 1;
	}
	return 0;
}

/* One kallsyms line: "ADDR TYPE NAME[\t[MODULE]]\n". */
static int parse_line(struct ksyms *ks, char *line)
{
	char *end, *name, *mod;
	struct ksym *s;
	size_t nlen;
	int err;

	s = sym_slot(ks);
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0; /* malformed: skip */
	name = end + 3;
	nlen = strcspn(name, "\t\n");
	if (nlen == 0 || nlen > KSYM_MAX_NAME)
		return 0;
	mod = name[nlen] == '\t' ? name + nlen + 1 : NULL;
	name[nlen] = '\0';
	s->rank = sym_rank(end[1], name);
	s->text = s->rank != 255;
	if (s->text && strcmp(name, "_stext") == 0 && !mod)
		ks->stext = s->addr;
	if (s->text && !mod)
		note_text_mark(ks, name, s->addr);
	if (!mod)
		note_orc(&ks->orc, name, s->addr);
	if (mod && mod[0] == '[') {
		size_t mlen = strcspn(mod + 1, "]\n");

		err = mod_index(ks, mod + 1, mlen, &s->mod);
		if (err)
			return err;
	}
	err = s->text ? pool_add(ks, name, nlen, &s->name_off) : 0;
	if (err)
		return err;
	s->seq = (uint32_t)ks->nr++;
	return 0;
}

static int read_kallsyms(struct ksyms *ks, const char *path)
{
	size_t len = 0;
	char *line = NULL;
	int err = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && getline(&line, &len, f) > 0)
		err = parse_line(ks, line);
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	return err;
}

/* /proc/modules: "NAME SIZE REFS DEPS STATE ADDR ...". Missing file (no
 * module support) means no modules. */
static int read_modules(struct ksyms *ks, const char *path)
{
	unsigned long long base;
	char name[128], *line = NULL;
	size_t len = 0;
	unsigned size;
	int err = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!err && getline(&line, &len, f) > 0) {
		struct kmod_info *k;

		if (sscanf(line, "%127s %u %*s %*s %*s %llx", name, &size, &base) != 3)
			continue;
		err = ARRAY_RESERVE(ks->kmods, ks->kmods_cap, ks->nr_kmods + 1);
		if (err)
			break;
		k = &ks->kmods[ks->nr_kmods];
		k->base = base;
		k->size = size;
		err = pool_add(ks, name, strlen(name), &k->name_off);
		if (!err)
			ks->nr_kmods++;
	}
	free(line);
	fclose(f);
	return err;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* End of the module holding s when /proc/modules knows it, else 0. */
static uint64_t region_end(const struct ksyms *ks, const struct ksym *s)
{
	const char *mod;
	size_t i;

	if (s->mod == 0)
		return 0;
	mod = ks->pool + ks->mods[s->mod];
	for (i = 0; i < ks->nr_kmods; i++) {
		const struct kmod_info *k = &ks->kmods[i];

		if (strcmp(ks->pool + k->name_off, mod) == 0 &&
		    s->addr >= k->base && s->addr < k->base + k->size)
			return k->base + k->size;
	}
	return 0;
}

static uint32_t sym_size(const struct ksyms *ks, size_t i)
{
	const struct ksym *s = &ks->syms[i];
	uint64_t end;
	size_t j;

	for (j = i + 1; j < ks->nr && ks->syms[j].addr == s->addr; j++)
		;
	if (j < ks->nr && ks->syms[j].mod == s->mod &&
	    ks->syms[j].addr - s->addr <= KSYM_GAP_MAX)
		return (uint32_t)(ks->syms[j].addr - s->addr);
	end = region_end(ks, s);
	if (end > s->addr && end - s->addr <= KSYM_GAP_MAX)
		return (uint32_t)(end - s->addr);
	return KSYM_LAST_SIZE;
}

/* Sort, size, then keep one text symbol per address (the best alias). */
static void finish_table(struct ksyms *ks)
{
	size_t i, n = 0;

	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_sym);
	for (i = 0; i < ks->nr; i++)
		ks->syms[i].size = sym_size(ks, i);
	for (i = 0; i < ks->nr; i++) {
		const struct ksym *s = &ks->syms[i];

		if (!s->text || (n && ks->syms[n - 1].addr == s->addr))
			continue;
		ks->syms[n++] = *s;
	}
	ks->nr = n;
	/* most of a real table is text: give back what the data symbols took */
	if (n && n < ks->cap) {
		struct ksym *shrunk = realloc(ks->syms, n * sizeof(*shrunk));

		if (shrunk) {
			ks->syms = shrunk;
			ks->cap = n;
		}
	}
}

static bool all_zero(const struct ksyms *ks)
{
	return ks->nr == 0 || ks->syms[ks->nr - 1].addr == 0;
}

static void free_table(struct ksyms *ks)
{
	free(ks->syms);
	free(ks->pool);
	free(ks->mods);
	free(ks->kmods);
	free(ks->written);
}

/* Read and index kallsyms and modules into ks's table fields. */
static int load_table(struct ksyms *ks, const char *kallsyms, const char *modules)
{
	int err;

	err = read_kallsyms(ks, kallsyms);
	if (!err)
		err = read_modules(ks, modules);
	if (err)
		return err;
	finish_table(ks);
	if (all_zero(ks))
		return -EPERM;
	ks->written = calloc((ks->nr + 63) / 64, sizeof(uint64_t));
	return ks->written ? 0 : -ENOMEM;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ksyms__load_files(const char *kallsyms, const char *modules, struct ksyms **out)
{
	struct ksyms *ks;
	int err;

	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	err = load_table(ks, kallsyms, modules);
	if (!err) {
		ks->rl.kallsyms = strdup(kallsyms);
		ks->rl.modules = strdup(modules);
		if (!ks->rl.kallsyms || !ks->rl.modules)
			err = -ENOMEM;
	}
	if (err) {
		ksyms__free(ks);
		return err;
	}
	*out = ks;
	return 0;
}

int ksyms__load(struct ksyms **out)
{
	return ksyms__load_files("/proc/kallsyms", "/proc/modules", out);
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free_table(ks);
	free(ks->rl.kallsyms);
	free(ks->rl.modules);
	free(ks->rl.misses);
	free(ks);
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks->nr;
}

unsigned ksyms__reloads(const struct ksyms *ks)
{
	return ks->rl.count;
}

/* Index of the symbol containing addr, or -1. */
static ssize_t find_sym(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = ranges__after(ks->syms, ks->nr, sizeof(*ks->syms), addr);

	if (lo == 0 || addr - ks->syms[lo - 1].addr >= ks->syms[lo - 1].size)
		return -1;
	return (ssize_t)(lo - 1);
}

const char *ksyms__name(const struct ksyms *ks, uint64_t addr, uint64_t *sym_start)
{
	ssize_t i = find_sym(ks, addr);

	if (i < 0)
		return NULL;
	if (sym_start)
		*sym_start = ks->syms[i].addr;
	return ks->pool + ks->syms[i].name_off;
}

static int write_sym(struct ksyms *ks, size_t i, struct cap_writer *w, struct intern *in)
{
	const struct ksym *s = &ks->syms[i];
	const char *name = ks->pool + s->name_off;
	struct cap_ksym rec = {
		.addr = s->addr,
		.size = s->size,
		.name_len = (uint32_t)strlen(name),
	};
	int err;

	if (s->mod) {
		const char *mod = ks->pool + ks->mods[s->mod];

		err = intern__string(in, mod, strlen(mod), &rec.module_id);
		if (err < 0)
			return err;
	}
	err = cap_writer__append(w, CAP_REC_KSYM, &rec, sizeof(rec), name, rec.name_len);
	if (err < 0)
		return err;
	ks->written[i / 64] |= 1ull << (i % 64);
	return 1;
}

void ksyms__new_file(struct ksyms *ks)
{
	unsigned i;

	memset(ks->written, 0, (ks->nr + 63) / 64 * sizeof(uint64_t));
	for (i = 0; i < ks->nr_own; i++)
		ks->own[i].written = false;
}

int ksyms__add_prog(struct ksyms *ks, int prog_fd)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), flen = 0;
	uint64_t addr = 0;
	struct own_sym *o;
	int i;

	if (ks->nr_own == KSYM_MAX_OWN)
		return -ENOSPC;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	if (!info.nr_jited_ksyms || !info.nr_jited_func_lens)
		return 0; /* not JITed: no address of its own */
	/* the main function, the first of each array */
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uintptr_t)&addr;
	info.nr_jited_func_lens = 1;
	info.jited_func_lens = (uintptr_t)&flen;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	o = &ks->own[ks->nr_own++];
	o->addr = addr;
	o->size = flen;
	o->written = false;
	/* as kallsyms names it: bpf_prog_TAG_NAME, module bpf */
	len = snprintf(o->name, sizeof(o->name), "bpf_prog_");
	for (i = 0; i < BPF_TAG_SIZE; i++)
		len += snprintf(o->name + len, sizeof(o->name) - len, "%02x", info.tag[i]);
	snprintf(o->name + len, sizeof(o->name) - len, "_%s", info.name);
	return 0;
}

static int find_own(const struct ksyms *ks, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < ks->nr_own; i++)
		if (addr - ks->own[i].addr < ks->own[i].size)
			return i;
	return -1;
}

static int write_own(struct ksyms *ks, int i, struct cap_writer *w, struct intern *in)
{
	struct own_sym *o = &ks->own[i];
	struct cap_ksym rec = {
		.addr = o->addr,
		.size = o->size,
		.name_len = (uint32_t)strlen(o->name),
	};
	int err;

	if (o->written)
		return 0;
	err = intern__string(in, "bpf", 3, &rec.module_id);
	if (err < 0)
		return err;
	err = cap_writer__append(w, CAP_REC_KSYM, &rec, sizeof(rec), o->name, rec.name_len);
	if (err < 0)
		return err;
	o->written = true;
	return 1;
}

static bool is_written(const struct ksyms *ks, size_t i)
{
	return ks->written[i / 64] & (1ull << (i % 64));
}

/* Symbols written from the old table stay written in the new one when
 * both address and name match (a BPF program replaced at the same address
 * is a new symbol). Both tables are sorted by address. */
static void carry_written(const struct ksyms *old, struct ksyms *new)
{
	size_t i = 0, j = 0;

	while (i < old->nr && j < new->nr) {
		const struct ksym *a = &old->syms[i], *b = &new->syms[j];

		if (a->addr < b->addr) {
			i++;
			continue;
		}
		if (a->addr > b->addr) {
			j++;
			continue;
		}
		if (is_written(old, i) &&
		    strcmp(old->pool + a->name_off, new->pool + b->name_off) == 0)
			new->written[j / 64] |= 1ull << (j % 64);
		i++;
		j++;
	}
}

static ssize_t find_miss(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->rl.nr_misses;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->rl.misses[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ks->rl.nr_misses && ks->rl.misses[lo] == addr ? -1 : (ssize_t)lo;
}

/* Remember addr as unknown even after a reread (not worth another one). */
static void add_miss(struct ksyms *ks, uint64_t addr)
{
	ssize_t at = find_miss(ks, addr);

	if (at < 0)
		return;
	if (!ks->rl.misses) {
		ks->rl.misses = malloc(KSYM_MAX_MISSES * sizeof(uint64_t));
		if (!ks->rl.misses)
			return;
	}
	if (ks->rl.nr_misses == KSYM_MAX_MISSES)
		return;
	memmove(&ks->rl.misses[at + 1], &ks->rl.misses[at],
		(ks->rl.nr_misses - (size_t)at) * sizeof(uint64_t));
	ks->rl.misses[at] = addr;
	ks->rl.nr_misses++;
}

static int write_kmod(const struct ksyms *ks, const struct kmod_info *k,
		      struct cap_writer *w, struct intern *in)
{
	const char *name = ks->pool + k->name_off;
	struct cap_kmod rec = { .base = k->base, .size = k->size };
	char path[256];
	int err;

	snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id", name);
	/* absent when the module was built without build IDs: size stays 0 */
	buildid__read_notes_file(path, rec.build_id, &rec.build_id_size);
	err = intern__string(in, name, strlen(name), &rec.name_id);
	if (err < 0)
		return err;
	return cap_writer__append(w, CAP_REC_KMOD, &rec, sizeof(rec), NULL, 0);
}

/* KMOD records for modules the reread found and the old table lacked. */
static int write_new_kmods(const struct ksyms *old, const struct ksyms *new,
			   struct cap_writer *w, struct intern *in)
{
	size_t i, j;
	int err;

	for (j = 0; j < new->nr_kmods; j++) {
		const struct kmod_info *k = &new->kmods[j];

		for (i = 0; i < old->nr_kmods; i++) {
			if (old->kmods[i].base == k->base &&
			    !strcmp(old->pool + old->kmods[i].name_off, new->pool + k->name_off))
				break;
		}
		if (i < old->nr_kmods)
			continue;
		err = write_kmod(new, k, w, in);
		if (err < 0)
			return err;
	}
	return 0;
}

/*
 * An address no symbol covers may belong to a BPF program or module loaded
 * after kallsyms was read (the recorder's own programs among them): reread
 * it, at most once a second and KSYM_MAX_RELOADS times in all, and never
 * again for an address a reread did not explain. Modules loaded since get
 * their KMOD records. Returns 1 when addr is now known, 0, or <0 (writer).
 */
static int reload_for(struct ksyms *ks, uint64_t addr, struct cap_writer *w,
		      struct intern *in)
{
	struct ksyms fresh = {};
	uint64_t now = mono_ns();
	int err;

	if (ks->rl.count >= KSYM_MAX_RELOADS || find_miss(ks, addr) < 0 ||
	    (ks->rl.last_ns && now - ks->rl.last_ns < KSYM_RELOAD_GAP_NS))
		return 0;
	ks->rl.last_ns = now;
	ks->rl.count++;
	if (load_table(&fresh, ks->rl.kallsyms, ks->rl.modules)) {
		free_table(&fresh);
		return 0; /* unreadable now: keep the table we have */
	}
	err = write_new_kmods(ks, &fresh, w, in);
	if (err < 0) {
		free_table(&fresh);
		return err;
	}
	carry_written(ks, &fresh);
	fresh.rl = ks->rl;
	memcpy(fresh.own, ks->own, sizeof(fresh.own));
	fresh.nr_own = ks->nr_own;
	free_table(ks);
	*ks = fresh;
	if (find_sym(ks, addr) >= 0)
		return 1;
	add_miss(ks, addr);
	return 0;
}

static int write_addr(struct ksyms *ks, uint64_t addr, struct cap_writer *w,
		      struct intern *in)
{
	ssize_t i = find_sym(ks, addr);
	int err, own = i < 0 ? find_own(ks, addr) : -1;

	if (own >= 0)
		return write_own(ks, own, w, in);
	if (i < 0) {
		err = reload_for(ks, addr, w, in);
		if (err < 0)
			return err;
		if (err)
			i = find_sym(ks, addr);
	}
	if (i < 0 || is_written(ks, (size_t)i))
		return 0;
	return write_sym(ks, (size_t)i, w, in);
}

/*
 * Stack entries above the first are return addresses: the call may be the
 * last instruction of its function (a noreturn call), so the symbol of
 * ip - 1 is written too, whichever way report looks it up.
 */
int ksyms__write_for_ips(struct ksyms *ks, struct cap_writer *w, struct intern *in,
			 const uint64_t *ips, uint16_t nr)
{
	int n = 0, err;
	uint16_t i;

	for (i = 0; i < nr; i++) {
		err = write_addr(ks, ips[i], w, in);
		if (err < 0)
			return err;
		n += err;
		if (!ips[i])
			continue;
		err = write_addr(ks, ips[i] - 1, w, in);
		if (err < 0)
			return err;
		n += err;
	}
	return n;
}

int ksyms__kstack_hook(void *ctx, const uint64_t *ips, uint16_t nr)
{
	struct ksyms_sink *sink = ctx;
	int err;

	err = ksyms__write_for_ips(sink->ks, sink->w, sink->in, ips, nr);
	return err < 0 ? err : 0;
}


int ksyms__write_kernel(struct ksyms *ks, struct cap_writer *w, struct intern *in)
{
	struct cap_kernel rec = {
		.stext = ks->stext,
		.sched_text_start = ks->text_marks[SCHED_START],
		.sched_text_end = ks->text_marks[SCHED_END],
		.lock_text_start = ks->text_marks[LOCK_START],
		.lock_text_end = ks->text_marks[LOCK_END],
	};
	size_t i;
	int err;

	/* unreadable notes leave build_id_size 0: report then trusts stext */
	buildid__read_notes_file("/sys/kernel/notes", rec.build_id, &rec.build_id_size);
	err = cap_writer__append(w, CAP_REC_KERNEL, &rec, sizeof(rec), NULL, 0);
	for (i = 0; err >= 0 && i < ks->nr_kmods; i++)
		err = write_kmod(ks, &ks->kmods[i], w, in);
	return err < 0 ? err : 0;
}

uint64_t ksyms__stext(const struct ksyms *ks)
{
	return ks->stext;
}
