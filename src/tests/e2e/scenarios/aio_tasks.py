"""asyncio tasks on an event loop run by a thread of its own: a task awaiting
a task through a chain of coroutines, one awaiting a future that never
completes, a gather of two tasks inside a gather, a pure-Python task awaiting
a pure-Python future, a task whose cancel() was asked for, and tasks done with
a result, with an exception and cancelled.  The running task records what
the process itself says of every task of the loop (asyncio's registry,
get_name(), cr_await chains, _fut_waiter, the state) and then blocks in
a lock inside it; the main thread waits on a lock.

Truth (argv[1]): _truth.record's threads, plus "asyncio": {"thread" (native
id of the loop's thread), "loop" (its address), "tasks": [...]} with each
task's fields as pycore's report has them.  Runs on CPython 3.8+."""
import _thread
import asyncio
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402
from _aio_truth import loop_truth  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()
main_parked = _thread.allocate_lock()   # released by the main thread on its last line
main_parked.acquire()
NEVER = 3600


async def leaf(fut):
    await fut


async def inner(task):
    return await task


async def middle(task):
    return await inner(task)


async def sleeper():
    await asyncio.sleep(NEVER)


async def gathered():
    return await asyncio.gather(sleeper(), asyncio.gather(sleeper(), sleeper()))


async def py_waiter(fut):
    await fut


async def finish():
    return 42


async def fail():
    raise ValueError("bad value")


def snapshot(truth_path):
    """Record the truth as it stands in the caller, which then blocks on the
    same line."""
    main_parked.acquire()  # the main thread's stack stands still from now on
    caller = sys._getframe(1)
    with open(truth_path + ".asyncio", "w") as f:
        json.dump(loop_truth(caller), f)
    frames = sys._current_frames()
    frames[threading.get_ident()] = caller
    record(truth_path, frames)


async def blocker(truth_path):
    snapshot(truth_path); print("READY", flush=True); parked.acquire()  # noqa: E702


async def main(truth_path):
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    leaf_task = asyncio.create_task(leaf(fut), name="leaf")
    middle_task = asyncio.create_task(middle(leaf_task), name="middle")
    gather_task = asyncio.create_task(gathered(), name="gatherer")
    py_fut = asyncio.futures._PyFuture(loop=loop)
    py_task = asyncio.tasks._PyTask(py_waiter(py_fut), loop=loop, name="py-task")
    to_cancel_later = asyncio.create_task(sleeper(), name="cancelling")
    done = asyncio.create_task(finish(), name="done")
    failed = asyncio.create_task(fail(), name="failed")
    cancelled = asyncio.create_task(sleeper(), name="cancelled")
    for _ in range(3):
        await asyncio.sleep(0)
    cancelled.cancel()
    for _ in range(3):
        await asyncio.sleep(0)
    to_cancel_later.cancel()
    # the tasks stay alive in this frame's variables
    await blocker(truth_path)


def run_loop(truth_path):
    asyncio.run(main(truth_path))


t = threading.Thread(target=run_loop, args=(sys.argv[1],), name="loop-thread", daemon=True)
t.start()
main_parked.release(); parked.acquire()  # noqa: E702
