/* jsonl_scan (src/jsonl/jsonl_scan.c) against jansson: lines it must read
 * (and read as jansson does, pruned), lines it must leave to jansson,
 * and 200,000 one- and two-byte mutations of a report-like line, each
 * checked by jsonl_scan_check (jansson reads whatever the scanner reads,
 * and the same).  Prints TAP. */
#include <stdint.h>

#include "jsonl/jsonl_scan_check.h"

static const char *reads[] = {
	"{}",
	" {\"a\": 1 } \r\n",
	"{\"a\":[1,-2,3.5e-3,0,-0,1E+2,true,false,null,\"x\"],\"b\":{\"c\":[{}]}}",
	"{\"input\":{\"path\":\"/a/\\udcff\\udc80b\",\"kind\":\"x\",\"kind\":\"y\"},\"a\":\"\\ud83d\\ude00\"}",
	"{\"frames\":[{\"kind\":\"python\",\"function\":\"f\",\"line\":3,\"locals\":[1,2]},"
	"{\"kind\":\"python\",\"function\":\"f\",\"line\":3},{\"line\":3,\"kind\":\"python\",\"function\":\"f\"}]}",
	"{\"frames\":[{\"kind\":\"python\",\"function\":\"f\",\"line\":3},{\"kind\":\"python\",\"function\":\"f\",\"line\":3}]}",
	"{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\xc3\xa9\xe2\x80\xae\xf0\x9f\x98\x80\\udb80\\udc80\",\"a\":2}",
	"{\"a\":123456789012345678,\"b\":-123456789012345678,\"c\":1.7976931348623157e308}",
	"{\"kind\":{\"x\":1},\"frames\":{\"kind\":[1],\"line\":\"x\"},\"input\":[{\"kind\":1},2,[3]]}",
	/* fuzz-jsonl's first find: a skipped object after kept scalars */
	"{\"kind\":\"python\",\"x\":\"y\",\"z\":{\"path\":\"p\"}}",
	"{\"frames\":[{\"kind\":\"k\",\"locals\":[{\"a\":1}]},{\"kind\":\"k\",\"locals\":{}},{}]}",
	"{\"\\u0061\":1,\"fr\\u0061mes\":[{\"\\u006bind\":\"k\"}]}",
};

static const char *refused[] = {
	"", "[]", "1", "\"a\"", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\":[1,]}",
	"{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}", "{\"a\":-}", "{\"a\":+1}", "{\"a\":truex}",
	"{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}",
	"{\"a\":\"\\udc00\"}", "{\"a\":\"\\ud800x\"}", "{\"a\":\"\x01\"}", "{\"a\":\"\xc0\xaf\"}",
	"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"\xe2\x82\"}", "{\"a\":1} x",
	"{\"a\":1}{}", "{\"a\":1e999}", "{\"a\":1234567890123456789}", "{\"a\":'x'}", "{a:1}",
};

/* N times C (N < 1024), in one of two buffers */
static const char *strrep(char c, int n)
{
	static char buf[2][1024];
	static int which;
	char *b = buf[which ^= 1];
	memset(b, c, (size_t)n);
	b[n] = 0;
	return b;
}

int main(void)
{
	int n = 0, failed = 0;
	printf("1..5\n");
	for (size_t i = 0; i < sizeof(reads) / sizeof(*reads); i++)
		if (!jsonl_scan_check(reads[i], strlen(reads[i]))) {
			printf("# not read: %s\n", reads[i]);
			failed = 1;
		}
	printf("%sok %d - %zu lines read as jansson reads them\n", failed ? "not " : "", ++n,
	       sizeof(reads) / sizeof(*reads));
	int f2 = 0;
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
		if (jsonl_scan_check(refused[i], strlen(refused[i]))) {
			printf("# read, not left to jansson: %s\n", refused[i]);
			f2 = 1;
		}
	char nul[] = "{\"a\":\"x\0y\"}";
	if (jsonl_scan(nul, sizeof(nul) - 1, NULL)) {
		printf("# a NUL byte read\n");
		f2 = 1;
	}
	printf("%sok %d - %zu bad lines and a NUL byte left to jansson\n", f2 ? "not " : "", ++n,
	       sizeof(refused) / sizeof(*refused));
	failed |= f2;
	/* mutations: jsonl_scan_check aborts on any difference */
	const char *base = reads[4];
	size_t len = strlen(base);
	char buf[512];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned long accepted = 0;
	static const char alphabet[] = "{}[]\":,\\u0123456789abcdefE.-+tnl \xc3\xa9\xed\xff\x01";
	for (int round = 0; round < 200000; round++) {
		memcpy(buf, base, len + 1);
		for (int m = 0; m < 1 + round % 2; m++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[x % len] = alphabet[(x >> 32) % (sizeof(alphabet) - 1)];
		}
		accepted += (unsigned long)jsonl_scan_check(buf, len);
	}
	printf("%sok %d - 200000 mutations of a line: %lu read, each as jansson reads it\n", accepted ? "" : "not ",
	       ++n, accepted);
	/* one object's text under two prunings: each its own (the scanner
	 * looks objects up by their text) */
	static const struct jsonl_keep keep_a[] = { { "a", NULL }, { NULL, NULL } };
	static const struct jsonl_keep keep_b[] = { { "b", NULL }, { NULL, NULL } };
	static const struct jsonl_keep keep_xy[] = { { "x", keep_a }, { "y", keep_b }, { NULL, NULL } };
	static const char twice[] = "{\"x\":{\"a\":1,\"b\":2},\"y\":{\"a\":1,\"b\":2},\"z\":[{\"x\":{\"a\":1,\"b\":2}}]}";
	int f4 = !jsonl_scan_check_one(twice, strlen(twice), keep_xy) || !jsonl_scan_check_one(twice, strlen(twice), keep_xy);
	/* a frame's text read shallow, then again nested past the scanner's
	 * limit (512): looked up, it is still refused */
	char deep[4096], t[2048];
	int tl = snprintf(t, sizeof(t), "{\"kind\":\"k\",\"x\":%s1%s}", strrep('[', 300), strrep(']', 300));
	int d1 = snprintf(deep, sizeof(deep), "{\"frames\":[%.*s]}", tl, t);
	f4 |= !jsonl_scan_check_one(deep, (size_t)d1, check_keep);
	int d2 = snprintf(deep, sizeof(deep), "{\"frames\":[%s%.*s%s]}", strrep('[', 250), tl, t, strrep(']', 250));
	json_t *j = jsonl_scan(deep, (size_t)d2, check_keep);
	f4 |= j != NULL;
	json_decref(j);
	printf("%sok %d - one object's text pruned two ways, each as jansson's pruned; nested too deep, "
	       "left to jansson\n", f4 ? "not " : "", ++n);
	failed |= f4;
	/* skipped containers of 256 bytes or more are kept by their text and
	 * passed over when met again (jsonl_skip.c): a line read, then its
	 * mutations (each container changed, or the same and what follows it
	 * changed), then the container nested past the limit */
	char big[2048], mut[2048];
	int bl = snprintf(big, sizeof(big), "{\"m\":{\"p\":\"%s\",\"q\":[1,2.5,\"\\u00e9\",{\"r\":null}]},",
			  strrep('x', 260));
	bl += snprintf(big + bl, sizeof(big) - (size_t)bl, "\"n\":[[\"%s\"],{\"s\":\"%s\"}],\"kind\":\"k\",\"t\":[true,false],",
		       strrep('y', 280), strrep('z', 270));
	/* and kept ones, pruned: each the value made the first time */
	bl += snprintf(big + bl, sizeof(big) - (size_t)bl, "\"frames\":[{\"kind\":\"python\",\"function\":\"%s\","
		       "\"line\":3,\"locals\":{\"a\":[1,2]}},{\"kind\":\"native\"}],\"input\":{\"path\":\"%s\",\"x\":[1]}}",
		       strrep('f', 260), strrep('p', 260));
	int f5 = !jsonl_scan_check(big, (size_t)bl) || !jsonl_scan_check(big, (size_t)bl);
	unsigned long read5 = 0;
	static const char alphabet5[] = "{}[]\":,\\u0e.-tn \xc3\xff\x01xyzfp";
	for (int round = 0; round < 20000; round++) {
		memcpy(mut, big, (size_t)bl + 1);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		mut[x % (size_t)bl] = alphabet5[(x >> 32) % (sizeof(alphabet5) - 1)];
		read5 += (unsigned long)jsonl_scan_check(mut, (size_t)bl);
		f5 |= !jsonl_scan_check(big, (size_t)bl);
	}
	char w[301];
	memcpy(w, strrep('w', 300), 301);
	int nl = snprintf(t, sizeof(t), "{\"m\":%s\"%s\"", strrep('[', 300), w);
	nl += snprintf(t + nl, sizeof(t) - (size_t)nl, "%s,\"kind\":\"k\"}", strrep(']', 300));
	f5 |= !jsonl_scan_check_one(t, (size_t)nl, check_keep) || !jsonl_scan_check_one(t, (size_t)nl, check_keep);
	/* the same container, met 250 levels deeper: past the limit */
	int d3 = snprintf(deep, sizeof(deep), "{\"frames\":[%s{\"kind\":\"k\",\"m\":", strrep('[', 250));
	d3 += snprintf(deep + d3, sizeof(deep) - (size_t)d3, "%.*s}", nl - 5 - 12, t + 5);
	d3 += snprintf(deep + d3, sizeof(deep) - (size_t)d3, "%s]}", strrep(']', 250));
	j = jsonl_scan(deep, (size_t)d3, check_keep);
	f5 |= j != NULL;
	json_decref(j);
	printf("%sok %d - skipped containers met again: 20000 mutations, %lu read, each as jansson reads it; "
	       "nested too deep, left to jansson\n", f5 || !read5 ? "not " : "", ++n, read5);
	failed |= f5 || !read5;
	jsonl_scan_end();
	return failed || !accepted;
}
