"""Three interpreters (3.12+): two worker threads each run code in a
subinterpreter of its own that records its own stack (sys._getframe():
sys._current_frames() merges every interpreter's threads by thread id, so
it cannot tell them apart) and the OS thread it runs on, then sleeps
there; the main interpreter records its threads after.  Truth: argv[1]
(the main interpreter) and argv[1] + ".sub1", ".sub2" (the frames running
in each subinterpreter, and its "native_id")."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

try:
    import _interpreters as interpreters      # 3.13
except ImportError:
    import _xxsubinterpreters as interpreters  # 3.12

SUB_CODE = """
import _thread, json, os, sys, time

def record_own(path, frame):
    frames = []
    while frame is not None:
        frames.append({"function": frame.f_code.co_name, "file": frame.f_code.co_filename,
                       "line": frame.f_lineno})
        frame = frame.f_back
    with open(path + ".tmp", "w") as f:
        json.dump({"frames": frames, "native_id": _thread.get_native_id()}, f)
    os.rename(path + ".tmp", path)

def sub%(n)d_inner():
    record_own(%(out)r, sys._getframe()); time.sleep(1000)

def sub%(n)d_outer():
    sub%(n)d_inner()

sub%(n)d_outer()
"""


def run_sub(sid, n):
    code = SUB_CODE % {"out": sys.argv[1] + ".sub%d" % n, "n": n}
    interpreters.run_string(sid, code)


def main():
    for n in (1, 2):
        sid = interpreters.create()
        threading.Thread(target=run_sub, args=(sid, n), name="sub-runner-%d" % n, daemon=True).start()
    while not all(os.path.exists(sys.argv[1] + ".sub%d" % n) for n in (1, 2)):
        time.sleep(0.05)
    time.sleep(0.2)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); time.sleep(1000)  # noqa: E702


main()
