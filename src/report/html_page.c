/* What every HTML page of pycore shares: the one escaping function, the
 * page's start and end (the Content-Security-Policy, the inline style and
 * script and their hashes), and the safe file names of batch --html-dir. */
#include "report/html.h"

#include <pthread.h>
#include <string.h>

#include "util/hash.h"
#include "util/sha256.h"
#include "util/unicode.h"

/* ------------------------------------------------------------------------
 * Escaping
 * ------------------------------------------------------------------------ */

int report_html_escape(FILE *out, const char *s, bool mark)
{
	if (!s)
		return 0;
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	while (n > 0) {
		/* the longest run that needs nothing goes out as it is */
		size_t run = 0, len;
		uint32_t cp;
		while (run < n && (len = utf8_decode(p + run, n - run, &cp)) != 0 && unicode_printable(cp) &&
		       cp != '&' && cp != '<' && cp != '>' && cp != '"' && cp != '\'')
			run += len;
		if (run && fwrite(p, 1, run, out) != run)
			return -1;
		p += run;
		n -= run;
		if (n == 0)
			break;
		len = utf8_decode(p, n, &cp);
		int w;
		const char *ref = len == 0 ? NULL : cp == '&' ? "&amp;" : cp == '<' ? "&lt;" : cp == '>' ? "&gt;"
				  : cp == '"' ? "&quot;" : cp == '\'' ? "&#39;" : NULL;
		if (ref) {
			w = fputs(ref, out);
		} else {
			if (mark && fputs("<span class=\"esc\">", out) == EOF)
				return -1;
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
			if (w >= 0 && mark && fputs("</span>", out) == EOF)
				return -1;
		}
		if (w < 0)
			return -1;
		p += len;
		n -= len;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * The page
 * ------------------------------------------------------------------------ */

/* No style attribute anywhere (the CSP allows none): SVG shapes take
 * their colours from classes, their geometry from attributes. */
static const char style[] =
	":root{--fg:#1d2330;--mut:#5b6475;--bg:#f4f5f8;--card:#fff;--line:#dde1e7;--red:#c62828;"
	"--acc:#2457c5;--warnbg:#fff6dd}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);"
	"background:var(--bg)}\n"
	"header.top{background:#1d2330;color:#fff;padding:12px 24px}\n"
	"header.top h1{margin:0;font-size:18px;font-weight:600}\n"
	".sub{color:#b9c1d0;font-size:13px;word-break:break-all}\n"
	"main{padding:14px 24px;max-width:1280px}\n"
	"section.card{background:var(--card);border:1px solid var(--line);border-radius:6px;"
	"padding:10px 16px;margin:0 0 14px}\n"
	"h2{font-size:16px;margin:0 0 8px}h3{font-size:14px;margin:0 0 4px}\n"
	".answer{font-size:17px;font-weight:600;word-break:break-word}\n"
	".kind{display:inline-block;padding:1px 8px;border-radius:10px;background:var(--red);color:#fff;"
	"font-size:12px;margin-right:6px;vertical-align:2px}\n"
	".kind.snapshot{background:var(--acc)}.kind.signal-sent{background:#b35c00}\n"
	"section.warnings{background:var(--warnbg);border-color:#e8c66a}\n"
	"code,pre,.mono,td{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}\n"
	"pre{margin:1px 0 1px 2em;white-space:pre-wrap;word-break:break-all}\n"
	".esc{color:#a0399c;background:#f7e6f6;border-radius:2px}\n"
	"dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}\n"
	"dl.facts dt{color:var(--mut)}dl.facts dd{margin:0;word-break:break-all}\n"
	"ol.frames{list-style:none;padding:0;margin:4px 0}\n"
	"li.frame{padding:2px 0;border-top:1px solid #f0f1f4;word-break:break-all}\n"
	".file{color:#6a3d9a}.func{font-weight:600}.lineno{color:#6a3d9a}\n"
	".hl{background:#ffdcdc}.caret{color:var(--red)}\n"
	"li.native{color:var(--mut)}li.native .func{font-weight:400}li.gc{color:#8a5a00}\n"
	"table{border-collapse:collapse;margin:4px 0 4px 2em}\n"
	"td,th{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top;"
	"word-break:break-all}\n"
	"th{background:#f0f2f5;font-weight:600;font-family:inherit}\n"
	"tr.attr td.name{padding-left:18px}\n"
	".mark{display:inline-block;font:11px system-ui,sans-serif;padding:0 6px;border-radius:8px;"
	"background:#eceef2;color:#444;margin-left:4px}\n"
	".mark.redacted{background:#333;color:#fff}.mark.cut{background:#e3ecfb;color:#1d3f86}\n"
	".mark.error{background:#fde2e2;color:#8b1a1a}\n"
	"section.thread.gil{border-left:4px solid var(--acc)}\n"
	"section.thread.crashed{border-left:4px solid var(--red)}\n"
	/* a page of many threads: their stacks folded, their sections laid
	 * out only when scrolled to (html.c, HTML_FOLD_THREADS) */
	"details.stack>summary h3{display:inline}\n"
	"#threads.folded>section{content-visibility:auto;contain-intrinsic-size:auto 48px}\n"
	".deadlock,.err{color:var(--red)}.deadlock{font-weight:600}\n"
	".exc{margin:6px 0 2px;padding:4px 8px;background:#fff4f4;border-left:3px solid #e99}\n"
	".wait{margin:4px 0;color:#7a4b00}\n"
	"summary{cursor:pointer;color:var(--acc)}\n"
	/* analyze --samples: a cell a sample (report/samples.c) */
	"td.timeline{white-space:nowrap;word-break:normal}\n"
	".tl{display:inline-block;width:1.5em;text-align:center;border-radius:3px;margin-right:1px}\n"
	".tl-G{background:#fde2e2}.tl-W{background:#fff4d6}.tl-D{background:#c62828;color:#fff}\n"
	".tl-R{background:#eef3fd}.tl-N{color:#aaa}.tl.moved{font-weight:700;text-decoration:underline}\n"
	"#show-native{margin:12px 4px 0 24px}label[for=show-native]{color:var(--mut)}\n"
	"#show-native:not(:checked)~main .native{display:none}\n"
	"#tools{display:inline-block;margin:8px 0 0 16px}#tools button{margin-right:8px}\n"
	"svg{max-width:100%;height:auto}svg text{font:12px ui-monospace,Menlo,monospace;fill:#1d2330}\n"
	"svg .node{fill:#eef3fd;stroke:#2457c5}svg .node.cyc{fill:#fde2e2;stroke:#c62828;stroke-width:2}\n"
	"svg .node.done{fill:#eef7ee;stroke:#2e7d32}svg .node.running{fill:#fff4d6;stroke:#b35c00}\n"
	"svg .edge{stroke:#5b6475;fill:none;stroke-width:1.2}svg .edge.cyc{stroke:#c62828;stroke-width:2.4}\n"
	"svg .ref{stroke:#9aa3b2;stroke-dasharray:4 3;fill:none}svg .arrow{fill:#5b6475}"
	"svg .arrow.cyc{fill:#c62828}\n"
	"svg .bar{fill:#2457c5}svg .axis{stroke:#9aa3b2}svg text.small{font-size:10px;fill:#5b6475}\n"
	"svg .fl0{fill:#f3a65a}svg .fl1{fill:#f6c15b}svg .fl2{fill:#ec8a4f}svg .fl3{fill:#f5b06e}"
	"svg .fl4{fill:#e9a14a}svg .flroot{fill:#c9ced8}svg .fl{stroke:#fff;stroke-width:.5}\n"
	"table.groups td.n,table.groups th.n{text-align:right;width:1%}\n"
	/* the dashboard's headers and numbers never wrap, even beside a long
	 * crash line: break-all (above) would cut "dumps" into "dump|s" */
	"table.groups th,table.groups td.n{white-space:nowrap;word-break:normal}\n"
	".muted{color:var(--mut)}\n"
	/* the dashboard's index pages' links between them (cli/group/group_pages.c) */
	"p.pages .here{font-weight:600}\n"
	/* pycore heap's treemap (report/heap_html.c): the panel the URL's
	 * fragment names, the roots' when it names none */
	"#tmaps .tm{display:none}#tmaps .tm:target{display:block}\n"
	"#tmaps:not(:has(.tm:target)) #tm-root{display:block}\n"
	"p.crumbs{margin:6px 0}svg .tmrest{fill:#d5d9e0;stroke:#fff}\n"
	"svg .tm0{fill:#8fb3e8}svg .tm1{fill:#f2b36f}svg .tm2{fill:#9ccf8f}svg .tm3{fill:#e99a9a}"
	"svg .tm4{fill:#c3a6e0}svg .tm5{fill:#e8d37a}svg .tm6{fill:#86cfc9}svg .tm7{fill:#d9a98b}\n"
	"svg rect.sub{fill-opacity:.6}svg a rect:hover{fill-opacity:.4}\n"
	"svg rect{stroke:#fff;stroke-width:1}svg text.tml{font-size:11px;pointer-events:none}\n"
	"table.heap td.n,table.heap th.n{text-align:right;white-space:nowrap;word-break:normal}\n"
	"table.sortable th{cursor:pointer}table.sortable th.asc:after{content:' \\25b2'}"
	"table.sortable th.desc:after{content:' \\25bc'}\n";

/* Adds the buttons that open and close every <details> at once, and
 * sorts a table.sortable's rows by a click on a column's header (by each
 * cell's data-v when it has one, a number, else its text; a second click
 * reverses): nothing it shows is missing without it. */
static const char script[] =
	"(function(){var t=document.getElementById('tools');if(t){"
	"var b=function(l,o){var e=document.createElement('button');e.type='button';e.textContent=l;"
	"e.addEventListener('click',function(){var d=document.querySelectorAll('details');"
	"for(var i=0;i<d.length;i++)d[i].open=o;});t.appendChild(e);};"
	"b('Expand all',true);b('Collapse all',false);}"
	"var ts=document.querySelectorAll('table.sortable');"
	"for(var i=0;i<ts.length;i++)(function(tb){var hs=tb.tHead.rows[0].cells;"
	"for(var c=0;c<hs.length;c++)(function(c,h){h.addEventListener('click',function(){"
	"var down=!h.classList.contains('desc'),body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows);"
	"var key=function(r){var x=r.cells[c],v=x.getAttribute('data-v');return v===null?x.textContent:+v;};"
	"rows.sort(function(a,b){var x=key(a),y=key(b),o=x<y?-1:x>y?1:0;return down?-o:o;});"
	"for(var k=0;k<hs.length;k++)hs[k].classList.remove('asc','desc');h.classList.add(down?'desc':'asc');"
	"for(var k=0;k<rows.length;k++)body.appendChild(rows[k]);});})(c,hs[c]);})(ts[i]);})();";

/* the hashes of the style and the script, computed once (pycore group
 * --output-dir writes a page per group) */
static char style_hash[64], script_hash[64];
static pthread_once_t hashed = PTHREAD_ONCE_INIT;

static void hash_once(void)
{
	pc_sha256_csp(style, style_hash, sizeof(style_hash));
	pc_sha256_csp(script, script_hash, sizeof(script_hash));
}

void report_html_begin(FILE *out, const char *title, const char *kind)
{
	pthread_once(&hashed, hash_once);
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src '%s'; script-src '%s'; img-src 'none'; base-uri 'none'; form-action 'none'\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"pycore\">\n<title>",
		style_hash, script_hash);
	report_html_escape(out, title, false);
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body class=\"%s\">\n", style, kind);
}

void report_html_end(FILE *out)
{
	fprintf(out, "<script>%s</script>\n</body>\n</html>\n", script);
}

/* ------------------------------------------------------------------------ */

void report_html_page_name(const char *path, char *buf, size_t size)
{
	const char *base = strrchr(path, '/');
	base = base && base[1] ? base + 1 : path;
	char safe[49];
	size_t n = 0;
	for (const char *p = base; *p && n < sizeof(safe) - 1; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '_' || c == '-';
		safe[n++] = ok ? c : '_';
	}
	safe[n] = 0;
	/* never a name that starts with '.' (hidden, or "..") */
	if (n && safe[0] == '.')
		safe[0] = '_';
	snprintf(buf, size, "%s%s%016llx.html", safe, n ? "-" : "dump-",
		 (unsigned long long)pc_fnv1a64(PC_FNV1A64_INIT, path, strlen(path)));
}
