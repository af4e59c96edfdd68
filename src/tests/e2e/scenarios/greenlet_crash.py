"""A crash inside a greenlet another greenlet started (check-weave.py).

argv[1]: the truth file; argv[2]: "plain" (greenlet alone: the main
greenlet switches to a loop greenlet, which starts a second greenlet
that switches back to it, then a worker greenlet that crashes) or
"gevent" (gevent's hub runs a spawned greenlet that crashes while others
are blocked in sleep and Event.wait).  The crash: ctypes.string_at(0),
SIGSEGV, three Python calls deep in the worker.  Before it, the process
records its truth (the crashing thread's frames, crasher its ident) and,
in TRUTH.greenlets, every greenlet of the thread (id, running or
suspended, its frames through gr_frame)."""
import ctypes
import gc
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

MODE = sys.argv[2]
if MODE == "gevent":
    from gevent import monkey
    monkey.patch_all()
    import gevent
    import gevent.event

import greenlet  # noqa: E402


def stack(frame):
    out = []
    while frame is not None:
        out.append({"function": frame.f_code.co_name, "file": frame.f_code.co_filename, "line": frame.f_lineno})
        frame = frame.f_back
    return out


def greenlets_truth():
    me = greenlet.getcurrent()
    out = []
    for g in gc.get_objects():
        if isinstance(g, greenlet.greenlet) and not g.dead and (g is me or g.gr_frame is not None or g.parent is None):
            out.append({"address": "0x%x" % id(g), "running": g is me, "main": g.parent is None,
                        "stack": stack(g.gr_frame) if g is not me else None})
    return out


def crash():
    with open(sys.argv[1] + ".greenlets", "w") as f:
        json.dump({"tid": threading.get_native_id(), "greenlets": greenlets_truth()}, f)
    record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); ctypes.string_at(0)  # noqa: E702


def handler(n):
    if n:
        return handler(n - 1)
    crash()


def worker():
    handler(2)


def plain():
    main = greenlet.getcurrent()

    def loop():
        other = greenlet.greenlet(lambda: greenlet.getcurrent().parent.switch())
        other.switch()
        greenlet.greenlet(worker).switch()
        main.switch()

    hub = greenlet.greenlet(loop)

    def outer():
        hub.switch()
    outer()


def with_gevent():
    ev = gevent.event.Event()
    waiting = [gevent.spawn(ev.wait), gevent.spawn(gevent.sleep, 1000)]
    gevent.sleep(0.05)
    crasher = gevent.spawn(worker)
    gevent.joinall(waiting + [crasher])


if MODE == "gevent":
    with_gevent()
else:
    plain()
