/* SPDX-License-Identifier: MIT */
/* image.h - a static ELF executable loaded for analysis */
#ifndef AE_IMAGE_H
#define AE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct ae_seg {
	uint64_t vaddr;
	uint64_t filesz, memsz;
	const uint8_t *data;
	int exec;
};

struct ae_image {
	const char *path;
	void *elf;			/* libelf's Elf over file */
	uint8_t *file;
	size_t size;
	uint64_t entry;
	struct ae_seg seg[16];
	int nseg;
	uint64_t text_lo, text_hi;	/* span of executable segments */
};

/* 0 or -1 with a message naming the file on stderr. */
int ae_image_load(struct ae_image *im, const char *path);
void ae_image_free(struct ae_image *im);
/* Pointer to `len` readable bytes at vaddr, or NULL. */
const uint8_t *ae_image_ptr(const struct ae_image *im, uint64_t vaddr, size_t len);
/* Contents of a section by name, or NULL. */
const uint8_t *ae_image_section(const struct ae_image *im, const char *name,
				size_t *len, uint64_t *addr);
/* Address of a symbol by name, or 0. */
uint64_t ae_image_symbol(const struct ae_image *im, const char *name);
/* Size of the function symbol at addr, or 0 (none, or no size). */
uint64_t ae_image_func_size(const struct ae_image *im, uint64_t addr);

#endif
