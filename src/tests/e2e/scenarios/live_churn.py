"""A process that changes while pycore reads it live (check-live.py).

usage: live_churn.py TRUTH MODE [ARG]
  spawn        the main thread starts a short-lived thread every
               millisecond or so, forever: threads are created (and exit)
               while pycore stops the process
  exit MS      a few threads, then the process exits MS milliseconds after
               READY (os._exit): it may end during the read
  busy         four threads recurse and return without pause: their stacks
               change between any two reads (--no-stop)
  many N       N threads blocked, several calls deep (the benchmark's)
Each writes its truth (the main thread's frames) and prints READY.  Runs
on CPython 3.6 and later.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = threading.Event()


def short_lived():
    time.sleep(0.002)


def spawner():
    while True:
        threading.Thread(target=short_lived, daemon=True).start()
        time.sleep(0.001)


def deep(n):
    if n == 0:
        return 0
    return deep(n - 1) + 1


def spin():
    while True:
        for depth in (3, 30, 10, 60):
            deep(depth)


def blocked(depth):
    if depth:
        return blocked(depth - 1)
    parked.wait()


def main():
    mode = sys.argv[2]
    if mode in ("spawn", "exit", "many"):
        n = int(sys.argv[3]) if mode == "many" else 3
        for i in range(n):
            threading.Thread(target=blocked, args=(5,), name="blocked-%d" % i, daemon=True).start()
    elif mode == "busy":
        for i in range(4):
            threading.Thread(target=spin, name="busy-%d" % i, daemon=True).start()
    time.sleep(0.05)
    record(sys.argv[1], sys._current_frames())
    print("READY", flush=True)
    if mode == "spawn":
        spawner()
    elif mode == "exit":
        time.sleep(int(sys.argv[3]) / 1000.0)
        os._exit(0)
    else:
        parked.wait()


main()
