/* Reports name non-UTF-8 bytes as lone surrogates "\udc80".."\udcff"
 * (os.fsdecode's form), which jansson refuses.  Read each as the
 * private-use character U+F0080..U+F00FF instead (the surrogate pair
 * "\udb80\udcNN"), then turn it back into the byte or the escape. */
#ifndef PYCORE_JSONL_SURROGATES_H
#define PYCORE_JSONL_SURROGATES_H

#include <stdbool.h>
#include <stddef.h>

/* The N bytes of LINE with every lone "\udcNN" (NN 80-ff) as
 * "\udb80\udcNN", for json_loads; malloc'd, NULL when out of memory. */
char *jsonl_pair_surrogates(const char *line, size_t n);
/* S (a string jansson read from such a line, or wrote) with each of those
 * characters as its byte, or as "\udcNN" when JSON_TEXT; malloc'd. */
char *jsonl_unmark(const char *s, bool json_text);

#endif
