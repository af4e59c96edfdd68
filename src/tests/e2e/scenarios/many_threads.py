"""The main thread plus N workers (argv[2], default 1000), each blocked at
the end of a stack of its own: worker i's frames spell i's bits (ten
calls of zero() or one(), lowest bit innermost), so no two share a stack
and the report's page has a section per thread.  Records its truth, then
blocks (gcore takes the snapshot)."""
import _thread
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

BITS = 10
parked = _thread.allocate_lock()
parked.acquire()
started = threading.Semaphore(0)


def step(i, k):
    if k == BITS:
        started.release(); parked.acquire()  # noqa: E702  (one line: the same line whichever call runs)
        return
    (one if (i >> (BITS - 1 - k)) & 1 else zero)(i, k + 1)


def zero(i, k):
    step(i, k)


def one(i, k):
    step(i, k)


def main():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    # the workers' stacks are small: a thousand threads in a small core
    threading.stack_size(256 * 1024)
    for i in range(n):
        threading.Thread(target=step, args=(i, 0), name="worker-%d" % i, daemon=True).start()
    for _ in range(n):
        started.acquire()
    time.sleep(0.2)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702


main()
