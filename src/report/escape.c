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
