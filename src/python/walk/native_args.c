/* Native frames' arguments into the model, printed as gdb's `bt` prints
 * them (gdb's value printing, for C: integers in decimal, pointers in hex,
 * a pointer to characters with its string, at most 200 of them as gdb's
 * `print elements` default, a char as its number and the character,
 * bool as true or false); a PyObject pointer also with pycore's repr of
 * the object. */
#include "python/walk/walk.h"

#include <stdio.h>
#include <string.h>

/* A char as gdb prints it: 65 'A', 10 '\n', 0 '\000'. */
static const char *char_text(struct py_ctx *c, int64_t v)
{
	unsigned char ch = (unsigned char)v;
	static const char named[] = "\a\b\f\n\r\t\v", names[] = "abfnrtv";
	const char *p = ch ? strchr(named, ch) : NULL;
	if (p)
		return arena_printf(c->a, "%lld '\\%c'", (long long)v, names[p - named]);
	if (ch == '\\' || ch == '\'')
		return arena_printf(c->a, "%lld '\\%c'", (long long)v, ch);
	if (ch >= 0x20 && ch < 0x7f)
		return arena_printf(c->a, "%lld '%c'", (long long)v, ch);
	return arena_printf(c->a, "%lld '\\%03o'", (long long)v, ch);
}

static int64_t sign_extend(uint64_t v, unsigned size)
{
	if (size == 0 || size >= 8)
		return (int64_t)v;
	unsigned shift = 64 - size * 8;
	return (int64_t)(v << shift) >> shift;
}

/* The string a char pointer at ADDR points to, into M. */
static void read_string(struct py_ctx *c, uint64_t addr, struct model_arg *m)
{
	char buf[MODEL_ARG_STRING_MAX + 1];
	if (!addr)
		return;
	enum pc_code st = dump_read_cstr(c->d, addr, buf, sizeof(buf));
	if (st == PC_ECORRUPT && buf[0]) {
		/* no NUL in the first MODEL_ARG_STRING_MAX bytes */
		m->string_truncated = true;
		st = PC_OK;
	}
	if (st == PC_OK)
		m->string = arena_strdup(c->a, buf);
}

static bool is_pyobject(const char *type)
{
	return type && (strcmp(type, "PyObject *") == 0 || strcmp(type, "struct _object *") == 0);
}

static const char *value_text(struct py_ctx *c, const struct native_arg *a)
{
	char buf[64];
	switch (a->kind) {
	case NARG_SIGNED:
		return arena_printf(c->a, "%lld", (long long)sign_extend(a->value, a->size));
	case NARG_UNSIGNED:
		return arena_printf(c->a, "%llu", (unsigned long long)a->value);
	case NARG_BOOL:
		return a->value ? "true" : "false";
	case NARG_CHAR:
		return char_text(c, a->type && strstr(a->type, "unsigned") ? (int64_t)a->value
				 : sign_extend(a->value, 1));
	case NARG_ENUM:
		return a->enumerator ? arena_strdup(c->a, a->enumerator)
		       : arena_printf(c->a, "%lld", (long long)sign_extend(a->value, a->size));
	case NARG_FLOAT:
		if (a->size == 4) {
			float f;
			uint32_t u = (uint32_t)a->value;
			memcpy(&f, &u, 4);
			snprintf(buf, sizeof(buf), "%.9g", (double)f);
		} else {
			double d;
			memcpy(&d, &a->value, 8);
			snprintf(buf, sizeof(buf), "%.17g", d);
		}
		return arena_strdup(c->a, buf);
	case NARG_POINTER:
	case NARG_STRING:
		return arena_printf(c->a, "0x%llx", (unsigned long long)a->value);
	case NARG_OTHER:
		break;
	}
	return NULL;
}

void py_native_args(struct py_ctx *c, struct model_frame *f, const struct native_frame *nf)
{
	f->has_args = nf->has_args;
	for (size_t i = 0; i < nf->nargs; i++) {
		const struct native_arg *a = &nf->args[i];
		struct model_arg *m = arena_alloc(c->a, sizeof(*m));
		if (!m || ptrvec_push(c->a, &f->args, m) != 0)
			return;
		*m = (struct model_arg){ .name = arena_strdup(c->a, a->name), .type = arena_strdup(c->a, a->type) };
		if (a->state == NARG_OPTIMIZED_OUT) {
			m->optimized_out = true;
			continue;
		}
		if (a->state == NARG_UNAVAILABLE) {
			m->unavailable = a->reason;
			continue;
		}
		m->value = value_text(c, a);
		if (!m->value) {
			m->unavailable = "a value of this type is not printed";
			continue;
		}
		if (a->kind == NARG_STRING)
			read_string(c, a->value, m);
		if (a->kind == NARG_POINTER && a->value && c->L && is_pyobject(a->type)) {
			static const struct repr_limits lim = { 256, 10, 2 };
			const char *err = NULL;
			const char *r = py_repr(c, a->value, &lim, &err);
			m->repr = err ? NULL : r; /* an approximate repr is no repr */
		}
	}
}
