"""asyncio's tasks in a report against what the process said of them (the
aio_tasks and aio_groups scenarios' .asyncio truth files), for the
checkers that read tasks (check-asyncio.py, check-arm64.py).

  compare_tasks(want, report)  one loop's tasks, field for field and frame
                               for frame; how many
"""
from .tap import Failure

FIELDS = ("name", "state", "running", "coroutine", "result", "exception", "waiting_on")


def frames(stack):
    """(function, file, line) of each frame of STACK."""
    return [(f["function"], f["file"], f["line"]) for f in stack]


def compare_tasks(want, report):
    """REPORT's tasks of WANT's loop (in WANT's thread) are WANT's tasks,
    each with the process's fields, awaits and stack; how many."""
    loops = [l for i in report["interpreters"] for l in (i["asyncio"] or [])]
    mine = [l for l in loops if l["loop"] == want["loop"]]
    if len(mine) != 1:
        raise Failure("loop %s: pycore has loops %s" % (want["loop"], [l["loop"] for l in loops]))
    loop = mine[0]
    if loop["thread"] != want["thread"]:
        raise Failure("loop %s: thread %s, the process says %s" % (want["loop"], loop["thread"], want["thread"]))
    got = dict((t["address"], t) for t in loop["tasks"])
    need = dict((t["address"], t) for t in want["tasks"])
    if sorted(got) != sorted(need):
        raise Failure("tasks %s, the process has %s" % (sorted((t["name"], a) for a, t in got.items()),
                                                        sorted((t["name"], a) for a, t in need.items())))
    for addr, w in need.items():
        g = got[addr]
        label = "task %s (%s)" % (w["name"], addr)
        if g["error"]:
            raise Failure("%s: pycore says: %s" % (label, g["error"]))
        for k in FIELDS:
            if g[k] != w[k]:
                raise Failure("%s: %s %r, the process says %r" % (label, k, g[k], w[k]))
        for k in ("awaiting", "awaited_by"):
            if sorted(g[k]) != w[k]:
                raise Failure("%s: %s %s, the process says %s" % (label, k, sorted(g[k]), w[k]))
        if frames(g["stack"]) != frames(w["stack"]):
            raise Failure("%s: stack %s, the process says %s" % (label, frames(g["stack"]), frames(w["stack"])))
    return len(need)
