"""The presentation scenario (check-presentation.py): what the text report
shows around the stacks.

  * WORKERS threads blocked at the same line of the same function (one
    stack, to be grouped);
  * a thread recursing DEPTH calls deep in spiral() (to be collapsed as
    Python's tracebacks collapse it), then blocking (wait) or reading an
    unmapped address through ctypes (fault: a real SIGSEGV);
  * two threads run code named after a FIFO and after a file whose line
    holds terminal control characters (hostile-fifo.py, hostile-esc.py in
    the working directory);
  * run as root, the process first takes another uid and gid (and stays
    dumpable), so that the ids the dump records are not root's.

usage: presenting.py TRUTH wait|fault.  TRUTH holds the stacks as
_truth.record writes them; TRUTH.presenting the process's own facts: pid,
ppid, uid, gid, the recursion depth, and for each thread but the recording
one, its frames innermost first: file, line, end line, column and end
column (co_positions() at f_lasti, as traceback finds a traceback's; the
last three from 3.11 on, None before), and the source line as linecache
reads it; and the traceback Python itself writes of each such stack
(traceback.StackSummary.format())."""
import _thread
import ctypes
import itertools
import json
import linecache
import os
import sys
import sysconfig
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

WORKERS = 5
DEPTH = 60
ADDRESS = 0x1000  # below vm.mmap_min_addr: never mapped
IDS = 4242        # the uid and gid taken when running as root

sysconfig.get_config_var("Py_GIL_DISABLED")  # loaded now: record() asks after the ids change
parked = _thread.allocate_lock()
parked.acquire()
deep = _thread.allocate_lock()
deep.acquire()
recorded = _thread.allocate_lock()
recorded.acquire()


def worker():
    parked.acquire()


def crash():
    recorded.acquire(); time.sleep(0.3); ctypes._string_at(ADDRESS, -1)  # noqa: E702


def spiral(n):
    if n > 1:
        return spiral(n - 1)
    deep.release()
    if sys.argv[2] == "fault":
        crash()
    else:
        parked.acquire()


# Two threads run code whose file pycore must read warily: a FIFO (reading
# it would block) and a file whose line holds terminal control characters.
HOSTILE_FIFO = os.path.abspath("hostile-fifo.py")
HOSTILE_ESC = os.path.abspath("hostile-esc.py")
ESC_LINE = "parked.acquire()  # \x1b[31mRED\x07 end"


def hostile(path, source):
    exec(compile(source, path, "exec"), {"parked": parked})


def is_hostile(filename):
    return filename in (HOSTILE_FIFO, HOSTILE_ESC)


def positions(frame):
    """Innermost first: where each frame is, as traceback tells the frames
    of a traceback (their f_lasti through code.co_positions(), 3.11+)."""
    out = []
    while frame is not None:
        code = frame.f_code
        line, end_line, col, end_col = frame.f_lineno, None, None, None
        if hasattr(code, "co_positions") and frame.f_lasti >= 0:
            line, end_line, col, end_col = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None))
        out.append({"file": code.co_filename, "line": line, "function": code.co_name, "end_line": end_line,
                    "column": col, "end_column": end_col,
                    "source": linecache.getline(code.co_filename, line, frame.f_globals)
                    if line and not is_hostile(code.co_filename) else ""})
        frame = frame.f_back
    return out


def formatted(stack):
    """Python's own traceback of STACK (positions(), innermost first): a
    list of strings, outermost frame first, as StackSummary.format() makes
    them (source lines, carets, repeated lines collapsed)."""
    summaries = []
    for f in reversed(stack):
        extra = {}
        if f["column"] is not None:
            extra = {"end_lineno": f["end_line"], "colno": f["column"], "end_colno": f["end_column"]}
        summaries.append(traceback.FrameSummary(f["file"], f["line"], f["function"], **extra))
    return traceback.StackSummary.from_list(summaries).format()


def take_ids():
    if os.getuid() == 0:
        os.setgroups([])
        os.setresgid(IDS, IDS, IDS)
        os.setresuid(IDS, IDS, IDS)
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: a core after the change


def release():
    if sys.argv[2] == "fault":
        recorded.release()


def main():
    os.mkfifo(HOSTILE_FIFO)
    with open(HOSTILE_ESC, "w") as f:
        f.write(ESC_LINE + "\n")
    threading.Thread(target=hostile, args=(HOSTILE_FIFO, "parked.acquire()\n"), name="hostile-fifo",
                     daemon=True).start()
    threading.Thread(target=hostile, args=(HOSTILE_ESC, ESC_LINE + "\n"), name="hostile-esc",
                     daemon=True).start()
    for i in range(WORKERS):
        threading.Thread(target=worker, name="worker-%d" % i, daemon=True).start()
    threading.Thread(target=spiral, args=(DEPTH,), name="spiral", daemon=True).start()
    deep.acquire()
    time.sleep(0.3)  # every thread is blocked by then
    frames = sys._current_frames()
    me = threading.get_ident()
    # read while the sources are readable: the other ids may not reach them
    stacks = dict((str(ident), positions(f)) for ident, f in frames.items() if ident != me)
    tracebacks = dict((ident, formatted(stack)) for ident, stack in stacks.items()
                      if not any(is_hostile(f["file"]) for f in stack))
    spiral_ident = [t.ident for t in threading.enumerate() if t.name == "spiral"][0]
    take_ids()
    facts = {"pid": os.getpid(), "ppid": os.getppid(), "uid": os.getuid(), "gid": os.getgid(),
             "depth": DEPTH, "workers": WORKERS, "spiral": spiral_ident, "threads": stacks,
             "tracebacks": tracebacks, "hostile": {"fifo": HOSTILE_FIFO, "esc": HOSTILE_ESC, "esc_line": ESC_LINE}}
    with open(sys.argv[1] + ".presenting", "w") as f:
        json.dump(facts, f)
    crasher = spiral_ident if sys.argv[2] == "fault" else None
    record(sys.argv[1], frames, crasher=crasher); print("READY", flush=True); release(); parked.acquire()  # noqa: E702


main()
