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
