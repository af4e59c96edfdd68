/* Unit test of the ELF core reader's note and segment parsing, on small
 * x86-64 cores built here in memory (a mock dump, beside the real-dump
 * tests of check-stacks.py; an arm64 one for the platform's notes), and
 * of its refusal of other machines' cores
 * and minidumps (headers only: a parser-level test).  Each case states what the reader
 * must make of it. */
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/dump.h"
#include "tests/unit/unit.h"



/* ---- building a core ---- */


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
	bool aarch64;              /* an arm64 core: its NT_PRSTATUS, NT_ARM_TLS, NT_ARM_PAC_MASK */
};

/* A core with one PT_NOTE and two PT_LOAD segments; memory at 0x10000 holds
 * the bytes 0..255 repeated, at 0x20000 the string "hello". */
static struct buf make_core(const struct core_spec *spec)
{
	struct buf notes = { 0 };
	for (int i = 0; spec->aarch64 && i < spec->nthreads; i++) {
		/* user_pt_regs at 112: x0-x30, sp, pc; tpidr_el0 in NT_ARM_TLS */
		uint8_t pr[392] = { 0 };
		int32_t pid = 1000 + i;
		uint64_t pc = 0x401000 + (uint64_t)i, tp[2] = { 0x7f0000 + (uint64_t)i * 0x1000, 0 };
		uint64_t pac[2] = { 0x007f000000000000, 0x007f000000000000 };
		memcpy(pr + 32, &pid, 4);
		memcpy(pr + 112 + 32 * 8, &pc, 8);
		put_note(&notes, "CORE", NT_PRSTATUS, pr, sizeof(pr), 0);
		put_note(&notes, "LINUX", 0x401, tp, sizeof(tp), 0);      /* NT_ARM_TLS */
		put_note(&notes, "LINUX", 0x406, pac, sizeof(pac), 0);    /* NT_ARM_PAC_MASK */
	}
	for (int i = 0; !spec->aarch64 && i < spec->nthreads; i++) {
		uint8_t pr[336] = { 0 };
		int16_t sig = (spec->signal && i == 0) ? 11 : 0;
		int32_t pid = 1000 + i;
		uint64_t rip = 0x401000 + (uint64_t)i, fs = 0x7f0000 + (uint64_t)i * 0x1000;
		memcpy(pr + 12, &sig, 2);
		memcpy(pr + 32, &pid, 4);
		memcpy(pr + 112 + 16 * 8, &rip, 8);   /* rip is register 16 */
		memcpy(pr + 112 + 21 * 8, &fs, 8);    /* fs_base is register 21 */
		uint64_t orig_rax = i == 0 ? 202 : UINT64_MAX, rdi = 0x7f0abc;
		memcpy(pr + 112 + 15 * 8, &orig_rax, 8);  /* orig_rax is register 15 */
		memcpy(pr + 112 + 14 * 8, &rdi, 8);       /* rdi is register 14 */
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
	eh.e_machine = spec->aarch64 ? platform_aarch64.elf_machine : platform_x86_64.elf_machine;
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
	struct pc_error *e = dump_open(path, NULL, d);
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
		CHECK(d->platform == &platform_x86_64, "platform %s", d->platform ? d->platform->name : "none");
		CHECK(d->threads[1].regs.pc == 0x401001, "pc %llx", (unsigned long long)d->threads[1].regs.pc);
		CHECK(d->threads[1].regs.dwarf[16] == 0x401001, "pc as DWARF's return address column");
		CHECK(d->threads[2].regs.tp == 0x7f2000, "thread pointer");
		/* orig_rax: thread 0 in futex(2) on the word rdi points to,
		 * thread 1 in no system call (-1) */
		CHECK(d->threads[0].regs.has_syscall && d->threads[0].regs.syscall == 202 &&
		      d->threads[0].regs.has_syscall_arg0 && d->threads[0].regs.syscall_arg0 == 0x7f0abc,
		      "futex(2) and its word");
		CHECK(!d->threads[1].regs.has_syscall && !d->threads[1].regs.has_syscall_arg0, "no system call");
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
		/* a signal frame read from the dump's memory as the platform lays
		 * it out (x86-64: siginfo at sp + 304, sigcontext at sp + 40, rip
		 * its 17th word): the page at 0x10000 holds the bytes 0..255 */
		struct dump_signal sig;
		struct platform_regs at;
		CHECK(dump_signal_frame(d, 0x10000, &sig, &at) == PC_OK && sig.number == 0x33323130 &&
		      sig.code == 0x3b3a3938 && at.pc == 0xafaeadacabaaa9a8ull, "signal frame %x %x %llx",
		      sig.number, sig.code, (unsigned long long)at.pc);
		CHECK(dump_signal_frame(d, 0x10000 + 4096 - 100, &sig, &at) == PC_ENOTCAPTURED,
		      "signal frame past the captured memory");
	}
	dump_close(d);
	free(b.p);
}

/* An arm64 core: registers, thread pointers and PAC masks from its notes;
 * pthread_self() just below the thread pointer, by the size of the
 * struct pthread the dump's glibc says (glibc 2.36's 1856 bytes until it
 * says; sid's 2.43 says 1824). */
static void test_aarch64_core(void)
{
	struct core_spec spec = { .nthreads = 2, .aarch64 = true };
	struct buf b = make_core(&spec);
	struct dump *d;
	enum pc_code st = open_bytes(b.p, b.n, &d);
	CHECK(st == PC_OK, "status %d: %s", st, last_error);
	if (st == PC_OK) {
		CHECK(d->platform == &platform_aarch64, "platform %s", d->platform ? d->platform->name : "none");
		CHECK(d->nthreads == 2 && d->threads[1].tid == 1001, "threads");
		CHECK(d->threads[1].regs.pc == 0x401001 && d->threads[1].regs.tp == 0x7f1000, "pc, tpidr_el0");
		CHECK(d->threads[0].regs.pac_mask == 0x007f000000000000, "PAC mask");
		CHECK(dump_tid_of_pthread(d, 0x7f1000 - 1856) == 1001, "glibc 2.36's struct pthread");
		CHECK(dump_tid_of_pthread(d, 0x7f1000 - 1824) == -1, "not yet 2.43's");
		CHECK(!dump_set_pthread_layout(d, 16, 8), "a struct pthread of 16 bytes refused");
		CHECK(dump_set_pthread_layout(d, 1824, 208), "2.43's layout");
		CHECK(dump_tid_of_pthread(d, 0x7f1000 - 1824) == 1001 && dump_tid_of_pthread(d, 0x7f0000 - 1824) == 1000,
		      "glibc 2.43's struct pthread");
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

/* A core's header with MACHINE, CLASS and DATA (e_type and e_machine in
 * that byte order), the rest of the x86-64 core of make_core */
static void expect_refused(uint16_t machine, uint8_t cls, uint8_t data, const char *want)
{
	struct core_spec spec = { .nthreads = 1 };
	struct buf b = make_core(&spec);
	b.p[EI_CLASS] = cls;
	b.p[EI_DATA] = data;
	uint16_t type = ET_CORE;
	int hi = data == ELFDATA2MSB ? 0 : 1;
	b.p[16 + hi] = (uint8_t)(type >> 8);
	b.p[17 - hi] = (uint8_t)type;
	b.p[18 + hi] = (uint8_t)(machine >> 8);
	b.p[19 - hi] = (uint8_t)machine;
	struct dump *d;
	enum pc_code st = open_bytes(b.p, b.n, &d);
	CHECK(st == PC_EUNSUPPORTED, "machine %u: status %d: %s", machine, st, last_error);
	CHECK(strcmp(last_error, want) == 0, "machine %u: '%s', want '%s'", machine, last_error, want);
	dump_close(d);
	free(b.p);
}

/* A minidump of one stream, SystemInfo, whose processor is CPU. */
static void expect_minidump_refused(uint16_t cpu, const char *want)
{
	uint8_t md[32 + 12 + 56] = { 0 };
	uint32_t hdr[4] = { 0x504d444d, 0xa793, 1, 32 };       /* "MDMP", version, 1 stream at 32 */
	uint32_t dir[3] = { 7, 56, 44 };                       /* SystemInfo, 56 bytes at 44 */
	memcpy(md, hdr, sizeof(hdr));
	memcpy(md + 32, dir, sizeof(dir));
	memcpy(md + 44, &cpu, 2);
	struct dump *d;
	enum pc_code st = open_bytes(md, sizeof(md), &d);
	CHECK(st == PC_EUNSUPPORTED, "minidump cpu %u: status %d: %s", cpu, st, last_error);
	CHECK(strcmp(last_error, want) == 0, "minidump cpu %u: '%s', want '%s'", cpu, last_error, want);
	dump_close(d);
}

static void test_other_machines(void)
{
	expect_refused(EM_AARCH64, ELFCLASS64, ELFDATA2MSB,
		       "core of an aarch64_be process: pycore cannot analyze aarch64_be dumps yet");
	expect_refused(EM_PPC64, ELFCLASS64, ELFDATA2LSB,
		       "core of a ppc64le process: pycore cannot analyze ppc64le dumps yet");
	expect_refused(EM_S390, ELFCLASS64, ELFDATA2MSB,
		       "core of an s390x process: pycore cannot analyze s390x dumps yet");
	expect_refused(EM_386, ELFCLASS32, ELFDATA2LSB,
		       "core of an i386 process: pycore cannot analyze i386 dumps yet");
	expect_refused(EM_RISCV, ELFCLASS64, ELFDATA2LSB,
		       "core of a riscv64 process: pycore cannot analyze riscv64 dumps yet");
	/* x32: x86-64's machine in a 32-bit core */
	expect_refused(EM_X86_64, ELFCLASS32, ELFDATA2LSB,
		       "core of an x32 process: pycore cannot analyze x32 dumps yet");
	expect_refused(0x1234, ELFCLASS64, ELFDATA2LSB,
		       "core of a process of ELF machine type 4660: pycore cannot analyze its dumps");
	expect_minidump_refused(0x8004, "minidump of a mips64 process: pycore cannot analyze mips64 dumps yet");
	expect_minidump_refused(5, "minidump of an arm process: pycore cannot analyze arm dumps yet");
	expect_minidump_refused(999, "minidump of a process of processor architecture 999: pycore cannot "
				"analyze its dumps");
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
	test_other_machines();
	test_aarch64_core();
	test_truncated_segment();
	char path[128];
	snprintf(path, sizeof(path), "%s/core", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
