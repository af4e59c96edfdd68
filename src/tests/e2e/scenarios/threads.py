"""Main thread plus three named workers, each blocked several calls deep."""
import _thread
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()


def level3(ready, depth):
    here = depth * 3
    ready.release(); parked.acquire()  # noqa: E702  (one line: the same line whichever call runs)


def level2(ready, depth):
    return level3(ready, depth + 1)


def level1(ready, depth):
    return level2(ready, depth + 1)


def main():
    readies = []
    for i in range(3):
        ready = _thread.allocate_lock()
        ready.acquire()
        readies.append(ready)
        threading.Thread(target=level1, args=(ready, i), name="worker-%d" % i, daemon=True).start()
    for ready in readies:
        ready.acquire()
    time.sleep(0.1)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702


main()
