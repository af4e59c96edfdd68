"""check-args.py's crashes, by name (argv[2]): "decref", Py_DecRef on the
address 0x10; "fatal", Py_FatalError with a message of the test's
(argv[3]); "clib", argslib_entry of the library at argv[3] storing at
0x18; "object", argslib_object of that library with a dict, whose
repr it writes to argv[1] first; with --faulthandler last, faulthandler
enabled first.  Else argv[1] is not written: gdb on the core is the
truth of native arguments."""
import ctypes
import faulthandler
import json
import sys

if sys.argv[-1] == "--faulthandler":
    # (its handler runs on the crashing thread and re-raises the signal)
    faulthandler.enable()
    del sys.argv[-1]
what = sys.argv[2]
if what == "decref":
    ctypes.pythonapi.Py_DecRef(ctypes.c_void_p(16))
elif what == "fatal":
    ctypes.pythonapi.Py_FatalError(sys.argv[3].encode())
elif what == "clib":
    lib = ctypes.CDLL(sys.argv[3])
    password = b"hello from argslib"   # (a secret by its name: --redact's)
    lib.argslib_entry(7, password, ctypes.c_long(0x18))
elif what == "object":
    lib = ctypes.CDLL(sys.argv[3])
    value = {"key": ["a str", 42, None]}
    with open(sys.argv[1], "w") as f:
        json.dump({"repr": repr(value)}, f)
    lib.argslib_object(ctypes.py_object(value), ctypes.c_long(0x18))
sys.exit("no crash")
