"""A process waiting to be sent a fatal signal, with or without a handler
of its own that re-raises it (scenarios/rehandler.c, built by the test).

argv: truth path, the handler library ("-": no handler), signal number,
how the signal comes: "outside" (kill or sigqueue by another process:
the test's sender), "timer" (a POSIX timer of this process's), "alarm"
(alarm(): SIGALRM, whose handler then abort()s), "fault" (a thread of
its own reads address 0x7890; the handler kill()s the process and waits
in code without call frame information, rehandler.c's action 2).  The
truth, written before it waits: its pid, uid and the native id of the
thread that will take the signal (the main thread: the only one, every
other blocks it); for "fault", written by the faulting thread: its own
id, the address, and the main thread's id as the kill's receiver (the
faulting thread blocks the signal while its handler runs; the main
thread blocks it until the handler waits in rh_wait_nocfi).
"""
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
    action = {"alarm": 1, "fault": 2}.get(how, 0)
    if rh.rh_install(signal.SIGALRM if how == "alarm" else signo, action) != 0:
        sys.exit("rh_install failed")


def write_truth(**extra):
    with open(truth_path + ".tmp", "w") as f:
        json.dump(dict({"pid": os.getpid(), "uid": os.getuid(), "tid": threading.get_native_id(), "signal": signo,
                        "how": how, "handler": bool(rh)}, **extra), f)
    os.rename(truth_path + ".tmp", truth_path)


def crasher(receiver):
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGSEGV])
    write_truth(address=0x7890, receiver=receiver)
    # (the main thread first in rh_take_kill: the fault keeps the
    # interpreter's lock, which the main thread would wait for forever)
    if rh and rh.rh_wait_taker(60000) != 0:
        # (sys.exit in a thread would end only this thread)
        sys.stderr.write("sent.py: the main thread did not come to rh_take_kill in 60 s\n")
        os._exit(1)
    ctypes.string_at(0x7890)


if how == "fault":
    # the handler's kill() is taken by the main thread once the handler
    # waits in rh_wait_nocfi: until then the main thread blocks SIGSEGV
    # (the kill stays pending: the faulting thread blocks it while its
    # handler runs), in C, where it can wait without the interpreter's
    # lock (ctypes' string_at keeps it: the faulting thread holds it)
    if rh:
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGSEGV])
    threading.Thread(target=crasher, args=(threading.get_native_id(),), name="crasher", daemon=True).start()
    if rh and rh.rh_take_kill(signo, 60000) != 0:
        sys.exit("the handler did not come to wait in rh_wait_nocfi")
else:
    write_truth()
if how == "timer":
    if (rh or ctypes.CDLL(sys.argv[5])).rh_timer(signo, 300) != 0:
        sys.exit("rh_timer failed")
elif how == "alarm":
    signal.alarm(1)


def wait_here():
    time.sleep(30)


wait_here()
sys.exit("no signal came")
