"""A report against the truth the process recorded: threads, frames,
exceptions, the crash, the process's facts.  Raise Failure on the first
difference."""
import signal

from .tap import Failure


def frame_str(f):
    return "%s (%s:%s)" % (f.get("function"), f.get("file"), f.get("line"))


def text_frames(out, truth, what="text report"):
    """Every frame the process recorded (TRUTH) is in the text report OUT,
    as Python's traceback writes it; how many."""
    n = 0
    for tt in truth["threads"]:
        for f in tt["frames"]:
            if 'File "%s", line %d, in %s' % (f["file"], f["line"], f["function"]) not in out:
                raise Failure("%s lacks %s" % (what, frame_str(f)))
            n += 1
    return n


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
