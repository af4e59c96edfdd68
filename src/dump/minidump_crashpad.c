/* Crashpad's annotations in a minidump (its info stream, MDRawCrashpadInfo
 * in Breakpad's minidump_format.h): the process's and each module's simple
 * dictionaries, list annotations and annotation objects, under caps. */
#include "dump_int.h"
#include "minidump_int.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A MinidumpUTF8String (a 32-bit length, then the bytes) as a C string;
 * NULL when it is outside the file or too long to be a note. */
static char *md_utf8(struct dump *d, uint32_t rva)
{
	uint32_t len;
	const uint8_t *b = md_counted(d, rva, MD_MAX_NOTE, &len);
	return b ? strndup((const char *)b, len) : NULL;
}

/* Take NAME and VALUE (both freed when not kept) as an annotation of
 * MODULE; a value that could not be read (NULL) leaves it out, unless it
 * is one of an annotation that is not text (NOT_TEXT).  False: no more
 * annotations are taken (the caps, or out of memory). */
static bool add_annotation(struct dump *d, const char *module, char *name, char *value, bool not_text)
{
	size_t bytes = (name ? strlen(name) : 0) + (value ? strlen(value) : 0);
	if (d->p->notes_full || d->nannotations == MD_MAX_ANNOTATIONS ||
	    bytes > MD_MAX_NOTE_BYTES - d->p->note_bytes) {
		if (!d->p->notes_full)
			dump_warn(d, "the minidump's annotations are too many: the rest were not read");
		d->p->notes_full = true;
		free(name);
		free(value);
		return false;
	}
	if (!value && !not_text) {
		free(name);
		return true; /* unreadable: this one is left out */
	}
	struct dump_annotation *v = realloc(d->annotations, (d->nannotations + 1) * sizeof(*v));
	char *mod = module ? strdup(module) : NULL;
	if (!v || (module && !mod)) {
		if (v)
			d->annotations = v;
		free(mod);
		free(name);
		free(value);
		return false;
	}
	d->annotations = v;
	v[d->nannotations++] = (struct dump_annotation){ mod, name, value };
	d->p->note_bytes += bytes;
	return true;
}

/* A location descriptor at P: the array it points to, of COUNT (its first
 * word) items of ITEM bytes each after that word; NULL if it does not fit. */
static const uint8_t *md_array(struct dump *d, const uint8_t *loc, uint32_t item, uint32_t *count)
{
	uint32_t size = dump_le32(loc), rva = dump_le32(loc + 4);
	const uint8_t *p = size >= 4 ? md_at(d, rva, size) : NULL;
	if (!p)
		return NULL;
	*count = dump_le32(p);
	if ((uint64_t)*count * item > size - 4)
		return NULL;
	return p + 4;
}

/* A simple-string dictionary (its location descriptor at LOC). */
static void crashpad_dictionary(struct dump *d, const uint8_t *loc, const char *module)
{
	uint32_t n = 0;
	const uint8_t *e = md_array(d, loc, 8, &n);
	for (uint32_t i = 0; e && i < n; i++)
		if (!add_annotation(d, module, md_utf8(d, dump_le32(e + 8 * i)), md_utf8(d, dump_le32(e + 8 * i + 4)),
				    false))
			return;
}

static void crashpad_module(struct dump *d, const uint8_t *info, uint32_t size, const char *module)
{
	if (size < 28)
		return;
	uint32_t n = 0;
	const uint8_t *e = md_array(d, info + 4, 4, &n);         /* list annotations */
	for (uint32_t i = 0; e && i < n; i++)
		if (!add_annotation(d, module, NULL, md_utf8(d, dump_le32(e + 4 * i)), false))
			return;
	crashpad_dictionary(d, info + 12, module);
	e = md_array(d, info + 20, 12, &n);                      /* annotation objects */
	for (uint32_t i = 0; e && i < n; i++) {
		const uint8_t *o = e + 12 * i;
		bool text = dump_le16(o + 4) == MD_CRASHPAD_STRING;
		char *name = md_utf8(d, dump_le32(o));
		if (!name)
			continue;
		if (!add_annotation(d, module, name, text ? md_utf8(d, dump_le32(o + 8)) : NULL, !text))
			return;
	}
}

/* Crashpad's info stream: its annotations, the process's and each
 * module's (read after the module list: they name modules by index). */
void md_crashpad_info(struct dump *d, const struct md_stream *s)
{
	const uint8_t *p = md_at(d, s->rva, s->size);
	if (!p || s->size < 52)
		return;
	crashpad_dictionary(d, p + 36, NULL);
	uint32_t n = 0;
	const uint8_t *link = md_array(d, p + 44, 12, &n);
	for (uint32_t i = 0; link && i < n; i++) {
		const uint8_t *l = link + 12 * i;
		uint32_t index = dump_le32(l), size = dump_le32(l + 4);
		const uint8_t *info = md_at(d, dump_le32(l + 8), size);
		if (info)
			crashpad_module(d, info, size, index < d->nmodules ? d->modules[index].path : NULL);
	}
}

