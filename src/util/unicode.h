/* Text as Python sees it, for every layer that shows a string from a dump:
 * strict UTF-8 decoding and str.isprintable() of one character. */
#ifndef PYCORE_UTIL_UNICODE_H
#define PYCORE_UTIL_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether str.isprintable() is true for the one-character string CP
 * (CPython 3.13's Unicode database, src/util/unicode_printable.h). */
bool unicode_printable(uint32_t cp);

/* Decode the UTF-8 sequence at P (N bytes available) as Python's strict
 * decoder does: no overlong forms, no surrogates, nothing past U+10FFFF.
 * Returns its length with *CP set, or 0 when P[0] starts no valid
 * sequence (Python's surrogateescape would then take that one byte). */
size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

#endif
