"""A real SIGSEGV caught by Crashpad: the process connects to the Crashpad
handler the test started (crashpadshim.cpp, loaded with ctypes, over the
socket inherited as file descriptor FD), records its threads, then reads
address 0 in C code (ctypes._string_at, as crash.py does) a few calls
deep in the main thread while a worker is blocked.  Beside the truth,
TRUTH.codes: the addresses of the code objects of every recorded frame.

usage: crashpad_crash.py TRUTH SHIM FD VALUE"""
import _thread
import ctypes
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()


def blocked(ready):
    ready.release(); parked.acquire()  # noqa: E702


def code_addresses(frames):
    """The addresses (id) of the code objects of every frame of every
    thread: the memory a Python frame would be proven from."""
    out = []
    for f in frames.values():
        while f is not None:
            out.append(id(f.f_code))
            f = f.f_back
    return out


def crash_here():
    frames = sys._current_frames()
    with open(sys.argv[1] + ".codes", "w") as f:
        f.write(" ".join("%x" % a for a in code_addresses(frames)))
    record(sys.argv[1], frames); print("READY", flush=True); ctypes._string_at(0, -1)  # noqa: E702


def middle():
    crash_here()


shim = ctypes.CDLL(sys.argv[2])
if shim.pycore_crashpad_connect(int(sys.argv[3]), b"pycore-key", sys.argv[4].encode()) != 0:
    sys.exit("Crashpad refused the handler's socket")
ready = _thread.allocate_lock()
ready.acquire()
threading.Thread(target=blocked, args=(ready,), name="bystander", daemon=True).start()
ready.acquire()
time.sleep(0.1)
middle()
