"""One crash below Python, chosen by name, for check-crashes.py: the process
writes its own truth (its pid, the crashing thread's OS id, the Python
frames of that thread, the address or text it chose) to argv[1] before it
crashes, then crashes.

argv: truth path, scenario name, the directory of the test's libraries
(crashlib.c as libcrashlib.so, crashcxx.cpp as libcrashcxx.so; default:
the working directory).  Exit 3 with a line on standard error: this interpreter cannot
have this crash (the test makes it a skip naming why).

  py_decref      ctypes.pythonapi.Py_DecRef on the pointer 16 (a refcount
                 bug: the fault inside libpython's decref)
  fatal_error    ctypes.pythonapi.Py_FatalError with a message of its own
  assert         an assert that fails in the test's C library
  double_free    libc's free twice on one block
  stack_smash    a stack buffer overrun caught by -fstack-protector-all
  cxx_throw      an uncaught std::runtime_error from the test's C++ library
  sigfpe         an integer division by zero in the test's C library
  sigill         ud2 in anonymous executable memory, called through ctypes
  sigbus         a read past the end of a mapped file that was truncated
  callback       Python -> libc's qsort -> a Python comparison -> a read of
                 address 0 (ctypes.string_at) in C
  stack_overflow recursion through a C call (map) in a thread with a small
                 stack, until the C stack's guard page
  thread_nogil   a thread faults in C without the interpreter's lock while
                 the main thread holds it, running Python
  numpy_stride   numpy's strided copy of an array whose stride (made
                 with as_strided) leads 1 TiB past its data: the fault in
                 numpy's C loop (an interpreter without numpy cannot)
  kill_segv      waits for the test's sender (another process) to kill it
                 with SIGSEGV

Each scenario function makes the call that crashes and its facts; all
but stack_overflow and thread_nogil (which crash in a thread) make that
call from one line of one function, crash(), called from one line of the
module, so that their Python frames are the same; crash() prints READY
just before it.
"""
import ctypes
import json
import mmap
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import frames_of  # noqa: E402

truth_path, scenario = sys.argv[1], sys.argv[2]
here = sys.argv[3] if len(sys.argv) > 3 else os.getcwd()
kept = []  # what the crashing call's memory must outlive (a page of code)


def write_truth(frame, **facts):
    """The truth, written by the thread about to crash: its own OS id and
    the Python frames from FRAME out."""
    me = threading.current_thread()
    truth = dict({"pid": os.getpid(), "uid": os.getuid(), "scenario": scenario,
                  "version": list(sys.version_info[:3]), "tid": threading.get_native_id(),
                  "ident": me.ident, "thread_name": me.name, "main": me is threading.main_thread(),
                  "frames": frames_of(frame, False)}, **facts)
    with open(truth_path + ".tmp", "w") as f:
        json.dump(truth, f)
        f.flush()
        os.fsync(f.fileno())
    os.rename(truth_path + ".tmp", truth_path)
    sys.stderr.flush()


def crash(fn, args, facts):
    """Every scenario's last call, from this one line: different bugs
    reached from the same Python frames (a fingerprint of the Python frames
    alone cannot tell them apart)."""
    write_truth(sys._getframe(0), **facts); print("READY", flush=True); fn(*args)  # noqa: E702


def cannot(why):
    sys.stderr.write("cannot: %s\n" % why)
    sys.exit(3)


def library(name):
    return ctypes.CDLL(os.path.join(here, name))


def py_decref():
    return ctypes.pythonapi.Py_DecRef, [ctypes.c_void_p(16)], {"address": 16}


def fatal_error():
    msg = "pycore test: GC object already tracked"
    return ctypes.pythonapi.Py_FatalError, [msg.encode()], {"message": msg}


def assert_():
    return library("libcrashlib.so").cl_queue_pop, [0], {"message": "n_items > 0"}


def double_free():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    block = libc.malloc(40)
    libc.free(block)
    return libc.free, [block], {"block": block}


def stack_smash():
    lib = library("libcrashlib.so")
    lib.cl_smash.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.cl_smash, [b"A" * 32, 25], {"size": 25}


def cxx_throw():
    msg = "pycore test: bad header"
    return library("libcrashcxx.so").cx_parse, [msg.encode()], {"message": msg, "type": "std::runtime_error"}


def sigfpe():
    return library("libcrashlib.so").cl_divide, [7, 0], {}


def sigill():
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(b"\x0f\x0b")  # ud2
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    kept.append(page)
    return ctypes.CFUNCTYPE(None)(address), [], {"address": address}


def sigbus():
    path = os.path.join(os.getcwd(), "mapped")
    with open(path, "wb") as f:
        f.write(b"x" * 16384)
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, 16384)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    os.ftruncate(fd, 0)
    return m.__getitem__, [8192], {"address": base + 8192, "file": path}


def callback():
    libc = ctypes.CDLL(None)
    cmp_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))

    def compare(a, b):
        write_truth(sys._getframe(0), address=0)
        return len(ctypes.string_at(0))

    items = (ctypes.c_int * 4)(4, 3, 2, 1)
    return libc.qsort, [items, len(items), ctypes.sizeof(ctypes.c_int), cmp_type(compare)], {}


def stack_overflow():
    # every level a call from C (map's iteration) into a Python function:
    # one eval loop call on the C stack per level on every version (3.11+
    # run plain Python-to-Python calls in one); the recursion limit out of
    # the way
    sys.setrecursionlimit(10 ** 8)
    threading.stack_size(256 * 1024)
    ended = []

    def down(n):
        if n == 0:
            write_truth(sys._getframe(0), thread_stack=256 * 1024)
        return list(map(down, [n + 1]))

    def run():
        try:
            down(0)
        except (RecursionError, MemoryError) as e:
            ended.append(e)

    t = threading.Thread(target=run, name="deep")
    t.start()
    t.join()
    cannot("no C stack overflow: the interpreter raised %s" % type(ended[-1]).__name__)


def thread_nogil():
    lib = library("libcrashlib.so")
    lib.cl_wait_then_read.argtypes = [ctypes.c_int, ctypes.c_void_p]
    spinning = threading.Event()
    holder = {}

    def fault():
        spinning.wait()
        crash(lib.cl_wait_then_read, [300, 0x48], {"address": 0x48, "gil_holder": holder["tid"]})

    threading.Thread(target=fault, name="faulter").start()
    holder["tid"] = threading.get_native_id()
    spinning.set()
    n = 0
    while True:  # Python code: the main thread holds the lock but for the switch interval
        n += 1


def numpy_stride():
    try:
        import numpy
    except ImportError as e:
        cannot("no numpy for this interpreter (%s)" % e)
    data = numpy.arange(2, dtype=numpy.int64)
    stride = 1 << 40
    # two elements: whichever way numpy's loop goes (backwards where the
    # copy's buffer lies inside the view's span), it faults on the second
    bad = numpy.lib.stride_tricks.as_strided(data, shape=(2,), strides=(stride,))
    kept.append(data)
    return bad.copy, [], {"address": data.ctypes.data + stride}


def kill_segv():
    # READY (printed by crash) tells the test to send the signal
    return time.sleep, [60], {}


SCENARIOS = {"py_decref": py_decref, "fatal_error": fatal_error, "assert": assert_, "double_free": double_free,
             "stack_smash": stack_smash, "cxx_throw": cxx_throw, "sigfpe": sigfpe, "sigill": sigill,
             "sigbus": sigbus, "callback": callback, "stack_overflow": stack_overflow,
             "thread_nogil": thread_nogil, "numpy_stride": numpy_stride, "kill_segv": kill_segv}

crash(*SCENARIOS[scenario]())
cannot("%s did not crash" % scenario)
