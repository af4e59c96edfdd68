"""Native stacks against gdb's: pycore's native frames of a thread, frame
for frame gdb's on the same core (return addresses and inlined calls)."""
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
            if f.type() in (gdb.NORMAL_FRAME, gdb.INLINE_FRAME):
                print("FRAME %%d 0x%%x %%s" %% (f.type() == gdb.INLINE_FRAME, f.pc(), f.name()))
            f = f.older()
"""


def gdb_frames(target, core, tid):
    """gdb's frames of thread TID, innermost first: ("N", pc) for a real
    frame, ("I", name) for a call gdb shows as inlined there."""
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
