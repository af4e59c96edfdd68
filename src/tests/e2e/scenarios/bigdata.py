"""A process holding 100 MB of data (a bytearray of non-zero bytes, so
that every page is in the core) beside its threads: a core of 100 MB and
more, of which an analysis reads a few pages (check-save.py)."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = threading.Lock()
parked.acquire()


def hold(ready):
    ready.set(); parked.acquire()  # noqa: E702


def main():
    data = bytearray(b"\x5a") * (100 << 20)
    ready = threading.Event()
    threading.Thread(target=hold, args=(ready,), name="holder", daemon=True).start()
    ready.wait()
    time.sleep(0.1)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702
    return data


main()
