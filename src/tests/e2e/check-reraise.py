"""Crashes where Python really runs, from real processes (#27, #36): a
signal a handler caught and re-raised (faulthandler, Apache with
mod_wsgi, uWSGI, gdb, a program's own handler), whatever its origin (a
fault, kill or sigqueue from another process, a timer, alarm()), thread
states fork() left, a lock held across fork(), containers of millions.

Truth comes from the processes: the faulting thread's native id and the
address it reads, written before the fault; the sender's own pid and uid,
written by the sender (a process the test starts) before it sends; the
thread that takes a kill, written by the process (its main thread, the
only one not blocking the signal; for gdb, gdb's own Python writes the
threads not blocking it, kernel/signal.c giving a process-directed signal
to the main thread first); /proc/self/task and thread idents of a forked
child; a container's len().  For every crash the summary must name the
thread that took the signal, the original signal and its fault address or
sender; no thread may be reported that the core does not hold unless it
is kept apart as stale; an exit-0 report holds no "unreadable".  Every
re-raised crash is checked in text, JSON and HTML, and fingerprints as
its twin without the handler (with and without --native).

faulthandler (python -X faulthandler, a thread faulting in
ctypes.string_at) runs on Debian 12's python3.11 (stripped), whose one
pair of cores is analyzed under four views of /usr/lib/debug made in a
private mount namespace (unshare --mount: nothing changes outside it,
no package is removed): none of it, python3.11-dbg's files without
libc6-dbg's (a fresh machine after scripts/install-deps), libc6-dbg's
without python3.11-dbg's, all of it; a view needing a package that is not
installed is not run and the result says so.  faulthandler must be proven
by its table's symbol where python3.11-dbg's file is seen, by a scan of
the interpreter's .data otherwise.  Then pyenv's 3.12 and 3.13
(pycoretest.interpreters) and sid's 3.13 (skipped by name when the root
scripts/sid-root builds is not there; never built here).  A Python process
with a handler of a small C library's (scenarios/rehandler.c, built by the
test) is sent SIGSEGV with kill and SIGABRT with sigqueue by the sender,
a SIGSEGV by a POSIX timer of its own, and a SIGALRM by alarm() (its
handler abort()s: no twin, SIGALRM's default dumps no core), each core
read with /usr/lib/debug as installed and with it empty.  A thread of
that process faults, and the handler kill()s the process and then waits
in hand-written code without CFI or a frame pointer, as uWSGI's exit(1)
after its kill() can be caught in a library's fini: the main thread
takes the kill, and the fault must still be traced to the faulting
thread (its handler's frame found by a scan), with its twin's
fingerprint.  gdb (Python
inside, scenarios/gdb_wait.py) is sent SIGSEGV and SIGABRT by the sender;
its handler takes no siginfo (no SA_SIGINFO), so the origin may be
"unrecorded", never the re-raise's own tkill; the case is skipped, named,
while pycore places libc.so.6 elsewhere than gdb's loader did (issue 36's
module placement).  Apache (Debian's apache2, libapache2-mod-wsgi-py3)
and uWSGI (uwsgi, uwsgi-plugin-python3) run on a loopback port with a
configuration of the test's own in a temporary directory, stopped at the
end; each is skipped by name when its package is missing.  uWSGI's worker
crashes twice, from a thread of the request's: once with SIGSEGV blocked
in that thread (the kernel then skips uWSGI's handler: a plain fault,
the bug without the handler), once with it unblocked, so that
uwsgi_segfault runs (its "got Segmentation Fault" line in uWSGI's log is
the truth that it did) and re-raises with kill(): the report must name
uWSGI's handler (uwsgi_segfault) in the faulting thread, and both cores
fingerprint the same.

Prints TAP lines; exit 0 pass, 1 fail."""
import glob
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "scenarios")
from pycoretest import interpreters  # noqa: E402
from pycoretest.tap import TAP, Failure, Skip  # noqa: E402
import pycoretest as cs  # noqa: E402
from pycoretest.env import scaled, wait_until

PYTHON = interpreters.path("debian3.11") or "/usr/bin/python3.11"


def unlimited():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def cores_in(work):
    pattern, why = cs.kernel_core_usable()
    if why:
        raise Skip(why)
    return sorted(glob.glob(os.path.join(work, pattern + "*")))


def wait_core(work, before=(), timeout=20):
    end = time.time() + scaled(timeout)
    pattern = cs.kernel_core_usable()[0]
    changed = None
    while time.time() < end:
        now = open("/proc/sys/kernel/core_pattern").read().strip()
        if now != pattern:
            changed = now
        new = [c for c in cores_in(work) if c not in before]
        if new:
            # the kernel writes it while the process dies: wait for its size to settle
            size = -1
            while size != os.path.getsize(new[0]):
                size = os.path.getsize(new[0])
                time.sleep(0.3)
            return new[0]
        time.sleep(0.2)
    if changed:
        raise Skip("kernel.core_pattern was changed to %r while this test waited for its core (another test "
                   "of the machine's)" % changed)
    raise Failure("no core in %s (core_pattern %r)" % (work, pattern))


def analyze(core, *args):
    rc, out, err = cs.run_pycore(["analyze", "--format", "json"] + list(args) + [core])
    if rc not in (0, 1):
        raise Failure("pycore exit %d: %s" % (rc, err.strip()))
    report = cs.load_report(out)
    rc_text, text, _ = cs.run_pycore(["analyze"] + list(args) + [core])
    if rc_text == 0 and "unreadable" in text:
        line = [l for l in text.splitlines() if "unreadable" in l][0]
        raise Failure("exit 0, yet the text says unreadable: %s" % line.strip())
    return report, rc, text


def threads_of(report):
    return [t for i in report["interpreters"] for t in i["threads"]]


def check_threads_in_core(report):
    core = set(report["process"]["threads"])
    for t in threads_of(report):
        if t["tid"] is not None and t["tid"] not in core:
            raise Failure("thread %s is reported, but the core has no such thread (%s)" % (t["tid"], sorted(core)))
    for i in report["interpreters"]:
        for t in i["stale_threads"]:
            if not t["stale"]:
                raise Failure("a thread of stale_threads is not marked stale")


def check_crash(report, truth, label):
    s = report["summary"]
    if s["thread"] != truth["tid"]:
        raise Failure("%s: summary names thread %s, the fault was in %s" % (label, s["thread"], truth["tid"]))
    want = "fault address 0x%x" % truth["address"]
    if not s["text"].startswith("SIGSEGV (11)") or want not in s["text"]:
        raise Failure("%s: summary %r, not SIGSEGV with %s" % (label, s["text"], want))
    sig = report["process"]["fault"] or report["process"]["signal"]
    if sig["address"] != "0x%x" % truth["address"] or sig["number"] != 11:
        raise Failure("%s: fault %s, the process read 0x%x" % (label, sig, truth["address"]))
    crashed = [t["tid"] for t in threads_of(report) if t["crashed"]]
    if crashed != [truth["tid"]]:
        raise Failure("%s: threads marked crashed %s, the fault was in %s" % (label, crashed, truth["tid"]))
    check_threads_in_core(report)


# ---------------------------------------------------------------------------
# faulthandler, on every interpreter, with and without debug files

def crash_python(work, script, pyargs, target=None):
    truth = os.path.join(work, "truth.json")
    before = cores_in(work)
    if target is None:
        p = subprocess.run([PYTHON] + pyargs + [os.path.join(SCENARIOS, script), truth], cwd=work,
                           preexec_fn=unlimited, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(60))
        rc, err = p.returncode, p.stderr
    else:
        proc = target.popen(pyargs + [target.scenario(work, script), target.inside(truth)], work,
                            preexec=unlimited, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = proc.communicate(timeout=scaled(60))
        rc = proc.returncode
    if rc != -signal.SIGSEGV:
        raise Failure("%s ended with %s, not SIGSEGV: %s" % (script, rc, err[-300:]))
    return wait_core(work, before), json.load(open(truth))


DEBUG = "/usr/lib/debug"


def package_files(pkg):
    """The files package PKG installed under /usr/lib/debug, or None when
    it is not installed."""
    p = subprocess.run(["dpkg-query", "-L", pkg], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        return None
    return [l for l in p.stdout.decode().splitlines() if l.startswith(DEBUG + "/") and os.path.isfile(l)]


# Builds, in a private mount namespace, a view of /usr/lib/debug without
# the files named (argv: the real tree's bind mount, then the files to
# leave out): a tmpfs over /usr/lib/debug holding a symbolic link to
# every other file.  Nothing changes outside the namespace.
VIEW_BUILDER = r"""
import os, sys
real, hide = sys.argv[1], set(sys.argv[2:])
for d, _, files in os.walk(real):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), real)
        if "/usr/lib/debug/" + rel in hide:
            continue
        os.makedirs(os.path.dirname(os.path.join("/usr/lib/debug", rel)), exist_ok=True)
        os.symlink(os.path.join(d, f), os.path.join("/usr/lib/debug", rel))
"""


def pycore_in_view(work, hide, args):
    """pycore ARGS with /usr/lib/debug as this machine has it but for the
    files HIDE (None: all of it hidden), in a private mount namespace;
    debuginfod off, no cached copies of debug files."""
    env = dict(os.environ)
    env.pop("DEBUGINFOD_URLS", None)
    if hide == []:
        return cs.run_pycore(args, env=env)
    real = os.path.join(work, "real-debug")
    os.makedirs(real, exist_ok=True)
    builder = os.path.join(work, "view.py")
    with open(builder, "w") as f:
        f.write(VIEW_BUILDER)
    setup = 'mount --bind /usr/lib/debug "$1" && mount -t tmpfs pycore-view /usr/lib/debug'
    if hide is not None:
        setup += ' && %s "$2" "$1" $(cat "$3")' % sys.executable
    listing = os.path.join(work, "hide.txt")
    with open(listing, "w") as f:
        f.write("\n".join(hide or []))
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        setup + ' && shift 3 && exec "$@"', "sh", real, builder, listing, cs.PYCORE,
                        "--no-debug-cache"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=scaled(300))
    if p.returncode not in (0, 1) and b"unshare" in p.stderr[:200]:
        raise Skip("no private mount namespace here: %s" % p.stderr.decode(errors="replace").strip()[:200])
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def analyze_view(work, core, hide, *args):
    """JSON, text and HTML reports of CORE under the view HIDE."""
    out = {}
    for fmt in ("json", "text", "html"):
        rc, text, err = pycore_in_view(work, hide, ["analyze", "--format", fmt] + list(args) + [core])
        if rc not in (0, 1):
            raise Failure("pycore exit %d (%s): %s" % (rc, fmt, err.strip()[:300]))
        out[fmt] = text
    report = cs.load_report(out["json"])
    if rc == 0 and "unreadable" in out["text"]:
        raise Failure("exit 0, yet the text says unreadable")
    return report, out["text"], out["html"]


def check_faulthandler_pair(work, cores, truth, hide, label, proof=None, extra=()):
    """The two crashes (plain, faulthandler) under one view: the fault in
    every format, faulthandler proven (by PROOF when given), one
    fingerprint with and without --native."""
    results = {}
    for name in ("plain", "faulthandler"):
        for native in ([], ["--native"]):
            report, text, html = analyze_view(work, cores[name], hide, *(list(extra) + native))
            check_crash(report, truth[name], "%s %s%s" % (label, name, " --native" if native else ""))
            results[name + (" --native" if native else "")] = (report, text, html)
    fh, text, html = results["faulthandler"]
    by = fh["process"]["reraised_by"]
    if not by or by["handler"] != "faulthandler" or "re-raised by faulthandler" not in fh["summary"]["text"]:
        raise Failure("%s: faulthandler's re-raise is not named: %s, %r" % (label, by, fh["summary"]["text"]))
    if proof and by["proof"] != proof:
        raise Failure("%s: faulthandler proven by %s, not %s" % (label, by["proof"], proof))
    if fh["process"]["fault"]["origin"] != "fault":
        raise Failure("%s: the origin is %s, not the fault" % (label, fh["process"]["fault"]["origin"]))
    if "re-raised by faulthandler" not in text or "re-raised by faulthandler" not in html:
        raise Failure("%s: the text or the HTML does not name faulthandler's re-raise" % label)
    if "fault address 0x%x" % truth["faulthandler"]["address"] not in html:
        raise Failure("%s: the HTML does not give the fault's address" % label)
    if results["plain"][0]["process"]["fault"] is not None:
        raise Failure("%s: a re-raise where there was none: %s" % (label, results["plain"][0]["process"]["fault"]))
    for native in ("", " --native"):
        a, b = results["plain" + native][0]["fingerprint"], results["faulthandler" + native][0]["fingerprint"]
        if a["hash"] != b["hash"]:
            raise Failure("%s: fingerprint%s %s without faulthandler, %s with: %s / %s" % (
                label, native, a["hash"], b["hash"], a["frames"], b["frames"]))
    t = [t for t in threads_of(results["faulthandler --native"][0]) if t["crashed"]][0]
    if t["fault_frame"] is None or t["frames"][t["fault_frame"]]["kind"] != "native":
        raise Failure("%s: the stack at the fault is not marked (fault_frame %s)" % (label, t["fault_frame"]))
    return results["plain --native"][0]["fingerprint"]["hash"], by["proof"]


def faulthandler_pair(work, target=None):
    cores, truth = {}, {}
    for name, pyargs in (("plain", []), ("faulthandler", ["-X", "faulthandler"])):
        core, truth[name] = crash_python(work, "reraise.py", pyargs, target)
        if truth[name]["faulthandler"] != (name == "faulthandler"):
            raise Failure("%s: faulthandler.is_enabled() is %s" % (name, truth[name]["faulthandler"]))
        cores[name] = core + "." + name
        os.rename(core, cores[name])
    return cores, truth


def debian_faulthandler(work):
    """Debian 12's python3.11 (stripped) under four views of its debug
    files: each view names the files it relied on."""
    if not os.access(PYTHON, os.X_OK):
        raise Skip("no %s (Debian package python3.11)" % PYTHON)
    py_dbg = (package_files("python3.11-dbg") or []) + (package_files("libpython3.11-dbg") or [])
    libc_dbg = package_files("libc6-dbg")
    cores, truth = faulthandler_pair(work)
    views = [("no debug file at all (/usr/lib/debug empty)", None, "faulthandler-table-scan")]
    if py_dbg:
        views.append(("python3.11-dbg's %d files, libc6-dbg's hidden" % len(py_dbg), libc_dbg or [],
                      "faulthandler-table-symbol"))
    if libc_dbg:
        views.append(("libc6-dbg's %d files, python3.11-dbg's hidden" % len(libc_dbg), py_dbg,
                      "faulthandler-table-scan"))
    if py_dbg and libc_dbg:
        views.append(("/usr/lib/debug as installed (python3.11-dbg and libc6-dbg)", [],
                      "faulthandler-table-symbol"))
    done = []
    for label, hide, proof in views:
        h, how = check_faulthandler_pair(work, cores, truth, hide, label, proof)
        done.append("%s: %s, %s" % (label, h, how))
    missing = [p for p, f in (("python3.11-dbg", py_dbg), ("libc6-dbg", libc_dbg)) if not f]
    return "fault 0x%x in thread %d; %s%s" % (truth["faulthandler"]["address"], truth["faulthandler"]["tid"],
                                              "; ".join(done),
                                              "; views needing %s not run (not installed)" % ", ".join(missing)
                                              if missing else "")


def other_faulthandler(work, name):
    target, why = None, None
    if name.startswith("sid"):
        root = os.environ.get("PYCORE_SID_ROOT") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pycore", "sid-root")
        if not os.path.isdir(root):
            raise Skip("no Debian unstable root (%s: scripts/sid-root builds it)" % root)
    target, why = interpreters.find(name)
    if not target:
        raise Skip(why)
    work2 = target.workdir("pycore-reraise-%s-" % name)
    try:
        cores, truth = faulthandler_pair(work2, target)
        h, how = check_faulthandler_pair(work2, cores, truth, [], name, extra=target.pycore_args())
    finally:
        cs.drop_scratch(TAP_, work2)
    return "%s: fault 0x%x in thread %d, fingerprint %s with and without, faulthandler proven by %s" % (
        target.exe, truth["faulthandler"]["address"], truth["faulthandler"]["tid"], h, how)


# ---------------------------------------------------------------------------
# signals from outside (kill, sigqueue), a timer's, alarm(), re-raised by a
# handler: a Python process with a handler of a small C library's, and gdb

SENDER = r"""
import ctypes, json, os, sys
target, signo, how, truth = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(truth, "w") as f:
    json.dump({"pid": os.getpid(), "uid": os.getuid(), "how": how}, f)
if how == "kill":
    os.kill(target, signo)
else:
    if ctypes.CDLL(None, use_errno=True).sigqueue(target, signo, ctypes.c_void_p(42)) != 0:
        sys.exit("sigqueue: errno %d" % ctypes.get_errno())
"""


def send(work, pid, signo, how):
    """The test's sender: a process of its own that records its pid and
    uid, then sends SIGNO to PID with kill or sigqueue."""
    truth = os.path.join(work, "sender.json")
    p = subprocess.run([sys.executable, "-c", SENDER, str(pid), str(signo), how, truth], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=scaled(30))
    if p.returncode != 0:
        raise Failure("the sender failed: %s" % p.stdout.decode(errors="replace")[-300:])
    return json.load(open(truth))


def wait_truth(path, proc, timeout=30):
    end = time.time() + scaled(timeout)
    while time.time() < end:
        if os.path.exists(path):
            return json.load(open(path))
        if proc.poll() is not None:
            if os.path.exists(path):  # written just before it ended
                return json.load(open(path))
            raise Failure("the process ended (%s) before writing its truth" % proc.returncode)
        time.sleep(0.05)
    raise Failure("no truth from the process in %d s" % timeout)


def build_handler(work):
    lib = os.path.join(work, "rehandler.so")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise Skip("no C compiler (Debian package gcc)")
    p = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", lib, os.path.join(SCENARIOS, "rehandler.c"), "-lrt"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise Failure("rehandler.c did not build: %s" % p.stdout.decode(errors="replace")[-300:])
    return lib


def core_of(work, argv, signo, how, env=None):
    """Run ARGV (it writes truth.json, then waits), send SIGNO from outside
    when HOW is kill or sigqueue, and take its core: (core, truth, sender)."""
    truth_path = os.path.join(work, "truth.json")
    for f in (truth_path, os.path.join(work, "sender.json")):
        if os.path.exists(f):
            os.remove(f)
    before = cores_in(work)
    proc = subprocess.Popen(argv, cwd=work, preexec_fn=unlimited, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    try:
        truth = wait_truth(truth_path, proc)
        sender = send(work, truth["pid"], signo, how) if how in ("kill", "sigqueue") else None
        _, err = proc.communicate(timeout=scaled(60))
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    want = signal.SIGABRT if how == "alarm" else signo
    if proc.returncode != -want:
        raise Failure("%s ended with %s, not %s: %s" % (os.path.basename(argv[-1]), proc.returncode,
                                                       signal.Signals(want).name, err[-300:]))
    core = wait_core(work, before)
    os.rename(core, core + ".%d" % proc.pid)
    return core + ".%d" % proc.pid, truth, sender


def all_formats(core, *args):
    report, rc, text = analyze(core, *args)
    rc_html, html, err = cs.run_pycore(["analyze", "--format", "html"] + list(args) + [core])
    if rc_html not in (0, 1):
        raise Failure("pycore exit %d (html): %s" % (rc_html, err.strip()))
    return report, text, html


def check_chain(report, text, html, truth, sender, origin, label, caught=None):
    """The re-raise traced to ORIGIN: the handler's thread, the signal it
    caught, its sender (SENDER's truth), in JSON, text and HTML."""
    f = report["process"]["fault"]
    by = report["process"]["reraised_by"]
    if not f or not by:
        raise Failure("%s: no re-raise traced: %r" % (label, report["summary"]["text"]))
    if f["origin"] != origin:
        raise Failure("%s: origin %s, not %s (%r)" % (label, f["origin"], origin, report["summary"]["text"]))
    want = caught or truth["signal"]
    if f["number"] != want or f["thread"] != truth["tid"] or by["thread"] != truth["tid"]:
        raise Failure("%s: caught %s in thread %s, the process took %d in %d" % (label, f["number"], f["thread"],
                                                                              want, truth["tid"]))
    if sender:
        if f["sender_pid"] != sender["pid"] or f["sender_uid"] != sender["uid"]:
            raise Failure("%s: sent by pid %s (uid %s), the sender was pid %d (uid %d)" % (
                label, f["sender_pid"], f["sender_uid"], sender["pid"], sender["uid"]))
        line = "sent by pid %d (uid %d) with %s" % (sender["pid"], sender["uid"], sender["how"])
        if report["summary"]["kind"] != "signal-sent":
            raise Failure("%s: summary kind %s for a signal sent from outside" % (label, report["summary"]["kind"]))
    elif origin == "unrecorded":
        line = "of unrecorded origin"
    else:
        line = {"timer": "SI_TIMER (timer expired)", "kernel": "SI_KERNEL (sent by the kernel)"}[origin]
    for fmt, out in (("summary", report["summary"]["text"]), ("text", text), ("HTML", html)):
        if line not in out or "re-raised by" not in out:
            raise Failure("%s: the %s does not say %r and the re-raise" % (label, fmt, line))
    check_threads_in_core(report)
    return "%s in thread %d, %s" % (line, truth["tid"], report["fingerprint"]["hash"])


def same_fingerprint(label, with_handler, twin):
    for native in ("", " --native"):
        a, b = with_handler[native]["fingerprint"], twin[native]["fingerprint"]
        if a["hash"] != b["hash"]:
            raise Failure("%s: fingerprint%s %s with the handler, %s without: %s / %s" % (
                label, native, a["hash"], b["hash"], a["frames"], b["frames"]))


def sent_cases(work):
    if not os.access(PYTHON, os.X_OK):
        raise Skip("no %s (Debian package python3.11)" % PYTHON)
    lib = build_handler(work)
    script = os.path.join(SCENARIOS, "sent.py")
    done = []
    for signo, how, origin in ((signal.SIGSEGV, "kill", "kill"), (signal.SIGABRT, "sigqueue", "sigqueue"),
                               (signal.SIGSEGV, "timer", "timer"), (signal.SIGALRM, "alarm", "kernel")):
        label = "%s by %s" % (signal.Signals(signo).name, how)
        reports = {}
        for handler in (True, False):
            if how == "alarm" and not handler:
                continue  # SIGALRM's default action dumps no core: no twin
            core, truth, sender = core_of(work, [PYTHON, script, os.path.join(work, "truth.json"),
                                                 lib if handler else "-", str(int(signo)), how, lib], signo, how)
            # read with /usr/lib/debug as installed, and with none of it
            # (the C library's trampoline then named by its code alone)
            for view, hide in (("", []), (", no debug files", None)):
                reports.setdefault(view, {})[handler] = {}
                for native in ("", " --native"):
                    r, text, html = analyze_view(work, core, hide, *(["--native"] if native else []))
                    reports[view][handler][native] = r
                    if handler:
                        got = check_chain(r, text, html, truth, sender, origin, label + view + native,
                                          caught=int(signo))
                    elif r["process"]["fault"] is not None:
                        raise Failure("%s without a handler: a re-raise traced: %s" % (label, r["process"]["fault"]))
        for view in reports:
            if False in reports[view]:
                same_fingerprint(label + view, reports[view][True], reports[view][False])
        done.append("%s: %s" % (label, got))
    return "; ".join(done) + " (each with /usr/lib/debug as installed and with it empty)"


def handler_waits(work):
    """A thread's fault caught by a handler that kill()s the process and
    then waits in code without call frame information: the main thread
    takes the kill and the core is its, while the faulting thread's
    handler frame lies past the code without CFI (uWSGI's handler, whose
    exit(1) after kill() was caught in a library's fini code, failed so
    once in twenty runs)."""
    if not os.access(PYTHON, os.X_OK):
        raise Skip("no %s (Debian package python3.11)" % PYTHON)
    lib = build_handler(work)
    reports = {}
    for handler in (True, False):
        core, truth, _ = core_of(work, [PYTHON, os.path.join(SCENARIOS, "sent.py"), os.path.join(work, "truth.json"),
                                        lib if handler else "-", str(int(signal.SIGSEGV)), "fault"],
                                 signal.SIGSEGV, "fault")
        reports[handler] = {}
        for native in ("", " --native"):
            label = "%s%s" % ("handler" if handler else "no handler", native)
            r, text, html = all_formats(core, *(["--native"] if native else []))
            check_crash(r, truth, label)
            reports[handler][native] = r
            by = r["process"]["reraised_by"]
            if not handler:
                if by is not None:
                    raise Failure("%s: a re-raise traced: %s" % (label, by))
                continue
            if not by or by["thread"] != truth["tid"] or by["received_by"] != truth["receiver"]:
                raise Failure("%s: re-raise %s; the fault was in %d, the kill taken by %d" % (
                    label, by, truth["tid"], truth["receiver"]))
            if by["function"] != "on_signal" or "re-raised by" not in text or "re-raised by" not in html:
                raise Failure("%s: the handler is %s, not on_signal, or a format does not say the re-raise" % (
                    label, by["function"]))
            if native:
                t = [t for t in threads_of(r) if t["tid"] == truth["tid"]][0]
                names = [(f["function"], f["found_by"]) for f in t["frames"] if f["kind"] == "native"]
                if ("on_signal", "scan") not in names or "rh_wait_nocfi" not in [n for n, _ in names]:
                    raise Failure("%s: the handler's frames past rh_wait_nocfi: %s" % (label, names))
    same_fingerprint("handler waiting without CFI", reports[True], reports[False])
    return "fault in thread %d, kill taken by thread %d; on_signal found by a scan past rh_wait_nocfi; " \
        "fingerprint %s with and without the handler" % (truth["tid"], truth["receiver"],
                                                         reports[True][" --native"]["fingerprint"]["hash"])


def gdb_killed(work, signo):
    gdb = shutil.which("gdb")
    if not gdb:
        raise Skip("no gdb (Debian package gdb)")
    reports = {}
    for twin in (False, True):
        env = dict(os.environ, RERAISE_TRUTH=os.path.join(work, "truth.json"), RERAISE_SIGNAL=str(int(signo)),
                   RERAISE_TWIN="1" if twin else "0")
        core, truth, sender = core_of(work, [gdb, "-nx", "-batch", "-ex", "python exec(open(%r).read())" %
                                             os.path.join(SCENARIOS, "gdb_wait.py")], signo, "kill", env=env)
        # kill() to a process: the kernel gives it to the main thread when
        # that thread does not block it (kernel/signal.c, complete_signal)
        if truth["tid"] != truth["pid"] or truth["tid"] not in truth["takers"]:
            raise Skip("gdb's Python ran in thread %d of %d, which blocks %s (threads taking it: %s)" % (
                truth["tid"], truth["pid"], signal.Signals(signo).name, truth["takers"]))
        truth["signal"] = int(signo)
        reports[twin] = {}
        for native in ("", " --native"):
            r, text, html = all_formats(core, *(["--native"] if native else []))
            libc = [m for m in r["process"]["modules"] if (m["path"] or "").endswith("/libc.so.6")]
            if not libc or int(libc[0].get("base") or libc[0]["start"], 16) != truth["libc_base"]:
                raise Skip("pycore places libc.so.6 at %s, gdb's dynamic loader at 0x%x (gdb's handler maps "
                           "pieces of it again: modules placed by the loader's list, issue 36, come first)" % (
                               libc and (libc[0].get("base") or libc[0]["start"]), truth["libc_base"]))
            reports[twin][native] = r
            if twin:
                if r["process"]["fault"] is not None:
                    raise Failure("gdb without its handler: a re-raise traced: %s" % r["process"]["fault"])
                continue
            f = r["process"]["fault"]
            origin = f["origin"] if f else "kill"
            got = check_chain(r, text, html, truth, sender if origin == "kill" else None, origin,
                              "gdb %s%s" % (signal.Signals(signo).name, native))
            if origin not in ("kill", "unrecorded"):
                raise Failure("gdb: origin %s of a kill" % origin)
            mod = r["process"]["reraised_by"]["module"] or ""
            if os.path.basename(mod) != "gdb":
                raise Failure("gdb: the handler's frame is in %s, not gdb" % mod)
    same_fingerprint("gdb", reports[False], reports[True])
    return "%s (sender pid %d); gdb's handler in %s" % (got, sender["pid"], mod)


TAP_ = None


def main():
    global TAP_
    tap = TAP_ = TAP()
    cases = [("faulthandler on Debian's python3.11, with and without its debug files", debian_faulthandler, ())]
    for name in ("py3.12", "py3.13", "sid3.13"):
        cases.append(("faulthandler on %s: the fault behind the re-raise, one fingerprint" % name,
                      other_faulthandler, (name,)))
    cases += [("a handler's re-raise of kill, sigqueue, a timer, alarm(): the sender and the handler named",
               sent_cases, ()),
              ("a thread's fault, its handler's kill() taken by the main thread while the handler waits in "
               "code without CFI", handler_waits, ()),
              ("gdb (Python inside) killed with SIGSEGV from outside, its handler's re-raise traced",
               gdb_killed, (signal.SIGSEGV,)),
              ("gdb (Python inside) killed with SIGABRT from outside, its handler's re-raise traced",
               gdb_killed, (signal.SIGABRT,))]
    for name, fn, args in cases:
        work = tempfile.mkdtemp(prefix="pycore-reraise-")
        cs.run_in(tap, name, work, fn, work, *args)
    for name, fn in (("fork() from C with an RLock held: the child's threads, stale states apart", forked_child),
                     ("three-million-entry dict, set, list, tuple", big_containers),
                     ("Apache + mod_wsgi: a request that segfaults", apache),
                     ("uWSGI prefork with a thread at import: hung worker, crashed worker", uwsgi)):
        work = tempfile.mkdtemp(prefix="pycore-reraise-")
        cs.run_in(tap, name, work, fn, work)
    cs.schema_summary(tap)
    return tap.done()


# ---------------------------------------------------------------------------
# fork() from C while a thread holds an RLock

def forked_child(work):
    if not os.access(PYTHON, os.X_OK):
        raise Skip("no %s (Debian package python3.11)" % PYTHON)
    truth_path = os.path.join(work, "truth.json")
    before = cores_in(work)
    p = subprocess.run([PYTHON, os.path.join(SCENARIOS, "forked.py"), truth_path], cwd=work,
                       preexec_fn=unlimited, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(60))
    if p.returncode != 0:
        raise Failure("forked.py: the child did not end in SIGSEGV (exit %s): %s" % (p.returncode, p.stderr[-300:]))
    core, truth = wait_core(work, before), json.load(open(truth_path))
    report, _, text = analyze(core)
    if report["process"]["pid"] != truth["pid"] or sorted(report["process"]["threads"]) != truth["tasks"]:
        raise Failure("the core is not the child's: %s %s" % (report["process"]["pid"], report["process"]["threads"]))
    check_crash(report, truth, "child")
    stale = [t for i in report["interpreters"] for t in i["stale_threads"]]
    if truth["holder_ident"] not in [t["ident"] for t in stale]:
        raise Failure("the parent's holder thread state (ident %d) is not kept apart as stale: %s" %
                      (truth["holder_ident"], [(t["tid"], t["ident"]) for t in stale]))
    w = [t for t in threads_of(report) if t["tid"] == truth["waiter_tid"]]
    if not w or not w[0]["waiting_on"]:
        raise Failure("the child's waiter (tid %d) waits on nothing in the report" % truth["waiter_tid"])
    g = w[0]["waiting_on"]
    if g["owner"] is not None or g["owner_ident"] != truth["holder_ident"] or g["owner_in_process"] is not False:
        raise Failure("the RLock held across fork: owner %s, owner_ident %s, owner_in_process %s; the holder's "
                      "ident is %d, not a thread of the child" % (g["owner"], g["owner_ident"],
                                                                 g["owner_in_process"], truth["holder_ident"]))
    if "Thread state left by fork" not in text or "not a thread of this process" not in text:
        raise Failure("the text does not show the stale thread state apart")
    return "%d stale thread states apart; the RLock's owner ident %d not in the child" % (len(stale),
                                                                                       truth["holder_ident"])


# ---------------------------------------------------------------------------
# three million entries

def big_containers(work):
    if not os.access(PYTHON, os.X_OK):
        raise Skip("no %s (Debian package python3.11)" % PYTHON)
    core, truth_path = cs.take_gcore(PYTHON, "bigdict", work)
    truth = json.load(open(truth_path))
    report, rc, text = analyze(core, "--locals")
    if rc != 0:
        raise Failure("exit %d for containers the core holds whole" % rc)
    frames = [f for t in threads_of(report) for f in t["frames"] if f["function"] == "hold"]
    if not frames:
        raise Failure("no frame of hold()")
    got = dict((l["name"], l) for l in frames[0]["locals"])
    for name, n in truth.items():
        l = got.get(name)
        if not l or l["repr"] is None or l["length"] != n:
            raise Failure("%s: %s, the process says len() %d" % (name, l and (l["length"], l["error"]), n))
    return "%d entries each, lengths exact, exit 0" % truth["big_dict"]


# ---------------------------------------------------------------------------
# servers

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def request(port, path, timeout=5):
    try:
        return urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout).read()
    except Exception as e:  # the crashing request gets no answer
        return e


WSGI_APP = '''
import ctypes, json, os, threading, time
TRUTH = %(truth)r
def application(environ, start_response):
    path = environ.get("PATH_INFO")
    if path in ("/crash", "/hang"):
        with open(TRUTH + path[1:], "w") as f:
            json.dump({"pid": os.getpid(), "tid": threading.get_native_id(), "address": 0x7890,
                       "tasks": sorted(int(t) for t in os.listdir("/proc/self/task"))}, f)
        if path == "/crash":
            ctypes.string_at(0x7890)
        time.sleep(1000)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
'''


def apache(work):
    apache2 = shutil.which("apache2") or "/usr/sbin/apache2"
    modules = "/usr/lib/apache2/modules"
    if not os.access(apache2, os.X_OK):
        raise Skip("no apache2 (Debian package apache2)")
    if not os.path.exists(os.path.join(modules, "mod_wsgi.so")):
        raise Skip("no mod_wsgi (Debian package libapache2-mod-wsgi-py3)")
    os.chmod(work, 0o777)  # the children run as www-data: they write the truth and the core here
    port = free_port()
    with open(os.path.join(work, "app.wsgi"), "w") as f:
        f.write(WSGI_APP % {"truth": os.path.join(work, "truth-")})
    user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
    conf = os.path.join(work, "httpd.conf")
    with open(conf, "w") as f:
        f.write("""ServerRoot %(w)s
ServerName localhost
Listen 127.0.0.1:%(port)d
LoadModule mpm_event_module %(m)s/mod_mpm_event.so
LoadModule authz_core_module %(m)s/mod_authz_core.so
LoadModule wsgi_module %(m)s/mod_wsgi.so
PidFile %(w)s/httpd.pid
ErrorLog %(w)s/error.log
%(user)sCoreDumpDirectory %(w)s
StartServers 1
ServerLimit 1
ThreadsPerChild 4
MaxRequestWorkers 4
WSGIScriptAlias / %(w)s/app.wsgi
<Directory %(w)s>
Require all granted
</Directory>
""" % {"w": work, "port": port, "m": modules, "user": user})
    before = cores_in(work)
    start = subprocess.run([apache2, "-f", conf, "-k", "start"], preexec_fn=unlimited, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=scaled(30))
    if start.returncode != 0:
        raise Failure("apache2 did not start: %s" % start.stdout.decode(errors="replace")[-400:])
    try:
        request(port, "/")
        request(port, "/crash")
        core = wait_core(work, before)
    finally:
        subprocess.run([apache2, "-f", conf, "-k", "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=scaled(30))
        pidfile = os.path.join(work, "httpd.pid")
        for _ in range(50):
            if not os.path.exists(pidfile):
                break
            time.sleep(0.1)
    truth = json.load(open(os.path.join(work, "truth-crash")))
    report, _, text = analyze(core)
    check_crash(report, truth, "apache")
    for native in ([], ["--native"]):
        r2, _, _ = analyze(core, *native)
        check_crash(r2, truth, "apache --native" if native else "apache")
    by = report["process"]["reraised_by"]
    if report["process"]["signal"]["sender_pid"] == truth["pid"] and (not by or by["handler"] != "Apache"):
        raise Failure("Apache's re-raise is not named: %s" % by)
    return "fault 0x%x in thread %d; %s" % (truth["address"], truth["tid"], report["summary"]["text"][-60:])


UWSGI_APP = '''
import ctypes, json, os, signal, threading, time
TRUTH = %(truth)r
def bg():
    while True:
        time.sleep(1)
b = threading.Thread(target=bg, name="bg-at-import", daemon=True)
b.start()
with open(TRUTH + "master", "w") as f:
    json.dump({"pid": os.getpid(), "bg_ident": b.ident, "bg_tid": b.native_id}, f)
def note(name):
    with open(TRUTH + name, "w") as f:
        json.dump({"pid": os.getpid(), "tid": threading.get_native_id(), "address": 0x7890,
                   "tasks": sorted(int(t) for t in os.listdir("/proc/self/task"))}, f)
def crasher(how):
    # uWSGI's core threads block every signal (core/loop.c,
    # uwsgi_setup_thread_req), and a thread inherits its creator's mask:
    # a fault with SIGSEGV blocked is delivered with the default action
    # (the kernel skips the handler), so "handler" unblocks it and
    # uwsgi_segfault runs, "plain" blocks it: the same bug without it
    signal.pthread_sigmask(signal.SIG_UNBLOCK if how == "handler" else signal.SIG_BLOCK, [signal.SIGSEGV])
    note("crash-" + how)
    ctypes.string_at(0x7890)
def application(environ, start_response):
    path = environ.get("PATH_INFO")
    if path == "/hang":
        note("hang")
        time.sleep(1000)
    if path in ("/crash-handler", "/crash-plain"):
        # from a thread of its own: uwsgi_segfault kill()s the process and
        # then exit(1)s, and the signal waits if every other thread blocks
        # it (a worker's main thread faulting: its core threads block it)
        c = threading.Thread(target=crasher, args=(path[7:],), name="crasher")
        c.start()
        c.join()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
'''


def uwsgi(work):
    exe = shutil.which("uwsgi")
    if not exe:
        raise Skip("no uwsgi (Debian package uwsgi)")
    if not glob.glob("/usr/lib/uwsgi/plugins/python3*_plugin.so"):
        raise Skip("no uWSGI python3 plugin (Debian package uwsgi-plugin-python3)")
    port = free_port()
    app = os.path.join(work, "app.py")
    with open(app, "w") as f:
        f.write(UWSGI_APP % {"truth": os.path.join(work, "truth-")})
    before = cores_in(work)
    proc = subprocess.Popen([exe, "--plugin", "python3", "--http-socket", "127.0.0.1:%d" % port, "--wsgi-file", app,
                             "--processes", "2", "--threads", "2", "--master", "--die-on-term"],
                            cwd=work, preexec_fn=unlimited, stdout=open(os.path.join(work, "uwsgi.log"), "w"),
                            stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            if not isinstance(request(port, "/", 1), Exception):
                break
            time.sleep(0.1)
        threading.Thread(target=request, args=(port, "/hang", 60), daemon=True).start()
        hang = os.path.join(work, "truth-hang")
        for _ in range(100):
            if os.path.exists(hang) and os.path.getsize(hang):
                break
            time.sleep(0.1)
        time.sleep(0.3)
        hung = json.load(open(hang))
        g = subprocess.run(["gcore", "-o", os.path.join(work, "hung"), str(hung["pid"])], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=scaled(120))
        hung_core = os.path.join(work, "hung.%d" % hung["pid"])
        if g.returncode != 0 or not os.path.exists(hung_core):
            raise Failure("gcore failed: %s" % g.stdout.decode(errors="replace")[-300:])
        # The hung worker ended (the master respawns it): uwsgi_segfault's
        # kill() of a worker whose other threads all block SIGSEGV stays
        # pending, and the worker exit(1)s with no core; in a fresh worker
        # the signal finds a thread.  (Tried again should the worker still
        # exit without a core: the log says "died" with no signal then.)
        os.kill(hung["pid"], signal.SIGKILL)
        log = os.path.join(work, "uwsgi.log")
        if not wait_until(lambda: "Respawned uWSGI worker" in open(log, errors="replace").read(), 30):
            raise Failure("the hung worker %d, ended, was not respawned (see uwsgi.log)" % hung["pid"])
        cores = {}
        for how in ("plain", "handler"):
            for attempt in range(3):
                request(port, "/crash-" + how)
                try:
                    # (renamed: the next core may have the same name)
                    cores[how] = wait_core(work, before, timeout=8) + "." + how
                    os.rename(cores[how][:-len(how) - 1], cores[how])
                    before = cores_in(work)
                    break
                except Failure:
                    continue
            if how not in cores:
                raise Failure("no %s crash of a uWSGI worker left a core in 3 tries (see uwsgi.log)" % how)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=scaled(30))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    master = json.load(open(os.path.join(work, "truth-master")))
    # the hung worker: every thread the core's, the parent's thread states apart
    report, _, _ = analyze(hung_core)
    if sorted(report["process"]["threads"]) != hung["tasks"]:
        raise Failure("hung worker: core threads %s, /proc/self/task said %s" % (report["process"]["threads"],
                                                                              hung["tasks"]))
    check_threads_in_core(report)
    t = [t for t in threads_of(report) if t["tid"] == hung["tid"]]
    if not t or not any(f["function"] == "application" for f in t[0]["frames"]):
        raise Failure("hung worker: thread %d with application() is not reported" % hung["tid"])
    stale = [t for i in report["interpreters"] for t in i["stale_threads"]]
    live_idents = [t["ident"] for t in threads_of(report)]
    if master["bg_tid"] in [t["tid"] for t in threads_of(report)]:
        raise Failure("the master's thread %d is reported as a thread of the worker" % master["bg_tid"])
    # uWSGI's own record of its handler: uwsgi_segfault's first line
    # (core/uwsgi.c), once per worker it ran in
    log = open(os.path.join(work, "uwsgi.log"), errors="replace").read()
    handled = {}
    reports = {}
    for how in ("plain", "handler"):
        crash = json.load(open(os.path.join(work, "truth-crash-" + how)))
        handled[how] = "!!! uWSGI process %d got Segmentation Fault !!!" % crash["pid"] in log
        if handled[how] != (how == "handler"):
            raise Failure("%s crash: uWSGI's log %s its handler's line for worker %d" % (
                how, "has" if handled[how] else "lacks", crash["pid"]))
        for native in ([], ["--native"]):
            r, _, text = analyze(cores[how], *native)
            check_crash(r, crash, "%s crash%s" % (how, " --native" if native else ""))
            reports[how + (" --native" if native else "")] = r
        r = reports[how]
        by = r["process"]["reraised_by"]
        sent = r["process"]["signal"]["sender_pid"]
        if how == "plain" and (by or r["process"]["fault"] is not None or sent is not None):
            raise Failure("plain crash: re-raise %s, fault %s, sender %s: the kernel raised it" % (
                by, r["process"]["fault"], sent))
        if how == "handler":
            if sent != crash["pid"]:
                raise Failure("handler crash: the core's signal was sent by %s, not by worker %d" % (sent, crash["pid"]))
            if not by or by["handler"] != "uWSGI" or by["function"] != "uwsgi_segfault" or \
               "re-raised by uWSGI" not in r["summary"]["text"]:
                raise Failure("uWSGI's re-raise is not named: %s, %r" % (by, r["summary"]["text"]))
            if by["thread"] != crash["tid"]:
                raise Failure("uWSGI's handler ran in thread %s, the fault was in %d" % (by["thread"], crash["tid"]))
    for native in ("", " --native"):
        a, b = reports["plain" + native]["fingerprint"], reports["handler" + native]["fingerprint"]
        if a["hash"] != b["hash"]:
            raise Failure("fingerprint%s %s without uWSGI's handler, %s with: %s / %s" % (
                native, a["hash"], b["hash"], a["frames"], b["frames"]))
    by = reports["handler"]["process"]["reraised_by"]
    return "hung worker: %d threads, %d stale thread states apart (master's bg ident %s %s); crash in %d " \
        "re-raised by %s (received by %s), fingerprint %s with and without the handler" % (
            len(threads_of(report)), len(stale), master["bg_ident"],
            "live" if master["bg_ident"] in live_idents else "not live", crash["tid"], by["handler"],
            by["received_by"], reports["handler --native"]["fingerprint"]["hash"])


if __name__ == "__main__":
    sys.exit(main())
