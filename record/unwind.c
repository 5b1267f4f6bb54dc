// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Tables for the in-kernel DWARF unwinder (record/unwind.h).
 *
 * Files are known by (device, inode, size, mtime) (record/fileid.h), so a
 * library mapped by a thousand processes is read once and its rows shared.
 * Rows are append only: a file's rows stay valid as long as the recording,
 * which bounds them by rows_max; a file that does not fit is counted and
 * its frames are followed with frame pointers. They go to the kernel in
 * chunks (bpf/stkrec.h), each created when the rows first reach it and
 * written through an mmap() held only while writing: the kernel holds what
 * the files loaded need, rounded up to 1 MiB, and none of it stays mapped.
 *
 * A process's entry in `umaps` is rewritten whole at each change (the
 * kernel swaps hash values atomically, so the unwinder never sees half of
 * one), with a generation no other write has had: the kernel keeps a
 * thread's walk while its entry's generation is the same. User space keeps
 * no copy of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>

#include "bpf/stkrec.h"
#include "cfi/cfi.h"
#include "record/fileid.h"
#include "record/unwind.h"
#include "util/hashtab.h"

#define MAX_SEGS 8

/* One executable PT_LOAD: file offsets [off, off + filesz) at vaddr. */
struct seg {
	uint64_t off, filesz, vaddr;
};

struct ufile {
	struct file_id key;     /* first: file_id__eq() compares it */
	uint32_t first, nr;     /* rows; nr 0: none (frame pointers) */
	struct seg segs[MAX_SEGS];
	int nr_segs;
};

#define CHUNK_BYTES (STKREC_CFI_CHUNK_ROWS * sizeof(struct stkrec_cfi_row))

struct unwind {
	int rows_fd, umaps_fd, ufiles_fd;
	int *chunks;            /* fds of the chunks created, in order */
	uint32_t nr_chunks, max_chunks;
	struct hashtab files; /* of struct ufile */
	struct stkrec_umaps scratch;
	uint32_t gen;           /* umaps writes so far: each entry's gen */
	struct unwind_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int unwind__new(const struct unwind_maps *maps, struct unwind **out)
{
	struct unwind *u;

	*out = NULL;
	if (maps->rows_fd < 0 || maps->umaps_fd < 0 || maps->ufiles_fd < 0 || !maps->rows_max)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->rows_fd = maps->rows_fd;
	u->umaps_fd = maps->umaps_fd;
	u->ufiles_fd = maps->ufiles_fd;
	u->max_chunks = UNWIND_CHUNKS(maps->rows_max);
	u->chunks = calloc(u->max_chunks, sizeof(*u->chunks));
	if (!u->chunks) {
		free(u);
		return -ENOMEM;
	}
	u->st.rows_max = maps->rows_max;
	hashtab__init(&u->files, sizeof(struct ufile));
	elf_version(EV_CURRENT);
	*out = u;
	return 0;
}

void unwind__free(struct unwind *u)
{
	if (!u)
		return;
	while (u->nr_chunks)
		close(u->chunks[--u->nr_chunks]);
	free(u->chunks);
	hashtab__free(&u->files);
	free(u);
}

void unwind__stats(const struct unwind *u, struct unwind_stats *st)
{
	*st = u->st;
}

/* The executable PT_LOAD segments: how file offsets become addresses. */
static int read_segs(int fd, struct ufile *f)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t i, n;
	GElf_Phdr ph;
	int err = 0;

	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		err = -ENOEXEC;
		goto out;
	}
	for (i = 0; i < n && f->nr_segs < MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		f->segs[f->nr_segs++] = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
out:
	elf_end(elf);
	return err;
}

/*
 * The file in `ufiles`, for frames the kernel's mappings find before the
 * process's table has them. The kernel knows a file by its super block's
 * dev_t (MKDEV: major << 20 | minor) and inode. One offset-to-address
 * adjustment per file: files whose executable segments disagree on it are
 * left out (their frames wait for the process's table).
 */
static void publish_file(struct unwind *u, const struct ufile *f)
{
	struct stkrec_ufile_key k = {
		.dev = ((uint64_t)major(f->key.dev) << 20) | minor(f->key.dev),
		.ino = f->key.ino,
	};
	struct stkrec_ufile v = { .first = f->first, .nr_rows = f->nr };
	int i;

	v.adj = f->segs[0].vaddr - f->segs[0].off;
	for (i = 1; i < f->nr_segs; i++)
		if (f->segs[i].vaddr - f->segs[i].off != v.adj)
			return;
	bpf_map_update_elem(u->ufiles_fd, &k, &v, BPF_ANY);
}

/* The next chunk, created and put in cfi_rows: 0 or -errno. */
static int chunk_add(struct unwind *u)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	uint32_t c = u->nr_chunks;
	int fd;

	if (c == u->max_chunks)
		return -ENOSPC;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "stkrec_rows", sizeof(__u32),
			    sizeof(struct stkrec_cfi_row), STKREC_CFI_CHUNK_ROWS, &o);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(u->rows_fd, &c, &fd, BPF_ANY)) {
		int err = -errno;

		close(fd);
		return err;
	}
	u->chunks[u->nr_chunks++] = fd;
	return 0;
}

/* nr rows from row index first on, across chunks as they fall. */
static int rows_write(struct unwind *u, uint64_t first, const struct stkrec_cfi_row *rows,
		      size_t nr)
{
	while (nr) {
		uint32_t c = first / STKREC_CFI_CHUNK_ROWS, k = first % STKREC_CFI_CHUNK_ROWS;
		size_t n = STKREC_CFI_CHUNK_ROWS - k;
		struct stkrec_cfi_row *p;
		int err;

		while (c >= u->nr_chunks) {
			err = chunk_add(u);
			if (err)
				return err;
		}
		p = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, u->chunks[c], 0);
		if (p == MAP_FAILED)
			return -errno;
		n = n < nr ? n : nr;
		memcpy(p + k, rows, n * sizeof(*rows));
		munmap(p, CHUNK_BYTES);
		first += n;
		rows += n;
		nr -= n;
	}
	return 0;
}

/* The file's rows into cfi_rows (nr 0 when it has none or they do not fit). */
static void load_rows(struct unwind *u, int fd, struct ufile *f)
{
	struct stkrec_cfi_row *rows = NULL;
	uint64_t t0 = mono_ns();
	size_t nr = 0;
	int err;

	err = cfi__load(fd, &rows, &nr);
	u->st.load_ns += mono_ns() - t0;
	if (err || !nr || nr > UINT32_MAX) {
		u->st.files_failed++;
		free(rows);
		return;
	}
	if (nr > u->st.rows_max - u->st.rows || rows_write(u, u->st.rows, rows, nr)) {
		u->st.full++;
		free(rows);
		return;
	}
	f->first = (uint32_t)u->st.rows;
	f->nr = (uint32_t)nr;
	u->st.rows += nr;
	u->st.files++;
	free(rows);
	publish_file(u, f);
}

/*
 * The file open at fd, its rows loaded on first sight. The entry is valid
 * until the next file_get() (the next insertion): callers use it at once.
 * Added before its rows are loaded, so that rows never go to cfi_rows for
 * a file the table could not keep.
 */
static struct ufile *file_get(struct unwind *u, int fd)
{
	struct file_id k;
	struct ufile *f;
	struct stat st;
	void *slot;
	int ret;

	if (fstat(fd, &st))
		return NULL;
	file_id__from_stat(&k, &st);
	ret = hashtab__upsert(&u->files, file_id__hash(&k), &k, file_id__eq, &slot);
	if (ret < 0)
		return NULL;
	f = slot;
	if (!ret)
		return f;
	f->key = k;
	if (read_segs(fd, f) == 0 && f->nr_segs)
		load_rows(u, fd, f);
	else
		u->st.files_failed++;
	return f;
}

/* address - bias = ELF virtual address, from the segment mapped at pgoff. */
static bool map_bias(const struct ufile *f, const struct cap_mapping *m, __u64 *bias)
{
	int i;

	for (i = 0; i < f->nr_segs; i++) {
		const struct seg *s = &f->segs[i];

		if (m->pgoff >= (s->off & ~4095ull) && m->pgoff < s->off + s->filesz) {
			*bias = m->start - (s->vaddr - s->off + m->pgoff);
			return true;
		}
	}
	return false;
}

/* The process's entry into u->scratch (empty when it has none). */
static void umaps_read(struct unwind *u, uint32_t pid)
{
	if (bpf_map_lookup_elem(u->umaps_fd, &pid, &u->scratch))
		memset(&u->scratch, 0, sizeof(u->scratch.nr) + sizeof(u->scratch.gen));
	if (u->scratch.nr > STKREC_MAX_UMAPS)
		u->scratch.nr = 0;
}

/* Insert e into the sorted scratch entry, dropping what it overlaps. */
static bool umaps_insert(struct stkrec_umaps *ms, const struct stkrec_umap *e)
{
	uint32_t i, j = 0;

	for (i = 0; i < ms->nr; i++) {
		if (ms->m[i].end <= e->start || ms->m[i].start >= e->end)
			ms->m[j++] = ms->m[i];
	}
	ms->nr = j;
	if (ms->nr == STKREC_MAX_UMAPS)
		return false;
	for (i = ms->nr; i > 0 && ms->m[i - 1].start > e->start; i--)
		ms->m[i] = ms->m[i - 1];
	ms->m[i] = *e;
	ms->nr++;
	return true;
}

int unwind__map(struct unwind *u, uint32_t pid, const struct cap_mapping *m, int fd)
{
	struct stkrec_umap e = { .start = m->start, .end = m->end };
	const struct ufile *f;

	if (fd < 0)
		return 0;
	f = file_get(u, fd);
	if (!f)
		return -ENOMEM;
	if (!map_bias(f, m, &e.bias))
		return 0;
	e.first = f->first;
	e.nr_rows = f->nr;
	umaps_read(u, pid);
	if (!umaps_insert(&u->scratch, &e)) {
		u->st.maps_dropped++;
		return 0;
	}
	u->scratch.gen = ++u->gen;
	if (bpf_map_update_elem(u->umaps_fd, &pid, &u->scratch, BPF_ANY))
		return -errno;
	return 0;
}

int unwind__preload(struct unwind *u, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (!file_get(u, fd))
		err = -ENOMEM;
	close(fd);
	return err;
}

void unwind__forget(struct unwind *u, uint32_t pid)
{
	bpf_map_delete_elem(u->umaps_fd, &pid);
}

int unwind__fork(struct unwind *u, uint32_t parent, uint32_t child)
{
	if (bpf_map_lookup_elem(u->umaps_fd, &parent, &u->scratch))
		return 0;
	u->scratch.gen = ++u->gen;
	if (bpf_map_update_elem(u->umaps_fd, &child, &u->scratch, BPF_ANY))
		return -errno;
	return 0;
}
