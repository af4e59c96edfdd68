"""Truncated cores, cut the way the kernel cuts them: for every interpreter
present (src/tests/e2e/interpreters/), the crash scenario (a SIGSEGV in the
main thread, a worker blocked; both record their stacks first) crashes
with RLIMIT_CORE unlimited, then again with RLIMIT_CORE at 8 KiB (within
the notes or just past them) and at 25, 50, 75 and 90 % of the bytes the
whole core holds: the kernel stops writing at the limit (it counts the
bytes it writes, not the holes it leaves for pages of zeros, so the file
may end past the limit).  The whole core is
also cut at every 5 % (copies of its first bytes), and where the segment of
the crashing thread's C stack begins (its Python frame pointer, 3.11's
_PyCFrame, is lost with it while its data stack survives: the frames are
recovered from there, marked).

Every cut must give, within 60 s and never by a signal:
- exit 4 (nothing usable) with one line on stderr when the cut falls
  before the end of the notes (or of the program headers);
- otherwise exit 1 and a partial report that matches the schema, with the
  truncation among its warnings, the process facts of the notes (pid,
  signal, the thread that received it) right, every Python frame it shows
  the process's own frame at that place (innermost first; a frame found on
  the data stack is marked recovered; a line may be unknown, never wrong), no thread the process did not have,
  and where a thread's stack stops short of the process's, the thread's
  error saying where it stopped (the frame, the address not in the dump);
  a thread the process had that the report leaves out is explained by a
  warning (the interpreter state or its thread list beyond the cut).

Output: TAP, one line per interpreter and limit or cut (a skip by name when
the interpreter is not installed or the kernel's cores cannot be had).
"""
import json
import os
import signal
import struct
import subprocess
import sys

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.corefile import crashing_stack_offset, layout
from pycoretest.env import scaled
Failure, Skip = pt.Failure, pt.Skip

LIMITS = ["8192", "25%", "50%", "75%", "90%"]  # of the bytes the whole core holds


def check_cut(target, core, truth_path):
    """pycore over CORE, a cut core: see the top."""
    size = os.path.getsize(core)
    try:
        notes, declared = layout(core)
    except struct.error:
        notes = declared = float("inf")  # the headers cut
    if size >= declared:
        # a core of another run of the scenario may hold fewer bytes
        raise Skip("the kernel wrote this core whole (%d bytes) under the limit" % size)
    try:
        p = subprocess.run([pt.PYCORE, "analyze", "--format", "json"] + target.pycore_args() + [core],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(60))
    except subprocess.TimeoutExpired:
        raise Failure("pycore still running after 60 s")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        raise Failure("pycore died of %s: %s" % (signal.Signals(-p.returncode).name, err[-500:]))
    if len(err.splitlines()) != 1:
        raise Failure("exit %d with %d lines on stderr: %s" % (p.returncode, len(err.splitlines()), err[-500:]))
    if size < notes:
        if p.returncode != 4:
            raise Failure("cut at %d, before the end of the notes: exit %d, want 4: %s"
                          % (size, p.returncode, err.strip()))
        return "%d bytes, the notes cut: exit 4: %s" % (size, err.strip())
    if p.returncode != 1:
        raise Failure("cut at %d, the notes whole: exit %d, want 1: %s" % (size, p.returncode, err.strip()))
    report = pt.load_report(p.stdout)
    truth = json.load(open(truth_path))
    warnings = report["warnings"]
    if not any("truncated" in w for w in warnings):
        raise Failure("no warning says the core is truncated: %s" % warnings)
    proc = report["process"]
    main = [tt for tt in truth["threads"] if tt.get("main")][0]
    if proc["pid"] != truth["pid"] or not proc["signal"] or proc["signal"]["number"] != signal.SIGSEGV:
        raise Failure("pid %s, signal %s; the process was %s and died of SIGSEGV"
                      % (proc["pid"], proc["signal"], truth["pid"]))
    if main.get("native_id") is not None and proc["crashed_tid"] != main["native_id"]:
        raise Failure("crashed_tid %s, the crashing thread is %s" % (proc["crashed_tid"], main["native_id"]))
    got = {t["ident"]: t for i in report["interpreters"] for t in i["threads"]}
    known = {tt["ident"]: tt for tt in truth["threads"]}
    stopped = []
    for ident, t in got.items():
        pyframes = [f for f in t["frames"] if f["kind"] == "python"]
        if ident not in known:
            if pyframes:
                raise Failure("thread %s: in the report with Python frames, unknown to the process" % ident)
            continue
        want = [(f["function"], f["file"], f["line"]) for f in known[ident]["frames"]]
        label = "thread %s (%s)" % (known[ident].get("name"), ident)
        at = 0  # recovered frames: the process's, in its order (some may be left out)
        for i, f in enumerate(pyframes):
            mine = (f["function"], f["file"], f["line"])
            if f.get("recovered"):
                # the line unknown (its line table beyond the cut) is not
                # wrong: the function and file must be the process's
                same = [k for k in range(at, len(want))
                        if want[k] == mine or (mine[2] is None and want[k][:2] == mine[:2])]
                if not same:
                    raise Failure("%s: recovered frame %s is none of the process's %s after frame %d"
                                  % (label, mine, want, at))
                at = same[0] + 1
            elif i < len(want) and mine[2] is None and mine[:2] == want[i][:2]:
                at = i + 1  # the line unknown (its line table beyond the cut): not wrong
            elif i >= len(want) or mine != want[i]:
                raise Failure("%s: frame %d is %s, the process's %s" % (label, i, mine,
                                                                         want[i] if i < len(want) else None))
            else:
                at = i + 1
        if len(pyframes) < len(want) and not t["error"]:
            raise Failure("%s: %d of its %d frames, and no error saying where the stack stopped"
                          % (label, len(pyframes), len(want)))
        if t["error"]:
            stopped.append("%s: %d of %d frames: %s" % (known[ident].get("name") or ident, len(pyframes),
                                                        len(want), t["error"]))
    missing = [tt.get("name") or str(ident) for ident, tt in known.items() if ident not in got]
    if missing and len(warnings) < 2:
        raise Failure("threads %s left out, and no warning but the truncation's says why" % missing)
    detail = "%d bytes: exit 1" % size
    if missing:
        detail += "; threads left out (%s)" % [w for w in warnings if "truncated" not in w][0]
    if stopped:
        detail += "; stopped: " + "; ".join(stopped)
    return detail


def run_interpreter(tap, name):
    target, why = interpreters.find(name)
    labels = ["%s limit %s" % (name, lim) for lim in LIMITS] + ["%s cut at %d%%" % (name, pct)
                                                               for pct in range(5, 100, 5)] + \
        ["%s cut where the crashing thread's C stack begins" % name]
    if why is None:
        why = pt.kernel_core_usable()[1]
    if why:
        for label in labels:
            tap.skip(label, why)
        return
    work = target.workdir("pycore-trunc-%s-" % name)
    try:
        try:
            core, truth = pt.take_crash(target, work, ["crash.py"], signal.SIGSEGV)
        except (Failure, Skip) as e:
            for label in labels:
                (tap.skip if isinstance(e, Skip) else tap.not_ok)(label, "the whole core: %s" % e)
            return
        whole = os.path.getsize(core)
        # the kernel counts what it writes against the limit, not the
        # holes it seeks over (pages of zeros): the limits are fractions
        # of the bytes the core holds
        written = os.stat(core).st_blocks * 512
        os.rename(core, os.path.join(work, "whole.core"))
        core = os.path.join(work, "whole.core")
        for lim in LIMITS:
            limit = written * int(lim[:-1]) // 100 if lim.endswith("%") else int(lim)

            def limited(sub, limit=limit):
                c, t = pt.take_crash(target, sub, ["crash.py"], signal.SIGSEGV, limit)
                return check_cut(target, c, t)
            sub = target.workdir("pycore-trunc-%s-" % name)
            pt.run_in(tap, "%s limit %s (%d bytes)" % (name, lim, limit), sub, limited, sub)
        cut = os.path.join(work, "cut.core")
        for pct in list(range(5, 100, 5)) + ["stack"]:
            n = whole * pct // 100 if pct != "stack" else crashing_stack_offset(core)
            with open(core, "rb") as src, open(cut, "wb") as dst:
                left = n
                while left:
                    chunk = src.read(min(left, 1 << 20))
                    dst.write(chunk)
                    left -= len(chunk)
            tap.run("%s cut at %d%%" % (name, pct) if pct != "stack" else
                    "%s cut where the crashing thread's C stack begins (%d bytes)" % (name, n),
                    check_cut, target, cut, truth)
    finally:
        pt.drop_scratch(tap, work)


def main():
    tap = pt.TAP()
    for name in sys.argv[1:] or interpreters.names():
        run_interpreter(tap, name)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
