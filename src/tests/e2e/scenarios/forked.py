"""fork() from C (libc's, through ctypes.PyDLL: the interpreter is not
told, as a C program's or a server's fork leaves it) while another thread
holds an RLock; in the child, a new thread waits on that RLock and the
main thread crashes at a known address.  The truth is the child's: its
threads (/proc/self/task), the holder's ident (the parent's thread, not
the child's), the waiter's tid, the faulting tid and address.

argv: truth path."""
import ctypes
import json
import os
import sys
import threading
import time

FAULT_ADDRESS = 0x4560
lock = threading.RLock()
held = threading.Event()


def holder():
    lock.acquire()
    held.set()
    time.sleep(1000)


# a stack of its own size: the child's new thread must not get it back
# from glibc's stack cache (and with it the holder's ident)
threading.stack_size(512 * 1024)
h = threading.Thread(target=holder, name="holder", daemon=True)
h.start()
threading.stack_size(0)
held.wait()
holder_ident, holder_tid = h.ident, h.native_id
pid = ctypes.PyDLL(None).fork()
if pid == 0:
    waiting = threading.Event()
    info = {}

    def waiter():
        info["tid"] = threading.get_native_id()
        info["ident"] = threading.get_ident()
        waiting.set()
        lock.acquire()

    w = threading.Thread(target=waiter, name="waiter", daemon=True)
    w.start()
    waiting.wait()
    time.sleep(0.3)
    truth = {"pid": os.getpid(), "tid": threading.get_native_id(), "address": FAULT_ADDRESS,
             "tasks": sorted(int(t) for t in os.listdir("/proc/self/task")),
             "holder_ident": holder_ident, "holder_tid": holder_tid,
             "waiter_tid": info["tid"], "waiter_ident": info["ident"]}
    with open(sys.argv[1], "w") as f:
        json.dump(truth, f)
    ctypes.string_at(FAULT_ADDRESS)
else:
    _, status = os.waitpid(pid, 0)
    sys.exit(0 if os.WIFSIGNALED(status) and os.WTERMSIG(status) == 11 else 3)
