"""Generator and coroutine frames live on the stacks: a worker blocked inside
a generator, one inside a coroutine awaited by another, and the main thread
blocked inside a generator."""
import _thread
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()


def gen_body(ready):
    y = 1
    ready.release(); parked.acquire()  # noqa: E702
    yield y


def gen_worker(ready):
    g = gen_body(ready)
    next(g)


async def coro_inner(ready):
    ready.release(); parked.acquire()  # noqa: E702


async def coro_outer(ready):
    await coro_inner(ready)


def coro_worker(ready):
    c = coro_outer(ready)
    c.send(None)


def main_gen():
    record(sys.argv[1], sys._current_frames()); print("READY", flush=True); parked.acquire()  # noqa: E702
    yield


readies = []
for name, target in (("gen", gen_worker), ("coro", coro_worker)):
    ready = _thread.allocate_lock()
    ready.acquire()
    readies.append(ready)
    threading.Thread(target=target, args=(ready,), name=name, daemon=True).start()
for ready in readies:
    ready.acquire()
time.sleep(0.1)
next(main_gen())
