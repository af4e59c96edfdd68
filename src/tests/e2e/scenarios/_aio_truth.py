"""What the process itself says of the tasks of its running event loop, in
the shape of pycore's report (interpreters[].asyncio[]): the scenarios'
truth.  Runs on CPython 3.8+."""
import asyncio
import sys
import threading
import types

from _truth import type_name


def registry(loop):
    """Every task of LOOP asyncio's registry holds, as the process sees it."""
    t = asyncio.tasks
    if sys.version_info < (3, 12):
        tasks = list(t._all_tasks)
    elif sys.version_info < (3, 14):
        tasks = list(t._scheduled_tasks) + list(t._eager_tasks)
    else:
        # C tasks are linked into their thread's list while pending and
        # unlinked once done (all_tasks() gives those); other tasks are
        # still in the registry of tasks.py (all_tasks() leaves them out)
        tasks = list(set(list(asyncio.all_tasks(loop)) + list(t._scheduled_tasks) + list(t._eager_tasks)))
    return [task for task in tasks if task.get_loop() is loop]


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


def group_children(w):
    """The children of the TaskGroup whose completion future W is: the task
    waiting on it sits in the group's __aexit__, awaiting them."""
    if sys.version_info < (3, 11):
        return []
    import gc
    for g in gc.get_objects():
        if isinstance(g, asyncio.TaskGroup) and g._on_completed_fut is w:
            return list(g._tasks)
    return []


def describe(t, running_stack):
    running = t is asyncio.current_task()
    done = t.done() and not t.cancelled()
    exc = t.exception() if done else None
    w = t._fut_waiter
    awaiting = tasks_of(w) + group_children(w) if w is not None and not t.done() else []
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


def loop_truth(caller):
    """The running loop's thread, address and tasks, recorded from inside its
    running task (or a callback the loop runs) by the function CALLER (a
    frame) called."""
    loop = asyncio.get_running_loop()
    current = asyncio.current_task()   # None in a callback
    stack = running_chain(caller, current.get_coro()) if current is not None else []
    tasks = [describe(t, stack) for t in registry(loop)]
    for t in tasks:
        t["awaited_by"] = sorted(o["address"] for o in tasks if t["address"] in o["awaiting"])
    return {"thread": threading.get_native_id(), "loop": hex(id(loop)), "tasks": tasks}
