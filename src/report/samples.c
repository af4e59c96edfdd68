/* A process read several times, as JSON and as text (samples.h). */
#include "report/samples.h"

#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "report/report.h"

/* The threads named on a line of threads alike */
#define SHOWN 4

static json_t *ms(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

json_t *report_samples_json(const struct model_samples *s, json_t *(*str)(const char *))
{
	if (!s)
		return json_null();
	json_t *threads = json_array(), *findings = json_array();
	for (size_t i = 0; threads && i < s->threads.n; i++) {
		const struct model_hang_thread *h = s->threads.items[i];
		json_array_append_new(threads,
				      json_pack("{s:I, s:o, s:s, s:o, s:I, s:I, s:I, s:o, s:s}", "tid", (json_int_t)h->tid,
						"name", str(h->name), "state", h->state, "evidence", str(h->evidence),
						"present", (json_int_t)h->present, "stacks", (json_int_t)h->stacks,
						"gil", (json_int_t)h->gil, "where", str(h->where), "timeline",
						h->timeline ? h->timeline : ""));
	}
	for (size_t i = 0; findings && i < s->findings.n; i++)
		json_array_append_new(findings, str(s->findings.items[i]));
	return json_pack("{s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o}", "source",
			 s->source ? s->source : "process", "ordered_by", s->ordered_by ? s->ordered_by : "the reads' times",
			 "asked", (json_int_t)s->asked, "taken", (json_int_t)s->taken, "interval_ms", ms(s->interval_ms),
			 "duration_ms", ms(s->duration_ms),
			 "stopped_median_ms", ms(s->stopped_median_ms), "stopped_max_ms", ms(s->stopped_max_ms),
			 "ended", str(s->ended), "kind", s->kind ? s->kind : "not-enough-samples",
			 "threads", threads ? threads : json_null(), "findings", findings ? findings : json_null());
}

void report_samples_text(FILE *out, const struct model_samples *s)
{
	if (!s)
		return;
	bool dumps = s->source && strcmp(s->source, "dumps") == 0;
	if (dumps && s->duration_ms >= 0)
		fprintf(out, "Samples: %zu dumps of one process over %.1f s, ordered by %s\n", s->taken,
			s->duration_ms / 1e3, s->ordered_by);
	else if (dumps)
		fprintf(out, "Samples: %zu dumps of one process, in %s (they record no time)\n", s->taken, s->ordered_by);
	else
		fprintf(out, "Samples: %zu of %zu over %.1f s", s->taken, s->asked, s->duration_ms / 1e3);
	if (dumps)
		; /* (a dump is no read: nothing was stopped) */
	else if (s->stopped_median_ms >= 0)
		fprintf(out, " (each read stopped it for %.1f ms at the median, %.1f ms at most)", s->stopped_median_ms,
			s->stopped_max_ms);
	else
		fputs(" (read running, never stopped)", out);
	if (!dumps)
		fputs("\n", out);
	if (s->ended)
		fprintf(out, "Sampling ended: %s\n", s->ended);
	for (size_t i = 0; i < s->findings.n; i++) {
		fputs("Finding: ", out);
		report_put_escaped(out, s->findings.items[i]);
		fputs("\n", out);
	}
	/* threads of one state and one evidence on one line (a pool's
	 * workers): the first few by tid and name, then how many more */
	bool *done = calloc(s->threads.n ? s->threads.n : 1, sizeof(*done));
	for (size_t i = 0; done && i < s->threads.n; i++) {
		if (done[i])
			continue;
		const struct model_hang_thread *h = s->threads.items[i];
		size_t same = 0;
		for (size_t k = i; k < s->threads.n; k++) {
			const struct model_hang_thread *o = s->threads.items[k];
			if (!done[k] && strcmp(o->state, h->state) == 0 && strcmp(o->evidence, h->evidence) == 0) {
				done[k] = true;
				if (same++ < SHOWN) {
					fprintf(out, "%s%lld", same == 1 ? (k == i ? "  thread " : "") : ", ", (long long)o->tid);
					if (o->name) {
						fputs(" \"", out);
						report_put_escaped(out, o->name);
						fputs("\"", out);
					}
				}
			}
		}
		if (same > SHOWN)
			fprintf(out, " and %zu more threads", same - SHOWN);
		fprintf(out, ": %s: ", h->state);
		report_put_escaped(out, h->evidence);
		fputs("\n", out);
	}
	free(done);
}

/* what a timeline's letter says of its sample */
static const char *mark_title(char m)
{
	switch (m & ~0x20) {
	case 'G': return "held the GIL";
	case 'W': return "waited on an object pycore reads, or the GIL";
	case 'D': return "in a wait cycle";
	case 'R': return "released the GIL, in no wait pycore reads";
	default: return "not seen";
	}
}

void report_samples_html(FILE *out, const struct model_samples *s)
{
	if (!s)
		return;
	fputs("<section class=\"card\" id=\"samples\"><h2>Samples</h2>\n<p>", out);
	bool dumps = s->source && strcmp(s->source, "dumps") == 0;
	fprintf(out, "%zu %s of %zu", s->taken, dumps ? "dumps" : "samples", s->asked);
	if (s->duration_ms >= 0)
		fprintf(out, " over %.1f s", s->duration_ms / 1e3);
	fputs(", ordered by ", out);
	html_text(out, s->ordered_by);
	if (s->stopped_median_ms >= 0)
		fprintf(out, "; each read stopped it for %.1f ms at the median", s->stopped_median_ms);
	fputs("</p>\n", out);
	if (s->ended) {
		fputs("<p class=\"err\">Sampling ended: ", out);
		html_text(out, s->ended);
		fputs("</p>\n", out);
	}
	if (s->findings.n) {
		fputs("<ul class=\"findings\">", out);
		for (size_t i = 0; i < s->findings.n; i++) {
			fputs("<li>", out);
			html_text(out, s->findings.items[i]);
			fputs("</li>", out);
		}
		fputs("</ul>\n", out);
	}
	fputs("<table class=\"samples\"><tr><th>thread</th><th>state</th><th>timeline</th><th>evidence</th></tr>\n",
	      out);
	for (size_t i = 0; i < s->threads.n; i++) {
		const struct model_hang_thread *h = s->threads.items[i];
		fprintf(out, "<tr class=\"hang\"><td class=\"tid\">%lld", (long long)h->tid);
		if (h->name) {
			fputs(" <span class=\"name\">", out);
			html_text(out, h->name);
			fputs("</span>", out);
		}
		fprintf(out, "</td><td class=\"state %s\">%s</td><td class=\"timeline\">", h->state, h->state);
		for (const char *m = h->timeline ? h->timeline : ""; *m; m++)
			fprintf(out, "<span class=\"tl tl-%c%s\" title=\"sample %zu: %s%s\">%c</span>",
				*m == '-' ? 'N' : *m & ~0x20, (*m >= 'a' && *m <= 'z') ? " moved" : "",
				(size_t)(m - h->timeline) + 1, mark_title(*m),
				(*m >= 'a' && *m <= 'z') ? ", its stack moved" : "", *m);
		fputs("</td><td class=\"evidence\">", out);
		html_text(out, h->evidence);
		fputs("</td></tr>\n", out);
	}
	fputs("</table></section>\n", out);
}
