"""Where things are: the source tree, the pycore under test, the scenarios.

Environment (set by make check's AM_TESTS_ENVIRONMENT): srcdir (the source
tree), PYCORE (the binary), KEEP_CORES=1 to keep scratch directories.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("srcdir") or os.path.abspath(os.path.join(HERE, *[os.pardir] * 4))
PYCORE = os.environ.get("PYCORE") or os.path.join(SRCDIR, "pycore")
TESTS = os.path.join(SRCDIR, "src", "tests")
E2E = os.path.join(TESTS, "e2e")
SCENARIOS = os.path.join(E2E, "scenarios")

# Timeouts under load.  A fixed timeout that is ample on a quiet machine
# fails on a loaded one (check-coredump's journal reads and check-live did
# with the load at 4-7 on two cores), so every wait of the checkers is
# scaled(SECONDS): SECONDS on a quiet machine, times this machine's
# slowness now (measured once per checker: how much longer than its own
# CPU time a short busy loop takes, and the load average per processor,
# whichever is larger), times PYCORE_TEST_SLOWNESS (a number >= 1 the run
# sets: scripts/run-tests sets it for the sanitizer build, whose pycore
# is slower).
_slowness = None


def slowness():
    global _slowness
    if _slowness is None:
        import time
        wall0, cpu0 = time.monotonic(), time.process_time()
        n = 0
        while time.process_time() - cpu0 < 0.05:
            n += 1
        measured = (time.monotonic() - wall0) / max(time.process_time() - cpu0, 1e-6)
        try:
            load = os.getloadavg()[0] / (os.cpu_count() or 1)
        except OSError:
            load = 0.0
        try:
            base = max(1.0, float(os.environ.get("PYCORE_TEST_SLOWNESS") or 1))
        except ValueError:
            base = 1.0
        _slowness = base * max(1.0, measured, load)
    return _slowness


def scaled(seconds):
    """SECONDS of a quiet machine, as long as they take on this one now."""
    return seconds * slowness()


def wait_until(condition, seconds, step=0.05):
    """Poll CONDITION() until it returns a true value (returned) or
    scaled(SECONDS) have passed (None)."""
    import time
    end = time.monotonic() + scaled(seconds)
    while True:
        v = condition()
        if v:
            return v
        if time.monotonic() >= end:
            return None
        time.sleep(step)
