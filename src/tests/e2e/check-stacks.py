"""Real cores of real CPython processes, one interpreter per test.

usage: check-stacks.py NAME.interp
  The .interp file's name names the interpreter (py3.12, debian3.11-dbg,
  sid3.14: pycoretest.interpreters finds it on this machine, or the test
  skips by that name).  An interpreter of the Debian unstable root that
  scripts/sid-root makes runs in that root with chroot, a container in
  miniature, and pycore reads its cores from outside with --sysroot.

For each scenario in src/tests/e2e/scenarios/ the interpreter runs it; the
process records its own threads' stacks (sys._current_frames()) and then
blocks (a core is taken with gcore) or crashes (the kernel writes the core).
pycore's JSON report must match the record frame by frame, and every JSON
report must match src/report/pycore-report.schema.json.

Output is TAP (pycoretest.tap): a line per scenario and per check that
can be skipped on its own (the native stack against gdb's, the compressed copy),
a skip naming what is missing (the interpreter, a tool, a compiler).

Environment: PYCORE (the binary), srcdir (the source tree), KEEP_CORES=1 to
keep the temporary directories, PYCORE_QUICK=1 (make check-quick) only
QUICK_SCENARIOS, PYCORE_SCENARIOS=a,b only those.  Exit 0 pass, 1 a scenario failed.
"""
import json
import os
import shutil
import signal
import subprocess
import sys

from pycoretest import interpreters
from pycoretest.compare import compare, text_frames
from pycoretest.cores import (take_crash, take_snapshot, build_extension,
                              build_cxx)
from pycoretest.env import PYCORE
from pycoretest.locals import compare_locals, listed_once
from pycoretest.run import run_pycore, scenario_cases
from pycoretest.schema import load_report, schema_summary
from pycoretest.tap import TAP, Failure, Skip
from pycoretest.env import scaled

GCORE_SCENARIOS = ["threads", "recursion", "genco", "locals", "exceptions", "gc", "subinterp"]


def check_text(core, truth, args):
    rc, out, err = run_pycore(["analyze", "--format", "text"] + args + [core])
    if rc != 0:
        raise Failure("text report: exit %d: %s" % (rc, err.strip()))
    if "Traceback (most recent call last)" not in out:
        raise Failure("text report has no traceback")
    text_frames(out, truth)


# Compressed copies, made by each format's own CLI (Debian package, suffix,
# options): each scenario's copy is in one format, in turn, so every
# interpreter meets every format and every format every interpreter.
COMPRESSORS = [("zstd", "zstd", ".zst", ["-q", "-1"]), ("gzip", "gzip", ".gz", ["-1"]),
               ("xz", "xz-utils", ".xz", ["-0", "-T1"]), ("lz4", "lz4", ".lz4", ["-q", "-1"])]


def compressor_for(scenario):
    order = GCORE_SCENARIOS + list(CRASHES)
    return COMPRESSORS[order.index(scenario) % len(COMPRESSORS)]


def check_compressed(core, report, args, scenario):
    """A compressed copy gives the same report but for its input."""
    fmt, package, suffix, opts = compressor_for(scenario)
    if not shutil.which(fmt):
        raise Skip("%s not installed (Debian package %s)" % (fmt, package))
    with open(core, "rb") as src, open(core + suffix, "wb") as dst:
        z = subprocess.run([fmt, "-c"] + opts, stdin=src, stdout=dst, stderr=subprocess.PIPE)
    if z.returncode != 0:
        raise Failure("%s failed: %s" % (fmt, z.stderr.decode("utf-8", "replace")[-300:]))
    rc, out, err = run_pycore(["analyze", "--format", "json"] + args + [core + suffix])
    if rc != 0:
        raise Failure("%s copy: pycore exit %d: %s" % (fmt, rc, err.strip()))
    z = load_report(out)
    if z["input"]["compression"] != fmt or z["input"]["size"] != os.path.getsize(core + suffix):
        raise Failure("%s copy: input is %s" % (fmt, z["input"]))
    del z["input"]
    plain = dict(report)
    del plain["input"]
    if z != plain:
        raise Failure("%s copy: the report differs from the plain core's" % fmt)
    os.unlink(core + suffix)
    return "the same report"


GDB_FRAMES = """python
f = gdb.selected_thread() and gdb.newest_frame()
while f is not None:
    if f.type() in (gdb.NORMAL_FRAME, gdb.TAILCALL_FRAME):
        print("FRAME 0x%x %s" % (f.pc(), f.name()))
    f = f.older()
"""


def check_native(target, core, truth, innermost):
    """--native-all: the crashed thread's native frames are gdb's, frame for
    frame (the same return addresses, the tail-call frames gdb and pycore
    infer included; inlined calls left out), the innermost is the C function
    that faulted (strlen), and the Python frames are woven in the order the
    process recorded.  Without gdb: skipped, by name."""
    if not shutil.which("gdb"):
        raise Skip("gdb not installed (Debian package gdb)")
    rc, out, err = run_pycore(["analyze", "--format", "json", "--native-all"] + target.pycore_args() + [core])
    if rc not in (0, 1):
        raise Failure("--native-all: exit %d: %s" % (rc, err.strip()))
    report = load_report(out)
    crashed = [t for i in report["interpreters"] for t in i["threads"] if t["crashed"]][0]
    mine = [(int(f["address"], 16), f["function"]) for f in crashed["frames"]
            if f["kind"] == "native" and not f.get("inlined")]
    g = subprocess.run(["gdb", "-nx", "-batch"] + target.gdb_args() + ["-ex", GDB_FRAMES, target.host_exe(), core],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=scaled(120))
    theirs = []
    for line in g.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("FRAME "):
            _, pc, name = line.split(" ", 2)
            theirs.append((int(pc, 16), None if name == "None" else name))
    if not theirs:
        raise Failure("gdb listed no frames")
    # gdb stops at main (its "backtrace past-main" is off): pycore goes on
    # into libc's start code
    if theirs[-1][1] == "main" and len(mine) > len(theirs):
        mine_cmp = mine[:len(theirs)]
    else:
        mine_cmp = mine
    if [pc for pc, _ in mine_cmp] != [pc for pc, _ in theirs]:
        raise Failure("native frames differ from gdb's:\n  pycore %s\n  gdb    %s"
                      % (["%x %s" % m for m in mine], ["%x %s" % t for t in theirs]))
    if innermost and target.root and mine[0][1] is None and theirs[0][1] is None:
        pass  # the root has no debug info for libc: neither names the function
    elif innermost and (mine[0][1] or "").lstrip("_")[:len(innermost)] != innermost:
        raise Failure("the innermost native frame is %s, not %s" % (mine[0][1], innermost))
    py = [(f["function"], f["file"], f["line"]) for f in crashed["frames"] if f["kind"] == "python"]
    crasher = truth.get("crasher")
    ct = [tt for tt in truth["threads"] if (tt["ident"] == crasher if crasher is not None else tt.get("main"))][0]
    want = [(f["function"], f["file"], f["line"]) for f in ct["frames"]]
    if py != want:
        raise Failure("--native-all: Python frames %s, the process says %s" % (py, want))
    # --native keeps the frames outside the interpreter (strlen, ctypes, libc)
    rc, out, err = run_pycore(["analyze", "--format", "json", "--native"] + target.pycore_args() + [core])
    if rc not in (0, 1):
        raise Failure("--native: exit %d: %s" % (rc, err.strip()))
    crashed = [t for i in load_report(out)["interpreters"] for t in i["threads"] if t["crashed"]][0]
    kinds = [f["kind"] for f in crashed["frames"]]
    if kinds.count("python") != len(want) or len(kinds) > len(mine) + len(want):
        raise Failure("--native: frames %s" % [(f["kind"], f["function"]) for f in crashed["frames"]])
    return "%d native frames, gdb's" % len(mine)


# name: (script and its arguments, signal, innermost native function, what to build first)
CRASHES = {
    "crash": (["crash.py"], signal.SIGSEGV, "strlen", None),
    "abort": (["abort.py"], signal.SIGABRT, None, None),
    "sigbus": (["sigbus.py"], signal.SIGBUS, None, None),
    "ext-segv": (["extension.py", "segv"], signal.SIGSEGV, "crash_segv", build_extension),
    "ext-fpe": (["extension.py", "fpe"], signal.SIGFPE, "crash_fpe", build_extension),
    "cxx": (["cxx.py"], signal.SIGSEGV, "pycore_test::Boom::go(int volatile*)", build_cxx),
}


def check_sysroot_debug(target, core, report):
    """--sysroot alone finds separate debug info in the root's own
    usr/lib/debug: with the -dbg packages' files mounted there (in a mount
    namespace of this test's own), --layout=dwarf must give the same report
    as the table.  Without unshare or root: skipped, by name."""
    if os.geteuid() != 0:
        raise Skip("a mount namespace needs root")
    if not shutil.which("unshare"):
        raise Skip("unshare not installed (Debian package util-linux)")
    inside = os.path.join(target.root, "usr", "lib", "debug")
    os.makedirs(inside, exist_ok=True)
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh",
                        target.root + ".debug/usr/lib/debug", inside,
                        PYCORE, "analyze", "--format", "json", "--layout=dwarf", "--sysroot", target.root, core],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120))
    if p.returncode != 0:
        raise Failure("--layout=dwarf with the debug files in the root's usr/lib/debug: exit %d: %s"
                      % (p.returncode, p.stderr.decode().strip()))
    if load_report(p.stdout)["interpreters"] != report["interpreters"]:
        raise Failure("--layout=dwarf with the root's debug files gives another report than the table")
    return "the same report as the table's"


def check_subinterp(target, workdir):
    """The main interpreter's threads against what it recorded, and in each
    of the two others a thread running exactly the frames the code there
    recorded.  Their thread ids are not checked: CPython may leave on a
    subinterpreter's thread state the id of the thread that created it."""
    core, truth_path, snap_signal = take_snapshot(target, "subinterp", workdir)
    main_truth = json.load(open(truth_path))
    subs = []
    for n in (1, 2):
        frames = json.load(open(truth_path + ".sub%d" % n))["frames"]
        subs.append([(f["function"], f["file"], f["line"]) for f in frames])
    rc, out, err = run_pycore(["analyze", "--format", "json"] + target.pycore_args() + [core])
    if rc != 0:
        raise Failure("pycore exit %d: %s" % (rc, err.strip()))
    report = load_report(out)
    interps = report["interpreters"]
    if len(interps) != 3:
        raise Failure("%d interpreters, the process has 3" % len(interps))
    main = [i for i in interps if i["id"] == 0]
    others = [i for i in interps if i["id"] != 0]
    if len(main) != 1 or len(others) != 2 or len(set(i["id"] for i in others)) != 2:
        raise Failure("interpreter ids %s" % [i["id"] for i in interps])
    compare(main_truth, dict(report, interpreters=main), None, snap_signal)
    running = [[[(f["function"], f["file"], f["line"]) for f in t["frames"] if f["kind"] == "python"]
                for t in i["threads"]] for i in others]
    for n, want in enumerate(subs, 1):
        where = [k for k, stacks in enumerate(running) if want in stacks]
        if len(where) != 1:
            raise Failure("subinterpreter %d's code recorded %s; the other interpreters run %s"
                          % (n, want, running))
    if [k for k, stacks in enumerate(running) if subs[0] in stacks] == \
       [k for k, stacks in enumerate(running) if subs[1] in stacks]:
        raise Failure("both subinterpreters' stacks are in one interpreter: %s" % running)
    return "3 interpreters: %d threads in the main one, %d and %d frames in the others" % (
        len(main_truth["threads"]), len(subs[0]), len(subs[1]))


def check(target, scenario, workdir, name, subs):
    """One scenario: its main check here; the checks that can be skipped on
    their own are appended to SUBS as (name, function, arguments), to run
    once this one passed."""
    crashed = snap_signal = None
    if scenario == "subinterp":
        if target.minor() < 12:
            raise Skip("separate interpreters in one process need 3.12+")
        return check_subinterp(target, workdir)
    if scenario in CRASHES:
        argv, signo, _, build = CRASHES[scenario]
        if build:
            build(target, workdir)
        core, truth_path = take_crash(target, workdir, argv, signo)
        crashed = signo
    else:
        core, truth_path, snap_signal = take_snapshot(target, scenario, workdir)
    with open(truth_path) as f:
        truth = json.load(f)
    args = (["--locals=deep"] if scenario == "locals" else []) + target.pycore_args()
    rc, out, err = run_pycore(["analyze", "--format", "json"] + args + [core])
    if rc != 0:
        raise Failure("pycore exit %d: %s" % (rc, err.strip()))
    lines = out.strip().split("\n")
    if len(lines) != 1:
        raise Failure("JSON Lines: expected one line, got %d" % len(lines))
    report = load_report(lines[0])
    compare(truth, report, crashed, snap_signal)
    if target.root:
        # a kernel core names the files as the process saw them, inside
        # its root: the interpreter's symbols come through --sysroot
        py = report["python"]
        if py["located_by"] != "symbol" or not py["binary"]["path"].startswith(target.root + "/"):
            raise Failure("with --sysroot the interpreter was located by %s at %s" % (
                py["located_by"], py["binary"]["path"]))
        if scenario == "locals":
            # the same from the interpreter's own DWARF (its -dbg package's
            # debug file) instead of pycore's table and debug offsets
            dwarf = target.pycore_args() + ["--debug-dir", target.root + ".debug/usr/lib/debug",
                                            "--layout=dwarf", "--locals=deep"]
            rc, out, err = run_pycore(["analyze", "--format", "json"] + dwarf + [core])
            if rc != 0:
                raise Failure("--layout=dwarf: pycore exit %d: %s" % (rc, err.strip()))
            if load_report(out)["interpreters"] != report["interpreters"]:
                raise Failure("--layout=dwarf gives another report than the table")
        if scenario == "crash":
            subs.append(("--layout=dwarf with the debug files in the root's usr/lib/debug",
                         check_sysroot_debug, (target, core, report)))
            # without --sysroot none of the files the core names is here
            # (or they differ): 3.13+ is found by its debug offsets
            rc, out, err = run_pycore(["analyze", "--format", "json", core])
            if rc != 0:
                raise Failure("without --sysroot: pycore exit %d: %s" % (rc, err.strip()))
            bare = load_report(out)
            if bare["python"]["located_by"] != "debug-offsets":
                raise Failure("without --sysroot the interpreter was located by %s"
                              % bare["python"]["located_by"])
            compare(truth, bare, crashed)
    check_text(core, truth, target.pycore_args())
    if scenario in CRASHES:
        subs.append(("--native-all against gdb", check_native, (target, core, truth, CRASHES[scenario][2])))
        # both SIGSEGV scenarios touch address 0: the fault address is 0
        if crashed == signal.SIGSEGV and report["process"]["signal"]["address"] != "0x0":
            raise Failure("fault address %s, the process touched 0x0" % report["process"]["signal"]["address"])
    subs.append(("a %s-compressed copy" % compressor_for(scenario)[0], check_compressed,
                 (core, report, args, scenario)))
    nframes = sum(len(t["frames"]) for t in truth["threads"])
    if scenario == "locals":
        listed_once(report)
        exact = compare_locals(truth, report)
        return "%d threads, %d frames, %d reprs exactly Python's" % (len(truth["threads"]), nframes, exact)
    return "%d threads, %d frames" % (len(truth["threads"]), nframes)


# make check-quick's scenarios: threads and frames, locals, a real crash
QUICK_SCENARIOS = ["threads", "locals", "crash"]


def scenarios():
    """Every scenario; with PYCORE_SCENARIOS=a,b those; with PYCORE_QUICK=1
    (make check-quick) QUICK_SCENARIOS."""
    every = GCORE_SCENARIOS + list(CRASHES)
    if os.environ.get("PYCORE_SCENARIOS"):
        chosen = os.environ["PYCORE_SCENARIOS"].split(",")
        unknown = [s for s in chosen if s not in every]
        if unknown:
            sys.exit("check-stacks.py: PYCORE_SCENARIOS names no scenario %s (%s)" % (unknown, ", ".join(every)))
        return chosen
    if os.environ.get("PYCORE_QUICK") == "1":
        return QUICK_SCENARIOS
    return every


def main():
    tap = TAP()
    if len(sys.argv) != 2:
        sys.exit("usage: check-stacks.py NAME.interp (or NAME: py3.12, debian3.11, sid3.14, ...)")
    name = os.path.basename(sys.argv[1]).rsplit(".interp", 1)[0]
    target, why = interpreters.find(name)
    if not why and not target.root and not shutil.which("gcore"):
        why = "gcore not installed (Debian package gdb)"
    scenario_cases(tap, name, target, why, scenarios(),
                   lambda scenario, workdir, subs: check(target, scenario, workdir, name, subs))
    schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
