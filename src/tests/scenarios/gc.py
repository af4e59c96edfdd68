"""A garbage collection in progress: the main thread's gc.collect() runs a
finalizer that blocks in C while holding the GIL (libc's sleep called
through ctypes.PyDLL, which keeps the GIL)."""
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
libc = ctypes.PyDLL(None)


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
