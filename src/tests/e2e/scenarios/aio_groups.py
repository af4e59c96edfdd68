"""asyncio tasks on two event loops run by two threads.  Loop "a" serves:
a server task awaiting a gather of 2 gathers of 5 gathers of 5 handlers
(50 pending tasks in three levels of gather), a TaskGroup (3.11+) whose
child failed while a sibling, cancelled, waits on a future that never
completes (so the group's owner waits in its __aexit__), a task awaiting a
future that never completes, and two tasks awaiting each other (a cycle).
Loop "b" runs a sleeper and its own running task.  Each loop's running
task records what the process itself says of its tasks (_aio_truth.py);
loop b's first, then loop a's, which then records the threads' stacks.

With argv[2] "abort", loop a's records from a callback instead, and calls
os.abort() there (the kernel's core).

Truth (argv[1]): _truth.record's threads, and argv[1] + ".asyncio":
{"loops": [loop a's, loop b's]}, each as _aio_truth.loop_truth gives it.
Runs on CPython 3.8+."""
import _thread
import asyncio
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402
from _aio_truth import loop_truth  # noqa: E402

NEVER = 3600
ABORT = sys.argv[2:] == ["abort"]
parked = _thread.allocate_lock()
parked.acquire()
main_parked = _thread.allocate_lock()   # released by the main thread on its last line
main_parked.acquire()
b_recorded = threading.Event()
truth = {"loops": [None, None]}
keep = []   # tasks kept alive by the scenario


async def handler():
    await asyncio.sleep(NEVER)


async def level3():
    return await asyncio.gather(*[handler() for _ in range(5)])


async def level2():
    return await asyncio.gather(*[level3() for _ in range(5)])


async def server():
    return await asyncio.gather(*[level2() for _ in range(2)])


async def fail_soon():
    await asyncio.sleep(0)
    raise ValueError("child failed")


async def stubborn(never):
    try:
        await asyncio.sleep(NEVER)
    finally:
        await never   # cancelled by the group: holds it open for ever


async def grouper(never):
    async with asyncio.TaskGroup() as tg:
        keep.append(tg.create_task(fail_soon(), name="tg-fail"))
        keep.append(tg.create_task(stubborn(never), name="tg-stubborn"))


async def waiter(fut):
    await fut


box = {}


async def cyclic(other):
    await asyncio.sleep(0)
    await box[other]


def snapshot_b():
    caller = sys._getframe(1)
    truth["loops"][1] = loop_truth(caller)
    b_recorded.set()


def snapshot_a(truth_path, crasher=None):
    b_recorded.wait()
    main_parked.acquire()  # the main thread's stack stands still from now on
    caller = sys._getframe(1)
    truth["loops"][0] = loop_truth(caller)
    with open(truth_path + ".asyncio", "w") as f:
        json.dump(truth, f)
    frames = sys._current_frames()
    frames[threading.get_ident()] = caller
    record(truth_path, frames, crasher=crasher)


def abort_callback(truth_path):
    snapshot_a(truth_path, threading.get_ident()); os.abort()  # noqa: E702


async def blocker_b():
    snapshot_b(); parked.acquire()  # noqa: E702


async def blocker_a(truth_path):
    snapshot_a(truth_path); print("READY", flush=True); parked.acquire()  # noqa: E702


async def main_a(truth_path):
    loop = asyncio.get_running_loop()
    never = loop.create_future()
    keep.append(asyncio.create_task(server(), name="server"))
    if sys.version_info >= (3, 11):
        keep.append(asyncio.create_task(grouper(never), name="grouper"))
    keep.append(asyncio.create_task(waiter(loop.create_future()), name="waiter"))
    box["a"] = asyncio.create_task(cyclic("b"), name="cycle-a")
    box["b"] = asyncio.create_task(cyclic("a"), name="cycle-b")
    for _ in range(10):
        await asyncio.sleep(0)
    if ABORT:
        loop.call_soon(abort_callback, truth_path)
        await never
    await blocker_a(truth_path)


async def main_b():
    sleeper = asyncio.create_task(asyncio.sleep(NEVER), name="b-sleeper")
    await asyncio.sleep(0)
    await blocker_b()
    return sleeper


a = threading.Thread(target=asyncio.run, args=(main_a(sys.argv[1]),), name="loop-a", daemon=True)
b = threading.Thread(target=asyncio.run, args=(main_b(),), name="loop-b", daemon=True)
b.start()
a.start()
main_parked.release(); parked.acquire()  # noqa: E702
