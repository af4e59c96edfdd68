"""What the report says first and how it says it, on real cores of every
interpreter on this machine (pyenv's /root/.pyenv/versions/3.*, Debian's
/usr/bin/python3.11), each running src/tests/e2e/scenarios/report.py with an
argument holding a newline and one holding a byte that is not UTF-8:

  * a real SIGSEGV at an address the process records, in a thread whose
    name holds "\\x1b[31m", "\\n", "\\r" and "\\x07", inside an except block:
    signal code SEGV_MAPERR with that fault address, no sender; the summary
    names that thread, its innermost Python frame and the exception as the
    process recorded them, and with --native the C function that faulted;
  * SIGSEGV sent by this test with kill: code SI_USER, no address, this
    test's own pid and uid as the sender, kind "signal-sent";
  * argv in JSON gives back, through os.fsencode, the bytes the process's
    own sys.argv holds; the text report holds no control character but the
    line ends, is valid UTF-8, and shows the thread name and arguments
    escaped as repr() escapes them; the crashed thread comes first;
  * with --max-repr 12 no repr is longer than 12 characters, "..." included;
  * a report written to /dev/full fails with its own message and exit 5
    (text and JSON), and a core of CPython 2.7 (when pyenv has one) is
    refused as "CPython 2.7 is not supported".

Output: TAP, one line per case; a case that cannot run here (no
interpreter, no gcore, a core_pattern the kernel cores of this test cannot
be found with) is a skip by name."""
import json
import os
import re
import signal
import subprocess
import sys
import shutil
import tempfile

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.env import scaled
Failure = pt.Failure

ARGS = [b"line one\nline two", b"caf\xe9-\xff.txt"]
NAME = "evil\x1b[31mRED\x1b[0m\nThread 1 (fake)\r\x07"
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def local_interpreters():
    """Every pyenv 3.x (oldest first), then Debian's 3.11."""
    return interpreters.pyenv_pythons() + [p for p in [interpreters.path("debian3.11")] if p]


def report_truth(truth_path):
    with open(truth_path) as f:
        truth = json.load(f)
    with open(truth_path + ".report") as f:
        extra = json.load(f)
    return truth, [bytes.fromhex(a) for a in extra["argv"]], extra["address"]


def pycore_json(args, core):
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + args + [core])
    if rc != 0:
        raise Failure("pycore %s: exit %d: %s" % (" ".join(args), rc, err.strip()))
    return pt.load_report(out)


def thread_of(report, tid):
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["tid"] == tid:
                return t
    return None


def check_argv(report, argv):
    got = report["process"]["argv"]
    if got is None or len(got) < len(argv):
        raise Failure("argv %r; the process's sys.argv has %d entries" % (got, len(argv)))
    mine = [os.fsencode(a) for a in got[-len(argv):]]
    if mine != argv:
        raise Failure("argv (through os.fsencode) %r, the process's sys.argv %r" % (mine, argv))


def check_summary(report, truth, want_kind):
    s = report["summary"]
    crashed = report["process"]["crashed_tid"]
    if s["kind"] != want_kind or s["thread"] != crashed or s["deadlock"] is not None:
        raise Failure("summary %s; want kind %s naming thread %s" % (s, want_kind, crashed))
    t = thread_of(report, crashed)
    tt = [x for x in truth["threads"] if x["ident"] == t["ident"]][0]
    f, want = s["python_frame"], tt["frames"][0]
    if f is None or (f["function"], f["file"], f["line"]) != (want["function"], want["file"], want["line"]):
        raise Failure("summary.python_frame %s, the thread's innermost frame is %s" % (f, want))
    if "%s:%d %s" % (want["file"], want["line"], want["function"]) not in s["text"]:
        raise Failure("summary.text %r does not name %s" % (s["text"], pt.frame_str(want)))
    if tt["name"] and '"%s"' % tt["name"] not in s["text"]:
        raise Failure("summary.text %r does not name the thread %r" % (s["text"], tt["name"]))
    e = tt.get("exception")
    want_e = {"type": e["type"], "message": e["message"]} if e else None
    if s["exception"] != want_e:
        raise Failure("summary.exception %s, the thread handles %s" % (s["exception"], want_e))
    return tt


def check_text(core, argv):
    p = subprocess.run([pt.PYCORE, "analyze", core], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120))
    if p.returncode != 0:
        raise Failure("text report: exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")))
    try:
        out = p.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failure("the text report is not UTF-8: %s" % e)
    bad = CONTROL.search(out)
    if bad:
        raise Failure("the text report holds control character %r at %d" % (bad.group(), bad.start()))
    shown = repr(NAME)[1:-1]
    if '"%s"' % shown not in out:
        raise Failure("the text report does not show the thread name as %s" % shown)
    for line in out.splitlines():
        if line.startswith("Thread 1 (fake)"):
            raise Failure("the thread name forged a line: %r" % line)
    lines = out.splitlines()
    if not lines[1].startswith("Summary: ") or shown not in lines[1]:
        raise Failure("the second line is not the summary naming the thread: %r" % lines[1])
    proc = [l for l in lines if l.startswith("Process ")][0]
    for a in argv[-len(ARGS):]:
        want = repr(a)[2:-1]  # bytes' repr escapes the same controls and shows bad bytes as \xNN
        if want not in proc:
            raise Failure("the Process line %r does not show %s" % (proc, want))
    first = [l for l in lines if l.startswith("Thread ")][0]
    if "crashed" not in first:
        raise Failure("the first thread shown is not the crashed one: %r" % first)
    return out


def check_full(core):
    for fmt in ("text", "json"):
        with open("/dev/full", "w") as full:
            p = subprocess.run([pt.PYCORE, "analyze", "--format", fmt, core], stdout=full,
                               stderr=subprocess.PIPE, timeout=scaled(120))
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        if p.returncode != 5 or len(err) != 1 or "cannot write" not in err[0] or core not in err[0]:
            raise Failure("%s report to /dev/full: exit %d, stderr %r; want exit 5 and one line"
                          % (fmt, p.returncode, err))


def check_pretty(core):
    """--pretty: the report of the compact line, indented by two spaces (its
    text is the compact one read back by jansson: the thread name's controls
    and argv's bad bytes go through both)."""
    opts = ["--locals", "--native"]
    compact = pycore_json(opts, core)
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--pretty"] + opts + [core])
    if rc != 0:
        raise Failure("--pretty: exit %d: %s" % (rc, err.strip()))
    lines = out.splitlines()
    if len(lines) < 3 or lines[0] != "{" or not lines[1].startswith('  "schema": '):
        raise Failure("--pretty does not begin as an indented object: %r" % lines[:2])
    pretty = pt.load_report(out, "the --pretty report")
    for key in compact:
        if pretty.get(key) != compact[key]:
            raise Failure("--pretty's %s differs from the compact report's" % key)
    if pretty != compact:
        raise Failure("--pretty's keys %s, the compact report's %s" % (sorted(pretty), sorted(compact)))
    return len(lines)


def fault(target, workdir):
    core, truth_path = pt.take_crash(target, workdir, ["report.py", "fault"] + ARGS, signal.SIGSEGV)
    truth, argv, address = report_truth(truth_path)
    report = pycore_json([], core)
    pt.compare(truth, report, signal.SIGSEGV)
    sig = report["process"]["signal"]
    want = {"number": 11, "name": "SIGSEGV", "code": 1, "code_name": "SEGV_MAPERR",
            "address": "0x%x" % address, "sender_pid": None, "sender_uid": None}
    if sig != want:
        raise Failure("signal %s, want %s" % (sig, want))
    check_argv(report, argv)
    tt = check_summary(report, truth, "crash")
    if tt["name"] != NAME:
        raise Failure("the crashed thread is %r, the scenario's is %r" % (tt["name"], NAME))
    if "SEGV_MAPERR (address not mapped), fault address 0x%x" % address not in report["summary"]["text"]:
        raise Failure("summary.text %r" % report["summary"]["text"])
    # --max-repr N: the whole repr, "..." included, is at most N characters
    cut = pt.locals.check_max_repr(pycore_json(["--locals", "--max-repr", "12"], core), 12)
    if not cut:
        raise Failure("--max-repr 12 cut no repr of the module's namespace")
    native = pycore_json(["--native"], core)["summary"]["native_frame"]
    if not native or not (native["function"] or "").lstrip("_").startswith("strlen"):
        raise Failure("with --native, summary.native_frame is %s, not strlen" % native)
    out = check_text(core, argv)
    if "Signal: SIGSEGV (11), SEGV_MAPERR (address not mapped), fault address 0x%x" % address not in out:
        raise Failure("the text's Signal line does not say SEGV_MAPERR at 0x%x" % address)
    check_full(core)
    check_pretty(core)
    return "fault at 0x%x in %d frames, summary %r" % (address, len(tt["frames"]), report["summary"]["text"][:60])


def sent(target, workdir):
    pattern, why = pt.kernel_core_usable()
    if why:
        raise pt.Skip(why)
    truth_path = os.path.join(workdir, "truth.json")

    def unlimited():
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    proc = target.popen([target.scenario(workdir, "report.py"), truth_path, "wait"] + ARGS, workdir,
                        preexec=unlimited, stdout=subprocess.PIPE)
    try:
        if not pt.wait_ready(proc):
            raise Failure("the scenario did not get ready (exit %s)" % proc.poll())
        import time
        time.sleep(0.3)  # from READY to its blocking call
        os.kill(proc.pid, signal.SIGSEGV)
        proc.communicate(timeout=scaled(60))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != -signal.SIGSEGV:
        raise Failure("the scenario ended with %s, not SIGSEGV" % proc.returncode)
    core = pt.kernel_core_path(pattern, proc.pid, workdir)
    if not os.path.exists(core):
        raise pt.Skip("the kernel wrote no core (%s)" % core)
    truth, argv, _ = report_truth(truth_path)
    report = pycore_json([], core)
    sig = report["process"]["signal"]
    want = {"number": 11, "name": "SIGSEGV", "code": 0, "code_name": "SI_USER", "address": None,
            "sender_pid": os.getpid(), "sender_uid": os.getuid()}
    if sig != want:
        raise Failure("signal %s, want %s (this test sent it)" % (sig, want))
    check_argv(report, argv)
    check_summary(report, truth, "signal-sent")
    p = subprocess.run([pt.PYCORE, "analyze", core], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120))
    line = "SIGSEGV (11) sent by pid %d (uid %d) with kill" % (os.getpid(), os.getuid())
    text = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0 or "Signal: " + line not in text or "fault address" in text:
        raise Failure("text report (exit %d) does not say %r, or names a fault address" % (p.returncode, line))
    return "kill from pid %d: %r" % (os.getpid(), report["summary"]["text"][:60])


def python2(workdir):
    exes = [p for p in [interpreters.path("py2.7")] if p]
    if not exes:
        raise pt.Skip("CPython 2.7 not installed")
    # the interpreter says which version it is; a 2.7 process is no 3.x one
    v = subprocess.run([exes[-1], "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                       stdout=subprocess.PIPE).stdout.decode().strip()
    proc = subprocess.Popen([exes[-1], "-c", "import sys, time; sys.stdout.write('READY\\n'); "
                             "sys.stdout.flush(); time.sleep(100)"], stdout=subprocess.PIPE)
    try:
        if not pt.wait_ready(proc):
            raise Failure("CPython 2.7 did not get ready")
        g = subprocess.run(["gcore", "-o", os.path.join(workdir, "core"), str(proc.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
        core = os.path.join(workdir, "core.%d" % proc.pid)
        if g.returncode != 0 or not os.path.exists(core):
            raise Failure("gcore of CPython 2.7 failed")
    finally:
        proc.kill()
        proc.wait()
    rc, out, err = pt.run_pycore(["analyze", core])
    want = "CPython %s is not supported" % v
    if rc != 3 or want not in err or len(err.strip().splitlines()) != 1:
        raise Failure("a CPython %s core: exit %d, %r; want exit 3 saying %r" % (v, rc, err, want))
    return "CPython %s: %s" % (v, err.strip())


def main():
    tap = pt.TAP()
    if not shutil.which("gcore"):
        tap.skip("report scenarios", "gcore not installed (Debian package gdb)")
        return tap.done()
    found = local_interpreters()
    if not found:
        tap.skip("report scenarios", "no interpreter")
    for exe in found:
        target = pt.Target(exe)
        for label, fn in (("fault", fault), ("kill", sent)):
            workdir = tempfile.mkdtemp(prefix="pycore-report-")
            pt.run_in(tap, "%s %s" % (exe, label), workdir, fn, target, workdir)
    workdir = tempfile.mkdtemp(prefix="pycore-report-")
    pt.run_in(tap, "CPython 2.7 is refused by name", workdir, python2, workdir)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
