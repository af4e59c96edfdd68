"""SIGBUS: reading a page of a mapped file that was truncated away."""
import _thread
import mmap
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


def touch(m):
    record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); print("READY", flush=True); m[8192]  # noqa: E702,E501


ready = _thread.allocate_lock()
ready.acquire()
threading.Thread(target=blocked, args=(ready,), name="bystander", daemon=True).start()
ready.acquire()
time.sleep(0.1)
path = os.path.join(os.getcwd(), "mapped")
with open(path, "wb") as f:
    f.write(b"x" * 16384)
fd = os.open(path, os.O_RDWR)
m = mmap.mmap(fd, 16384)
os.ftruncate(fd, 0)
touch(m)
