"""pycore analyze --pid --samples: hung processes read over time (issue 48).

Each scenario of scenarios/hang.py is started here on each build of
BUILDS (a 3.8-3.11 build, Debian's 3.11, 3.12, 3.13, the Debian unstable
root's 3.14; a free-threaded build where one is installed), and its
threads write their own OS ids and what each does (the truth) before the
process prints READY:

  waits  two threads deadlocked on two RLocks (deadlocked), a queue's
         consumer (waiting) whose producer sleeps (blocked), a reader of a
         socket that never sends (blocked), the main thread asleep
  busy   a loop on one line of Python (busy-python)
  turns  three functions called in turn (busy-python)
  gil    a regular expression that backtracks without end, one C call that
         keeps the GIL (busy-c-gil), and a thread that wants the GIL to run
         Python (blocked; with --native, in take_gil: waiting, on the GIL
         held by the regex's thread)

`pycore analyze --format json --pid --samples 6 --interval 0.15` must give
every thread the state its role names (samples.threads[].state), the
process the kind its worst thread makes (deadlock, busy, gil-held), and
the findings: a deadlock in every sample (waits), the GIL held by the
regex's thread in all samples (gil), while one thread waits for it
(gil --native).  The text report of waits has its
Samples section; --format collapsed gives folded stacks whose counts add
up to the threads read over the samples.  A process that exits, or runs
another program (exec), during the samples gives the samples taken and
says so (samples.ended, a warning).
Two gcores of a scenario compared as samples (--compare) are not built
yet: a skip by name.

Output is TAP (pycoretest.tap)."""
import json
import os
import re
import subprocess
import sys
import time

import pycoretest as pt
from pycoretest import interpreters
from pycoretest import native as gdb_native
from pycoretest.env import scaled
from pycoretest.schema import load_report

BUILDS = ("py3.8", "debian3.11", "py3.12", "py3.13", "sid3.14")
SCENARIOS = {"waits": "deadlock", "busy": "busy", "turns": "busy", "gil": "gil-held", "gil --native": "gil-held"}
# with --native, a thread in take_gil waits for the GIL, its holder named
NATIVE_ROLES = {"wants-gil": "waiting"}
SAMPLES = ["--samples", "6", "--interval", "0.15"]


def start(target, work, scenario):
    """The scenario's process and its truth, once it is READY."""
    truth = os.path.join(work, "truth-%s.json" % scenario)
    proc = target.popen([target.scenario(work, "hang.py"), target.inside(truth), scenario], work,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline().decode(errors="replace").strip()
    if line != "READY":
        proc.kill()
        err = proc.communicate()[1].decode(errors="replace")
        raise pt.Failure("the scenario did not start: %r %s" % (line, err.strip()[-300:]))
    with open(truth) as f:
        return proc, json.load(f)


def stop(proc):
    proc.kill()
    proc.wait()


def sampled(pid, args):
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--pid"] + SAMPLES + args + [str(pid)])
    if rc != 0:
        raise pt.Failure("pycore analyze --samples: exit %d: %s" % (rc, err.strip()[-300:]))
    return load_report(out)


def check_scenario(target, work, label):
    scenario, args = label.split()[0], label.split()[1:]
    proc, truth = start(target, work, scenario)
    try:
        time.sleep(0.5 if scenario == "gil" else 0.1)   # the regex started after READY
        # (--native: the root's debug files, where a root has them)
        report = sampled(truth["pid"], args + (gdb_native.debug_args(target) if args else []))
    finally:
        stop(proc)
    if args:
        for tid, name in truth["names"].items():
            truth["roles"][tid] = NATIVE_ROLES.get(name, truth["roles"][tid])
    s = report["samples"]
    if s is None:
        raise pt.Failure("no samples in the report")
    if s["taken"] != 6 or s["asked"] != 6 or s["ended"] is not None:
        raise pt.Failure("taken %s of %s, ended %r" % (s["taken"], s["asked"], s["ended"]))
    got = {t["tid"]: t for t in s["threads"]}
    problems = []
    for tid, role in sorted(truth["roles"].items()):
        t = got.get(int(tid))
        name = truth["names"].get(tid, "MainThread")
        if t is None:
            problems.append("thread %s (%s) is not among the samples' threads" % (tid, name))
        elif t["name"] != name:
            problems.append("thread %s named %r, the process names it %r" % (tid, t["name"], name))
        elif t["state"] != role:
            problems.append("thread %s (%s): %s, the process says %s (%s)" % (tid, name, t["state"], role,
                                                                              t["evidence"]))
        elif t["present"] != 6:
            problems.append("thread %s (%s) in %d of 6 samples" % (tid, name, t["present"]))
    if s["kind"] != SCENARIOS[label]:
        problems.append("kind %s, the scenario's is %s" % (s["kind"], SCENARIOS[label]))
    findings = " | ".join(s["findings"])
    if scenario == "waits" and "a deadlock in every sample" not in findings:
        problems.append("no deadlock finding: %s" % findings)
    if scenario == "gil":
        regex = [tid for tid, role in truth["roles"].items() if role == "busy-c-gil"][0]
        if "the GIL held by thread %s" % regex not in findings:
            problems.append("no finding of the GIL held by thread %s: %s" % (regex, findings))
        if args and "while 1 thread waited for it" not in findings:
            problems.append("no finding of the thread that waits for the GIL: %s" % findings)
        wants = [t for t in s["threads"] if t["name"] == "wants-gil"]
        if args and wants and "held by thread %s" % regex not in wants[0]["evidence"]:
            problems.append("wants-gil's wait does not name the GIL's holder: %s" % wants[0]["evidence"])
    if problems:
        raise pt.Failure("\n".join(problems))
    return "%d threads as the process says; kind %s; %s" % (len(truth["roles"]), s["kind"], findings or "no finding")


def check_text_and_folded(target, work):
    proc, truth = start(target, work, "waits")
    try:
        rc, text, err = pt.run_pycore(["analyze", "--pid"] + SAMPLES + [str(truth["pid"])])
        rc2, folded, err2 = pt.run_pycore(["analyze", "--format", "collapsed", "--pid"] + SAMPLES +
                                          [str(truth["pid"])])
    finally:
        stop(proc)
    if rc != 0 or rc2 != 0:
        raise pt.Failure("exit %d / %d: %s %s" % (rc, rc2, err.strip()[-200:], err2.strip()[-200:]))
    for want in ("Samples: 6 of 6", "Finding: a deadlock in every sample", ": deadlocked: "):
        if want not in text:
            raise pt.Failure("the text has no %r" % want)
    total = 0
    for line in folded.splitlines():
        m = re.match(r"^(.+) (\d+)$", line)
        if not m:
            raise pt.Failure("a folded line without a count: %r" % line)
        total += int(m.group(2))
    want = 6 * len(truth["roles"])
    if total != want:
        raise pt.Failure("folded counts add up to %d, 6 samples of %d threads are %d" % (total, len(truth["roles"]),
                                                                                         want))
    return "text sections; %d folded lines adding up to %d" % (len(folded.splitlines()), total)


def check_exit(target, work):
    """A process that exits during the samples: those taken, and why."""
    proc = target.popen(["-c", "import time; print('READY', flush=True); time.sleep(0.6)"], work,
                        stdout=subprocess.PIPE)
    try:
        proc.stdout.readline()
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--pid", "--samples", "20", "--interval",
                                      "0.1", str(proc.pid)])
    finally:
        proc.wait(timeout=scaled(30))
    if rc not in (0, 1) or not out.strip():
        raise pt.Failure("exit %d: %s" % (rc, err.strip()[-300:]))
    s = load_report(out)["samples"]
    if not (1 <= s["taken"] < 20) or not s["ended"] or "exited" not in s["ended"]:
        raise pt.Failure("taken %s of 20, ended %r" % (s["taken"], s["ended"]))
    return "%d of 20 taken: %s" % (s["taken"], s["ended"])


def check_exec(target, work):
    """A process that runs another program during the samples (exec): the
    samples of the first, and why they ended."""
    code = ("import os, sys, time; print('READY', flush=True); time.sleep(0.5); "
            "os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(2)'])")
    proc = target.popen(["-c", code], work, stdout=subprocess.PIPE)
    try:
        proc.stdout.readline()
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--pid", "--samples", "20", "--interval",
                                      "0.1", str(proc.pid)])
    finally:
        proc.wait(timeout=scaled(30))
    if rc not in (0, 1) or not out.strip():
        raise pt.Failure("exit %d: %s" % (rc, err.strip()[-300:]))
    s = load_report(out)["samples"]
    # (a read that lands inside the exec itself ends the samples with its
    # error instead: those taken are still the first program's)
    if not (1 <= s["taken"] < 20) or not s["ended"]:
        raise pt.Failure("taken %s of 20, ended %r" % (s["taken"], s["ended"]))
    return "%d of 20 taken: %s" % (s["taken"], s["ended"])


def main():
    tap = pt.TAP()
    for name in BUILDS:
        target, why = interpreters.find(name)
        for scenario in list(SCENARIOS) + ["text", "exit", "exec"]:
            label = "%s %s" % (name, scenario)
            if why:
                tap.skip(label, why)
                continue
            work = target.workdir("pycore-hang-%s-" % name)
            if scenario == "text":
                pt.run_in(tap, label, work, check_text_and_folded, target, work)
            elif scenario == "exit":
                pt.run_in(tap, label, work, check_exit, target, work)
            elif scenario == "exec":
                pt.run_in(tap, label, work, check_exec, target, work)
            else:
                pt.run_in(tap, label, work, check_scenario, target, work, scenario)
    for scenario in SCENARIOS:
        tap.skip("free-threaded %s" % scenario, "no free-threaded CPython is built here")
        tap.skip("compare %s" % scenario, "--compare (cores taken apart, read as samples) is not built yet")
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
