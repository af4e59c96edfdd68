/* A native frame's "args": null when no debug information describes its
 * function, else one object per formal parameter, in gdb's order. */
#include "report/json_args.h"

#include <string.h>

#define KEY(t, k) json_text_put(t, k, sizeof(k) - 1)

void json_args_text(struct json_text *t, const struct model_frame *f, void (*str)(struct json_text *, const char *))
{
	if (!f->has_args) {
		KEY(t, "null");
		return;
	}
	KEY(t, "[");
	for (size_t i = 0; i < f->args.n; i++) {
		const struct model_arg *a = f->args.items[i];
		if (i)
			KEY(t, ",");
		KEY(t, "{\"name\":");
		str(t, a->name);
		KEY(t, ",\"type\":");
		str(t, a->type);
		/* (the value is pycore's own text, ASCII) */
		KEY(t, ",\"value\":");
		if (a->value)
			json_text_put_string(t, a->value, strlen(a->value));
		else
			KEY(t, "null");
		KEY(t, ",\"optimized_out\":");
		json_text_put_bool(t, a->optimized_out);
		/* the rest only when said: a report of many threads has many
		 * arguments, and few of them are strings or objects */
		if (a->unavailable) {
			KEY(t, ",\"unavailable\":");
			str(t, a->unavailable);
		}
		if (a->string) {
			KEY(t, ",\"string\":");
			str(t, a->string);
			KEY(t, ",\"string_truncated\":");
			json_text_put_bool(t, a->string_truncated);
		}
		if (a->repr) {
			KEY(t, ",\"repr\":");
			str(t, a->repr);
		}
		KEY(t, "}");
	}
	KEY(t, "]");
}
