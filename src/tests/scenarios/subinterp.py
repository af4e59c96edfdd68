"""Two interpreters (3.12+): a worker thread runs code in a subinterpreter
that records its own stack (sys._getframe(): sys._current_frames() merges
every interpreter's threads by thread id, so it cannot tell them apart)
and then sleeps there; the main interpreter records its threads after.
Truth: argv[1] (the main interpreter) and argv[1] + ".sub" (the frames
running in the subinterpreter)."""
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
import json, os, sys, time

def record_own(path, frame):
    frames = []
    while frame is not None:
        frames.append({"function": frame.f_code.co_name, "file": frame.f_code.co_filename,
                       "line": frame.f_lineno})
        frame = frame.f_back
    with open(path + ".tmp", "w") as f:
        json.dump({"frames": frames}, f)
    os.rename(path + ".tmp", path)

def sub_inner():
    record_own(%(out)r, sys._getframe()); time.sleep(1000)

def sub_outer():
    sub_inner()

sub_outer()
"""


def run_sub(sid):
    code = SUB_CODE % {"out": sys.argv[1] + ".sub"}
    interpreters.run_string(sid, code)


def main():
    sid = interpreters.create()
    threading.Thread(target=run_sub, args=(sid,), name="sub-runner", daemon=True).start()
    while not os.path.exists(sys.argv[1] + ".sub"):
        time.sleep(0.05)
    time.sleep(0.2)
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); time.sleep(1000)  # noqa: E702


main()
