/* The property of jsonl_scan (jsonl_scan.h), for its unit test and its
 * fuzz target: what it reads of a line, jansson reads too, and the same.
 * jsonl_scan_check(LINE, N) returns 1 when the scanner read the line (and
 * jansson's tree, pruned, equals it, member order included), 0 when it
 * left the line to jansson, and aborts when they differ. */
#ifndef PYCORE_JSONL_SCAN_CHECK_H
#define PYCORE_JSONL_SCAN_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl/jsonl_scan.h"
#include "jsonl/surrogates.h"

static const struct jsonl_keep check_frame[] = { { "kind", NULL }, { "function", NULL }, { "line", NULL },
						 { NULL, NULL } };
/* "input" pruned unlike "frames": one object's text read both ways */
static const struct jsonl_keep check_input[] = { { "kind", NULL }, { "path", NULL }, { NULL, NULL } };
static const struct jsonl_keep check_keep[] = { { "a", NULL }, { "input", check_input }, { "frames", check_frame },
						{ "kind", NULL }, { NULL, NULL } };

/* J pruned as jsonl_scan prunes: what it must equal. */
static json_t *jsonl_prune(json_t *j, const struct jsonl_keep *keep)
{
	if (!keep)
		return json_deep_copy(j);
	if (json_is_array(j)) {
		json_t *a = json_array(), *v;
		size_t i;
		json_array_foreach(j, i, v)
			if (!a || json_array_append_new(a, jsonl_prune(v, keep)) != 0) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	if (!json_is_object(j))
		return json_deep_copy(j);
	json_t *o = json_object();
	const char *key;
	json_t *v;
	json_object_foreach(j, key, v) {
		const struct jsonl_keep *k = keep;
		while (k->key && strcmp(k->key, key) != 0)
			k++;
		if (o && k->key && json_object_set_new(o, key, jsonl_prune(v, k->sub)) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static int jsonl_scan_check_one(const char *line, size_t n, const struct jsonl_keep *keep)
{
	json_t *scan = jsonl_scan(line, n, keep);
	if (!scan)
		return 0;
	char *paired = jsonl_pair_surrogates(line, n);
	json_error_t err;
	json_t *full = paired ? json_loads(paired, 0, &err) : NULL;
	free(paired);
	if (!full) {
		fprintf(stderr, "jsonl_scan read a line jansson refuses (%s): %.*s\n", err.text, (int)n, line);
		abort();
	}
	json_t *pruned = jsonl_prune(full, keep);
	char *a = json_dumps(scan, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_ENCODE_ANY);
	char *b = json_dumps(pruned, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_ENCODE_ANY);
	if (!json_equal(scan, pruned) || !a || !b || strcmp(a, b) != 0) {
		fprintf(stderr, "jsonl_scan and jansson differ on %.*s:\n  %s\n  %s\n", (int)n, line, a ? a : "?",
			b ? b : "?");
		abort();
	}
	free(a);
	free(b);
	json_decref(scan);
	json_decref(full);
	json_decref(pruned);
	return 1;
}

static int jsonl_scan_check(const char *line, size_t n)
{
	int kept = jsonl_scan_check_one(line, n, check_keep);
	int whole = jsonl_scan_check_one(line, n, NULL);
	if (kept != whole) {
		fprintf(stderr, "jsonl_scan read %.*s only %s\n", (int)n, line, kept ? "pruned" : "whole");
		abort();
	}
	return kept;
}

#endif
