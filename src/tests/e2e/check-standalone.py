"""CPython built as the standalone builds people fetch with uv, rye or pipx
(python-build-standalone) are: libpython linked statically into the
executable, PGO and LTO, then strip --strip-all (no .symtab; .dynsym kept).

The interpreters are standalone3.12 and standalone3.13
(pycoretest.interpreters): the CPythons that scripts/standalone-python builds
once per machine and caches; this test never builds them -- until one is
there, its cases are skips by its name (scripts/run-tests starts the builds
in the background).

Each scenario (threads and locals, snapshots taken with gcore; crash, a real
SIGSEGV in libc's strlen with ulimit -c unlimited and the kernel's core) runs
with private copies of the C libraries it loads (LD_LIBRARY_PATH), so that
its core names no file this machine keeps but the dynamic loader.  The
process records its own threads' stacks; then, each case a TAP line:
- no file but the core: the installation, the copies of the libraries and
  /usr/lib/debug hidden (a mount namespace of pycore's own), no debug
  cache: the runtime found by the validated scan (3.12) or its debug
  offsets (3.13), every thread and frame as recorded (JSON, and the text report), no module with a file but the
  dynamic loader's; locals: every repr Python's or said to be missing;
- --native with no file: the same Python frames; native frames nobody can
  name are counted, never invented;
- with the files (the stripped executable): the same, and every repr of the
  locals exactly Python's; --native: the crashed thread's innermost frame
  named;
- the crash's fingerprint, plain and with --native, is the fingerprint of
  the same crash on pyenv's CPython of that version (an ordinary shared
  build), and with no file the plain one too.

Environment: PYCORE, srcdir, KEEP_CORES=1 keeps the cores.  Output: TAP.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys

from pycoretest import interpreters
from pycoretest.compare import compare, text_frames
from pycoretest.cores import take_crash, take_snapshot, twin_fingerprints
from pycoretest.locals import compare_locals, listed_once
from pycoretest.run import run_pycore, run_hidden, scenario_cases
from pycoretest.schema import load_report, schema_summary
from pycoretest.tap import TAP, Failure

NAMES = ["standalone3.12", "standalone3.13"]
SCENARIOS = ["threads", "locals", "crash"]


def libraries(prefix, exe):
    """Every shared library the executable and its lib-dynload modules load
    (ldd), but the dynamic loader and the vDSO."""
    dynload = os.path.join(prefix, "lib", os.path.basename(exe), "lib-dynload")
    objs = [exe] + [os.path.join(dynload, f) for f in sorted(os.listdir(dynload)) if f.endswith(".so")]
    libs = set()
    for o in objs:
        out = subprocess.run(["ldd", o], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
        for m in re.finditer(r"^\s*(\S+) => (/\S+)", out, re.M):
            libs.add(m.group(2))
    return sorted(libs)


class Setup:
    """The standalone interpreter run with copies of its C libraries in
    WORKDIR/libs."""

    def __init__(self, name, exe, workdir):
        self.name = name
        self.exe = exe
        self.prefix = os.path.dirname(os.path.dirname(exe))
        self.libs = os.path.join(workdir, "libs")
        self.empty = os.path.join(workdir, "empty")
        os.makedirs(self.libs)
        os.makedirs(self.empty)
        for lib in libraries(self.prefix, exe):
            shutil.copy2(lib, os.path.join(self.libs, os.path.basename(lib)))
        env = dict(os.environ, LD_LIBRARY_PATH=self.libs)
        self.target = interpreters.Target(exe, env=env)
        self.hide = [self.prefix, self.libs] + [d for d in ("/usr/lib/debug",) if os.path.isdir(d)]

    def bare(self, core, args=(), fmt="json"):
        """pycore with no file but the core (and the dynamic loader)."""
        rc, out, err = run_hidden(self.hide, self.empty,
                                  ["analyze", "--no-debug-cache", "--format", fmt] + list(args) + [core])
        if rc != 0:
            raise Failure("no file: pycore %s: exit %d: %s" % (" ".join(args), rc, err.strip()))
        return load_report(out) if fmt == "json" else out


def analyze(core, args=(), fmt="json"):
    rc, out, err = run_pycore(["analyze", "--format", fmt] + list(args) + [core])
    if rc != 0:
        raise Failure("pycore %s: exit %d: %s" % (" ".join(args), rc, err.strip()))
    return load_report(out) if fmt == "json" else out


def no_file_read(report):
    """No module of the report was read from a file but the dynamic
    loader's, and the interpreter's file was not found."""
    if report["python"]["binary"]["found_by"] is not None:
        raise Failure("the interpreter's file was found (%s, by %s)" % (report["python"]["binary"]["path"],
                                                                        report["python"]["binary"]["found_by"]))
    read = [m["path"] for m in report["process"]["modules"]
            if m["file"] is not None and not os.path.basename(m["path"]).startswith("ld-linux")]
    if read:
        raise Failure("files read although hidden: %s" % read)


def native_frames(report, crashed, want_named):
    native = [f for i in report["interpreters"] for t in i["threads"] for f in t["frames"] if f["kind"] == "native"]
    if not native:
        raise Failure("--native: no native frame in any thread")
    if crashed is not None:
        t = [t for i in report["interpreters"] for t in i["threads"] if t["crashed"]][0]
        first = t["frames"][0]
        if first["kind"] != "native":
            raise Failure("--native: the crashed thread's innermost frame is %s, not native C" % first["kind"])
        if want_named and not first.get("function"):
            raise Failure("--native: the crashed thread's innermost frame is unnamed with the files at hand")
    return len(native), len([f for f in native if not f.get("function")])


def check_bare(s, core, truth, crashed, snap_signal, args):
    report = s.bare(core, args)
    compare(truth, report, crashed, snap_signal)
    want = "debug-offsets" if int(truth["version"][1]) >= 13 else "scan"
    if report["python"]["located_by"] != want:
        raise Failure("located_by %s, not %s" % (report["python"]["located_by"], want))
    no_file_read(report)
    what = "%d threads as recorded, located by %s" % (len(truth["threads"]), want)
    if args:
        listed_once(report)
        exact = compare_locals(truth, report, stdlib=False, no_files=True)
        what += "; %d reprs exactly Python's, the others said missing (their types' names are in the " \
            "hidden files), none wrong" % exact
    return what


def check_bare_text(s, core, truth, args):
    return "%d frames in the text" % text_frames(s.bare(core, args, fmt="text"), truth)


def check_bare_native(s, core, truth, crashed, snap_signal, args):
    report = s.bare(core, ["--native"] + list(args))
    compare(truth, report, crashed, snap_signal)
    no_file_read(report)
    n, unnamed = native_frames(report, crashed, False)
    return "%d native frames, %d unnamed (\"??\")" % (n, unnamed)


def check_files(core, truth, crashed, snap_signal, args):
    report = analyze(core, args)
    compare(truth, report, crashed, snap_signal)
    if report["python"]["binary"]["found_by"] is None:
        raise Failure("the stripped executable was not read although it is there")
    n = text_frames(analyze(core, args, fmt="text"), truth)
    what = "%d threads as recorded, located by %s; %d frames in the text" % (
        len(truth["threads"]), report["python"]["located_by"], n)
    if args:
        listed_once(report)
        exact = compare_locals(truth, report)
        what += "; every repr exactly Python's (%d)" % exact
    return what


def check_files_native(core, truth, crashed, snap_signal, args):
    report = analyze(core, ["--native"] + list(args))
    compare(truth, report, crashed, snap_signal)
    n, unnamed = native_frames(report, crashed, True)
    return "%d native frames, %d unnamed (\"??\")" % (n, unnamed)


def check_fingerprint(s, core, workdir):
    plain, native = twin_fingerprints("py" + s.name[len("standalone"):], workdir)
    mine, mine_native = analyze(core)["fingerprint"], analyze(core, ["--native"])["fingerprint"]
    bare = s.bare(core)["fingerprint"]
    for what, got, want in (("", mine, plain), ("--native: ", mine_native, native), ("no file: ", bare, plain)):
        if got != want:
            raise Failure("%sfingerprint %s, pyenv's gives %s" % (what, got, want))
    return "%s, and %s with --native (%s), as on glibc" % (plain["hash"], native["hash"], " < ".join(native["frames"]))


def check(name, target_exe, scenario, workdir, subs):
    s = Setup(name, target_exe, workdir)
    crashed = snap_signal = None
    if scenario == "crash":
        core, truth_path = take_crash(s.target, workdir, ["crash.py"], signal.SIGSEGV)
        crashed = signal.SIGSEGV
    else:
        core, truth_path, snap_signal = take_snapshot(s.target, scenario, workdir)
    truth = json.load(open(truth_path))
    args = ["--locals=deep"] if scenario == "locals" else []
    what = check_bare(s, core, truth, crashed, snap_signal, args)
    subs.append(("no file: text", check_bare_text, (s, core, truth, args)))
    subs.append(("no file: --native", check_bare_native, (s, core, truth, crashed, snap_signal, args)))
    subs.append(("the stripped files: JSON and text", check_files, (core, truth, crashed, snap_signal, args)))
    subs.append(("the stripped files: --native", check_files_native, (core, truth, crashed, snap_signal, args)))
    if scenario == "crash":
        subs.append(("fingerprint as on pyenv's shared build", check_fingerprint, (s, core, workdir)))
    return "no file but the core: " + what


def main():
    tap = TAP()
    for name in NAMES:
        target, why = interpreters.find(name)
        for tool, package in (("gcore", "gdb"), ("unshare", "util-linux"), ("ldd", "libc-bin")):
            if not why and not shutil.which(tool):
                why = "%s not installed (Debian package %s)" % (tool, package)
        scenario_cases(tap, name, target, why, SCENARIOS,
                       lambda scenario, workdir, subs, name=name, target=target:
                       check(name, target.exe, scenario, workdir, subs))
    schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
