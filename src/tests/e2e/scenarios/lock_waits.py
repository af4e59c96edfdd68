"""Threads blocked on locks: "writer" holds RLock a (two levels) and waits for
RLock b, which "reader" holds while it waits for a (a deadlock of two
threads over two RLocks); others wait in queue.Queue.get, Event.wait,
Condition.wait, Semaphore.acquire, _thread.lock.acquire, a with statement
on a _thread.lock, the pure-Python RLock's acquire, SimpleQueue.get and
Thread.join; "sleeper" sleeps and
waits on nothing.  The main thread, once every thread stands at its
blocking call, records what the process itself says (sys._current_frames(),
each waited object's type, id and repr, an RLock's owner and count from its
own repr, the thread a join waits for), then waits on a lock it holds, or
with argv[2] "abort" calls os.abort() (the kernel's core).

Truth (argv[1]): _truth.record's threads, and argv[1] + ".waits":
{"waits": {native id: {"type", "address", "repr", "owner" (native id or
null), "count"}}, "none": [native ids waiting on nothing],
"deadlock": [native ids of the threads in a cycle of waits]}.
Runs on CPython 3.8+."""
import _thread
import json
import os
import queue
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record, type_name  # noqa: E402

NEVER = 3600
ABORT = sys.argv[2:] == ["abort"]
a, b = threading.RLock(), threading.RLock()
py_rlock = threading._PyRLock()
plain = _thread.allocate_lock()
with_lock = _thread.allocate_lock()
parked = _thread.allocate_lock()
q, sq = queue.Queue(), queue.SimpleQueue()
ev = threading.Event()
cond = threading.Condition()
sem = threading.Semaphore(0)
b_held = threading.Event()
waiting = {}     # thread name -> the object it is about to wait on
threads = {}


def about_to(obj):
    waiting[threading.current_thread().name] = obj


def writer():
    a.acquire()
    a.acquire()
    b_held.wait()
    about_to(b); b.acquire()  # noqa: E702


def reader():
    b.acquire()
    b_held.set()
    about_to(a); a.acquire()  # noqa: E702


def consumer():
    about_to(q); q.get()  # noqa: E702


def eventer():
    about_to(ev); ev.wait()  # noqa: E702


def conditioner():
    with cond:
        about_to(cond); cond.wait()  # noqa: E702


def semaphorer():
    about_to(sem); sem.acquire()  # noqa: E702


def locker():
    about_to(plain); plain.acquire()  # noqa: E702


def with_locker():
    about_to(with_lock)
    with with_lock:
        pass


def py_locker():
    about_to(py_rlock); py_rlock.acquire()  # noqa: E702


def simple():
    about_to(sq); sq.get()  # noqa: E702


def joiner():
    about_to(threads["consumer"]); threads["consumer"].join()  # noqa: E702


def sleeper():
    waiting["sleeper"] = None; time.sleep(NEVER)  # noqa: E702


def owner_and_count(obj):
    """An RLock's owner ident and count, from its own repr."""
    m = re.search(r"owner=(\d+) count=(\d+)", repr(obj))
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def truth_of_waits(path):
    by_ident = dict((t.ident, t.native_id) for t in threading.enumerate())
    waits, none = {}, []
    for name, t in threads.items():
        obj = waiting[name]
        if obj is None:
            none.append(t.native_id)
            continue
        owner = count = None
        if isinstance(obj, threading.Thread):
            owner = obj.native_id
        elif obj is py_rlock:
            ident, count = obj._owner, obj._count
            owner = by_ident.get(ident) if count else None
        elif "RLock" in type(obj).__name__:
            ident, count = owner_and_count(obj)
            owner = by_ident.get(ident) if count else None
        waits[t.native_id] = {"type": type_name(obj), "address": hex(id(obj)), "repr": repr(obj),
                              "owner": owner, "count": count}
    if ABORT:
        none.append(threading.main_thread().native_id)  # it runs os.abort(), holding the GIL
    else:
        waits[threading.main_thread().native_id] = {"type": type_name(parked), "address": hex(id(parked)),
                                                    "repr": repr(parked), "owner": None, "count": None}
    # cycles of waits: follow each thread's owner
    deadlock = set()
    for start in waits:
        seen, at = [], start
        while at in waits and at not in seen:
            seen.append(at)
            at = waits[at]["owner"]
        if at in seen:
            deadlock.update(seen[seen.index(at):])
    with open(path + ".waits", "w") as f:
        json.dump({"waits": waits, "none": none, "deadlock": sorted(deadlock)}, f)


plain.acquire()
with_lock.acquire()
parked.acquire()
py_rlock.acquire()
for fn in (writer, reader, consumer, eventer, conditioner, semaphorer, locker, with_locker, py_locker, simple,
           joiner, sleeper):
    threads[fn.__name__] = threading.Thread(target=fn, name=fn.__name__, daemon=True)
for t in threads.values():
    t.start()
while len(waiting) < len(threads):
    time.sleep(0.01)
time.sleep(0.5)  # from about_to() into the blocking call, on the same line
truth_of_waits(sys.argv[1])
if ABORT:
    record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); os.abort()  # noqa: E702
record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702
