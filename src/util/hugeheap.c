/* Transparent huge pages for malloc's main heap (hugeheap.h).
 *
 * glibc's malloc grows its main heap with brk: M_TOP_PAD makes it ask for
 * 8 MB more than a request needs; a few allocations until the break moves
 * make it grow once now, and madvise(MADV_HUGEPAGE) marks the 2 MB-aligned
 * part of that growth, which the heap's next blocks then fill (glibc's
 * own glibc.malloc.hugetlb=1 does the same after each growth, but can only
 * be set in the environment before the process starts).  Under the
 * sanitizers, whose allocators do not use the brk heap, and with another C
 * library, nothing is done. */
#include "util/hugeheap.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define HUGEHEAP_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HUGEHEAP_SANITIZED 1
#endif

#define HUGE_PAGE ((uintptr_t)2 << 20)	/* x86-64's and aarch64's (4 KB granule) PMD size */
#define HEAP_PAD ((size_t)8 << 20)

/* Held for the process's life: the heap below its first huge page
 * (volatile: a block that is never read is otherwise no call at all). */
static void *volatile below_huge_page;

void hugeheap_advise(void *p, size_t n)
{
#if defined(MADV_HUGEPAGE) && !defined(HUGEHEAP_SANITIZED)
	uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t end = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

void hugeheap_init(void)
{
#if defined(__GLIBC__) && defined(M_TOP_PAD) && defined(M_MMAP_THRESHOLD) && defined(MADV_HUGEPAGE) && \
	!defined(HUGEHEAP_SANITIZED)
	/* Requests up to 4 MB from the heap too (the report's 1 MB arena),
	 * not from mmaps of 4 KB pages. */
	if (mallopt(M_TOP_PAD, HEAP_PAD) != 1 || mallopt(M_MMAP_THRESHOLD, 4 << 20) != 1)
		return;
	uintptr_t before = (uintptr_t)sbrk(0);
	void *blocks[16];
	int n = 0;
	while (n < 16 && (uintptr_t)sbrk(0) == before && (blocks[n] = malloc(64 << 10)) != NULL)
		n++;
	uintptr_t end = (uintptr_t)sbrk(0);
	for (int i = 0; i < n; i++)
		free(blocks[i]);
	if (n == 0 || before == (uintptr_t)-1 || end <= before)
		return;	/* no brk heap (malloc fell back to mmap): leave it */
	uintptr_t start = (before + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (end < start + HUGE_PAGE)
		return;
	hugeheap_advise((void *)before, end - before);
	/* The heap hands out its lowest free addresses first: those below
	 * the first huge page, where the first block was carved from the top
	 * chunk (two words of header below it), are given to one block that
	 * is never freed nor touched past its header, so that the heap's
	 * next blocks start on the huge page. */
	uintptr_t top = (uintptr_t)blocks[0] - 2 * sizeof(size_t);
	if (start > top + 4 * sizeof(size_t) && start - top < HUGE_PAGE)
		below_huge_page = malloc(start - top - 4 * sizeof(size_t));
#endif
}
