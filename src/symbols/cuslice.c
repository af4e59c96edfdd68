/* A compilation unit's DIEs without libdw reading every unit before it
 * (cuslice.h).
 *
 * An image for libelf's elf_memory must hold its headers and its
 * sections' bytes in one range of memory.  A block is such a range: SLOTS
 * header slots (each an ELF header and the headers of the file's .debug_
 * sections and section names, as the file has them but for the offsets),
 * then the file mapped whole, then zeros.  The image of slot I starts at
 * the slot and ends with the zeros: its sections lie as much further than
 * in the file as the file lies from the slot, its .debug_info starts at
 * the one unit (slice says how far it goes).  The file is opened again by
 * the path libdwfl names, and kept open when its size, first page and
 * section headers are the bytes of the image libdwfl verified.
 *
 * The formats (DWARF 5, sections 6.1.2 and 7.5.1, 7.5.3; DWARF 2 to 4
 * the same but for the unit header's order): .debug_aranges is a list of
 * sets, each a header (unit length, version 2, the unit's offset in
 * .debug_info, address size, segment selector size) then (address,
 * length) pairs aligned to twice the address size, ending with two zeros. */
#include "symbols/cuslice.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols_int.h"

#define SLOTS 16
#define MAX_UNITS 4096               /* units sliced in one module: past them, libdwfl's */
#define MAX_ABBREVS 100000           /* declarations read of one unit's table */
#define MAX_KEEP 63                  /* sections an image has, past its null one */

struct arange {
	uint64_t lo, hi;             /* [lo, hi): the DWARF's addresses */
	uint64_t unit;               /* the unit's offset in .debug_info */
};

struct unit {
	uint64_t offset;             /* in .debug_info */
	Elf *elf;
	Dwarf *dwarf;
	Dwarf_Die die;
	bool ok;                     /* else libdwfl's */
};

struct block {
	unsigned char *base;
	size_t size;
	unsigned used;
};

struct cuslice {
	int state;                   /* 0 not looked at, 1 usable, -1 libdwfl's */
	Dwarf_Addr bias;
	const unsigned char *raw;    /* the DWARF's file, as libelf holds it */
	size_t raw_size;
	Elf64_Ehdr ehdr;
	const unsigned char *shdrs;  /* in RAW */
	size_t nsec, slot, page;
	/* the sections an image has: its section 0 (null), then these of
	 * the file (the .debug_ ones and the names' table) */
	uint32_t keep[MAX_KEEP];
	size_t nkeep, info_keep, names_keep;   /* .debug_info's and the names' in the image */
	uint64_t info_off, info_size, abbrev_off, abbrev_size;
	int fd;                      /* the same file, to map again (open_same) */
	const unsigned char *file;   /* the first block's map of it: what is read here */
	struct arange *ar;
	size_t nar;
	struct unit **units;         /* by offset */
	size_t nunits;
	struct block *blocks;
	size_t nblocks;
};

static bool is_native_elf64(const Elf64_Ehdr *e)
{
	static const union { uint16_t u; unsigned char b[2]; } order = { 1 };
	return e->e_ident[EI_CLASS] == ELFCLASS64 &&
	       e->e_ident[EI_DATA] == (order.b[0] ? ELFDATA2LSB : ELFDATA2MSB) &&
	       e->e_shentsize == sizeof(Elf64_Shdr);
}

static Elf64_Shdr shdr(const struct cuslice *c, size_t i)
{
	Elf64_Shdr s;
	memcpy(&s, c->shdrs + i * sizeof(s), sizeof(s));
	return s;
}

/* The N-byte (1, 2, 4, 8) number at P, in the machine's byte order
 * (is_native_elf64's). */
static uint64_t get(const unsigned char *p, size_t n)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t d;
	switch (n) {
	case 1:
		memcpy(&b, p, 1);
		return b;
	case 2:
		memcpy(&h, p, 2);
		return h;
	case 4:
		memcpy(&w, p, 4);
		return w;
	default:
		memcpy(&d, p, 8);
		return d;
	}
}

/* The sets of .debug_aranges [P, END), each in bounds or dropped. */
static bool read_aranges(struct cuslice *c, const unsigned char *p, const unsigned char *end)
{
	size_t cap = 0;
	while (end - p >= 4) {
		const unsigned char *set = p;
		uint64_t len = get(p, 4);
		size_t off_size = 4, lsize = 4;
		if (len == 0xffffffff) {
			if (end - p < 12)
				break;
			len = get(p + 4, 8);
			off_size = 8;
			lsize = 12;
		} else if (len >= 0xfffffff0) {
			break;
		}
		if (len > (uint64_t)(end - p) - lsize)
			break;
		const unsigned char *next = p + lsize + len, *q = p + lsize;
		if (next - q < (ptrdiff_t)(2 + off_size + 2))
			break;
		uint64_t unit = get(q + 2, off_size);
		unsigned asize = q[2 + off_size], ssize = q[3 + off_size];
		q += 4 + off_size;
		if (ssize == 0 && (asize == 4 || asize == 8) && unit < c->info_size) {
			size_t tuple = 2 * asize;
			q = set + ((size_t)(q - set) + tuple - 1) / tuple * tuple;
			for (; q < next && (size_t)(next - q) >= tuple; q += tuple) {
				uint64_t lo = get(q, asize), n = get(q + asize, asize);
				if (lo == 0 && n == 0)
					break;
				if (n == 0 || lo + n < lo)
					continue;
				if (c->nar == cap) {
					size_t k = cap ? 2 * cap : 256;
					struct arange *a = realloc(c->ar, k * sizeof(*a));
					if (!a)
						return false;
					c->ar = a;
					cap = k;
				}
				c->ar[c->nar++] = (struct arange){ lo, lo + n, unit };
			}
		}
		p = next;
	}
	return c->nar > 0;
}

/* The file at PATH open, when it is RAW's: its size, and its bytes where
 * libelf read the headers; -1 otherwise. */
static int open_same(const struct cuslice *c, const char *path)
{
	struct stat st;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	size_t head = c->raw_size < 4096 ? c->raw_size : 4096, table = c->nsec * sizeof(Elf64_Shdr);
	unsigned char *buf = fd >= 0 ? malloc(head > table ? head : table) : NULL;
	bool same = buf && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == c->raw_size &&
		    pread(fd, buf, head, 0) == (ssize_t)head && memcmp(buf, c->raw, head) == 0 &&
		    pread(fd, buf, table, (off_t)c->ehdr.e_shoff) == (ssize_t)table && memcmp(buf, c->shdrs, table) == 0;
	free(buf);
	if (!same && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static size_t round_up(size_t n, size_t page)
{
	return (n + page - 1) / page * page;
}

/* Where a block's file starts: after its slots, at a page. */
static size_t head_size(const struct cuslice *c)
{
	return round_up(SLOTS * c->slot, c->page);
}

/* Where a block's file ends, its pages' zeros beyond it: from its base. */
static size_t file_end(const struct cuslice *c)
{
	return head_size(c) + round_up(c->raw_size, c->page);
}

/* One more block (a range of SLOTS headers' slots, the file, then as
 * many bytes of zeros as .debug_info has): false when it cannot be made. */
static bool new_block(struct cuslice *c)
{
	struct block *bs = realloc(c->blocks, (c->nblocks + 1) * sizeof(*bs));
	if (!bs)
		return false;
	c->blocks = bs;
	size_t head = head_size(c), file = round_up(c->raw_size, c->page), span = file_end(c) + c->info_size;
	/* (reserved without access, which no limit on data counts) */
	unsigned char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return false;
	if (mmap(base, head, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mmap(base + head, c->raw_size, PROT_READ, MAP_PRIVATE | MAP_FIXED, c->fd, 0) == MAP_FAILED ||
	    (c->info_size && mmap(base + head + file, c->info_size, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)) {
		munmap(base, span);
		return false;
	}
	c->blocks[c->nblocks++] = (struct block){ base, span, 0 };
	if (!c->file)
		c->file = base + head;
	return true;
}

/* A block's slot for one more unit's headers: its address, *DELTA how
 * much further the file lies from it, *SIZE the image's. */
static unsigned char *new_slot(struct cuslice *c, size_t *delta, size_t *size)
{
	if (c->blocks[c->nblocks - 1].used == SLOTS && !new_block(c))
		return NULL;
	struct block *b = &c->blocks[c->nblocks - 1];
	unsigned i = b->used++;
	*delta = head_size(c) - (size_t)i * c->slot;
	*size = *delta + round_up(c->raw_size, c->page) + c->info_size;
	return b->base + (size_t)i * c->slot;
}

/* Whether MOD's DWARF can be sliced: its file, its sections, its aranges. */
static bool prepare(struct cuslice *c, Dwfl_Module *mod)
{
	Dwarf *dw = dwfl_module_getdwarf(mod, &c->bias);
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	size_t shstrndx, nsec;
	c->raw = elf ? (const unsigned char *)elf_rawfile(elf, &c->raw_size) : NULL;
	if (!c->raw || c->raw_size < sizeof(c->ehdr) || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    elf_getshdrnum(elf, &nsec) != 0)
		return false;
	memcpy(&c->ehdr, c->raw, sizeof(c->ehdr));
	c->nsec = nsec;
	if (!is_native_elf64(&c->ehdr) || nsec == 0 || c->ehdr.e_shoff > c->raw_size ||
	    nsec > (c->raw_size - c->ehdr.e_shoff) / sizeof(Elf64_Shdr))
		return false;
	c->shdrs = c->raw + c->ehdr.e_shoff;
	uint64_t ar_off = 0, ar_size = 0;
	for (size_t i = 1; i < nsec; i++) {
		Elf64_Shdr s = shdr(c, i);
		const char *name = elf_strptr(elf, shstrndx, s.sh_name);
		if (!name)
			continue;
		if (strncmp(name, ".zdebug", 7) == 0 ||
		    (strncmp(name, ".debug", 6) == 0 && (s.sh_flags & SHF_COMPRESSED)))
			return false;
		if (s.sh_type == SHT_NOBITS || s.sh_offset > c->raw_size || s.sh_size > c->raw_size - s.sh_offset ||
		    (strncmp(name, ".debug_", 7) != 0 && i != shstrndx))
			continue;
		if (c->nkeep == MAX_KEEP)
			return false;
		if (i == shstrndx)
			c->names_keep = c->nkeep + 1;
		c->keep[c->nkeep++] = (uint32_t)i;
		if (strcmp(name, ".debug_info") == 0) {
			c->info_keep = c->nkeep;
			c->info_off = s.sh_offset;
			c->info_size = s.sh_size;
		} else if (strcmp(name, ".debug_abbrev") == 0) {
			c->abbrev_off = s.sh_offset;
			c->abbrev_size = s.sh_size;
		} else if (strcmp(name, ".debug_aranges") == 0) {
			ar_off = s.sh_offset;
			ar_size = s.sh_size;
		}
	}
	if (!c->info_keep || !c->names_keep || !c->abbrev_size || !ar_size)
		return false;
	const char *main_path = NULL, *debug_path = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &main_path, &debug_path);
	if ((c->fd = open_same(c, debug_path)) < 0)
		c->fd = open_same(c, main_path);
	c->page = (size_t)sysconf(_SC_PAGESIZE);
	c->slot = round_up(sizeof(Elf64_Ehdr) + (1 + c->nkeep) * sizeof(Elf64_Shdr), 64);
	/* (read through the blocks' map, which libdw reads too: a page of
	 * the file touched once) */
	return c->fd >= 0 && new_block(c) && read_aranges(c, c->file + ar_off, c->file + ar_off + ar_size);
}

static bool uleb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end; shift += 7) {
		unsigned char b = *(*p)++;
		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Whether the abbreviations at OFFSET in .debug_abbrev keep a unit to
 * itself: no reference or string outside the unit's file and unit, no
 * form whose size is not known, no split unit. */
static bool self_contained(const struct cuslice *c, uint64_t offset)
{
	if (offset >= c->abbrev_size)
		return false;
	const unsigned char *p = c->file + c->abbrev_off + offset, *end = c->file + c->abbrev_off + c->abbrev_size;
	for (int n = 0; n < MAX_ABBREVS; n++) {
		uint64_t code, tag, at, form, ignored;
		if (!uleb(&p, end, &code))
			return false;
		if (code == 0)
			return true;
		if (!uleb(&p, end, &tag) || p >= end)
			return false;
		p++;    /* children */
		for (;;) {
			if (!uleb(&p, end, &at) || !uleb(&p, end, &form))
				return false;
			if (at == 0 && form == 0)
				break;
			if (form == DW_FORM_implicit_const && !uleb(&p, end, &ignored))
				return false;
			switch (form) {
			case DW_FORM_ref_addr:
			case DW_FORM_indirect:
			case DW_FORM_ref_sig8:
			case DW_FORM_ref_sup4:
			case DW_FORM_ref_sup8:
			case DW_FORM_strp_sup:
			case DW_FORM_GNU_ref_alt:
			case DW_FORM_GNU_strp_alt:
				return false;
			default:
				break;
			}
			if (at == DW_AT_dwo_name || at == DW_AT_GNU_dwo_name || at == DW_AT_GNU_dwo_id)
				return false;
		}
	}
	return false;
}

/* Unit OFFSET's header: its size and whole length, when it is a compile
 * unit whose abbreviations keep it to itself. */
static bool unit_header(const struct cuslice *c, uint64_t offset, size_t *header, uint64_t *total)
{
	if (offset >= c->info_size || c->info_size - offset < 12)
		return false;
	const unsigned char *p = c->file + c->info_off + offset;
	uint64_t avail = c->info_size - offset, len = get(p, 4);
	size_t lsize = 4, osize = 4;
	if (len == 0xffffffff) {
		if (avail < 24)
			return false;
		len = get(p + 4, 8);
		lsize = 12;
		osize = 8;
	} else if (len >= 0xfffffff0) {
		return false;
	}
	if (len > avail - lsize || len < 2 + 2 + osize)
		return false;
	unsigned version = (unsigned)get(p + lsize, 2);
	uint64_t abbrev;
	if (version == 5) {
		if (p[lsize + 2] != DW_UT_compile)
			return false;
		abbrev = get(p + lsize + 4, osize);
		*header = lsize + 4 + osize;
	} else if (version >= 2 && version <= 4) {
		abbrev = get(p + lsize + 2, osize);
		*header = lsize + 2 + osize + 1;
	} else {
		return false;
	}
	*total = lsize + len;
	return *header < *total && self_contained(c, abbrev);
}

/* Unit OFFSET as a Dwarf of its own, into U: its .debug_info starts at
 * the unit and is as long as the file's (the file's next bytes, then the
 * block's zeros), so that a DWARF expression's reference into .debug_info
 * (DW_OP_implicit_pointer's target, an offset in the file's section) is
 * in it, as libdw checks when it reads one; the unit does not refer past
 * itself (unit_header), and nothing here follows such a reference. */
static bool slice(struct cuslice *c, uint64_t offset, struct unit *u)
{
	size_t header, delta, size;
	uint64_t total;
	if (!unit_header(c, offset, &header, &total))
		return false;
	unsigned char *img = new_slot(c, &delta, &size);
	if (!img)
		return false;
	Elf64_Ehdr e = c->ehdr;
	e.e_shoff = sizeof(e);
	e.e_phoff = 0;
	e.e_phnum = 0;
	e.e_shnum = (Elf64_Half)(1 + c->nkeep);
	e.e_shstrndx = (Elf64_Half)c->names_keep;
	memcpy(img, &e, sizeof(e));
	unsigned char *table = img + sizeof(e);
	memset(table, 0, sizeof(Elf64_Shdr));
	for (size_t k = 0; k < c->nkeep; k++) {
		Elf64_Shdr s = shdr(c, c->keep[k]);
		s.sh_offset += delta;
		if (k + 1 == c->info_keep)
			s.sh_offset += offset;    /* (its size the file's: see the top) */
		s.sh_link = 0;
		memcpy(table + (k + 1) * sizeof(s), &s, sizeof(s));
	}
	u->elf = elf_memory((char *)img, size);
	u->dwarf = u->elf ? dwarf_begin_elf(u->elf, DWARF_C_READ, NULL) : NULL;
	return u->dwarf && dwarf_offdie(u->dwarf, header, &u->die) && dwarf_tag(&u->die) == DW_TAG_compile_unit;
}

/* The unit at OFFSET, sliced the first time: NULL when it cannot be. */
static struct unit *unit_at(struct cuslice *c, uint64_t offset)
{
	size_t lo = 0, hi = c->nunits;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->units[mid]->offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nunits && c->units[lo]->offset == offset)
		return c->units[lo]->ok ? c->units[lo] : NULL;
	struct unit *u = c->nunits < MAX_UNITS ? calloc(1, sizeof(*u)) : NULL;
	struct unit **us = u ? realloc(c->units, (c->nunits + 1) * sizeof(*us)) : NULL;
	if (!us) {
		free(u);
		return NULL;
	}
	c->units = us;
	memmove(us + lo + 1, us + lo, (c->nunits - lo) * sizeof(*us));
	us[lo] = u;
	c->nunits++;
	u->offset = offset;
	u->ok = slice(c, offset, u);
	return u->ok ? u : NULL;
}

/* The unit .debug_aranges gives ADDR (the DWARF's), or NULL: the first
 * range holding it, in the section's order (a scan: a module is asked for
 * tens of addresses, where sorting libc's 2083 ranges cost more). */
static struct unit *unit_of(struct cuslice *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nar; i++)
		if (addr - c->ar[i].lo < c->ar[i].hi - c->ar[i].lo)
			return unit_at(c, c->ar[i].unit);
	return NULL;
}

Dwarf_Die *symbols_addrdie(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	struct module_ref *ref = symbols_module_ref(mod);
	if (ref && ref->s && !ref->slice && (ref->slice = calloc(1, sizeof(*ref->slice)))) {
		ref->slice->fd = -1;
		ref->slice->state = prepare(ref->slice, mod) ? 1 : -1;
	}
	struct cuslice *c = ref ? ref->slice : NULL;
	struct unit *u = c && c->state == 1 && addr >= c->bias ? unit_of(c, addr - c->bias) : NULL;
	if (!u)
		return dwfl_module_addrdie(mod, addr, bias);
	*bias = c->bias;
	return &u->die;
}

Dwarf_Line *symbols_getsrc(Dwfl_Module *mod, Dwarf_Addr addr)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = symbols_addrdie(mod, addr, &bias);
	return cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
}

void cuslice_free(struct cuslice *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nunits; i++) {
		dwarf_end(c->units[i]->dwarf);
		elf_end(c->units[i]->elf);
		free(c->units[i]);
	}
	for (size_t i = 0; i < c->nblocks; i++)
		munmap(c->blocks[i].base, c->blocks[i].size);
	free(c->units);
	free(c->blocks);
	free(c->ar);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}
