"""Greenlet 3 on the Debian unstable root's Pythons (and greenlet 2 on the
host's Debian 3.11), every greenlet against what the process says (#27).

The scenario greenlets.py (plain: greenlets suspended in a switch three
calls deep, in a generator, in a subclass's run, in an except block, one
started by another, one never started, one finished, on two OS threads;
gevent: gevent's hub and greenlets blocked in a lock's acquire,
Event.wait, a socket's recv and sleep) writes, from each thread, every
greenlet of its own with its address, type, parent, state, run target
and stack (gr_frame through f_back), then holds its main greenlet in a
sleep.  The core: gcore's on this machine, the kernel's (SIGQUIT) for a
process in the root (cores.take_snapshot says why).  pycore must report
the greenlet version the process imported and, under each OS thread,
exactly its greenlets: type, main, parent, state, run target (plain), the
suspended ones' stacks frame by frame; the running main greenlet's stack
the thread's own; text ("Greenlets of thread N") and --format collapsed
(a line per suspended greenlet: its stack) too.  And a version pycore
has no layout of (the process sets greenlet.__version__ to 0.0.1): a
warning "greenlet 0.0.1 layout unknown", no greenlet, exit 1 (the report
is incomplete: the greenlets exist).  A Python without
greenlet (or gevent) is a skip by name; python3-greenlet and
python3-gevent are installed in the root by scripts/sid-root.

Prints TAP; exit 0 pass, 1 fail."""
import subprocess
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
import pycoretest as cs  # noqa: E402

# (interpreter, mode): sid's greenlet 3.3.2 is built for 3.14 and 3.15,
# its gevent 25.9 for 3.14 only; Debian 12's greenlet 2.0.2 for 3.11
CASES = (("sid3.14", "gevent"), ("sid3.14", "plain"), ("sid3.15", "plain"), ("debian3.11", "plain"),
         ("debian3.11", "unknown"))


def importable(target, modules):
    p = target.popen(["-c", "import " + ", ".join(modules)], target.root or "/",
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.wait() == 0


def frames_of(stack):
    return [(f["function"], f["file"], f["line"]) for f in stack if f["kind"] == "python"]


def want_of(stack):
    return [(f["function"], f["file"], f["line"]) for f in stack]


def unknown(truth, rc, out, err):
    """A greenlet version pycore has no layout of: said, nothing guessed,
    and the report is incomplete (exit 1): the greenlets exist."""
    if rc != 1:
        raise cs.Failure("pycore exit %d, not 1 (incomplete): %s" % (rc, err.strip()))
    report = cs.load_report(out)
    (interp,) = report["interpreters"]
    want = "greenlet %s layout unknown on Python 3." % truth["greenlet"]
    said = [w for w in report["warnings"] if want in str(w)]
    if not said:
        raise cs.Failure("no warning %r: %s" % (want, report["warnings"]))
    listed = interp["greenlets"] + [g for t in interp["threads"] for g in t["greenlets"]]
    if listed or interp["greenlet_version"] is not None:
        raise cs.Failure("greenlet %s: %d greenlets reported, version %r" % (truth["greenlet"], len(listed),
                                                                           interp["greenlet_version"]))
    return "exit %d, %r, no greenlet reported" % (rc, str(said[0])[:90])


def check(target, mode, work):
    core, truth_path, _ = cs.take_snapshot(target, "greenlets", work, args=[mode])
    truth = json.load(open(truth_path))
    rc, out, err = cs.run_pycore(["analyze", "--format", "json"] + target.pycore_args() + [core])
    if mode == "unknown":
        return unknown(truth, rc, out, err)
    if rc != 0:
        raise cs.Failure("pycore exit %d: %s" % (rc, err.strip()))
    report = cs.load_report(out)
    (interp,) = report["interpreters"]
    gl_warnings = [w for w in report.get("warnings", []) if "greenlet" in str(w)]
    if gl_warnings:
        raise cs.Failure("warnings on greenlets: %s" % gl_warnings)
    if interp["greenlet_version"] != truth["greenlet"]:
        raise cs.Failure("greenlet_version %r, the process imported %r" % (interp["greenlet_version"],
                                                                          truth["greenlet"]))
    if interp["greenlets"]:
        raise cs.Failure("greenlets of no thread: %s" % [g["address"] for g in interp["greenlets"]])
    threads = dict((t["tid"], t) for t in interp["threads"])
    count = 0
    collapsed = None
    for tt in truth["threads"]:
        t = threads.get(tt["tid"])
        if t is None:
            raise cs.Failure("thread %d is not reported (threads %s)" % (tt["tid"], sorted(threads)))
        got = dict((g["address"], g) for g in t["greenlets"])
        want = dict((w["address"], w) for w in tt["greenlets"])
        if sorted(got) != sorted(want):
            raise cs.Failure("thread %d: greenlets %s, the process has %s" % (tt["tid"], sorted(got), sorted(want)))
        for a, w in want.items():
            g = got[a]
            label = "thread %d greenlet %s (%s)" % (tt["tid"], a, w["type"])
            for key in ("type", "main", "parent", "state"):
                if g[key] != w[key]:
                    raise cs.Failure("%s: %s %r, the process says %r" % (label, key, g[key], w[key]))
            if mode == "plain" and w["state"] in ("suspended", "not started") and g["run"] != w["run"]:
                raise cs.Failure("%s: run %r, the process says %r" % (label, g["run"], w["run"]))
            if w["state"] == "suspended" and frames_of(g["stack"]) != want_of(w["stack"]):
                raise cs.Failure("%s: stack %s, the process says %s" % (label, frames_of(g["stack"]),
                                                                       want_of(w["stack"])))
            if w["state"] == "running" and (not frames_of(t["frames"]) or frames_of(t["frames"])[0][0] != "hold"):
                raise cs.Failure("%s runs, but its thread's stack is %s, not in hold()" % (label, frames_of(t["frames"])))
            if g["hub"] != (w["type"] == "gevent.hub.Hub"):
                raise cs.Failure("%s: hub %s" % (label, g["hub"]))
            count += 1
        text = None
        for fmt in ("text", "collapsed"):
            rc, out, err = cs.run_pycore(["analyze", "--format", fmt] + target.pycore_args() + [core])
            if rc != 0:
                raise cs.Failure("pycore --format %s: exit %d: %s" % (fmt, rc, err.strip()))
            if fmt == "text":
                text = out
            else:
                collapsed = out.splitlines()
        if "Greenlets of thread %d" % tt["tid"] not in text:
            raise cs.Failure("text: no \"Greenlets of thread %d\"" % tt["tid"])
        for w in tt["greenlets"]:
            if w["state"] != "suspended":
                continue
            if "Greenlet %s" % w["address"] not in text and w["address"] not in text:
                raise cs.Failure("text: greenlet %s not named" % w["address"])
            line = ";".join("%s (%s:%d)" % (f["function"], f["file"], f["line"]) for f in reversed(w["stack"]))
            if not any(l.rsplit(" ", 1)[0] == line for l in collapsed):
                raise cs.Failure("collapsed: no line %r" % line)
    if mode == "gevent":
        blocked = set(f["function"] for tt in truth["threads"] for w in tt["greenlets"] for f in w["stack"])
        need = {"block_lock", "block_event", "block_recv", "block_sleep"}
        if not need <= blocked:
            raise cs.Failure("the process blocked only %s of %s" % (sorted(blocked & need), sorted(need)))
    return "greenlet %s: %d greenlets on %d thread(s), each as the process says" % (
        truth["greenlet"], count, len(truth["threads"]))


def main():
    tap = cs.TAP()
    for name, mode in CASES:
        label = "%s %s greenlets" % (name, mode)
        path = os.path.join(HERE, "interpreters", name + ".interp")
        target, why = cs.interpreter(path)
        if why:
            tap.skip(label, why)
            continue
        modules = ["greenlet", "gevent"] if mode == "gevent" else ["greenlet"]
        if not importable(target, modules):
            tap.skip(label, "%s cannot import %s (Debian's python3-%s)" % (name, " or ".join(modules),
                                                                          modules[-1]))
            continue
        work = target.workdir("pycore-greenlets-%s-%s-" % (name, mode))
        cs.run_in(tap, label, work, check, target, mode, work)
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
