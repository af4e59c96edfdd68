/* Private to the python/ layer: the walk's context every file of it shares
 * (dump, layout, caches, caps) and the reads of one word through it. */
#ifndef PYCORE_PYTHON_INT_H
#define PYCORE_PYTHON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"
#include "locate/locate.h"
#include "model/model.h"
#include "util/addrtab.h"
#include "python/python.h"
#include "python/runtime/layout.h"
#include "symbols/symbols.h"

/* Hard caps on what the walk believes of untrusted memory. */
#define PY_MAX_INTERPRETERS 256
#define PY_MAX_THREADS      4096
#define PY_MAX_FRAMES       100000
#define PY_MAX_NAME         4096           /* characters of a name or file name */
#define PY_MAX_TABLE        (4u << 20)     /* bytes of a line table */
/* entries of a dict's table walked: CPython's own largest table (a
 * 2^31-slot one holds 2^31 * 2/3 entries, 3.11+'s log2 size at most 30
 * and before it a Py_ssize_t); past it a read stops, saying so (-2), never
 * as unreadable memory */
#define PY_MAX_DICT_ENTRIES (1u << 31)

/* The built-in types repr() knows, found by their type objects' symbols. */
enum py_type {
	PYT_INT, PYT_BOOL, PYT_FLOAT, PYT_STR, PYT_BYTES, PYT_BYTEARRAY, PYT_LIST,
	PYT_TUPLE, PYT_DICT, PYT_SET, PYT_FROZENSET, PYT_NONE, PYT_ELLIPSIS, PYT_CELL,
	PYT_COMPLEX, PYT_OBJECT, PYT_TYPE, PYT_FUNCTION, PYT_RANGE, PYT_SLICE, PYT_MODULE,
	PYT_COUNT,
	PYT_OTHER = PYT_COUNT,
	PYT_UNREADABLE,
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
	struct py_stdlib *stdlib;    /* repr/stdlib.c's types, looked up once */
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
	struct addrtab type_names;   /* struct py_type_name (objects/classes.c), by type address */
	/* 3.14+, without _AsyncioDebug and with L from the DWARF: the thread
	 * state's and interpreter's task list fields from that DWARF, NULL
	 * when not found */
	struct py_aio_lists { int64_t tstate_head, tstate_running_task, interp_head; } *aio_dwarf;
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

#endif
