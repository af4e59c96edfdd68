/* One step of a path from a root to an object, in Python's words: how an
 * object holds the next one (retain.c draws the paths), found again
 * among the references the census follows from it (reach.c's). */
#include "python/heap/heap.h"
#include "python/objects/objects.h"
#include "python/repr/repr.h"

#include <ctype.h>
#include <string.h>

/* what is looked for among a container's references, and what holds it */
struct step {
	uint64_t child;
	uint64_t key;                /* the dict's key whose value it is */
	bool as_key;                 /* it is a key of the dict (or a set's member) */
	bool found;
	const char *name;            /* the attribute that holds it */
};

static int find_pair(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct step *s = arg;
	(void)c;
	if (value && value == s->child) {
		s->key = key;
		s->found = true;
	} else if (key == s->child) {
		s->as_key = s->found = true;
	}
	return s->found && !s->as_key;   /* (a value's key is the better name: go on after a key) */
}

static int find_attr(struct py_ctx *c, const char *name, uint64_t value, void *arg)
{
	struct step *s = arg;
	(void)c;
	if (value != s->child)
		return 0;
	s->name = name;
	s->found = true;
	return 1;
}

static bool identifier(const char *s)
{
	if (!s || !*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && !((unsigned char)*s & 0x80))
			return false;
	return true;
}

/* The dict key KEY as a subscript, or (NS, a str that is a name) an
 * attribute. */
static void put_key(struct py_ctx *c, uint64_t key, bool ns, FILE *out)
{
	const char *why = NULL;
	if (ns) {
		const char *s = py_str_utf8(c, key, 200, &why);
		if (s && identifier(s)) {
			fprintf(out, ".%s", s);
			return;
		}
	}
	struct repr_limits lim = { 80, 4, 1 };
	const char *r = py_repr(c, key, &lim, &why);
	if (r)
		fprintf(out, "[%s]", r);
	else
		fprintf(out, "[<key at 0x%llx>]", (unsigned long long)key);
}

/* the index of CHILD among the N items at ITEMS; -1 not there */
static int64_t index_of(struct py_ctx *c, uint64_t items, int64_t n, uint64_t child)
{
	uint64_t buf[64];
	for (int64_t i = 0; n > 0 && i < n; i += 64) {
		size_t m = (size_t)(n - i < 64 ? n - i : 64);
		if (dump_read(c->d, items + 8 * (uint64_t)i, buf, 8 * m) != PC_OK)
			return -1;
		for (size_t j = 0; j < m; j++)
			if (buf[j] == child)
				return i + (int64_t)j;
	}
	return -1;
}

void heap_path_step(struct census *k, uint64_t parent, const struct heap_type *t, uint64_t child, bool *ns,
		    FILE *out)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	struct step s = { .child = child };
	bool in_ns = *ns;
	int64_t n;
	*ns = false;
	/* an instance: an attribute (else an item of its built-in base, else
	 * its __dict__, whose keys the next step names as attributes) */
	if (t->instance && py_instance_attrs(c, parent, t->addr, find_attr, &s) == 0 && s.found) {
		fprintf(out, ".%s", s.name);
		return;
	}
	switch (t->walk) {
	case HW_DICT:
		if (py_dict_items(c, parent, find_pair, &s) == 0 && s.found) {
			if (s.as_key)
				fputs(".keys()[...]", out);
			else
				put_key(c, s.key, in_ns, out);
			return;
		}
		break;
	case HW_LIST:
	case HW_TUPLE:
		if (py_rd_i64(c, parent + L->var_size, &n) == PC_OK) {
			uint64_t items = parent + L->tuple_item;
			if (t->walk == HW_LIST && py_rd_ptr(c, parent + L->list_item, &items) != PC_OK)
				break;
			int64_t i = index_of(c, items, n, child);
			if (i >= 0) {
				fprintf(out, "[%lld]", (long long)i);
				return;
			}
		}
		break;
	case HW_SET:
		if (!t->instance) {
			fputs(" {member}", out);
			return;
		}
		break;
	case HW_CELL:
		fputs(".cell_contents", out);
		return;
	case HW_MODULE:
		*ns = true;
		return;
	case HW_TYPE: {
		/* its bases, its MRO, else its namespace */
		uint64_t refs[HEAP_TYPE_REFS];
		if (heap_type_refs(c, parent, refs) == 0 && child && (child == refs[1] || child == refs[2])) {
			fputs(child == refs[1] ? ".__bases__" : ".__mro__", out);
			return;
		}
		*ns = true;
		return;
	}
	case HW_FUNCTION:
	case HW_CODE: {
		int64_t at[HEAP_FIXED_REFS];
		const char *const *attr;
		uint64_t p;
		int nat = heap_fixed_refs(L, t->walk, at, &attr);
		for (int i = 0; i < nat; i++)
			if (at[i] >= 0 && py_rd_ptr(c, parent + (uint64_t)at[i], &p) == PC_OK && p == child) {
				fputs(attr[i], out);
				return;
			}
		break;
	}
	case HW_NONE:
		break;
	}
	if (t->instance) {
		*ns = true;
		return;
	}
	fprintf(out, " -> <0x%llx>", (unsigned long long)child);
}
