# The gdb half of scripts/gen-versions: loaded into gdb with an interpreter's
# object file (the one holding its DWARF), it resolves every field of
# struct py_layout (src/python/layout.h) and writes the table.  Each field
# lists the names it has had across versions, first match wins; a field no
# alternative finds is -1 (absent in this version).
# Set before loading: OUT (output path), SRC (description), MINOR.
import gdb

SPEC = [
    # field, [alternatives "Type:path" or "sizeof:Type" or "bit:Type:path.bitfield"]
    ("runtime_interpreters_head", ["struct pyruntimestate:interpreters.head"]),
    ("runtime_ceval_gil", ["struct pyruntimestate:ceval.gil"]),
    ("gil_locked", ["struct _gil_runtime_state:locked"]),
    ("gil_last_holder", ["struct _gil_runtime_state:last_holder"]),
    ("interp_next", ["struct _is:next"]),
    ("interp_tstate_head", ["struct _is:tstate_head", "struct _is:threads.head"]),
    ("interp_id", ["struct _is:id"]),
    ("interp_sysdict", ["struct _is:sysdict"]),
    ("interp_builtins", ["struct _is:builtins"]),
    ("interp_modules", ["struct _is:modules", "struct _is:imports.modules"]),
    ("interp_ceval_gil", ["ptr:struct _is:ceval.gil"]),
    ("tstate_next", ["struct _ts:next"]),
    ("tstate_interp", ["struct _ts:interp"]),
    ("tstate_frame", ["struct _ts:frame"]),
    ("tstate_cframe", ["struct _ts:cframe"]),
    ("tstate_current_frame", ["struct _ts:current_frame"]),
    ("tstate_thread_id", ["struct _ts:thread_id"]),
    ("tstate_native_thread_id", ["struct _ts:native_thread_id"]),
    ("tstate_datastack_chunk", ["struct _ts:datastack_chunk"]),
    ("cframe_current_frame", ["struct _PyCFrame:current_frame"]),
    ("frame_back", ["struct _frame:f_back"]),
    ("frame_code", ["struct _frame:f_code"]),
    ("frame_lasti", ["struct _frame:f_lasti"]),
    ("frame_lineno", ["struct _frame:f_lineno"]),
    ("frame_locals", ["struct _frame:f_locals"]),
    ("frame_localsplus", ["struct _frame:f_localsplus"]),
    ("frame_frame", ["struct _frame:f_frame"]),
    ("iframe_previous", ["struct _PyInterpreterFrame:previous"]),
    ("iframe_code", ["struct _PyInterpreterFrame:f_code", "struct _PyInterpreterFrame:f_executable"]),
    ("iframe_instr", ["struct _PyInterpreterFrame:prev_instr", "struct _PyInterpreterFrame:instr_ptr"]),
    ("iframe_owner", ["struct _PyInterpreterFrame:owner"]),
    ("iframe_is_entry", ["struct _PyInterpreterFrame:is_entry"]),
    ("iframe_locals", ["struct _PyInterpreterFrame:f_locals"]),
    ("iframe_localsplus", ["struct _PyInterpreterFrame:localsplus"]),
    ("iframe_stacktop", ["struct _PyInterpreterFrame:stacktop"]),
    ("sizeof_iframe", ["sizeof:struct _PyInterpreterFrame"]),
    ("chunk_previous", ["_PyStackChunk:previous"]),
    ("chunk_size", ["_PyStackChunk:size"]),
    ("chunk_data", ["_PyStackChunk:data"]),
    ("code_argcount", ["PyCodeObject:co_argcount"]),
    ("code_posonlyargcount", ["PyCodeObject:co_posonlyargcount"]),
    ("code_kwonlyargcount", ["PyCodeObject:co_kwonlyargcount"]),
    ("code_nlocals", ["PyCodeObject:co_nlocals"]),
    ("code_flags", ["PyCodeObject:co_flags"]),
    ("code_firstlineno", ["PyCodeObject:co_firstlineno"]),
    ("code_filename", ["PyCodeObject:co_filename"]),
    ("code_name", ["PyCodeObject:co_name"]),
    ("code_qualname", ["PyCodeObject:co_qualname"]),
    ("code_lnotab", ["PyCodeObject:co_lnotab"]),
    ("code_linetable", ["PyCodeObject:co_linetable"]),
    ("code_varnames", ["PyCodeObject:co_varnames"]),
    ("code_cellvars", ["PyCodeObject:co_cellvars"]),
    ("code_freevars", ["PyCodeObject:co_freevars"]),
    ("code_cell2arg", ["PyCodeObject:co_cell2arg"]),
    ("code_localsplusnames", ["PyCodeObject:co_localsplusnames"]),
    ("code_localspluskinds", ["PyCodeObject:co_localspluskinds"]),
    ("code_nlocalsplus", ["PyCodeObject:co_nlocalsplus"]),
    ("code_firsttraceable", ["PyCodeObject:_co_firsttraceable"]),
    ("code_code_adaptive", ["PyCodeObject:co_code_adaptive"]),
    ("object_type", ["PyObject:ob_type"]),
    ("var_size", ["PyVarObject:ob_size"]),
    ("type_name", ["PyTypeObject:tp_name"]),
    ("type_basicsize", ["PyTypeObject:tp_basicsize"]),
    ("type_itemsize", ["PyTypeObject:tp_itemsize"]),
    ("type_flags", ["PyTypeObject:tp_flags"]),
    ("type_repr", ["PyTypeObject:tp_repr"]),
    ("type_dictoffset", ["PyTypeObject:tp_dictoffset"]),
    ("type_dict", ["PyTypeObject:tp_dict"]),
    ("type_base", ["PyTypeObject:tp_base"]),
    ("heaptype_qualname", ["PyHeapTypeObject:ht_qualname"]),
    ("heaptype_module", ["PyHeapTypeObject:ht_module"]),
    ("heaptype_cached_keys", ["PyHeapTypeObject:ht_cached_keys"]),
    ("bytes_sval", ["PyBytesObject:ob_sval"]),
    ("bytearray_start", ["PyByteArrayObject:ob_start"]),
    ("unicode_length", ["PyASCIIObject:length"]),
    ("unicode_state", ["PyASCIIObject:state"]),
    ("unicode_wstr", ["PyASCIIObject:wstr"]),
    ("unicode_utf8", ["PyCompactUnicodeObject:utf8"]),
    ("unicode_data", ["PyUnicodeObject:data"]),
    ("sizeof_ascii", ["sizeof:PyASCIIObject"]),
    ("sizeof_compact", ["sizeof:PyCompactUnicodeObject"]),
    ("unicode_kind_shift", ["bit:PyASCIIObject:state.kind"]),
    ("unicode_compact_shift", ["bit:PyASCIIObject:state.compact"]),
    ("unicode_ascii_shift", ["bit:PyASCIIObject:state.ascii"]),
    ("unicode_ready_shift", ["bit:PyASCIIObject:state.ready"]),
    ("tuple_item", ["PyTupleObject:ob_item"]),
    ("list_item", ["PyListObject:ob_item"]),
    ("dict_used", ["PyDictObject:ma_used"]),
    ("dict_keys", ["PyDictObject:ma_keys"]),
    ("dict_values", ["PyDictObject:ma_values"]),
    ("dictkeys_size", ["struct _dictkeysobject:dk_size"]),
    ("dictkeys_log2_size", ["struct _dictkeysobject:dk_log2_size"]),
    ("dictkeys_log2_index_bytes", ["struct _dictkeysobject:dk_log2_index_bytes"]),
    ("dictkeys_kind", ["struct _dictkeysobject:dk_kind"]),
    ("dictkeys_nentries", ["struct _dictkeysobject:dk_nentries"]),
    ("dictkeys_indices", ["struct _dictkeysobject:dk_indices"]),
    ("sizeof_dictkeyentry", ["sizeof:PyDictKeyEntry"]),
    ("sizeof_dictunicodeentry", ["sizeof:PyDictUnicodeEntry"]),
    ("set_used", ["PySetObject:used"]),
    ("set_mask", ["PySetObject:mask"]),
    ("set_table", ["PySetObject:table"]),
    ("sizeof_setentry", ["sizeof:setentry"]),
    ("float_value", ["PyFloatObject:ob_fval"]),
    ("long_digit", ["PyLongObject:ob_digit", "PyLongObject:long_value.ob_digit"]),
    ("long_lv_tag", ["PyLongObject:long_value.lv_tag"]),
    ("cell_ref", ["PyCellObject:ob_ref"]),
    ("function_qualname", ["PyFunctionObject:func_qualname"]),
]


# Fields that must be found for the minor versions given (inclusive): a
# table missing one of them is refused rather than written with a guess.
REQUIRED = {
    "runtime_interpreters_head": (7, 99), "runtime_ceval_gil": (7, 11),
    "gil_locked": (7, 99), "gil_last_holder": (7, 99),
    "interp_next": (6, 99), "interp_tstate_head": (6, 99), "interp_id": (7, 99),
    "interp_sysdict": (6, 99), "interp_builtins": (6, 99), "interp_modules": (6, 99), "interp_ceval_gil": (12, 99),
    "tstate_next": (6, 99), "tstate_interp": (6, 99), "tstate_thread_id": (6, 99),
    "tstate_frame": (6, 10), "tstate_cframe": (11, 12), "tstate_current_frame": (13, 99),
    "tstate_native_thread_id": (11, 99), "tstate_datastack_chunk": (11, 99),
    "cframe_current_frame": (11, 12),
    "frame_back": (6, 10), "frame_code": (6, 10), "frame_lasti": (6, 10),
    "frame_locals": (6, 10), "frame_localsplus": (6, 10),
    "iframe_previous": (11, 99), "iframe_code": (11, 99), "iframe_instr": (11, 99),
    "iframe_owner": (11, 99), "iframe_is_entry": (11, 11), "iframe_locals": (11, 99),
    "iframe_localsplus": (11, 99), "sizeof_iframe": (11, 99),
    "code_argcount": (6, 99), "code_kwonlyargcount": (6, 99), "code_nlocals": (6, 99),
    "code_flags": (6, 99), "code_firstlineno": (6, 99), "code_filename": (6, 99),
    "code_name": (6, 99), "code_qualname": (11, 99), "code_lnotab": (6, 9),
    "code_linetable": (10, 99), "code_varnames": (6, 10), "code_cellvars": (6, 10),
    "code_freevars": (6, 10), "code_localsplusnames": (11, 99),
    "code_localspluskinds": (11, 99), "code_firsttraceable": (11, 99),
    "code_code_adaptive": (11, 99),
    "object_type": (6, 99), "var_size": (6, 99), "type_name": (6, 99), "type_flags": (6, 99), "type_repr": (6, 99),
    "type_dict": (6, 99), "heaptype_qualname": (6, 99), "heaptype_cached_keys": (6, 99), "bytes_sval": (6, 99),
    "bytearray_start": (6, 99),
    "unicode_length": (6, 99), "unicode_state": (6, 99), "sizeof_ascii": (6, 99),
    "sizeof_compact": (6, 99), "unicode_data": (6, 99), "unicode_kind_shift": (6, 99),
    "unicode_compact_shift": (6, 99), "unicode_ascii_shift": (6, 99),
    "unicode_ready_shift": (6, 11),
    "tuple_item": (6, 99), "list_item": (6, 99), "dict_used": (6, 99), "dict_keys": (6, 99),
    "dict_values": (6, 99), "dictkeys_size": (6, 10), "dictkeys_log2_size": (11, 99),
    "dictkeys_kind": (11, 99), "dictkeys_nentries": (6, 99), "dictkeys_indices": (6, 99),
    "sizeof_dictkeyentry": (6, 99), "sizeof_dictunicodeentry": (11, 99),
    "set_used": (6, 99), "set_mask": (6, 99), "set_table": (6, 99), "sizeof_setentry": (6, 99),
    "float_value": (6, 99), "long_digit": (6, 99), "long_lv_tag": (12, 99), "cell_ref": (6, 99), "function_qualname": (6, 99),
}


def lookup(tname):
    try:
        return gdb.lookup_type(tname).strip_typedefs()
    except gdb.error:
        return None


def field_path(t, path):
    """(bit offset, type) of a dotted path inside struct t; anonymous
    members are searched through.  (None, None) when absent."""
    off = 0
    for part in path.split("."):
        t = t.strip_typedefs()
        hit = None
        for f in t.fields():
            if f.name == part:
                hit = (f.bitpos, f.type)
                break
            if f.name is None:
                sub = field_path(f.type, part)
                if sub[0] is not None:
                    hit = (f.bitpos + sub[0], sub[1])
                    break
        if hit is None:
            return None, None
        off += hit[0]
        t = hit[1]
    return off, t


def resolve(alt):
    if alt.startswith("sizeof:"):
        t = lookup(alt[7:])
        return None if t is None else t.sizeof
    if alt.startswith("bit:"):
        tname, path = alt[4:].split(":")
        t = lookup(tname)
        if t is None:
            return None
        head, last = path.rsplit(".", 1)
        base, st = field_path(t, head)
        if base is None:
            return None
        bit, _ = field_path(st, last)
        return bit
    ptr = alt.startswith("ptr:")
    if ptr:
        alt = alt[4:]
    tname, path = alt.split(":")
    t = lookup(tname)
    if t is None:
        return None
    off, ft = field_path(t, path)
    if off is None:
        return None
    if ptr and ft.strip_typedefs().code != gdb.TYPE_CODE_PTR:
        return None
    if not ptr and path == "ceval.gil" and ft.strip_typedefs().code == gdb.TYPE_CODE_PTR:
        return None
    assert off % 8 == 0, (alt, off)
    return off // 8


lines = []
missing = []
for name, alts in SPEC:
    val = -1
    for a in alts:
        v = resolve(a)
        if v is not None:
            val = v
            break
    lo, hi = REQUIRED.get(name, (99, 0))
    if val < 0 and lo <= MINOR <= hi:
        missing.append("%s (%s)" % (name, " or ".join(alts)))
    lines.append("\t.%s = %d," % (name, val))
if missing:
    raise gdb.GdbError("gen-versions: %s: not found in the DWARF: %s" % (SRC, ", ".join(missing)))

with open(OUT, "w") as f:
    f.write("/* Generated by scripts/gen-versions from the DWARF of %s. Do not edit. */\n" % SRC)
    f.write("{\n\t.minor = %d,\n\t.source = \"%s\",\n" % (MINOR, SRC))
    f.write("\n".join(lines) + "\n},\n")
