"""Crashes where Python really runs, from real processes (#27): a fault a
handler re-raised (faulthandler, Apache with mod_wsgi, uWSGI), thread
states fork() left, a lock held across fork(), containers of millions.

Truth comes from the processes: the faulting thread's native id and the
address it reads, written before the fault; /proc/self/task and thread
idents of a forked child; a container's len().  For every crash the
summary must name the faulting thread, the original signal and the fault
address; no thread may be reported that the core does not hold unless it
is kept apart as stale; an exit-0 report holds no "unreadable".  The
faulthandler run must fingerprint as the same crash without it (with and
without --native).  Apache (Debian's apache2, libapache2-mod-wsgi-py3)
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
from pycoretest.env import scaled

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
# faulthandler

def crash_python(work, script, pyargs):
    truth = os.path.join(work, "truth.json")
    before = cores_in(work)
    p = subprocess.run([PYTHON] + pyargs + [os.path.join(SCENARIOS, script), truth], cwd=work,
                       preexec_fn=unlimited, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(60))
    if p.returncode != -signal.SIGSEGV:
        raise Failure("%s ended with %s, not SIGSEGV: %s" % (script, p.returncode, p.stderr[-300:]))
    return wait_core(work, before), json.load(open(truth))


def faulthandler_same(work):
    if not os.access(PYTHON, os.X_OK):
        raise Skip("no %s (Debian package python3.11)" % PYTHON)
    results = {}
    for name, pyargs in (("plain", []), ("faulthandler", ["-X", "faulthandler"])):
        core, truth = crash_python(work, "reraise.py", pyargs)
        if truth["faulthandler"] != (name == "faulthandler"):
            raise Failure("%s: faulthandler.is_enabled() is %s" % (name, truth["faulthandler"]))
        for native in ([], ["--native"]):
            report, _, text = analyze(core, *native)
            label = "%s%s" % (name, " --native" if native else "")
            check_crash(report, truth, label)
            results[label] = report
        os.rename(core, core + "." + name)
    fh = results["faulthandler"]
    by = fh["process"]["reraised_by"]
    if not by or by["handler"] != "faulthandler" or "re-raised by faulthandler" not in fh["summary"]["text"]:
        raise Failure("faulthandler's re-raise is not named: %s, %r" % (by, fh["summary"]["text"]))
    if results["plain"]["process"]["fault"] is not None:
        raise Failure("a fault behind a re-raise where there was none: %s" % results["plain"]["process"]["fault"])
    for native in ("", " --native"):
        a, b = results["plain" + native]["fingerprint"], results["faulthandler" + native]["fingerprint"]
        if a["hash"] != b["hash"]:
            raise Failure("fingerprint%s %s without faulthandler, %s with: %s / %s" % (native, a["hash"], b["hash"],
                                                                                      a["frames"], b["frames"]))
    fr = results["faulthandler --native"]
    t = [t for t in threads_of(fr) if t["crashed"]][0]
    if t["fault_frame"] is None or t["frames"][t["fault_frame"]]["kind"] != "native":
        raise Failure("the faulting thread's stack at the fault is not marked (fault_frame %s)" % t["fault_frame"])
    return "fingerprint %s with and without, fault 0x%x in thread %d" % (
        results["plain --native"]["fingerprint"]["hash"], truth["address"], truth["tid"])


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
        # (tried again should the worker still exit without a core: the log
        # says "died" with no signal then)
        cores = {}
        for how in ("plain", "handler"):
            for attempt in range(3):
                request(port, "/crash-" + how)
                try:
                    # (renamed: the next core may have the same name)
                    cores[how] = wait_core(work, before, timeout=scaled(8)) + "." + how
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


def main():
    tap = TAP()
    for name, fn in (("faulthandler: the fault behind the re-raise, one fingerprint", faulthandler_same),
                     ("fork() from C with an RLock held: the child's threads, stale states apart", forked_child),
                     ("three-million-entry dict, set, list, tuple", big_containers),
                     ("Apache + mod_wsgi: a request that segfaults", apache),
                     ("uWSGI prefork with a thread at import: hung worker, crashed worker", uwsgi)):
        work = tempfile.mkdtemp(prefix="pycore-reraise-")
        cs.run_in(tap, name, work, fn, work)
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
