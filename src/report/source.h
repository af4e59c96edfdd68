/* Source lines of the files Python frames name, found by locate/'s
 * policy (locate.h, locate_source_map). */
#ifndef PYCORE_REPORT_SOURCE_H
#define PYCORE_REPORT_SOURCE_H

struct locate_policy;
struct source_cache;

/* FILES: the policy files are found by (it must outlive the cache; NULL:
 * the names as recorded).  NULL when out of memory. */
struct source_cache *source_cache_new(const struct locate_policy *files);
void source_cache_free(struct source_cache *c);

/* Line LINE (from 1) of FILE, without its line end, as bytes of the file
 * (not checked to be UTF-8; at most 4096 of them); NULL when the file or
 * the line cannot be read.  Valid until the next call. */
const char *source_line(struct source_cache *c, const char *file, int line);

#endif
