"""The report's own scenario (check-report.py): a thread whose name holds
control characters, arguments that are not plain text, and then either

  fault: that thread, inside an except block, reads ADDRESS through ctypes
         (a real SIGSEGV; the kernel writes the core), or
  wait:  every thread blocks and the test sends SIGSEGV with kill.

usage: report.py TRUTH fault|wait ARG...  The process records its stacks
(TRUTH), and in TRUTH.report its arguments as bytes (os.fsencode) and the
address it reads."""
import _thread
import ctypes
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import note_exception, record  # noqa: E402

NAME = "evil\x1b[31mRED\x1b[0m\nThread 1 (fake)\r\x07"
ADDRESS = 0x1000  # page-aligned, below vm.mmap_min_addr: never mapped

parked = _thread.allocate_lock()
parked.acquire()


def note_report():
    with open(sys.argv[1] + ".report", "w") as f:
        json.dump({"argv": [os.fsencode(a).hex() for a in sys.argv], "address": ADDRESS}, f)


def fault_here():
    try:
        raise ValueError("bad \x1b[2J value")
    except ValueError:
        note_exception(); record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); print("READY", flush=True); ctypes._string_at(ADDRESS, -1)  # noqa: E702,E501


def evil():
    if sys.argv[2] == "fault":
        time.sleep(0.2)  # the main thread is parked by then
        fault_here()
    else:
        parked.acquire()


def wait_here():
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702


note_report()
t = threading.Thread(target=evil, name=NAME, daemon=True)
t.start()
if sys.argv[2] == "fault":
    parked.acquire()
else:
    time.sleep(0.2)  # the named thread is parked by then
    wait_here()
