/* The ELF core reader (Linux, 64-bit little-endian): kernel cores and
 * gdb's gcore.
 *
 * Note layouts are the kernel's (include/linux/elfcore.h,
 * include/uapi/linux/elfcore.h): every 64-bit elf_prstatus has pr_cursig
 * at 12 and pr_pid at 32, its registers (the platform's: platform/) at
 * 112, and its size the platform's;
 * elf_prpsinfo is 136 bytes with pr_sname (the state letter) at 1, pr_uid
 * and pr_gid (32 bits) at 16 and 20, pr_pid at 24, pr_ppid at 28,
 * pr_fname[16] at 40 and pr_psargs[80] at 56; NT_FILE is count, page size, count triples of
 * (start, end, page offset) and then count NUL-terminated names.
 */
#include "dump_int.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRSTATUS_CURSIG  12
#define PRSTATUS_PID     32
#define PRPSINFO_SIZE    136
#define PRPSINFO_SNAME   1
#define PRPSINFO_UID     16
#define PRPSINFO_GID     20
#define PRPSINFO_PID     24
#define PRPSINFO_PPID    28
#define PRPSINFO_FNAME   40
#define PRPSINFO_PSARGS  56
#define SIGINFO_MIN      24     /* si_signo, si_errno, si_code, pad, si_addr (or si_pid, si_uid) */

/* A PT_LOAD as the core declares it, kept while building the segment list. */
struct load {
	uint64_t vaddr, memsz, filesz, offset;
	uint32_t flags;
};

struct core_parse {
	struct load *loads;
	size_t nloads;
	const uint8_t *auxv;
	size_t auxv_len;
	const uint8_t *siginfo;
	size_t siginfo_len;
};

/* ------------------------------------------------------------------------
 * Notes
 * ------------------------------------------------------------------------ */

static enum pc_code add_thread(struct dump *d, const uint8_t *desc, size_t len)
{
	if (len < d->platform->prstatus_size) {
		dump_set_error(d, "NT_PRSTATUS note of %zu bytes is too short", len);
		return PC_ECORRUPT;
	}
	if (d->nthreads >= DUMP_MAX_THREADS) {
		dump_set_error(d, "more than %u threads", DUMP_MAX_THREADS);
		return PC_ECORRUPT;
	}
	struct dump_thread *t = realloc(d->threads, (d->nthreads + 1) * sizeof(*t));
	if (!t)
		return PC_ENOMEM;
	d->threads = t;
	t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof(*t));
	int16_t cursig;
	memcpy(&cursig, desc + PRSTATUS_CURSIG, 2);
	t->signal = cursig;
	t->tid = (int32_t)dump_le32(desc + PRSTATUS_PID);
	d->platform->parse_prstatus(desc, &t->regs);
	return PC_OK;
}

static void take_prpsinfo(struct dump *d, const uint8_t *desc, size_t len)
{
	if (len < PRPSINFO_SIZE)
		return;
	d->pid = (int32_t)dump_le32(desc + PRPSINFO_PID);
	int32_t ppid = (int32_t)dump_le32(desc + PRPSINFO_PPID);
	d->ppid = ppid >= 0 ? ppid : -1;
	d->uid = dump_le32(desc + PRPSINFO_UID);
	d->gid = dump_le32(desc + PRPSINFO_GID);
	/* a letter, or the kernel's '.' for a state it has no letter for */
	char state = (char)desc[PRPSINFO_SNAME];
	d->state = (state >= 'A' && state <= 'Z') || (state >= 'a' && state <= 'z') ? state : 0;
	char buf[81];
	memcpy(buf, desc + PRPSINFO_FNAME, 16);
	buf[16] = '\0';
	free(d->fname);
	d->fname = strdup(buf);
	memcpy(buf, desc + PRPSINFO_PSARGS, 80);
	buf[80] = '\0';
	size_t n = strlen(buf);
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	free(d->psargs);
	d->psargs = strdup(buf);
}

static struct dump_module *module_for_path(struct dump *d, const char *path)
{
	bool full;
	struct dump_module *m = dump_module_for_path(d, path, &full);
	if (full)
		dump_set_error(d, "NT_FILE names more than %u files", DUMP_MAX_MODULES);
	return m;
}

static enum pc_code take_nt_file(struct dump *d, const uint8_t *desc, size_t len)
{
	if (len < 16) {
		dump_set_error(d, "NT_FILE note too short");
		return PC_ECORRUPT;
	}
	uint64_t count = dump_le64(desc), page = dump_le64(desc + 8);
	if (count > (len - 16) / 24 || count > DUMP_MAX_MAPPINGS) {
		dump_set_error(d, "NT_FILE note declares %llu mappings in %zu bytes",
			       (unsigned long long)count, len);
		return PC_ECORRUPT;
	}
	if (page == 0 || (page & (page - 1)) != 0 || page > (1u << 30)) {
		dump_set_error(d, "NT_FILE note has a bad page size %llu", (unsigned long long)page);
		return PC_ECORRUPT;
	}
	const char *names = (const char *)desc + 16 + count * 24;
	const char *end = (const char *)desc + len;
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *e = desc + 16 + i * 24;
		uint64_t start = dump_le64(e), stop = dump_le64(e + 8), pgoff = dump_le64(e + 16);
		const char *nul = memchr(names, '\0', (size_t)(end - names));
		if (!nul) {
			dump_set_error(d, "NT_FILE note: file names run past the note");
			return PC_ECORRUPT;
		}
		if (stop > start && pgoff < UINT64_MAX / page) {
			/* (past DUMP_MAX_MAPPINGS a mapping is left unnamed: anonymous) */
			if (dump_add_vma_file(d, start, stop, pgoff * page, names) == PC_ENOMEM)
				return PC_ENOMEM;
			struct dump_module *m = module_for_path(d, names);
			if (!m)
				return d->p->error ? PC_ECORRUPT : PC_ENOMEM;
			struct dump_mapping *mp = realloc(m->maps, (m->nmaps + 1) * sizeof(*mp));
			if (!mp)
				return PC_ENOMEM;
			m->maps = mp;
			mp[m->nmaps++] = (struct dump_mapping){ start, stop, pgoff * page, false };
			if (start < m->start)
				m->start = start;
			if (stop > m->end)
				m->end = stop;
			if (pgoff == 0 && m->base == 0)
				m->base = start;
		}
		names = nul + 1;
	}
	return PC_OK;
}

static enum pc_code parse_notes(struct dump *d, struct core_parse *cp,
				    const uint8_t *p, size_t len)
{
	size_t off = 0;
	while (off < len) {
		if (len - off < sizeof(Elf64_Nhdr)) {
			dump_set_error(d, "note segment ends inside a note header");
			return PC_ECORRUPT;
		}
		Elf64_Nhdr nh;
		memcpy(&nh, p + off, sizeof(nh));
		off += sizeof(nh);
		size_t namesz = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		size_t descsz = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (namesz > len - off || (size_t)nh.n_descsz > len - off - namesz) {
			dump_set_error(d, "note of type %u claims %u bytes, past the end of its segment",
				       nh.n_type, nh.n_descsz);
			return PC_ECORRUPT;
		}
		const char *name = (const char *)p + off;
		const uint8_t *desc = p + off + namesz;
		size_t dlen = nh.n_descsz;
		bool core = nh.n_namesz == 5 && memcmp(name, "CORE", 5) == 0;
		enum pc_code st = PC_OK;
		if (core) {
			switch (nh.n_type) {
			case NT_PRSTATUS: st = add_thread(d, desc, dlen); break;
			case NT_PRPSINFO: take_prpsinfo(d, desc, dlen); break;
			case NT_AUXV: cp->auxv = desc; cp->auxv_len = dlen; break;
			case NT_SIGINFO:
				if (!cp->siginfo) {
					cp->siginfo = desc;
					cp->siginfo_len = dlen;
				}
				break;
			case NT_FILE: st = take_nt_file(d, desc, dlen); break;
			case NT_PRFPREG:
				/* (the last thread's: it follows its NT_PRSTATUS) */
				if (d->platform->parse_fpregs && d->nthreads)
					d->platform->parse_fpregs(desc, dlen, &d->threads[d->nthreads - 1].regs);
				break;
			default: break;
			}
		}
		/* a thread's other register sets follow its NT_PRSTATUS, as
		 * "LINUX" notes (the kernel's and gdb's: NT_ARM_TLS ...) */
		if (d->platform->parse_thread_note && d->nthreads &&
		    nh.n_namesz == 6 && memcmp(name, "LINUX", 6) == 0)
			d->platform->parse_thread_note(nh.n_type, desc, dlen, &d->threads[d->nthreads - 1].regs);
		if (st != PC_OK)
			return st;
		off += namesz;
		off += descsz < len - off ? descsz : len - off;
	}
	return PC_OK;
}

/* ------------------------------------------------------------------------
 * Segments: the core's own bytes first, then read-only file pages it left out
 * ------------------------------------------------------------------------ */

/* Is [a, b) inside a PT_LOAD the process could write? Those pages may differ
 * from the file, so the file must never stand in for them. */
static bool writable_load(const struct core_parse *cp, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < cp->nloads; i++) {
		const struct load *l = &cp->loads[i];
		if ((l->flags & PF_W) && a < l->vaddr + l->memsz && b > l->vaddr)
			return true;
	}
	return false;
}

static enum pc_code build_segments(struct dump *d, struct core_parse *cp)
{
	for (size_t i = 0; i < cp->nloads; i++) {
		struct load *l = &cp->loads[i];
		uint64_t n = l->filesz < l->memsz ? l->filesz : l->memsz;
		if (n == 0)
			continue;
		struct dump_segment s = { l->vaddr, l->vaddr + n, d->p->map + l->offset, NULL, 0, l->flags, false, false };
		enum pc_code st = dump_add_segment(d, &s);
		if (st != PC_OK)
			return st;
	}
	enum pc_code st = dump_segments_finish(d);
	if (st != PC_OK)
		return st;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		for (size_t j = 0; j < m->nmaps; j++)
			m->maps[j].writable = writable_load(cp, m->maps[j].start, m->maps[j].end);
	}
	return dump_add_file_segments(d);
}

/* ------------------------------------------------------------------------
 * Process facts from memory: argv from the initial stack
 * ------------------------------------------------------------------------ */

/* The kernel lays out the initial stack as argc, argv[], NULL, envp[], NULL,
 * auxv[], and the strings they point to above.  Find the auxv the core
 * copied into NT_AUXV in the stack's memory, in the segment holding the
 * AT_EXECFN string (so that only that segment is searched, never the whole
 * dump), below the strings, and walk back from it. */
static void find_argv(struct dump *d, const struct core_parse *cp, uint64_t execfn)
{
	if (cp->auxv_len < 32 || !execfn)
		return;
	struct dump_segment *s = NULL;
	for (size_t i = 0; i < d->p->nsegs && !s; i++)
		if (execfn >= d->p->segs[i].start && execfn < d->p->segs[i].end && d->p->segs[i].data)
			s = &d->p->segs[i];
	if (!s || execfn - s->start < cp->auxv_len)
		return;
	/* down from the strings, 8-aligned: only the stack's top pages are
	 * read (a search up from the segment's start read all of it) */
	const uint8_t *hit = NULL;
	for (uint64_t off = (execfn - s->start - cp->auxv_len) & ~UINT64_C(7); !hit; off -= 8) {
		if (memcmp(s->data + off, cp->auxv, cp->auxv_len) == 0)
			hit = s->data + off;
		else if (off == 0)
			return;
	}
	uint64_t at = s->start + (uint64_t)(hit - s->data);
	uint64_t p = at - 8, v;
	if (dump_read_u64(d, p, &v) != PC_OK || v != 0)
		return;
	/* back over envp[] to the NULL that ends argv[] */
	int n = 0;
	do {
		p -= 8;
		if (dump_read_u64(d, p, &v) != PC_OK || ++n > 100000)
			return;
	} while (v != 0);
	/* back over argv[] until the word equals the count walked */
	uint64_t argc = 0;
	for (;;) {
		p -= 8;
		if (dump_read_u64(d, p, &v) != PC_OK || argc > 4096)
			return;
		if (v == argc)
			break;
		argc++;
	}
	char **argv = calloc(argc + 1, sizeof(*argv));
	if (!argv)
		return;
	d->p->argv_start = p;
	d->p->argv_end = s->end;
	for (uint64_t k = 0; k < argc; k++) {
		uint64_t sp;
		char buf[4096];
		if (dump_read_u64(d, p + 8 + 8 * k, &sp) != PC_OK ||
		    dump_read_cstr(d, sp, buf, sizeof(buf)) != PC_OK || !(argv[k] = strdup(buf))) {
			for (uint64_t j = 0; j < k; j++)
				free(argv[j]);
			free(argv);
			return;
		}
	}
	d->argv = argv;
}

/* Returns AT_EXECFN, the address of the executable's name as exec'd. */
static uint64_t find_executable(struct dump *d, const struct core_parse *cp)
{
	uint64_t execfn = 0;
	for (size_t off = 0; off + 16 <= cp->auxv_len; off += 16) {
		uint64_t type = dump_le64(cp->auxv + off), val = dump_le64(cp->auxv + off + 8);
		if (type == AT_ENTRY)
			d->auxv_entry = val;
		else if (type == AT_SYSINFO_EHDR)
			d->auxv_vdso = val;
		else if (type == AT_EXECFN)
			execfn = val;
	}
	struct dump_module *m = d->auxv_entry ? dump_module_at(d, d->auxv_entry) : NULL;
	if (m) {
		d->executable = strdup(m->path);
		return execfn;
	}
	char buf[4096];
	if (execfn && dump_read_cstr(d, execfn, buf, sizeof(buf)) == PC_OK)
		d->executable = strdup(buf);
	return execfn;
}

/* ------------------------------------------------------------------------
 * The reader
 * ------------------------------------------------------------------------ */

/* The ELF header's type and machine (at 16 and 18 in either class, in the
 * file's byte order), and the platform that reads the core: PC_EFORMAT
 * for an ELF file that is not a core, PC_EUNSUPPORTED for the core of a
 * machine no platform file describes. */
static enum pc_code elf_platform(struct dump *d)
{
	const uint8_t *h = d->p->map;
	if (d->p->map_len < 20) {
		dump_set_error(d, "truncated ELF header (%zu bytes)", d->p->map_len);
		return PC_ECORRUPT;
	}
	uint8_t cls = h[EI_CLASS], data = h[EI_DATA];
	bool msb = data == ELFDATA2MSB;
	uint16_t type = msb ? (uint16_t)(h[16] << 8 | h[17]) : (uint16_t)(h[17] << 8 | h[16]);
	uint16_t machine = msb ? (uint16_t)(h[18] << 8 | h[19]) : (uint16_t)(h[19] << 8 | h[18]);
	if ((cls != ELFCLASS32 && cls != ELFCLASS64) || (data != ELFDATA2LSB && !msb)) {
		dump_set_error(d, "an ELF file of unknown class %u or byte order %u", cls, data);
		return PC_EFORMAT;
	}
	if (type != ET_CORE) {
		dump_set_error(d, "an ELF %s, not a core dump",
			       type == ET_EXEC ? "executable" :
			       type == ET_DYN ? "shared object or executable" :
			       type == ET_REL ? "object file" : "file");
		return PC_EFORMAT;
	}
	d->platform = platform_by_elf(machine, cls, data);
	if (!d->platform) {
		char buf[40];
		const char *name = platform_elf_name(machine, cls, data, buf, sizeof(buf));
		if (name == buf)
			dump_set_error(d, "core of a process of ELF %s: pycore cannot analyze its dumps", name);
		else
			dump_set_error(d, "core of %s %s process: pycore cannot analyze %s dumps yet",
				       platform_article(name), name, name);
		return PC_EUNSUPPORTED;
	}
	return PC_OK;
}

enum pc_code dump_elfcore_open(struct dump *d)
{
	d->format = "elf-core";
	Elf64_Ehdr eh;
	enum pc_code pst = elf_platform(d);
	if (pst != PC_OK)
		return pst;
	/* every platform's cores are 64-bit little-endian */
	if (d->p->map_len < sizeof(eh)) {
		dump_set_error(d, "truncated ELF header (%zu bytes)", d->p->map_len);
		return PC_ECORRUPT;
	}
	memcpy(&eh, d->p->map, sizeof(eh));
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0) {
		dump_set_error(d, "core has no usable program headers");
		return PC_ECORRUPT;
	}
	uint64_t phnum = eh.e_phnum;
	if (phnum == PN_XNUM) {
		/* the real count is in section header 0's sh_info */
		Elf64_Shdr sh;
		if (eh.e_shoff == 0 || eh.e_shoff > d->p->map_len || d->p->map_len - eh.e_shoff < sizeof(sh)) {
			dump_set_error(d, "program header count escapes to a missing section header");
			return PC_ECORRUPT;
		}
		memcpy(&sh, d->p->map + eh.e_shoff, sizeof(sh));
		phnum = sh.sh_info;
	}
	if (eh.e_phoff > d->p->map_len || phnum > (d->p->map_len - eh.e_phoff) / sizeof(Elf64_Phdr)) {
		dump_set_error(d, "truncated: program headers (%llu at offset %llu) run past the end of the file",
			       (unsigned long long)phnum, (unsigned long long)eh.e_phoff);
		return PC_ECORRUPT;
	}

	struct core_parse cp = { 0 };
	cp.loads = calloc(phnum, sizeof(*cp.loads));
	if (!cp.loads)
		return PC_ENOMEM;
	enum pc_code st = PC_OK;
	uint64_t truncated_at = 0;
	for (uint64_t i = 0; i < phnum && st == PC_OK; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, d->p->map + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_NOTE) {
			if (ph.p_offset > d->p->map_len || ph.p_filesz > d->p->map_len - ph.p_offset) {
				dump_set_error(d, "truncated: note segment at offset %llu runs past the end of the file",
					       (unsigned long long)ph.p_offset);
				st = PC_ECORRUPT;
				break;
			}
			st = parse_notes(d, &cp, d->p->map + ph.p_offset, ph.p_filesz);
			struct dump_span *ns = realloc(d->p->notes, (d->p->nnotes + 1) * sizeof(*ns));
			if (!ns) {
				st = PC_ENOMEM;
				break;
			}
			d->p->notes = ns;
			ns[d->p->nnotes++] = (struct dump_span){ d->p->map + ph.p_offset, ph.p_filesz };
		} else if (ph.p_type == PT_LOAD) {
			struct load *l = &cp.loads[cp.nloads++];
			l->vaddr = ph.p_vaddr;
			l->memsz = ph.p_memsz;
			l->flags = ph.p_flags;
			l->offset = ph.p_offset;
			l->filesz = ph.p_filesz;
			/* every mapping, dumped or not, with its permissions (vmas.c) */
			if (ph.p_vaddr + ph.p_memsz > ph.p_vaddr &&
			    dump_add_vma(d, ph.p_vaddr, ph.p_vaddr + ph.p_memsz, ph.p_flags & PF_R, ph.p_flags & PF_W,
					 ph.p_flags & PF_X) == PC_ENOMEM) {
				st = PC_ENOMEM;
				break;
			}
			if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr) {
				dump_set_error(d, "segment at 0x%llx wraps around the address space",
					       (unsigned long long)ph.p_vaddr);
				st = PC_ECORRUPT;
				break;
			}
			/* A truncated core: keep what the file still holds. */
			if (ph.p_offset > d->p->map_len) {
				l->filesz = 0;
				if (ph.p_filesz)
					truncated_at = truncated_at ? truncated_at : ph.p_offset;
			} else if (ph.p_filesz > d->p->map_len - ph.p_offset) {
				l->filesz = d->p->map_len - ph.p_offset;
				truncated_at = truncated_at ? truncated_at : ph.p_offset;
			}
		}
	}
	if (st == PC_OK && d->nthreads == 0) {
		dump_set_error(d, "core has no thread notes (NT_PRSTATUS)");
		st = PC_ECORRUPT;
	}
	if (st == PC_OK)
		st = build_segments(d, &cp);
	if (st == PC_OK)
		dump_place_modules(d, cp.auxv, cp.auxv_len, NULL, 0);
	if (st == PC_OK) {
		d->p->truncated = truncated_at != 0;
		if (truncated_at)
			dump_warn(d, "the core file is truncated (%llu bytes; memory from offset %llu on is missing)",
				  (unsigned long long)d->p->map_len, (unsigned long long)truncated_at);
		for (size_t i = 0; i < d->nmodules; i++) {
			struct dump_module *m = &d->modules[i];
			if (m->base)
				dump_read_build_id(d, m->base, m->build_id, &m->build_id_len);
		}
		/* The kernel puts the thread that received the signal first. */
		if (d->threads[0].signal != 0) {
			d->has_signal = true;
			d->crashed_tid = d->threads[0].tid;
			d->signal.number = d->threads[0].signal;
			if (cp.siginfo && cp.siginfo_len >= SIGINFO_MIN &&
			    (int)dump_le32(cp.siginfo) == d->signal.number) {
				d->signal.code = (int32_t)dump_le32(cp.siginfo + 8);
				d->signal.has_code = true;
				dump_signal_decode(&d->signal, dump_le64(cp.siginfo + 16));
			}
		}
		find_argv(d, &cp, find_executable(d, &cp));
	}
	free(cp.loads);
	return st;
}
