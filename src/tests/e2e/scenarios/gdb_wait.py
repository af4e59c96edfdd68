"""Run inside gdb (gdb -batch -ex 'python exec(open(THIS).read())'): the
truth of a gdb about to be killed from outside, written by gdb's own
Python, then a wait in time.sleep on gdb's main thread.

Environment: RERAISE_TRUTH (the truth path), RERAISE_SIGNAL (the number
that will come), RERAISE_TWIN=1: put that signal's default action back
first (gdb's own handler gone: the same kill without it).  The truth:
gdb's pid, this thread's native id, the threads that do not block the
signal (the kernel gives a process-directed signal to one of them), and
where the dynamic loader put libc.so.6 (its mapping at file offset 0)."""
import json
import os
import signal
import threading
import time

truth_path = os.environ["RERAISE_TRUTH"]
signo = int(os.environ["RERAISE_SIGNAL"])
if os.environ.get("RERAISE_TWIN") == "1":
    signal.signal(signo, signal.SIG_DFL)
takers = []
for task in os.listdir("/proc/self/task"):
    with open("/proc/self/task/%s/status" % task) as f:
        for line in f:
            if line.startswith("SigBlk:") and not int(line.split()[1], 16) & (1 << (signo - 1)):
                takers.append(int(task))
libc = None
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split()
        if len(parts) >= 6 and parts[5].endswith("/libc.so.6") and int(parts[2], 16) == 0:
            start = int(parts[0].split("-")[0], 16)
            libc = start if libc is None else min(libc, start)
with open(truth_path + ".tmp", "w") as f:
    json.dump({"pid": os.getpid(), "uid": os.getuid(), "tid": threading.get_native_id(), "takers": sorted(takers),
               "libc_base": libc, "twin": os.environ.get("RERAISE_TWIN") == "1"}, f)
os.rename(truth_path + ".tmp", truth_path)
time.sleep(60)
