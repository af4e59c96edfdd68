/* Strings from a dump, written so that a terminal shows them and nothing
 * else: what repr() escapes in a str (control characters, other
 * characters str.isprintable() rejects) becomes \n, \r, \t, \xNN, \uNNNN
 * or \UNNNNNNNN as repr() writes it; bytes that are not UTF-8 become \xNN;
 * printable characters, ASCII or not, stay as they are.  A backslash is
 * left alone (a repr pycore formed already doubles its own), so the text
 * is for reading: the JSON report is the lossless form. */
#include "report/report.h"

#include <string.h>

#include "util/unicode.h"

/* The columns of the character at P (LEN bytes, 0: not UTF-8) as
 * report_put_escaped writes it. */
static size_t escaped_columns(size_t len, uint32_t cp)
{
	if (len == 0)
		return 4;                       /* \xNN */
	if (unicode_printable(cp))
		return 1;
	if (cp == '\n' || cp == '\r' || cp == '\t')
		return 2;
	return cp <= 0xff ? 4 : cp <= 0xffff ? 6 : 10;
}

size_t report_escaped_width(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t w = 0;
	while (n > 0 && *p) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);
		w += escaped_columns(len, cp);
		len = len ? len : 1;
		p += len;
		n -= len;
	}
	return w;
}

int report_put_escaped(FILE *out, const char *s)
{
	if (!s)
		return 0;
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	while (n > 0) {
		/* the longest run that needs no escape goes out as it is */
		size_t run = 0, len;
		uint32_t cp;
		while (run < n && (len = utf8_decode(p + run, n - run, &cp)) != 0 && unicode_printable(cp))
			run += len;
		if (run && fwrite(p, 1, run, out) != run)
			return -1;
		p += run;
		n -= run;
		if (n == 0)
			break;
		len = utf8_decode(p, n, &cp);
		int w;
		if (len == 0) {
			w = fprintf(out, "\\x%02x", p[0]);
			len = 1;
		} else if (cp == '\n') {
			w = fputs("\\n", out);
		} else if (cp == '\r') {
			w = fputs("\\r", out);
		} else if (cp == '\t') {
			w = fputs("\\t", out);
		} else if (cp <= 0xff) {
			w = fprintf(out, "\\x%02x", (unsigned)cp);
		} else if (cp <= 0xffff) {
			w = fprintf(out, "\\u%04x", (unsigned)cp);
		} else {
			w = fprintf(out, "\\U%08x", (unsigned)cp);
		}
		if (w < 0)
			return -1;
		p += len;
		n -= len;
	}
	return 0;
}
