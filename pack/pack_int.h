/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to the packer: pack_scan.c (reading a capture), pack.c (hits,
 * names, records) and repack.c (stkrec pack's rewrite). */
#ifndef STKREC_PACK_PACK_INT_H
#define STKREC_PACK_PACK_INT_H

#include "pack/pack.h"
#include "util/hashtab.h"

/* A STRING or a user STACK of the capture: bytes or u64 slots in an arena. */
struct pk_def {
	uint32_t id;
	uint32_t len;  /* bytes, or frames */
	size_t off;
};

/* An executable mapping; a process's are sorted by start, with the
 * running maximum of their ends (several may hold one address over time). */
struct pk_map {
	uint64_t start, end, pgoff;
	uint64_t maxend;
	uint32_t pid;
	uint32_t path_id;
	uint8_t build_id_size;
	bool anon;
	uint8_t build_id[20];
};

/* A process's run of mappings, and its fork parent. */
struct pk_proc {
	uint32_t pid;
	uint32_t ppid;  /* 0: none seen */
	uint32_t first, n;
};

/* A binary hit: by build ID, or by path without one. */
struct pk_obj {
	uint32_t path_id;
	size_t path_off;        /* its path in the string arena */
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint32_t id;            /* PACK_OBJECT id once written, else 0 */
};

struct packer {
	struct pack_opts o;
	struct symbolizer *sym;
	struct jitmaps *jm;     /* o.jit, or our own */
	bool own_jm;
	/* the capture */
	struct hashtab strs;    /* of struct pk_def */
	char *sarena;
	size_t slen, scap;
	struct hashtab stacks;  /* of struct pk_def: user stacks */
	uint64_t *ips;
	size_t nips, ips_cap;
	struct pk_map *maps;
	size_t nmaps, maps_cap;
	struct hashtab procs;   /* of struct pk_proc */
	struct hashtab pairs;   /* of uint64_t: pid << 32 | user stack id */
	uint64_t last_pair;     /* the pair added last (0: none) */
	struct hashtab refs;    /* of uint32_t: STRING ids other records use */
	uint32_t max_string;
	bool has_pack;
	int err;                /* pack__feed()'s first failure */
	/* what the stacks hit */
	struct pk_obj *objs;
	size_t nobjs, objs_cap;
	struct hashtab obj_ids; /* of struct pk_objkey */
	struct hashtab hits;    /* of struct pk_hit: (object, lookup offset) */
	struct hashtab jhits;   /* of struct pk_hit: (pid, lookup address) */
	struct cap_pack_info info;
};

/* (object or pid, offset or address) */
struct pk_hit {
	uint64_t off;
	uint32_t who;
};

/* pack_scan.c */
int pack_scan__file(struct packer *p, const char *path);
/* Once every record is in: each process's mappings indexed. */
int pack_scan__index(struct packer *p);
void pack_scan__usage(const struct packer *p, struct pack_usage *u);
/* The string of id (NUL-terminated, in the arena), or NULL. */
const char *pack_scan__string(const struct packer *p, uint32_t id);
const struct pk_proc *pack_scan__proc(const struct packer *p, uint32_t pid);
/* User stack id: frames and their count, or -1. */
int pack_scan__stack(const struct packer *p, uint32_t id, const uint64_t **ips);
bool pack_scan__referenced(const struct packer *p, uint32_t string_id);
void pack_scan__free(struct packer *p);

/* Hash and equality of a pk_hit, for the tables of hits. */
uint64_t pk_hit_hash(const struct pk_hit *h);
bool pk_hit_eq(const void *ent, const void *key);

static inline bool pk_u64_eq(const void *ent, const void *key)
{
	return *(const uint64_t *)ent == *(const uint64_t *)key;
}

/* pack.c: what the scanned stacks hit, into hits and jhits. */
int pk_find_hits(struct packer *p);

/* scrub.c: stkrec scrub's changes, for repack.c's rewrite. */
struct scrub {
	uint32_t what;          /* CAP_FEAT_SCRUBBED[_PATHS] */
	bool has_kernel;        /* the KERNEL record was met: kbase is known */
	uint64_t kbase;         /* its _stext: kernel addresses become offsets */
	uint64_t ips[CAP_MAX_STACK_DEPTH];
	char str[CAP_MAX_STRING];
};
/* The header as a scrubbed capture has it. */
void scrub__header(uint32_t what, struct cap_header *h);
/* Record r, decoded, changed in place (its ips and tail may then point
 * into s): 0, or -ENOEXEC for kernel addresses before the KERNEL record. */
int scrub__record(struct scrub *s, struct cap_record *r);

#endif
