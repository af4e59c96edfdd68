"""Lock waits and deadlocks from real cores, on every interpreter present from
3.8 (src/tests/e2e/interpreters/*.interp).

The lock_waits scenario blocks threads on RLocks (two of them in a deadlock),
a queue.Queue, an Event, a Condition, a Semaphore, a _thread.lock, the
pure-Python RLock, a SimpleQueue and a Thread.join, and records what the
process itself says of each (the object's type, id and repr, an RLock's
owner and count, the thread joined) before gcore (or, in a root file
system, the kernel) takes the core; a second run ends in os.abort() from
the main thread, and the kernel's core must say the same of the other
threads.  pycore's JSON must name the same
object for every blocked thread with the same owner and count, its repr
where it gives one (always for a C RLock), null for the sleeping thread,
and summary.deadlock the two threads of the cycle; the text must show a
"waiting for" line under each blocked thread and a Deadlock line.

Prints TAP lines (ok N - ..., not ok N - ..., ok N - ... # SKIP why);
exit 0 pass, 1 fail, 77 when nothing ran."""
import sys

FIRST_MINOR = 8


import pycoretest as pt
from pycoretest import interpreters


def compare_waits(want, report):
    threads = dict((t["tid"], t) for i in report["interpreters"] for t in i["threads"])
    for tid, w in want["waits"].items():
        t = threads.get(int(tid))
        if t is None:
            raise pt.Failure("thread %s is not in the report" % tid)
        g = t["waiting_on"]
        label = "thread %s (%s)" % (tid, t["name"])
        if g is None:
            raise pt.Failure("%s: waiting_on null, the process waits on %s" % (label, w["repr"]))
        for k in ("type", "address", "owner", "count"):
            if g[k] != w[k]:
                raise pt.Failure("%s: %s %r, the process says %r" % (label, k, g[k], w[k]))
        if g["repr"] is not None and g["repr"] != w["repr"]:
            raise pt.Failure("%s: repr %r, the process says %r" % (label, g["repr"], w["repr"]))
        if g["repr"] is None and w["type"] == "_thread.RLock":
            raise pt.Failure("%s: no repr of an RLock (the process says %r)" % (label, w["repr"]))
    for tid in want["none"]:
        t = threads[tid]
        if t["waiting_on"] is not None:
            raise pt.Failure("thread %s (%s) waits on nothing, pycore says %s" % (tid, t["name"], t["waiting_on"]))
    got = report["summary"]["deadlock"]
    if sorted(got or []) != want["deadlock"]:
        raise pt.Failure("summary.deadlock %s, the process's waits make %s" % (got, want["deadlock"]))
    return len(want["waits"])


def check_text(target, core, want, report):
    rc, out, err = pt.run_pycore(["analyze"] + target.pycore_args() + [core])
    if rc != 0:
        raise pt.Failure("text: exit %d: %s" % (rc, err.strip()))
    names = dict((t["tid"], t["name"]) for i in report["interpreters"] for t in i["threads"])
    for tid, w in want["waits"].items():
        line = "waiting for <%s object at %s" % (w["type"], w["address"])
        if w["owner"] is not None and w["count"]:
            line += ' owned by thread %d "%s" (%d level%s)>' % (w["owner"], names[w["owner"]], w["count"],
                                                             "" if w["count"] == 1 else "s")
        if line not in out:
            raise pt.Failure("text: no line %r" % line)
    dl = [l for l in out.splitlines() if l.startswith("Deadlock: ")]
    if len(dl) != 1 or not all('thread %d "%s"' % (tid, names[tid]) in dl[0] for tid in want["deadlock"]):
        raise pt.Failure("text: deadlock lines %s, the process's waits make %s" % (dl, want["deadlock"]))


def check(target, work, abort):
    core, report, want = pt.take_and_read(target, "lock_waits", work, abort, ".waits")
    n = compare_waits(want, report)
    check_text(target, core, want, report)
    return "%d threads' waits, deadlock of threads %s" % (n, want["deadlock"])


def main():
    tap = pt.TAP()
    for name in interpreters.names():
        for abort in (False, True):
            label = "%s lock_waits%s" % (name, " os.abort()" if abort else "")
            target, why = interpreters.find(name)
            if why:
                tap.skip(label, why)
                continue
            if target.minor() < FIRST_MINOR:
                tap.skip(label, "pycore reads lock waits from 3.%d, this is 3.%d" % (FIRST_MINOR, target.minor()))
                continue
            work = target.workdir("pycore-locks-%s-" % name)
            pt.run_in(tap, label, work, check, target, work, abort)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
