"""A SIGSEGV at a known address in a thread of its own, with or without
faulthandler (python -X faulthandler): the truth (that thread's native id,
the address, every thread's native id) is written before the fault.

argv: truth path.  The fault is in thread "faulter" (ctypes.string_at of
FAULT_ADDRESS: strlen reads it); the main thread and a sleeper wait."""
import ctypes
import json
import sys
import threading
import time

FAULT_ADDRESS = 0x1230


def faulter(truth_path):
    import faulthandler
    truth = {"tid": threading.get_native_id(), "address": FAULT_ADDRESS,
             "threads": sorted(t.native_id for t in threading.enumerate()),
             "faulthandler": faulthandler.is_enabled()}
    with open(truth_path, "w") as f:
        json.dump(truth, f)
    ctypes.string_at(FAULT_ADDRESS)


def sleeper():
    time.sleep(1000)


threading.Thread(target=sleeper, name="sleeper", daemon=True).start()
t = threading.Thread(target=faulter, args=(sys.argv[1],), name="faulter")
time.sleep(0.1)
t.start()
t.join()
