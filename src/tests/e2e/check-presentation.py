"""How the text report presents the stacks, and the process facts around
them, on real cores of every interpreter on this machine (pyenv's
/root/.pyenv/versions/3.*, Debian's /usr/bin/python3.11) running
src/tests/e2e/scenarios/presenting.py, both as a gcore snapshot (wait) and as a
kernel core of a real SIGSEGV (fault):

  * process.ppid, uid and gid in JSON and the text's "Parent pid" line are
    what the process's os.getppid(), os.getuid() and os.getgid() said (the
    process takes uid and gid 4242 first when run as root); also in a
    minidump lldb saves of the waiting process (its /proc/PID/status
    stream), when lldb-19 or lldb-16 is installed;
  * every Python frame's column, end_line and end_column in JSON are what
    the process found for it as traceback does for a traceback's frames
    (code.co_positions() at f_lasti; 3.11+), null before 3.11 (the crashing frame of the fault,
    which moved on after the record, is left out);
  * with --all-threads, each thread's traceback in the text is, line for
    line, the one Python's own traceback module writes of the stack the
    process saw (source lines, the 3.11+ carets, the recursion of DEPTH
    calls collapsed into "[Previous line repeated N more times]"), but for
    Python's ~ under parts of a range, which pycore draws as ^;
  * a frame whose file is a FIFO gets no source line (and pycore does not
    block reading it); a line holding control characters is shown escaped
    as repr() escapes them, with its carets (3.11+); no control character
    but line ends is in the text;
  * by default the WORKERS threads with one stack share one section
    naming them all; --no-source leaves the source lines out;
  * --color: always colours, never does not, auto colours on a terminal
    (a pseudo-terminal here) unless NO_COLOR is set;
  * two dumps give two text reports with a blank line between them;
  * --format collapsed: strictly the folded-stack format, a line per
    distinct stack of the process's threads (outermost first, "function
    (file:line)"), its count the number of threads with it.

The interpreters of the Debian unstable root (src/tests/e2e/interpreters/
sid*.interp) run there, and their kernel cores of the fault are read with
--sysroot (source lines from the root).

The sanitizer pass runs the pyenv builds among
pycoretest.interpreters.feature_names() and the root's.

Output: TAP, one line per case; a case that cannot run here (no gcore, a
core_pattern the kernel cores of this test cannot be found with) is a skip
by name."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.env import scaled
Failure = pt.Failure


LLDB = next((p for p in (shutil.which(n) for n in ("lldb-19", "lldb-16")) if p), None)


def take(target, workdir, mode):
    """The core of presenting.py in MODE: (core, truth, facts, the path of
    lldb's minidump of it or None)."""
    dmp = None
    os.chmod(workdir, 0o777)  # the process writes there under its other ids
    if mode == "fault":
        core, truth_path = pt.take_crash(target, workdir, ["presenting.py", "fault"], signal.SIGSEGV)
    else:
        truth_path = os.path.join(workdir, "truth.json")
        proc = target.popen([target.scenario(workdir, "presenting.py"), truth_path, "wait"], workdir,
                            stdout=subprocess.PIPE)
        try:
            if not pt.wait_ready(proc):
                raise Failure("the scenario did not get ready (exit %s)" % proc.poll())
            if LLDB:
                dmp = os.path.join(workdir, "live.dmp")
                subprocess.run([LLDB, "-p", str(proc.pid), "-b", "-o",
                                "process save-core --plugin-name=minidump --style stack " + dmp],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(300))
                if not os.path.exists(dmp):
                    raise Failure("%s wrote no minidump" % LLDB)
            g = subprocess.run(["gcore", "-o", os.path.join(workdir, "core"), str(proc.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
            core = os.path.join(workdir, "core.%d" % proc.pid)
            if g.returncode != 0 or not os.path.exists(core):
                raise Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-500:])
        finally:
            proc.kill()
            proc.wait()
    with open(truth_path) as f:
        truth = json.load(f)
    with open(truth_path + ".presenting") as f:
        facts = json.load(f)
    return core, truth, facts, dmp


SYSROOT = []  # --sysroot ROOT for the interpreter under test, when it runs in one


def text_report(core, args=()):
    p = subprocess.run([pt.PYCORE, "analyze"] + SYSROOT + list(args) + [core], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=scaled(120))
    if p.returncode != 0:
        raise Failure("text report %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                      p.stderr.decode("utf-8", "replace").strip()))
    return p.stdout.decode("utf-8")


def pycore_json(args, core, codes=(0,)):
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + SYSROOT + args + [core])
    if rc not in codes:
        raise Failure("pycore %s: exit %d: %s" % (" ".join(args), rc, err.strip()))
    return pt.load_report(out)


def check_ids(report, text, facts):
    proc = report["process"]
    got = dict((k, proc[k]) for k in ("ppid", "uid", "gid"))
    want = dict((k, facts[k]) for k in ("ppid", "uid", "gid"))
    if got != want:
        raise Failure("process ids %s; the process said %s" % (got, want))
    line = "Parent pid %d, uid %d, gid %d, state " % (facts["ppid"], facts["uid"], facts["gid"])
    if not any(l.startswith(line) for l in text.splitlines()):
        raise Failure("the text report has no line starting %r" % line)


def python_thread(report, ident):
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["ident"] == ident:
                return t
    raise Failure("no thread with ident %d in the report" % ident)


def check_positions(report, facts, mode):
    """Columns and end lines as the process found them."""
    n = 0
    for ident, want in facts["threads"].items():
        frames = [f for f in python_thread(report, int(ident))["frames"] if f["kind"] == "python"]
        if len(frames) != len(want):
            raise Failure("thread %s: %d Python frames, the process saw %d" % (ident, len(frames), len(want)))
        for k, (f, w) in enumerate(zip(frames, want)):
            if k == 0 and mode == "fault" and int(ident) == facts["spiral"]:
                continue
            got = (f["line"], f["end_line"], f["column"], f["end_column"])
            exp = (w["line"], w["end_line"], w["column"], w["end_column"])
            if got != exp:
                raise Failure("thread %s frame %d (%s): line, end_line, column, end_column %s; the process "
                              "said %s" % (ident, k, w["function"], got, exp))
            n += 1
    return n


def section(text, ident):
    """The lines of the traceback of the thread with IDENT in TEXT."""
    lines = text.splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith("Thread ") and "(ident 0x%x" % ident in l]
    if len(head) != 1:
        raise Failure("%d sections for thread ident 0x%x" % (len(head), ident))
    out = []
    for l in lines[head[0] + 2:]:
        if not l:
            break
        out.append(l)
    return out


def is_caret(line):
    return bool(line.strip()) and set(line.strip()) <= set("^~")


def python_lines(chunks, carets=True):
    """Python's traceback lines, ~ drawn as ^ (pycore draws a range in ^);
    without the caret lines unless CARETS."""
    out = []
    for line in "".join(chunks).splitlines():
        if is_caret(line):
            if not carets:
                continue
            line = line.replace("~", "^")
        out.append(line)
    return out


def check_carets(lines, frames):
    """Each caret line of LINES (a thread's traceback) under the frame's
    range as the process found it: FRAMES innermost first, each with its
    source line and columns (byte offsets)."""
    n = 0
    outer_first = list(reversed(frames))
    k = -1
    for i, line in enumerate(lines):
        if line.startswith("  File "):
            k += 1
        elif line.startswith("  [Previous line repeated "):
            k += int(line.split()[3])
        elif is_caret(line):
            f = outer_first[k]
            raw = f["source"].rstrip("\n")
            b = raw.encode()
            start = len(b[:f["column"]].decode())
            end = len(b[:f["end_column"]].decode()) if f["end_line"] == f["line"] else len(raw.rstrip())
            lead = len(raw) - len(raw.lstrip())
            want = "    " + " " * (start - lead) + "^" * (end - start)
            if line != want:
                raise Failure("caret line %r under %r; the range %d-%d of the process is %r"
                              % (line, lines[i - 1], f["column"], f["end_column"], want))
            n += 1
    return n


def cut_innermost(lines):
    """LINES without the innermost frame's (the last File line on)."""
    last = max(i for i, l in enumerate(lines) if l.startswith("  File "))
    return lines[:last]


def check_tracebacks(core, facts, mode, minor):
    """3.13 draws carets by a rule of its own that reads the statement's
    syntax; pycore keeps 3.11's: for 3.13+ the lines but the carets must
    be Python's, and the carets must be under the frame's range."""
    text = text_report(core, ["--all-threads"])
    carets = 0
    for ident, chunks in facts["tracebacks"].items():
        # a blocked thread's "waiting for <...>" line is pycore's own, not
        # the traceback's (check-locks checks it)
        got = [l for l in section(text, int(ident)) if not l.startswith("  waiting for <")]
        if mode == "fault" and int(ident) == facts["spiral"]:
            got = cut_innermost(got)
            carets += check_carets(got, facts["threads"][ident][1:])
        else:
            carets += check_carets(got, facts["threads"][ident])
        want = python_lines(chunks, carets=minor < 13)
        if minor >= 13:
            got = [l for l in got if not is_caret(l)]
        if mode == "fault" and int(ident) == facts["spiral"]:
            want = cut_innermost(want)
        if got != want:
            raise Failure("thread %s: pycore's traceback\n%s\nPython's\n%s" % (ident, "\n".join(got), "\n".join(want)))
    repeated = "  [Previous line repeated %d more times]" % (facts["depth"] - 1 - 3)
    if repeated not in text:
        raise Failure("no %r in the text" % repeated)
    if minor >= 11 and not carets:
        raise Failure("no caret line in the text")
    return len(facts["tracebacks"])


CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def frame_lines(text, path):
    """The lines after the File line of PATH in TEXT that belong to that
    frame (source and carets, indented four spaces), up to the next File
    line or a line of the thread's own (a "waiting for" line)."""
    lines = text.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith('  File "%s", line ' % path)]
    if len(at) != 1:
        raise Failure("%d frames of %s in the text" % (len(at), path))
    out = []
    for l in lines[at[0] + 1:]:
        if not l.startswith("    "):
            break
        out.append(l)
    return out


def check_hostile(core, facts, minor):
    text = text_report(core)
    bad = CONTROL.search(text)
    if bad:
        raise Failure("the text holds control character %r" % bad.group())
    h = facts["hostile"]
    if frame_lines(text, h["fifo"]):
        raise Failure("the FIFO's frame has lines under it: %r" % frame_lines(text, h["fifo"]))
    want = ["    " + repr(h["esc_line"])[1:-1]]
    if minor >= 11:
        want.append("    " + "^" * len("parked.acquire()"))
    if frame_lines(text, h["esc"]) != want:
        raise Failure("under the frame of %s: %r, want %r" % (h["esc"], frame_lines(text, h["esc"]), want))


def check_groups(core, report, truth, facts):
    text = text_report(core)
    workers = [t for t in truth["threads"] if (t["name"] or "").startswith("worker-")]
    if len(workers) != facts["workers"]:
        raise Failure("the process recorded %d workers of %d" % (len(workers), facts["workers"]))
    lines = text.splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith("%d threads with this stack: " % len(workers))]
    if len(head) != 1:
        raise Failure("no one section for the %d workers" % len(workers))
    for w in workers:
        tid = python_thread(report, w["ident"])["tid"]
        if '%d "%s"' % (tid, w["name"]) not in lines[head[0]]:
            raise Failure("the group's line %r does not name %d %s" % (lines[head[0]], tid, w["name"]))
        if "(ident 0x%x" % w["ident"] in text:
            raise Failure("worker %s has a section of its own too" % w["name"])
    block = []
    for l in lines[head[0] + 2:]:
        if not l:
            break
        block.append(l)
    if block != section(text_report(core, ["--all-threads"]), workers[0]["ident"]):
        raise Failure("the group's traceback is not the workers' one:\n%s" % "\n".join(block))
    bare = text_report(core, ["--no-source"])
    sources = [l for l in bare.splitlines() if l.startswith("    ") and not l.startswith("    File ")]
    if sources:
        raise Failure("--no-source: the text still has %r" % sources[0])


def check_color(core):
    esc = "\x1b["
    if esc not in text_report(core, ["--color=always"]):
        raise Failure("--color=always: no colour")
    for args, env, want in (([], {}, True), ([], {"NO_COLOR": "1"}, False), (["--color=never"], {}, False)):
        import pty
        master, slave = pty.openpty()
        e = dict(os.environ)
        e.pop("NO_COLOR", None)
        e.update(env)
        p = subprocess.Popen([pt.PYCORE, "analyze"] + SYSROOT + args + [core], stdout=slave, stderr=subprocess.DEVNULL, env=e)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        p.wait()
        if (esc.encode() in out) != want:
            raise Failure("on a terminal with %s %s: colour %s, want %s" % (args, env, not want, want))
    if esc in text_report(core, ["--color=always", "--format", "json"]):
        raise Failure("JSON with --color=always has colour codes")


def check_two(core):
    one = text_report(core)
    two = text_report(core, [core])
    if two != one + "\n" + one:
        raise Failure("two dumps: not the two reports with a blank line between them")


FOLDED = re.compile(r"^(?P<stack>[^;\n]+(;[^;\n]+)*) (?P<count>[1-9][0-9]*)$")
FRAME = re.compile(r"^(?P<function>[^;()\n]+) \((?P<file>[^;\n]+):(?P<line>[1-9][0-9]*)\)$")


def check_collapsed(core, truth):
    rc, out, err = pt.run_pycore(["analyze", "--format", "collapsed"] + SYSROOT + [core])
    if rc != 0:
        raise Failure("--format collapsed: exit %d: %s" % (rc, err.strip()))
    got = {}
    for line in out.splitlines():
        m = FOLDED.match(line)
        if not m:
            raise Failure("--format collapsed: %r is not a folded-stack line" % line)
        frames = m.group("stack").split(";")
        for f in frames:
            if not FRAME.match(f):
                raise Failure("--format collapsed: frame %r is not 'function (file:line)'" % f)
        if m.group("stack") in got:
            raise Failure("--format collapsed: stack %r on two lines" % m.group("stack")[:80])
        got[m.group("stack")] = int(m.group("count"))
    want = {}
    for t in truth["threads"]:
        stack = ";".join("%s (%s:%d)" % (f["function"], f["file"], f["line"]) for f in reversed(t["frames"]))
        want[stack] = want.get(stack, 0) + 1
    if got != want:
        raise Failure("--format collapsed: %s; the process's threads: %s" % (got, want))
    return sum(got.values())


def scenario(target, workdir, mode):
    SYSROOT[:] = target.pycore_args()
    core, truth, facts, dmp = take(target, workdir, mode)
    report = pycore_json([], core)
    pt.compare(truth, report, signal.SIGSEGV if mode == "fault" else None)
    text = text_report(core)
    check_ids(report, text, facts)
    npos = check_positions(report, facts, mode)
    ntb = check_tracebacks(core, facts, mode, truth["version"][1])
    check_groups(core, report, truth, facts)
    check_hostile(core, facts, truth["version"][1])
    check_color(core)
    check_two(core)
    nfolded = check_collapsed(core, truth)
    said = ["%d frames' positions, %d tracebacks as Python's, %d threads folded" % (npos, ntb, nfolded),"pid %d: ppid %d, uid %d, gid %d" % (facts["pid"], facts["ppid"], facts["uid"], facts["gid"])]
    if dmp:
        # a stack-style minidump lacks the heap: an incomplete report (1)
        rc, out, err = pt.run_pycore(["analyze", dmp])
        check_ids(pycore_json([], dmp, (0, 1)), out, facts)
        said.append("lldb's minidump too")
    return ", ".join(said)


def main():
    tap = pt.TAP()
    if not shutil.which("gcore"):
        tap.skip("presentation scenarios", "gcore not installed (Debian package gdb)")
        return tap.done()
    found = interpreters.pyenv_pythons() + [p for p in [interpreters.path("debian3.11")] if p]
    if interpreters.sanitizer_pass():
        # (pycore's rendering under the sanitizers, not every version again)
        found = [p for p in (interpreters.path(n) for n in interpreters.feature_names() if not n.startswith("sid"))
                 if p]
    if not found:
        tap.skip("presentation scenarios", "no interpreter")
    for exe in found:
        target = pt.Target(exe)
        for mode in ("wait", "fault"):
            workdir = tempfile.mkdtemp(prefix="pycore-presenting-")
            pt.run_in(tap, "%s %s" % (exe, mode), workdir, scenario, target, workdir, mode)
    # Debian unstable's interpreters run in their root: kernel cores only
    # (gcore of a chrooted process loses its stacks), read with --sysroot
    for name in [n for n in interpreters.names() if n.startswith("sid")]:
        label = name + " fault"
        target, why = interpreters.find(name)
        if why:
            tap.skip(label, why)
            continue
        workdir = target.workdir("pycore-presenting-")
        pt.run_in(tap, label, workdir, scenario, target, workdir, "fault")
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
