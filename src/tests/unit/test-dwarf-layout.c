/* pycore's own DWARF reader (for custom builds) against the versions/
 * tables that gdb made from the same DWARF: every field must agree, and
 * every field of struct py_layout must be in versions/fields.txt.
 * usage: test-dwarf-layout MINOR ELF [MINOR ELF...]
 *   MINOR: 14 for the table of 3.14, 14t for that of its free-threaded build */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/runtime/dwarf_layout.h"
#include "python/runtime/runtime.h"

int main(int argc, char **argv)
{
	int failures = 0, checks = 0;
	size_t first = offsetof(struct py_layout, runtime_interpreters_head);
	for (size_t off = first; off < sizeof(struct py_layout); off += sizeof(int64_t)) {
		checks++;
		if (!py_layout_field_name(off)) {
			printf("FAIL: the field at offset %zu of struct py_layout is not in versions/fields.txt\n", off);
			failures++;
		}
	}
	for (int i = 1; i + 1 < argc; i += 2) {
		/* "14", or "14t" for the free-threaded build's table */
		char *end;
		unsigned minor = (unsigned)strtoul(argv[i], &end, 10);
		bool ft = *end == 't';
		const struct py_layout *table = py_layout_for(minor, ft);
		int fd = open(argv[i + 1], O_RDONLY);
		Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
		if (!table || !dw) {
			printf("FAIL: 3.%s: %s\n", argv[i], !table ? "no table" : "no DWARF");
			failures++;
			continue;
		}
		struct py_layout L;
		const char *why = NULL;
		if (py_layout_from_dwarf(dw, minor, &L, &why) != 0) {
			printf("FAIL: 3.%s: %s\n", argv[i], why);
			failures++;
		}
		int diffs = 0;
		for (size_t off = first; off < sizeof(L); off += sizeof(int64_t)) {
			int64_t a, b;
			memcpy(&a, (char *)&L + off, 8);
			memcpy(&b, (const char *)table + off, 8);
			checks++;
			if (a != b) {
				printf("FAIL: 3.%s %s: DWARF reader %lld, table %lld\n", argv[i],
				       py_layout_field_name(off), (long long)a, (long long)b);
				diffs++;
			}
		}
		failures += diffs;
		printf("%s: 3.%s %s: %s\n", diffs ? "FAIL" : "ok", argv[i], argv[i + 1],
		       diffs ? "differs" : "every field agrees with the table");
		dwarf_end(dw);
		close(fd);
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
