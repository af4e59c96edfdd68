"""A garbage collection in progress in a thread that released the GIL: the
main thread's gc.collect() runs a finalizer that blocks in libc's sleep
called through ctypes.CDLL, which releases the GIL, so no thread holds it
and only the native stacks tell which thread collects.  Truth: "crasher"
is the collecting thread."""
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
libc = ctypes.CDLL(None)


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
