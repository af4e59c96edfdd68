/* Source lines of the files Python frames name (source.c says how little
 * of the dump's path it trusts). */
#ifndef PYCORE_REPORT_SOURCE_H
#define PYCORE_REPORT_SOURCE_H

struct source_cache;

/* SYSROOT: looked in first (NULL: none).  NULL when out of memory. */
struct source_cache *source_cache_new(const char *sysroot);
void source_cache_free(struct source_cache *c);

/* Line LINE (from 1) of FILE, without its line end, as bytes of the file
 * (not checked to be UTF-8; at most 4096 of them); NULL when the file or
 * the line cannot be read.  Valid until the next call. */
const char *source_line(struct source_cache *c, const char *file, int line);

#endif
