"""A SIGSEGV inside a C++ function (pycore_test::Boom::go), called through
ctypes.PyDLL (which keeps the GIL) from a library the test builds."""
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
lib = ctypes.PyDLL(os.path.join(os.getcwd(), "libcrashxx.so"))


def blocked(ready):
    ready.release(); parked.acquire()  # noqa: E702


def call_cxx():
    record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); print("READY", flush=True); lib.crash_cxx()  # noqa: E702,E501


ready = _thread.allocate_lock()
ready.acquire()
threading.Thread(target=blocked, args=(ready,), name="bystander", daemon=True).start()
ready.acquire()
time.sleep(0.1)
call_cxx()
