"""pycore from Python: the reports of the pycore binary this package carries.

    import pycore
    report = pycore.analyze("core.1234", locals=True, native=True)
    print(report["summary"]["text"])
    for record in pycore.batch(["core.1", "core.2"]):
        print(record["input"]["path"], record.get("error") or record["fingerprint"]["hash"])

Every function runs the binary (pycore/bin/pycore in the wheel, else
$PYCORE, else pycore on PATH) and returns its JSON report (pycore-report(5):
`pycore help report`) as Python objects; nothing is reimplemented here.
A failure raises PycoreError, which carries the binary's exit status and
its one-line reason.

As a pytest plugin (`pytest -p pycore`, or `addopts = -p pycore` in the
ini file) it reads a test's process when the test crashes it or hangs:
see pycore._pytest.
"""

import json
import os
import shutil
import subprocess
import sys
import threading
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

__all__ = ["PycoreError", "analyze", "batch", "heap", "binary", "version"]

Target = Union[str, "os.PathLike[str]", int]

# The exit statuses of analyze (pycore(1)): 0 complete, 1 incomplete (a
# report still comes: its warnings say what is missing)
COMPLETE, INCOMPLETE = 0, 1


class PycoreError(Exception):
    """pycore failed: status is its exit status (2 usage, 3 not a CPython
    pycore reads, 4 unreadable or not a dump, 5 output failed, 6 a budget
    ran out, 7 no such process or not permitted, 9 the --sysroot image
    cannot be read; -N killed by signal N; 127 no pycore binary found),
    reason its one-line message."""

    def __init__(self, status: int, reason: str, argv: Sequence[str] = ()) -> None:
        super().__init__("pycore: exit %d: %s" % (status, reason))
        self.status = status
        self.reason = reason
        self.argv = list(argv)


def binary() -> str:
    """The pycore binary: the wheel's own, else $PYCORE, else on PATH."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "pycore")
    if os.access(here, os.X_OK):
        return here
    env = os.environ.get("PYCORE")
    if env and os.access(env, os.X_OK):
        return env
    found = shutil.which("pycore")
    if found:
        return found
    raise PycoreError(127, "no pycore binary: not in this package (%s), $PYCORE or PATH" % here)


def version() -> str:
    """The binary's version ("0.2.0")."""
    p = subprocess.run([binary(), "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise PycoreError(p.returncode, _reason(p.stderr), [binary(), "--version"])
    return p.stdout.decode().split()[-1]


def _reason(stderr: bytes) -> str:
    lines = [l for l in stderr.decode("utf-8", "replace").splitlines() if l.strip()]
    line = lines[-1].strip() if lines else "no message"
    return line[len("pycore: "):] if line.startswith("pycore: ") else line


def _options(locals: bool, native: bool, args: Sequence[str]) -> List[str]:
    argv = []
    if locals:
        argv.append("--locals")
    if native:
        argv.append("--native")
    return argv + list(args)


def _run_one(command: str, target: Target, options: List[str], timeout: Optional[float]) -> Dict[str, Any]:
    if isinstance(target, bool):
        raise TypeError("target: a dump's path or a process id, not a bool")
    pid = isinstance(target, int)
    argv = ([binary(), command, "--format", "json"] + (["--pid"] if pid else []) + options +
            ["--", str(target) if pid else os.fspath(target)])
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PycoreError(6, "no report in %s s (the timeout given)" % timeout, argv) from None
    if p.returncode not in (COMPLETE, INCOMPLETE) or not p.stdout.strip():
        raise PycoreError(p.returncode, _reason(p.stderr), argv)
    return json.loads(p.stdout.decode("utf-8").splitlines()[0])


def analyze(target: Target, locals: bool = False, native: bool = False, *, args: Sequence[str] = (),
            timeout: Optional[float] = None) -> Dict[str, Any]:
    """The JSON report of one dump (a path) or one running process (an
    int: its pid), as `pycore analyze --format json` gives it.

    locals: every frame's arguments and variables (--locals); native:
    native stacks too (--native); args: more options of pycore analyze
    (["--sysroot", "/srv/image"], ["--redact"]); timeout: seconds to wait
    for the binary.  An incomplete report (exit status 1) is returned: its
    "warnings" say what is missing.  Raises PycoreError otherwise."""
    return _run_one("analyze", target, _options(locals, native, args), timeout)


def heap(target: Target, *, args: Sequence[str] = (), timeout: Optional[float] = None) -> Dict[str, Any]:
    """The report of `pycore heap --format json`: its "heap" holds the
    census of the dump's (or process's) Python objects by type."""
    return _run_one("heap", target, list(args), timeout)


def batch(dumps: Iterable[Union[str, "os.PathLike[str]"]], locals: bool = False, native: bool = False, *,
          jobs: Optional[int] = None, args: Sequence[str] = ()) -> Iterator[Dict[str, Any]]:
    """Each dump's record as `pycore batch` writes it, in the order the
    dumps finish (args=["--ordered"]: the order given): a report, or an
    error record ({"input": ..., "error": {"code": ..., "message": ...}})
    for a dump that could not be read.  Raises PycoreError when batch
    itself fails (after the records it wrote)."""
    paths = [os.fspath(d) for d in dumps]
    argv = [binary(), "batch"] + _options(locals, native, args)
    if jobs is not None:
        argv += ["--jobs", str(int(jobs))]
    argv += ["--"] + paths
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    reader.start()
    try:
        for line in p.stdout:
            if line.strip():
                yield json.loads(line.decode("utf-8"))
    finally:
        if p.poll() is None:
            p.stdout.close()
            p.wait()
        reader.join()
    if p.returncode != 0:
        raise PycoreError(p.returncode, _reason(b"".join(err)), argv)


def _main() -> None:
    """The console script `pycore` and `python -m pycore`: the binary,
    with this process's arguments."""
    try:
        exe = binary()
    except PycoreError as e:
        sys.stderr.write("pycore: %s\n" % e.reason)
        sys.exit(e.status)
    os.execv(exe, ["pycore"] + sys.argv[1:])


# The pytest plugin's hooks, when pytest loads this module (-p pycore);
# pytest itself is imported only then.
def pytest_addoption(parser: Any) -> None:
    from . import _pytest
    _pytest.addoption(parser)


def pytest_configure(config: Any) -> None:
    from . import _pytest
    _pytest.configure(config)
