/* The crash's own facts as JSON: the fault named (model_fault_kind) as
 * the report's "fault_kind" (the kind, its line, what proves it, and the
 * evidence's fields, each null where the kind has none), and the abort's
 * words (model_abort) as its "abort". */
#include "report/json_crash.h"

#include <stdio.h>

static json_t *hex(uint64_t a, bool known)
{
	char buf[32];
	if (!known)
		return json_null();
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)a);
	return json_string(buf);
}

static json_t *int_or_null(int64_t v, bool known)
{
	return known ? json_integer((json_int_t)v) : json_null();
}

json_t *report_fault_kind_json(const struct model_fault_kind *k, json_t *(*str)(const char *))
{
	if (!k)
		return json_null();
	json_t *mapping = json_null(), *rec = json_null();
	if (k->has_mapping)
		mapping = json_pack("{s:o, s:o, s:o, s:o, s:o}", "start", hex(k->mapping_start, true),
				    "end", hex(k->mapping_end, true), "permissions", str(k->mapping_permissions),
				    "file", str(k->mapping_file), "where", str(k->where));
	if (k->recursion_kind)
		rec = json_pack("{s:s, s:o, s:o, s:I, s:b}", "kind", k->recursion_kind, "function",
				str(k->recursion_function), "file", str(k->recursion_file), "count",
				(json_int_t)k->recursion_count, "at_least", k->recursion_at_least);
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "kind", str(k->kind), "text", str(k->text), "evidence", str(k->evidence),
			 "thread", int_or_null(k->thread, k->thread >= 0),
			 "address", hex(k->address, k->has_address),
			 "offset", int_or_null((int64_t)k->offset, k->has_offset && k->offset <= INT64_MAX),
			 "mapping", mapping ? mapping : json_null(), "recursion", rec ? rec : json_null(),
			 "sender_pid", int_or_null(k->sender_pid, k->sender_pid >= 0),
			 "sender_name", str(k->sender_name),
			 "file_size", int_or_null(k->file_size, k->file_size >= 0),
			 "message", str(k->message));
}

/* abort: what the C library, the C++ runtime or CPython kept of why the
 * process aborted */
json_t *report_abort_json(const struct model_abort *ab, json_t *(*str)(const char *))
{
	if (!ab)
		return json_null();
	return json_pack("{s:o, s:b, s:o, s:o}", "message", str(ab->message), "truncated", ab->truncated,
			 "source", str(ab->source), "exception_type", str(ab->exception_type));
}
