"""Recursion 600 frames deep in a worker and 300 in the main thread: 3.11+
data-stack chunks are crossed many times."""
import _thread
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()


def down(n, ready):
    if n:
        return down(n - 1, ready)
    ready.release(); parked.acquire()  # noqa: E702


def main_down(n):
    if n:
        return main_down(n - 1)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702


ready = _thread.allocate_lock()
ready.acquire()
threading.Thread(target=down, args=(600, ready), name="deep", daemon=True).start()
ready.acquire()
time.sleep(0.1)
main_down(300)
