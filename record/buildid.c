// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Build IDs from ELF notes. Files go through libelf (any class, any byte
 * order, 4- or 8-byte aligned notes); sysfs note blobs are plain 4-byte
 * aligned Elf_Nhdr sequences and are parsed here with every length checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/buildid.h"

#define NOTE_NAME_GNU "GNU"
#define NOTES_FILE_MAX (64u << 10)

static int set_id(const void *desc, size_t len, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	if (len == 0 || len > BUILDID_MAX)
		return 0;
	memset(id, 0, BUILDID_MAX);
	memcpy(id, desc, len);
	*size = (uint8_t)len;
	return 1;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

int buildid__parse_notes(const void *buf, size_t len, uint8_t id[BUILDID_MAX],
			 uint8_t *size)
{
	const uint8_t *p = buf;
	size_t off = 0;

	*size = 0;
	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t name_off, desc_off, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		if (nh.n_namesz > len - name_off)
			break;
		desc_off = name_off + align4(nh.n_namesz);
		if (desc_off > len || nh.n_descsz > len - desc_off)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(NOTE_NAME_GNU) &&
		    memcmp(p + name_off, NOTE_NAME_GNU, sizeof(NOTE_NAME_GNU)) == 0 &&
		    set_id(p + desc_off, nh.n_descsz, id, size))
			return 0;
		next = desc_off + align4(nh.n_descsz);
		if (next <= off)
			break;
		off = next;
	}
	return 0;
}

/* Look for the build ID note in one notes Elf_Data; 1 when found. */
static int scan_note_data(Elf_Data *data, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(NOTE_NAME_GNU) &&
		    memcmp(name, NOTE_NAME_GNU, sizeof(NOTE_NAME_GNU)) == 0)
			return set_id((const char *)data->d_buf + desc_off, nh.n_descsz,
				      id, size);
		off = next;
	}
	return 0;
}

static int scan_phdrs(Elf *elf, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (scan_note_data(data, id, size))
			return 1;
	}
	return 0;
}

/* Separate debug files and objects without program headers. */
static int scan_sections(Elf *elf, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (scan_note_data(elf_getdata(scn, NULL), id, size))
			return 1;
	}
	return 0;
}

int buildid__read_fd(int fd, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	Elf *elf;
	int err = 0;

	*size = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF)
		err = -ENOEXEC;
	else if (!scan_phdrs(elf, id, size))
		scan_sections(elf, id, size);
	elf_end(elf);
	return err;
}

int buildid__read_file(const char *path, uint8_t id[20], uint8_t *size)
{
	int fd, err;

	*size = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = buildid__read_fd(fd, id, size);
	close(fd);
	return err;
}

int buildid__read_notes_file(const char *path, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	size_t len = 0;
	uint8_t *buf;
	ssize_t n = 0;
	int fd, err;

	*size = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(NOTES_FILE_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < NOTES_FILE_MAX) {
		n = read(fd, buf + len, NOTES_FILE_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	err = n < 0 ? -errno : buildid__parse_notes(buf, len, id, size);
	close(fd);
	free(buf);
	return err;
}
