"""Three interpreters nested on one OS thread: the main one runs
interpreter 1 (_interpreters.exec, or _xxsubinterpreters.run_string before
3.13), whose code runs interpreter 2, whose code records, in argv[1], each
level's Python frames (as each level saw them, innermost first) and the OS
thread, prints READY and sleeps (check-servers.py takes the core)."""
import json
import sys
import threading

try:
    import _interpreters as _i
except ImportError:
    import _xxsubinterpreters as _i


def frames():
    f, out = sys._getframe(1), []
    while f:
        out.append(f.f_code.co_name)
        f = f.f_back
    return out


# Each level's code: TEMPLATE (this text, given to it) with @TRUTH@ and
# @SEEN@ (the frames the levels above saw) filled in.
TEMPLATE = """
import json, sys, threading, time
try:
    import _interpreters as _i
except ImportError:
    import _xxsubinterpreters as _i
def frames():
    f, out = sys._getframe(1), []
    while f:
        out.append(f.f_code.co_name)
        f = f.f_back
    return out
def level(seen):
    seen = seen + [frames()]
    if len(seen) < 3:
        (getattr(_i, "exec", None) or _i.run_string)(_i.create(), code_for(TEMPLATE, @TRUTH@, seen))
    else:
        with open(@TRUTH@, "w") as f:
            json.dump({"tid": threading.get_native_id(), "levels": seen}, f)
        print("READY", flush=True)
        time.sleep(3600)
level(@SEEN@)
"""
HELPERS = """
def code_for(template, truth, seen):
    return ("TEMPLATE = " + repr(template) + "\\n" + HELPERS_SRC
            + template.replace("@TRUTH@", repr(truth)).replace("@SEEN@", repr(seen)))
"""


def code_for(template, truth, seen):
    return ("TEMPLATE = " + repr(template) + "\n" + "HELPERS_SRC = " + repr(HELPERS) + "\n" + HELPERS
            + template.replace("@TRUTH@", repr(truth)).replace("@SEEN@", repr(seen)))


def main():
    (getattr(_i, "exec", None) or _i.run_string)(_i.create(), code_for(TEMPLATE, sys.argv[1], [frames()]))


main()
