"""Real cores of real CPython processes, one interpreter per test.

usage: check-stacks.py INTERPRETER.interp
  The .interp file holds a shell glob of the interpreter executable, or
  sid:PATH for an interpreter of the Debian unstable root that
  scripts/sid-root makes (PATH inside it): the process then runs in that
  root with chroot, a container in miniature, and pycore reads its cores
  from outside with --sysroot.

For each scenario in src/tests/scenarios/ the interpreter runs it; the
process records its own threads' stacks (sys._current_frames()) and then
blocks (a core is taken with gcore) or crashes (the kernel writes the core).
pycore's JSON report must match the record frame by frame, and every JSON
report must match src/report/pycore-report.schema.json.

Output is TAP (src/tests/tap.py): a line per scenario and per check that
can be skipped on its own (the native stack against gdb's, the compressed copy),
a skip naming what is missing (the interpreter, a tool, a compiler).

Environment: PYCORE (the binary), srcdir (the source tree), KEEP_CORES=1 to
keep the temporary directories.  Exit 0 pass, 1 a scenario failed.
"""
import glob
import json
import re
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import TAP, Failure, Skip  # noqa: E402,F401  (the other check-*.py use them through here)
import report_schema  # noqa: E402

SRCDIR = os.environ.get("srcdir") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYCORE = os.environ.get("PYCORE") or os.path.join(SRCDIR, "pycore")
SCENARIOS = os.path.join(SRCDIR, "src", "tests", "scenarios")
GCORE_SCENARIOS = ["threads", "recursion", "genco", "locals", "exceptions", "gc", "subinterp"]
# Types whose repr pycore forms itself: it must be exactly Python's.
SCALARS = {"int", "bool", "float", "str", "bytes", "bytearray", "NoneType"}
DEFAULT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-f]+>$")
# The standard library's types pycore forms from memory (the versions where
# it does, first and last minor): exactly Python's repr too.
STDLIB_EXACT = {
    "complex": (6, 99), "range": (6, 99), "slice": (6, 99), "module": (6, 99),
    "ZeroDivisionError": (6, 99), "KeyError": (6, 99), "ValueError": (6, 99), "__main__.AppError": (6, 99),
    "collections.deque": (6, 99), "collections.OrderedDict": (6, 99), "collections.defaultdict": (6, 99),
    "collections.Counter": (6, 99), "__main__.Point": (7, 99), "__main__.Sub": (7, 99),
    "datetime.date": (6, 99), "datetime.time": (6, 99), "datetime.datetime": (6, 99),
    "datetime.timedelta": (6, 99), "datetime.timezone": (6, 99), "__main__.Color": (6, 99),
    "uuid.UUID": (6, 99), "fractions.Fraction": (6, 99), "functools.partial": (6, 99),
    "sys.version_info": (6, 99), "decimal.Decimal": (6, 99), "asyncgen_hooks": (6, 99),
    "os.stat_result": (9, 99), "pathlib.PosixPath": (6, 12), "pathlib.PurePosixPath": (6, 12),
    "pathlib._local.PosixPath": (13, 99), "pathlib._local.PurePosixPath": (13, 99), "__main__.Order": (7, 99), "__main__.Derived2": (7, 99), "generator": (6, 99), "coroutine": (6, 99),
}
# Locals that may keep the fallback: a Decimal that needs an exponent (its
# "E" or "e" is the thread's context's choice).
FALLBACK_NAMES = {"dec_small"}


class Target:
    """The interpreter under test, run on this machine or in a root
    filesystem with chroot.  Paths the process sees are "inside" paths;
    the test reads and writes "host" paths."""

    def __init__(self, exe, root=None):
        self.exe = exe              # as the process sees it
        self.root = root

    def host(self, inside):
        return self.root + inside if self.root else inside

    def inside(self, host):
        return host[len(self.root):] if self.root else host

    def host_exe(self):
        return self.host(self.exe)

    def workdir(self, prefix):
        """A scratch directory the process can reach, with the scenarios."""
        d = tempfile.mkdtemp(prefix=prefix, dir=os.path.join(self.root, "tmp") if self.root else None)
        if self.root:
            shutil.copytree(SCENARIOS, os.path.join(d, "scenarios"))
        return d

    def scenario(self, workdir, script):
        if self.root:
            return self.inside(os.path.join(workdir, "scenarios", script))
        return os.path.join(SCENARIOS, script)

    def popen(self, args, workdir, preexec=None, **kw):
        """The interpreter with ARGS (inside paths), its working directory
        WORKDIR (a host path)."""
        def enter():
            if self.root:
                os.chroot(self.root)
                os.chdir(self.inside(workdir) or "/")
            if preexec:
                preexec()
        return subprocess.Popen([self.exe] + args, cwd=None if self.root else workdir,
                                preexec_fn=enter, **kw)

    def minor(self):
        p = self.popen(["-c", "import sys; print(sys.version_info[1])"], "/" if not self.root else self.root,
                       stdout=subprocess.PIPE)
        v = p.communicate()[0].decode().strip()
        return int(v) if v.isdigit() else 0

    def pycore_args(self):
        return ["--sysroot", self.root] if self.root else []

    def gdb_args(self):
        if not self.root:
            return []
        return ["-iex", "set sysroot " + self.root,
                "-iex", "set debug-file-directory " + self.root + ".debug/usr/lib/debug"]


def sid_root():
    """The Debian unstable root (scripts/sid-root builds it once): (path,
    None) or (None, why not)."""
    p = subprocess.run([os.path.join(SRCDIR, "scripts", "sid-root")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1800)
    if p.returncode != 0:
        return None, p.stderr.decode("utf-8", "replace").strip() or "scripts/sid-root failed"
    return p.stdout.decode().strip(), None


def wait_ready(proc, timeout=30):
    """Wait until the process prints READY; return False on timeout/exit."""
    buf = b""
    end = timeout
    while end > 0:
        r, _, _ = select.select([proc.stdout], [], [], 0.5)
        end -= 0.5
        if r:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                return False
            buf += chunk
            if b"READY" in buf:
                return True
        elif proc.poll() is not None:
            return False
    return False


def run_pycore(args, env=None):
    p = subprocess.run([PYCORE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


_validator = None


def validator():
    """The schema validator every JSON report of the tests goes through."""
    global _validator
    if _validator is None:
        _validator = report_schema.Validator()
    return _validator


def load_report(out, what="pycore's JSON report"):
    """The one report in OUT (pycore's standard output, bytes or str),
    checked against the schema."""
    if isinstance(out, bytes):
        out = out.decode("utf-8", "replace")
    objs = validator().check(out, what)
    if len(objs) != 1:
        raise Failure("%s: expected one report, got %d" % (what, len(objs)))
    return objs[0]


def schema_summary(tap):
    validator().summary(tap, "every JSON report matches the schema")


def frame_str(f):
    return "%s (%s:%s)" % (f.get("function"), f.get("file"), f.get("line"))


def version_of(truth):
    """The process's version as pycore writes it: 3.15.2, or 3.15.0a1 for a
    pre-release (from sys.hexversion; only sys.version_info[:3] in truth
    recorded before hexversion was)."""
    h = truth.get("hexversion")
    if h is None:
        return "%d.%d.%d" % tuple(truth["version"])
    v = "%d.%d.%d" % (h >> 24, (h >> 16) & 0xff, (h >> 8) & 0xff)
    level = (h >> 4) & 0xf
    return v if level == 0xf else v + {0xa: "a", 0xb: "b", 0xc: "rc"}[level] + str(h & 0xf)


def compare(truth, report, crashed, snap_signal=None):
    """CRASHED: None for a snapshot, else the signal number the process
    died of; the thread that crashed is truth["crasher"] (default: main).
    SNAP_SIGNAL: the signal a snapshot was taken with (SIGQUIT: a kernel
    core of a blocked process), None for gcore's.
    Raise Failure with a readable message on the first difference."""
    # a free-threaded build may run without its GIL: then no thread holds it
    gil_used = truth.get("gil_enabled", True)
    if report["input"]["format"] == "elf-core":
        # NT_PRPSINFO (kernel cores and gcore's); minidumps have their own checks
        for key in ("ppid", "uid", "gid"):
            if key in truth and report["process"][key] != truth[key]:
                raise Failure("process %s %s, the process says %s" % (key, report["process"][key], truth[key]))
    threads = {}
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            threads[t["ident"]] = t
    seen = set()
    for tt in truth["threads"]:
        ident = tt["ident"]
        t = threads.get(ident)
        label = "thread %s (%s)" % (tt.get("name"), ident)
        if t is None:
            raise Failure("%s: missing from pycore's report (it has %s)" % (label, sorted(threads)))
        seen.add(ident)
        if t["error"]:
            raise Failure("%s: pycore says the stack is incomplete: %s" % (label, t["error"]))
        if tt.get("native_id") is not None and t["tid"] != tt["native_id"]:
            raise Failure("%s: tid %s, the process says %s" % (label, t["tid"], tt["native_id"]))
        want = [(f["function"], f["file"], f["line"]) for f in tt["frames"]]
        got = [(f["function"], f["file"], f["line"]) for f in t["frames"] if f["kind"] == "python"]
        if want != got:
            for i in range(max(len(want), len(got))):
                w = want[i] if i < len(want) else None
                g = got[i] if i < len(got) else None
                if w != g:
                    raise Failure("%s: frame %d (innermost is 0) differs: pycore %s, the process %s "
                                  "(%d frames vs %d)" % (label, i, g, w, len(got), len(want)))
        if tt.get("name") is not None and t["name"] != tt["name"]:
            raise Failure("%s: name %r, the process says %r" % (label, t["name"], tt["name"]))
        if "exception" in tt:
            want_e, got_e = tt["exception"], t["exception"]
            if (want_e is None) != (got_e is None):
                raise Failure("%s: exception %s, the process says %s" % (label, got_e, want_e))
            if want_e:
                compare_exception(label, want_e, got_e)
                if len(got_e["chain"]) != len(want_e["chain"]):
                    raise Failure("%s: a chain of %d exceptions, the process has %d: %s"
                                  % (label, len(got_e["chain"]), len(want_e["chain"]), got_e["chain"]))
                for w, g in zip(want_e["chain"], got_e["chain"]):
                    if g["relation"] != w["relation"]:
                        raise Failure("%s: chained by %s, the process says %s" % (label, g["relation"],
                                                                                 w["relation"]))
                    compare_exception(label + " (chained)", w, g)
        if not gil_used:
            # a free-threaded build running without its GIL: nobody holds it
            if t["holds_gil"]:
                raise Failure("%s: holds_gil, but the GIL is disabled (free-threaded build)" % label)
        if crashed is not None:
            crasher = truth.get("crasher")
            is_crasher = ident == crasher if crasher is not None else bool(tt.get("main"))
            if t["crashed"] != is_crasher:
                raise Failure("%s: crashed=%s, but thread %s crashed" % (label, t["crashed"], crasher))
            if gil_used and t["holds_gil"] != is_crasher:
                raise Failure("%s: holds_gil=%s; the crashing thread holds the GIL (it crashes "
                              "in C called without releasing it), the others wait on locks"
                              % (label, t["holds_gil"]))
        elif truth.get("crasher") is not None:
            # the gc scenario: the collecting thread holds the GIL and
            # carries the <GC> marker on top
            collecting = ident == truth["crasher"]
            if gil_used and t["holds_gil"] != collecting:
                raise Failure("%s: holds_gil=%s; only the collecting thread holds it" % (label, t["holds_gil"]))
            kinds = [f["kind"] for f in t["frames"]]
            # 3.6 keeps its collecting flag in a static pycore does not read;
            # without a GIL there is no telling which thread collects (a
            # warning says so)
            if truth["version"][:2] == [3, 6] or not gil_used:
                if "gc" in kinds:
                    raise Failure("%s: a <GC> marker, but which thread collects cannot be known" % label)
            elif collecting and (not kinds or kinds[0] != "gc" or kinds.count("gc") != 1):
                raise Failure("%s: frames %s; want one <GC> marker on top" % (label, kinds))
        elif gil_used and t["holds_gil"]:
            raise Failure("%s: holds_gil, but every thread is blocked on a lock (GIL released)" % label)
    for ident, t in threads.items():
        if ident not in seen and any(f["kind"] == "python" for f in t["frames"]):
            raise Failure("thread %s: in pycore's report with Python frames, unknown to the process" % ident)
    if crashed is None and truth.get("crasher") is not None:
        gcs = [i["gc_collecting"] for i in report["interpreters"]]
        want_gc = None if truth["version"][:2] == [3, 6] else True
        if gcs[0] != want_gc:
            raise Failure("gc_collecting %s, want %s" % (gcs, want_gc))
    if truth["pid"] != report["process"]["pid"]:
        raise Failure("pid %s, the process says %s" % (report["process"]["pid"], truth["pid"]))
    v = report["python"]["version"]
    if v != version_of(truth):
        raise Failure("python version %s, the process says %s" % (v, version_of(truth)))
    if report["python"]["free_threaded"] != truth.get("free_threaded", False):
        raise Failure("free_threaded %s, the process says %s" % (report["python"]["free_threaded"],
                                                                 truth.get("free_threaded", False)))
    gils = [i["gil_enabled"] for i in report["interpreters"]]
    # null (unknown) is honest where the GIL cannot be read (3.6 without
    # symbols); a disabled GIL must be said
    if gils and gils[0] != truth.get("gil_enabled", True) and not (gils[0] is None and
                                                                   truth.get("gil_enabled", True)):
        raise Failure("gil_enabled %s, the process says %s" % (gils, truth.get("gil_enabled", True)))
    if crashed is not None:
        sig = report["process"]["signal"]
        want_name = signal.Signals(crashed).name
        if not sig or sig["number"] != crashed or sig["name"] != want_name:
            raise Failure("signal %s, expected %s" % (sig, want_name))
        crasher = truth.get("crasher")
        ct = [tt for tt in truth["threads"]
              if (tt["ident"] == crasher if crasher is not None else tt.get("main"))][0]
        if ct.get("native_id") is not None and report["process"]["crashed_tid"] != ct["native_id"]:
            raise Failure("crashed_tid %s, the crashing thread is %s" % (report["process"]["crashed_tid"],
                                                                        ct["native_id"]))
    elif snap_signal is not None:
        sig = report["process"]["signal"]
        if not sig or sig["number"] != snap_signal:
            raise Failure("a snapshot taken with %s reported with signal %s"
                          % (signal.Signals(snap_signal).name, sig))
    elif report["process"]["signal"] is not None:
        raise Failure("a gcore snapshot reported with signal %s" % report["process"]["signal"])


def compare_exception(label, want_e, got_e):
    """Type, str(), traceback, and the repr when pycore gives one."""
    got_tb = [dict((k, f[k]) for k in ("function", "file", "line")) for f in got_e["traceback"]]
    if (got_e["type"], got_e["message"], got_tb) != (want_e["type"], want_e["message"], want_e["traceback"]):
        raise Failure("%s: handling %s, the process says %s" % (label, got_e, want_e))
    if got_e["repr"] is not None and got_e["repr"] != want_e["repr"]:
        raise Failure("%s: exception repr %r, the process says %r" % (label, got_e["repr"], want_e["repr"]))
    if got_e["repr"] is None:
        raise Failure("%s: no repr for %s, the process says %r" % (label, want_e["type"], want_e["repr"]))


def compare_locals(truth, report, stdlib=True):
    """Every variable of every frame: pycore's repr is Python's, or a true
    prefix ending in ... with the error saying it was cut, or (for types
    with their own __repr__) comes with an error saying so.  Never a
    different repr stated as fact.  STDLIB: the standard library's types of
    STDLIB_EXACT must be exact too (not where the interpreter's files are
    hidden: then even static types' names are not in the core).  Returns
    how many reprs were exact."""
    threads = {}
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            threads[t["ident"]] = t
    exact = 0
    for tt in truth["threads"]:
        frames = [f for f in threads[tt["ident"]]["frames"] if f["kind"] == "python"]
        for i, (tf, f) in enumerate(zip(tt["frames"], frames)):
            where = "thread %s frame %d (%s)" % (tt.get("name"), i, tf["function"])
            if f["locals"] is None:
                raise Failure("%s: locals is null with --locals" % where)
            got = dict((l["name"], l) for l in f["locals"])
            if sorted(got) != sorted(tf["locals"]):
                raise Failure("%s: variables %s, the process has %s" % (where, sorted(got), sorted(tf["locals"])))
            for name, (tname, want, attrs, length) in tf["locals"].items():
                exact += compare_value("%s: %s (%s)" % (where, name, tname), tname, want, got[name],
                                       minor=truth["version"][1] if stdlib else None,
                                       fallback=name in FALLBACK_NAMES)
                compare_length("%s: %s (%s)" % (where, name, tname), want, length, got[name])
                if attrs is None:
                    continue
                listed = got[name]["attributes"]
                ref = got[name].get("attributes_shown_in")
                if ref is not None:
                    # listed once per report: at the variable it points to
                    if listed is not None:
                        raise Failure("%s: %s: attributes both listed and shown elsewhere" % (where, name))
                    listed = attributes_at(report, ref, got[name]["address"])
                mine = dict((a["name"], a) for a in listed or [])
                if sorted(mine) != sorted(attrs):
                    raise Failure("%s: %s: attributes %s, the process has %s"
                                  % (where, name, sorted(mine), sorted(attrs)))
                for aname, (atype, awant, _) in [(k, v + [None]) for k, v in attrs.items()]:
                    exact += compare_value("%s: %s.%s (%s)" % (where, name, aname, atype), atype,
                                           awant, mine[aname])
    return exact


def attributes_at(report, ref, address):
    """The attributes listed for the object at ADDRESS by a variable of the
    frame REF ({"thread": tid, "frame": index}) points to."""
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["tid"] == ref["thread"] and ref["frame"] < len(t["frames"]):
                for l in t["frames"][ref["frame"]]["locals"] or []:
                    if l["address"] == address and l["attributes"] is not None:
                        return l["attributes"]
    raise Failure("attributes_shown_in %s: no variable there lists %s's attributes" % (ref, address))


def listed_once(report):
    """--locals=deep lists one object's attributes once per report."""
    seen = set()
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            for f in t["frames"]:
                for l in f["locals"] or []:
                    if l["attributes"] is not None:
                        if l["address"] in seen:
                            raise Failure("the attributes of %s are listed twice" % l["address"])
                        seen.add(l["address"])
    return len(seen)


def compare_length(label, want, length, l):
    """A cut repr of a str, bytes or container says its real length."""
    r = l["repr"]
    cut = r is not None and r != want and r.endswith("...") and l["error"] and "cut" in l["error"]
    if l["length"] is not None and (not cut or l["length"] != length):
        raise Failure("%s: length %s, the process has len() %s (repr cut: %s)" % (label, l["length"], length, cut))
    if cut and length is not None and l["length"] is None and l["type"] in (
            "str", "bytes", "list", "tuple", "dict", "set", "collections.deque"):
        raise Failure("%s: a cut repr without its length %d" % (label, length))


def compare_value(label, tname, want, l, minor=None, fallback=False):
    """1 if pycore's repr is exactly Python's; 0 if it is honestly not."""
    r, err = l["repr"], l["error"]
    if r == want:
        return 1
    if r is not None and r.endswith("...") and err and "cut" in err and want.startswith(r[:-3]):
        return 0
    lo, hi = STDLIB_EXACT.get(tname, (99, 0))
    strict = minor is not None and lo <= minor <= hi and not fallback
    if tname == "numpy.ndarray":
        # pycore forms short 1-d int and bool arrays: exact, or a fallback
        # that names the shape and dtype
        strict = strict or (r is not None and not r.startswith("<") and err is None)
        if r is not None and r.startswith("<") and not (err and "shape" in err):
            raise Failure("%s: fallback %r without the shape and dtype: %r" % (label, r, err))
    if tname in SCALARS or DEFAULT_REPR.match(want) or (tname.startswith("numpy.") and
                                                        tname != "numpy.ndarray") or strict:
        raise Failure("%s: repr %r (error %r), Python says %r" % (label, r, err, want))
    if err is None:
        raise Failure("%s: repr %r stated as exact, Python says %r" % (label, r, want))
    return 0


def check_text(core, truth, args):
    rc, out, err = run_pycore(["analyze", "--format", "text"] + args + [core])
    if rc != 0:
        raise Failure("text report: exit %d: %s" % (rc, err.strip()))
    if "Traceback (most recent call last)" not in out:
        raise Failure("text report has no traceback")
    for tt in truth["threads"]:
        for f in tt["frames"]:
            if 'File "%s", line %d, in %s' % (f["file"], f["line"], f["function"]) not in out:
                raise Failure("text report lacks %s" % frame_str(f))


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
    if f.type() == gdb.NORMAL_FRAME:
        print("FRAME 0x%x %s" % (f.pc(), f.name()))
    f = f.older()
"""


def check_native(target, core, truth, innermost):
    """--native-all: the crashed thread's native frames are gdb's, frame for
    frame (the same return addresses; gdb's inline and tail-call frames are
    its own reconstructions and left out), the innermost is the C function
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
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
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


def as_target(target):
    """A Target, or an interpreter's path on this machine."""
    return target if isinstance(target, Target) else Target(target)


def run_in(tap, label, work, fn, *args):
    """tap.run(LABEL, FN, *ARGS) with WORK, a scratch directory, removed
    afterwards (kept, and said so, with KEEP_CORES=1)."""
    try:
        return tap.run(label, fn, *args)
    finally:
        if os.environ.get("KEEP_CORES") == "1":
            tap.diag("kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def take_gcore(python, scenario, workdir):
    """gcore's core of PYTHON (a path on this machine) running SCENARIO once
    it is READY: (core, truth path).  The other check-*.py use it."""
    core, truth_path, _ = take_snapshot(Target(python), scenario, workdir)
    return core, truth_path


def take_snapshot(target, scenario, workdir, before=None):
    """A snapshot of the process once it is READY (after BEFORE(proc), when
    given, has looked at the running process): gcore's, or for a
    process in a root filesystem the kernel's own core, made by SIGQUIT
    (gdb 13's gcore writes the thread stacks of a chrooted process as
    zeros, while /proc/PID/mem reads them fine; and a kernel core names the
    files as the process saw them, inside its root, as a container's does).
    Returns (core, truth path, the signal the report must show or None)."""
    truth_path = os.path.join(workdir, "truth.json")
    pattern, why = kernel_core_usable() if target.root else (None, None)
    if why:
        raise Failure("cannot take a kernel core of a process in %s: %s" % (target.root, why))

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    proc = target.popen([target.scenario(workdir, scenario + ".py"), target.inside(truth_path)], workdir,
                        preexec=unlimited if target.root else None, stdout=subprocess.PIPE)
    try:
        if not wait_ready(proc):
            raise Failure("the scenario did not get ready (exit %s)" % proc.poll())
        if before:
            before(proc)
        if target.root:
            # READY is written before the scenario's last blocking call (a
            # write that releases the GIL): give it time to get there, as
            # gcore's attaching does
            time.sleep(0.5)
            proc.send_signal(signal.SIGQUIT)
            proc.communicate(timeout=60)
            core = kernel_core_path(pattern, proc.pid, workdir)
            if not os.path.exists(core):
                raise Failure("SIGQUIT: the kernel wrote no core (%s)" % core)
            return core, truth_path, signal.SIGQUIT
        g = subprocess.run(["gcore", "-o", os.path.join(workdir, "core"), str(proc.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        core = os.path.join(workdir, "core.%d" % proc.pid)
        if g.returncode != 0 or not os.path.exists(core):
            raise Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-500:])
        return core, truth_path, None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def take_and_read(target, scenario, workdir, abort=False, suffix=None):
    """A core of SCENARIO: gcore's snapshot once it is READY, or with ABORT
    the kernel's core after it calls os.abort() (argv[2] "abort"); its
    threads compared with the truth.  Returns (core, pycore's JSON report,
    the scenario's truth file with SUFFIX loaded, or None)."""
    if abort:
        core, truth_path = take_crash(target, workdir, [scenario + ".py", "abort"], signal.SIGABRT)
        crashed, snap_signal = signal.SIGABRT, None
    else:
        core, truth_path, snap_signal = take_snapshot(target, scenario, workdir)
        crashed = None
    truth = json.load(open(truth_path))
    more = json.load(open(truth_path + suffix)) if suffix else None
    rc, out, err = run_pycore(["analyze", "--format", "json"] + target.pycore_args() + [core])
    if rc != 0:
        raise Failure("pycore exit %d: %s" % (rc, err.strip()))
    report = load_report(out)
    compare(truth, report, crashed, snap_signal)
    return core, report, more


def kernel_core_path(pattern, pid, workdir):
    uses_pid = open("/proc/sys/kernel/core_uses_pid").read().strip() == "1"
    name = pattern.replace("%p", str(pid))
    if uses_pid and "%p" not in pattern:
        name += ".%d" % pid
    return os.path.join(workdir, name)


def kernel_core_usable():
    try:
        pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    except OSError:
        return None, "cannot read /proc/sys/kernel/core_pattern"
    if pattern.startswith("|"):
        return None, "core_pattern pipes cores to %s" % pattern[1:].split()[0]
    if "/" in pattern or "%" in pattern.replace("%p", ""):
        return None, "core_pattern %r is not a plain file name" % pattern
    return pattern, None


def config_for(python):
    """python3.X-config beside the interpreter, or None."""
    real = os.path.realpath(python)
    for cand in (python + "-config", real + "-config"):
        if os.access(cand, os.X_OK):
            return cand
    return None


def root_includes(target):
    """For an interpreter in the Debian unstable root: the -I options of its
    headers (libpython3.X-dev, unpacked beside the root by sid-root; their
    pyconfig.h includes <x86_64-linux-gnu/python3.X/pyconfig.h>)."""
    inc = target.root + ".debug/usr/include"
    ver = os.path.basename(target.exe)[len("python"):]
    if not os.path.isfile(os.path.join(inc, "python" + ver, "Python.h")):
        raise Skip("no headers of %s in %s (scripts/sid-root unpacks them)" % (target.exe, inc))
    return ["-I" + os.path.join(inc, "python" + ver), "-I" + inc]


def compile_into(workdir, compiler, out, source, flags):
    """Build a shared object with this machine's compiler.  For a process in
    the root, into its working directory there: it runs against the root's
    newer C library, which keeps the older versions' symbols."""
    if not shutil.which(compiler):
        raise Skip("no %s compiler (Debian package %s)" % (compiler, "g++" if compiler == "c++" else "gcc"))
    b = subprocess.run([compiler, "-shared", "-fPIC", "-g", "-O0", "-o", os.path.join(workdir, out),
                        os.path.join(SCENARIOS, source)] + flags, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b.returncode != 0:
        raise Failure("cannot build %s: %s" % (out, b.stdout.decode("utf-8", "replace")[-400:]))


def build_extension(target, workdir):
    if target.root:
        inc = root_includes(target)
    else:
        cfg = config_for(target.exe)
        if not cfg:
            raise Skip("no %s-config to build the C extension with" % target.exe)
        inc = subprocess.run([cfg, "--includes"], stdout=subprocess.PIPE).stdout.decode().split()
    compile_into(workdir, "cc", "crashext.so", "crashext.c", inc)


def build_cxx(target, workdir):
    compile_into(workdir, "c++", "libcrashxx.so", "crashxx.cpp", [])


def take_crash(target, workdir, argv, signo, limit=None):
    """The kernel's core of the scenario ARGV crashing with SIGNO, with
    RLIMIT_CORE at LIMIT bytes (None: unlimited): (core, truth path).
    Raises Skip when the kernel's cores cannot be had here."""
    target = as_target(target)
    pattern, why = kernel_core_usable()
    if why:
        raise Skip(why)
    truth_path = os.path.join(workdir, "truth.json")

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY if limit is None else limit,
                                                  resource.RLIM_INFINITY))

    proc = target.popen([target.scenario(workdir, argv[0]), target.inside(truth_path)] + argv[1:], workdir,
                        preexec=unlimited, stdout=subprocess.PIPE)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise Failure("the scenario did not crash")
    if proc.returncode != -signo:
        raise Failure("the scenario ended with %s, not %s" % (proc.returncode, signal.Signals(signo).name))
    core = kernel_core_path(pattern, proc.pid, workdir)
    if not os.path.exists(core):
        raise Skip("the kernel wrote no core (%s; is ulimit -c limited by a hard limit?)" % core)
    return core, truth_path


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
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
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


def check_sample(tap, core, truth_path):
    """The sample core shipped in testdata/: its truth was recorded by the
    process when scripts/make-sample made it.  Then the same with the
    interpreter's whole installation hidden: the README's first command
    must work on a machine without it."""
    with open(truth_path) as f:
        truth = json.load(f)
    got = {}

    def plain():
        rc, out, err = run_pycore(["analyze", "--format", "json", core])
        if rc != 0:
            raise Failure("pycore exit %d: %s" % (rc, err.strip()))
        report = load_report(out)
        compare(truth, report, None)
        if report["input"]["compression"] != "zstd":
            raise Failure("input.compression is %r, not zstd" % report["input"]["compression"])
        got["report"] = report
        return "%d threads, located by %s" % (len(truth["threads"]), report["python"]["located_by"])

    def hidden():
        if "report" not in got:
            raise Failure("the sample itself was not read")
        if os.geteuid() != 0:
            raise Skip("a mount namespace needs root")
        if not shutil.which("unshare"):
            raise Skip("unshare not installed (Debian package util-linux)")
        prefix = os.path.dirname(os.path.dirname(got["report"]["process"]["executable"] or "/"))
        if prefix == "/" or not os.path.isdir(prefix):
            raise Skip("the sample's interpreter (%s) is not on this machine: the check above read it "
                       "without it" % prefix)
        empty = tempfile.mkdtemp(prefix="pycore-empty-")
        try:
            p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                                'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", empty, prefix,
                                PYCORE, "analyze", "--format", "json", core],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        finally:
            os.rmdir(empty)
        if p.returncode != 0:
            raise Failure("exit %d: %s" % (p.returncode, p.stderr.decode().strip()))
        report = load_report(p.stdout)
        compare(truth, report, None)
        return "located by %s" % report["python"]["located_by"]

    tap.run("sample %s" % os.path.basename(core), plain)
    tap.run("sample with its interpreter's installation hidden", hidden)


def interpreter(interp_file):
    """The Target of an .interp file, or the reason it cannot run here."""
    pattern = open(interp_file).read().strip()
    name = os.path.basename(interp_file).rsplit(".", 1)[0]
    if pattern.startswith("sid:"):
        root, why = sid_root()
        if why:
            return None, "no Debian unstable root: %s" % why
        target = Target(pattern[4:], root)
        if not os.access(target.host_exe(), os.X_OK):
            return None, "%s is not in %s" % (target.exe, root)
        _, why = kernel_core_usable()
        if why:
            return None, "its snapshots are kernel cores, and %s" % why
        return target, None
    matches = sorted(glob.glob(pattern))
    if not matches:
        return None, "%s (%s) not installed" % (name, pattern)
    return Target(matches[-1]), None


def main():
    tap = TAP()
    if len(sys.argv) == 4 and sys.argv[1] == "--sample":
        check_sample(tap, sys.argv[2], sys.argv[3])
        schema_summary(tap)
        return tap.done()
    if len(sys.argv) != 2:
        sys.exit("usage: check-stacks.py INTERPRETER.interp | --sample CORE TRUTH")
    name = os.path.basename(sys.argv[1]).rsplit(".", 1)[0]
    target, why = interpreter(sys.argv[1])
    if not why and not target.root and not shutil.which("gcore"):
        why = "gcore not installed (Debian package gdb)"
    for scenario in GCORE_SCENARIOS + list(CRASHES):
        label = "%s %s" % (name, scenario)
        if why:
            tap.skip(label, why)
            continue
        workdir = target.workdir("pycore-%s-%s-" % (name, scenario))
        try:
            subs = []
            if tap.run(label, check, target, scenario, workdir, name, subs) is not None:
                for sub, fn, args in subs:
                    tap.run("%s: %s" % (label, sub), fn, *args)
        finally:
            if os.environ.get("KEEP_CORES") == "1":
                tap.diag("kept in %s" % workdir)
            else:
                shutil.rmtree(workdir, ignore_errors=True)
    schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
