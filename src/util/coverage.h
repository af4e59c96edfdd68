/* PC_NOT_COVERED: a function left out of libFuzzer's coverage
 * instrumentation (-fsanitize=fuzzer-no-link of a fuzzing build, clang 13
 * and later; nothing otherwise).  For code whose branches say nothing
 * about the input's path: a fuzz target's own checks of the output, and
 * the memory read that every object reader goes through (dump_read's
 * path within one segment and the segment lookup; a read across segments
 * keeps its coverage), whose tracing of comparisons with segment bounds
 * took a quarter of fuzz-asyncio's time.  The sanitizers still check it. */
#ifndef PYCORE_UTIL_COVERAGE_H
#define PYCORE_UTIL_COVERAGE_H

#if defined(__clang__) && __clang_major__ >= 13
#define PC_NOT_COVERED __attribute__((no_sanitize("coverage")))
#else
#define PC_NOT_COVERED
#endif

#endif
