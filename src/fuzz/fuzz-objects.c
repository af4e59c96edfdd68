/* Fuzz target: the Python object readers (src/python/objects/, repr/:
 * str, bytes, int, float, dict in every layout, list, tuple, set) and
 * code objects (src/python/objects/code.c: name, file, first
 * line and line table, then the line of every position the table covers
 * through the decoder of that version) over a memory image that is the
 * input.
 *
 * The dump is a stand-in, as a parser's unit test may use: a dump of
 * memory alone (dump_open_runs) of two runs, the fixed type objects of
 * the built-in types (each at TYPE_ADDR(i)) and the image, the input
 * after its first byte, at IMAGE_BASE.  The first byte chooses the layout table of versions/ (every
 * minor version, default and free-threaded builds).  The object at
 * IMAGE_BASE is read by every reader (repr, str, bytes, int, dict, set),
 * whatever its type says: the walk, too, reads names as str before
 * checking. */
#include <string.h>

#include "dump/dump.h"
#include "fuzz-reader.h"
#include "python/python_int.h"
#include "python/repr/repr.h"

#define TYPES_BASE   0x1000u
#define TYPE_STRIDE  0x400u
#define TYPE_ADDR(i) (TYPES_BASE + (uint64_t)(i) * TYPE_STRIDE)
#define NAMES_BASE   (TYPE_ADDR(PYT_COUNT))
#define SET_DUMMY    (NAMES_BASE + 32u * PYT_COUNT)
#define TYPES_END    (SET_DUMMY + 64u)
#define IMAGE_BASE   0x10000u


static const struct py_layout *layouts[16];
static size_t nlayouts;
static uint8_t types[TYPES_END - TYPES_BASE];

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(types + (addr - TYPES_BASE), &v, 8);
}

static void setup(void)
{
	for (unsigned minor = 6; minor <= 15; minor++)
		for (int ft = 0; ft < 2; ft++)
			if (py_layout_for(minor, ft) && nlayouts < 16)
				layouts[nlayouts++] = py_layout_for(minor, ft);
	if (!nlayouts)
		abort();
}

/* The type objects' fields for layout L (offsets differ between versions). */
static void fill_types(const struct py_layout *L)
{
	memset(types, 0, sizeof(types));
	for (int i = 0; i < PYT_COUNT; i++) {
		uint64_t name = NAMES_BASE + 32u * (unsigned)i;
		/* the readers match these types by address; a name is there
		 * for what reads tp_name anyway (at most 31 bytes) */
		snprintf((char *)types + (name - TYPES_BASE), 32, "%s", py_type_symbols[i] ? py_type_symbols[i] : "?");
		put64(TYPE_ADDR(i) + (uint64_t)L->object_type, TYPE_ADDR(PYT_TYPE));
		put64(TYPE_ADDR(i) + (uint64_t)L->type_name, name);
	}
	put64(SET_DUMMY + (uint64_t)L->object_type, TYPE_ADDR(PYT_OBJECT));
}

static int count(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	(void)c, (void)key, (void)value;
	return ++*(size_t *)arg >= 10000;
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (!nlayouts)
		setup();
	if (size < 2)
		return 0;
	static const struct py_layout *last;
	const struct py_layout *L = layouts[data[0] % nlayouts];
	if (L != last) {
		fill_types(L);
		last = L;
	}
	/* the image: the input after its first byte, read in place */
	const struct dump_run runs[] = { { TYPES_BASE, types, sizeof(types) }, { IMAGE_BASE, data + 1, size - 1 } };
	struct dump *dump;
	struct pc_error *e = dump_open_runs(runs, 2, "fuzz-objects", &dump);
	if (e) {
		pc_error_free(e);
		dump_close(dump);
		return 0;
	}

	struct py_options opt = { .max_repr = 256, .max_items = 100, .max_depth = 16 };
	struct py_ctx c = { .d = dump, .opt = &opt, .L = L, .a = arena_new(), .numpy_major = -1,
			    .set_dummy = SET_DUMMY, .type_names = ADDRTAB_INIT(struct py_type_name) };
	if (!c.a) {
		dump_close(dump);
		return 0;
	}
	for (int i = 0; i < PYT_COUNT; i++)
		c.type_addr[i] = TYPE_ADDR(i);

	struct repr_limits lim = { 256, 100, 16 };
	const char *why;
	py_repr(&c, IMAGE_BASE, &lim, &why);
	py_str_utf8(&c, IMAGE_BASE, 4096, &why);
	size_t len, n = 0;
	py_bytes(&c, IMAGE_BASE, 4096, &len, &why);
	uint32_t digits[64];
	int64_t ndigits, v;
	bool negative;
	py_long_digits(&c, IMAGE_BASE, digits, 64, &ndigits, &negative);
	py_long_i64(&c, IMAGE_BASE, &v);
	py_dict_items(&c, IMAGE_BASE, count, &n);
	uint64_t value;
	py_dict_get_str(&c, IMAGE_BASE, "__module__", &value);
	py_set_items(&c, IMAGE_BASE, 1000, count, &n);
	/* the same bytes as a code object (the walk reads a frame's code
	 * object this way, its type checked first: here it is not) */
	c.codes = (struct addrtab)ADDRTAB_INIT(struct py_code);
	const struct py_code *pc = py_code_get(&c, IMAGE_BASE);
	for (int64_t pos = -1; pc && !pc->error && pos < 300; pos++)
		if (py_code_line(&c, pc, pos) < 0)
			abort();   /* the contract: a line, or 0 when unknown */
	addrtab_free(&c.codes);
	addrtab_free(&c.type_names);
	arena_free(c.a);
	dump_close(dump);
	return 0;
}
