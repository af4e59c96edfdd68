"""The Python package of the wheel (src/pypkg/pycore) from the source tree:
its API against the binary's own JSON, and its pytest plugin under
Debian's pytest (with pytest-xdist and pytest-timeout where installed) on
tests that crash or hang the process running them
(scenarios/pytest_victims.py, each recording its own truth first: its
process, thread, Python stack and fault address).

- api: pycore.analyze(dump) equals `pycore analyze --format json`; a live
  process by pid; errors as PycoreError with the exit status and the
  one-line reason; pycore.batch's records; python -m pycore;
- a test that segfaults (ctypes) or aborts in pytest's own process: the
  handler's pycore child reads it live, its report on standard error and
  saved, then the signal takes its course (faulthandler's traceback too,
  the process dies of it);
- the same segfault in a pytest-xdist worker: the "worker crashed"
  failure carries the worker's report;
- a deadlocked test past pytest-timeout's timeout: the failure carries
  the report of the process a moment before; --pycore-timeout alone on a
  slow test: the report printed, the test passes;
- a test whose child process segfaults, its kernel core left in the
  test's tmp_path: the failure carries pycore's report of the core;
- a passing test with the plugin on: the same result, no report made.

Output: TAP (pycoretest.tap).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from pycoretest.env import PYCORE, SRCDIR, scaled
from pycoretest.run import run_in, run_pycore
from pycoretest.schema import load_report, schema_summary
from pycoretest.tap import TAP, Failure, Skip

PYPKG = os.path.join(SRCDIR, "src", "pypkg")
VICTIMS = os.path.join(SRCDIR, "src", "tests", "e2e", "scenarios", "pytest_victims.py")
CRASH_LIB = os.path.join(os.path.dirname(os.path.abspath(PYCORE)), "libpycore-crash.so")
SAMPLE = os.path.join(SRCDIR, "testdata", "sample-py3.13-threads.core.zst")
# Debian's pytest is for Debian's python3
PYTEST_PYTHON = "/usr/bin/python3"


def has_module(name):
    return subprocess.run([PYTEST_PYTHON, "-c", "import " + name], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def need(name, package):
    if not os.path.exists(PYTEST_PYTHON) or not has_module(name):
        raise Skip("%s is not installed for %s (Debian package %s)" % (name, PYTEST_PYTHON, package))


def env(work, **more):
    e = dict(os.environ)
    e.update(PYTHONPATH=PYPKG, PYCORE=PYCORE, PYCORE_CRASH_LIB=CRASH_LIB, VICTIM_TRUTH=work,
             PYTHONDONTWRITEBYTECODE="1")
    e.pop("PYTEST_ADDOPTS", None)
    e.update(more)
    return e


def python(code, work, *args):
    p = subprocess.run([PYTEST_PYTHON, "-c", code] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env(work), timeout=scaled(120))
    if p.returncode != 0:
        raise Failure("python: exit %d: %s" % (p.returncode, p.stderr.decode()[-2000:]))
    return p.stdout.decode()


def pytest(work, args, timeout=120, **more):
    """pytest ARGS in WORK (test_victims.py there): (exit status, stdout,
    stderr); a negative status is the signal that ended it."""
    p = subprocess.run([PYTEST_PYTHON, "-m", "pytest", "-p", "no:cacheprovider"] + args, cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(work, **more),
                       timeout=scaled(timeout))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def scratch():
    work = tempfile.mkdtemp(prefix="pycore-pytest-")
    shutil.copy(VICTIMS, os.path.join(work, "test_victims.py"))
    return work


def truth_of(work, name):
    path = os.path.join(work, name + ".json")
    if not os.path.exists(path):
        raise Failure("the test %s recorded no truth (it did not run?)" % name)
    with open(path) as f:
        return json.load(f)


def artifact(work, nodeid):
    base = os.path.join(work, "pycore-reports", nodeid.replace("/", "_").replace(":", "_"))
    if not os.path.exists(base + ".json"):
        have = os.listdir(os.path.join(work, "pycore-reports")) if os.path.isdir(
            os.path.join(work, "pycore-reports")) else "no pycore-reports directory"
        raise Failure("no saved report %s.json (%s)" % (base, have))
    with open(base + ".json") as f:
        report = load_report(f.read(), "the plugin's saved report")
    with open(base + ".txt") as f:
        text = f.read()
    return report, text


def thread_of(report, tid):
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["tid"] == tid:
                return t
    raise Failure("the report has no thread %d (threads %s)" % (
        tid, [t["tid"] for i in report["interpreters"] for t in i["threads"]]))


def same_stack(thread, truth, inner_files=()):
    """THREAD's Python frames (innermost first) are the truth's stack
    (outermost first), after innermost frames of INNER_FILES (the C call's
    Python wrapper: ctypes' string_at); and the truth's marker is among
    the innermost recorded frame's locals."""
    frames = [f for f in thread["frames"] if f["kind"] == "python"]
    while frames and inner_files and any(frames[0]["file"].endswith(s) for s in inner_files):
        frames = frames[1:]
    got = [(f["file"], f["line"], f["function"]) for f in frames]
    want = [(f["file"], f["line"], f["function"]) for f in reversed(truth["stack"])]
    if got != want:
        raise Failure("thread %d's Python frames (innermost first):\n  %s\nthe process recorded:\n  %s" % (
            thread["tid"], "\n  ".join(map(str, got)), "\n  ".join(map(str, want))))
    names = json.dumps(frames[0].get("locals"))
    if truth["marker"] not in names:
        raise Failure("the marker %r is not among %s's locals: %s" % (truth["marker"], want[0][2], names[:500]))
    return len(got)


# -- the API

def check_api(tap):
    work = scratch()
    try:
        def analyze():
            if not os.path.exists(SAMPLE):
                raise Skip("no sample core %s" % SAMPLE)
            out = python("import json, pycore; print(json.dumps(pycore.analyze(%r, locals=True, native=True)))"
                         % SAMPLE, work)
            rc, binary_out, err = run_pycore(["analyze", "--format", "json", "--locals", "--native", SAMPLE])
            if rc != 0:
                raise Failure("pycore exit %d: %s" % (rc, err))
            if json.loads(out) != load_report(binary_out):
                raise Failure("pycore.analyze's result differs from the binary's JSON")
            return "pycore.analyze(sample, locals=True, native=True) == pycore analyze --format json --locals --native"

        def live():
            need("pytest", "python3-pytest")
            code = ("import os, pycore, subprocess, sys\n"
                    "p = subprocess.Popen([sys.executable, '-c', 'import sys, time; print(1, flush=True); "
                    "time.sleep(60)'], stdout=subprocess.PIPE)\n"
                    "p.stdout.readline()\n"
                    "r = pycore.analyze(p.pid)\n"
                    "p.kill()\n"
                    "print(r['process']['pid'] == p.pid, r['summary']['kind'])\n")
            out = python(code, work).split()
            if out != ["True", "snapshot"]:
                raise Failure("pycore.analyze(pid): %s" % out)
            return "pycore.analyze(pid) reads the running process"

        def errors():
            garbage = os.path.join(work, "garbage.core")
            with open(garbage, "wb") as f:
                f.write(b"not a dump at all" * 100)
            code = ("import pycore\n"
                    "for target in (%r, 4194304 + 7):\n"
                    "    try:\n"
                    "        pycore.analyze(target)\n"
                    "        print('no error')\n"
                    "    except pycore.PycoreError as e:\n"
                    "        print(e.status, e.reason.count('\\n'), bool(e.reason))\n" % garbage)
            got = python(code, work).split("\n")[:2]
            if got != ["4 0 True", "7 0 True"]:
                raise Failure("PycoreError (status, newlines, reason given) for garbage and a missing pid: %s"
                              % got)
            return "garbage: PycoreError 4, a missing process: 7, each with its one-line reason"

        def batch():
            if not os.path.exists(SAMPLE):
                raise Skip("no sample core %s" % SAMPLE)
            garbage = os.path.join(work, "garbage2.core")
            with open(garbage, "wb") as f:
                f.write(b"\x7fELF nothing" * 50)
            code = ("import pycore\n"
                    "for r in pycore.batch([%r, %r], args=['--ordered']):\n"
                    "    print(r['input']['path'], (r.get('error') or {}).get('code'), 'fingerprint' in r)\n"
                    % (SAMPLE, garbage))
            got = python(code, work).strip().split("\n")
            want = ["%s None True" % SAMPLE, "%s format False" % garbage]
            if got != want:
                raise Failure("pycore.batch: %s, want %s" % (got, want))
            return "two records, in order: a report and a format error"

        def module():
            p = subprocess.run([PYTEST_PYTHON, "-m", "pycore", "--version"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env(work))
            rc, out, _ = run_pycore(["--version"])
            if p.returncode != 0 or p.stdout.decode() != out:
                raise Failure("python -m pycore --version: exit %d, %r; the binary: %r"
                              % (p.returncode, p.stdout.decode(), out))
            api = python("import pycore; print(pycore.version())", work).strip()
            if api != out.split()[-1]:
                raise Failure("pycore.version() %r, the binary says %r" % (api, out.strip()))
            return out.strip() + "; pycore.version() the same"

        tap.run("api: analyze(dump) equals the binary's JSON", analyze)
        tap.run("api: analyze(pid)", live)
        tap.run("api: errors", errors)
        tap.run("api: batch", batch)
        tap.run("api: python -m pycore, pycore.version()", module)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- the plugin

def in_process_segfault(work):
    need("pytest", "python3-pytest")
    rc, out, err = pytest(work, ["-p", "pycore", "test_victims.py::test_segfault"])
    truth = truth_of(work, "segfault")
    if rc != -11:
        raise Failure("pytest's exit %d, not death by SIGSEGV (the signal's own course):\n%s" % (rc, err[-3000:]))
    said = "pycore: test_victims.py::test_segfault: signal 11 (SIGSEGV) in its process"
    if said not in err or "Fatal Python error: Segmentation fault" not in err:
        raise Failure("standard error lacks pycore's report or faulthandler's traceback:\n%s" % err[-3000:])
    report, text = artifact(work, "test_victims.py::test_segfault")
    fault = report["process"]["fault"]
    if not fault or fault["name"] != "SIGSEGV" or fault["address"] != hex(truth["address"]) or \
            fault["thread"] != truth["tid"] or not fault["handling"]:
        raise Failure("process.fault %s: not SIGSEGV at %#x in thread %d, handled now" % (
            fault, truth["address"], truth["tid"]))
    if report["process"]["pid"] != truth["pid"]:
        raise Failure("the report's process %s, the test's %d" % (report["process"]["pid"], truth["pid"]))
    if (report["fault_kind"] or {}).get("kind") != "null-dereference":
        raise Failure("fault_kind %s, not a NULL pointer's" % report["fault_kind"])
    n = same_stack(thread_of(report, truth["tid"]), truth, ("ctypes/__init__.py",))
    summary = report["summary"]["text"]
    if not summary.startswith("SIGSEGV") or "test_victims.py" not in text.split("\n\n")[0] + summary:
        raise Failure("the summary does not name the fault: %s" % summary)
    return "died of SIGSEGV after pycore's report; %d Python frames = the test's, fault at %#x: %s" % (
        n, truth["address"], summary[:160])


def in_process_abort(work):
    need("pytest", "python3-pytest")
    rc, out, err = pytest(work, ["-p", "pycore", "test_victims.py::test_abort"])
    truth = truth_of(work, "abort")
    if rc != -6:
        raise Failure("pytest's exit %d, not death by SIGABRT:\n%s" % (rc, err[-3000:]))
    if "pycore: test_victims.py::test_abort: signal 6 (SIGABRT) in its process" not in err:
        raise Failure("standard error lacks pycore's report:\n%s" % err[-3000:])
    report, _ = artifact(work, "test_victims.py::test_abort")
    n = same_stack(thread_of(report, truth["tid"]), truth)
    return "died of SIGABRT after pycore's report; %d Python frames = the test's" % n


def xdist_worker(work):
    need("pytest", "python3-pytest")
    need("xdist", "python3-pytest-xdist")
    rc, out, err = pytest(work, ["-p", "pycore", "-n", "2", "test_victims.py::test_segfault",
                                 "test_victims.py::test_passes"])
    truth = truth_of(work, "segfault")
    if rc != 1 or "1 failed, 1 passed" not in out:
        raise Failure("pytest -n 2: exit %d, not one failure and one pass:\n%s" % (rc, out[-3000:]))
    crashed = "crashed while running 'test_victims.py::test_segfault'"
    section = "pycore: the worker when it crashed"
    at = out.find(crashed)
    if at < 0 or out.find(section, at) < 0:
        raise Failure("the worker-crashed failure does not carry pycore's report:\n%s" % out[-4000:])
    shown = out[out.find(section, at):]
    if "SIGSEGV" not in shown.split("\n")[1] + shown.split("\n")[2]:
        raise Failure("the report shown does not name SIGSEGV first:\n%s" % shown[:1000])
    report, _ = artifact(work, "test_victims.py::test_segfault")
    if report["process"]["pid"] != truth["pid"] or report["process"]["fault"]["thread"] != truth["tid"]:
        raise Failure("the saved report is of process %s thread %s; the worker %d thread %d" % (
            report["process"]["pid"], report["process"]["fault"]["thread"], truth["pid"], truth["tid"]))
    n = same_stack(thread_of(report, truth["tid"]), truth, ("ctypes/__init__.py",))
    return "the failure shows the worker's report; %d Python frames = the test's" % n


def timeout_deadlock(work):
    need("pytest", "python3-pytest")
    need("pytest_timeout", "python3-pytest-timeout")
    timeout = max(4, int(scaled(4)))
    rc, out, err = pytest(work, ["-p", "pycore", "--timeout", str(timeout), "test_victims.py::test_deadlock"])
    truth = truth_of(work, "deadlock")
    if rc != 1 or "Timeout" not in out:
        raise Failure("pytest --timeout %d: exit %d, not a timeout's failure:\n%s" % (timeout, rc, out[-3000:]))
    section = "pycore: the process when the test hung"
    if section not in out:
        raise Failure("the timeout's failure does not carry pycore's report:\n%s" % out[-4000:])
    report, _ = artifact(work, "test_victims.py::test_deadlock")
    n = same_stack(thread_of(report, truth["tid"]), truth)
    return "--timeout %d: the failure shows the process %d Python frames deep at the deadlock" % (timeout, n)


def own_timeout(work):
    need("pytest", "python3-pytest")
    slow = max(4.0, scaled(4))
    rc, out, err = pytest(work, ["-p", "pycore", "--pycore-timeout", str(slow / 2), "test_victims.py::test_slow"],
                          VICTIM_SLOW=str(slow))
    truth = truth_of(work, "slow")
    if rc != 0 or "1 passed" not in out:
        raise Failure("pytest --pycore-timeout: exit %d, the slow test did not pass:\n%s" % (rc, out[-3000:]))
    if "pycore: test_victims.py::test_slow still runs after" not in err:
        raise Failure("no report on standard error:\n%s" % err[-3000:])
    report, _ = artifact(work, "test_victims.py::test_slow")
    n = same_stack(thread_of(report, truth["tid"]), truth)
    return "--pycore-timeout %g: the report printed, %d Python frames = the test's; the test passed" % (slow / 2, n)


def child_core(work):
    need("pytest", "python3-pytest")
    from pycoretest.cores import kernel_core_usable
    pattern, why = kernel_core_usable()
    if why:
        raise Skip("the kernel's cores cannot be found here: %s" % why)
    if pattern not in ("core", "core.%p"):
        raise Skip("core_pattern %r: the plugin looks for core or core.PID files only" % pattern)
    rc, out, err = pytest(work, ["-p", "pycore", "--basetemp", os.path.join(work, "tmp"),
                                 "test_victims.py::test_child_segfault"])
    truth = truth_of(work, "child")
    if rc != 1 or "1 failed" not in out:
        raise Failure("pytest: exit %d, not the test's failure:\n%s" % (rc, out[-3000:]))
    if "a core a process of the test left" not in out:
        raise Failure("the failure does not carry pycore's report of the child's core:\n%s" % out[-4000:])
    report, _ = artifact(work, "test_victims.py::test_child_segfault.core-1")
    sig = report["process"]["signal"]
    if report["process"]["pid"] != truth["pid"] or not sig or sig["name"] != "SIGSEGV" or \
            sig["address"] != hex(truth["address"]):
        raise Failure("the core's report: process %s signal %s; the child %d faulted at %#x" % (
            report["process"]["pid"], sig, truth["pid"], truth["address"]))
    n = same_stack(thread_of(report, truth["tid"]), truth, ("ctypes/__init__.py",))
    return "the failure shows the child's core: SIGSEGV at %#x, %d Python frames = the child's" % (
        truth["address"], n)


def file_names(work):
    """The crash handler's shell names a test's files as the plugin's
    Python does (safe_name): long ids, bytes outside ASCII, dots."""
    need("pytest", "python3-pytest")
    ids = ["test_a.py::test_b", "tests/test_x.py::TestY::test_z[1-2]", "._odd_.py::t[é ü/\\]",
           "t.py::test_" + "long" * 60 + "[%s]" % ("ß" * 30), "...", "t.py::test[a\nb]"]
    got = json.loads(python("import json, sys; from pycore._pytest import CRASH_SCRIPT, safe_name; "
                            "print(json.dumps([CRASH_SCRIPT, [safe_name(i) for i in json.loads(sys.argv[1])]]))",
                            work, json.dumps(ids)))
    script = got[0][:got[0].index("json=$dir")] + 'printf "%s" "$name"\n'
    for nodeid, name in zip(ids, got[1]):
        p = subprocess.run(["/bin/sh", "-c", script, "sh", "p", "1", "/d", "0", nodeid, "11"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0 or p.stdout.decode() != name:
            raise Failure("%r: the shell names it %r, Python %r (%s)" % (nodeid, p.stdout.decode(), name,
                                                                      p.stderr.decode().strip()))
    return "%d test ids, the longest cut to %d characters with its hash" % (len(ids), len(got[1][3]))


def passing(work):
    need("pytest", "python3-pytest")
    rc0, out0, _ = pytest(work, ["-q", "test_victims.py::test_passes"])
    rc1, out1, err1 = pytest(work, ["-q", "-p", "pycore", "test_victims.py::test_passes"])
    rc2, out2, _ = pytest(work, ["-p", "pycore", "test_victims.py::test_passes"])
    if rc0 != 0 or rc1 != 0:
        raise Failure("exit %d without the plugin, %d with it:\n%s" % (rc0, rc1, out1[-2000:]))
    strip = lambda s: [l for l in s.splitlines() if " in " not in l]  # (the time taken)
    if strip(out0) != strip(out1) or err1:
        raise Failure("with the plugin on, the output changed:\n%s\n---\n%s" % (out0, out1 + err1))
    if os.path.exists(os.path.join(work, "pycore-reports")):
        raise Failure("a passing test left a pycore-reports directory")
    if "pycore: %s reads crashed and hung tests" % PYCORE not in out2:
        raise Failure("the header does not say the plugin is on:\n%s" % out2[:1000])
    return "the same result, no report made; the header says where reports go"


def main():
    tap = TAP()
    if not os.path.exists(CRASH_LIB):
        tap.not_ok("the crash handler's library", "%s is not built (make builds it)" % CRASH_LIB)
        return tap.done()
    check_api(tap)
    for name, fn in (("plugin: a segfault in pytest's process", in_process_segfault),
                     ("plugin: an abort in pytest's process", in_process_abort),
                     ("plugin: a segfault in a pytest-xdist worker", xdist_worker),
                     ("plugin: a deadlock past pytest-timeout's timeout", timeout_deadlock),
                     ("plugin: --pycore-timeout alone on a slow test", own_timeout),
                     ("plugin: a core left by a process the test started", child_core),
                     ("plugin: a passing test", passing),
                     ("plugin: a test's file names, in the crash handler's shell as in Python", file_names)):
        work = scratch()
        run_in(tap, name, work, fn, work)
    schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
