/* Private to the python/ layer: the walk's context and object readers. */
#ifndef PYCORE_PYTHON_INT_H
#define PYCORE_PYTHON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"
#include "locate/locate.h"
#include "model/model.h"
#include "util/addrtab.h"
#include "python/layout.h"
#include "python/python.h"
#include "symbols/symbols.h"

/* Hard caps on what the walk believes of untrusted memory. */
#define PY_MAX_INTERPRETERS 256
#define PY_MAX_THREADS      4096
#define PY_MAX_FRAMES       100000
#define PY_MAX_NAME         4096           /* characters of a name or file name */
#define PY_MAX_TABLE        (4u << 20)     /* bytes of a line table */
#define PY_MAX_DICT_ENTRIES (1u << 20)

/* The built-in types repr() knows, found by their type objects' symbols. */
enum py_type {
	PYT_INT, PYT_BOOL, PYT_FLOAT, PYT_STR, PYT_BYTES, PYT_BYTEARRAY, PYT_LIST,
	PYT_TUPLE, PYT_DICT, PYT_SET, PYT_FROZENSET, PYT_NONE, PYT_ELLIPSIS, PYT_CELL,
	PYT_COMPLEX, PYT_OBJECT, PYT_TYPE, PYT_FUNCTION, PYT_RANGE, PYT_SLICE, PYT_MODULE,
	PYT_COUNT,
	PYT_OTHER = PYT_COUNT,
	PYT_UNREADABLE,
};

/* What a walk remembers of a code object. */
struct py_code {
	uint64_t addr;
	const char *name, *qualname, *filename;
	int firstlineno;
	int firsttraceable;          /* code units; 3.11+ */
	uint8_t *table;              /* co_lnotab or co_linetable, arena-owned */
	size_t table_len;
	const char *error;           /* set when the code object could not be read */
	struct model_error_info error_info;
};

/* What a walk remembers of a type's name (py_type_qualname). */
struct py_type_name {
	uint64_t addr;
	const char *module, *qualname;
};

struct py_options;

struct py_ctx {
	struct dump *d;
	const struct py_options *opt;
	const struct py_layout *L;
	struct model_report *r;
	struct arena *a;
	uint64_t code_type;          /* &PyCode_Type, 0 when unknown */
	uint64_t type_addr[PYT_COUNT]; /* the built-in type objects, 0 when unknown */
	uint64_t set_dummy;          /* the set's deleted-entry marker, 0 when unknown */
	uint64_t interp;             /* the PyInterpreterState being walked */
	bool layout_from_dwarf;      /* L was read from the interpreter's DWARF */
	int numpy_major;             /* 0 not looked up yet, -1 unknown */
	struct py_stdlib *stdlib;    /* repr_stdlib.c's types, looked up once */
	uint64_t deadline_ns;        /* CLOCK_MONOTONIC; 0: no time budget */
	bool timed_out;
	/* the dump lacks the interpreter's state (a stack-only minidump): what
	 * was missing, said once by py_analyze with the producer's hint */
	const char *state_missing;
	bool keep_internal;          /* native stacks keep the interpreter's frames */
	struct addrtab codes;        /* struct py_code, by address */
	/* the kind and address of the reason the last object reader to give
	 * one gave through its why or error out-parameter (py_repr,
	 * py_str_utf8, py_bytes): read with that reason, before the next call */
	struct model_error_info why_info;
	struct py_asyncio_offsets *aio_offsets; /* 3.14+: _AsyncioDebug, NULL when not found */
	struct addrtab type_names;   /* struct py_type_name (repr.c), by type address */
	/* 3.14+, without _AsyncioDebug and with L from the DWARF: the thread
	 * state's and interpreter's task list fields from that DWARF, NULL
	 * when not found */
	struct py_aio_lists { int64_t tstate_head, tstate_running_task, interp_head; } *aio_dwarf;
};

/* The symbols the runtime is found by, and where it was found. */
enum {
	PY_SYM_RUNTIME, PY_SYM_INTERP_HEAD, PY_SYM_VERSION, PY_SYM_CODE_TYPE, PY_SYM_TSTATE_CURRENT,
	PY_SYM_TYPE_TYPE,
	PY_NSYMS
};

struct py_runtime {
	struct dump_module *mod;     /* the interpreter's module */
	uint64_t sym[PY_NSYMS];      /* addresses, 0 when unknown */
	const char *located_by;      /* "symbol", "debug-offsets" or "scan" */
	unsigned scanned_minor;      /* the version whose layout the scan matched */
};

/* A free-threaded build's layout: only its PyObject has ob_tid. */
static inline bool py_layout_free_threaded(const struct py_layout *L)
{
	return L->object_tid >= 0;
}

/* Reads of one word of the dump: PC_OK (0), or the read's code. */
static inline enum pc_code py_rd_ptr(struct py_ctx *c, uint64_t addr, uint64_t *out)
{
	return dump_read_u64(c->d, addr, out);
}

static inline enum pc_code py_rd_i64(struct py_ctx *c, uint64_t addr, int64_t *out)
{
	return dump_read(c->d, addr, out, 8);
}

static inline enum pc_code py_rd_i32(struct py_ctx *c, uint64_t addr, int32_t *out)
{
	return dump_read(c->d, addr, out, 4);
}

/* From 3.14, _PyInterpreterFrame.f_executable and the localsplus slots are
 * _PyStackRef, a tagged word (Include/internal/pycore_stackref.h of 3.14
 * and 3.15): low bits 0b11 mark a tagged int (the value shifted left by 2),
 * not an object; otherwise the object pointer is the word with its low tag
 * bit(s) cleared (bit 0, Py_TAG_REFCNT / Py_TAG_DEFERRED, marks a
 * reference that holds no count), and NULL is the word 1.  3.13 stores
 * plain pointers, but for its free-threaded build, whose bit 0
 * (Py_TAG_DEFERRED) marks a deferred reference (3.13's
 * pycore_stackref.h); earlier versions have no _PyStackRef.  Returns the
 * object, or 0 for NULL and tagged ints. */
static inline uint64_t py_stackref_obj(const struct py_ctx *c, uint64_t bits)
{
	if (c->L->minor < 14)
		return py_layout_free_threaded(c->L) ? bits & ~(uint64_t)1 : bits;
	if ((bits & 3) == 3)
		return 0;
	return bits & ~(uint64_t)3;
}

/* Is this 3.14+ _PyStackRef a tagged int?  Its value is then *VALUE. */
static inline bool py_stackref_int(const struct py_ctx *c, uint64_t bits, int64_t *value)
{
	if (c->L->minor < 14 || (bits & 3) != 3)
		return false;
	*value = (int64_t)bits >> 2;
	return true;
}

/* UTF-8 of one code point (at most 4 bytes); returns the length. */
size_t py_utf8_encode(uint32_t cp, char *out);

/* ---- runtime.c ---- */

/* Find the runtime: by symbols, then the debug offsets' cookie, then a
 * scan (each fallback warns in R).  NULL, or PC_ENOTPYTHON's error. */
struct pc_error *py_find_runtime(struct dump *d, const struct locate *loc, struct symbols *s,
				 struct model_report *r, struct py_runtime *rt);
/* The built-in types, by symbol (when found by symbols) and from the
 * builtins dict of the interpreter HEAD. */
void py_find_types(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt, uint64_t head);
/* A module named like an interpreter (libpython*, python*), or NULL: a
 * dump of such a process whose state is missing is a partial report. */
struct dump_module *py_named_module(struct dump *d);
/* "python3.12" or "libpython3.6m.so" -> 12 or 6 for MAJOR 3 ("python2.7"
 * -> 7 for MAJOR 2); 0 when the name says nothing. */
unsigned py_minor_from_name(const char *path, unsigned major);

/* ---- layout_choose.c ---- */

/* Tell the version and choose the layout into *L (c->L then points to
 * it); *HEXVERSION is the full version when known, else 0.  NULL, or
 * PC_EUNSUPPORTED's error; *UNREADABLE when the report stands but no
 * interpreter can be read (c->state_missing, or a warning, says why). */
struct pc_error *py_choose_layout(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt,
				  struct py_layout *L, uint64_t *hexversion, bool *unreadable);
/* "3.12.1", "3.15.0a2" from a PY_VERSION_HEX. */
const char *py_version_string(struct arena *a, uint64_t hex);
uint64_t py_version_in_file(struct symbols *s, struct dump_module *m, unsigned minor);

/* ---- interp.c ---- */

/* Every interpreter from HEAD on, with its threads, into c->r. */
void py_walk_interpreters(struct py_ctx *c, uint64_t runtime, uint64_t head, uint64_t tstate_current);
/* With --native, after weaving: the <GC> marker on the thread whose native
 * stack runs the collector, where no thread holds the GIL. */
void py_gc_after_native(struct py_ctx *c);

/* ---- frames.c ---- */

/* One thread's Python frames from FRAME (the newest) outwards, TS its
 * thread state (3.11+: where the chain must end is checked), VIA where
 * FRAME was read from when that is not the thread state itself (3.11,
 * 3.12: the _PyCFrame), else 0. */
void py_walk_frames(struct py_ctx *c, struct model_thread *t, uint64_t ts, uint64_t frame, uint64_t via);
/* A thread whose current frame cannot be had (WHY says how, INFO its
 * kind and address): the error WHY, and (3.11+) the frames on its data stack, from the bottom to the
 * top its thread state records, appended (innermost first) marked
 * recovered when that walk meets the top exactly; the error counts them. */
void py_recover_thread(struct py_ctx *c, struct model_thread *t, uint64_t ts, struct model_error_info info,
		       const char *why);
/* The one Python frame FRAME (a generator's or coroutine's), appended to
 * T's frames; a shim frame adds none. */
void py_read_frame(struct py_ctx *c, struct model_thread *t, uint64_t frame);
/* FRAME's first argument (fast local 0, through its cell; a method's
 * self), 0 when unreadable. */
uint64_t py_frame_arg0(struct py_ctx *c, uint64_t frame);

/* ---- asyncio.c ---- */

/* 3.14+: the _asyncio module's debug offsets (Py_AsyncioModuleDebugOffsets
 * in Modules/_asynciomodule.c, the section .AsyncioDebug of the module
 * that defines _AsyncioDebug: _asyncio's own, or the interpreter's when
 * it is built in), offsets from the start of each object, header
 * included; checked against the DWARF of Debian's 3.14 build (gdb: ptype
 * /o Py_AsyncioModuleDebugOffsets). */
struct py_asyncio_offsets {
	uint64_t task_size, task_name, task_awaited_by, task_is_task, task_awaited_by_is_set,
		task_coro, task_node;
	uint64_t interp_size, interp_tasks_head;
	uint64_t tstate_size, tstate_running_loop, tstate_running_task, tstate_tasks_head;
};
/* Find them, in the interpreter's module or a module _asyncio.*, and keep
 * them in C (3.14+; the modules' files must be at hand). */
void py_find_asyncio_offsets(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module);

/* The event loops and tasks of interpreter INTERP into MI (after its
 * threads were walked). */
void py_asyncio(struct py_ctx *c, uint64_t interp, struct model_interp *mi);
/* waits.c: what each blocked thread of MI waits on (threads[].waiting_on). */
void py_lock_waits(struct py_ctx *c, struct model_interp *mi);

/* ---- budget.c ---- */

/* True once the time budget (--timeout) is spent; the walk then stops
 * where it is and says so. */
bool py_out_of_time(struct py_ctx *c);
/* Mark T incomplete with MSG, of kind WHY (the first reason is kept). */
void py_thread_error(struct py_ctx *c, struct model_thread *t, struct model_error_info why, const char *msg);
/* CLOCK_MONOTONIC, in nanoseconds. */
uint64_t py_now_ns(void);

/* ---- native.c ---- */

/* T's native stack, its Python frames woven in where that is proven;
 * frames of INTERP_MODULE are left out unless --native-all.  SHARED: another
 * Python thread state runs on T's OS thread too. */
void py_weave_native(struct py_ctx *c, struct symbols *s, struct model_thread *t,
		     struct dump_module *interp_module, bool shared);
/* Every OS thread of the dump without a Python thread state, with its
 * native stack, into c->r->native_threads. */
void py_native_threads(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module);

/* ---- code.c ---- */

/* A code object's name, file and line table, cached by address; valid
 * until the next call.  NULL only when out of memory; ->error says why a
 * code object could not be read. */
const struct py_code *py_code_get(struct py_ctx *c, uint64_t addr);
/* The line at POS in the bytecode (bytes up to 3.9, code units after);
 * 0 when unknown. */
int py_code_line(const struct py_ctx *c, const struct py_code *pc, int64_t pos);
/* F's line, and from 3.11 on its end line and columns, at POS as above. */
void py_code_locate(const struct py_ctx *c, const struct py_code *pc, int64_t pos, struct model_frame *f);

/* ---- objects.c ---- */

/* Read a str object as UTF-8 into the arena (at most MAXCHARS characters).
 * Returns NULL and sets *why on failure. */
const char *py_str_utf8(struct py_ctx *c, uint64_t addr, size_t maxchars, const char **why);
/* Read a bytes object's contents (at most MAX bytes) into the arena. */
uint8_t *py_bytes(struct py_ctx *c, uint64_t addr, size_t max, size_t *len, const char **why);
/* Why an int object's digits could not be read. */
enum py_long_err {
	PY_LONG_OK,
	PY_LONG_UNREADABLE,          /* its size (lv_tag, ob_size) not captured */
	PY_LONG_CORRUPT_SIGN,        /* 3.12+ sign bits 3, which CPython never writes */
	PY_LONG_TOO_LARGE,           /* more digits than asked for (or a negative count) */
	PY_LONG_DIGITS_UNREADABLE,   /* its digits not captured */
};
/* The sign and 30-bit digits (least significant first) of the int object at
 * ADDR: sets *NDIGITS (also when PY_LONG_TOO_LARGE) and *NEGATIVE, and reads
 * the digits into DIGITS when there are at most MAX of them. */
enum py_long_err py_long_digits(struct py_ctx *c, uint64_t addr, uint32_t *digits, size_t max,
				int64_t *ndigits, bool *negative);
/* Read an int object that fits in 60 bits: 0, or -1 when it does not, is
 * not captured or is corrupt. */
int py_long_i64(struct py_ctx *c, uint64_t addr, int64_t *out);
/* Look up a str key in a dict; returns 0 and the value's address. */
int py_dict_get_str(struct py_ctx *c, uint64_t dict, const char *key, uint64_t *value);
/* The same for N keys (at most PY_MAX_LOOKUP) in one pass over the dict:
 * VALUES[i] the value of KEYS[i], 0 when not found; returns how many were
 * found. */
#define PY_MAX_LOOKUP 16
int py_dict_get_strs(struct py_ctx *c, uint64_t dict, const char *const *keys, uint64_t *values, size_t n);

/* Iterate a dict's items: calls FN for each key/value pair until it returns
 * non-zero.  Returns 0, or -1 when the dict could not be read. */
typedef int (*py_dict_fn)(struct py_ctx *c, uint64_t key, uint64_t value, void *arg);
int py_dict_items(struct py_ctx *c, uint64_t dict, py_dict_fn fn, void *arg);
/* The same over a keys object and (split tables) a values array. */
int py_dict_keys_values(struct py_ctx *c, uint64_t keys, uint64_t values, py_dict_fn fn, void *arg);
/* The dict of module NAME in sys.modules of interpreter INTERP: 0 and its
 * address, or -1 when not imported or unreadable. */
int py_module_dict(struct py_ctx *c, uint64_t interp, const char *name, uint64_t *dict);
/* The same for N modules (at most PY_MAX_LOOKUP) in one pass over
 * sys.modules: DICTS[i] 0 for those not found; returns how many were. */
int py_module_dicts(struct py_ctx *c, uint64_t interp, const char *const *names, uint64_t *dicts, size_t n);
/* Calls FN (value 0) for each key of the set at SET until it returns
 * non-zero; at most MAX keys.  0, or -1 when the set could not be read. */
int py_set_items(struct py_ctx *c, uint64_t set, size_t max, py_dict_fn fn, void *arg);

/* ---- layout.c ---- */
/* The table of 3.MINOR's default build, or (FREE_THREADED, 3.13+) of its
 * free-threaded build; NULL when there is none. */
const struct py_layout *py_layout_for(unsigned minor, bool free_threaded);

#endif
