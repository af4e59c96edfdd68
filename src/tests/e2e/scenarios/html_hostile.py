"""Strings made to break an HTML page, in every place a report shows a
string of the dump: threads named with them, each running a function
whose name (co_name, co_qualname) and file name (co_filename) are one of
them, with locals holding them (str, bytes that are not UTF-8, a dict) and
inside an except block whose exception's message is one (the test adds
an argument of bytes that are not UTF-8).  An argument "many":
200 such threads (the names cycled, numbered).  Once every thread stands
at its blocking call, the main thread writes argv[1] (the strings, as
os.fsencode gives them, in hex) and prints READY.  Runs on CPython 3.8+."""
import _thread
import json
import sys
import threading
import time

HOSTILE = [
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(document.domain)",
    "\"dq\" 'sq' &amp; <b>bold</b> <!-- c -->",
    "bidi \u202etxt.exe\u202c \u2066iso\u2069 \u200f",
    "ctl \x1b[31m\x07\x00nul\r\n",
    "bad utf-8 \udcff\udcfe<tag>",
]

SOURCE = '''
def body(evil, ready, parked):
    data = {"key": evil, evil: 1}
    blob = evil.encode("utf-8", "surrogateescape") + b"\\xff\\xfe"
    try:
        raise ValueError(evil)
    except ValueError:
        ready.release(); parked.acquire()
'''

parked = _thread.allocate_lock()
parked.acquire()


def make(name):
    """body() with NAME as its function and file name (where the
    interpreter takes it: a file name with a lone surrogate is refused)."""
    ns = {}
    try:
        code = compile(SOURCE, name + ".py", "exec")
    except (UnicodeError, ValueError):
        code = compile(SOURCE, "hostile.py", "exec")
    exec(code, ns)
    f = ns["body"]
    fields = {"co_name": name}
    if sys.version_info >= (3, 11):
        fields["co_qualname"] = name
    f.__code__ = f.__code__.replace(**fields)
    return f


def main():
    many = "many" in sys.argv[2:]
    n = 200 if many else len(HOSTILE)
    readies = []
    for i in range(n):
        s = HOSTILE[i % len(HOSTILE)]
        name = "%s #%d" % (s, i) if many else s
        ready = _thread.allocate_lock()
        ready.acquire()
        readies.append(ready)
        threading.Thread(target=make(s), args=(s, ready, parked), name=name, daemon=True).start()
    for ready in readies:
        ready.acquire()
    time.sleep(0.2)
    with open(sys.argv[1], "w") as f:
        json.dump({"hostile": [s.encode("utf-8", "surrogateescape").hex() for s in HOSTILE], "threads": n}, f)
    print("READY", flush=True)
    parked.acquire()


main()
