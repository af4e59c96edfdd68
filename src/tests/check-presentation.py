"""How the text report presents the stacks, and the process facts around
them, on real cores of every interpreter on this machine (pyenv's
/root/.pyenv/versions/3.*, Debian's /usr/bin/python3.11) running
src/tests/scenarios/presenting.py, both as a gcore snapshot (wait) and as a
kernel core of a real SIGSEGV (fault):

  * process.ppid, uid and gid in JSON and the text's "Parent pid" line are
    what the process's os.getppid(), os.getuid() and os.getgid() said (the
    process takes uid and gid 4242 first when run as root); also in a
    minidump lldb saves of the waiting process (its /proc/PID/status
    stream), when lldb-19 or lldb-16 is installed;
  * every Python frame's column, end_line and end_column in JSON are what
    the process found for it as traceback does for a traceback's frames
    (code.co_positions() at f_lasti; 3.11+), null before 3.11 (the crashing frame of the fault,
    which moved on after the record, is left out);

Output: TAP, one line per case; a case that cannot run here (no gcore, a
core_pattern the kernel cores of this test cannot be found with) is a skip
by name."""
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("check_stacks", os.path.join(HERE, "check-stacks.py"))
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)
spec = importlib.util.spec_from_file_location("check_report", os.path.join(HERE, "check-report.py"))
cr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cr)
Failure = cs.Failure


LLDB = next((p for p in (shutil.which(n) for n in ("lldb-19", "lldb-16")) if p), None)


def take(target, workdir, mode):
    """The core of presenting.py in MODE: (core, truth, facts, the path of
    lldb's minidump of it or None)."""
    dmp = None
    os.chmod(workdir, 0o777)  # the process writes there under its other ids
    if mode == "fault":
        core, truth_path = cs.take_crash(target, workdir, ["presenting.py", "fault"], signal.SIGSEGV)
    else:
        truth_path = os.path.join(workdir, "truth.json")
        proc = target.popen([target.scenario(workdir, "presenting.py"), truth_path, "wait"], workdir,
                            stdout=subprocess.PIPE)
        try:
            if not cs.wait_ready(proc):
                raise Failure("the scenario did not get ready (exit %s)" % proc.poll())
            if LLDB:
                dmp = os.path.join(workdir, "live.dmp")
                subprocess.run([LLDB, "-p", str(proc.pid), "-b", "-o",
                                "process save-core --plugin-name=minidump --style stack " + dmp],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
                if not os.path.exists(dmp):
                    raise Failure("%s wrote no minidump" % LLDB)
            g = subprocess.run(["gcore", "-o", os.path.join(workdir, "core"), str(proc.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
            core = os.path.join(workdir, "core.%d" % proc.pid)
            if g.returncode != 0 or not os.path.exists(core):
                raise Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-500:])
        finally:
            proc.kill()
            proc.wait()
    with open(truth_path) as f:
        truth = json.load(f)
    with open(truth_path + ".presenting") as f:
        facts = json.load(f)
    return core, truth, facts, dmp


def text_report(core, args=()):
    p = subprocess.run([cs.PYCORE, "analyze"] + list(args) + [core], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        raise Failure("text report %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                      p.stderr.decode("utf-8", "replace").strip()))
    return p.stdout.decode("utf-8")


def pycore_json(args, core, codes=(0,)):
    rc, out, err = cs.run_pycore(["analyze", "--format", "json"] + args + [core])
    if rc not in codes:
        raise Failure("pycore %s: exit %d: %s" % (" ".join(args), rc, err.strip()))
    return cs.load_report(out)


def check_ids(report, text, facts):
    proc = report["process"]
    got = dict((k, proc[k]) for k in ("ppid", "uid", "gid"))
    want = dict((k, facts[k]) for k in ("ppid", "uid", "gid"))
    if got != want:
        raise Failure("process ids %s; the process said %s" % (got, want))
    line = "Parent pid %d, uid %d, gid %d, state " % (facts["ppid"], facts["uid"], facts["gid"])
    if not any(l.startswith(line) for l in text.splitlines()):
        raise Failure("the text report has no line starting %r" % line)


def python_thread(report, ident):
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["ident"] == ident:
                return t
    raise Failure("no thread with ident %d in the report" % ident)


def check_positions(report, facts, mode):
    """Columns and end lines as the process found them."""
    n = 0
    for ident, want in facts["threads"].items():
        frames = [f for f in python_thread(report, int(ident))["frames"] if f["kind"] == "python"]
        if len(frames) != len(want):
            raise Failure("thread %s: %d Python frames, the process saw %d" % (ident, len(frames), len(want)))
        for k, (f, w) in enumerate(zip(frames, want)):
            if k == 0 and mode == "fault" and int(ident) == facts["spiral"]:
                continue
            got = (f["line"], f["end_line"], f["column"], f["end_column"])
            exp = (w["line"], w["end_line"], w["column"], w["end_column"])
            if got != exp:
                raise Failure("thread %s frame %d (%s): line, end_line, column, end_column %s; the process "
                              "said %s" % (ident, k, w["function"], got, exp))
            n += 1
    return n


def scenario(target, workdir, mode):
    core, truth, facts, dmp = take(target, workdir, mode)
    report = pycore_json([], core)
    cs.compare(truth, report, signal.SIGSEGV if mode == "fault" else None)
    text = text_report(core)
    check_ids(report, text, facts)
    npos = check_positions(report, facts, mode)
    said = ["%d frames' positions" % npos,"pid %d: ppid %d, uid %d, gid %d" % (facts["pid"], facts["ppid"], facts["uid"], facts["gid"])]
    if dmp:
        # a stack-style minidump lacks the heap: an incomplete report (1)
        rc, out, err = cs.run_pycore(["analyze", dmp])
        check_ids(pycore_json([], dmp, (0, 1)), out, facts)
        said.append("lldb's minidump too")
    return ", ".join(said)


def main():
    tap = cs.TAP()
    if not shutil.which("gcore"):
        tap.skip("presentation scenarios", "gcore not installed (Debian package gdb)")
        return tap.done()
    found = cr.interpreters()
    if not found:
        tap.skip("presentation scenarios", "no interpreter")
    for exe in found:
        target = cs.Target(exe)
        for mode in ("wait", "fault"):
            workdir = tempfile.mkdtemp(prefix="pycore-presenting-")
            cs.run_in(tap, "%s %s" % (exe, mode), workdir, scenario, target, workdir, mode)
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
