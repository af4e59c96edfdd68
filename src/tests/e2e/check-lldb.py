"""Minidumps as lldb writes them, of real CPython processes: each of its
three styles (process save-core --plugin-name=minidump --style
full|modified-memory|stack), from a live process (lldb -p PID) and from the
kernel's core of a crash (lldb --core CORE EXE); on one interpreter of
each frame walker (pycoretest.interpreters.feature_names(); every one with
PYCORE_ALL_INTERPRETERS=1).

- full and modified-memory: pycore's Python stacks are the ones the process
  recorded (sys._current_frames(), src/tests/e2e/scenarios/); modified-memory
  leaves the modules' read-only pages out and lists the main program with
  its first segment's size, so this also proves the extents taken from the
  Linux maps stream and the pages read from the modules' files;
- stack (thread stacks only, what lldb-16 can write): a partial report,
  exit 1, with one line saying the Python state is not in the dump and
  which lldb setting keeps it; the version read from the interpreter's
  file; every thread's native stack, frame for frame gdb's of the same
  moment (a gcore taken right after lldb, or the original core).  Before
  3.11 the interpreter's file holds no Py_Version: the version is read
  from PY_VERSION's string there;
- from a core lldb keeps no siginfo (the signal's number only), its full
  style writes thread stacks only (checked as the stack style), and its
  modified-memory style may leave part of the heap out: then pycore's exit
  1, and a thread cut short says what is not captured.

Interpreters: every one of src/tests/e2e/interpreters/ present (one in the
Debian unstable root is run with chroot; lldb reads its files through
"platform select host --sysroot", pycore through --sysroot; its snapshot
for gdb is the kernel's core of SIGQUIT, as check-stacks.py takes it; lldb
lists this machine's libraries for it, so its native stacks are skipped).
lldb: $LLDB, else the newest lldb-1X on PATH; a style it cannot write is a
SKIP by name.
Prints TAP ("ok N - name", "# SKIP reason", the plan at the end); exit 0
pass, 1 fail, 77 when nothing could run."""
import json
import os
import signal
import shutil
import struct
import subprocess
import sys
import time



import pycoretest as pt
from pycoretest import native as gdb_native
from pycoretest import interpreters
from pycoretest.env import scaled

STYLES = ("full", "modified-memory", "stack")
# lldb-19 names this machine's own libraries, their build-ids and sizes,
# in the module list of a process in a chroot (with platform select host
# --sysroot as without; seen with the unstable root's libc): native stacks
# need the modules' true files
CHROOT_MODULES = "lldb lists this machine's libraries, not the root's, for a process in a chroot"


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
            note = fn(*args)
            self.ok(name)
            if isinstance(note, str):
                print("# " + note, flush=True)
        except pt.Failure as e:
            self.fail(name, e)

    def end(self):
        print("1..%d" % self.n)
        if self.failed:
            return 1
        return 0 if self.ran else 77


def find_lldb():
    if os.environ.get("LLDB"):
        return shutil.which(os.environ["LLDB"])
    for v in range(30, 15, -1):
        p = shutil.which("lldb-%d" % v)
        if p:
            return p
    return shutil.which("lldb")


def save_core(lldb, target, target_args, style, out):
    """lldb's minidump of the given style: (path, None) or (None, why not).
    For a TARGET in a root, lldb reads the modules' files from the root."""
    root = ["-O", "platform select host --sysroot " + target.root] if target.root else []
    p = subprocess.run([lldb, "-b"] + root + target_args +
                       ["-o", "process save-core --plugin-name=minidump --style %s %s" % (style, out)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(300))
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


def analyze(target, path, *opts):
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + list(opts) + target.pycore_args() +
                                 gdb_native.debug_args(target) + [path])
    if not out:
        raise pt.Failure("pycore exit %d, no report: %s" % (rc, err.strip()))
    return rc, pt.load_report(out)


def same_python_frames(truth, report, partial=False):
    """Every thread the process recorded, with its Python frames, pid and
    version (for a crash converted by lldb, which keeps no siginfo).  With
    PARTIAL (lldb kept only part of the memory, pycore said so with exit
    1): a thread may stop short, at an error naming what is not captured,
    and the frames it does give are a run of the process's own."""
    threads = {t["ident"]: t for i in report["interpreters"] for t in i["threads"]}
    for tt in truth["threads"]:
        t = threads.get(tt["ident"])
        if t is None:
            raise pt.Failure("thread %s missing (pycore has %s)" % (tt["ident"], sorted(threads)))
        want = [(f["function"], f["file"], f["line"]) for f in tt["frames"]]
        got = [(f["function"], f["file"], f["line"]) for f in t["frames"] if f["kind"] == "python"]
        short = partial and "not captured" in (t["error"] or "") and \
            any(want[k:k + len(got)] == got for k in range(len(want) - len(got) + 1))
        if want != got and not short:
            raise pt.Failure("thread %s: frames\n  pycore  %s\n  process %s\n  error %s" %
                             (tt["ident"], got, want, t["error"]))
        if tt.get("native_id") is not None and t["tid"] != tt["native_id"]:
            raise pt.Failure("thread %s: tid %s, the process says %s" % (tt["ident"], t["tid"], tt["native_id"]))
    if report["process"]["pid"] != truth["pid"]:
        raise pt.Failure("pid %s, the process says %s" % (report["process"]["pid"], truth["pid"]))
    if report["python"]["version"] != pt.version_of(truth):
        raise pt.Failure("version %s, the process says %s" % (report["python"]["version"], pt.version_of(truth)))


def same_ids(truth, report, live):
    """pid, ppid, uid and gid as the process recorded them: lldb copies
    /proc/PID/status into a dump of a live process (of a core it cannot)."""
    for key in ("ppid", "uid", "gid"):
        got = report["process"][key]
        if (live or got is not None) and got != truth[key]:
            raise pt.Failure("%s %s, the process says %s" % (key, got, truth[key]))


def minidump_tids(path):
    """The thread ids of a minidump's thread list (MINIDUMP_HEADER: the
    stream count at 8, the directory's offset at 12; a directory entry is
    type, size, offset; ThreadListStream is type 3: a count, then 48-byte
    MINIDUMP_THREADs whose first word is the thread id; Microsoft's
    minidumpapiset.h)."""
    with open(path, "rb") as f:
        data = f.read(1 << 20)
    if data[:4] != b"MDMP":
        return None
    n, rva = struct.unpack_from("<II", data, 8)
    for i in range(n):
        kind, _, at = struct.unpack_from("<III", data, rva + 12 * i)
        if kind == 3:
            with open(path, "rb") as f:
                f.seek(at)
                count = struct.unpack("<I", f.read(4))[0]
                raw = f.read(48 * count)
            return [struct.unpack_from("<I", raw, 48 * k)[0] for k in range(count)]
    return None


def check_full(target, dmp, truth, live):
    """The Python stacks the process recorded.  Of a core lldb may keep
    part of the heap only (modified-memory left out an anonymous mapping
    of a process in the unstable root): then exit 1 and each thread the
    memory cuts short says what is not captured."""
    rc, report = analyze(target, dmp)
    same_ids(truth, report, live)
    if rc != 0 and (live or rc != 1):
        errors = [(t.get("tid"), t.get("error")) for i in report.get("interpreters") or []
                  for t in i.get("threads") or [] if t.get("error")]
        raise pt.Failure("exit %d, warnings %s, thread errors %s" % (rc, report["warnings"], errors))
    if report["input"]["format"] != "minidump":
        raise pt.Failure("input.format %s" % report["input"]["format"])
    if live:
        pt.compare(truth, report, None)      # a snapshot: no signal, nobody holds the GIL
        return None
    sig = report["process"]["signal"]
    # lldb's exception record keeps the signal's number and no siginfo
    if sig and (sig["number"] != signal.SIGSEGV or sig["code"] is not None or
                sig["sender_pid"] is not None or sig["address"] is not None):
        raise pt.Failure("signal %s: lldb keeps SIGSEGV's number only" % sig)
    same_python_frames(truth, report, partial=rc == 1)
    return "lldb kept part of the memory: pycore exit 1, stopped at what is missing" if rc == 1 else None


def check_stack(dmp, truth, target, core, tids, live):
    """The stack style: one line naming what is missing and the lldb
    setting that keeps it, exit 1, the version, and every thread's native
    stack as gdb sees it in CORE."""
    rc, report = analyze(target, dmp, "--native")
    same_ids(truth, report, live)
    if rc != 1:
        raise pt.Failure("exit %d (want 1, a partial report): %s" % (rc, report["warnings"]))
    lines = [w for w in report["warnings"] if "the Python state is not in the dump" in w]
    if len(lines) != 1 or "--style=full" not in lines[0] or "modified-memory" not in lines[0]:
        raise pt.Failure("want one line saying the Python state is missing and lldb's --style=full/"
                         "modified-memory: %s" % report["warnings"])
    if report["python"] is None:
        raise pt.Failure("no python section: the process ran %s" % pt.version_of(truth))
    # read from the interpreter's file: Py_Version from 3.11, before it
    # PY_VERSION's string
    if report["python"]["version"] != pt.version_of(truth):
        raise pt.Failure("version %s, the process says %s" % (report["python"]["version"], pt.version_of(truth)))
    got = sorted(t["tid"] for t in report["native_threads"])
    if got != sorted(tids):
        raise pt.Failure("native_threads %s, the process had %s" % (got, sorted(tids)))
    inlined = 0
    for t in report["native_threads"]:
        if not any(f["function"] and f["function"].startswith(gdb_native.EVAL) for f in t["frames"]):
            raise pt.Failure("thread %s: no eval loop frame named: %s" % (t["tid"], [f["function"] for f in t["frames"]]))
        inlined += gdb_native.same_as_gdb("thread %d" % t["tid"], target, core, t)
    return inlined


def live(tap, lldb, name, target, work):
    """lldb attached to a live process, once per style; then the snapshot
    check-stacks.py takes, for gdb's view of the same moment."""
    dumps, tids = {}, []

    def save(proc):
        time.sleep(0.5)
        tids.extend(sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid)))
        for style in STYLES:
            dumps[style] = save_core(lldb, target, ["-p", str(proc.pid)], style, os.path.join(work, style + ".dmp"))

    try:
        core, truth_path, _ = pt.take_snapshot(target, "threads", work, before=save)
        why_no_core = None
    except pt.Failure as e:
        if not dumps:
            raise
        core, truth_path, why_no_core = None, os.path.join(work, "truth.json"), str(e)
    truth = json.load(open(truth_path))
    for style in STYLES:
        label = "%s live --style=%s" % (name, style)
        path, why = dumps[style]
        if not path:
            tap.skip(label, why)
        elif style != "stack" and set(tids) - set(minidump_tids(path) or tids):
            # lldb attached to a loaded process has written a thread list
            # short of a thread: nothing of it is in the dump to report
            tap.skip(label, "lldb's minidump holds no thread %s of the process (its /proc/PID/task when lldb "
                     "attached): lldb did not capture it" % sorted(set(tids) - set(minidump_tids(path))))
        elif style != "stack":
            tap.run(label + ": the Python stacks the process recorded", check_full, target, path, truth, True)
        elif target.root:
            tap.skip(label, CHROOT_MODULES)
        elif not core:
            tap.fail(label, "no snapshot for gdb (%s): no native stacks to compare with" % why_no_core)
        else:
            tap.run(label + ": every thread's native stack is gdb's, one line on what is missing",
                    check_stack, path, truth, target, core, tids, True)


def from_core(tap, lldb, name, target, work):
    """lldb --core of the kernel's core of a crash, once per style."""
    try:
        core, truth_path = pt.take_crash(target, work, ["crash.py"], signal.SIGSEGV)
    except pt.Skip as why:
        for style in STYLES:
            tap.skip("%s core --style=%s" % (name, style), str(why))
        return
    truth = json.load(open(truth_path))
    rc, report = analyze(target, core)
    tids = report["process"]["threads"]
    runtime = int(report["python"]["runtime_address"], 16)
    for style in STYLES:
        label = "%s core --style=%s" % (name, style)
        path, why = save_core(lldb, target, ["--core", core, target.host_exe()], style, os.path.join(work, style + ".dmp"))
        if path and style != "stack" and not md_holds(path, runtime):
            label += " (lldb wrote no memory but the stacks)"
        if not path:
            tap.skip(label, why)
        elif style != "stack" and md_holds(path, runtime):
            tap.run(label + ": the Python stacks the process recorded", check_full, target, path, truth, False)
        elif target.root:
            tap.skip(label, CHROOT_MODULES)
        else:
            tap.run(label + ": every thread's native stack is gdb's on the core, one line on what is missing",
                    check_stack, path, truth, target, core, tids, False)


def main():
    tap = Tap()
    lldb = find_lldb()
    gdb = shutil.which("gdb") and shutil.which("gcore")
    for name in interpreters.feature_names():
        target, why = interpreters.find(name)
        for kind in ("live", "core"):
            label = "%s %s" % (name, kind)
            if why or not lldb or not gdb:
                tap.skip(label, why or ("no lldb on PATH" if not lldb else "no gdb/gcore"))
                continue
            work = target.workdir("pycore-lldb-")
            try:
                (live if kind == "live" else from_core)(tap, lldb, name, target, work)
            except (pt.Failure, pt.Skip) as e:
                (tap.skip if isinstance(e, pt.Skip) else tap.fail)(label, e)
            finally:
                if not os.environ.get("KEEP_CORES"):
                    shutil.rmtree(work, ignore_errors=True)
    return tap.end()


if __name__ == "__main__":
    sys.exit(main())
