"""A garbage collection in progress: the main thread's gc.collect() runs a
finalizer that blocks in C while holding the GIL (libc's sleep called
through ctypes.PyDLL, which keeps the GIL).  Run by the name gc_nogil.py
(a link to this file), the sleep goes through ctypes.CDLL, which releases
the GIL: no thread holds it then, and only the native stacks tell which
thread collects.  Truth: "crasher" is the collecting thread."""
import _thread
import ctypes
import gc
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()
# gc_nogil.py: release the GIL while the finalizer sleeps
libc = (ctypes.CDLL if os.path.basename(sys.argv[0]) == "gc_nogil.py" else ctypes.PyDLL)(None)


class Finalized(object):
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it

    def __del__(self):
        record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); print("READY", flush=True); libc.sleep(1000)  # noqa: E702,E501


def blocked(ready):
    ready.release(); parked.acquire()  # noqa: E702


def collect():
    Finalized()
    gc.collect()


ready = _thread.allocate_lock()
ready.acquire()
threading.Thread(target=blocked, args=(ready,), name="bystander", daemon=True).start()
ready.acquire()
time.sleep(0.1)
collect()
