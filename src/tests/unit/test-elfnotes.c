/* Unit test of the ELF core reader's note and segment parsing, on small
 * cores built here in memory (a mock dump, beside the real-dump tests of
 * check-stacks.py).  Each case states what the reader must make of it. */
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/dump.h"

static int failures, checks;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		checks++;                                                       \
		if (!(cond)) {                                                  \
			failures++;                                             \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
		}                                                               \
	} while (0)

/* ---- building a core ---- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
}

static void put_note(struct buf *b, const char *name, uint32_t type, const void *desc, size_t len,
		     uint32_t claimed_len)
{
	Elf64_Nhdr nh = { (uint32_t)strlen(name) + 1, claimed_len ? claimed_len : (uint32_t)len, type };
	put(b, &nh, sizeof(nh));
	char nm[8] = { 0 };
	memcpy(nm, name, strlen(name));
	put(b, nm, (nh.n_namesz + 3) & ~3u);
	static const uint8_t zero[4];
	put(b, desc, len);
	put(b, zero, (4 - len % 4) % 4);
}

struct core_spec {
	int nthreads;
	bool signal;               /* first thread has pr_cursig 11 */
	uint32_t note_claim;       /* nonzero: lie about the PRSTATUS size */
	bool nt_file_lie;          /* NT_FILE count larger than its bytes */
	bool overlap;              /* two PT_LOADs that overlap */
	uint16_t phnum_lie;        /* nonzero: e_phnum */
};

/* A core with one PT_NOTE and two PT_LOAD segments; memory at 0x10000 holds
 * the bytes 0..255 repeated, at 0x20000 the string "hello". */
static struct buf make_core(const struct core_spec *spec)
{
	struct buf notes = { 0 };
	for (int i = 0; i < spec->nthreads; i++) {
		uint8_t pr[336] = { 0 };
		int16_t sig = (spec->signal && i == 0) ? 11 : 0;
		int32_t pid = 1000 + i;
		uint64_t rip = 0x401000 + (uint64_t)i, fs = 0x7f0000 + (uint64_t)i * 0x1000;
		memcpy(pr + 12, &sig, 2);
		memcpy(pr + 32, &pid, 4);
		memcpy(pr + 112 + 16 * 8, &rip, 8);   /* rip is register 16 */
		memcpy(pr + 112 + 21 * 8, &fs, 8);    /* fs_base is register 21 */
		put_note(&notes, "CORE", NT_PRSTATUS, pr, sizeof(pr), i == 0 ? spec->note_claim : 0);
	}
	uint8_t ps[136] = { 0 };
	int32_t pid = 1000;
	memcpy(ps + 24, &pid, 4);
	memcpy(ps + 40, "python3", 7);
	memcpy(ps + 56, "python3 app.py  ", 16);
	put_note(&notes, "CORE", NT_PRPSINFO, ps, sizeof(ps), 0);
	if (spec->signal) {
		uint8_t si[128] = { 0 };
		int32_t signo = 11, code = 1;
		uint64_t addr = 0x10;
		memcpy(si, &signo, 4);
		memcpy(si + 8, &code, 4);
		memcpy(si + 16, &addr, 8);
		put_note(&notes, "CORE", NT_SIGINFO, si, sizeof(si), 0);
	}
	struct buf f = { 0 };
	uint64_t hdr[2] = { spec->nt_file_lie ? 1000 : 1, 4096 };
	uint64_t ent[3] = { 0x30000, 0x31000, 0 };
	put(&f, hdr, sizeof(hdr));
	put(&f, ent, sizeof(ent));
	put(&f, "/nonexistent/libfoo.so", 23);
	put_note(&notes, "CORE", NT_FILE, f.p, f.n, 0);
	free(f.p);

	struct buf core = { 0 };
	Elf64_Ehdr eh = { 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = spec->phnum_lie ? spec->phnum_lie : 3;
	put(&core, &eh, sizeof(eh));
	size_t data = sizeof(eh) + 3 * sizeof(Elf64_Phdr);
	Elf64_Phdr ph[3] = { 0 };
	ph[0].p_type = PT_NOTE;
	ph[0].p_offset = data;
	ph[0].p_filesz = notes.n;
	ph[1].p_type = PT_LOAD;
	ph[1].p_flags = PF_R | PF_W;
	ph[1].p_vaddr = 0x10000;
	ph[1].p_offset = data + notes.n;
	ph[1].p_filesz = ph[1].p_memsz = 4096;
	ph[2].p_type = PT_LOAD;
	ph[2].p_flags = PF_R;
	ph[2].p_vaddr = spec->overlap ? 0x10800 : 0x20000;
	ph[2].p_offset = data + notes.n + 4096;
	ph[2].p_filesz = ph[2].p_memsz = 4096;
	put(&core, ph, sizeof(ph));
	put(&core, notes.p, notes.n);
	uint8_t page[4096];
	for (int i = 0; i < 4096; i++)
		page[i] = (uint8_t)i;
	put(&core, page, sizeof(page));
	memset(page, 0, sizeof(page));
	memcpy(page, "hello", 6);
	put(&core, page, sizeof(page));
	free(notes.p);
	return core;
}

static char tmpdir[] = "/tmp/pycore-test-elfnotes-XXXXXX";

/* The last error's message, for the checks below. */
static char last_error[512];

static enum pc_code open_bytes(const uint8_t *p, size_t n, struct dump **d)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/core", tmpdir);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n) {
		perror(path);
		exit(99);
	}
	fclose(f);
	struct pc_error *e = dump_open(path, d);
	enum pc_code code = e ? e->code : PC_OK;
	snprintf(last_error, sizeof(last_error), "%s", e ? e->message : "");
	pc_error_free(e);
	return code;
}

/* ---- cases ---- */

static void test_good_core(void)
{
	struct core_spec spec = { .nthreads = 3, .signal = true };
	struct buf b = make_core(&spec);
	struct dump *d;
	enum pc_code st = open_bytes(b.p, b.n, &d);
	CHECK(st == PC_OK, "status %d: %s", st, last_error);
	if (st == PC_OK) {
		CHECK(d->nthreads == 3, "%zu threads", d->nthreads);
		CHECK(d->threads[0].tid == 1000 && d->threads[2].tid == 1002, "tids");
		CHECK(d->threads[1].regs.rip == 0x401001, "rip %llx", (unsigned long long)d->threads[1].regs.rip);
		CHECK(d->threads[2].regs.fs_base == 0x7f2000, "fs_base");
		CHECK(d->pid == 1000, "pid %lld", (long long)d->pid);
		CHECK(d->fname && strcmp(d->fname, "python3") == 0, "fname");
		CHECK(d->psargs && strcmp(d->psargs, "python3 app.py") == 0, "psargs '%s'", d->psargs);
		CHECK(d->has_signal && d->signal.number == 11 && d->signal.code == 1, "signal");
		CHECK(d->signal.has_address && d->signal.address == 0x10, "fault address");
		CHECK(d->crashed_tid == 1000, "crashed tid");
		CHECK(d->nmodules == 1 && strcmp(d->modules[0].path, "/nonexistent/libfoo.so") == 0,
		      "modules");
		uint8_t x[8];
		CHECK(dump_read(d, 0x10000 + 250, x, 8) == PC_OK && x[0] == 250 && x[7] == 1, "read");
		char s[16];
		CHECK(dump_read_cstr(d, 0x20000, s, sizeof(s)) == PC_OK && strcmp(s, "hello") == 0, "cstr");
		CHECK(dump_read(d, 0x10ffc, x, 8) == PC_ENOTCAPTURED, "read past a segment's end");
		CHECK(dump_read(d, 0x5000, x, 1) == PC_ENOTCAPTURED, "read below every segment");
		/* the module's file is missing: its pages are not captured */
		CHECK(dump_read(d, 0x30000, x, 1) == PC_ENOTCAPTURED, "file-backed page without its file");
	}
	dump_close(d);
	free(b.p);
}

static void expect_error(const char *what, const uint8_t *p, size_t n, enum pc_code want)
{
	struct dump *d;
	enum pc_code st = open_bytes(p, n, &d);
	CHECK(st == want, "%s: status %d (want %d): %s", what, st, want, last_error);
	CHECK(st == PC_OK || (last_error[0] && !strchr(last_error, '\n')), "%s: one-line error", what);
	dump_close(d);
}

static void test_bad_cores(void)
{
	struct core_spec spec = { .nthreads = 1 };
	struct buf b = make_core(&spec);
	expect_error("truncated ELF header", b.p, 40, PC_ECORRUPT);
	expect_error("four bytes", b.p, 4, PC_ECORRUPT);
	expect_error("program headers cut", b.p, sizeof(Elf64_Ehdr) + 10, PC_ECORRUPT);
	free(b.p);

	spec = (struct core_spec){ .nthreads = 1, .phnum_lie = 60000 };
	b = make_core(&spec);
	expect_error("e_phnum past the end", b.p, b.n, PC_ECORRUPT);
	free(b.p);

	spec = (struct core_spec){ .nthreads = 1, .note_claim = 0x7fffffff };
	b = make_core(&spec);
	expect_error("note with a huge size", b.p, b.n, PC_ECORRUPT);
	free(b.p);

	spec = (struct core_spec){ .nthreads = 1, .nt_file_lie = true };
	b = make_core(&spec);
	expect_error("NT_FILE with more entries than bytes", b.p, b.n, PC_ECORRUPT);
	free(b.p);

	spec = (struct core_spec){ .nthreads = 1, .overlap = true };
	b = make_core(&spec);
	expect_error("overlapping PT_LOADs", b.p, b.n, PC_ECORRUPT);
	free(b.p);

	spec = (struct core_spec){ .nthreads = 0 };
	b = make_core(&spec);
	expect_error("no threads", b.p, b.n, PC_ECORRUPT);
	free(b.p);

	Elf64_Ehdr eh = { 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_EXEC;
	expect_error("an executable", (uint8_t *)&eh, sizeof(eh), PC_EFORMAT);
	expect_error("text", (const uint8_t *)"hello world\n", 12, PC_EFORMAT);
}

static void test_truncated_segment(void)
{
	struct core_spec spec = { .nthreads = 1 };
	struct buf b = make_core(&spec);
	struct dump *d;
	/* cut inside the second PT_LOAD: the core opens, with a warning, and
	 * the missing bytes read as not captured */
	enum pc_code st = open_bytes(b.p, b.n - 4096 - 100, &d);
	CHECK(st == PC_OK, "truncated core opens: %d", st);
	if (st == PC_OK) {
		uint8_t x;
		size_t nw;
		const char *const *w = dump_warnings(d, &nw);
		CHECK(nw == 1 && strstr(w[0], "truncated"), "truncation warned");
		CHECK(dump_read(d, 0x10000, &x, 1) == PC_OK, "start still readable");
		CHECK(dump_read(d, 0x10fff, &x, 1) == PC_ENOTCAPTURED, "cut bytes not captured");
	}
	dump_close(d);
	free(b.p);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 99;
	}
	test_good_core();
	test_bad_cores();
	test_truncated_segment();
	char path[128];
	snprintf(path, sizeof(path), "%s/core", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
