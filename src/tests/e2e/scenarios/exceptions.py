"""Threads blocked inside except blocks: the exception each handles (type,
message, repr, traceback, and the chain of __cause__ / __context__) as the
thread itself noted it."""
import _thread
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import note_exception, record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()


class AppError(Exception):
    pass


def deep(n):
    if n:
        return deep(n - 1)
    raise ValueError("bad value %d" % 42)


def handles_value_error(ready):
    try:
        deep(3)
    except ValueError:
        note_exception(); ready.release(); parked.acquire()  # noqa: E702


def nested(ready):
    try:
        {}["missing"]
    except KeyError:
        try:
            raise AppError("while handling", 7, [1])
        except AppError:
            note_exception(); ready.release(); parked.acquire()  # noqa: E702


def chained(ready):
    try:
        try:
            try:
                1 / 0
            except ZeroDivisionError:
                int("x")
        except ValueError as e:
            raise AppError("wrapped") from e
    except AppError:
        note_exception(); ready.release(); parked.acquire()  # noqa: E702


def suppressed(ready):
    try:
        try:
            {}["k"]
        except KeyError:
            raise LookupError("no context shown") from None
    except LookupError:
        note_exception(); ready.release(); parked.acquire()  # noqa: E702


def main():
    try:
        raise RuntimeError("main failure: caf\\xe9")
    except RuntimeError:
        note_exception(); record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702,E501


readies = []
for target in (handles_value_error, nested, chained, suppressed):
    ready = _thread.allocate_lock()
    ready.acquire()
    readies.append(ready)
    threading.Thread(target=target, args=(ready,), name=target.__name__, daemon=True).start()
for ready in readies:
    ready.acquire()
time.sleep(0.1)
main()
