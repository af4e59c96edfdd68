"""Minidumps as lldb writes them, of real CPython processes: each of its
three styles (process save-core --plugin-name=minidump --style
full|modified-memory|stack), from a live process (lldb -p PID) and from the
kernel's core of a crash (lldb --core CORE EXE).

- full and modified-memory: pycore's Python stacks are the ones the process
  recorded (sys._current_frames(), src/tests/scenarios/); modified-memory
  leaves the modules' read-only pages out and lists the main program with
  its first segment's size, so this also proves the extents taken from the
  Linux maps stream and the pages read from the modules' files;
- stack (thread stacks only, what lldb-16 can write): a partial report,
  exit 1, with one line saying the Python state is not in the dump and
  which lldb setting keeps it; the version read from the interpreter's
  file; every thread's native stack, frame for frame gdb's of the same
  moment (a gcore taken right after lldb, or the original core).

Interpreters: pyenv's 3.12 and Debian's /usr/bin/python3.11, when present.
lldb: the newest lldb-1X on PATH; a style it cannot write is a SKIP by name.
Prints TAP ("ok N - name", "# SKIP reason", the plan at the end); exit 0
pass, 1 fail, 77 when nothing could run."""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


sys.path.insert(0, HERE)
from tap import load_script  # noqa: E402

cs = load_script("check_stacks", os.path.join(HERE, "check-stacks.py"))
cn = load_script("check_native", os.path.join(HERE, "check-native.py"))

STYLES = ("full", "modified-memory", "stack")
PYTHONS = (("py3.12", "/root/.pyenv/versions/3.12*/bin/python3.12"), ("debian3.11", "/usr/bin/python3.11"))


class Tap:
    def __init__(self):
        self.n = self.failed = self.ran = 0

    def ok(self, name):
        self.n += 1
        self.ran += 1
        print("ok %d - %s" % (self.n, name), flush=True)

    def fail(self, name, why):
        self.n += 1
        self.failed += 1
        print("not ok %d - %s" % (self.n, name))
        for line in str(why).splitlines():
            print("# " + line)
        sys.stdout.flush()

    def skip(self, name, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, why), flush=True)

    def run(self, name, fn, *args):
        try:
            fn(*args)
            self.ok(name)
        except cs.Failure as e:
            self.fail(name, e)

    def end(self):
        print("1..%d" % self.n)
        if self.failed:
            return 1
        return 0 if self.ran else 77


def find_lldb():
    for v in range(30, 15, -1):
        p = shutil.which("lldb-%d" % v)
        if p:
            return p
    return shutil.which("lldb")


def save_core(lldb, target_args, style, out):
    """lldb's minidump of the given style: (path, None) or (None, why not)."""
    p = subprocess.run([lldb, "-b"] + target_args +
                       ["-o", "process save-core --plugin-name=minidump --style %s %s" % (style, out)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    text = p.stdout.decode("utf-8", "replace")
    if os.path.exists(out) and os.path.getsize(out) > 0:
        return out, None
    err = [l for l in text.splitlines() if l.startswith("error:")]
    return None, "%s cannot write --style=%s: %s" % (os.path.basename(lldb), style,
                                                    err[0] if err else text.strip()[-200:])


def md_holds(path, addr):
    """Whether the minidump's memory lists hold ADDR (read here, not by
    pycore): lldb's --style=full of a core writes thread stacks only."""
    d = open(path, "rb").read()
    n, rva = struct.unpack_from("<II", d, 8)
    for i in range(n):
        t, _, r = struct.unpack_from("<III", d, rva + 12 * i)
        if t == 5:
            count, = struct.unpack_from("<I", d, r)
            ranges = [struct.unpack_from("<QI", d, r + 4 + 16 * k) for k in range(count)]
        elif t == 9:
            count, _ = struct.unpack_from("<QQ", d, r)
            ranges = [struct.unpack_from("<QQ", d, r + 16 + 16 * k) for k in range(count)]
        else:
            continue
        if any(start <= addr < start + size for start, size in ranges):
            return True
    return False


def analyze(path, *opts):
    rc, out, err = cs.run_pycore(["analyze", "--format", "json"] + list(opts) + [path])
    if not out:
        raise cs.Failure("pycore exit %d, no report: %s" % (rc, err.strip()))
    return rc, cs.load_report(out)


def same_python_frames(truth, report):
    """Every thread the process recorded, with its Python frames, pid and
    version (for a crash converted by lldb, which keeps no signal)."""
    threads = {t["ident"]: t for i in report["interpreters"] for t in i["threads"]}
    for tt in truth["threads"]:
        t = threads.get(tt["ident"])
        if t is None:
            raise cs.Failure("thread %s missing (pycore has %s)" % (tt["ident"], sorted(threads)))
        want = [(f["function"], f["file"], f["line"]) for f in tt["frames"]]
        got = [(f["function"], f["file"], f["line"]) for f in t["frames"] if f["kind"] == "python"]
        if want != got:
            raise cs.Failure("thread %s: frames\n  pycore  %s\n  process %s" % (tt["ident"], got, want))
        if tt.get("native_id") is not None and t["tid"] != tt["native_id"]:
            raise cs.Failure("thread %s: tid %s, the process says %s" % (tt["ident"], t["tid"], tt["native_id"]))
    if report["process"]["pid"] != truth["pid"]:
        raise cs.Failure("pid %s, the process says %s" % (report["process"]["pid"], truth["pid"]))
    if report["python"]["version"] != cs.version_of(truth):
        raise cs.Failure("version %s, the process says %s" % (report["python"]["version"], cs.version_of(truth)))


def same_ids(truth, report, live):
    """pid, ppid, uid and gid as the process recorded them: lldb copies
    /proc/PID/status into a dump of a live process (of a core it cannot)."""
    for key in ("ppid", "uid", "gid"):
        got = report["process"][key]
        if (live or got is not None) and got != truth[key]:
            raise cs.Failure("%s %s, the process says %s" % (key, got, truth[key]))


def check_full(dmp, truth, live):
    rc, report = analyze(dmp)
    same_ids(truth, report, live)
    if rc != 0:
        raise cs.Failure("exit %d, warnings %s" % (rc, report["warnings"]))
    if report["input"]["format"] != "minidump":
        raise cs.Failure("input.format %s" % report["input"]["format"])
    if live:
        cs.compare(truth, report, None)      # a snapshot: no signal, nobody holds the GIL
    else:
        same_python_frames(truth, report)


def check_stack(dmp, truth, target, core, tids, live):
    """The stack style: one line naming what is missing and the lldb
    setting that keeps it, exit 1, the version, and every thread's native
    stack as gdb sees it in CORE."""
    rc, report = analyze(dmp, "--native")
    same_ids(truth, report, live)
    if rc != 1:
        raise cs.Failure("exit %d (want 1, a partial report): %s" % (rc, report["warnings"]))
    lines = [w for w in report["warnings"] if "the Python state is not in the dump" in w]
    if len(lines) != 1 or "--style=full" not in lines[0] or "modified-memory" not in lines[0]:
        raise cs.Failure("want one line saying the Python state is missing and lldb's --style=full/"
                         "modified-memory: %s" % report["warnings"])
    if report["python"] is None or report["python"]["version"] != cs.version_of(truth):
        raise cs.Failure("version %s, the process says %s" % (report["python"] and report["python"]["version"],
                                                              cs.version_of(truth)))
    got = sorted(t["tid"] for t in report["native_threads"])
    if got != sorted(tids):
        raise cs.Failure("native_threads %s, the process had %s" % (got, sorted(tids)))
    inlined = 0
    for t in report["native_threads"]:
        if not any(f["function"] and f["function"].startswith(cn.EVAL) for f in t["frames"]):
            raise cs.Failure("thread %s: no eval loop frame named: %s" % (t["tid"], [f["function"] for f in t["frames"]]))
        inlined += cn.same_as_gdb("thread %d" % t["tid"], target, core, t)
    return inlined


def live(tap, lldb, name, python, work):
    """lldb attached to a live process, once per style; then gcore, for
    gdb's view of the same moment."""
    target = cs.Target(python)
    truth_path = os.path.join(work, "truth.json")
    proc = subprocess.Popen([python, os.path.join(cs.SCENARIOS, "threads.py"), truth_path],
                            stdout=subprocess.PIPE, cwd=work)
    dumps, core = {}, None
    try:
        if not cs.wait_ready(proc):
            raise cs.Failure("the scenario did not get ready")
        time.sleep(0.5)
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid))
        for style in STYLES:
            dumps[style] = save_core(lldb, ["-p", str(proc.pid)], style, os.path.join(work, style + ".dmp"))
        g = subprocess.run(["gcore", "-o", os.path.join(work, "core"), str(proc.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        core = os.path.join(work, "core.%d" % proc.pid)
        if g.returncode != 0 or not os.path.exists(core):
            core = None
    finally:
        proc.kill()
        proc.wait()
    truth = json.load(open(truth_path))
    for style in STYLES:
        label = "%s live --style=%s" % (name, style)
        path, why = dumps[style]
        if not path:
            tap.skip(label, why)
        elif style != "stack":
            tap.run(label + ": the Python stacks the process recorded", check_full, path, truth, True)
        elif not core:
            tap.fail(label, "gcore failed: no native stacks to compare with")
        else:
            tap.run(label + ": every thread's native stack is gdb's, one line on what is missing",
                    check_stack, path, truth, target, core, tids, True)


def from_core(tap, lldb, name, python, work):
    """lldb --core of the kernel's core of a crash, once per style."""
    target = cs.Target(python)
    try:
        core, truth_path = cs.take_crash(target, work, ["crash.py"], cs.signal.SIGSEGV)
    except cs.Skip as why:
        for style in STYLES:
            tap.skip("%s core --style=%s" % (name, style), str(why))
        return
    truth = json.load(open(truth_path))
    rc, report = analyze(core)
    tids = report["process"]["threads"]
    runtime = int(report["python"]["runtime_address"], 16)
    for style in STYLES:
        label = "%s core --style=%s" % (name, style)
        path, why = save_core(lldb, ["--core", core, python], style, os.path.join(work, style + ".dmp"))
        if path and style != "stack" and not md_holds(path, runtime):
            label += " (lldb wrote no memory but the stacks)"
        if not path:
            tap.skip(label, why)
        elif style != "stack" and md_holds(path, runtime):
            tap.run(label + ": the Python stacks the process recorded", check_full, path, truth, False)
        else:
            tap.run(label + ": every thread's native stack is gdb's on the core, one line on what is missing",
                    check_stack, path, truth, target, core, tids, False)


def main():
    tap = Tap()
    lldb = find_lldb()
    gdb = shutil.which("gdb") and shutil.which("gcore")
    for name, pattern in PYTHONS:
        found = sorted(glob.glob(pattern))
        for kind in ("live", "core"):
            label = "%s %s" % (name, kind)
            if not found:
                tap.skip(label, "%s not installed" % pattern)
                continue
            if not lldb or not gdb:
                tap.skip(label, "no lldb on PATH" if not lldb else "no gdb/gcore")
                continue
            work = tempfile.mkdtemp(prefix="pycore-lldb-")
            try:
                (live if kind == "live" else from_core)(tap, lldb, name, found[-1], work)
            except cs.Failure as e:
                tap.fail(label, e)
            finally:
                if not os.environ.get("KEEP_CORES"):
                    shutil.rmtree(work, ignore_errors=True)
    return tap.end()


if __name__ == "__main__":
    sys.exit(main())
