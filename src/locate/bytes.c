/* A file without a build-id, verified by the bytes the dump holds of it
 * (bytes.h).  Facts used: the ELF gABI (program headers, the dynamic
 * section's d_ptr tags); the kernel dumps the first page of a file mapping
 * at offset 0 that starts with an ELF header (vma_dump_size, in
 * fs/coredump.c since Linux 5.10, fs/binfmt_elf.c before; coredump_filter
 * bit 4) and leaves out the other pages of
 * read-only file mappings nobody wrote; glibc's ld.so adds the load bias
 * to the d_ptr values of DT_HASH, DT_PLTGOT, DT_STRTAB, DT_SYMTAB, DT_RELA,
 * DT_REL, DT_JMPREL, DT_VERSYM, DT_GNU_HASH (and DT_RELR) in the dynamic
 * section itself where it is writable (elf/get-dynamic-info.h,
 * ADJUST_DYN_INFO, without DL_RO_DYN_SECTION), and glibc's and musl's
 * loaders write DT_DEBUG's value (elf/rtld.c; musl ldso/dynlink.c). */
#include "locate/bytes.h"

#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DT_RELR
#define DT_RELR 36
#endif

#define HEADER_PAGE 4096u          /* what the kernel dumps of a file mapping at offset 0 */
#define CHUNK 4096u                /* one comparison; the sample's unit */
#define MAX_RUNS 4096u             /* held runs walked per segment */
#define MAX_PHDRS 4096u            /* program headers read at most */
#define MAX_KEPT 64u               /* PT_LOAD and PT_DYNAMIC headers kept */
#define MAX_DYN 4096u              /* dynamic entries compared at most */

struct verify {
	struct dump *d;
	const uint8_t *file;
	size_t size;
	const char *name;
	uint64_t bias;                 /* memory address = bias + p_vaddr */
	struct locate_bytes *out;
	uint8_t buf[CHUNK];
};

static void refuse(struct locate_bytes *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(out->reason);
	if (vasprintf(&out->reason, fmt, ap) < 0)
		out->reason = NULL;
	va_end(ap);
	out->agree = false;
}

enum cmp { CMP_SAME, CMP_DIFFER, CMP_NOT_HELD };

/* The LEN file bytes at OFF (in the file: the caller checked) against the
 * dump's at ADDR, CHUNK at a time; *AT the first differing file offset. */
static enum cmp compare(struct verify *v, uint64_t addr, uint64_t off, size_t len, uint64_t *at)
{
	for (size_t done = 0; done < len;) {
		size_t n = len - done < CHUNK ? len - done : CHUNK;
		if (dump_read(v->d, addr + done, v->buf, n) != PC_OK)
			return CMP_NOT_HELD;
		if (memcmp(v->buf, v->file + off + done, n) != 0) {
			size_t i = 0;
			while (i < n && v->buf[i] == v->file[off + done + i])
				i++;
			*at = off + done + i;
			return CMP_DIFFER;
		}
		v->out->compared += n;
		done += n;
	}
	return CMP_SAME;
}

/* ------------------------------------------------------------------------
 * Read-only segments: the runs the dump holds, all or an even sample
 * ------------------------------------------------------------------------ */

struct span {
	uint64_t addr, off, len;       /* file bytes [off, off+len) at addr */
};

/* The sampling walk: FN for each run of SP the dump holds bytes of (a run
 * dump_next_held gives that holds no captured bytes, a file-backed one, is
 * skipped: a segment is all captured or none).  Returns false when FN
 * stopped it. */
typedef bool (*run_fn)(struct verify *v, const struct span *sp, uint64_t start, uint64_t end, void *arg);

static bool each_held_run(struct verify *v, const struct span *sp, run_fn fn, void *arg)
{
	uint64_t a = sp->addr, hi = sp->addr + sp->len, end;
	uint8_t probe;
	for (unsigned n = 0; a < hi && n < MAX_RUNS; n++) {
		uint64_t h = dump_next_held(v->d, a, &end);
		if (!h || h >= hi)
			break;
		if (end > hi || end <= h)
			end = hi;
		if (dump_read(v->d, h, &probe, 1) == PC_OK && !fn(v, sp, h, end, arg))
			return false;
		a = end;
	}
	return true;
}

static bool count_run(struct verify *v, const struct span *sp, uint64_t start, uint64_t end, void *arg)
{
	(void)v, (void)sp;
	*(uint64_t *)arg += end - start;
	return true;
}

struct sample {
	uint64_t pos;                  /* held bytes walked before this run */
	uint64_t next;                 /* the held-coordinate of the next sample */
	uint64_t stride;               /* 0: every byte */
	uint64_t at;                   /* a difference's file offset */
	bool differ;
};

static bool compare_run(struct verify *v, const struct span *sp, uint64_t start, uint64_t end, void *arg)
{
	struct sample *s = arg;
	uint64_t len = end - start;
	enum cmp c = CMP_SAME;
	if (!s->stride) {
		c = compare(v, start, sp->off + (start - sp->addr), (size_t)len, &s->at);
	} else {
		while (c != CMP_DIFFER && s->next < s->pos + len) {
			/* on a CHUNK boundary, so that a compact dump, which keeps
			 * what was read, holds whole chunks and gives the same verdict */
			uint64_t a = start + (s->next - s->pos);
			a = a - a % CHUNK < start ? start : a - a % CHUNK;
			uint64_t n = end - a < CHUNK ? end - a : CHUNK;
			c = compare(v, a, sp->off + (a - sp->addr), (size_t)n, &s->at);
			s->next += s->stride;
		}
	}
	s->pos += len;
	s->differ = c == CMP_DIFFER;
	return !s->differ;
}

/* ------------------------------------------------------------------------
 * The dynamic section
 * ------------------------------------------------------------------------ */

/* Tags whose value is an address (d_ptr): glibc relocates some in place. */
static bool is_address_tag(int64_t tag)
{
	switch (tag) {
	case DT_PLTGOT: case DT_HASH: case DT_STRTAB: case DT_SYMTAB: case DT_RELA: case DT_INIT: case DT_FINI:
	case DT_REL: case DT_JMPREL: case DT_INIT_ARRAY: case DT_FINI_ARRAY: case DT_PREINIT_ARRAY: case DT_RELR:
	case DT_VERSYM: case DT_VERDEF: case DT_VERNEED:
		return true;
	}
	return tag >= DT_ADDRRNGLO && tag <= DT_ADDRRNGHI;
}

/* Whether the file's dynamic section (in the file) asks for text
 * relocations: the loader then writes its read-only segments. */
static bool has_textrel(const uint8_t *file, const Elf64_Phdr *dyn)
{
	for (uint64_t i = 0; dyn && i < dyn->p_filesz / sizeof(Elf64_Dyn) && i < MAX_DYN; i++) {
		Elf64_Dyn e;
		memcpy(&e, file + dyn->p_offset + i * sizeof(e), sizeof(e));
		if (e.d_tag == DT_NULL)
			break;
		if (e.d_tag == DT_TEXTREL || (e.d_tag == DT_FLAGS && (e.d_un.d_val & DF_TEXTREL)))
			return true;
	}
	return false;
}

/* Entry by entry; true when every entry through DT_NULL was held and
 * agreed, false when one differs (refused) or the dump lacks some. */
static bool compare_dynamic(struct verify *v, const Elf64_Phdr *dyn)
{
	uint64_t n = dyn->p_filesz / sizeof(Elf64_Dyn), addr = v->bias + dyn->p_vaddr;
	for (uint64_t i = 0; i < n && i < MAX_DYN; i++) {
		Elf64_Dyn f, m;
		memcpy(&f, v->file + dyn->p_offset + i * sizeof(f), sizeof(f));
		if (dump_read(v->d, addr + i * sizeof(m), &m, sizeof(m)) != PC_OK)
			return false;
		bool same = m.d_tag == f.d_tag &&
			    (m.d_un.d_val == f.d_un.d_val || f.d_tag == DT_DEBUG ||
			     (is_address_tag(f.d_tag) && m.d_un.d_ptr == f.d_un.d_ptr + v->bias));
		if (!same) {
			refuse(v->out, "%s differs from the dump's copy in its dynamic section: entry %llu is "
			       "(0x%llx, 0x%llx) in the dump, (0x%llx, 0x%llx) in the file", v->name,
			       (unsigned long long)i, (unsigned long long)m.d_tag, (unsigned long long)m.d_un.d_val,
			       (unsigned long long)f.d_tag, (unsigned long long)f.d_un.d_val);
			v->out->differ = true;
			return false;
		}
		v->out->compared += sizeof(m);
		v->out->dynamic_entries++;
		if (f.d_tag == DT_NULL)
			return true;
	}
	return n > 0 && n <= MAX_DYN;
}

/* ------------------------------------------------------------------------
 * The verdict
 * ------------------------------------------------------------------------ */

void locate_bytes_verify(struct dump *d, uint64_t base, const uint8_t *file, size_t size, const char *name,
			 struct locate_bytes *out)
{
	*out = (struct locate_bytes){ 0 };
	struct verify *v = malloc(sizeof(*v));
	if (!v)
		return;
	*v = (struct verify){ .d = d, .file = file, .size = size, .name = name, .out = out };
	Elf64_Ehdr eh;
	if (size < sizeof(eh) || memcmp(file, ELFMAG, SELFMAG) != 0 || file[EI_CLASS] != ELFCLASS64) {
		refuse(out, "%s is not a 64-bit ELF file: it cannot be verified by its bytes", name);
		goto done;
	}
	memcpy(&eh, file, sizeof(eh));
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > MAX_PHDRS ||
	    eh.e_phoff > size || (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum) {
		refuse(out, "%s: its program headers are not in the file", name);
		goto done;
	}
	const Elf64_Phdr *first = NULL, *dyn = NULL;
	Elf64_Phdr ph[MAX_KEPT];
	size_t nph = 0;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr p;
		memcpy(&p, file + eh.e_phoff + i * sizeof(p), sizeof(p));
		if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC)
			continue;
		if (p.p_offset > size || p.p_filesz > size - p.p_offset) {
			refuse(out, "%s: its segment %zu lies past the file's end (a truncated file?)", name, i);
			goto done;
		}
		if (nph == sizeof(ph) / sizeof(ph[0]))
			continue;
		ph[nph] = p;
		if (p.p_type == PT_DYNAMIC && !dyn)
			dyn = &ph[nph];
		if (p.p_type == PT_LOAD && p.p_offset == 0 && !first)
			first = &ph[nph];
		nph++;
	}
	if (!first || first->p_filesz == 0) {
		refuse(out, "%s: no segment maps its ELF header", name);
		goto done;
	}
	v->bias = base - first->p_vaddr;

	/* 1. the header page: without it nothing else is worth comparing */
	uint64_t at, hlen = first->p_filesz < HEADER_PAGE ? first->p_filesz : HEADER_PAGE;
	enum cmp c = compare(v, base, 0, (size_t)hlen, &at);
	if (c == CMP_NOT_HELD) {
		refuse(out, "%s has no build-id, and the dump holds no copy of its ELF header page to compare "
		       "it with", name);
		goto done;
	}
	if (c == CMP_DIFFER) {
		refuse(out, "%s differs from the dump's copy of its ELF header page at file offset 0x%llx", name,
		       (unsigned long long)at);
		out->differ = true;
		goto done;
	}

	/* 2. the read-only segments beyond it, where the dump holds them */
	size_t header_bytes = out->compared;
	bool textrel = has_textrel(file, dyn);
	struct span spans[sizeof(ph) / sizeof(ph[0])];
	size_t nspans = 0;
	uint64_t held = 0;
	for (size_t i = 0; !textrel && i < nph; i++) {
		if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_W))
			continue;
		struct span sp = { v->bias + ph[i].p_vaddr, ph[i].p_offset, ph[i].p_filesz };
		if (&ph[i] == first) {
			sp.addr += hlen, sp.off += hlen, sp.len -= hlen;
		}
		if (sp.len == 0 || sp.addr + sp.len < sp.addr)
			continue;
		spans[nspans++] = sp;
		each_held_run(v, &sp, count_run, &held);
	}
	struct sample s = { .stride = held > LOCATE_BYTES_MAX ? held / (LOCATE_BYTES_MAX / CHUNK) : 0 };
	for (size_t i = 0; i < nspans && !s.differ; i++)
		each_held_run(v, &spans[i], compare_run, &s);
	if (s.differ) {
		refuse(out, "%s differs from the dump's copy of its read-only segments at file offset 0x%llx",
		       name, (unsigned long long)s.at);
		out->differ = true;
		goto done;
	}
	size_t segment_bytes = out->compared - header_bytes;

	/* 3. the dynamic section, entry by entry */
	bool dynamic_whole = dyn && compare_dynamic(v, dyn);
	if (out->reason)
		goto done;
	if (!dynamic_whole && segment_bytes < LOCATE_BYTES_ENOUGH) {
		refuse(out, "%s has no build-id, and the dump holds too little of it to tell it from another "
		       "build: its ELF header page and %zu bytes of read-only segments agree, its dynamic "
		       "section is %s", name, segment_bytes,
		       !dyn ? "absent" : out->dynamic_entries ? "not all in the dump" : "not in the dump");
		goto done;
	}
	out->agree = true;
done:
	free(v);
}
