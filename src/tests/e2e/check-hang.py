"""pycore analyze --pid --samples: hung processes read over time (issue 48).

Each scenario of scenarios/hang.py is started here on each build of
BUILDS (a 3.8-3.11 build, Debian's 3.11, 3.12, 3.13, the Debian unstable
root's 3.14, a free-threaded 3.13 of scripts/freethreaded-python: a skip by
name until it is built), and its
threads write their own OS ids and what each does (the truth) before the
process prints READY:

  waits  two threads deadlocked on two RLocks (deadlocked), a queue's
         consumer (waiting) whose producer sleeps (blocked), a reader of a
         socket that never sends (blocked), the main thread asleep
  busy   a loop on one line of Python (busy-python)
  turns  three functions called in turn (busy-python)
  livelock  two threads taking one lock each and trying the other's
         without waiting, forever (busy-python or spinning)
  stream a socket's reader and writer, all the time (spinning or moving)
  aio    an event loop whose running task calls time.sleep (blocked; the
         finding names the loop's thread, the task and the line)
  convoy four threads taking one RLock in turn, 50 ms each (the finding:
         a lock convoy; each thread's state is chance)
  gil    a regular expression that backtracks without end, one C call that
         keeps the GIL (busy-c-gil), and a thread that wants the GIL to run
         Python (blocked; with --native, in take_gil: waiting, on the GIL
         held by the regex's thread)

`pycore analyze --format json --pid --samples 6 --interval 0.15` must give
every thread the state its role names (samples.threads[].state), the
process the kind its worst thread makes (deadlock, busy, gil-held), and
the findings: a deadlock in every sample (waits), the GIL held by the
regex's thread in all samples (gil), while one thread waits for it
(gil --native).  On the free-threaded build (no GIL) the process says
what each thread does knowing it has none: the regex's thread runs in one
C call (busy-c with --native: running, by its CPU time, in the same C
call in every sample; spinning without), the other runs its Python, and
no finding speaks of a GIL.  The text report of waits has its
Samples section; --format collapsed gives folded stacks whose counts add
up to the threads read over the samples, and that a flame-graph tool,
speedscope (scripts/speedscope installs it from npm), loads in Chromium
as the same stacks and weights (on py3.12).  A process that exits, or runs
another program (exec), during the samples gives the samples taken and
says so (samples.ended, a warning); a thread started half-way is classed
on the samples it is in, and says so.
Three gcores of waits, busy and gil, 0.2 s apart, read with --compare
--native give every thread the state the process says, and the same as the live
samples of that process, on the builds among
pycoretest.interpreters.feature_names() (reading dumps as samples is the
same code whatever the interpreter; sid's root: a skip, gcore from outside
it leaves its thread stacks out), and on the free-threaded build (where a
dump says whether a thread runs by its registers: inside a system call or
not); two processes' dumps are refused in one line, exit 4.  On 3.9 and older, which record no
instruction a loop on one line moves, and without --native anywhere, a
thread whose stack and instruction stay with the GIL held is "stuck", its
evidence saying that --native tells: the process's busy-c-gil and
busy-python then accept it; on the free-threaded build such a thread,
running, is "spinning", its evidence saying the same (a one-line loop that
every sample catches at one instruction): busy-python accepts it.

The sanitizer pass runs the builds among pycoretest.interpreters'
SANITIZER_PASS_NAMES only.

Output is TAP (pycoretest.tap)."""
import json
import os
import re
import subprocess
import sys
import time

import pycoretest as pt
from pycoretest import flamegraph, htmlpage
from pycoretest import interpreters
from pycoretest import native as gdb_native
from pycoretest.env import scaled
from pycoretest.schema import load_report

BUILDS = ("py3.8", "debian3.11", "py3.12", "py3.13", "sid3.14", "ft3.13")
SCENARIOS = {"waits": "deadlock", "busy": "busy", "turns": "busy", "gil": "gil-held", "gil --native": "gil-held",
             "livelock": "busy|spinning", "stream": "spinning|busy", "aio": "blocked",
             "convoy": "busy|waiting|blocked|stuck|spinning"}
# a free-threaded build's (no GIL: the regex runs in one C call, busy-c with
# --native, and the other thread runs its Python beside it)
NOGIL_KINDS = {"gil": "busy-c|busy|spinning", "gil --native": "busy-c|busy"}
# with --native, a thread in take_gil waits for the GIL, its holder named
NATIVE_ROLES = {"wants-gil": "waiting"}
# without native frames, a thread whose Python stack and instruction stay,
# the GIL held, may be either (3.9 and older record no instruction a loop
# on one line moves); pycore says stuck, and that --native tells
OLD_STUCK = ("busy-c-gil", "busy-python")
SAMPLES = ["--samples", "6", "--interval", "0.15"]
# the scenarios read from three gcores too (--compare)
COMPARED = ("waits", "busy", "gil")


def start(target, work, scenario):
    """The scenario's process and its truth, once it is READY."""
    truth = os.path.join(work, "truth-%s.json" % scenario)
    # (one malloc arena: a gcore of it is a few MB, not 64 MB a thread)
    env = dict(target.env if target.env is not None else os.environ, MALLOC_ARENA_MAX="1")
    proc = target.popen([target.scenario(work, "hang.py"), target.inside(truth), scenario], work,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
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
    if args and truth["gil"]:
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
        elif t["state"] not in role.split("|") and not (t["state"] == "stuck" and role in OLD_STUCK and
                                                        not args and "--native tells" in t["evidence"]) and \
                not (t["state"] == "spinning" and role == "busy-python" and not truth["gil"] and not args and
                     "--native tells" in t["evidence"]):
            problems.append("thread %s (%s): %s, the process says %s (%s)" % (tid, name, t["state"], role,
                                                                              t["evidence"]))
        elif t["present"] != 6:
            problems.append("thread %s (%s) in %d of 6 samples" % (tid, name, t["present"]))
    kinds = SCENARIOS[label] if truth["gil"] else NOGIL_KINDS.get(label, SCENARIOS[label])
    if s["kind"] not in kinds.split("|") and not (not args and s["kind"] == "stuck"):
        problems.append("kind %s, the scenario's is %s" % (s["kind"], kinds))
    findings = " | ".join(s["findings"])
    if scenario == "waits" and "a deadlock in every sample" not in findings:
        problems.append("no deadlock finding: %s" % findings)
    if scenario == "convoy" and not re.search(r"a lock convoy: [234] threads or more wait on the _thread\.RLock at "
                                              r"0x[0-9a-f]+ in every sample, while its owner changes", findings):
        problems.append("no lock convoy found: %s" % findings)
    if scenario == "aio":
        loop = [tid for tid, name in truth["names"].items() if name == "loop"][0]
        if not re.search(r"the event loop of thread %s is blocked in all 6 samples: task \"blocker\" at 0x[0-9a-f]+ "
                         r"makes a synchronous call at blocker \(.*hang.py:\d+\)" % loop, findings):
            problems.append("no finding of the blocked event loop, its task and line: %s" % findings)
    if scenario == "gil" and not truth["gil"]:
        if "GIL" in findings:
            problems.append("a finding of a GIL in a build without one: %s" % findings)
    elif scenario == "gil":
        regex = [tid for tid, name in truth["names"].items() if name == "regex"][0]
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


def check_compare(target, work, scenario):
    """Three gcores of the scenario, 0.2 s apart, read as samples with
    --compare --native: every thread's state as the process says, the same
    as the live samples of the same process give."""
    if target.root:
        raise pt.Skip("gcore run outside the root leaves the root's thread stacks out of its core (they read "
                      "as zeros): no gcore to compare")
    proc, truth = start(target, work, scenario)
    cores = []
    # --native: three reads are too few to tell a C call from a loop on
    # one line by the instruction alone
    native = ["--native"] + gdb_native.debug_args(target)
    for tid, name in truth["names"].items():
        if truth["gil"]:
            truth["roles"][tid] = NATIVE_ROLES.get(name, truth["roles"][tid])
    try:
        time.sleep(0.5 if scenario == "gil" else 0.1)
        live_report = sampled(truth["pid"], native)
        live = live_report["samples"]
        for k in range(3):
            prefix = os.path.join(work, "core%d" % k)
            g = subprocess.run(["gcore", "-o", prefix, str(truth["pid"])], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=scaled(120))
            if g.returncode != 0:
                raise pt.Failure("gcore: %s" % g.stdout.decode(errors="replace")[-300:])
            cores.append("%s.%d" % (prefix, truth["pid"]))
            time.sleep(0.2)
    finally:
        stop(proc)
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--compare"] + native + target.pycore_args() +
                                 cores)
    rc2, page, err2 = pt.run_pycore(["analyze", "--format", "html", "--compare"] + native + target.pycore_args() +
                                    cores)
    for core in cores:
        os.unlink(core)
    if rc2 != 0:
        raise pt.Failure("--compare --format html: exit %d: %s" % (rc2, err2.strip()[-300:]))
    if rc != 0:
        raise pt.Failure("--compare: exit %d: %s" % (rc, err.strip()[-300:]))
    report = load_report(out)
    s = report["samples"]
    problems = []
    # one hang, one fingerprint: its kind, the thread that makes it
    fp, live_fp = report["fingerprint"], live_report["fingerprint"]
    if fp["kind"] != "hang: " + s["kind"] or fp["hash"] != live_fp["hash"]:
        problems.append("fingerprint %s (%s) from the dumps, %s (%s) live" % (fp["hash"], fp["kind"], live_fp["hash"],
                                                                             live_fp["kind"]))
    if s["source"] != "dumps" or s["taken"] != 3 or s["ordered_by"] != "the files' modification times":
        problems.append("source %s, %s dumps, ordered by %s" % (s["source"], s["taken"], s["ordered_by"]))
    dumps = {t["tid"]: t["state"] for t in s["threads"]}
    reads = {t["tid"]: t["state"] for t in live["threads"]}
    minor = target.minor()
    for tid, role in sorted(truth["roles"].items()):
        ok = {role, "stuck"} if role in OLD_STUCK and minor <= 9 else set(role.split("|"))
        if dumps.get(int(tid)) not in ok or reads.get(int(tid)) not in ok:
            problems.append("thread %s (%s): %s from the dumps, %s live, the process says %s" % (
                tid, truth["names"].get(tid, "MainThread"), dumps.get(int(tid)), reads.get(int(tid)), role))
    if s["kind"] != live["kind"] and minor > 9:
        problems.append("kind %s from the dumps, %s live" % (s["kind"], live["kind"]))
    problems += page_problems(page, s, work, scenario)
    if problems:
        raise pt.Failure("\n".join(problems))
    return "3 gcores = the live samples = the process, the page's timeline = the JSON's: %s" % ", ".join(
        sorted(set(dumps.values())))


def page_rows(page):
    """The page's Samples table: {tid: (state, timeline)}."""
    rows = {}
    for tr in page.root.find("tr", "hang"):
        cells = {c.cls()[0]: c for c in tr.find("td") if c.cls()}
        tid = int(cells["tid"].text().split()[0])
        rows[tid] = (cells["state"].text(), cells["timeline"].text())
    return rows


def page_problems(text, samples, work, scenario):
    """The HTML page of the same samples: its markup the renderer's, and
    its Samples table the JSON's threads, as written and in Chromium."""
    want = {t["tid"]: (t["state"], t["timeline"]) for t in samples["threads"]}
    path = os.path.join(work, "samples-%s.html" % scenario)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    page = htmlpage.Page(text)
    htmlpage.check_markup(page, "the samples' page")
    problems = []
    if page_rows(page) != want:
        problems.append("the page's samples %s, the JSON's %s" % (page_rows(page), want))
    if problems:
        return problems
    browser = htmlpage.Browser(work)   # (no Chromium: the case is a skip saying so)
    try:
        dom, trouble, _ = browser.load(path)
    finally:
        browser.close()
    if trouble:
        problems.append("the samples' page in Chromium: %s" % trouble[:5])
    elif page_rows(htmlpage.Page(dom)) != want:
        problems.append("the samples' page in Chromium: %s, the JSON's %s" % (page_rows(htmlpage.Page(dom)), want))
    return problems


def check_compare_refused(target, work):
    """Dumps of two processes given to --compare: one line, exit 4."""
    cores = []
    for k in range(2):
        proc, truth = start(target, work, "waits")
        try:
            prefix = os.path.join(work, "other%d" % k)
            g = subprocess.run(["gcore", "-o", prefix, str(truth["pid"])], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=scaled(120))
            if g.returncode != 0:
                raise pt.Failure("gcore: %s" % g.stdout.decode(errors="replace")[-300:])
            cores.append(("%s.%d" % (prefix, truth["pid"]), truth["pid"]))
        finally:
            stop(proc)
    rc, out, err = pt.run_pycore(["analyze", "--compare"] + target.pycore_args() + [c for c, _ in cores])
    for core, _ in cores:
        os.unlink(core)
    lines = err.strip().splitlines()
    if rc != 4 or out or len(lines) != 1 or not all(("pid %d" % pid) in lines[0] for _, pid in cores):
        raise pt.Failure("exit %d, %d lines on stderr, %d bytes out: %s" % (rc, len(lines), len(out), err.strip()))
    return lines[0]


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


def check_flamegraph(target, work):
    """The waits scenario's folded stacks loaded into a flame-graph tool,
    npm's speedscope in Chromium (pycoretest.flamegraph): it takes them as
    collapsed stacks, and the stacks and weights it holds are the folded
    lines'."""
    proc, truth = start(target, work, "waits")
    try:
        rc, folded, err = pt.run_pycore(["analyze", "--format", "collapsed", "--pid"] + SAMPLES + [str(truth["pid"])])
    finally:
        stop(proc)
    if rc != 0:
        raise pt.Failure("exit %d: %s" % (rc, err.strip()[-300:]))
    want = flamegraph.folded_stacks(folded)
    got = flamegraph.speedscope_load(folded, work)
    if got["total_weight"] != sum(want.values()):
        raise pt.Failure("speedscope's total weight %s, the folded counts add up to %d" % (got["total_weight"],
                                                                                          sum(want.values())))
    if got["stacks"] != want:
        only = sorted(set(want.items()) ^ set(got["stacks"].items()))[:2]
        raise pt.Failure("speedscope's stacks differ from the folded lines': %s" % only)
    return "speedscope %s: %d stacks of %d frames, total weight %d, as the folded lines" % (
        got["version"], len(want), len(got["frames"]), got["total_weight"])


def sampled_until(target, work, code, samples=20, interval=0.1):
    """The samples of a process running CODE (it prints READY first),
    INTERVAL s apart: the samples object of its JSON report."""
    proc = target.popen(["-c", code], work, stdout=subprocess.PIPE)
    try:
        proc.stdout.readline()
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--pid", "--samples", str(samples),
                                      "--interval", "%g" % interval, str(proc.pid)])
    finally:
        proc.wait(timeout=scaled(30))
    if rc not in (0, 1) or not out.strip():
        raise pt.Failure("exit %d: %s" % (rc, err.strip()[-300:]))
    return load_report(out)["samples"]


def check_exit(target, work):
    """A process that exits during the samples: those taken, and why."""
    s = sampled_until(target, work, "import time; print('READY', flush=True); time.sleep(0.6)")
    if not (1 <= s["taken"] < 20) or not s["ended"] or "exited" not in s["ended"]:
        raise pt.Failure("taken %s of 20, ended %r" % (s["taken"], s["ended"]))
    return "%d of 20 taken: %s" % (s["taken"], s["ended"])


def check_exec(target, work):
    """A process that runs another program during the samples (exec): the
    samples of the first, and why they ended."""
    s = sampled_until(target, work, "import os, sys, time; print('READY', flush=True); time.sleep(0.5); "
                      "os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(2)'])")
    # (a read that lands inside the exec itself ends the samples with its
    # error instead: those taken are still the first program's)
    if not (1 <= s["taken"] < 20) or not s["ended"]:
        raise pt.Failure("taken %s of 20, ended %r" % (s["taken"], s["ended"]))
    return "%d of 20 taken: %s" % (s["taken"], s["ended"])


def check_late(target, work):
    """A thread started half-way through the samples: classed on the
    samples it is in, and saying so."""
    # (the process outlives the ten samples as long on this machine now:
    # a read under the sanitizers takes several times a quiet one's)
    s = sampled_until(target, work, "import threading, time; print('READY', flush=True); time.sleep(%g); "
                      "t = threading.Thread(target=time.sleep, args=(%g,), name='late'); t.start(); t.join()" % (
                          scaled(0.45), scaled(1.5)),
                      samples=10, interval=scaled(0.1))
    late = [t for t in s["threads"] if t["name"] == "late"]
    if s["taken"] != 10 or len(late) != 1:
        raise pt.Failure("taken %s, threads named late: %d" % (s["taken"], len(late)))
    t = late[0]
    if not (2 <= t["present"] < 10) or ("(seen in %d of 10)" % t["present"]) not in t["evidence"] or \
            t["timeline"].count("-") != 10 - t["present"] or not t["timeline"].startswith("-"):
        raise pt.Failure("the late thread: in %s of 10, timeline %r: %s" % (t["present"], t["timeline"],
                                                                          t["evidence"]))
    return "in %d of 10, %s: %s" % (t["present"], t["timeline"], t["evidence"])


def main():
    tap = pt.TAP()
    # the sanitizer pass: the builds of its frame walkers among ours
    builds = [b for b in BUILDS if b in interpreters.SANITIZER_PASS_NAMES] if interpreters.sanitizer_pass() \
        else BUILDS
    for name in builds:
        target, why = interpreters.find(name)
        # (two gcores' reading as samples is the same code whatever the
        # interpreter: on the builds of feature_names())
        # (and on the free-threaded build, whose dumps say that a thread
        # runs by its registers alone: no GIL, no CPU time)
        compared = ["compare " + c for c in COMPARED] \
            if name in interpreters.feature_names() or name.startswith("ft") else []
        for scenario in list(SCENARIOS) + compared + ["text", "exit", "exec", "late"]:
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
            elif scenario == "late":
                pt.run_in(tap, label, work, check_late, target, work)
            elif scenario.startswith("compare "):
                pt.run_in(tap, label, work, check_compare, target, work, scenario.split()[1])
            else:
                pt.run_in(tap, label, work, check_scenario, target, work, scenario)
    pt.run_on(tap, "py3.12", "compare refused", check_compare_refused)
    pt.run_on(tap, "py3.12", "folded stacks in a flame-graph tool", check_flamegraph)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
