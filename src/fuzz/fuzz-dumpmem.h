/* fuzz-elfcore and fuzz-minidump: the input, its first four bytes
 * replaced by the format's magic so that every input reaches the reader,
 * opened as a dump in memory (dump_open_memory), then read the way the
 * layers above read a dump: every run of memory at its ends, every
 * module's build-id, every thread's stack (and a signal frame at its
 * stack pointer). */
#ifndef PYCORE_FUZZ_DUMPMEM_H
#define PYCORE_FUZZ_DUMPMEM_H

#include <string.h>

#include "dump/dump.h"
#include "fuzz-reader.h"

static void fuzz_dump_magic(const uint8_t *data, size_t size, const char magic[4])
{
	uint8_t *buf = malloc(size > 4 ? size : 4);
	if (!buf)
		return;
	memcpy(buf, magic, 4);
	if (size > 4)
		memcpy(buf + 4, data + 4, size - 4);
	struct dump *d;
	struct pc_error *e = dump_open_memory(buf, size > 4 ? size : 4, "fuzz", &d);
	if (e) {
		pc_error_free(e);
		dump_close(d);
		free(buf);
		return;
	}
	uint64_t addr = 0, end, word;
	for (int runs = 0; runs < 4096 && (addr = dump_next_held(d, addr, &end)) != 0; runs++) {
		dump_read_u64(d, addr, &word);
		dump_read_u64(d, end - 8, &word);
		dump_module_at(d, addr);
		if (end == 0)
			break;
		addr = end;
	}
	for (size_t i = 0; i < d->nmodules && i < 256; i++) {
		uint8_t id[64];
		size_t len;
		dump_read_build_id(d, d->modules[i].base, id, &len);
	}
	for (size_t i = 0; i < d->nthreads && i < 256; i++) {
		dump_tid_of_stack_address(d, d->threads[i].regs.sp + 64);
		struct dump_signal sig;
		struct platform_regs at;
		dump_signal_frame(d, d->threads[i].regs.sp, &sig, &at);
	}
	size_t nw;
	dump_warnings(d, &nw);
	dump_close(d);
	free(buf);
}

#endif
