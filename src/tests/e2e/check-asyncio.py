"""asyncio tasks from real cores, on every interpreter present from 3.8
(src/tests/e2e/interpreters/*.interp).

The aio_tasks scenario runs an event loop in a thread of its own with tasks
in every state, records what the process itself says of each task (the
registry asyncio keeps, get_name(), the cr_await chain of its coroutine,
_fut_waiter and the tasks behind it, done()/cancelled()/cancelling(), result
or exception), then blocks inside the running task; gcore takes the core.
pycore's JSON must name the loop, its thread and the same tasks with the
same fields, stacks frame for frame (with --locals, each frame's variables
with Python's own reprs), and the text report with --tasks must show each
task.  The threads' stacks are checked as check-stacks.py does.  The
aio_groups scenario runs two loops in two threads: 50 pending tasks in three
levels of gather, a TaskGroup with a failed child whose owner waits in its
__aexit__ for a child that never ends, a task awaiting a future that never
completes and two tasks awaiting each other, whose cycle the text must name;
a second run ends in os.abort() from a callback of loop a (the kernel's
core).

Prints TAP lines (ok N - ..., not ok N - ..., ok N - ... # SKIP why);
exit 0 pass, 1 fail, 77 when nothing ran."""
import os
import shutil
import subprocess
import sys

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.aio import compare_tasks
from pycoretest.env import scaled

FIRST_MINOR, LAST_MINOR = 8, 15


def check_text(target, core, want):
    rc, out, err = pt.run_pycore(["analyze", "--tasks"] + target.pycore_args() + [core])
    if rc != 0:
        raise pt.Failure("--tasks text: exit %d: %s" % (rc, err.strip()))
    if "Tasks of loop %s" % want["loop"] not in out:
        raise pt.Failure("--tasks text: no section for loop %s" % want["loop"])
    for t in want["tasks"]:
        if "%s (%s) %s" % (t["name"], t["address"], t["state"]) not in out:
            raise pt.Failure("--tasks text: task %s (%s) %s is not shown" % (t["name"], t["address"], t["state"]))
        pt.text_frames(out, {"threads": [{"frames": t["stack"]}]}, "--tasks text: task %s" % t["name"])
    return out


def without_asyncio_file(target, core, report, want):
    """3.14+: the task lists are found by the _asyncio module's own debug
    offsets (its section .AsyncioDebug), read from its file; with that file
    hidden (/dev/null bind-mounted over it in a mount namespace of this
    test's own) pycore's tables must find the same tasks, and so must the
    thread and interpreter state offsets from the interpreter's own DWARF
    with --layout=dwarf (a Debian root's debug files).  Says what was
    checked, or why not."""
    files = [m["file"] for m in report["process"]["modules"]
             if m["file"] and os.path.basename(m["path"]).startswith("_asyncio.")]
    if not files:
        return "_asyncio is built into the interpreter: its debug offsets are the interpreter's file's"
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return "pycore's own tables not checked (hiding _asyncio's file needs root and unshare)"
    ways = [([], "pycore's own offsets")]
    debug = target.root + ".debug/usr/lib/debug" if target.root else None
    if debug and os.path.isdir(debug):
        ways.append((["--debug-dir", debug, "--layout=dwarf"], "and the interpreter's DWARF's"))
    for args, what in ways:
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            'mount --bind /dev/null "$1" && shift && exec "$@"', "sh", files[0],
                            pt.PYCORE, "analyze", "--format", "json"] + target.pycore_args() + args + [core],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(300))
        if p.returncode != 0:
            raise pt.Failure("with %s hidden%s: pycore exit %d: %s" % (files[0], " ".join([""] + args), p.returncode,
                                                                    p.stderr.decode().strip()))
        compare_tasks(want, pt.load_report(p.stdout))
    return "the same with _asyncio's file hidden (%s)" % " ".join(w for _, w in ways)


def check(target, work):
    core, report, want = pt.take_and_read(target, "aio_tasks", work, suffix=".asyncio")
    n = compare_tasks(want, report)
    check_text(target, core, want)
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--locals"] + target.pycore_args() + [core])
    if rc != 0:
        raise pt.Failure("--locals: pycore exit %d: %s" % (rc, err.strip()))
    exact = pt.locals.compare_task_locals(want, pt.load_report(out))
    hidden = "; " + without_asyncio_file(target, core, report, want) if target.minor() >= 14 else ""
    return "%d tasks on loop %s in thread %s, %d exact reprs of their variables%s" % (
        n, want["loop"], want["thread"], exact, hidden)


def check_groups(target, work, abort=False):
    """Two loops in two threads: every loop's tasks as the process says,
    and the text names the cycle of two tasks awaiting each other.  ABORT:
    the kernel's core after os.abort() in a callback of loop a."""
    core, report, want = pt.take_and_read(target, "aio_groups", work, abort, ".asyncio")
    counts = [compare_tasks(loop, report) for loop in want["loops"]]
    text = ""
    for loop in want["loops"]:
        text = check_text(target, core, loop)
    cycle = [l for l in text.splitlines() if "cycle-" in l and "a cycle of awaits back to it" in l]
    if not cycle:
        raise pt.Failure("--tasks text: the cycle of cycle-a and cycle-b is not named")
    groups = [t for l in want["loops"] for t in l["tasks"] if t["name"] == "grouper"]
    return "tasks %s on loops in threads %s; %s" % (counts, [l["thread"] for l in want["loops"]],
                                                  "the TaskGroup awaits %d children" % len(groups[0]["awaiting"])
                                                  if groups else "no TaskGroup before 3.11")


def main():
    tap = pt.TAP()
    for name in interpreters.names():
        for scenario, fn in (("aio_tasks", check), ("aio_groups", check_groups),
                             ("aio_groups os.abort()", lambda t, w: check_groups(t, w, abort=True))):
            label = "%s %s" % (name, scenario)
            target, why = interpreters.find(name)
            if why:
                tap.skip(label, why)
                continue
            minor = target.minor()
            if not FIRST_MINOR <= minor <= LAST_MINOR:
                tap.skip(label, "pycore reads asyncio tasks of 3.%d to 3.%d, this is 3.%d"
                         % (FIRST_MINOR, LAST_MINOR, minor))
                continue
            work = target.workdir("pycore-asyncio-%s-" % name)
            pt.run_in(tap, label, work, fn, target, work)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
