"""A process waiting to be sent a fatal signal, with or without a handler
of its own that re-raises it (scenarios/rehandler.c, built by the test).

argv: truth path, the handler library ("-": no handler), signal number,
how the signal comes: "outside" (kill or sigqueue by another process:
the test's sender), "timer" (a POSIX timer of this process's), "alarm"
(alarm(): SIGALRM, whose handler then abort()s).  The truth, written
before it waits: its pid, uid and the native id of the thread that will
take the signal (the main thread: the only one, every other blocks it)."""
import ctypes
import json
import os
import signal
import sys
import threading
import time

truth_path, lib, signo, how = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def helper():
    time.sleep(1000)


# a second thread, blocking every signal: the main thread takes it
signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
threading.Thread(target=helper, name="helper", daemon=True).start()
signal.pthread_sigmask(signal.SIG_UNBLOCK, signal.valid_signals())
rh = ctypes.CDLL(lib) if lib != "-" else None
if rh:
    if rh.rh_install(signal.SIGALRM if how == "alarm" else signo, 1 if how == "alarm" else 0) != 0:
        sys.exit("rh_install failed")
with open(truth_path + ".tmp", "w") as f:
    json.dump({"pid": os.getpid(), "uid": os.getuid(), "tid": threading.get_native_id(), "signal": signo,
               "how": how, "handler": bool(rh)}, f)
os.rename(truth_path + ".tmp", truth_path)
if how == "timer":
    if (rh or ctypes.CDLL(sys.argv[5])).rh_timer(signo, 300) != 0:
        sys.exit("rh_timer failed")
elif how == "alarm":
    signal.alarm(1)


def wait_here():
    time.sleep(30)


wait_here()
sys.exit("no signal came")
