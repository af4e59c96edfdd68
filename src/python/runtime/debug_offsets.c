/* _Py_DebugOffsets of CPython 3.13, 3.14 and 3.15.
 *
 * The structure (Include/internal/pycore_runtime.h in 3.13,
 * Include/internal/pycore_debug_offsets.h from 3.14; read in each version's
 * released headers, 3.13.18, 3.14.10 and 3.15.2 as Debian ships them) is an
 * 8-byte cookie "xdebugpy" followed by uint64_t words: the version, the
 * free-threaded flag, then one group per struct, most starting with the
 * struct's size.  Fields are added in the middle from one minor version to
 * the next, never removed or moved, so one list in structure order, each
 * entry with the versions that have it, describes all three: an entry's
 * word index in a version is its position among the entries that version
 * has.
 */
#include "python/runtime/debug_offsets.h"

#include <stdio.h>
#include <string.h>

#define ANY (-1)

static const struct entry {
	const char *name;            /* as in the header: group.field */
	unsigned first, last;        /* the minor versions that have it */
	int dof;                     /* enum py_dof, or ANY when pycore does not use it */
} entries[] = {
	{ "cookie", 13, 99, ANY },
	{ "version", 13, 99, ANY },
	{ "free_threaded", 13, 99, ANY },
	{ "runtime_state.size", 13, 99, DOF_RT_SIZE },
	{ "runtime_state.finalizing", 13, 99, ANY },
	{ "runtime_state.interpreters_head", 13, 99, DOF_RT_INTERPRETERS_HEAD },
	{ "interpreter_state.size", 13, 99, DOF_IS_SIZE },
	{ "interpreter_state.id", 13, 99, DOF_IS_ID },
	{ "interpreter_state.next", 13, 99, DOF_IS_NEXT },
	{ "interpreter_state.threads_head", 13, 99, DOF_IS_THREADS_HEAD },
	{ "interpreter_state.threads_main", 14, 99, ANY },
	{ "interpreter_state.gc", 13, 99, DOF_IS_GC },
	{ "interpreter_state.imports_modules", 13, 99, DOF_IS_MODULES },
	{ "interpreter_state.sysdict", 13, 99, DOF_IS_SYSDICT },
	{ "interpreter_state.builtins", 13, 99, DOF_IS_BUILTINS },
	{ "interpreter_state.ceval_gil", 13, 99, ANY },
	{ "interpreter_state.gil_runtime_state", 13, 99, ANY },
	{ "interpreter_state.gil_runtime_state_enabled", 13, 99, ANY },
	{ "interpreter_state.gil_runtime_state_locked", 13, 99, ANY },
	{ "interpreter_state.gil_runtime_state_holder", 13, 99, ANY },
	{ "interpreter_state.code_object_generation", 14, 99, ANY },
	{ "interpreter_state.tlbc_generation", 14, 99, ANY },
	{ "thread_state.size", 13, 99, DOF_TS_SIZE },
	{ "thread_state.prev", 13, 99, ANY },
	{ "thread_state.next", 13, 99, DOF_TS_NEXT },
	{ "thread_state.interp", 13, 99, DOF_TS_INTERP },
	{ "thread_state.current_frame", 13, 99, DOF_TS_CURRENT_FRAME },
	{ "thread_state.base_frame", 15, 99, ANY },
	{ "thread_state.last_profiled_frame", 15, 99, ANY },
	{ "thread_state.last_profiled_frame_seq", 15, 99, ANY },
	{ "thread_state.thread_id", 13, 99, DOF_TS_THREAD_ID },
	{ "thread_state.native_thread_id", 13, 99, DOF_TS_NATIVE_THREAD_ID },
	{ "thread_state.datastack_chunk", 13, 99, DOF_TS_DATASTACK_CHUNK },
	{ "thread_state.status", 13, 99, ANY },
	{ "thread_state.holds_gil", 15, 99, ANY },
	{ "thread_state.gil_requested", 15, 99, ANY },
	{ "thread_state.current_exception", 15, 99, ANY },
	{ "thread_state.exc_state", 15, 99, ANY },
	{ "err_stackitem.exc_value", 15, 99, ANY },
	{ "interpreter_frame.size", 13, 99, DOF_IF_SIZE },
	{ "interpreter_frame.previous", 13, 99, DOF_IF_PREVIOUS },
	{ "interpreter_frame.executable", 13, 99, DOF_IF_EXECUTABLE },
	{ "interpreter_frame.instr_ptr", 13, 99, DOF_IF_INSTR_PTR },
	{ "interpreter_frame.localsplus", 13, 99, DOF_IF_LOCALSPLUS },
	{ "interpreter_frame.owner", 13, 99, DOF_IF_OWNER },
	{ "interpreter_frame.stackpointer", 14, 99, DOF_IF_STACKPOINTER },
	{ "interpreter_frame.tlbc_index", 14, 99, DOF_IF_TLBC_INDEX },
	{ "code_object.size", 13, 99, DOF_CO_SIZE },
	{ "code_object.filename", 13, 99, DOF_CO_FILENAME },
	{ "code_object.name", 13, 99, DOF_CO_NAME },
	{ "code_object.qualname", 13, 99, DOF_CO_QUALNAME },
	{ "code_object.linetable", 13, 99, DOF_CO_LINETABLE },
	{ "code_object.firstlineno", 13, 99, DOF_CO_FIRSTLINENO },
	{ "code_object.argcount", 13, 99, DOF_CO_ARGCOUNT },
	{ "code_object.localsplusnames", 13, 99, DOF_CO_LOCALSPLUSNAMES },
	{ "code_object.localspluskinds", 13, 99, DOF_CO_LOCALSPLUSKINDS },
	{ "code_object.co_code_adaptive", 13, 99, DOF_CO_CODE_ADAPTIVE },
	{ "code_object.co_tlbc", 14, 99, DOF_CO_TLBC },
	{ "pyobject.size", 13, 99, DOF_OB_SIZE },
	{ "pyobject.ob_type", 13, 99, DOF_OB_TYPE },
	{ "type_object.size", 13, 99, DOF_TP_SIZE },
	{ "type_object.tp_name", 13, 99, DOF_TP_NAME },
	{ "type_object.tp_repr", 13, 99, ANY },
	{ "type_object.tp_flags", 13, 99, DOF_TP_FLAGS },
	{ "type_object.tp_basicsize", 15, 99, ANY },
	{ "type_object.tp_dictoffset", 15, 99, ANY },
	{ "heap_type_object.size", 15, 99, ANY },
	{ "heap_type_object.ht_cached_keys", 15, 99, ANY },
	{ "tuple_object.size", 13, 99, ANY },
	{ "tuple_object.ob_item", 13, 99, DOF_TUPLE_ITEM },
	{ "tuple_object.ob_size", 13, 99, ANY },
	{ "list_object.size", 13, 99, ANY },
	{ "list_object.ob_item", 13, 99, DOF_LIST_ITEM },
	{ "list_object.ob_size", 13, 99, ANY },
	{ "set_object.size", 14, 99, ANY },
	{ "set_object.used", 14, 99, ANY },
	{ "set_object.table", 14, 99, ANY },
	{ "set_object.mask", 14, 99, ANY },
	{ "dict_object.size", 13, 99, ANY },
	{ "dict_object.ma_keys", 13, 99, DOF_DICT_KEYS },
	{ "dict_object.ma_values", 13, 99, DOF_DICT_VALUES },
	{ "float_object.size", 13, 99, ANY },
	{ "float_object.ob_fval", 13, 99, DOF_FLOAT_FVAL },
	{ "long_object.size", 13, 99, ANY },
	{ "long_object.lv_tag", 13, 99, DOF_LONG_LV_TAG },
	{ "long_object.ob_digit", 13, 99, DOF_LONG_DIGIT },
	{ "bytes_object.size", 13, 99, ANY },
	{ "bytes_object.ob_size", 13, 99, ANY },
	{ "bytes_object.ob_sval", 13, 99, DOF_BYTES_SVAL },
	{ "unicode_object.size", 13, 99, ANY },
	{ "unicode_object.state", 13, 99, DOF_UNICODE_STATE },
	{ "unicode_object.length", 13, 99, DOF_UNICODE_LENGTH },
	{ "unicode_object.asciiobject_size", 13, 99, DOF_UNICODE_ASCII_SIZE },
	{ "unicode_object.compactunicodeobject_size", 15, 99, ANY },
	{ "gc.size", 13, 99, DOF_GC_SIZE },
	{ "gc.collecting", 13, 99, DOF_GC_COLLECTING },
	{ "gc.frame", 15, 99, ANY },
	{ "gc.generation_stats_size", 15, 99, ANY },
	{ "gc.generation_stats", 15, 99, ANY },
	{ "gen_object.size", 14, 99, ANY },
	{ "gen_object.gi_name", 14, 99, ANY },
	{ "gen_object.gi_iframe", 14, 99, ANY },
	{ "gen_object.gi_frame_state", 14, 99, ANY },
	{ "llist_node.next", 14, 99, ANY },
	{ "llist_node.prev", 14, 99, ANY },
	{ "debugger_support.eval_breaker", 14, 99, ANY },
	{ "debugger_support.remote_debugger_support", 14, 99, ANY },
	{ "debugger_support.remote_debugging_enabled", 14, 99, ANY },
	{ "debugger_support.debugger_pending_call", 14, 99, ANY },
	{ "debugger_support.debugger_script_path", 14, 99, ANY },
	{ "debugger_support.debugger_script_path_size", 14, 99, ANY },
};

#define NENTRIES (sizeof(entries) / sizeof(entries[0]))
#define FIRST_DESCRIBED 13
#define LAST_DESCRIBED 15

_Static_assert(8 * NENTRIES <= PY_DEBUG_OFFSETS_MAX, "PY_DEBUG_OFFSETS_MAX is too small");

/* Each offset pycore uses and the size of the struct it lies in: an offset
 * at or past its struct's size means the words are not what this
 * description says (a pre-release whose structure differs, or garbage). */
static const struct { int off, size; } inside[] = {
	{ DOF_RT_INTERPRETERS_HEAD, DOF_RT_SIZE },
	{ DOF_IS_ID, DOF_IS_SIZE }, { DOF_IS_NEXT, DOF_IS_SIZE }, { DOF_IS_THREADS_HEAD, DOF_IS_SIZE },
	{ DOF_IS_GC, DOF_IS_SIZE }, { DOF_IS_MODULES, DOF_IS_SIZE }, { DOF_IS_SYSDICT, DOF_IS_SIZE },
	{ DOF_IS_BUILTINS, DOF_IS_SIZE },
	{ DOF_TS_NEXT, DOF_TS_SIZE }, { DOF_TS_INTERP, DOF_TS_SIZE }, { DOF_TS_CURRENT_FRAME, DOF_TS_SIZE },
	{ DOF_TS_THREAD_ID, DOF_TS_SIZE }, { DOF_TS_NATIVE_THREAD_ID, DOF_TS_SIZE },
	{ DOF_TS_DATASTACK_CHUNK, DOF_TS_SIZE },
	{ DOF_IF_PREVIOUS, DOF_IF_SIZE }, { DOF_IF_EXECUTABLE, DOF_IF_SIZE },
	{ DOF_IF_INSTR_PTR, DOF_IF_SIZE }, { DOF_IF_OWNER, DOF_IF_SIZE }, { DOF_IF_STACKPOINTER, DOF_IF_SIZE },
	{ DOF_CO_FILENAME, DOF_CO_SIZE }, { DOF_CO_NAME, DOF_CO_SIZE }, { DOF_CO_QUALNAME, DOF_CO_SIZE },
	{ DOF_CO_LINETABLE, DOF_CO_SIZE }, { DOF_CO_FIRSTLINENO, DOF_CO_SIZE },
	{ DOF_CO_ARGCOUNT, DOF_CO_SIZE }, { DOF_CO_LOCALSPLUSNAMES, DOF_CO_SIZE },
	{ DOF_CO_LOCALSPLUSKINDS, DOF_CO_SIZE }, { DOF_CO_CODE_ADAPTIVE, DOF_CO_SIZE },
	{ DOF_OB_TYPE, DOF_OB_SIZE }, { DOF_TP_NAME, DOF_TP_SIZE }, { DOF_TP_FLAGS, DOF_TP_SIZE },
	{ DOF_GC_COLLECTING, DOF_GC_SIZE },
};

static size_t words_for(unsigned minor)
{
	size_t n = 0;
	for (size_t i = 0; i < NENTRIES; i++)
		n += entries[i].first <= minor && minor <= entries[i].last;
	return n;
}

/* Index the words of version MINOR into O->v. */
static void index_words(const uint64_t *w, unsigned minor, struct py_debug_offsets *o)
{
	for (int k = 0; k < DOF_COUNT; k++)
		o->v[k] = -1;
	size_t at = 0;
	for (size_t i = 0; i < NENTRIES; i++) {
		if (entries[i].first > minor || minor > entries[i].last)
			continue;
		if (entries[i].dof != ANY)
			o->v[entries[i].dof] = (int64_t)w[at];
		at++;
	}
}

/* The checks that do not need the version's description: the cookie, a
 * described version, the flag.  Word 1 is the version, word 2 the flag in
 * every version. */
static const char *check_head(const uint64_t *w, unsigned *minor)
{
	if (memcmp(&w[0], "xdebugpy", 8) != 0)
		return "_PyRuntime does not start with the _Py_DebugOffsets cookie";
	if ((w[1] >> 24) != 3)
		return "_Py_DebugOffsets names no CPython 3 version";
	*minor = (unsigned)((w[1] >> 16) & 0xff);
	if (w[2] > 1)
		return "_Py_DebugOffsets' free-threaded flag is neither 0 nor 1";
	return NULL;
}

static const char *check_ranges(const struct py_debug_offsets *o)
{
	const int64_t *v = o->v;
	static const int sizes[] = { DOF_RT_SIZE, DOF_IS_SIZE, DOF_TS_SIZE, DOF_IF_SIZE, DOF_CO_SIZE,
				     DOF_OB_SIZE, DOF_TP_SIZE, DOF_GC_SIZE };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (v[sizes[i]] <= 0 || v[sizes[i]] > (1 << 20))
			return "a struct size in _Py_DebugOffsets is out of range";
	for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
		int64_t off = v[inside[i].off];
		if (off == -1 && inside[i].off == DOF_IF_STACKPOINTER)
			continue; /* 3.13 has none */
		if (off < 0 || off >= v[inside[i].size])
			return "an offset in _Py_DebugOffsets lies outside its struct";
	}
	/* PyObject is 16 bytes (32 free-threaded or with Py_TRACE_REFS), its
	 * type the last word */
	if (v[DOF_OB_SIZE] % 8 || v[DOF_OB_SIZE] > 64 || v[DOF_OB_TYPE] != v[DOF_OB_SIZE] - 8)
		return "_Py_DebugOffsets' PyObject layout is not CPython's";
	if (v[DOF_CO_CODE_ADAPTIVE] > (1 << 12) || v[DOF_UNICODE_ASCII_SIZE] <= 0 ||
	    v[DOF_UNICODE_ASCII_SIZE] > 256 || v[DOF_IF_LOCALSPLUS] < 0 ||
	    v[DOF_IF_LOCALSPLUS] > v[DOF_IF_SIZE])
		return "_Py_DebugOffsets sizes are out of range";
	return NULL;
}

static bool prerelease(uint64_t hex)
{
	return ((hex >> 4) & 0xf) != 0xf;
}

struct pc_error *py_debug_offsets_read(struct dump *d, uint64_t at, uint64_t hexversion,
				       struct py_debug_offsets *out)
{
	uint64_t w[3];
	if (dump_read(d, at, w, sizeof(w)) != PC_OK) {
		return pc_error_at(PC_ENOTCAPTURED, at, "_PyRuntime's debug offsets (0x%llx) are not in "
				   "the dump", (unsigned long long)at);
	}
	unsigned minor = 0;
	const char *bad = check_head(w, &minor);
	if (bad)
		return pc_error_at(PC_EUNSUPPORTED, at, "%s", bad);
	if (hexversion && (w[1] >> 16) != (hexversion >> 16)) {
		return pc_error_at(PC_EUNSUPPORTED, at, "debug offsets are of version 0x%llx, Py_Version "
				   "is 0x%llx", (unsigned long long)w[1], (unsigned long long)hexversion);
	}
	if (minor < FIRST_DESCRIBED || minor > LAST_DESCRIBED) {
		return pc_error_at(PC_EUNSUPPORTED, at, "CPython 3.%u's _Py_DebugOffsets are not known to "
				   "pycore (it reads those of 3.%d to 3.%d)", minor, FIRST_DESCRIBED,
				   LAST_DESCRIBED);
	}
	uint64_t words[PY_DEBUG_OFFSETS_MAX / 8];
	size_t n = words_for(minor);
	if (dump_read(d, at, words, 8 * n) != PC_OK) {
		return pc_error_at(PC_ENOTCAPTURED, at, "_PyRuntime's debug offsets (0x%llx, %zu bytes) are "
				   "not in the dump", (unsigned long long)at, 8 * n);
	}
	memset(out, 0, sizeof(*out));
	out->version = words[1];
	out->free_threaded = words[2] != 0;
	index_words(words, minor, out);
	bad = check_ranges(out);
	if (bad && prerelease(words[1]))
		return pc_error_at(PC_EUNSUPPORTED, at, "%s: this is a pre-release of CPython 3.%u whose "
				   "structure differs from the release's, which is the one pycore "
				   "describes", bad, minor);
	if (bad)
		return pc_error_at(PC_EUNSUPPORTED, at, "%s", bad);
	return NULL;
}

bool py_debug_offsets_plausible(struct dump *d, uint64_t at, uint64_t *version)
{
	struct py_debug_offsets o;
	struct pc_error *e = py_debug_offsets_read(d, at, 0, &o);
	if (e) {
		pc_error_free(e);
		return false;
	}
	*version = o.version;
	return true;
}

void py_debug_offsets_apply(const struct py_debug_offsets *o, struct py_layout *L)
{
	const int64_t *v = o->v;
	L->runtime_interpreters_head = v[DOF_RT_INTERPRETERS_HEAD];
	L->interp_id = v[DOF_IS_ID];
	L->interp_next = v[DOF_IS_NEXT];
	L->interp_tstate_head = v[DOF_IS_THREADS_HEAD];
	L->interp_modules = v[DOF_IS_MODULES];
	L->interp_sysdict = v[DOF_IS_SYSDICT];
	L->interp_builtins = v[DOF_IS_BUILTINS];
	L->interp_gc_collecting = v[DOF_IS_GC] + v[DOF_GC_COLLECTING];
	L->tstate_next = v[DOF_TS_NEXT];
	L->tstate_interp = v[DOF_TS_INTERP];
	L->tstate_current_frame = v[DOF_TS_CURRENT_FRAME];
	L->tstate_thread_id = v[DOF_TS_THREAD_ID];
	L->tstate_native_thread_id = v[DOF_TS_NATIVE_THREAD_ID];
	L->tstate_datastack_chunk = v[DOF_TS_DATASTACK_CHUNK];
	L->sizeof_iframe = v[DOF_IF_SIZE];
	L->iframe_previous = v[DOF_IF_PREVIOUS];
	L->iframe_code = v[DOF_IF_EXECUTABLE];
	L->iframe_instr = v[DOF_IF_INSTR_PTR];
	L->iframe_localsplus = v[DOF_IF_LOCALSPLUS];
	L->iframe_owner = v[DOF_IF_OWNER];
	if (v[DOF_IF_STACKPOINTER] >= 0)
		L->iframe_stackpointer = v[DOF_IF_STACKPOINTER];
	/* 3.14+: 0 in default builds, which have neither */
	if (o->free_threaded && v[DOF_IF_TLBC_INDEX] > 0 && v[DOF_CO_TLBC] > 0) {
		L->iframe_tlbc_index = v[DOF_IF_TLBC_INDEX];
		L->code_tlbc = v[DOF_CO_TLBC];
	}
	L->code_filename = v[DOF_CO_FILENAME];
	L->code_name = v[DOF_CO_NAME];
	L->code_qualname = v[DOF_CO_QUALNAME];
	L->code_linetable = v[DOF_CO_LINETABLE];
	L->code_firstlineno = v[DOF_CO_FIRSTLINENO];
	L->code_argcount = v[DOF_CO_ARGCOUNT];
	L->code_localsplusnames = v[DOF_CO_LOCALSPLUSNAMES];
	L->code_localspluskinds = v[DOF_CO_LOCALSPLUSKINDS];
	L->code_code_adaptive = v[DOF_CO_CODE_ADAPTIVE];
	L->object_type = v[DOF_OB_TYPE];
	L->type_name = v[DOF_TP_NAME];
	L->type_flags = v[DOF_TP_FLAGS];
	L->tuple_item = v[DOF_TUPLE_ITEM];
	L->list_item = v[DOF_LIST_ITEM];
	L->dict_keys = v[DOF_DICT_KEYS];
	L->dict_values = v[DOF_DICT_VALUES];
	L->float_value = v[DOF_FLOAT_FVAL];
	L->long_lv_tag = v[DOF_LONG_LV_TAG];
	L->long_digit = v[DOF_LONG_DIGIT];
	L->bytes_sval = v[DOF_BYTES_SVAL];
	L->unicode_state = v[DOF_UNICODE_STATE];
	L->unicode_length = v[DOF_UNICODE_LENGTH];
	L->sizeof_ascii = v[DOF_UNICODE_ASCII_SIZE];
}
