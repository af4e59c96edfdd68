"""Tests that crash or hang the process running them, for check-pytest.py
(copied there as test_victims.py).  Each records its truth first, in
$VICTIM_TRUTH/NAME.json: its process, its thread, its Python stack as the
interpreter gives it (outermost first, the line of the statement that
fails) and what it does (the address it faults at, a local's value)."""
import ctypes
import json
import os
import sys
import threading
import time
import traceback


def record(name, **more):
    """The truth of the caller's frame and the frames that called it, at
    the caller's current line (the statement after the call shares it)."""
    stack = [{"file": f.filename, "line": f.lineno, "function": f.name}
             for f in traceback.extract_stack(sys._getframe(1))]
    truth = dict(pid=os.getpid(), tid=threading.get_native_id(), stack=stack, **more)
    path = os.path.join(os.environ["VICTIM_TRUTH"], name + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(truth, f)
    os.rename(path + ".tmp", path)


def test_passes():
    assert sum(range(10)) == 45


def test_segfault():
    marker = "victim-segfault-local"
    address = 0x28
    record("segfault", address=address, marker=marker); ctypes.string_at(address)  # noqa: E702


def test_abort():
    marker = "victim-abort-local"
    record("abort", marker=marker); os.abort()  # noqa: E702


def test_deadlock():
    """Two locks taken in opposite orders by two threads: neither moves
    again (the test's timeout ends it)."""
    first, second = threading.Lock(), threading.Lock()
    first.acquire()
    ready = threading.Event()

    def other():
        with second:
            ready.set()
            first.acquire()
    threading.Thread(target=other, name="victim-other", daemon=True).start()
    ready.wait()
    marker = "victim-deadlock-local"
    record("deadlock", marker=marker); second.acquire()  # noqa: E702


def test_slow():
    """Slower than --pycore-timeout, then passes."""
    marker = "victim-slow-local"
    until = time.monotonic() + float(os.environ.get("VICTIM_SLOW", "4"))
    record("slow", marker=marker); time.sleep(max(0.0, until - time.monotonic()))  # noqa: E702


def child_crash():
    """Run in a child process by test_child_segfault: it segfaults."""
    marker = "victim-child-local"
    address = 0x30
    record("child", address=address, marker=marker); ctypes.string_at(address)  # noqa: E702


def test_child_segfault(tmp_path):
    """A Python process the test starts segfaults, its kernel core left in
    its working directory (tmp_path); the test fails on its status."""
    import resource
    import subprocess

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import test_victims; "
                        "test_victims.child_crash()" % here], cwd=str(tmp_path), preexec_fn=unlimited)
    assert p.returncode == 0
