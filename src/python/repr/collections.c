/* repr() of the collections module's types (deque, defaultdict,
 * OrderedDict, Counter, namedtuple) formed from memory exactly as Python
 * prints them, once stdlib.c proved the type.
 *
 * Facts used (CPython's sources of 3.6 to 3.15, cited by file):
 * - Modules/_collectionsmodule.c: dequeobject {VAR_HEAD, leftblock,
 *   rightblock, leftindex, rightindex, state, maxlen}, blocks of 64 items
 *   {leftlink, data[64], rightlink}; deque_repr "%s(%R)" or
 *   "%s(%R, maxlen=%zd)" of list(deque), "[...]" when re-entered;
 *   defdictobject {PyDictObject, default_factory}, defdict_repr
 *   "%s(%U, %U)" (factory repr or "None", "..." when re-entered; the dict).
 * - Objects/odictobject.c: PyODictObject {PyDictObject, od_first, ...},
 *   _ODictNode {key, hash, next, prev}; odict_repr "%s()" when empty,
 *   "..." when re-entered, else "%s(%R)" of list(items()) up to 3.11 and of
 *   dict(self) from 3.12.
 * - Lib/collections/__init__.py: Counter.__repr__ (most_common(): a stable
 *   sort by count, highest first); namedtuple's __repr__ (3.7+, a closure
 *   over the field names, which the class keeps as _fields).
 */
#include "python/repr/stdlib.h"

#include <stdlib.h>
#include <string.h>

#define DEQUE_BLOCKLEN   64
#define MAX_SORTED       100000   /* a Counter or OrderedDict larger keeps the fallback */

bool stdlib_deque_items(struct py_ctx *c, uint64_t addr, int64_t *len, int64_t *maxlen,
			bool (*fn)(struct rctx *r, uint64_t item, int64_t i), struct rctx *r)
{
	uint64_t v = (uint64_t)c->L->var_size + 8, block;
	int64_t n, index;
	if (py_rd_i64(c, addr + c->L->var_size, &n) != 0 || n < 0 || n > (1ll << 48) ||
	    !rd_ptr(c, addr + v, &block) || py_rd_i64(c, addr + v + 16, &index) != 0 ||
	    py_rd_i64(c, addr + v + 40, maxlen) != 0 || index < 0 || index >= DEQUE_BLOCKLEN)
		return false;
	*len = n;
	for (int64_t i = 0; i < n && fn; i++) {
		uint64_t item;
		if (!rd_ptr(c, block + 8 + 8 * (uint64_t)index, &item))
			return false;
		if (!fn(r, item, i))
			break;
		if (++index == DEQUE_BLOCKLEN) {
			index = 0;
			if (!rd_ptr(c, block + 8 + 8 * DEQUE_BLOCKLEN, &block))
				return false;
		}
	}
	return true;
}

static bool list_item(struct rctx *r, uint64_t item, int64_t i)
{
	if (sb_full(&r->b))
		return false;
	if ((size_t)i >= r->lim->max_items) {
		repr_limit(r, "more items than the item limit");
		return false;
	}
	if (i)
		sb_puts(&r->b, ", ");
	repr_item(r, item);
	return true;
}

bool repr_deque(struct rctx *r, uint64_t addr)
{
	int64_t n, maxlen;
	if (!stdlib_deque_items(r->c, addr, &n, &maxlen, NULL, r))
		return false;
	if (!repr_guard(r, addr, "[...]"))
		return true;
	sb_puts(&r->b, "deque([");
	if (!stdlib_deque_items(r->c, addr, &n, &maxlen, list_item, r))
		repr_fail(r, "deque blocks not captured");
	sb_puts(&r->b, "]");
	if (maxlen >= 0)
		sb_printf(&r->b, ", maxlen=%lld", (long long)maxlen);
	sb_puts(&r->b, ")");
	r->depth--;
	return true;
}

bool repr_defaultdict(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size;
	uint64_t factory;
	if (!c->type_addr[PYT_DICT] ||
	    py_rd_i64(c, c->type_addr[PYT_DICT] + c->L->type_basicsize, &size) != 0 || size <= 0 ||
	    size > 4096 || !rd_ptr(c, addr + (uint64_t)size, &factory))
		return false;
	sb_puts(&r->b, "defaultdict(");
	if (!factory)
		sb_puts(&r->b, "None");
	else if (repr_reentered(r, factory))
		sb_puts(&r->b, "...");
	else
		repr_item(r, factory);
	sb_puts(&r->b, ", ");
	repr_dict(r, addr);
	sb_puts(&r->b, ")");
	return true;
}

struct kv {
	uint64_t key, value;
};

static int collect_pair(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	(void)c;
	bool found;
	struct kv *e = key ? addrtab_get(arg, key, &found) : NULL;
	if (!e)
		return 1;
	e->value = value;
	return 0;
}

/* OrderedDict's items in the order of its linked list, their values
 * from the dict by the key object. */
bool repr_odict(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size, used;
	uint64_t node;
	if (!c->type_addr[PYT_DICT] ||
	    py_rd_i64(c, c->type_addr[PYT_DICT] + c->L->type_basicsize, &size) != 0 || size <= 0 ||
	    size > 4096 || py_rd_i64(c, addr + c->L->dict_used, &used) != 0 || used < 0 ||
	    used > MAX_SORTED || !rd_ptr(c, addr + (uint64_t)size, &node))
		return false;
	if (used == 0) {
		sb_puts(&r->b, "OrderedDict()");
		return true;
	}
	struct addrtab values = ADDRTAB_INIT(struct kv);
	if (py_dict_items(c, addr, collect_pair, &values) != 0 || values.n != (size_t)used) {
		addrtab_free(&values);
		return false;
	}
	bool old = c->L->minor <= 11;
	if (repr_guard(r, addr, "...")) {
		sb_puts(&r->b, old ? "OrderedDict([" : "OrderedDict({");
		for (int64_t i = 0; i < used && !sb_full(&r->b); i++) {
			uint64_t key;
			bool found;
			struct kv *e;
			if ((size_t)i >= r->lim->max_items) {
				repr_limit(r, "more items than the item limit");
				break;
			}
			if (!node || !rd_ptr(c, node, &key) || !key || !(e = addrtab_get(&values, key, &found)) ||
			    !found) {
				repr_fail_as(r, PC_ECORRUPT, "OrderedDict's linked list does not match its dict");
				break;
			}
			if (i)
				sb_puts(&r->b, ", ");
			sb_puts(&r->b, old ? "(" : "");
			uint64_t value = e->value;
			repr_item(r, key);
			sb_puts(&r->b, old ? ", " : ": ");
			repr_item(r, value);
			sb_puts(&r->b, old ? ")" : "");
			if (!rd_ptr(c, node + 16, &node))
				node = 0;
		}
		sb_puts(&r->b, old ? "])" : "})");
		r->depth--;
	}
	addrtab_free(&values);
	return true;
}

struct counted {
	uint64_t key, value;
	int64_t count;
	size_t order;
};

static int by_count(const void *a, const void *b)
{
	const struct counted *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct count_walk {
	struct counted *items;
	size_t n, cap;
	bool ok;
};

static int count_item(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct count_walk *w = arg;
	if (w->n == w->cap || py_type_of(c, value, NULL) != PYT_INT ||
	    py_long_i64(c, value, &w->items[w->n].count) != 0) {
		w->ok = false;
		return 1;
	}
	w->items[w->n] = (struct counted){ key, value, w->items[w->n].count, w->n };
	w->n++;
	return 0;
}

/* Counter.__repr__: its items by most_common(), every count an int. */
bool repr_counter(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *name = py_type_short_name(c, type);
	int64_t used;
	if (!name || py_rd_i64(c, addr + c->L->dict_used, &used) != 0 || used < 0 || used > MAX_SORTED)
		return false;
	if (used == 0) {
		sb_utf8(&r->b, name);
		sb_puts(&r->b, "()");
		return true;
	}
	struct count_walk w = { calloc((size_t)used, sizeof(struct counted)), 0, (size_t)used, true };
	if (!w.items || py_dict_items(c, addr, count_item, &w) != 0 || !w.ok || w.n != (size_t)used) {
		free(w.items);
		return false;
	}
	qsort(w.items, w.n, sizeof(w.items[0]), by_count);
	sb_utf8(&r->b, name);
	sb_puts(&r->b, "({");
	for (size_t i = 0; i < w.n && !sb_full(&r->b); i++) {
		if (i >= r->lim->max_items) {
			repr_limit(r, "more items than the item limit");
			break;
		}
		if (i)
			sb_puts(&r->b, ", ");
		repr_item(r, w.items[i].key);
		sb_puts(&r->b, ": ");
		repr_item(r, w.items[i].value);
	}
	sb_puts(&r->b, "})");
	free(w.items);
	return true;
}

/* namedtuple's __repr__ (3.7+): the class's __name__, then name=repr for
 * each of the _fields of the class that defines that __repr__. */
bool repr_namedtuple(struct rctx *r, uint64_t addr, uint64_t type, uint64_t owner)
{
	struct py_ctx *c = r->c;
	const struct py_layout *L = c->L;
	uint64_t dict, fields;
	int64_t nf, n;
	const char *name = py_type_short_name(c, type);
	uint64_t base;
	if (!name || !rd_ptr(c, owner + L->type_base, &base) || !base || base != c->type_addr[PYT_TUPLE] ||
	    !rd_ptr(c, owner + L->type_dict, &dict) || !(fields = dict_get(c, dict, "_fields")) ||
	    py_type_of(c, fields, NULL) != PYT_TUPLE || py_rd_i64(c, fields + L->var_size, &nf) != 0 ||
	    py_rd_i64(c, addr + L->var_size, &n) != 0 || n != nf || n > 4096)
		return false;
	const char **names = arena_alloc(c->a, sizeof(char *) * (size_t)(n + 1));
	for (int64_t i = 0; names && i < n; i++) {
		uint64_t f;
		const char *why;
		if (!rd_ptr(c, fields + L->tuple_item + 8 * (uint64_t)i, &f) ||
		    py_type_of(c, f, NULL) != PYT_STR || !(names[i] = py_str_utf8(c, f, 256, &why)))
			return false;
	}
	if (!names)
		return false;
	if (repr_reentered(r, addr)) {
		/* tuple.__repr__ of self inside "%"-formatting is not reached:
		 * the fields' reprs recurse as Python would, without a guard */
		return false;
	}
	if (!repr_enter(r, addr))
		return true;
	sb_utf8(&r->b, name);
	sb_puts(&r->b, "(");
	for (int64_t i = 0; i < n && !sb_full(&r->b); i++) {
		uint64_t item;
		if (!rd_ptr(c, addr + L->tuple_item + 8 * (uint64_t)i, &item)) {
			repr_fail(r, "namedtuple item not captured");
			break;
		}
		if (i)
			sb_puts(&r->b, ", ");
		sb_utf8(&r->b, names[i]);
		sb_puts(&r->b, "=");
		repr_item(r, item);
	}
	sb_puts(&r->b, ")");
	r->depth--;
	return true;
}
