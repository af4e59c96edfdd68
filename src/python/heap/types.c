/* What the census knows of each type (proven a type once, its size rule,
 * the references reach.c follows from its objects), and what it keeps of
 * each object counted: the largest, those heap --diff asks about, the
 * memory each fills (memory.c). */
#include "python/heap/heap.h"
#include "python/objects/objects.h"

#include <stdlib.h>
#include <string.h>

/* OBJ, of TYPE and BYTES, among the largest so far (ties: the first kept) */
static void keep_big(struct census *k, uint64_t obj, uint64_t type, uint64_t bytes)
{
	struct big *h = k->big, b = { obj, type, bytes };
	size_t i;
	if (k->nbig < MODEL_HEAP_LARGEST) {
		for (i = k->nbig++; i && h[(i - 1) / 2].bytes > b.bytes; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = b;
		return;
	}
	if (bytes <= h[0].bytes)
		return;
	/* the smallest goes: sift B down from the root */
	for (i = 0;;) {
		size_t l = 2 * i + 1, m = l + 1 < k->nbig && h[l + 1].bytes < h[l].bytes ? l + 1 : l;
		if (l >= k->nbig || h[m].bytes >= b.bytes)
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = b;
}

int heap_type_traverse(struct py_ctx *c, uint64_t type, uint64_t *trav)
{
	return py_rd_ptr(c, type + c->L->type_flags + 16, trav);
}

/* Which references of T's objects reach.c follows: the exact built-in
 * containers' (known by their names: static types), a Python class's
 * instance's attributes and its built-in base's items, a class's
 * namespace, bases and MRO (T is type or a metaclass), a function's and
 * a code object's own. */
static void walk_rule(struct census *k, struct heap_type *t)
{
	static const struct {
		const char *name;
		enum heap_walk walk;
	} builtin[] = {
		{ "list", HW_LIST }, { "tuple", HW_TUPLE }, { "dict", HW_DICT }, { "set", HW_SET },
		{ "frozenset", HW_SET }, { "cell", HW_CELL }, { "module", HW_MODULE }, { "type", HW_TYPE },
		{ "function", HW_FUNCTION }, { "code", HW_CODE },
	};
	struct py_ctx *c = k->c;
	uint64_t trav;
	/* a metaclass's instances are classes: type's, a Python metaclass's,
	 * or a C one's (ctypes' PyCSimpleType, PyCStructType, ...) */
	if (t->flags & TPF_TYPE_SUBCLASS) {
		t->walk = HW_TYPE;
		return;
	}
	if (!(t->flags & TPF_HEAPTYPE)) {
		const char *name = py_type_tp_name(c, t->addr);
		for (size_t i = 0; name && i < sizeof(builtin) / sizeof(builtin[0]); i++)
			if (strcmp(name, builtin[i].name) == 0)
				t->walk = builtin[i].walk;
		return;
	}
	if (!k->subtype_traverse ||
	    heap_type_traverse(c, t->addr, &trav) != PC_OK || trav != k->subtype_traverse)
		return;
	t->instance = true;
	t->walk = (t->flags & TPF_LIST_SUBCLASS) ? HW_LIST : (t->flags & TPF_TUPLE_SUBCLASS) ? HW_TUPLE
		  : (t->flags & TPF_DICT_SUBCLASS) ? HW_DICT : t->rule == HS_SET ? HW_SET : HW_NONE;
}

/* The cached entry of TYPE, proven a type (its own type's flags say it
 * is a type's) on first sight; NULL when it is not. */
struct heap_type *heap_type_entry(struct census *k, uint64_t type)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	bool found;
	struct heap_type *t = addrtab_get(&k->types, type, &found);
	if (!t)
		return NULL;
	if (found)
		return t->proven ? t : NULL;
	uint64_t meta, mflags = 0, flags = 0;
	int64_t basic = -1, item = -1;
	if (py_rd_ptr(c, type + L->object_type, &meta) != PC_OK ||
	    dump_read(c->d, meta + L->type_flags, &mflags, sizeof(mflags)) != PC_OK ||
	    !(mflags & TPF_TYPE_SUBCLASS) ||
	    dump_read(c->d, type + L->type_flags, &flags, sizeof(flags)) != PC_OK ||
	    py_rd_i64(c, type + L->type_basicsize, &basic) != PC_OK ||
	    py_rd_i64(c, type + L->type_itemsize, &item) != PC_OK ||
	    basic < 16 || basic > (1 << 24) || item < 0 || item > (1 << 16))
		return NULL;
	struct heap_type copy = { .addr = type, .proven = true, .basicsize = basic, .itemsize = item,
				  .flags = flags };
	heap_sizeof_rule(c, &copy);
	walk_rule(k, &copy);
	/* its number (0 when it cannot be kept: heap_graph_set fails the graph) */
	if (k->ntype_addrs == k->captype_addrs) {
		size_t cap = k->captype_addrs ? 2 * k->captype_addrs : 256;
		uint64_t *a = realloc(k->type_addrs, cap * sizeof(*a));
		if (a) {
			k->type_addrs = a;
			k->captype_addrs = cap;
		}
	}
	if (k->ntype_addrs < k->captype_addrs) {
		k->type_addrs[k->ntype_addrs++] = type;
		copy.id = (uint32_t)k->ntype_addrs;
	}
	/* the rule's look-ups may have grown the table */
	if ((t = addrtab_get(&k->types, type, &found)) == NULL)
		return NULL;
	*t = copy;
	return t;
}

int heap_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

void heap_seen(struct census *k, uint64_t obj, uint64_t type, uint64_t size, uint64_t buffer)
{
	keep_big(k, obj, type, size);
	heap_memory_object(k, obj, size, buffer);
	/* one heap --diff asked about (each object is counted once) */
	if (k->nwatch && k->nwatched < k->nwatch && bsearch(&obj, k->watch, k->nwatch, sizeof(obj), heap_cmp_u64))
		k->watched[k->nwatched++] = (struct big){ obj, type, size };
}
