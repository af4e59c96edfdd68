"""A real SIGSEGV in C code called from Python, in the main thread, a few
calls deep, while a worker is blocked.  ctypes._string_at is the C function
behind ctypes.string_at (called directly, so that no Python frame of ctypes
itself stands between the recorded stack and the crash); reading address 0
faults (size -1 makes it strlen(NULL)), and the kernel writes the core."""
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


def crash_here():
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); ctypes._string_at(0, -1)  # noqa: E702


def middle():
    crash_here()


ready = _thread.allocate_lock()
ready.acquire()
threading.Thread(target=blocked, args=(ready,), name="bystander", daemon=True).start()
ready.acquire()
time.sleep(0.1)
middle()
