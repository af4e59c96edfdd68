/* A native frame's arguments as one line of text, for the text report
 * and the HTML page alike (each escapes it its own way). */
#include "report/args_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string as gdb quotes a char pointer's: "text", C's escapes, other
 * control bytes in octal, then "..." when it goes on. */
static void write_c_string(FILE *out, const char *s, bool truncated)
{
	static const char named[] = "\a\b\f\n\r\t\v\"\\", names[] = "abfnrtv\"\\";
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		const char *k = strchr(named, *p);
		if (k)
			fprintf(out, "\\%c", names[k - named]);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
	}
	fputs(truncated ? "\"..." : "\"", out);
}

static void write_args(FILE *out, const struct model_frame *f)
{
	fputs(" (", out);
	for (size_t i = 0; i < f->args.n; i++) {
		const struct model_arg *a = f->args.items[i];
		fputs(i ? ", " : "", out);
		fputs(a->name ? a->name : "?", out);
		fputc('=', out);
		if (a->optimized_out) {
			fputs("<optimized out>", out);
			continue;
		}
		if (!a->value) {
			fputs("<unavailable: ", out);
			fputs(a->unavailable ? a->unavailable : "?", out);
			fputc('>', out);
			continue;
		}
		fputs(a->value, out);
		if (a->string && strncmp(a->string, "<redacted", 9) == 0) {
			fprintf(out, " %s", a->string);
		} else if (a->string) {
			fputc(' ', out);
			write_c_string(out, a->string, a->string_truncated);
		}
		if (a->repr) {
			fputc(' ', out);
			fputs(a->repr, out);
		}
	}
	fputc(')', out);
}

char *report_args_text(const struct model_frame *f)
{
	char *buf = NULL;
	size_t len = 0;
	if (!f->has_args)
		return strdup("");
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	write_args(m, f);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
