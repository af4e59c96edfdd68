"""Native stacks against gdb's: pycore's native frames of a thread, frame
for frame gdb's on the same core (return addresses and inlined calls); and
gdb's view of every thread of many cores in one run (gdb_cores)."""
import re
import subprocess

from .tap import Failure
from .env import scaled

EVAL = "_PyEval_EvalFrameDefault"   # or a part GCC split off it: .cold
GDB_THREAD = """python
for t in gdb.selected_inferior().threads():
    if t.ptid[1] == %d:
        t.switch()
        f = gdb.newest_frame()
        while f is not None:
            if f.type() in (gdb.NORMAL_FRAME, gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
                print("FRAME %%d 0x%%x %%s" %% (f.type() == gdb.INLINE_FRAME, f.pc(), f.name()))
            f = f.older()
"""


def gdb_frames(target, core, tid):
    """gdb's frames of thread TID, innermost first: ("N", pc) for a real
    frame or a tail-call frame gdb infers (its pc the jump's return
    address, as pycore's tail_call frame's), ("I", name) for a call gdb
    shows as inlined there."""
    g = subprocess.run(["gdb", "-nx", "-batch"] + target.gdb_args() + ["-ex", GDB_THREAD % tid,
                       target.host_exe(), core], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=scaled(120))
    frames = []
    for line in g.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("FRAME "):
            _, inline, pc, name = line.split(" ", 3)
            frames.append(("I", name) if inline == "1" else ("N", int(pc, 16)))
    return frames


def pycore_frames(thread):
    """The same view of pycore's native frames."""
    return [("I", f["function"]) if f["inlined"] else ("N", int(f["address"], 16))
            for f in thread["frames"] if f["kind"] == "native"]


def same_as_gdb(label, target, core, thread):
    """pycore's native frames are gdb's: the same return addresses, and the
    same inlined calls at each (gdb stops at main; pycore goes on into
    libc's start code)."""
    mine, theirs = pycore_frames(thread), gdb_frames(target, core, thread["tid"])
    if theirs and theirs[-1] == ("N", None):
        theirs = theirs[:-1]
    if not theirs or mine[:len(theirs)] != theirs:
        raise Failure("%s: native frames\n  pycore %s\n  gdb    %s" % (label, mine, theirs))
    return sum(1 for k, _ in theirs if k == "I")


def debug_args(target):
    """A root's separate debug files (scripts/sid-root unpacks its -dbg
    packages beside it): the symbols that name the eval loop."""
    return ["--debug-dir", target.root + ".debug/usr/lib/debug"] if target.root else []


# Every thread of each of several cores of one executable, as gdb's `thread
# apply all bt` sees them, in one gdb run (gdb reads the executable's
# symbols once; a session per core costs three times as much): per frame
# its type (normal, inline, tailcall, sigtramp), name, pc, the shared object
# holding the pc (None: the executable) and, for the innermost ARGS_UPTO
# frames of each thread, the arguments as bt prints them (`str` of each
# value: "<optimized out>" as gdb says it); the core's siginfo note
# ($_siginfo).  One line of JSON per core after the marker.
GDB_CORES = r"""python
import json
KINDS = {gdb.NORMAL_FRAME: "normal", gdb.INLINE_FRAME: "inline", gdb.TAILCALL_FRAME: "tailcall",
         gdb.SIGTRAMP_FRAME: "sigtramp"}

def args_of(frame):
    try:
        block = frame.block()
    except RuntimeError:
        return None
    while block is not None and block.function is None:
        block = block.superblock
    if block is None:
        return None
    out = []
    for sym in block:
        if not sym.is_argument:
            continue
        try:
            text = str(frame.read_var(sym, block))
        except Exception as e:
            text = "<error: %%s>" %% e
        out.append([sym.name, text])
    return out

def field(value, *path):
    try:
        for p in path:
            value = value[p]
        return int(value)
    except Exception:
        return None

def one_core(path):
    gdb.execute("core-file " + path, to_string=True)
    result = {"core": path, "threads": [], "siginfo": None}
    try:
        si = gdb.parse_and_eval("$_siginfo")
        result["siginfo"] = {"signo": field(si, "si_signo"), "code": field(si, "si_code"),
                             "addr": field(si, "_sifields", "_sigfault", "si_addr"),
                             "pid": field(si, "_sifields", "_kill", "si_pid"),
                             "uid": field(si, "_sifields", "_kill", "si_uid")}
    except Exception as e:
        result["siginfo_error"] = str(e)
    selected = gdb.selected_thread()
    result["selected"] = selected.ptid[1] if selected else None
    for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        t.switch()
        frames = []
        try:
            f = gdb.newest_frame()
        except gdb.error:
            f = None
        while f is not None and len(frames) < %(cap)d:
            ent = {"kind": KINDS.get(f.type(), str(f.type())), "name": f.name(), "pc": f.pc()}
            try:
                ent["solib"] = gdb.solib_name(f.pc())
            except Exception:
                ent["solib"] = None
            if len(frames) < %(args_upto)d:
                ent["args"] = args_of(f)
            frames.append(ent)
            try:
                f = f.older()
            except gdb.error as e:
                frames.append({"kind": "error", "name": str(e), "pc": None})
                break
        result["threads"].append({"tid": t.ptid[1], "frames": frames})
    return result

for path in json.loads(%(cores)r):
    try:
        result = one_core(path)
    except Exception as e:
        result = {"core": path, "error": str(e)}
    print("GDB-JSON " + json.dumps(result))
"""


def gdb_cores(target, cores, cap=400, args_upto=60, extra=()):
    """gdb's view of every thread of each core of CORES (see GDB_CORES), in
    one gdb run with ulimit -c 0, so that a crash of gdb's own cannot write
    over anything (EXTRA: more gdb options): {core: {"threads": [{"tid",
    "frames"}], "siginfo": {...}, "selected": tid} or {"error": why}}."""
    import json
    import resource

    def no_core():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    script = GDB_CORES % {"cap": cap, "args_upto": args_upto, "cores": json.dumps(list(cores))}
    g = subprocess.run(["gdb", "-nx", "-batch"] + target.gdb_args() + list(extra) + ["-ex", script, target.host_exe()],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(60 + 30 * len(cores)),
                       preexec_fn=no_core)
    out = {}
    for line in g.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("GDB-JSON "):
            r = json.loads(line[len("GDB-JSON "):])
            out[r["core"]] = r
    why = "gdb gave nothing (exit %d): %s" % (g.returncode, g.stderr.decode("utf-8", "replace")[-400:])
    return dict((c, out.get(c) or {"error": why}) for c in cores)


def c_quoted(text):
    """TEXT as gdb quotes a plain string; None where gdb's quoting might
    differ (escapes, repeats)."""
    if any(not (0x20 <= ord(ch) < 0x7f) or ch in "\"\\" for ch in text) or re.search(r"(.)\1{9}", text):
        return None
    return '"%s"' % text
