/* The minidump reader (Breakpad, Crashpad, lldb; Linux processes of the
 * platforms in platform/, whose files parse a thread's CONTEXT).
 *
 * Format facts from Microsoft's minidumpapiset.h documentation and
 * Breakpad's minidump_format.h: a 32-byte header ("MDMP", version,
 * stream count, directory RVA), a directory of 12-byte entries (type,
 * size, RVA), and streams: ThreadList (3), ModuleList (4), MemoryList (5),
 * Exception (6), SystemInfo (7), Memory64List (9), MiscInfo (15), and
 * Breakpad's Linux streams 0x47670003-0x4767000A (cpuinfo, status, LSB
 * release, cmdline, environ, auxv, maps, DSO debug).  SystemInfo starts
 * with the 16-bit processor architecture, which names the platform.
 * Breakpad's MD_LINUX_PROC_STATUS is /proc/PID/status as text (Pid:,
 * PPid:, and the real, effective, saved and filesystem Uid: and Gid:),
 * MD_LINUX_AUXV the raw auxiliary vector (pairs of 64-bit type, value).
 * Crashpad's info stream (MDRawCrashpadInfo, in Breakpad's
 * minidump_format.h after Crashpad's minidump/minidump_extensions.h):
 * version, report and client GUIDs, then location descriptors (size, RVA)
 * of the process's simple annotations and of the module list: count, then
 * (module index, location) links to MDRawModuleCrashpadInfo (version, then
 * locations of list annotations, simple annotations and annotation
 * objects).  A simple-string dictionary is a count and (key RVA, value
 * RVA) pairs, a list annotation a count and RVAs, an annotation object a
 * (name RVA, type u16, reserved u16, value RVA); every string is
 * MinidumpUTF8String, a 32-bit length and the bytes; an annotation value
 * is a length and bytes, text when its type is 1 (Crashpad's
 * client/annotation.h: Annotation::Type::kString).  Crashpad's
 * "indirectly referenced memory" is not a stream of its own: the 512 bytes
 * around each pointer found in a thread's registers and stack are more
 * ranges of the memory list (snapshot/capture_memory.cc) -- on Windows
 * only: its Linux snapshot returns no extra memory for the process, its
 * threads or the exception, whatever the client sets, and writes thread
 * stacks only.  Crashpad names a library the dynamic loader found by its
 * soname, and writes no Linux maps stream.
 * Breakpad writes, for a Linux signal, the signal number as the exception
 * code, si_code as the flags and the si_addr word of siginfo_t (the fault
 * address, or a sender's pid and uid) as the address.
 */
#include "dump_int.h"
#include "minidump_int.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MD_SIGNATURE        0x504d444du   /* "MDMP" */
#define MD_THREAD_LIST      3
#define MD_MODULE_LIST      4
#define MD_MEMORY_LIST      5
#define MD_EXCEPTION        6
#define MD_SYSTEM_INFO      7
#define MD_MEMORY64_LIST    9
#define MD_MISC_INFO        15
#define MD_LINUX_STATUS     0x47670004u   /* /proc/PID/status as text (Breakpad: MD_LINUX_PROC_STATUS) */
#define MD_LINUX_CMDLINE    0x47670006u
#define MD_LINUX_AUXV       0x47670008u
#define MD_LINUX_MAPS       0x47670009u
#define MD_LINUX_DSO_DEBUG  0x4767000au   /* Breakpad writes it, lldb does not */
#define MD_LINUX_PROC_STAT  0x4767000bu   /* lldb writes it (LLVM's MinidumpConstants.def: LinuxProcStat) */
#define MD_CRASHPAD_INFO    0x43500001u   /* Crashpad's own stream ("CP" 1) */

#define MD_THREAD_SIZE      48
#define MD_MODULE_SIZE      108
#define MD_CV_BPEL          0x4270454cu   /* Breakpad's 'BpEL' (MD_CVINFOELF_SIGNATURE): build-id follows */
#define MD_CV_RSDS          0x53445352u   /* "RSDS": GUID form of the build-id */

/* Breakpad's exception code for a dump written on request, of a process
 * that got no signal (minidump_exception_linux.h,
 * MD_EXCEPTION_CODE_LIN_DUMP_REQUESTED): pid2md, ExceptionHandler::WriteMinidump */
#define MD_DUMP_REQUESTED   0xffffffffu

#define MD_MAX_STREAMS      4096
#define MD_MAX_RANGES       (1u << 20)


static enum pc_code corrupt(struct dump *d, const char *what, uint32_t type)
{
	dump_set_error(d, "minidump stream %u: %s", type, what);
	return PC_ECORRUPT;
}

/* A list stream: a 32-bit count, then COUNT entries of ITEM bytes, or 4
 * bytes of padding first when the stream is exactly 8 + COUNT * ITEM bytes
 * (Breakpad's Mac writer pads them so; its processor's rule, minidump.cc).
 * The first entry, or NULL with D's error naming the stream's NAME. */
static const uint8_t *md_list(struct dump *d, const struct md_stream *s, const char *name, uint32_t item,
			      uint32_t max, uint32_t *count)
{
	const uint8_t *p = md_at(d, s->rva, s->size);
	uint64_t need = p && s->size >= 4 ? (uint64_t)(*count = dump_le32(p)) * item : 0;
	const char *why = !p || s->size < 4 ? "outside the file" : "holds fewer entries than its count";
	if (p && s->size >= 4 && *count <= max) {
		if (s->size != 4 + need && s->size == 8 + need)
			return p + 8;
		if (need <= s->size - 4)
			return p + 4;
	}
	char what[64];
	snprintf(what, sizeof(what), "%s %s", name, why);
	corrupt(d, what, s->type);
	return NULL;
}

/* ------------------------------------------------------------------------
 * Streams
 * ------------------------------------------------------------------------ */

static enum pc_code thread_list(struct dump *d, const struct md_stream *s)
{
	uint32_t n;
	const uint8_t *p = md_list(d, s, "thread list", MD_THREAD_SIZE, DUMP_MAX_THREADS, &n);
	if (!p)
		return PC_ECORRUPT;
	/* the format has one: a second one's threads would be written past
	 * the first one's array, and which of them is true is unknown */
	if (d->threads)
		return corrupt(d, "a second thread list", s->type);
	d->threads = calloc(n ? n : 1, sizeof(*d->threads));
	if (!d->threads)
		return PC_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *t = p + (uint64_t)i * MD_THREAD_SIZE;
		struct dump_thread *dt = &d->threads[d->nthreads++];
		dt->tid = dump_le32(t);
		/* Teb: Breakpad leaves it 0 on Linux; pycore's own converter
		 * stores the thread pointer there */
		dt->regs.tp = dump_le64(t + 16);
		uint32_t csize = dump_le32(t + 40), crva = dump_le32(t + 44);
		const uint8_t *ctx = md_at(d, crva, csize);
		if (ctx && csize >= d->platform->minidump_context_size)
			d->platform->parse_minidump_context(ctx, &dt->regs);
		else
			dump_warn(d, "thread %lld: its registers are missing from the minidump", (long long)dt->tid);
	}
	return PC_OK;
}

/* One captured memory range: SIZE bytes at RVA of the file hold START... */
static enum pc_code add_range(struct dump *d, const struct md_stream *s, uint64_t start,
				  uint64_t size, uint64_t rva)
{
	const uint8_t *data = md_at(d, rva, size);
	if (!data || start + size < start)
		return corrupt(d, "a memory range outside the file", s->type);
	struct dump_segment seg = { start, start + size, data, NULL, 0, 0, false, false };
	return dump_add_segment(d, &seg);
}

static enum pc_code memory_list(struct dump *d, const struct md_stream *s)
{
	uint32_t n;
	const uint8_t *p = md_list(d, s, "memory list", 16, MD_MAX_RANGES, &n);
	if (!p)
		return PC_ECORRUPT;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *m = p + (uint64_t)i * 16;
		uint64_t start = dump_le64(m);
		uint32_t size = dump_le32(m + 8), rva = dump_le32(m + 12);
		enum pc_code st = add_range(d, s, start, size, rva);
		if (st != PC_OK)
			return st;
	}
	return PC_OK;
}

static enum pc_code memory64_list(struct dump *d, const struct md_stream *s)
{
	const uint8_t *p = md_at(d, s->rva, s->size);
	if (!p || s->size < 16)
		return corrupt(d, "memory64 list outside the file", s->type);
	uint64_t n = dump_le64(p), rva = dump_le64(p + 8);
	if (n > MD_MAX_RANGES || n * 16 > s->size - 16)
		return corrupt(d, "more memory ranges than the stream holds", s->type);
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *m = p + 16 + i * 16;
		uint64_t start = dump_le64(m), size = dump_le64(m + 8);
		enum pc_code st = add_range(d, s, start, size, rva);
		if (st != PC_OK)
			return st;
		rva += size;
	}
	return PC_OK;
}

/* MINIDUMP_STRING: a byte length, then UTF-16LE.  Paths are ASCII or
 * UTF-8 in practice; code points past 0x7f are written as UTF-8. */
static char *md_string(struct dump *d, uint32_t rva)
{
	uint32_t len;
	const uint8_t *s = md_counted(d, rva, 65536, &len);
	if (!s)
		return NULL;
	char *out = malloc(len / 2 * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (uint32_t i = 0; i + 1 < len; i += 2) {
		uint32_t cp = (uint32_t)s[i] | ((uint32_t)s[i + 1] << 8);
		if (cp < 0x80) {
			out[o++] = (char)cp;
		} else if (cp < 0x800) {
			out[o++] = (char)(0xc0 | (cp >> 6));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[o++] = (char)(0xe0 | (cp >> 12));
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	out[o] = '\0';
	return out;
}

static struct dump_module *add_module(struct dump *d, char *path, uint64_t base, uint64_t size)
{
	struct dump_module *m = dump_add_module(d, path);
	if (m) {
		m->start = m->base = base;
		m->end = base + size;
		m->base_from = "module list";
	}
	return m;
}

static enum pc_code module_list(struct dump *d, const struct md_stream *s)
{
	uint32_t n;
	const uint8_t *p = md_list(d, s, "module list", MD_MODULE_SIZE, DUMP_MAX_MODULES, &n);
	if (!p)
		return PC_ECORRUPT;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *mp = p + (uint64_t)i * MD_MODULE_SIZE;
		uint64_t base = dump_le64(mp);
		uint32_t size = dump_le32(mp + 8), name_rva = dump_le32(mp + 20);
		uint32_t cv_size = dump_le32(mp + 76), cv_rva = dump_le32(mp + 80);
		char *name = md_string(d, name_rva);
		if (!name)
			return corrupt(d, "a module name outside the file", s->type);
		struct dump_module *m = add_module(d, name, base, size);
		if (!m) {
			free(name);
			return PC_ENOMEM;
		}
		const uint8_t *cv = md_at(d, cv_rva, cv_size);
		if (cv && cv_size >= 8 && dump_le32(cv) == MD_CV_BPEL && cv_size - 4 <= sizeof(m->build_id)) {
			m->build_id_len = cv_size - 4;
			memcpy(m->build_id, cv + 4, m->build_id_len);
		} else if (cv && cv_size >= 24 && dump_le32(cv) == MD_CV_RSDS) {
			/* the GUID holds the build-id's first 16 bytes, its first
			 * three fields byte-swapped as little-endian integers */
			uint8_t g[16];
			memcpy(g, cv + 4, 16);
			uint8_t id[16] = { g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6] };
			memcpy(id + 8, g + 8, 8);
			memcpy(m->build_id, id, 16);
			m->build_id_len = 16;
			m->build_id_prefix = true;
		}
	}
	return PC_OK;
}

/* /proc/PID/maps lines (Breakpad's and lldb's MD_LINUX_MAPS stream): the
 * file-backed mappings, with their offsets.  The module list's size may
 * cover a module's first segment only (lldb writes the size of the mapping
 * at its base), and its path may differ from the maps' (lldb names
 * /lib/TUPLE/libc.so.6 what the maps call /usr/lib/TUPLE/...): a
 * module's mappings are the maps lines of the file mapped at its base,
 * told by device and inode, from that line up to the next file. */
struct maps_line {
	uint64_t start, end, off, inode;
	unsigned dev_major, dev_minor;
	bool readable, writable;
	const char *path;            /* into the stream's copy; "" for none */
};

#define MAPS_MAX_LINES   DUMP_MAX_MAPPINGS
/* lines looked at after a module's base line (anonymous .bss, guard gaps) */
#define MAPS_MODULE_SPAN 256

static int maps_line_cmp(const void *a, const void *b)
{
	const struct maps_line *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static bool same_file(const struct maps_line *a, const struct maps_line *b)
{
	if (a->inode || b->inode)
		return a->inode == b->inode && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor;
	return a->path[0] == '/' && strcmp(a->path, b->path) == 0;
}

static void module_add_mapping(struct dump_module *m, const struct maps_line *l)
{
	if (!l->readable)
		return; /* PROT_NONE alignment gaps: nothing there to read */
	struct dump_mapping *mp = realloc(m->maps, (m->nmaps + 1) * sizeof(*mp));
	if (!mp)
		return;
	m->maps = mp;
	mp[m->nmaps++] = (struct dump_mapping){ l->start, l->end, l->off, l->writable };
	if (l->start < m->start)
		m->start = l->start;
	if (l->end > m->end)
		m->end = l->end;
}

/* The lines of the file mapped at M's base: that line and the following
 * ones of the same file, up to another file's. */
static bool module_from_base(struct dump_module *m, const struct maps_line *v, size_t n)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start < m->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= n || v[lo].start != m->base || v[lo].path[0] != '/')
		return false;
	const struct maps_line *first = &v[lo];
	module_add_mapping(m, first);
	for (size_t j = lo + 1; j < n && j - lo < MAPS_MODULE_SPAN; j++) {
		if (!v[j].path[0])
			continue; /* anonymous: the image's .bss, or a gap */
		if (!same_file(first, &v[j]) || v[j].off == 0)
			break; /* another file, or the file mapped again */
		module_add_mapping(m, &v[j]);
	}
	return true;
}

static void linux_maps(struct dump *d, const struct md_stream *s)
{
	const uint8_t *p = md_at(d, s->rva, s->size);
	if (!p)
		return;
	char *text = strndup((const char *)p, s->size);
	size_t cap = 0, n = 0;
	struct maps_line *v = NULL;
	if (!text)
		return;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, end, off, inode;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
			   &inode, &pos) < 7 || pos <= 0 || end <= start || strlen(perms) < 2)
			continue;
		if (n == MAPS_MAX_LINES) {
			dump_warn(d, "the minidump's maps stream is too long: the rest of it was not read");
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct maps_line *nv = realloc(v, cap * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = (struct maps_line){ start, end, off, inode, maj, min, perms[0] == 'r', perms[1] == 'w',
					     line + pos };
		/* the mapping with its permissions and file, for what a fault hit (vmas.c) */
		if (dump_add_vma(d, start, end, perms[0] == 'r', perms[1] == 'w', perms[2] == 'x') == PC_ENOMEM ||
		    dump_add_vma_file(d, start, end, off, line + pos) == PC_ENOMEM)
			break;
	}
	if (n)  /* qsort's array may not be NULL, even empty (a stream without a line read) */
		qsort(v, n, sizeof(*v), maps_line_cmp);
	/* bounded work for modules not found by their base: lines times modules */
	uint64_t budget = 50000000;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (module_from_base(m, v, n))
			continue;
		for (size_t j = 0; j < n && budget; j++, budget--)
			if (strcmp(v[j].path, m->path) == 0)
				module_add_mapping(m, &v[j]);
	}
	if (!budget)
		dump_warn(d, "the minidump's maps stream is too long to match every module: some extents "
			  "are the module list's");
	free(v);
	free(text);
}

/* Breakpad's DSO debug stream: the dynamic linker's list as its writer
 * read it from the process (google_breakpad/common/minidump_format.h,
 * naturally aligned: MDRawDebug64 { u32 version; MDRVA map; u32
 * dso_count; u64 brk at 16, ldbase, dynamic } (40 bytes, the dynamic
 * section after it), map an array of MDRawLinkMap64 { u64 addr; MDRVA
 * name; u64 ld at 16 } (24 bytes)).  NULL (*N 0) when the stream is not
 * there or makes no sense: the loader's list in memory, if captured,
 * and the module list place the modules then. */
#define MD_DSO_DEBUG_SIZE 40
#define MD_LINK_MAP_SIZE  24

static struct dump_loaded *dso_debug_list(struct dump *d, const struct md_stream *s, size_t *n)
{
	*n = 0;
	const uint8_t *p = s->type ? md_at(d, s->rva, s->size) : NULL;
	if (!p)
		return NULL;
	uint32_t count = s->size >= MD_DSO_DEBUG_SIZE ? dump_le32(p + 8) : 0;
	const uint8_t *e = count && count <= DUMP_MAX_MODULES
		? md_at(d, dump_le32(p + 4), (uint64_t)count * MD_LINK_MAP_SIZE) : NULL;
	struct dump_loaded *v = e ? malloc(count * sizeof(*v)) : NULL;
	if (!v) {
		if (!e)
			dump_warn(d, "the minidump's DSO debug stream (the dynamic linker's list) makes no sense "
				  "(%u objects): module bases are the module list's", count);
		return NULL;
	}
	for (uint32_t i = 0; i < count; i++)
		v[i] = (struct dump_loaded){ dump_le64(e + (size_t)i * MD_LINK_MAP_SIZE),
					     dump_le64(e + (size_t)i * MD_LINK_MAP_SIZE + 16) };
	*n = count;
	return v;
}

static void linux_cmdline(struct dump *d, const struct md_stream *s)
{
	const uint8_t *p = md_at(d, s->rva, s->size);
	if (!p || s->size == 0 || s->size > 1 << 20)
		return;
	if (d->argv) {
		/* the format has one: the first stands (the second was leaked) */
		dump_warn(d, "a second command line stream in the minidump, ignored");
		return;
	}
	size_t n = 0;
	for (uint32_t i = 0; i < s->size; i++)
		n += p[i] == '\0';
	if (p[s->size - 1] != '\0')
		n++;
	char **argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return;
	size_t k = 0;
	for (uint32_t i = 0; i < s->size && k < n;) {
		size_t len = strnlen((const char *)p + i, s->size - i);
		argv[k++] = strndup((const char *)p + i, len);
		i += (uint32_t)len + 1;
	}
	d->argv = argv;
}

/* The number after "NAME:" at the start of a line of TEXT (LEN bytes,
 * /proc/PID/status: "PPid:\t1", "Uid:\t1000\t1000\t1000\t1000" whose
 * first is the real id), or -1.  For State, the letter ("State:\tS
 * (sleeping)") in *LETTER instead. */
static int64_t status_field(const char *text, size_t len, const char *name, char *letter)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < len; i++) {
		if ((i == 0 || text[i - 1] == '\n') && len - i > n && memcmp(text + i, name, n) == 0 &&
		    text[i + n] == ':') {
			size_t k = i + n + 1;
			while (k < len && (text[k] == '\t' || text[k] == ' '))
				k++;
			if (letter) {
				*letter = k < len && ((text[k] >= 'A' && text[k] <= 'Z') ||
						      (text[k] >= 'a' && text[k] <= 'z')) ? text[k] : 0;
				return 0;
			}
			int64_t v = 0;
			size_t digits = 0;
			for (; k < len && text[k] >= '0' && text[k] <= '9' && digits < 10; k++, digits++)
				v = v * 10 + (text[k] - '0');
			return digits && v <= UINT32_MAX ? v : -1;
		}
	}
	return -1;
}

/* Breakpad's and lldb's copy of /proc/PID/status: the parent, the real
 * uid and gid and the state. */
static void linux_status(struct dump *d, const struct md_stream *s)
{
	const char *text = (const char *)md_at(d, s->rva, s->size);
	if (!text || s->size > 1 << 20)
		return;
	d->ppid = status_field(text, s->size, "PPid", NULL);
	d->uid = status_field(text, s->size, "Uid", NULL);
	d->gid = status_field(text, s->size, "Gid", NULL);
	status_field(text, s->size, "State", &d->state);
	if (d->pid < 0) /* lldb and Breakpad write no misc info with the pid */
		d->pid = status_field(text, s->size, "Pid", NULL);
}

/* The entry point (AT_ENTRY) of MD_LINUX_AUXV: it tells the main program
 * among the modules; and the vDSO's address (AT_SYSINFO_EHDR). */
static void linux_auxv(struct dump *d, const struct md_stream *s)
{
	const uint8_t *p = md_at(d, s->rva, s->size);
	for (uint32_t off = 0; p && off + 16 <= s->size; off += 16) {
		if (dump_le64(p + off) == AT_ENTRY)
			d->auxv_entry = dump_le64(p + off + 8);
		else if (dump_le64(p + off) == AT_SYSINFO_EHDR)
			d->auxv_vdso = dump_le64(p + off + 8);
	}
}

/* ------------------------------------------------------------------------
 * The reader
 * ------------------------------------------------------------------------ */

/* The systems other than Linux that SystemInfo's platform id (at byte
 * 20: MDRawSystemInfo, Breakpad's minidump_format.h, MD_OS_*) names, with
 * their article; NULL for Linux, Android and ids unknown or unset. */
static const char *md_os_name(uint32_t id)
{
	switch (id) {
	case 1: return "a Windows 9x";
	case 2: return "a Windows";
	case 3: return "a Windows CE";
	case 0x8101: return "a macOS";
	case 0x8102: return "an iOS";
	case 0x8202: return "a Solaris";
	case 0x8204: return "a PS3";
	case 0x8205: return "a Native Client";
	case 0x8206: return "a Fuchsia";
	default: return NULL;
	}
}

enum pc_code dump_minidump_open(struct dump *d)
{
	d->format = "minidump";
	if (d->p->map_len < 32) {
		dump_set_error(d, "truncated minidump header (%zu bytes)", d->p->map_len);
		return PC_ECORRUPT;
	}
	uint32_t nstreams = dump_le32(d->p->map + 8), dir_rva = dump_le32(d->p->map + 12);
	if (nstreams > MD_MAX_STREAMS) {
		dump_set_error(d, "minidump declares %u streams", nstreams);
		return PC_ECORRUPT;
	}
	const uint8_t *dir = md_at(d, dir_rva, (uint64_t)nstreams * 12);
	if (!dir) {
		dump_set_error(d, "minidump stream directory (%u entries at %u) runs past the end of the file",
			       nstreams, dir_rva);
		return PC_ECORRUPT;
	}
	struct md_stream maps = { 0 }, exc = { 0 }, stop = { 0 }, cpinfo = { 0 }, auxv = { 0 }, dso = { 0 };
	enum pc_code st = PC_OK;
	bool proc_stat = false, crashpad = false;
	/* the platform first: it reads the threads' contexts */
	d->platform = platform_minidump_default();
	for (uint32_t i = 0; i < nstreams; i++) {
		uint32_t type = dump_le32(dir + 12 * i), size = dump_le32(dir + 12 * i + 4);
		const uint8_t *si = md_at(d, dump_le32(dir + 12 * i + 8), size);
		if (type != MD_SYSTEM_INFO || !si || size < 2)
			continue;
		const char *os = size >= 24 ? md_os_name(dump_le32(si + 20)) : NULL;
		if (os) {
			dump_set_error(d, "minidump of %s process, not of a Linux one: pycore reads Linux "
				       "processes only", os);
			return PC_EUNSUPPORTED;
		}
		uint32_t cpu = dump_le32(si) % 65536;
		if (!(d->platform = platform_by_minidump(cpu))) {
			char buf[48];
			const char *name = platform_minidump_name(cpu, buf, sizeof(buf));
			if (name == buf)
				dump_set_error(d, "minidump of a process of %s: pycore cannot analyze its dumps", name);
			else
				dump_set_error(d, "minidump of %s %s process: pycore cannot analyze %s dumps yet",
					       platform_article(name), name, name);
			return PC_EUNSUPPORTED;
		}
		break;
	}
	for (uint32_t i = 0; i < nstreams && st == PC_OK; i++) {
		struct md_stream s = { dump_le32(dir + 12 * i), dump_le32(dir + 12 * i + 4), dump_le32(dir + 12 * i + 8) };
		if (s.type != 0 && !md_at(d, s.rva, s.size)) {
			st = corrupt(d, "points past the end of the file", s.type);
			break;
		}
		switch (s.type) {
		case MD_THREAD_LIST: st = thread_list(d, &s); break;
		case MD_MODULE_LIST: st = module_list(d, &s); break;
		case MD_MEMORY_LIST: st = memory_list(d, &s); break;
		case MD_MEMORY64_LIST: st = memory64_list(d, &s); break;
		case MD_EXCEPTION:
			/* lldb writes one per thread with a stop reason: the first
			 * that is not SIGSTOP (a debugger's stop) is the crash */
			if (s.size < 40 || dump_le32(d->p->map + s.rva + 8) == 0 ||
			    dump_le32(d->p->map + s.rva + 8) == MD_DUMP_REQUESTED)
				break; /* a thread without a signal, or a dump on request */
			if (dump_le32(d->p->map + s.rva + 8) == 19)
				stop = stop.type ? stop : s;
			else if (!exc.type)
				exc = s;
			break;
		case MD_LINUX_MAPS: maps = s; break;
		case MD_LINUX_DSO_DEBUG: dso = dso.type ? dso : s; break;
		case MD_LINUX_PROC_STAT: proc_stat = true; break;
		case MD_CRASHPAD_INFO: crashpad = true; cpinfo = cpinfo.type ? cpinfo : s; break;
		case MD_LINUX_AUXV: linux_auxv(d, &s); auxv = s; break;
		case MD_LINUX_CMDLINE: linux_cmdline(d, &s); break;
		case MD_LINUX_STATUS: linux_status(d, &s); break;
		case MD_MISC_INFO:
			if (s.size >= 12 && (dump_le32(d->p->map + s.rva + 4) & 1))
				d->pid = dump_le32(d->p->map + s.rva + 8);
			break;
		default:
			break;
		}
	}
	if (st == PC_OK && d->nthreads == 0) {
		dump_set_error(d, "minidump has no thread list");
		st = PC_ECORRUPT;
	}
	if (st != PC_OK)
		return st;
	/* which producer: for saying what setting would have captured more */
	if (crashpad || dso.type)
		d->capture_hint = crashpad ? "Crashpad's Linux handler writes thread stacks and no heap "
			"whatever the client sets (CrashpadInfo's gather_indirectly_referenced_memory and "
			"extra memory ranges are read on Windows only): a core dump holds it"
			: "Breakpad's Linux minidumps hold thread stacks and no heap: it captures only memory "
			  "registered with ExceptionHandler::RegisterAppMemory (a core dump holds it all)";
	else if (proc_stat)
		d->capture_hint = "lldb captures it with process save-core --style=full or "
			"--style=modified-memory";
	else
		d->capture_hint = "a full-memory minidump holds it (lldb: process save-core --style=full or "
			"modified-memory), or a core dump";
	/* lldb's SIGSTOP is its own attach stop, not something the process got */
	if (!exc.type && !(proc_stat && !dso.type && !crashpad))
		exc = stop;
	if (maps.type)
		linux_maps(d, &maps);
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (m->nmaps == 0) {
			/* no maps of it: the whole image as one mapping, until
			 * its file's program headers say better */
			m->extent_from_list = true;
			m->maps = malloc(sizeof(*m->maps));
			if (m->maps) {
				m->maps[0] = (struct dump_mapping){ m->start, m->end, 0, false };
				m->nmaps = 1;
			}
		}
	}
	st = dump_segments_finish(d);
	if (st == PC_OK)
		st = dump_add_file_segments(d);
	if (st != PC_OK)
		return st;
	size_t nloaded;
	struct dump_loaded *loaded = dso_debug_list(d, &dso, &nloaded);
	dump_place_modules(d, auxv.type ? md_at(d, auxv.rva, auxv.size) : NULL, auxv.size, loaded, nloaded);
	free(loaded);
	/* a module the loader's list shows to be another mapping of a loaded
	 * file: left out, and the file-backed segments, which point to their
	 * modules, made again */
	if (dump_drop_unloaded_copies(d) && (st = dump_redo_file_segments(d)) != PC_OK)
		return st;
	for (size_t i = 0; i < d->nmodules; i++)
		if (!d->modules[i].build_id_len)
			dump_read_build_id(d, d->modules[i].base, d->modules[i].build_id,
					   &d->modules[i].build_id_len);
	if (exc.type && exc.size >= 40) {
		const uint8_t *e = d->p->map + exc.rva;
		d->has_signal = true;
		d->crashed_tid = dump_le32(e);
		d->signal.number = (int)dump_le32(e + 8);
		d->signal.code = (int)dump_le32(e + 12);
		/* the registers at the signal (the exception stream's
		 * ThreadContext, after the 152-byte exception record): Crashpad's
		 * thread list has the crashed thread as its handler left it (in
		 * the signal handler, on the alternate signal stack it does not
		 * capture), with the stack captured from the signal's stack
		 * pointer (snapshot/linux/process_snapshot_linux.cc) */
		const uint8_t *ctx = exc.size >= 168 ? md_at(d, dump_le32(e + 164), dump_le32(e + 160)) : NULL;
		uint64_t pc = 0, word = dump_le64(e + 24);
		for (size_t i = 0; i < d->nthreads; i++)
			if (d->threads[i].tid == d->crashed_tid) {
				if (ctx && dump_le32(e + 160) >= d->platform->minidump_context_size)
					d->platform->parse_minidump_context(ctx, &d->threads[i].regs);
				pc = d->threads[i].regs.pc;
			}
		/* Breakpad and Crashpad copy siginfo's si_code and si_addr word
		 * there (for a sent signal: the sender's pid and uid).  lldb 19
		 * writes flags 0 and the thread's pc (MinidumpFileBuilder::
		 * AddExceptions), from a live process or a core alike: no code,
		 * no sender, no fault address */
		bool lldb = (proc_stat && !dso.type && !crashpad) || (d->signal.code == 0 && word && word == pc);
		d->signal.has_code = !lldb;
		dump_signal_decode(&d->signal, word);
	}
	if (cpinfo.type)
		md_crashpad_info(d, &cpinfo);
	/* the module that holds the entry point; Breakpad and lldb list the
	 * main program first */
	struct dump_module *exe = d->auxv_entry ? dump_module_at(d, d->auxv_entry) : NULL;
	if (!exe && d->nmodules)
		exe = &d->modules[0];
	if (exe)
		d->executable = strdup(exe->path);
	return PC_OK;
}
