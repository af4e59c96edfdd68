/* A module file's sections, as symbols_section_at finds them. */
#include "symbols/symbols.h"

#include <string.h>

long symbols_section_data(struct symbols *s, struct dump_module *m, const char *name, const void **data)
{
	return symbols_section_at(s, m, name, data, NULL);
}

long symbols_section(struct symbols *s, struct dump_module *m, const char *name, void *buf, size_t cap)
{
	const void *data;
	long n = symbols_section_data(s, m, name, &data);
	if (n >= 0)
		memcpy(buf, data, (size_t)n < cap ? (size_t)n : cap);
	return n;
}
