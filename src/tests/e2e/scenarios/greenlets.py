"""Greenlets suspended in known calls, on two OS threads (check-greenlets.py).

argv[1]: the truth file; argv[2]: "plain" (greenlet alone), "gevent"
(gevent's hub and greenlets blocked in a lock's acquire, Event.wait, a
socket's recv and sleep, all gevent's after monkey.patch_all()) or
"unknown" (plain, then greenlet.__version__ set to a version no greenlet
has had, as the truth says: its layout is not known).

Plain: on the main thread and on a second one, greenlets suspended in a
switch 3 calls deep, in a generator, in a greenlet subclass's run, inside
an except block, one started by another (its parent), one never started,
one finished.  Each thread then writes what it says of every greenlet of
its own (gc.get_objects(), each one's gr_frame through f_back): the
thread's native id, each greenlet's address, type, whether it is its
thread's main greenlet, its parent, state, run target and stack.  The
main greenlet of each thread keeps running, blocked in hold(): a sleep
that does not switch.  READY once the truth is written."""
import gc
import json
import os
import sys
import threading
import time

MODE = sys.argv[2] if len(sys.argv) > 2 else "plain"
if MODE == "gevent":
    from gevent import monkey
    monkey.patch_all()
    import gevent
    import gevent.event
    import socket
    real_sleep = monkey.get_original("time", "sleep")
else:
    real_sleep = time.sleep

import greenlet  # noqa: E402


def stack(frame):
    out = []
    while frame is not None:
        out.append({"function": frame.f_code.co_name, "file": frame.f_code.co_filename, "line": frame.f_lineno})
        frame = frame.f_back
    return out


def qualname(fn):
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__qualname__", None)


def truth_of_thread():
    """Every greenlet of the calling thread, as it says."""
    me = greenlet.getcurrent()
    root = me
    while root.parent is not None:
        root = root.parent
    gs = []
    for g in gc.get_objects():
        if not isinstance(g, greenlet.greenlet):
            continue
        r = g
        while r.parent is not None:
            r = r.parent
        if r is not root:
            continue
        t = type(g)
        started = bool(g) or g.dead
        frames = stack(g.gr_frame) if g is not me and not g.dead else []
        run = None
        if g.parent is not None:
            if not started:
                run = qualname(g.run)
            elif "run" in [k for c in t.__mro__ if c is not greenlet.greenlet for k in vars(c)]:
                run = qualname(t.run)
            elif frames:
                co = g.gr_frame
                while co.f_back is not None:
                    co = co.f_back
                run = getattr(co.f_code, "co_qualname", co.f_code.co_name)
        gs.append({
            "address": "0x%x" % id(g),
            "type": "%s.%s" % (t.__module__, t.__qualname__),
            "main": g.parent is None,
            "state": "running" if g is me else "dead" if g.dead else "suspended" if started else "not started",
            "parent": "0x%x" % id(g.parent) if g.parent is not None else None,
            "run": run,
            "stack": frames,
        })
    return {"tid": threading.get_native_id(), "greenlets": gs}


# --- plain greenlets --------------------------------------------------------

def parked(depth, token):
    if depth:
        return parked(depth - 1, token)
    return greenlet.getcurrent().parent.switch(token)


def in_generator():
    def gen():
        yield greenlet.getcurrent().parent.switch("gen")
    return list(gen())


class Worker(greenlet.greenlet):
    def run(self, n):
        total = n * 2
        return self.parent.switch(total)


def in_except():
    try:
        raise ValueError("parked in an except block")
    except ValueError:
        return greenlet.getcurrent().parent.switch("exc")


def outer():
    inner = greenlet.greenlet(parked)  # its parent: this greenlet
    inner.switch(1, "inner")
    KEEP.append(inner)
    return greenlet.getcurrent().parent.switch("outer")


KEEP = []


def plain_greenlets():
    a = greenlet.greenlet(parked)
    a.switch(3, "deep")
    b = greenlet.greenlet(in_generator)
    b.switch()
    c = Worker()
    c.switch(7)
    d = greenlet.greenlet(in_except)
    d.switch()
    e = greenlet.greenlet(outer)
    e.switch()
    fresh = greenlet.greenlet(parked)
    done = greenlet.greenlet(lambda: None)
    done.switch()
    KEEP.extend([a, b, c, d, e, fresh, done])


# --- gevent -----------------------------------------------------------------

def block_lock(lock):
    lock.acquire()


def block_event(event):
    event.wait()


def block_recv(sock):
    sock.recv(1)


def block_sleep():
    time.sleep(3600)


def gevent_greenlets():
    lock = threading.Lock()
    lock.acquire()
    event = gevent.event.Event()
    peer, other = socket.socketpair()
    KEEP.extend([lock, event, peer, other])
    KEEP.extend([gevent.spawn(block_lock, lock), gevent.spawn(block_event, event), gevent.spawn(block_recv, peer),
                 gevent.spawn(block_sleep), gevent.Greenlet(block_sleep)])
    gevent.sleep(0.2)  # every spawned one runs to its block


# --- the two threads --------------------------------------------------------

TRUTHS = []
done_second = threading.Event()


def hold():
    real_sleep(3600)


def second():
    plain_greenlets()
    TRUTHS.append(truth_of_thread())
    done_second.set()
    hold()


def main():
    if MODE == "gevent":
        gevent_greenlets()
    else:
        plain_greenlets()
        # gevent patches threading: its threads are greenlets, so only plain
        # mode has a second OS thread
        threading.Thread(target=second, name="second", daemon=True).start()
        done_second.wait()
    TRUTHS.insert(0, truth_of_thread())
    if MODE == "unknown":
        greenlet.__version__ = "0.0.1"
    with open(sys.argv[1], "w") as f:
        json.dump({"pid": os.getpid(), "greenlet": greenlet.__version__, "mode": MODE, "threads": TRUTHS}, f)
    print("READY", flush=True)
    hold()


main()
