/* hugeheap_init: back malloc's main heap with transparent huge pages
 * where the kernel allows them (its transparent_hugepage setting is
 * "always" or "madvise"; otherwise this changes nothing).
 *
 * pycore is a short process whose heap is a few megabytes (libdw's units
 * and line tables, the symbol index, the report): in a virtual machine a
 * fault of a 4 KB page costs about 10 us, and --native paid about 700 of
 * them, a fifth of its time.  A 2 MB page is one fault.  The heap grows
 * by 8 MB at once (M_TOP_PAD), so the huge pages' 2 MB-aligned ranges
 * lie inside it when it is touched; the memory resident grows by at most
 * the unused part of the last huge page touched. */
#ifndef PYCORE_UTIL_HUGEHEAP_H
#define PYCORE_UTIL_HUGEHEAP_H

#include <stddef.h>

void hugeheap_init(void);

/* The same for the N bytes at P, memory not touched yet (a big calloc,
 * which is an mmap's): its 2 MB-aligned part on huge pages, for a table
 * probed at random, whose probes on 4 KB pages each missed the TLB. */
void hugeheap_advise(void *p, size_t n);

#endif
