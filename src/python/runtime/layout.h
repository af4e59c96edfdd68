/* The layout of one CPython minor version: the struct offsets, sizes and
 * constants that the walkers need.
 *
 * One table per minor version lives in versions/3.X.h; scripts/gen-versions
 * generates them from the DWARF of real builds (never edit them by hand).
 * Every offset is in bytes from the start of its struct; -1 means "this
 * version has no such field".  Sizes are sizeof() of the named type.
 *
 * Field names follow CPython's own: runtime_* is _PyRuntimeState, interp_*
 * PyInterpreterState, tstate_* PyThreadState, frame_* PyFrameObject (up to
 * 3.10), iframe_* _PyInterpreterFrame (3.11+), code_* PyCodeObject.
 */
#ifndef PYCORE_PYTHON_LAYOUT_H
#define PYCORE_PYTHON_LAYOUT_H

#include <stdint.h>

struct py_layout {
	unsigned minor;                   /* 6 for 3.6, ..., 15 for 3.15 */
	const char *source;               /* which build the table came from */

	/* _PyRuntimeState (3.7+) */
	int64_t runtime_interpreters_head;   /* .interpreters.head */
	int64_t runtime_ceval_gil;           /* .ceval.gil (3.7-3.11): struct _gil_runtime_state, inline */
	int64_t runtime_finalizing;          /* ._finalizing (3.9+), .finalizing (3.7, 3.8): the
						thread state finalizing the runtime (Py_FinalizeEx),
						NULL before */

	/* struct _gil_runtime_state */
	int64_t gil_locked;                  /* .locked (_Py_atomic_int) */
	int64_t gil_last_holder;             /* .last_holder (_Py_atomic_address) */
	int64_t gil_enabled;                 /* .enabled (free-threaded builds): 0 while the
					      * GIL is disabled */

	/* PyInterpreterState */
	int64_t interp_next;
	int64_t interp_tstate_head;          /* .tstate_head (<=3.10) or .threads.head (3.11+) */
	int64_t interp_id;                   /* .id (3.7+) */
	int64_t interp_sysdict;
	int64_t interp_builtins;             /* .builtins: the builtins module's dict */
	int64_t interp_modules;              /* .modules (<=3.11) or .imports.modules (3.12+) */
	int64_t interp_ceval_gil;            /* .ceval.gil (3.12+): pointer to struct _gil_runtime_state */
	int64_t interp_runtime;              /* .runtime (3.9+): back to _PyRuntime */

	/* PyThreadState */
	int64_t tstate_next;
	int64_t tstate_interp;
	int64_t tstate_frame;                /* .frame (<=3.10): PyFrameObject * */
	int64_t tstate_cframe;               /* .cframe (3.11, 3.12): _PyCFrame *; 3.10 has a
					      * member of that name too, a different struct
					      * without current_frame: never used there */
	int64_t tstate_current_frame;        /* .current_frame (3.13+): _PyInterpreterFrame * */
	int64_t tstate_thread_id;            /* .thread_id: pthread_t, threading.get_ident() */
	int64_t tstate_native_thread_id;     /* .native_thread_id (3.11+): the OS tid */
	int64_t tstate_datastack_chunk;      /* .datastack_chunk (3.11+) */
	int64_t tstate_datastack_top;        /* .datastack_top (3.11+): the current chunk's top */
	int64_t cframe_current_frame;        /* _PyCFrame.current_frame (3.11, 3.12) */

	/* PyFrameObject (<=3.10; in 3.11+ only a wrapper) */
	int64_t frame_back;                  /* .f_back */
	int64_t frame_code;                  /* .f_code */
	int64_t frame_lasti;                 /* .f_lasti: int; bytes <=3.9, code units in 3.10 */
	int64_t frame_lineno;                /* .f_lineno */
	int64_t frame_locals;                /* .f_locals: dict or NULL */
	int64_t frame_localsplus;            /* .f_localsplus[] */
	int64_t frame_frame;                 /* .f_frame (3.11+): _PyInterpreterFrame *; f_back and
					      * f_lineno also remain in the 3.11+ wrapper */

	/* _PyInterpreterFrame (3.11+) */
	int64_t iframe_previous;
	int64_t iframe_code;                 /* .f_code (3.11, 3.12) or .f_executable (3.13) */
	int64_t iframe_instr;                /* .prev_instr (3.11, 3.12) or .instr_ptr (3.13) */
	int64_t iframe_owner;                /* .owner: char */
	int64_t iframe_is_entry;             /* .is_entry (3.11 only): bool */
	int64_t iframe_locals;               /* .f_locals: dict or NULL */
	int64_t iframe_localsplus;           /* .localsplus[] */
	int64_t iframe_stacktop;             /* .stacktop (3.11-3.13) */
	int64_t iframe_stackpointer;         /* .stackpointer (3.14+): _PyStackRef * */
	int64_t iframe_tlbc_index;           /* .tlbc_index (3.14+ free-threaded): int32, which
					      * of the code's bytecode copies instr_ptr is in */
	int64_t sizeof_iframe;

	/* _PyStackChunk (3.11+) */
	int64_t chunk_previous;
	int64_t chunk_size;
	int64_t chunk_data;

	/* PyCodeObject */
	int64_t code_argcount;
	int64_t code_posonlyargcount;        /* 3.8+ */
	int64_t code_kwonlyargcount;
	int64_t code_nlocals;
	int64_t code_flags;
	int64_t code_firstlineno;
	int64_t code_filename;
	int64_t code_name;
	int64_t code_qualname;               /* 3.11+ */
	int64_t code_lnotab;                 /* .co_lnotab (<=3.9): bytes */
	int64_t code_linetable;              /* .co_linetable (3.10+): bytes */
	int64_t code_varnames;               /* .co_varnames (<=3.10): tuple */
	int64_t code_cellvars;               /* .co_cellvars (<=3.10): tuple */
	int64_t code_freevars;               /* .co_freevars (<=3.10): tuple */
	int64_t code_cell2arg;               /* .co_cell2arg (<=3.10) */
	int64_t code_localsplusnames;        /* 3.11+: tuple */
	int64_t code_localspluskinds;        /* 3.11+: bytes */
	int64_t code_nlocalsplus;            /* 3.11+ */
	int64_t code_firsttraceable;         /* ._co_firsttraceable (3.11+) */
	int64_t code_framesize;              /* .co_framesize (3.12+): a frame's words on the data stack */
	int64_t code_stacksize;              /* .co_stacksize: with nlocalsplus, 3.11's frame size */
	int64_t code_code_adaptive;          /* .co_code_adaptive[] (3.11+) */
	int64_t code_tlbc;                   /* .co_tlbc (3.14+ free-threaded): _PyCodeArray *,
					      * { Py_ssize_t size; char *entries[]; } */

	/* PyObject, PyVarObject, PyTypeObject */
	int64_t object_type;                 /* .ob_type */
	int64_t object_tid;                  /* .ob_tid: only free-threaded builds (3.13t+)
					      * have it, and every table of one does */
	int64_t var_size;                    /* PyVarObject.ob_size */
	int64_t type_name;                   /* .tp_name: char * */
	int64_t type_basicsize;
	int64_t type_itemsize;
	int64_t type_flags;
	int64_t type_repr;                   /* .tp_repr: function pointer */
	int64_t type_dictoffset;
	int64_t type_dict;
	int64_t type_base;
	int64_t heaptype_qualname;           /* PyHeapTypeObject.ht_qualname */
	int64_t heaptype_module;             /* PyHeapTypeObject.ht_module (3.9+) */
	int64_t heaptype_cached_keys;        /* PyHeapTypeObject.ht_cached_keys: shared keys */

	/* bytes, str */
	int64_t bytes_sval;                  /* PyBytesObject.ob_sval */
	int64_t bytearray_start;             /* PyByteArrayObject.ob_start: char * */
	int64_t unicode_length;              /* PyASCIIObject.length */
	int64_t unicode_state;               /* PyASCIIObject.state */
	int64_t unicode_wstr;                /* PyASCIIObject.wstr (<=3.11) */
	int64_t unicode_utf8;                /* PyCompactUnicodeObject.utf8 */
	int64_t unicode_data;                /* PyUnicodeObject.data (legacy strings) */
	int64_t sizeof_ascii;                /* sizeof(PyASCIIObject): compact ASCII data follows */
	int64_t sizeof_compact;              /* sizeof(PyCompactUnicodeObject) */
	int64_t unicode_kind_shift;          /* bit offsets inside .state */
	int64_t unicode_compact_shift;
	int64_t unicode_ascii_shift;
	int64_t unicode_ready_shift;         /* <=3.11; -1 after */

	/* tuple, list, dict, set */
	int64_t tuple_item;                  /* PyTupleObject.ob_item */
	int64_t list_item;                   /* PyListObject.ob_item: PyObject ** */
	int64_t dict_used;                   /* PyDictObject.ma_used */
	int64_t dict_keys;                   /* .ma_keys */
	int64_t dict_values;                 /* .ma_values */
	int64_t dictkeys_size;               /* PyDictKeysObject.dk_size (<=3.10) */
	int64_t dictkeys_log2_size;          /* .dk_log2_size (3.11+) */
	int64_t dictkeys_log2_index_bytes;   /* .dk_log2_index_bytes (3.11+) */
	int64_t dictkeys_kind;               /* .dk_kind (3.11+) */
	int64_t dictkeys_nentries;
	int64_t dictkeys_indices;            /* .dk_indices[] */
	int64_t sizeof_dictkeyentry;         /* PyDictKeyEntry */
	int64_t sizeof_dictunicodeentry;     /* PyDictUnicodeEntry (3.11+) */
	int64_t set_used;                    /* PySetObject.used */
	int64_t set_mask;
	int64_t set_table;
	int64_t sizeof_setentry;

	/* numbers, cells */
	int64_t float_value;                 /* PyFloatObject.ob_fval */
	int64_t long_digit;                  /* PyLongObject.ob_digit (3.12+: .long_value.ob_digit) */
	int64_t long_lv_tag;                 /* .long_value.lv_tag (3.12+) */
	int64_t cell_ref;                    /* PyCellObject.ob_ref */
	int64_t function_qualname;           /* PyFunctionObject.func_qualname */

	/* the exception a thread is handling, and its traceback */
	int64_t tstate_exc_info;             /* PyThreadState.exc_info (3.7+): _PyErr_StackItem * */
	int64_t tstate_exc_value;            /* PyThreadState.exc_value (3.6) */
	int64_t stackitem_exc_value;         /* _PyErr_StackItem.exc_value (3.7+) */
	int64_t exc_args;                    /* PyBaseExceptionObject.args */
	int64_t exc_traceback;               /* PyBaseExceptionObject.traceback */
	int64_t tb_next;                     /* PyTracebackObject */
	int64_t tb_frame;
	int64_t tb_lasti;
	int64_t tb_lineno;
	int64_t module_dict;                 /* PyModuleObject.md_dict */

	/* garbage collection in progress */
	int64_t runtime_gc_collecting;       /* _PyRuntimeState.gc.collecting (3.7, 3.8) */
	int64_t interp_gc_collecting;        /* PyInterpreterState.gc.collecting (3.9+) */

	/* the heap census: the GC's lists, and what __sizeof__ reads */
	int64_t runtime_gc_generations;      /* _PyRuntimeState.gc.generations (3.7, 3.8) */
	int64_t interp_gc_generations;       /* PyInterpreterState.gc.generations (3.9+; .young
						of free-threaded builds) */
	int64_t runtime_gc_permanent;        /* _PyRuntimeState.gc.permanent_generation (3.7, 3.8) */
	int64_t interp_gc_permanent;         /* PyInterpreterState.gc.permanent_generation (3.9+) */
	int64_t sizeof_gc_generation;        /* struct gc_generation: a list head, threshold, count */
	int64_t sizeof_gc_head;              /* PyGC_Head, before every GC object */
	int64_t list_allocated;              /* PyListObject.allocated */
	int64_t bytearray_alloc;             /* PyByteArrayObject.ob_alloc */
	int64_t dictkeys_refcnt;             /* PyDictKeysObject.dk_refcnt */
	/* a function's references the heap census follows */
	int64_t function_defaults;           /* PyFunctionObject.func_defaults */
	int64_t function_kwdefaults;         /* PyFunctionObject.func_kwdefaults */
	int64_t function_closure;            /* PyFunctionObject.func_closure */
	int64_t function_code;               /* PyFunctionObject.func_code */
	int64_t type_bases;                  /* PyTypeObject.tp_bases: a tuple */
	int64_t type_mro;                    /* PyTypeObject.tp_mro: a tuple */
	int64_t code_consts;                 /* PyCodeObject.co_consts: a tuple */
	int64_t code_names;                  /* PyCodeObject.co_names: a tuple */
	int64_t code_extra;                  /* PyCodeObject.co_extra (PEP 523's data; NULL
						unless a tool set it) */
	/* pymalloc's arenas (3.12+; before, static in Objects/obmalloc.c) */
	int64_t interp_obmalloc;             /* PyInterpreterState.obmalloc, the state inline (3.12) */
	int64_t interp_obmalloc_ptr;         /* PyInterpreterState.obmalloc, a pointer to it (3.13+) */
	int64_t obmalloc_arenas;             /* struct _obmalloc_state's mgmt.arenas */
	int64_t obmalloc_maxarenas;          /* its mgmt.maxarenas (a uint) */
};

#endif
