"""pycore heap: the census of a dump's or a live process's heap (issue 46).

scenarios/heap.py builds a heap of known shapes on each build the suite
runs (pycoretest.interpreters.names(): 3.6 to 3.13, Debian's 3.11 and its
-dbg build, the Debian unstable root's 3.13 to 3.15), stops the GC, and
writes its own census (the truth): gc.get_objects() by type with
sys.getsizeof, the class that defines each type's __sizeof__, and
gc.get_freeze_count().  Then, each a case:

  NAME core  `pycore heap --format json` of a snapshot of it (gcore; a
             process in a root: the kernel's core of SIGQUIT)
  NAME live  `pycore heap --format json --pid` of it running

  NAME diff  `pycore heap --diff` of two gcores of it, the second after it
             leaked 20000 LeakItem objects into a module-level list (on
             SIGUSR1) and took its census again

must give, for every type, the count of the truth (pycore's count less
those in the permanent generation, which gc.get_objects() leaves out),
and for every type whose __sizeof__ pycore computes (exact) the bytes of
the truth; for every type the class that defines __sizeof__ the truth
names; the permanent generation's size gc.get_freeze_count(); nothing
unread.  A type pycore marks inexact is one whose __sizeof__ it does not
compute (the truth's owner is then no class pycore knows), and the report
is not exact.  The text census of the live read names the biggest type
and the scenario's own classes.  The diff must give every type's change
as the two censuses give it, LeakItem first, and the list among the
objects that grew in place; dumps of two processes are refused (exit 4).

The sanitizer pass runs the builds among pycoretest.interpreters'
SANITIZER_PASS_NAMES only.  Output is TAP (pycoretest.tap)."""
import json
import os
import signal
import subprocess
import sys

import pycoretest as pt
from pycoretest import interpreters
from pycoretest import native as gdb_native
from pycoretest.cores import take_snapshot, wait_ready
from pycoretest.env import scaled
from pycoretest.schema import load_report

# the __sizeof__ pycore computes, by the class that defines it
KNOWN = {"object", "list", "dict", "set", "frozenset", "bytearray", "type", "module"}


def compare(report, truth):
    """What the census of REPORT gets wrong against TRUTH; a summary."""
    h = report["heap"]
    if h is None:
        raise pt.Failure("no heap in the report")
    if h["unread"]:
        raise pt.Failure("unread: %s" % "; ".join(h["unread"]))
    want = {(m, q): (n, b, owner) for m, q, n, b, owner in truth["types"]}
    got = {(t["module"], t["qualname"]): t for t in h["types"]}
    errors = []
    exact_types = inexact_types = 0
    for k in sorted(set(want) | set(got), key=str):
        n, b, owner = want.get(k, (0, 0, None))
        t = got.get(k)
        if t is None:
            errors.append("%s.%s: %d in the truth, none counted" % (k[0], k[1], n))
            continue
        if t["count"] - t["permanent"] != n:
            errors.append("%s.%s: %d counted (%d permanent), the truth %d" % (k[0], k[1], t["count"],
                                                                             t["permanent"], n))
        if owner is not None and t["sizeof_owner"] != owner:
            errors.append("%s.%s: __sizeof__ of %s, the truth %s" % (k[0], k[1], t["sizeof_owner"], owner))
        if t["exact"]:
            exact_types += 1
            if t["bytes"] - t["permanent_bytes"] != b and n:
                errors.append("%s.%s: %d bytes, the truth %d" % (k[0], k[1], t["bytes"] - t["permanent_bytes"], b))
            if owner is not None and owner not in KNOWN:
                errors.append("%s.%s: exact, but its __sizeof__ is %s's" % (k[0], k[1], owner))
        else:
            inexact_types += 1
            if owner in KNOWN:
                errors.append("%s.%s: inexact, but its __sizeof__ is %s's" % (k[0], k[1], owner))
    if h["permanent"] != truth["frozen"]:
        errors.append("permanent generation: %d, gc.get_freeze_count() %d" % (h["permanent"], truth["frozen"]))
    if h["exact"] != (inexact_types == 0):
        errors.append("exact is %s with %d inexact types" % (h["exact"], inexact_types))
    if errors:
        raise pt.Failure("; ".join(errors[:12]) + ("; and %d more" % (len(errors) - 12) if len(errors) > 12 else ""))
    objects = sum(n for n, _, _ in want.values())
    return "%d objects of %d types as the process counts them; bytes of %d types exact, %d inexact" % (
        objects, len(want), exact_types, inexact_types)


def heap_json(args):
    rc, out, err = pt.run_pycore(["heap", "--format", "json"] + args)
    if rc not in (0, 1) or not out.strip():
        raise pt.Failure("pycore heap: exit %d: %s" % (rc, err.strip()[-300:]))
    return load_report(out)


def check_core(target, work):
    core, truth_path, _ = take_snapshot(target, "heap", work)
    with open(truth_path) as f:
        truth = json.load(f)
    report = heap_json(target.pycore_args() + gdb_native.debug_args(target) + [core])
    return compare(report, truth)


def check_live(target, work):
    truth_path = os.path.join(work, "truth.json")
    proc = target.popen([target.scenario(work, "heap.py"), target.inside(truth_path)], work,
                        stdout=subprocess.PIPE)
    try:
        if not wait_ready(proc):
            raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        with open(truth_path) as f:
            truth = json.load(f)
        report = heap_json(gdb_native.debug_args(target) + target.pycore_args() + ["--pid", str(proc.pid)])
        rc, text, err = pt.run_pycore(["heap", "--top", "100"] + gdb_native.debug_args(target) + target.pycore_args() +
                                      ["--pid", str(proc.pid)])
    finally:
        proc.kill()
        proc.wait(timeout=scaled(30))
    summary = compare(report, truth)
    top = report["heap"]["types"][0]
    for want in ("Heap of pid %d" % proc.pid, "Objects on the GC's lists: %d" % report["heap"]["objects"],
                 "%12d %13d" % (top["count"], top["bytes"]), "__main__.Slotted", "__main__.Sized"):
        if want not in text:
            raise pt.Failure("the text census has no %r (exit %d): %s" % (want, rc, text[:600]))
    return summary


def gcore(proc, work, name):
    """gcore's core of the running PROC (also of a process in a root: the
    census reads its heap, not its threads' stacks, which gcore from outside
    a root leaves out)."""
    g = subprocess.run(["gcore", "-o", os.path.join(work, name), str(proc.pid)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=scaled(120))
    core = os.path.join(work, "%s.%d" % (name, proc.pid))
    if g.returncode != 0 or not os.path.exists(core):
        raise pt.Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-300:])
    return core


def check_diff(target, work):
    """`heap --diff` of two gcores of a process that leaked between them:
    every type's change as the process's two censuses say, LeakItem first,
    the list that holds them grown in place."""
    truth_path = os.path.join(work, "truth.json")
    proc = target.popen([target.scenario(work, "heap.py"), target.inside(truth_path), "leak"], work,
                        stdout=subprocess.PIPE)
    try:
        if not wait_ready(proc):
            raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        old = gcore(proc, work, "old")
        proc.send_signal(signal.SIGUSR1)
        if not wait_ready(proc):
            raise pt.Failure("the scenario did not leak (exit %s)" % proc.poll())
        new = gcore(proc, work, "new")
    finally:
        proc.kill()
        proc.wait(timeout=scaled(30))
    with open(truth_path) as f:
        t1 = json.load(f)
    with open(truth_path + ".2") as f:
        t2 = json.load(f)
    report = heap_json(target.pycore_args() + gdb_native.debug_args(target) + ["--diff", old, new])
    d = report["heap"]["diff"]
    if d is None:
        raise pt.Failure("no diff in the report")
    before = {(m, q): (n, b) for m, q, n, b, _ in t1["types"]}
    after = {(m, q): (n, b) for m, q, n, b, _ in t2["types"]}
    exact = {(t["module"], t["qualname"]) for t in report["heap"]["types"] if t["exact"]}
    got = {(t["module"], t["qualname"]): t for t in d["types"]}
    errors = []
    for k in set(before) | set(after):
        n0, b0 = before.get(k, (0, 0))
        n1, b1 = after.get(k, (0, 0))
        t = got.get(k)
        dn, db = (t["count_new"] - t["count_old"], t["bytes_new"] - t["bytes_old"]) if t else (0, 0)
        if dn != n1 - n0 or (k in exact and db != b1 - b0):
            errors.append("%s.%s: %+d objects, %+d bytes; the process %+d, %+d" % (k[0], k[1], dn, db, n1 - n0,
                                                                                 b1 - b0))
    first = d["types"][0] if d["types"] else None
    if not first or (first["module"], first["qualname"]) != ("__main__", "LeakItem"):
        errors.append("the first type is %s, not __main__.LeakItem" % (first and first["qualname"]))
    leaked = "0x%x" % t1["leaked"]
    grown = [g for g in d["grown"] if g["address"] == leaked]
    if not grown or grown[0]["qualname"] != "list" or not grown[0]["bytes"] > grown[0]["bytes_old"]:
        errors.append("LEAKED (%s) is not among the objects that grew in place: %s" % (leaked, d["grown"][:3]))
    rc, text, err = pt.run_pycore(["heap"] + target.pycore_args() + gdb_native.debug_args(target) +
                                  ["--diff", old, new])
    if "__main__.LeakItem (1000 to 21000)" not in text or ("%s list:" % leaked) not in text:
        errors.append("the text (exit %d) has no LeakItem line or no grown LEAKED: %s" % (rc, text[:500]))
    if errors:
        raise pt.Failure("; ".join(errors[:10]))
    return "LeakItem first: %+d objects, %+d bytes; %d types changed as the process says; LEAKED grew %d to %d" % (
        first["count_new"] - first["count_old"], first["bytes_new"] - first["bytes_old"], len(d["types"]),
        grown[0]["bytes_old"], grown[0]["bytes"])


def check_diff_refused(target, work):
    """Dumps of two processes: refused in one line, exit 4."""
    cores = []
    for name in ("one", "two"):
        truth_path = os.path.join(work, "truth-%s.json" % name)
        proc = target.popen([target.scenario(work, "heap.py"), target.inside(truth_path)], work,
                            stdout=subprocess.PIPE)
        try:
            if not wait_ready(proc):
                raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
            cores.append(gcore(proc, work, name))
        finally:
            proc.kill()
            proc.wait(timeout=scaled(30))
    rc, out, err = pt.run_pycore(["heap", "--diff"] + cores)
    if rc != 4 or len(err.strip().splitlines()) != 1 or "one process" not in err or out:
        raise pt.Failure("exit %d, stderr %r, stdout %d bytes" % (rc, err, len(out)))
    return err.strip()


def main():
    tap = pt.TAP()
    for name in interpreters.names():
        for case, fn in (("core", check_core), ("live", check_live), ("diff", check_diff)):
            pt.run_on(tap, name, case, fn)
    pt.run_on(tap, "py3.12", "diff refused", check_diff_refused)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
