"""A process that hangs, one way or several, for check-hang.py: each thread
records its own OS id and what it does (its role) in argv[1] (JSON) once
all are in place, then the process runs until killed.

argv: truth path, scenario.

  waits   two threads deadlocked on two locks taken in opposite orders
          (deadlock), a queue consumer waiting for work (waiting) whose
          producer sleeps (blocked), a thread reading a socket that never
          sends (blocked)
  busy    a thread looping in Python on one line, bytecode only
          (busy-python)
  turns   a thread calling three functions in turn (busy-python)
  gil     a thread in a regular expression that backtracks without end:
          one C call that keeps the GIL (busy-c-gil), a thread that wants
          the GIL to run Python (blocked: waiting for the GIL); the regex
          once the truth is written (READY).  On a free-threaded build
          (no GIL: "gil" false in the truth) the regex runs in one C call
          (busy-c; spinning when no native frame shows the call) and the
          other thread runs its Python (busy-python; spinning when every
          sample catches one instruction; busy-c when every one catches it
          in the same C function of its int addition)

  livelock  two threads each holding one lock, trying the other's
          without waiting, again and again (busy-python, or spinning)
  stream  a socket that streams: its reader (spinning, or busy-python),
          its writer (that, or blocked while the reader lags)

A role "a|b" is either: what the samples catch of it is chance.
  aio     an event loop whose running task calls time.sleep (blocked; the
          finding names the task and the line)
  convoy  four threads taking one RLock in turn, each holding it 50 ms and
          waiting, once it let go, until another took it (the finding: a
          lock convoy)

The main thread sleeps (blocked)."""
import json
import os
import queue
import re
import socket
import sys
import threading
import time

truth_path, scenario = sys.argv[1], sys.argv[2]
roles = {}
# a free-threaded build whose GIL is off
GIL = not (hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled())


def mine(role):
    roles[threading.get_native_id()] = role


def deadlock():
    # (RLocks: their owner is in them, the cycle readable)
    a, b = threading.RLock(), threading.RLock()
    both = threading.Barrier(2)

    def one(first, second):
        mine("deadlocked")
        with first:
            both.wait()
            with second:
                pass

    return [threading.Thread(target=one, args=(a, b), name="dl-a"),
            threading.Thread(target=one, args=(b, a), name="dl-b")]


def consumer_producer():
    q = queue.Queue()

    def consume():
        mine("waiting")
        q.get()

    def produce():
        mine("blocked")
        time.sleep(3600)
        q.put(1)

    return [threading.Thread(target=consume, name="consumer"), threading.Thread(target=produce, name="producer")]


def silent_socket():
    left, right = socket.socketpair()
    kept.append((left, right))

    def read():
        mine("blocked")
        left.recv(1)

    return [threading.Thread(target=read, name="reader")]


def spin():
    def loop():
        # bytecode only (no C function called): a loop of small ints would
        # spend most of its time in int addition, under one Python line
        mine("busy-python")
        a, b = 0, 1
        while True: a, b = b, a  # noqa: E701

    return [threading.Thread(target=loop, name="one-line")]


def turns():
    def f1(n):
        return sum(range(n))

    def f2(n):
        return [i * i for i in range(n)]

    def f3(n):
        return {i: i for i in range(n)}

    def rounds():
        mine("busy-python")
        while True:
            f1(2000)
            f2(2000)
            f3(2000)

    return [threading.Thread(target=rounds, name="rounds")]


def livelock():
    # two threads that each take one lock, try the other without waiting,
    # let theirs go and start again: neither ever gets both.  They run
    # (their lines move), or, caught waiting for the GIL at one place in
    # every sample, they use a CPU all the same (spinning)
    a, b = threading.Lock(), threading.Lock()

    def polite(first, second):
        mine("busy-python|spinning")
        while True:
            with first:
                if second.acquire(blocking=False):
                    second.release()   # (never: the other holds it)

    return [threading.Thread(target=polite, args=(a, b), name="polite-a"),
            threading.Thread(target=polite, args=(b, a), name="polite-b")]


def stream():
    # a socket that streams: its reader receives and counts all the time
    left, right = socket.socketpair()
    kept.append((left, right))

    def write():
        mine("spinning|blocked|busy-python")   # (sending, or its send blocked while the reader lags)
        block = b"x" * 65536
        while True:
            right.sendall(block)

    def read():
        mine("spinning|busy-python")   # in recv at one line in every sample, or moving
        total = 0
        while True:
            data = left.recv(65536)
            total += sum(data[::4096])

    return [threading.Thread(target=write, name="writer"), threading.Thread(target=read, name="stream-reader")]


def aio():
    import asyncio

    async def blocker():
        time.sleep(3600)   # a synchronous call in a coroutine

    async def idle():
        await asyncio.sleep(3600)

    async def main():
        asyncio.create_task(idle(), name="idle")
        await asyncio.create_task(blocker(), name="blocker")

    def run():
        mine("blocked")
        asyncio.run(main())

    return [threading.Thread(target=run, name="loop")]


def convoy():
    # four threads taking one RLock in turn, each holding it a while: the
    # others wait on it, its owner changes
    lock = threading.RLock()
    taken = [0]

    def turn():
        mine("waiting|busy-python|blocked|stuck|spinning")   # (where each read catches it is chance)
        while True:
            with lock:
                taken[0] += 1
                mine_turn = taken[0]
                time.sleep(0.05)
            # a lock is not fair: its releaser, running on, takes it again
            # before the waiter it woke gets a CPU (on a busy machine, turn
            # after turn, for the whole sampling): it waits until another
            # thread has taken it
            while taken[0] == mine_turn:
                time.sleep(0.001)

    return [threading.Thread(target=turn, name="turn-%d" % k) for k in range(4)]


def gil():
    # both start once the truth is written: the regex keeps the GIL
    # from its first step, and no other thread runs Python after it
    def backtrack():
        mine("busy-c-gil" if GIL else "busy-c|spinning")
        go.wait()
        re.match(r"(a+)+$", "a" * 64 + "b")

    def wants():
        # Python all along: once the regex has the GIL it waits for it;
        # without a GIL it runs, its time in int addition, C calls under
        # its one line (a free-threaded 3.13 does not specialize it): the
        # samples may catch it in one C function every time
        mine("blocked" if GIL else "busy-python|busy-c|spinning")
        n = 0
        while True:
            n += 1

    return [threading.Thread(target=backtrack, name="regex"), threading.Thread(target=wants, name="wants-gil")]


kept = []
go = threading.Event()
SCENARIOS = {"waits": (deadlock, consumer_producer, silent_socket), "busy": (spin,), "turns": (turns,),
             "gil": (gil,), "livelock": (livelock,), "stream": (stream,), "aio": (aio,), "convoy": (convoy,)}
threads = [t for make in SCENARIOS[scenario] for t in make()]
for t in threads:
    t.daemon = True
    t.start()
mine("blocked")
deadline = time.monotonic() + 30
while len(roles) < len(threads) + 1 and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.3)   # each thread past its role's first step (a lock taken, a call entered)
with open(truth_path + ".tmp", "w") as f:
    json.dump({"pid": os.getpid(), "scenario": scenario, "gil": GIL, "roles": {str(k): v for k, v in roles.items()},
               "names": {str(t.native_id): t.name for t in threads}}, f)
os.rename(truth_path + ".tmp", truth_path)
print("READY", flush=True)
go.set()
time.sleep(3600)
