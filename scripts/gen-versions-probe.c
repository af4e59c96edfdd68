/* gen-versions --headers: a translation unit that holds, in its DWARF, every
 * type versions/fields.txt names, as a CPython 3.13+ version's installed
 * headers (internal ones included) define them.  Compiled with
 * -DPy_GIL_DISABLED it gives the free-threaded build's layout from the same
 * headers.  Nothing in it runs; only its debug information is read. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_dict.h"
#include "internal/pycore_moduleobject.h"
#include "internal/pycore_code.h"
#include "internal/pycore_tstate.h"
#include "internal/pycore_setobject.h"

#define USE(type, name) type *gv_##name
USE(_PyRuntimeState, runtime);
USE(struct _gil_runtime_state, gil);
USE(PyInterpreterState, interp);
USE(PyThreadState, tstate);
USE(struct _frame, frame);
USE(_PyInterpreterFrame, iframe);
USE(_PyStackChunk, chunk);
USE(PyCodeObject, code);
USE(PyObject, object);
USE(PyVarObject, varobject);
USE(PyTypeObject, type);
USE(PyHeapTypeObject, heaptype);
USE(PyBytesObject, bytes);
USE(PyByteArrayObject, bytearray);
USE(PyASCIIObject, ascii);
USE(PyCompactUnicodeObject, compact);
USE(PyUnicodeObject, unicode);
USE(PyTupleObject, tuple);
USE(PyListObject, list);
USE(PyDictObject, dict);
USE(struct _dictkeysobject, dictkeys);
USE(PyGC_Head, gchead);
USE(struct gc_generation, gcgeneration);
USE(PyDictKeyEntry, dictkeyentry);
USE(PyDictUnicodeEntry, dictunicodeentry);
USE(PySetObject, set);
USE(setentry, setentry);
USE(PyFloatObject, float_);
USE(PyLongObject, long_);
USE(PyCellObject, cell);
USE(PyFunctionObject, function);
USE(struct _err_stackitem, stackitem);
USE(PyBaseExceptionObject, exception);
USE(PyTracebackObject, traceback);
USE(PyModuleObject, module);
