"""A thread that runs through a function without call frame information
(nocfi.S, built by check-weave.py into the working directory as
libnocfi.so, or by check-arm64.py beside this script) into Python again,
blocked there.

argv[1]: the truth file; argv[2]: "fp" (nocfi_fp, with a frame pointer)
or "scan" (nocfi_nofp, without).  The thread calls the assembly function
through ctypes with a ctypes callback, which, once the main thread sleeps
in waiting() for good, records the truth (every thread's frames; in
TRUTH.nocfi the thread's native id, the assembly function's name and the
return address it wrote into nocfi_ra: its caller's) and sleeps.  READY
once the truth is written."""
import ctypes
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

FUNCTION = {"fp": "nocfi_fp", "scan": "nocfi_nofp"}[sys.argv[2]]
# check-weave builds it into the process's working directory, check-arm64
# beside this script
lib = ctypes.CDLL(next((p for p in (os.path.join(os.getcwd(), "libnocfi.so"),
                                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "libnocfi.so"))
                        if os.path.exists(p)), "libnocfi.so"))
CALLBACK = ctypes.CFUNCTYPE(None)


MAIN = threading.get_ident()


def main_settled():
    """Waits (at most 60 s, then ends the process saying so) until the main
    thread is where it stays, in waiting(): the truth holds every thread's
    frames, and the main thread records none itself (it may still be in
    Thread.start)."""
    for _ in range(6000):
        f = sys._current_frames().get(MAIN)
        if f is not None and f.f_code is waiting.__code__ and f.f_lineno == waiting.__code__.co_firstlineno + 2:
            return
        time.sleep(0.01)
    sys.stderr.write("nocfi.py: the main thread did not come to waiting()'s sleep in 60 s\n")
    os._exit(1)


def blocked():
    main_settled()
    ra = ctypes.c_uint64.in_dll(lib, "nocfi_ra").value
    with open(sys.argv[1] + ".nocfi", "w") as f:
        json.dump({"tid": threading.get_native_id(), "function": FUNCTION, "return_address": ra}, f)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); time.sleep(1000)  # noqa: E702


def callback():
    blocked()


keep = CALLBACK(callback)


def through_assembly():
    getattr(lib, FUNCTION)(keep)


def waiting():
    while True:
        time.sleep(1000)


t = threading.Thread(target=through_assembly, name="through-assembly", daemon=True)
t.start()
waiting()
