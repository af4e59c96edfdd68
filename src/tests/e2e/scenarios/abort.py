"""SIGABRT from os.abort() in a worker thread, while the main thread waits."""
import _thread
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()


def aborting():
    time.sleep(0.1)
    record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); print("READY", flush=True); os.abort()  # noqa: E702,E501


def wait_here(worker):
    parked.acquire()


worker = threading.Thread(target=aborting, name="aborter")
worker.start()
wait_here(worker)
