// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The symbolizer: modules (recorded path + build ID) map to images (the
 * files found for one build), and every (module, file offset) is resolved
 * once and cached. See sym/sym.h for the rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwelf.h>

#include "sym/sym_int.h"
#include "util/array.h"

/* Frames kept per address: deeper inline chains are cut. */
#define SYM_MAX_FRAMES SYM_RAW_MAX_FRAMES

/* What was found for one build of one object. */
struct sym_image {
	struct elf_file *obj; /* the object itself, or NULL */
	struct elf_file *dbg; /* separate debug file, or NULL */
	struct sym_table syms;
	Dwarf *dw;
	bool dw_tried;
	struct elf_file *alt; /* dwz file of the DWARF (.gnu_debugaltlink) */
	Dwarf *alt_dw;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	uint8_t build_id_size;
};

struct sym_module {
	char *path;
	uint64_t hash;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	uint8_t build_id_size;
	struct sym_image *img; /* NULL: nothing usable was found */
	long pack;             /* its object in the symbol pack, or -1 */
	bool pack_first;       /* the pack has the DWARF the file lacks */
};

/* Module index entry: mods[] by (path, build ID). */
struct mod_slot {
	uint32_t idx;
};

/* Per-address cache entry. */
struct sym_cached {
	uint64_t offset;
	uint32_t mod;
	uint32_t first; /* index into symbolizer.frames */
	int32_t n;
};

struct symbolizer {
	struct symbolizer_opts opts;
	struct sym_locator loc;
	struct sym_demangler dem;
	struct symbolizer_stats stats;
	struct sym_module **mods;
	size_t nmods, mods_cap;
	struct hashtab mod_index; /* of struct mod_slot */
	struct sym_image **imgs;
	size_t nimgs, imgs_cap;
	char *first_mismatched;
	struct hashtab cache; /* of struct sym_cached */
	struct sym_frame *frames;
	size_t nframes, frames_cap;
	struct sym_pack pack;
	char *first_mismatched_packed;
};

static char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 1);

	if (p) {
		memcpy(p, a, la);
		memcpy(p + la, b, lb + 1);
	}
	return p;
}

/* Own copies of the paths; without debug_dir, symfs/usr/lib/debug (perf's
 * rule) or /usr/lib/debug. */
static int copy_paths(struct symbolizer *s, const struct symbolizer_opts *o)
{
	const char *symfs = o->symfs && *o->symfs ? o->symfs : NULL;

	s->opts.symfs = NULL;
	s->opts.debug_dir = NULL;
	if (symfs && !(s->opts.symfs = strdup(symfs)))
		return -ENOMEM;
	if (o->debug_dir)
		s->opts.debug_dir = strdup(o->debug_dir);
	else if (symfs)
		s->opts.debug_dir = path_join(symfs, "/usr/lib/debug");
	else
		s->opts.debug_dir = strdup("/usr/lib/debug");
	return s->opts.debug_dir ? 0 : -ENOMEM;
}

int symbolizer__new(const struct symbolizer_opts *opts, struct symbolizer **out)
{
	static const struct symbolizer_opts defaults;
	struct symbolizer *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	sym_demangler__init(&s->dem);
	hashtab__init(&s->mod_index, sizeof(struct mod_slot));
	hashtab__init(&s->cache, sizeof(struct sym_cached));
	s->opts = opts ? *opts : defaults;
	if (copy_paths(s, opts ? opts : &defaults)) {
		symbolizer__free(s);
		return -ENOMEM;
	}
	elf_version(EV_CURRENT);
	s->loc.symfs = s->opts.symfs;
	s->loc.debug_dir = s->opts.debug_dir;
	s->loc.debuginfod = s->opts.debuginfod;
	s->loc.stats = &s->stats;
	*out = s;
	return 0;
}

static void image_free(struct sym_image *img)
{
	if (img->dw)
		dwarf_end(img->dw);
	if (img->alt_dw)
		dwarf_end(img->alt_dw);
	elf_file__close(img->alt);
	sym_table__free(&img->syms);
	elf_file__close(img->obj);
	elf_file__close(img->dbg);
	free(img);
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nimgs; i++)
		image_free(s->imgs[i]);
	for (i = 0; i < s->nmods; i++) {
		free(s->mods[i]->path);
		free(s->mods[i]);
	}
	sym_locator__free(&s->loc);
	sym_demangler__free(&s->dem);
	free(s->imgs);
	free(s->mods);
	hashtab__free(&s->mod_index);
	hashtab__free(&s->cache);
	free(s->frames);
	sym_pack__free(&s->pack);
	free(s->first_mismatched);
	free(s->first_mismatched_packed);
	free((char *)s->opts.symfs);
	free((char *)s->opts.debug_dir);
	free(s);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	*out = s->stats;
	out->first_mismatched = s->first_mismatched;
	out->first_mismatched_packed = s->first_mismatched_packed;
}

/* ---- images ------------------------------------------------------------ */

static int image_symbols(struct sym_image *img)
{
	int err = 0;

	img->syms.complete = true;
	if (img->dbg && img->dbg->has_symtab) {
		err = sym_table__add_elf(&img->syms, img->dbg->elf, SHT_SYMTAB);
	} else if (img->obj && img->obj->has_symtab) {
		err = sym_table__add_elf(&img->syms, img->obj->elf, SHT_SYMTAB);
	} else if (img->obj) {
		err = sym_table__add_elf(&img->syms, img->obj->elf, SHT_DYNSYM);
		/* MiniDebugInfo adds the local functions .dynsym lacks. */
		img->syms.complete = false;
		if (!err && !elf_file__load_minidebuginfo(img->obj)) {
			err = sym_table__add_elf(&img->syms, img->obj->mini,
						 SHT_SYMTAB);
			img->syms.complete = true;
		}
	}
	return err ? err : sym_table__finalize(&img->syms);
}

static bool want_debug(const struct symbolizer *s, const struct elf_file *obj)
{
	if (!obj || !obj->has_symtab)
		return true;
	return (s->opts.inlines || s->opts.srclines) && !obj->has_dwarf;
}

/* " (deleted)" is what /proc says about a replaced file: look for the
 * path without it (the build ID check still decides). */
static char *lookup_path(const char *path)
{
	static const char del[] = " (deleted)";
	size_t n = strlen(path), d = sizeof(del) - 1;

	if (n > d && !strcmp(path + n - d, del))
		return strndup(path, n - d);
	return strdup(path);
}

static int image_load(struct symbolizer *s, const struct sym_module *m,
		      struct sym_image **out)
{
	struct sym_image *img;
	char *path = lookup_path(m->path);
	int err;

	*out = NULL;
	img = calloc(1, sizeof(*img));
	if (!img || !path) {
		free(img);
		free(path);
		return -ENOMEM;
	}
	err = locate_object(&s->loc, path, m->build_id, m->build_id_size, &img->obj);
	if (!err && want_debug(s, img->obj)) {
		/* Nothing recorded: the object found vouches for its debug file. */
		const uint8_t *id = m->build_id;
		uint8_t idn = m->build_id_size;

		if (!idn && img->obj) {
			id = img->obj->build_id;
			idn = img->obj->build_id_size;
		}
		err = locate_debug(&s->loc, path, id, idn, img->obj, &img->dbg);
	}
	free(path);
	if (!err && (img->obj || img->dbg))
		err = image_symbols(img);
	if (err || (!img->obj && !img->dbg)) {
		image_free(img);
		return err;
	}
	memcpy(img->build_id, m->build_id, m->build_id_size);
	img->build_id_size = m->build_id_size;
	*out = img;
	return 0;
}

/* Nothing usable for m although files were found: they had other build
 * IDs. Counted, and the first one kept, for the caller's warning: apart
 * when the symbol pack names m's frames instead. */
static int note_mismatch(struct symbolizer *s, const struct sym_module *m)
{
	char **first = m->pack >= 0 ? &s->first_mismatched_packed : &s->first_mismatched;

	if (m->pack >= 0)
		s->stats.modules_mismatched_packed++;
	else
		s->stats.modules_mismatched++;
	if (!*first && !(*first = strdup(m->path)))
		return -ENOMEM;
	return 0;
}

static int image_get(struct symbolizer *s, const struct sym_module *m,
		     struct sym_image **out)
{
	uint64_t refused = s->stats.buildid_mismatches;
	size_t i;
	int err;

	*out = NULL;
	for (i = 0; m->build_id_size && i < s->nimgs; i++) {
		if (s->imgs[i]->build_id_size == m->build_id_size &&
		    !memcmp(s->imgs[i]->build_id, m->build_id, m->build_id_size)) {
			*out = s->imgs[i];
			return 0;
		}
	}
	err = ARRAY_RESERVE(s->imgs, s->imgs_cap, s->nimgs + 1);
	if (!err)
		err = image_load(s, m, out);
	if (err)
		return err;
	if (!*out) {
		s->stats.modules_missing++;
		s->stats.modules_packed += m->pack >= 0;
		return s->stats.buildid_mismatches > refused ? note_mismatch(s, m) : 0;
	}
	s->imgs[s->nimgs++] = *out;
	s->stats.modules_found++;
	if ((*out)->dbg)
		s->stats.debug_files++;
	return 0;
}

/* dwz moves DIEs shared by several objects into one file that
 * .gnu_debugaltlink names. libdw finds it only under /usr/lib/debug; give it
 * the one from our debug directory or symfs, build ID checked. */
static void image_altlink(struct symbolizer *s, struct sym_image *img,
			  const char *dbg_path)
{
	const char *name;
	const void *id;
	ssize_t idn = dwelf_dwarf_gnu_debugaltlink(img->dw, &name, &id);

	if (idn <= 0 || idn > SYM_BUILD_ID_MAX)
		return;
	if (locate_altlink(&s->loc, name, id, idn, dbg_path, &img->alt) || !img->alt)
		return;
	img->alt_dw = dwarf_begin_elf(img->alt->elf, DWARF_C_READ, NULL);
	if (img->alt_dw)
		dwarf_setalt(img->dw, img->alt_dw);
}

static Dwarf *image_dwarf(struct symbolizer *s, struct sym_image *img)
{
	struct elf_file *f = NULL;

	if (img->dw_tried)
		return img->dw;
	img->dw_tried = true;
	if (img->dbg && img->dbg->has_dwarf)
		f = img->dbg;
	else if (img->obj && img->obj->has_dwarf)
		f = img->obj;
	if (f)
		img->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	if (img->dw)
		image_altlink(s, img, f->path);
	return img->dw;
}

static bool image_has_dwarf(const struct sym_image *img)
{
	return img && ((img->dbg && img->dbg->has_dwarf) || (img->obj && img->obj->has_dwarf));
}

/* ---- modules ----------------------------------------------------------- */

static uint64_t module_hash(const char *path, const uint8_t *id, uint8_t size)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *path; path++)
		h = (h ^ (uint8_t)*path) * 0x100000001b3ull;
	for (int i = 0; i < size; i++)
		h = (h ^ id[i]) * 0x100000001b3ull;
	return h ^ size;
}

static bool module_is(const struct sym_module *m, uint64_t h, const char *path,
		      const uint8_t *id, uint8_t size)
{
	return m->hash == h && m->build_id_size == size &&
	       !memcmp(m->build_id, id, size) && !strcmp(m->path, path);
}

/* What the module index compares an entry with. */
struct module_key {
	struct sym_module *const *mods;
	uint64_t hash;
	const char *path;
	const uint8_t *id;
	uint8_t size;
};

static bool module_eq(const void *ent, const void *key)
{
	const struct module_key *k = key;

	return module_is(k->mods[((const struct mod_slot *)ent)->idx], k->hash,
			 k->path, k->id, k->size);
}

static int module_add(struct symbolizer *s, uint64_t h, const char *path,
		      const uint8_t *id, uint8_t size, uint32_t *out)
{
	struct mod_slot slot = { .idx = s->nmods };
	struct sym_module *m;
	int err;

	if (hashtab__reserve(&s->mod_index, s->nmods + 1))
		return -ENOMEM;
	err = ARRAY_RESERVE(s->mods, s->mods_cap, s->nmods + 1);
	m = err ? NULL : calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return -ENOMEM;
	}
	m->hash = h;
	memcpy(m->build_id, id, size);
	m->build_id_size = size;
	m->pack = sym_pack__find(&s->pack, path, id, size);
	err = image_get(s, m, &m->img);
	if (err) {
		free(m->path);
		free(m);
		return err;
	}
	m->pack_first = (s->opts.inlines || s->opts.srclines) &&
			sym_pack__dwarf(&s->pack, m->pack) && !image_has_dwarf(m->img);
	s->mods[s->nmods] = m;
	*out = s->nmods++;
	hashtab__insert(&s->mod_index, h, &slot, NULL); /* reserved above */
	return 0;
}

static int module_get(struct symbolizer *s, const char *path, const uint8_t *id,
		      uint8_t size, uint32_t *out)
{
	struct module_key k = {
		.mods = s->mods, .hash = module_hash(path, id, size),
		.path = path, .id = id, .size = size,
	};
	const struct mod_slot *i = hashtab__find(&s->mod_index, k.hash, &k, module_eq);

	if (i) {
		*out = i->idx;
		return 0;
	}
	return module_add(s, k.hash, path, id, size, out);
}

/* ---- per-address cache ------------------------------------------------- */

/* report/resolve.c caches finished frames in front of this one; its
 * comment says why both exist. */

/* Multiplicative: the upper half, which the table uses, is well mixed. */
static uint64_t cache_hash(uint32_t mod, uint64_t off)
{
	return (off ^ ((uint64_t)mod << 40)) * 0x9e3779b97f4a7c15ull;
}

static bool cache_eq(const void *ent, const void *key)
{
	const struct sym_cached *c = ent, *k = key;

	return c->mod == k->mod && c->offset == k->offset;
}

static struct sym_cached *cache_find(const struct symbolizer *s, uint32_t mod,
				     uint64_t off)
{
	struct sym_cached k = { .offset = off, .mod = mod };

	return hashtab__find(&s->cache, cache_hash(mod, off), &k, cache_eq);
}

static int cache_add(struct symbolizer *s, uint32_t mod, uint64_t off,
		     const struct sym_frame *frames, int n,
		     struct sym_cached **out)
{
	struct sym_cached c = { .mod = mod, .offset = off, .first = s->nframes, .n = n };
	void *slot;
	int err;

	if (hashtab__reserve(&s->cache, s->cache.nr + 1))
		return -ENOMEM;
	err = ARRAY_RESERVE(s->frames, s->frames_cap, s->nframes + n);
	if (err)
		return err;
	hashtab__insert(&s->cache, cache_hash(mod, off), &c, &slot); /* reserved */
	*out = slot;
	if (n)
		memcpy(s->frames + s->nframes, frames, n * sizeof(*frames));
	s->nframes += n;
	return 0;
}

/* ---- resolving --------------------------------------------------------- */

/* Refine the DWARF chain: the containing function is named by the symbol
 * table when it has a symbol (clones such as foo.cold keep their name). */
static int shape_frames(const struct symbolizer *s, const char *sym_name,
			struct sym_frame *f, int n)
{
	if (sym_name)
		f[n - 1].name = sym_name;
	if (!f[n - 1].name)
		return 0;
	if (!s->opts.inlines) {
		/* The function's own line: the call site of its inlined
		 * callees, not a line inside them. */
		f[0] = f[n - 1];
		n = 1;
	}
	int j = 0;

	for (int i = 0; i < n; i++) {
		if (!f[i].name)
			continue; /* an inlined level DWARF does not name */
		f[j] = f[i];
		if (!s->opts.srclines) {
			f[j].file = NULL;
			f[j].line = 0;
		}
		j++;
	}
	return j;
}

/* The options make frames of a raw answer, whichever source gave it. */
static int shape(const struct symbolizer *s, struct sym_raw *r, struct sym_frame *f)
{
	if ((s->opts.inlines || s->opts.srclines) && r->nframes > 0) {
		memcpy(f, r->frames, r->nframes * sizeof(*f));
		return shape_frames(s, r->sym_name, f, r->nframes);
	}
	if (!r->sym_name)
		return 0;
	f[0] = (struct sym_frame){ .name = r->sym_name };
	return 1;
}

/* The raw answer of the files found for a module; DWARF only when asked
 * (it costs). Returns whether it names the address. */
static bool file_raw(struct symbolizer *s, struct sym_image *img, uint64_t off,
		     bool dwarf, struct sym_raw *r)
{
	const struct sym_entry *sym;
	uint64_t vaddr;

	r->sym_name = NULL;
	r->nframes = 0;
	if (!img)
		return false;
	if (img->obj ? elf_file__offset_to_vaddr(img->obj, off, false, &vaddr)
		     : elf_file__offset_to_vaddr(img->dbg, off, true, &vaddr))
		return false;
	sym = sym_table__find(&img->syms, vaddr);
	if (sym) {
		r->sym_name = sym->name;
		r->sym_start = vaddr - sym->addr <= off ? off - (vaddr - sym->addr) : 0;
		r->sym_size = sym->size;
	}
	if (dwarf)
		r->nframes = dwarf_frames(image_dwarf(s, img), vaddr, r->frames, SYM_MAX_FRAMES);
	return sym_raw__names(r);
}

/* The first source of m that names off: its files, then the pack (the
 * pack first when it has the DWARF the files lack). *pack says which. */
static bool module_raw(struct symbolizer *s, const struct sym_module *m, uint64_t off,
		       bool dwarf, struct sym_raw *r, bool *pack)
{
	for (int i = 0; i < 2; i++) {
		*pack = (i == 0) == m->pack_first;
		if (*pack ? sym_pack__raw(&s->pack, m->pack, off, r) && sym_raw__names(r)
			  : file_raw(s, m->img, off, dwarf, r))
			return true;
	}
	return false;
}

/* Frames of off in m, names demangled unless raw_names. */
static int symbolize(struct symbolizer *s, const struct sym_module *m, uint64_t off,
		     struct sym_frame *f, bool *pack)
{
	struct sym_raw raw;
	int n;

	if (!module_raw(s, m, off, s->opts.inlines || s->opts.srclines, &raw, pack))
		return 0;
	n = shape(s, &raw, f);
	for (int i = 0; i < n && !s->opts.raw_names; i++)
		f[i].name = sym_demangle(&s->dem, f[i].name);
	return n;
}

static int check_args(const char *path, const uint8_t *build_id, uint8_t build_id_size)
{
	if (!path || build_id_size > SYM_BUILD_ID_MAX || (build_id_size && !build_id))
		return -EINVAL;
	return 0;
}

int symbolizer__lookup_raw(struct symbolizer *s, const char *path,
			   const uint8_t *build_id, uint8_t build_id_size,
			   uint64_t offset, struct sym_raw *out, bool *dwarf)
{
	const struct sym_module *m;
	uint32_t mod;
	bool pack;
	int err;

	if (!s || !out || check_args(path, build_id, build_id_size))
		return -EINVAL;
	err = module_get(s, path, build_id_size ? build_id : (const uint8_t *)"",
			 build_id_size, &mod);
	if (err)
		return err;
	m = s->mods[mod];
	if (!module_raw(s, m, offset, true, out, &pack))
		return 0;
	if (dwarf)
		*dwarf = pack ? sym_pack__dwarf(&s->pack, m->pack) : image_has_dwarf(m->img);
	return 1;
}

int symbolizer__pack_object(struct symbolizer *s, const char *path,
			    const uint8_t *build_id, uint8_t build_id_size,
			    bool dwarf, uint32_t *id)
{
	if (!s || !id || check_args(path, build_id, build_id_size))
		return -EINVAL;
	return sym_pack__object(&s->pack, path, build_id, build_id_size, dwarf, id);
}

int symbolizer__pack_address(struct symbolizer *s, uint32_t id, uint64_t offset,
			     const struct sym_raw *raw)
{
	if (!s || !raw)
		return -EINVAL;
	return sym_pack__address(&s->pack, id, offset, raw);
}

int symbolizer__resolve(struct symbolizer *s, const char *path,
			const uint8_t *build_id, uint8_t build_id_size,
			uint64_t file_offset, struct sym_frame *frames,
			int max_frames)
{
	struct sym_frame tmp[SYM_MAX_FRAMES];
	struct sym_cached *c;
	const struct sym_frame *src;
	uint32_t mod;
	bool pack;
	int err, n;

	if (!s || !frames || max_frames < 1 || check_args(path, build_id, build_id_size))
		return -EINVAL;
	if (!build_id_size)
		build_id = (const uint8_t *)"";
	s->stats.lookups++;
	err = module_get(s, path, build_id, build_id_size, &mod);
	if (err)
		return err;
	c = cache_find(s, mod, file_offset);
	if (c) {
		s->stats.cache_hits++;
	} else {
		n = symbolize(s, s->mods[mod], file_offset, tmp, &pack);
		err = cache_add(s, mod, file_offset, tmp, n, &c);
		if (err)
			return err;
		if (n)
			s->stats.resolved++;
		else
			s->stats.unresolved++;
		s->stats.resolved_pack += n && pack;
	}
	n = c->n;
	if (!n)
		return 0;
	src = s->frames + c->first;
	if (n > max_frames) {
		memcpy(frames, src, (max_frames - 1) * sizeof(*frames));
		frames[max_frames - 1] = src[n - 1];
		return max_frames;
	}
	memcpy(frames, src, n * sizeof(*frames));
	return n;
}
