/* _Py_DebugOffsets: the offsets CPython 3.13+ publishes at the start of
 * _PyRuntime for out-of-process readers.  The structure grows fields in the
 * middle between minor versions, so each version has its own description
 * (debug_offsets.c). */
#ifndef PYCORE_PYTHON_DEBUG_OFFSETS_H
#define PYCORE_PYTHON_DEBUG_OFFSETS_H

#include "dump/dump.h"
#include "python/runtime/layout.h"

#include <stdbool.h>
#include <stdint.h>

/* The entries pycore uses; index into py_debug_offsets.v. */
enum py_dof {
	DOF_RT_SIZE, DOF_RT_INTERPRETERS_HEAD,
	DOF_IS_SIZE, DOF_IS_ID, DOF_IS_NEXT, DOF_IS_THREADS_HEAD, DOF_IS_GC, DOF_IS_MODULES,
	DOF_IS_SYSDICT, DOF_IS_BUILTINS,
	DOF_TS_SIZE, DOF_TS_NEXT, DOF_TS_INTERP, DOF_TS_CURRENT_FRAME, DOF_TS_THREAD_ID,
	DOF_TS_NATIVE_THREAD_ID, DOF_TS_DATASTACK_CHUNK,
	DOF_IF_SIZE, DOF_IF_PREVIOUS, DOF_IF_EXECUTABLE, DOF_IF_INSTR_PTR, DOF_IF_LOCALSPLUS,
	DOF_IF_OWNER, DOF_IF_STACKPOINTER, DOF_IF_TLBC_INDEX,
	DOF_CO_SIZE, DOF_CO_FILENAME, DOF_CO_NAME, DOF_CO_QUALNAME, DOF_CO_LINETABLE,
	DOF_CO_FIRSTLINENO, DOF_CO_ARGCOUNT, DOF_CO_LOCALSPLUSNAMES, DOF_CO_LOCALSPLUSKINDS,
	DOF_CO_CODE_ADAPTIVE, DOF_CO_TLBC,
	DOF_OB_SIZE, DOF_OB_TYPE, DOF_TP_SIZE, DOF_TP_NAME, DOF_TP_FLAGS,
	DOF_TUPLE_ITEM, DOF_LIST_ITEM, DOF_DICT_KEYS, DOF_DICT_VALUES, DOF_FLOAT_FVAL,
	DOF_LONG_LV_TAG, DOF_LONG_DIGIT, DOF_BYTES_SVAL,
	DOF_UNICODE_STATE, DOF_UNICODE_LENGTH, DOF_UNICODE_ASCII_SIZE,
	DOF_GC_SIZE, DOF_GC_COLLECTING,
	DOF_COUNT
};

struct py_debug_offsets {
	uint64_t version;            /* PY_VERSION_HEX of the build */
	bool free_threaded;
	int64_t v[DOF_COUNT];        /* -1: this version's structure has no such entry */
};

/* The largest _Py_DebugOffsets of any described version, in bytes: what a
 * reader reads at once. */
#define PY_DEBUG_OFFSETS_MAX (8 * 128)

/* Read and check the _Py_DebugOffsets at AT.  HEXVERSION (0 when unknown)
 * is the version the build says elsewhere (Py_Version).  Returns NULL, or
 * the error: PC_EUNSUPPORTED when the structure is not one pycore can trust
 * (not the cookie, another version, a version without a description, sizes
 * or offsets out of range), PC_ENOTCAPTURED when it is not in the dump. */
struct pc_error *py_debug_offsets_read(struct dump *d, uint64_t at, uint64_t hexversion,
				       struct py_debug_offsets *out);

/* Is there a plausible _Py_DebugOffsets at AT (used by the cookie scan)? */
bool py_debug_offsets_plausible(struct dump *d, uint64_t at, uint64_t *version);

/* Fill the layout's fields that the offsets give. */
void py_debug_offsets_apply(const struct py_debug_offsets *o, struct py_layout *L);

#endif
