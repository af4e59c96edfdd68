"""A WSGI application for gunicorn's gevent worker (check-servers.py).

Requests to /lock, /event, /recv and /sleep each block their greenlet in
one call (threading.Lock.acquire, gevent.event.Event.wait, a socket's recv,
time.sleep: gunicorn's gevent worker has patched them to gevent's); /truth
writes, to $PYCORE_TRUTH, what the worker itself says of every greenlet
(gc.get_objects(), each one's gr_frame walked through f_back) and of its
OS threads (/proc/self/task), then answers."""
import gc
import json
import os
import socket
import threading
import time

import greenlet

lock = threading.Lock()
lock.acquire()
event = None
peer, other = socket.socketpair()


def block_lock():
    lock.acquire()


def block_event():
    event.wait()


def block_recv():
    peer.recv(1)


def block_sleep():
    api_token = "s3cr3t-" + "x" * 12  # --redact must hide it in this greenlet's stack
    time.sleep(3600)
    return api_token


def stack(frame):
    out = []
    while frame is not None:
        out.append({"function": frame.f_code.co_name, "file": frame.f_code.co_filename, "line": frame.f_lineno})
        frame = frame.f_back
    return out


def truth():
    me = greenlet.getcurrent()
    gs = []
    for g in gc.get_objects():
        if not isinstance(g, greenlet.greenlet):
            continue
        t = type(g)
        started = bool(g) or g.dead
        gs.append({
            "address": "0x%x" % id(g),
            "type": "%s.%s" % (t.__module__, t.__qualname__),
            "main": g.parent is None,
            "current": g is me,
            "state": "running" if g is me else "dead" if g.dead else "suspended" if started else "not started",
            "parent": "0x%x" % id(g.parent) if g.parent is not None else None,
            "stack": stack(g.gr_frame) if g is not me else [],
        })
    return {"pid": os.getpid(), "greenlet": greenlet.__version__, "self": "0x%x" % id(me),
            "tids": sorted(int(t) for t in os.listdir("/proc/self/task")), "greenlets": gs}


BLOCKS = {"/lock": block_lock, "/event": block_event, "/recv": block_recv, "/sleep": block_sleep}


def app(environ, start_response):
    global event
    import gevent.event
    if event is None:
        event = gevent.event.Event()
    path = environ.get("PATH_INFO", "")
    if path in BLOCKS:
        BLOCKS[path]()
    body = b"?"
    if path == "/truth":
        with open(os.environ["PYCORE_TRUTH"] + ".tmp", "w") as f:
            json.dump(truth(), f)
        os.rename(os.environ["PYCORE_TRUTH"] + ".tmp", os.environ["PYCORE_TRUTH"])
        body = b"ok"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
