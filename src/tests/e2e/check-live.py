"""pycore analyze --pid: live processes, against gcore's core of the same
moment.

For one interpreter of each frame walker present
(pycoretest.interpreters.feature_names(); every one with
PYCORE_ALL_INTERPRETERS=1) and each scenario that blocks (threads with --native, locals with
--locals=deep, lock_waits and aio_tasks from 3.8), the process records its
own stacks and blocks; pycore reads it live, then gcore takes its core (for
an interpreter of the Debian unstable root, which runs chrooted there: the
kernel's core, by SIGQUIT, read with --sysroot, while the live read needs
none: it opens the files through /proc/PID/root).  The live report's
interpreters (threads, frames, locals, lock waits, asyncio tasks) must equal
the core's, the threads the process's own record, and the process must run
on untraced afterwards.  --no-stop must give the same report of a blocked
process.  --save FILE with --pid writes a compact dump of the live read:
its report equals that read's (input and stopped_ms aside), and gdb lists
every thread of it (thread apply all bt).

Then the process changing under the read (scenarios/live_churn.py): one
that exits at any moment of the read (a report, or exit 7 "gone" in one
line, never anything else), one that creates threads all the time (each
report whole and consistent), one whose stacks change all the time under
--no-stop (a "may be torn" warning per changed thread, exit 1).  And the
refusals, each one line and exit 7: no such process; another user's process
(pycore run as nobody with setpriv against a root process); root without
CAP_SYS_PTRACE against nobody's process; Yama's ptrace_scope 1 where this
kernel has it so (never set: a skip by name otherwise).

Output is TAP (pycoretest.tap).  Environment: PYCORE, srcdir, KEEP_CORES=1.

With PYCORE_LIVE_SOAK=N (not part of make check) it runs only "threads
created during the read", N times in a row on each of py3.12, debian3.11 and
py3.13 that is installed, with two CPU hogs of its own beside it: a read
must settle on one consistent thread list however the machine is loaded.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.compact import first_difference as compact_difference, gdb_threads
from pycoretest.schema import load_report
from pycoretest.env import scaled

# scenario: (pycore's options, the first minor whose facts pycore reads)
SCENARIOS = [("threads", ["--native"], 6), ("locals", ["--locals=deep"], 6), ("lock_waits", [], 8),
             ("aio_tasks", [], 8)]
YAMA = "/proc/sys/kernel/yama/ptrace_scope"


def live(pid, args, env=None):
    """pycore analyze --pid's JSON report of PID: (exit, report or None, stderr)."""
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--pid"] + args + [str(pid)], env=env)
    return rc, (load_report(out) if out.strip() else None), err


def status(pid):
    """(state letter, TracerPid) of a process, from /proc."""
    stat = open("/proc/%d/stat" % pid).read()
    tracer = [line.split()[1] for line in open("/proc/%d/status" % pid) if line.startswith("TracerPid:")]
    return stat[stat.rindex(")") + 2], int(tracer[0])


def native_file(f, root):
    """A native frame's file is the file pycore read: under the sysroot
    for a core, under /proc/PID/root for the live process in that root."""
    name = f.get("file") or ""
    if f["kind"] == "native" and root and name.startswith(root + "/"):
        return dict(f, file=name[len(root):])
    if f["kind"] == "native" and name.startswith("/proc/") and "/root/" in name:
        return dict(f, file=name[name.index("/root/") + len("/root"):])
    return f


def stacks(report, root=None):
    """The interpreters as the comparison sees them: all but the crash
    (a kernel core's thread that received SIGQUIT), and the native frames'
    files as the process names them."""
    out = []
    for i in report["interpreters"]:
        i = dict(i)
        i["threads"] = [dict(t, crashed=None, frames=[native_file(f, root) for f in t["frames"]])
                        for t in i["threads"]]
        out.append(i)
    return out


def first_difference(a, b, where="interpreters"):
    if type(a) is not type(b):
        return "%s: %r / %r" % (where, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return first_difference(a.get(k), b.get(k), "%s.%s" % (where, k))
    elif isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items / %d" % (where, len(a), len(b))
        for n, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, "%s[%d]" % (where, n))
    return "%s: %r / %r" % (where, a, b) if a != b else None


def without_input(report):
    """A report as a compact dump of the same moment must repeat it: the
    input (a process, then a file) and how long the process was stopped
    aside."""
    report = dict(report, process=dict(report["process"]))
    report.pop("input")
    report["process"].pop("stopped_ms")
    return report


def check_compact(target, args, saved, compact):
    """--pid P --save FILE: the live report as usual, and FILE a compact
    dump whose report equals it (input and stopped_ms aside; for a process
    in another root, read with --sysroot: its interpreters, native files
    as the process names them), which gdb opens, every thread listed."""
    rc, live_report, err = saved
    if rc != 0 or not live_report:
        raise pt.Failure("--save: exit %d: %s" % (rc, err.strip()))
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + args + target.pycore_args() + [compact])
    if rc != 0:
        raise pt.Failure("the compact dump of the live process: exit %d: %s" % (rc, err.strip()))
    from_compact = load_report(out)
    if target.root:
        diff = first_difference(stacks(live_report), stacks(from_compact, target.root))
    else:
        diff = compact_difference(without_input(live_report), without_input(from_compact))
    if diff:
        raise pt.Failure("the compact dump's report differs from the live one: %s" % diff)
    size = os.path.getsize(compact)
    detail = "--save: compact dump %d bytes of a process mapping %d, same report" % (
        size, live_report["input"]["size"])
    if target.root:
        return detail + " (gdb not run on a process of another root)"
    if not shutil.which("gdb"):
        return detail + " (gdb not installed, its check not run)"
    n = gdb_threads(os.path.realpath(target.exe), compact, live_report["process"]["threads"])
    return detail + ", gdb lists its %d threads" % n


def check_scenario(target, scenario, args, work):
    got = {}

    def read_live(proc):
        # READY comes just before the last blocking call: let it get there
        time.sleep(0.5)
        t = time.monotonic()
        got["stop"] = live(proc.pid, args)
        got["wall"] = time.monotonic() - t
        # --no-stop sees the registers of a thread only while it is in the
        # kernel: one woken for a moment (a timed wait, the machine's
        # load) is read again, five reads at most, until it rests as the
        # stopped read saw it
        for _ in range(5):
            got["nostop"] = live(proc.pid, ["--no-stop"] + args)
            rc, nostop, _ = got["nostop"]
            if "--native" in args or rc != 0 or not nostop or not got["stop"][1] or \
                    not first_difference(stacks(nostop), stacks(got["stop"][1])):
                break
            time.sleep(0.2)
        got["save"] = live(proc.pid, ["--save", compact] + args)
        got["after"] = status(proc.pid)
        got["text"] = pt.run_pycore(["analyze", "--pid", str(proc.pid)] + args)

    compact = os.path.join(work, "live-compact.core")
    core, truth_path, snap_signal = pt.take_snapshot(target, scenario, work, before=read_live)
    rc, report, err = got["stop"]
    if rc != 0 or not report:
        raise pt.Failure("live: exit %d: %s" % (rc, err.strip()))
    if report["input"]["kind"] != "process" or report["input"]["path"] != "/proc/%d" % report["process"]["pid"]:
        raise pt.Failure("live: input %s" % report["input"])
    ms = report["process"]["stopped_ms"]
    if not isinstance(ms, (int, float)) or not 0 < ms < got["wall"] * 1000:
        raise pt.Failure("live: stopped_ms %r (the command took %.0f ms)" % (ms, got["wall"] * 1000))
    if got["after"][1] != 0 or got["after"][0] in "tT":
        raise pt.Failure("after pycore the process is in state %s, traced by %d" % got["after"])
    truth = json.load(open(truth_path))
    pt.compare(truth, report, None, None)
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + args + target.pycore_args() + [core])
    if rc != 0:
        raise pt.Failure("the core: exit %d: %s" % (rc, err.strip()))
    from_core = load_report(out)
    diff = first_difference(stacks(report), stacks(from_core, target.root))
    if diff:
        raise pt.Failure("the live report differs from the core's: %s" % diff)
    rc, nostop, err = got["nostop"]
    if rc != 0 or nostop["process"]["stopped_ms"] is not None:
        raise pt.Failure("--no-stop: exit %d, stopped_ms %s: %s" % (rc, nostop and nostop["process"]["stopped_ms"],
                                                                  err.strip()))
    # --no-stop has no registers of a thread outside the kernel: Python stacks only
    if "--native" not in args:
        diff = first_difference(stacks(nostop), stacks(report))
        if diff:
            raise pt.Failure("--no-stop differs from the stopped read: %s" % diff)
    saved = check_compact(target, args, got["save"], compact)
    rc, text, err = got["text"]
    if rc != 0 or "live process, its threads stopped for" not in text:
        raise pt.Failure("text: exit %d: %s" % (rc, (err or text[:300]).strip()))
    if target.root:
        # read through /proc/PID/root: the interpreter's files, and the
        # scenario's source lines, which exist only inside the root
        exe = [m for m in report["process"]["modules"] if m["path"] == target.exe]
        if not exe or not (exe[0]["file"] or "").startswith("/proc/"):
            raise pt.Failure("the chrooted interpreter's file: %s" % exe)
        src = [ln for ln in open(os.path.join(pt.SCENARIOS, scenario + ".py")) if "READY" in ln][0].strip()
        if src not in text:
            raise pt.Failure("the text report lacks the source line %r read inside the root" % src)
    nthreads = sum(len(i["threads"]) for i in report["interpreters"])
    return "%d threads equal to the %s's; stopped %.1f ms of %.0f ms%s; %s" % (
        nthreads, "kernel core" if target.root else "gcore", ms, got["wall"] * 1000,
        ", chrooted in %s" % target.root if target.root else "", saved)


def churn(target, work, mode, *more):
    truth = os.path.join(work, "truth-%s.json" % mode)
    proc = target.popen([target.scenario(work, "live_churn.py"), target.inside(truth), mode] + list(more), work,
                        stdout=subprocess.PIPE)
    if not pt.wait_ready(proc):
        proc.kill()
        proc.wait()
        raise pt.Failure("live_churn.py %s did not get ready" % mode)
    return proc


def stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def one_line(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise pt.Failure("stderr is not one line: %r" % err)
    return lines[0]


def check_exits(target, work):
    """The process exits at some moment of the read: each read gives a
    report (exit 0, or 1) or exit 7 with one line saying it is gone."""
    seen = {}
    for delay in (0, 1, 2, 3, 5, 8, 12, 20, 40):
        proc = churn(target, work, "exit", str(delay))
        try:
            rc, report, err = live(proc.pid, [])
            if rc in (0, 1):
                if not report:
                    raise pt.Failure("exit %d without a report" % rc)
                seen["report"] = seen.get("report", 0) + 1
            elif rc == 7:
                line = one_line(err)
                if "exited" not in line and "no such process" not in line:
                    raise pt.Failure("exit 7: %s" % line)
                seen["gone"] = seen.get("gone", 0) + 1
            else:
                raise pt.Failure("the process exiting %d ms after READY: exit %d: %s" % (delay, rc, err.strip()))
        finally:
            stop(proc)
    rc, _, err = live(proc.pid, [])
    if rc != 7 or "no such process" not in one_line(err):
        raise pt.Failure("a process reaped: exit %d: %s" % (rc, err.strip()))
    return "reads: %s; a reaped one: %s" % (seen, one_line(err))


def check_spawn(target, work):
    """Threads created (and exiting) all through the read: every report
    whole, its Python threads among the OS threads or noted gone."""
    proc = churn(target, work, "spawn")
    time.sleep(0.2)   # into spawner()
    try:
        counts = []
        for _ in range(8):
            rc, report, err = live(proc.pid, [])
            if rc != 0 or not report:
                said = [] if not report else report["warnings"] + [
                    "thread %s: %s" % (t["tid"], t["error"]) for i in report["interpreters"] for t in i["threads"]
                    if t["error"]]
                raise pt.Failure("exit %d: %s; what the report says is missing: %s" % (rc, err.strip(), said))
            # a thread state made for a new thread holds its creator's ident
            # until the thread runs (3.11 and earlier): never a second
            # thread of the same OS thread in the report
            ids = [(t["tid"], t["ident"]) for i in report["interpreters"] for t in i["threads"]]
            if len(ids) != len(set(ids)):
                raise pt.Failure("one OS thread listed twice: %s" % sorted(i for i in ids if ids.count(i) > 1))
            main = [t for i in report["interpreters"] for t in i["threads"] if t["tid"] == proc.pid]
            if not main or [f["function"] for f in main[0]["frames"][-3:]] != ["spawner", "main", "<module>"]:
                raise pt.Failure("the main thread is not in spawner(): %s" % main)
            blocked = [t for i in report["interpreters"] for t in i["threads"]
                       if (t["name"] or "").startswith("blocked-")]
            if len(blocked) != 3 or any(t["frames"][0]["function"] != "wait" for t in blocked):
                raise pt.Failure("the 3 blocked threads: %s" % [(t["name"], t["frames"][:1]) for t in blocked])
            counts.append(len(report["process"]["threads"]))
        if status(proc.pid)[1] != 0:
            raise pt.Failure("the process is still traced")
    finally:
        stop(proc)
    return "8 reads, OS threads %s" % counts


def check_torn(target, work):
    """--no-stop over threads whose stacks never rest: a warning names
    each thread whose stack changed between the two reads, exit 1."""
    proc = churn(target, work, "busy")
    try:
        for attempt in range(10):
            rc, report, err = live(proc.pid, ["--no-stop"])
            torn = [w for w in (report or {}).get("warnings", []) if "may be torn" in w]
            if rc not in (0, 1) or (rc == 1) != bool(torn):
                raise pt.Failure("exit %d, warnings %s: %s" % (rc, report and report["warnings"], err.strip()))
            if torn:
                return "attempt %d: %s" % (attempt + 1, torn[0])
    finally:
        stop(proc)
    raise pt.Failure("ten --no-stop reads of spinning threads never saw a stack change")


def as_user(argv, user=("65534", "65534"), caps=None):
    cmd = ["setpriv", "--reuid=" + user[0], "--regid=" + user[1], "--clear-groups"]
    if caps:
        cmd = ["setpriv", "--inh-caps=" + caps, "--bounding-set=" + caps]
    env = dict(os.environ, PYCORE_DEBUG_CACHE="")
    p = subprocess.run(cmd + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120), env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_other_user(target, work):
    if os.geteuid() != 0:
        raise pt.Skip("needs root, to run pycore as nobody against a root process")
    if not shutil.which("setpriv"):
        raise pt.Skip("setpriv not installed (Debian package util-linux)")
    proc = churn(target, work, "many", "2")
    try:
        rc, out, err = as_user([pt.PYCORE, "analyze", "--pid", str(proc.pid)])
        if rc == 126 or rc == 127:
            raise pt.Skip("nobody cannot run %s: %s" % (pt.PYCORE, err.strip()))
        line = one_line(err)
        if rc != 7 or "another user" not in line or "uid 0" not in line or out:
            raise pt.Failure("exit %d: %s" % (rc, line))
    finally:
        stop(proc)
    return line


def check_capability(target, work):
    """Root without CAP_SYS_PTRACE, against nobody's process."""
    if os.geteuid() != 0:
        raise pt.Skip("needs root")
    if not shutil.which("setpriv"):
        raise pt.Skip("setpriv not installed (Debian package util-linux)")
    # an interpreter nobody can run (pyenv's live in root's home)
    target = next((t for t in (interpreters.find(n)[0] for n in interpreters.names() if n.startswith("debian"))
                   if t and not t.root), None)
    if not target:
        raise pt.Skip("no Debian interpreter (/usr/bin/python3.N), which nobody can run")
    os.chmod(work, 0o777)
    truth = os.path.join(work, "truth-nobody.json")
    proc = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", target.exe,
                             target.scenario(work, "live_churn.py"), truth, "many", "2"], cwd="/",
                            stdout=subprocess.PIPE)
    try:
        if not pt.wait_ready(proc):
            raise pt.Skip("a scenario run as nobody did not start (its files unreadable to nobody?)")
        rc, out, err = as_user([pt.PYCORE, "analyze", "--pid", str(proc.pid)], caps="-sys_ptrace")
        line = one_line(err)
        if rc != 7 or "CAP_SYS_PTRACE" not in line or "uid 65534" not in line:
            raise pt.Failure("exit %d: %s" % (rc, line))
        rc, _, err = pt.run_pycore(["analyze", "--pid", str(proc.pid)])
        if rc != 0:
            raise pt.Failure("as root with the capability: exit %d: %s" % (rc, err.strip()))
    finally:
        stop(proc)
    return line


def check_yama(target, work):
    """Yama's refusal as this kernel is: never set here (a test does not
    change the host's /proc/sys, not even for a moment)."""
    if not os.path.exists(YAMA):
        raise pt.Skip("this kernel has no Yama (%s missing)" % YAMA)
    scope = open(YAMA).read().strip()
    if scope != "1":
        raise pt.Skip("ptrace_scope is %s on this kernel, not 1; the test does not change the host's" % scope)
    proc = churn(target, work, "many", "2")
    try:
        rc, out, err = as_user([pt.PYCORE, "analyze", "--pid", str(proc.pid)], user=("0", "0"),
                               caps="-sys_ptrace")
        line = one_line(err)
        if rc != 7 or "ptrace_scope" not in line:
            raise pt.Failure("exit %d: %s" % (rc, line))
    finally:
        stop(proc)
    return line


def check_no_process(target, work):
    rc, _, err = live(2 ** 22 + 12345, [])
    line = one_line(err)
    if rc != 7 or "no such process" not in line:
        raise pt.Failure("exit %d: %s" % (rc, line))
    rc, _, err = pt.run_pycore(["analyze", "--pid", "12x"])
    if rc != 2:
        raise pt.Failure("--pid 12x: exit %d: %s" % (rc, err.strip()))
    rc, _, err = pt.run_pycore(["analyze", "--no-stop", "/dev/null"])
    if rc != 2:
        raise pt.Failure("--no-stop without --pid: exit %d" % rc)
    return line


def soak(runs):
    """check_spawn RUNS times on each interpreter, two busy loops beside."""
    tap = pt.TAP()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for name in ("py3.12", "debian3.11", "py3.13"):
            target, why = interpreters.find(name)
            for k in range(runs):
                label = "threads created during the read (%s), two CPU hogs beside: run %d of %d" % (name, k + 1, runs)
                if why:
                    tap.skip(label, why)
                    continue
                work = target.workdir("pycore-live-soak-")
                pt.run_in(tap, label, work, check_spawn, target, work)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    return tap.done()


def main():
    if os.environ.get("PYCORE_LIVE_SOAK"):
        return soak(int(os.environ["PYCORE_LIVE_SOAK"]))
    tap = pt.TAP()
    for name in interpreters.feature_names():
        target, why = interpreters.find(name)
        minor = target.minor() if target else 0
        for scenario, args, first in SCENARIOS:
            label = "%s %s live = its core" % (name, scenario)
            if why:
                tap.skip(label, why)
            elif minor < first:
                tap.skip(label, "pycore reads this scenario's facts from 3.%d, this is 3.%d" % (first, minor))
            else:
                work = target.workdir("pycore-live-%s-" % name)
                pt.run_in(tap, label, work, check_scenario, target, scenario, args, work)
    # the process changing under the read, and the refusals: one interpreter
    name = next((n for n in ("py3.12", "debian3.11", "py3.13") if interpreters.find(n)[0]), None)
    target = interpreters.find(name)[0] if name else None
    for label, fn in (("a process that exits during the read", check_exits),
                      ("threads created during the read", check_spawn),
                      ("--no-stop: stacks that change are flagged torn", check_torn),
                      ("refused: no such process (and --pid's usage errors)", check_no_process),
                      ("refused: another user's process (pycore as nobody)", check_other_user),
                      ("refused: root without CAP_SYS_PTRACE", check_capability),
                      ("refused: Yama's ptrace_scope 1", check_yama)):
        if not target:
            tap.skip(label, "none of py3.12, debian3.11, py3.13 is installed")
            continue
        work = target.workdir("pycore-live-")
        pt.run_in(tap, "%s (%s)" % (label, name), work, fn, target, work)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
