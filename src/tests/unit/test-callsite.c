/* The platforms' readings of machine code for unwinding without call
 * frame information (platform.h: call_before, plt_slot), on code the
 * system's assemblers made: test-callsite.sh assembles and links a
 * program for each architecture and gives, for each case, the addresses
 * its symbol table names.  Usage:
 *
 *   test-callsite ARCH CODE.bin VADDR < CASES
 *
 * CODE.bin is the program's text from VADDR on; each line of CASES is
 *   call RA KINDS TARGET   the code ending at RA ends in a call: KINDS
 *                          "direct" (naming TARGET), "indirect" or "none"
 *   plt STUB SLOT          a PLT stub at STUB jumps through the GOT slot SLOT
 * (hexadecimal addresses).  Prints each failure; exit 1 when one failed. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

static uint8_t code[1 << 16];
static size_t ncode;

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test-callsite x86_64|aarch64 CODE.bin VADDR < CASES\n");
		return 2;
	}
	const struct platform *p = strcmp(argv[1], "aarch64") == 0
		? platform_by_elf(EM_AARCH64, ELFCLASS64, ELFDATA2LSB) : platform_by_elf(EM_X86_64, ELFCLASS64, ELFDATA2LSB);
	FILE *f = fopen(argv[2], "rb");
	if (!p || !f) {
		fprintf(stderr, "test-callsite: no platform %s or no file %s\n", argv[1], argv[2]);
		return 2;
	}
	ncode = fread(code, 1, sizeof(code), f);
	fclose(f);
	uint64_t base = strtoull(argv[3], NULL, 16);
	char what[16], kinds[16];
	uint64_t a, b;
	int failures = 0, checks = 0;
	char line[256];
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "call %" SCNx64 " %15s %" SCNx64, &a, kinds, &b) == 3) {
			size_t n = p->call_window;
			uint64_t target = 0;
			if (a < base + n || a - base > ncode) {
				printf("FAIL call at %" PRIx64 ": outside the code\n", a);
				failures++;
				continue;
			}
			int got = p->call_before(code + (a - base) - n, n, a, &target);
			bool ok = strcmp(kinds, "none") == 0 ? got == 0
				: strcmp(kinds, "indirect") == 0 ? (got & PLATFORM_CALL_INDIRECT) != 0
				: (got & PLATFORM_CALL_DIRECT) != 0 && target == b;
			checks++;
			if (!ok) {
				printf("FAIL call ending at %" PRIx64 ": want %s %" PRIx64 ", got kinds %d target %" PRIx64 "\n",
				       a, kinds, b, got, target);
				failures++;
			}
		} else if (sscanf(line, "%15s %" SCNx64 " %" SCNx64, what, &a, &b) == 3 && strcmp(what, "plt") == 0) {
			size_t n = ncode - (a - base) < 16 ? ncode - (a - base) : 16;
			uint64_t slot = a >= base && a - base < ncode ? p->plt_slot(code + (a - base), n, a) : 0;
			checks++;
			if (slot != b) {
				printf("FAIL plt stub at %" PRIx64 ": slot %" PRIx64 ", want %" PRIx64 "\n", a, slot, b);
				failures++;
			}
		}
	}
	printf("%d of %d checks failed\n", failures, checks);
	return failures || !checks;
}
