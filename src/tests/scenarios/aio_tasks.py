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
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record, type_name  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()
main_parked = _thread.allocate_lock()   # released by the main thread on its last line
main_parked.acquire()
NEVER = 3600


def registry():
    """Every task asyncio's registry holds, as the process sees it."""
    t = asyncio.tasks
    if sys.version_info < (3, 12):
        return list(t._all_tasks)
    if sys.version_info < (3, 14):
        return list(t._scheduled_tasks) + list(t._eager_tasks)
    # 3.14+: C tasks are linked into their thread's list while pending,
    # and unlinked once done (all_tasks() gives those); other tasks are
    # still in the registry of tasks.py (all_tasks() leaves them out)
    return list(set(list(asyncio.all_tasks()) + list(t._scheduled_tasks) + list(t._eager_tasks)))


def frame_entry(f):
    return {"function": f.f_code.co_name, "file": f.f_code.co_filename, "line": f.f_lineno,
            "locals": dict((k, [type_name(v), repr(v)]) for k, v in f.f_locals.items())}


def await_chain(coro):
    """The coroutine and what it awaits, innermost first (cr_await and
    gi_yieldfrom, through coroutines and generators)."""
    out = []
    seen = set()
    while isinstance(coro, (types.CoroutineType, types.GeneratorType)) and id(coro) not in seen:
        seen.add(id(coro))
        if isinstance(coro, types.CoroutineType):
            f, nxt = coro.cr_frame, coro.cr_await
        else:
            f, nxt = coro.gi_frame, coro.gi_yieldfrom
        if f is None:
            break
        out.append(frame_entry(f))
        coro = nxt
    out.reverse()
    return out


def running_chain(frame, coro):
    """The running task's stack: FRAME and its callers out to its coroutine's."""
    out = []
    f = frame
    while f is not None:
        out.append(frame_entry(f))
        if f is coro.cr_frame:
            return out
        f = f.f_back
    raise RuntimeError("the running coroutine's frame is not on this thread")


def tasks_of(fut, depth=0):
    if isinstance(fut, asyncio.Task):
        return [fut]
    out = []
    for child in getattr(fut, "_children", None) or []:
        if depth < 32:
            out += [t for t in tasks_of(child, depth + 1) if t not in out]
    return out


def state_of(t):
    if t.done():
        return "cancelled" if t.cancelled() else "done"
    if sys.version_info >= (3, 11):
        return "cancelling" if t.cancelling() > 0 else "pending"
    w = t._fut_waiter
    return "cancelling" if t._must_cancel or (w is not None and w.cancelled()) else "pending"


def describe(t, running_stack):
    running = t is asyncio.current_task()
    done = t.done() and not t.cancelled()
    exc = t.exception() if done else None
    w = t._fut_waiter
    awaiting = tasks_of(w) if w is not None and not t.done() else []
    return {
        "name": t.get_name(),
        "address": hex(id(t)),
        "state": state_of(t),
        "running": running,
        "coroutine": t.get_coro().__qualname__,
        "stack": running_stack if running else ([] if t.done() else await_chain(t.get_coro())),
        "awaiting": sorted(hex(id(a)) for a in awaiting),
        "waiting_on": None if w is None else {"type": type_name(w), "address": hex(id(w))},
        "result": repr(t.result()) if done and exc is None else None,
        "exception": None if exc is None else {"type": type_name(exc), "message": str(exc)},
    }


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
    loop = asyncio.get_running_loop()
    stack = running_chain(caller, asyncio.current_task().get_coro())
    tasks = [describe(t, stack) for t in registry()]
    for t in tasks:
        t["awaited_by"] = sorted(o["address"] for o in tasks if t["address"] in o["awaiting"])
    with open(truth_path + ".asyncio", "w") as f:
        json.dump({"thread": threading.get_native_id(), "loop": hex(id(loop)), "tasks": tasks}, f)
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
