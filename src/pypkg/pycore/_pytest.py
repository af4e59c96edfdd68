"""pycore's pytest plugin: a crashed or hung test's process read by pycore.

On with `pytest -p pycore` (or `addopts = -p pycore` in the ini file);
off, nothing of it is loaded.  On:

- a test that crashes the process running it (a segfault in C, an abort):
  the fatal-signal handler of libpycore-crash.so (pycore/lib) has a pycore
  child read its parent live before it dies (the kernel lets it: the
  parent names the child its tracer, prctl PR_SET_PTRACER), prints the
  report on standard error and saves it, then lets the signal take its
  course (pytest's faulthandler, the default action);
- under pytest-xdist, a worker's crash: the worker's own handler saves
  the report, and the "worker crashed" failure shows it;
- a failed test whose process started another that died and left a
  kernel core (core_pattern "core" or "core.%p": a file core or core.PID
  in the test's working directory, its tmp_path or pytest's rootdir,
  written during the test): the failure shows pycore's report of it;
- a test that runs past its timeout (pytest-timeout's, or
  --pycore-timeout alone): its process read a moment before the timeout;
  the failure shows the report (pytest-timeout fails the test), or, with
  --pycore-timeout alone, the report is printed and the test goes on.

Every report is saved as NODEID.json (the JSON report) and NODEID.txt in
--pycore-dir (default: pycore-reports), made only when one is written.
"""

import ctypes
import os
import re
import shlex
import subprocess
import threading
import time
from typing import Any, Dict, List, Optional

import pytest

from . import PycoreError, binary

# linux/prctl.h
PR_SET_PTRACER = 0x59616D61
# a kernel core's name with core_pattern "core" (core_uses_pid: core.PID)
CORE_NAME = re.compile(r"^core(\.[0-9]+)?$")
# the cores of one failed test read at most
MAX_CORES = 3

# The command the crash handler runs (argv[0] /bin/sh), armed once: the
# test that runs is its label (one call a test); its files' name is
# safe_name's of the label (the same, in sh); the JSON report saved, then
# the text, shown on standard error when SHOW is 1.
CRASH_SCRIPT = r'''p=$1 pid=$2 dir=$3 show=$4 label=$5 sig=$6
shift 6
name=$(printf '%s' "$label" | LC_ALL=C tr -c 'A-Za-z0-9._-' '_' | sed 's/^[._]*//; s/[._]*$//')
[ -n "$name" ] || name=test
if [ ${#name} -gt 150 ]; then
    name=$(printf '%s' "$name" | cut -c1-140)-$(printf '%s' "$label" | sha1sum | cut -c1-9)
fi
json=$dir/$name.json text=$dir/$name.txt
mkdir -p "$dir"
"$p" analyze --format json --pid "$@" -- "$pid" > "$json" 2> "$json.err" || [ -s "$json" ] || {
    cat "$json.err" > "$text"; rm -f "$json"; }
rm -f "$json.err"
[ -s "$json" ] && "$p" analyze --color never --pid "$@" -- "$pid" > "$text" 2>&1
if [ "$show" = 1 ]; then
    printf '\npycore: %s: signal %s (SIG%s) in its process; the report (%s):\n' \
        "$label" "$sig" "$(kill -l "$sig")" "$json" >&2
    cat "$text" >&2
fi
'''

# A hung test's read: one read of the process (the JSON report and a
# compact dump of it saved), the text then from the compact dump (the
# process has moved on by then); run by the watchdog thread once the
# plugin has named the shell this process's tracer (it waits for "go").
HANG_SCRIPT = r'''read go || exit 1
p=$1 pid=$2 json=$3 text=$4 save=$5
shift 5
"$p" analyze --format json --pid --save "$save" "$@" -- "$pid" > "$json" 2> "$json.err"
s=$?
cat "$json.err" >&2
rm -f "$json.err"
[ -s "$save" ] && "$p" analyze --color never "$@" -- "$save" > "$text" 2>&1
exit $s
'''


def addoption(parser: Any) -> None:
    group = parser.getgroup("pycore", "pycore: crashed and hung tests read by pycore")
    group.addoption("--pycore-dir", default=None, metavar="DIR",
                    help="where the reports are saved (default: pycore-reports; ini: pycore_dir)")
    group.addoption("--pycore-timeout", default=None, type=float, metavar="S",
                    help="read a test's process when it runs longer than S seconds (default: "
                         "pytest-timeout's timeout, when set; ini: pycore_timeout)")
    group.addoption("--pycore-args", default=None, metavar="ARGS",
                    help="options of pycore analyze for the reads (default: '--native --locals'; "
                         "ini: pycore_args)")
    parser.addini("pycore_dir", "where pycore's reports are saved", default="pycore-reports")
    parser.addini("pycore_timeout", "seconds after which a running test's process is read", default="")
    parser.addini("pycore_args", "options of pycore analyze for the reads", default="--native --locals")


def configure(config: Any) -> None:
    if config.pluginmanager.has_plugin("pycore-reader"):
        return
    config.pluginmanager.register(Reader(config), "pycore-reader")


def safe_name(nodeid: str) -> str:
    """A file name for NODEID: each byte of its UTF-8 outside
    [A-Za-z0-9._-] as '_', '.' and '_' stripped at both ends, at most 150
    of them, and a hash of the whole when cut (CRASH_SCRIPT makes the same
    in sh)."""
    raw = nodeid.encode("utf-8", "surrogateescape")
    name = re.sub(rb"[^A-Za-z0-9._-]", b"_", raw).strip(b"._").decode("ascii") or "test"
    if len(name) > 150:
        import hashlib
        name = name[:140] + "-" + hashlib.sha1(raw).hexdigest()[:9]
    return name


def crash_library() -> Optional[str]:
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libpycore-crash.so")
    for path in (os.environ.get("PYCORE_CRASH_LIB"), here):
        if path and os.path.exists(path):
            return path
    return None


def yama_scope() -> int:
    """Yama's ptrace_scope (Documentation/admin-guide/LSM/Yama.rst): 0
    classic, 1 descendants and named tracers (what the plugin does), 2
    admin only, 3 none; 0 without Yama."""
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


class Reader:
    def __init__(self, config: Any) -> None:
        self.config = config
        rootdir = str(getattr(config, "rootpath", None) or config.rootdir)
        d = config.getoption("pycore_dir") or config.getini("pycore_dir") or "pycore-reports"
        self.dir = os.path.join(rootdir, d) if not os.path.isabs(d) else d
        own = config.getoption("pycore_timeout")
        if own is None and config.getini("pycore_timeout"):
            own = float(config.getini("pycore_timeout"))
        self.own_timeout = own
        words = config.getoption("pycore_args")
        self.args = shlex.split(words if words is not None else config.getini("pycore_args"))
        self.worker = hasattr(config, "workerinput")
        self.timeout_plugin = config.pluginmanager.hasplugin("timeout")
        self.hung = {}  # type: Dict[str, Dict[str, str]]
        self.reads = {}  # type: Dict[str, threading.Event]
        self.started = {}  # type: Dict[str, float]
        self.items = {}  # type: Dict[str, Any]
        self.problem = None  # type: Optional[str]
        self.lib = None
        # standard error as it is now, before a test's capture takes it
        self.stderr_fd = os.dup(2)
        os.set_inheritable(self.stderr_fd, True)
        try:
            self.exe = binary()
        except PycoreError as e:
            self.exe = None
            self.problem = e.reason
            return
        scope = yama_scope()
        if scope >= 2 and os.geteuid() != 0:
            # 2: only a process with CAP_SYS_PTRACE traces; 3: none
            self.problem = ("Yama's ptrace_scope is %d: no read is allowed (needs root or CAP_SYS_PTRACE)"
                            % scope)
            self.exe = None
            return
        lib = crash_library()
        if lib is None:
            self.problem = "no libpycore-crash.so (pycore/lib, or $PYCORE_CRASH_LIB): crashes are not read"
            return
        self.lib = ctypes.CDLL(lib)
        self.lib.pycore_crash_arm.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                              ctypes.POINTER(ctypes.c_char_p)]
        self.lib.pycore_crash_label.argtypes = [ctypes.c_char_p]
        # the crash command, armed once; each test only labels it
        words = ["/bin/sh", "-c", CRASH_SCRIPT, "sh", self.exe, "{pid}", self.dir, "0" if self.worker else "1",
                 "{label}", "{sig}"] + self.args
        self.argv = (ctypes.c_char_p * len(words))(*[w.encode("utf-8", "surrogateescape") for w in words])
        self.env = [("%s=%s" % kv).encode("utf-8", "surrogateescape") for kv in os.environ.items()]
        self.envp = (ctypes.c_char_p * (len(self.env) + 1))(*self.env, None)
        self.lib.pycore_crash_stderr(self.stderr_fd)
        if self.lib.pycore_crash_arm(len(words), self.argv, self.envp) != 0:
            self.problem = "the crash handler's command is too long (--pycore-args, --pycore-dir): not armed"
            self.lib = None
        elif self.lib.pycore_crash_install() != 0:
            self.problem = "the crash handler could not be installed: crashes are not read"
            self.lib = None

    def paths(self, nodeid: str) -> Dict[str, str]:
        base = os.path.join(self.dir, safe_name(nodeid))
        return {"json": base + ".json", "text": base + ".txt", "save": base + ".core.zst"}

    # -- the session

    def pytest_report_header(self, config: Any) -> List[str]:
        if self.problem:
            return ["pycore: " + self.problem]
        return ["pycore: %s reads crashed and hung tests (reports in %s)" % (self.exe, self.dir)]

    def pytest_unconfigure(self, config: Any) -> None:
        if self.lib is not None:
            self.lib.pycore_crash_arm(0, None, None)
            self.lib.pycore_crash_uninstall()
        os.close(self.stderr_fd)

    # -- each test

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self.started[item.nodeid] = time.time()
        self.items[item.nodeid] = item
        if self.lib is not None and self.lib.pycore_crash_label(item.nodeid.encode("utf-8", "surrogateescape")):
            item.warn(pytest.PytestWarning("pycore: the test's id is too long for the crash handler: not armed"))
        timer = self.watch(item)
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()
            if self.lib is not None:
                self.lib.pycore_crash_label(None)
            self.reads.pop(item.nodeid, None)
            self.started.pop(item.nodeid, None)
            self.items.pop(item.nodeid, None)
            self.hung.pop(item.nodeid, None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: Any) -> None:
        """A failed phase's report gains pycore's (first: before
        pytest-xdist's worker sends it, junitxml keeps it)."""
        if not report.failed:
            return
        rep, item = report, self.items.get(report.nodeid)
        if item is None:
            return
        done = self.reads.get(item.nodeid)
        if done is not None:
            done.wait(60)  # (a read under way: its report first)
        got = self.hung.get(item.nodeid)
        if got and rep.failed:
            rep.sections.append(("pycore: the process when the test hung (%s)" % got["json"], got["report"]))
        if rep.when == "call" and self.exe:
            for k, core in enumerate(self.new_cores(item)[:MAX_CORES], 1):
                title, text = self.read_core(item, core, k)
                rep.sections.append((title, text))

    def new_cores(self, item: Any) -> List[str]:
        """The kernel's cores that a process the test started left while it
        ran (core_pattern "core" or "core.%p": in that process's working
        directory: the test's, its tmp_path's, pytest's): files named core
        or core.PID, ELF, written since the test started."""
        since = self.started.get(item.nodeid, 0.0)
        dirs = [os.getcwd(), str(self.config.rootpath if hasattr(self.config, "rootpath") else self.config.rootdir)]
        tmp = getattr(item, "funcargs", {}).get("tmp_path")
        if tmp is not None:
            dirs.insert(0, str(tmp))
        found = []
        for d in dict.fromkeys(os.path.realpath(x) for x in dirs):
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for name in names:
                path = os.path.join(d, name)
                if not CORE_NAME.match(name) or path in found:
                    continue
                try:
                    st = os.stat(path)
                    with open(path, "rb") as f:
                        elf = f.read(4) == b"\x7fELF"
                except OSError:
                    continue
                if elf and st.st_mtime >= since - 1:
                    found.append(path)
        return sorted(found, key=os.path.getmtime)

    def read_core(self, item: Any, core: str, k: int) -> Any:
        base = os.path.join(self.dir, "%s.core-%d" % (safe_name(item.nodeid), k))
        os.makedirs(self.dir, exist_ok=True)
        with open(base + ".json", "wb") as out:
            subprocess.run([self.exe, "analyze", "--format", "json"] + self.args + ["--", core], stdout=out,
                           stderr=subprocess.DEVNULL, timeout=300)
        p = subprocess.run([self.exe, "analyze", "--color", "never"] + self.args + ["--", core],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        text = p.stdout.decode("utf-8", "replace")
        with open(base + ".txt", "w", encoding="utf-8") as f:
            f.write(text)
        return "pycore: %s, a core a process of the test left (%s.json)" % (core, base), text

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """pytest-xdist's controller: the worker's saved report, in the
        worker-crashed failure."""
        paths = self.paths(crashitem)
        try:
            with open(paths["text"], encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return
        report.sections.append(("pycore: the worker when it crashed (%s)" % paths["json"], text))

    # -- hangs

    def timeout_of(self, item: Any) -> Optional[float]:
        """The seconds after which ITEM's process is read, and whether
        pytest-timeout will fail it then: --pycore-timeout, else
        pytest-timeout's own setting of the item."""
        if self.own_timeout:
            return self.own_timeout
        if not self.timeout_plugin:
            return None
        # (the session's setting, unless a marker sets the item's)
        if item.get_closest_marker("timeout") is None and hasattr(self.config, "_env_timeout"):
            return self.config._env_timeout or None
        try:
            import pytest_timeout  # type: ignore
            settings = pytest_timeout._get_item_settings(item)
        except Exception:
            return None
        return settings.timeout or None

    def watch(self, item: Any) -> Optional[threading.Timer]:
        timeout = self.timeout_of(item) if self.exe else None
        if not timeout or timeout <= 0:
            return None
        paths = self.paths(item.nodeid)
        # a moment before the timeout: pytest-timeout's thread method ends
        # the process then
        when = timeout - min(1.0, timeout * 0.1)
        timer = threading.Timer(when, self.read_hung, (item.nodeid, paths, timeout))
        timer.daemon = True
        timer.start()
        return timer

    def read_hung(self, nodeid: str, paths: Dict[str, str], timeout: float) -> None:
        done = self.reads[nodeid] = threading.Event()
        try:
            self.read_now(nodeid, paths, timeout)
        finally:
            done.set()

    def read_now(self, nodeid: str, paths: Dict[str, str], timeout: float) -> None:
        os.makedirs(self.dir, exist_ok=True)
        argv = ["/bin/sh", "-c", HANG_SCRIPT, "sh", self.exe, str(os.getpid()), paths["json"], paths["text"],
                paths["save"]] + self.args
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PTRACER, p.pid, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # (no Yama, or no prctl: ptrace's own rules)
        p.stdin.write(b"go\n")
        p.stdin.close()
        err = p.stderr.read().decode("utf-8", "replace")
        p.wait()
        try:
            with open(paths["text"], encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            text = err or "pycore: no report (exit %d)" % p.returncode
        self.hung[nodeid] = {"json": paths["json"], "report": text}
        if self.own_timeout:
            said = "\npycore: %s still runs after %g s; its process (%s):\n%s" % (nodeid, timeout, paths["json"],
                                                                                  text)
            os.write(self.stderr_fd, said.encode("utf-8", "replace"))
