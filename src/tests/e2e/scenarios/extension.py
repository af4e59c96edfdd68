"""A crash inside a C extension module (built by the test into the working
directory): argv[2] is "segv" (NULL write) or "fpe" (integer division by
zero)."""
import _thread
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from _truth import record  # noqa: E402
import crashext  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()


def blocked(ready):
    ready.release(); parked.acquire()  # noqa: E702


def call_into_c(how):
    if how == "segv":
        record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); print("READY", flush=True); crashext.segv()  # noqa: E702,E501
    else:
        record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); print("READY", flush=True); crashext.fpe(0)  # noqa: E702,E501


ready = _thread.allocate_lock()
ready.acquire()
threading.Thread(target=blocked, args=(ready,), name="bystander", daemon=True).start()
ready.acquire()
time.sleep(0.1)
call_into_c(sys.argv[2])
