"""analyze --save FILE: compact dumps of real cores of every scenario kind,
on several interpreters (py3.9, py3.11, py3.12, py3.13, Debian's 3.11;
one missing is a skip by name).

For each scenario's core -- a crash (the kernel's core of a real SIGSEGV),
threads, locals (with --locals=deep), asyncio tasks (with --tasks, 3.8+),
native (with --native), and bigdata (a process holding 100 MB) -- the
compact dump saved with those options, plain and zstd-compressed (.zst):

  * analyzed with the same options gives the same JSON report as the
    original, "input" (path, size, compression) aside;
  * its size is said in the TAP line; for a core of 50 MB or more it is at
    most 1 % of the core's size;
  * gdb -batch -ex 'thread apply all bt' EXE COMPACT lists every thread of
    the process, and no "Cannot access memory" in any thread's three
    innermost frames;
  * --save with two dumps, and in batch, is a usage error (exit 2)."""
import json
import os
import shutil
import signal
import sys
import tempfile

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.compact import first_difference, gdb_threads
from pycoretest.cores import take_crash, take_snapshot
Failure = pt.Failure

INTERPRETERS = ["py3.9", "py3.11", "py3.12", "py3.13", "debian3.11"]
# name: (how the core is taken, pycore's options, the least minor version)
SCENARIOS = {
    "crash": ("crash", [], 6),
    "threads": ("threads", [], 6),
    "locals": ("locals", ["--locals=deep"], 6),
    "asyncio": ("aio_tasks", ["--tasks"], 8),
    "native": ("native", ["--native"], 6),
    "bigdata": ("bigdata", [], 6),
}
BIG = 50 << 20


def report_of(target, core, opts, save=None):
    args = ["analyze", "--format", "json"] + opts + target.pycore_args()
    if save:
        args += ["--save", save]
    rc, out, err = pt.run_pycore(args + [core])
    if rc not in (0, 1):
        raise Failure("pycore %s%s: exit %d: %s" % (" ".join(opts), " --save" if save else "", rc, err.strip()))
    report = pt.load_report(out)
    report.pop("input", None)
    return rc, report


def take(target, how, work):
    if how == "crash":
        core, _ = take_crash(target, work, ["crash.py"], signal.SIGSEGV)
        return core
    core, _, _ = take_snapshot(target, how, work)
    return core


def check(target, name, work):
    how, opts, least = SCENARIOS[name]
    if target.minor() < least:
        raise pt.Skip("%s needs 3.%d+" % (name, least))
    core = take(target, how, work)
    size = os.path.getsize(core)
    compact = os.path.join(work, "compact.core")
    rc0, want = report_of(target, core, opts, save=compact)
    csize = os.path.getsize(compact)
    rc1, got = report_of(target, compact, opts)
    d = first_difference(want, got)
    if d or rc0 != rc1:
        raise Failure("the compact dump's report differs (exit %d, the original's %d): %s" % (rc1, rc0, d))
    zst = compact + ".zst"
    report_of(target, core, opts, save=zst)
    zsize = os.path.getsize(zst)
    d = first_difference(want, report_of(target, zst, opts)[1])
    if d:
        raise Failure("the .zst compact dump's report differs: %s" % d)
    if size >= BIG and csize * 100 > size:
        raise Failure("compact dump of %d bytes, more than 1 %% of the core's %d" % (csize, size))
    detail = "core %d bytes, compact %d (%.3f %%), .zst %d" % (size, csize, 100.0 * csize / size, zsize)
    if target.root:
        return detail + "; gdb not run on a process of another root"
    if not shutil.which("gdb"):
        return detail + "; gdb not installed, its check not run"
    n = gdb_threads(os.path.realpath(target.exe), compact, want["process"]["threads"])
    return detail + "; gdb: %d threads" % n


def usage_errors(work):
    for args in (["analyze", "--save", os.path.join(work, "x"), "/dev/null", "/dev/null"],
                 ["batch", "--save", os.path.join(work, "x"), "/dev/null"]):
        rc, out, err = pt.run_pycore(args)
        if rc != 2 or "--save" not in err:
            raise Failure("%s: exit %d, %r; want exit 2 naming --save" % (" ".join(args), rc, err))
    return "two dumps, and batch: exit 2"


def main():
    tap = pt.TAP()
    work = tempfile.mkdtemp(prefix="pycore-save-")
    pt.run_in(tap, "--save usage errors", work, usage_errors, work)
    if not shutil.which("gcore"):
        tap.skip("save scenarios", "gcore not installed (Debian package gdb)")
        return tap.done()
    for name in INTERPRETERS:
        target, why = interpreters.find(name)
        for scenario in SCENARIOS:
            label = "%s %s" % (name, scenario)
            if target is None:
                tap.skip(label, "%s: %s" % (name, why))
                continue
            work = tempfile.mkdtemp(prefix="pycore-save-")
            pt.run_in(tap, label, work, check, target, scenario, work)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
