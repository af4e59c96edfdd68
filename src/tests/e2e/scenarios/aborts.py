"""An abort of one kind, from ctypes (check-abort.py).

usage: aborts.py TRUTH KIND LIBDIR
KIND: assert, double-free, stack-smash, fortify (abort()s whose message
glibc keeps in __abort_msg), assert-long (__assert_fail with an
expression of 6000 bytes), assert-thread (the assert in a thread of the
library's own, which writes its id to stderr first),
survived-then-os-abort (an assert survived, its SIGABRT caught and jumped
out of, then os.abort(): not an abort glibc kept words for), segv (a
plain fault: no abort), or
c++-runtime, c++-derived, c++-invalid, c++-custom, c++-int (an uncaught
C++ exception of libabort_throw.so's, when the test built it).  Writes
{"pid", "tid", "kind"} to TRUTH before it crashes; the message glibc
prints goes to stderr, which the test keeps."""
import ctypes
import faulthandler
import json
import os
import sys
import threading

truth, kind, libdir = sys.argv[1], sys.argv[2], sys.argv[3]
cxx = ctypes.CDLL(os.path.join(libdir, "libabort_throw.so")) if kind.startswith("c++-") else None
plain = ctypes.CDLL(os.path.join(libdir, "libaborts.so"))
fortified = ctypes.CDLL(os.path.join(libdir, "libaborts-fortify.so"))
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
fortified.overflow.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
plain.smash.argtypes = [ctypes.c_char_p, ctypes.c_int]
plain.assert_says.argtypes = [ctypes.c_char_p]
if sys.version_info >= (3, 14) and faulthandler.is_enabled():
    # 3.14's faulthandler also prints the C stack, walking it with
    # backtrace(): on the stack the overrun smashed, that walk faults in
    # the handler itself (a SIGSEGV core, not the abort under test)
    faulthandler.enable(c_stack=False)
with open(truth, "w") as f:
    json.dump({"pid": os.getpid(), "tid": threading.get_native_id(), "kind": kind}, f)
sys.stdout.flush()
if kind == "assert":
    plain.queue_pop(0)
elif kind == "double-free":
    p = libc.malloc(24)
    libc.free(p)
    libc.free(p)
elif kind == "stack-smash":
    plain.smash(b"A" * 64, 64)
elif kind == "fortify":
    fortified.overflow(b"B" * 64, 64)
elif kind == "assert-long":
    # 3000 two-byte characters: longer than the 4096 bytes pycore keeps
    plain.assert_says(("queue_len > 0 && " + "\u00e9" * 3000).encode())
elif kind == "assert-thread":
    plain.assert_in_thread()
elif kind == "survived-then-os-abort":
    if plain.survive_assert() != 1:
        sys.exit("the assert was not survived")
    os.abort()
elif kind == "segv":
    ctypes.string_at(0)
elif cxx is not None:
    getattr(cxx, "throw_" + kind[len("c++-"):])()
print("survived", kind)
