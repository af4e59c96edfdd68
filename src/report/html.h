/* The HTML renderers: one self-contained page per dump (html.c), and the
 * page primitives the crash dashboard (cli/group/group_html.c) shares with it.
 *
 * A page holds everything it shows: one inline <style>, one inline
 * <script> (it only adds buttons; everything is readable without it), no
 * external resource.  Its Content-Security-Policy (a <meta>) allows that
 * style and that script by their SHA-256 hashes and nothing else.  Every
 * string from a dump or a JSON Lines file goes through report_html_escape:
 * it only ever becomes text, never a tag, an attribute, a URL or a style. */
#ifndef PYCORE_REPORT_HTML_H
#define PYCORE_REPORT_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "model/model.h"

struct report_html_options {
	bool source;                 /* source lines (and carets) under Python frames */
	const struct locate_policy *files; /* where source files are found (locate.h's
					      locate_source_map); NULL: as recorded */
	bool all_threads;            /* a section per thread: identical stacks not grouped */
};

/* R as one HTML page.  0, or -1 when writing failed. */
int report_html_write(FILE *out, const struct model_report *r, const struct report_html_options *o);

/* S (any bytes; NULL writes nothing) as HTML text: & < > " ' as
 * character references; a control character, a bidi control and any
 * other character str.isprintable() rejects as the text report writes it
 * (\n, \t, \xNN, \u202e, ...), and each byte that is not UTF-8 as \xNN.
 * With MARK, each of those escapes inside <span class="esc">; without (SVG
 * text), as plain text.  0, or -1 on a write error. */
int report_html_escape(FILE *out, const char *s, bool mark);

/* The page's start up to and including <body>: doctype, charset, the CSP,
 * the style, TITLE (escaped) and KIND ("report", "dashboard") as the body's
 * class; and its end, with the script. */
void report_html_begin(FILE *out, const char *title, const char *kind);
void report_html_end(FILE *out);

/* The file name batch --html-dir gives the page of the dump at PATH (any
 * bytes): the last component's letters, digits, '.', '_' and '-' (others
 * as '_', at most 48), '-', 16 hex digits of FNV-1a 64 of all of PATH,
 * ".html".  Only those characters: safe in a file system and as a
 * relative link.  SIZE at least 80. */
void report_html_page_name(const char *path, char *buf, size_t size);

#endif
