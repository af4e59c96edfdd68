"""A thread that never touches Python: libc's sleep run by pthread_create
through ctypes, beside the Python threads.  The process records its
Python threads (sys._current_frames()) and, as "native_tids", the OS
thread ids that appeared in /proc/self/task when it started that thread."""
import ctypes
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402


def tasks():
    """The OS threads of this process; None where /proc is not mounted (a
    bare root filesystem)."""
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return None


def main():
    libc = ctypes.CDLL(None)
    before = tasks()
    handle = ctypes.c_ulong()
    # sleep(unsigned) as the start routine: its argument (1000) is the time
    rc = libc.pthread_create(ctypes.byref(handle), None, libc.sleep, ctypes.c_void_p(1000))
    if rc != 0:
        sys.exit("pthread_create: %d" % rc)
    new = set()
    for _ in range(200 if before is not None else 0):
        new = tasks() - before
        if new:
            break
        time.sleep(0.01)
    time.sleep(0.2)  # until it sleeps
    with open(sys.argv[1] + ".native", "w") as f:
        json.dump({"native_tids": sorted(int(t) for t in new) if before is not None else None}, f)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); time.sleep(1000)  # noqa: E702


main()
