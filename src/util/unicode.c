/* Strict UTF-8 and str.isprintable() (unicode.h). */
#include "util/unicode.h"

#include "util/unicode_printable.h"

bool unicode_printable(uint32_t cp)
{
	/* printable ASCII, most of any text, without the search */
	if (cp - 0x20 < 0x7f - 0x20)
		return true;
	size_t lo = 0, hi = sizeof(unicode_nonprintable) / sizeof(unicode_nonprintable[0]);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cp < unicode_nonprintable[mid][0])
			hi = mid;
		else if (cp > unicode_nonprintable[mid][1])
			lo = mid + 1;
		else
			return false;
	}
	return true;
}

/* RFC 3629's table of well-formed sequences: the second byte's range
 * depends on the first (which is how overlong forms and surrogates are
 * excluded), the others are 0x80-0xbf. */
size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	if (n == 0)
		return 0;
	unsigned char b = p[0];
	if (b < 0x80) {
		*cp = b;
		return 1;
	}
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	uint32_t v;
	if (b >= 0xc2 && b <= 0xdf) {
		len = 2;
		v = b & 0x1f;
	} else if (b >= 0xe0 && b <= 0xef) {
		len = 3;
		v = b & 0x0f;
		if (b == 0xe0)
			lo = 0xa0;
		else if (b == 0xed)
			hi = 0x9f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		len = 4;
		v = b & 0x07;
		if (b == 0xf0)
			lo = 0x90;
		else if (b == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (i > 1 && (p[i] < 0x80 || p[i] > 0xbf))
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	*cp = v;
	return len;
}
