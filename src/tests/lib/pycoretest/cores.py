"""Taking cores of scenarios: gcore's snapshot of a process once it is
READY, the kernel's core of a real crash (or of SIGQUIT, for a process in a
root filesystem), and building the scenarios' C and C++ parts."""
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import time

from .compare import compare
from .env import SCENARIOS, scaled
from .interpreters import Target
from .run import run_pycore
from .schema import load_report
from .tap import Failure, Skip


def wait_ready(proc, timeout=30):
    """Wait until the process prints READY; return False on timeout/exit."""
    buf = b""
    end = scaled(timeout)
    while end > 0:
        r, _, _ = select.select([proc.stdout], [], [], 0.5)
        end -= 0.5
        if r:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                return False
            buf += chunk
            if b"READY" in buf:
                return True
        elif proc.poll() is not None:
            return False
    return False


def as_target(target):
    """A Target, or an interpreter's path on this machine."""
    return target if isinstance(target, Target) else Target(target)


def take_gcore(python, scenario, workdir):
    """gcore's core of PYTHON (a path on this machine) running SCENARIO once
    it is READY: (core, truth path).  The other check-*.py use it."""
    core, truth_path, _ = take_snapshot(Target(python), scenario, workdir)
    return core, truth_path


def where_stuck(proc):
    """Where the threads of PROC, a scenario that did not get ready, stand:
    pycore's own live read of it, cut short (a diagnostic, never a truth)."""
    try:
        rc, out, err = run_pycore(["analyze", "--pid", str(proc.pid)])
    except subprocess.TimeoutExpired:
        return "pycore --pid timed out"
    text = out if rc == 0 else "pycore --pid: exit %d: %s" % (rc, err.strip())
    return " | ".join(l.strip() for l in text.splitlines() if l.strip())[:3000]


def start_ready(target, argv, workdir, preexec):
    """TARGET running ARGV, once it has printed READY.  A process that is
    still running without READY after wait_ready's time (once in thousands
    of runs of a loaded machine, a free-threaded 3.13 scenario never got
    there: a scenario's start, not anything pycore does) is read by
    pycore --pid, for a diagnostic line saying where its threads stood,
    ended, and started once more; a second such process, or one that
    exited, is a failure with that line."""
    stuck = None
    for attempt in (1, 2):
        proc = target.popen(argv, workdir, preexec=preexec, stdout=subprocess.PIPE)
        ready = wait_ready(proc)
        if ready:
            if stuck:
                sys.stdout.write("# the first process did not get ready; the second did. The first: %s\n" % stuck)
                sys.stdout.flush()
            return proc
        code = proc.poll()
        stuck = where_stuck(proc) if code is None else None
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if code is not None or attempt == 2:
            raise Failure("the scenario did not get ready (exit %s)%s" % (code, ": " + stuck if stuck else ""))


def take_snapshot(target, scenario, workdir, before=None, args=()):
    """A snapshot of the process (ARGS after its truth file's path) once it
    is READY (after BEFORE(proc), when
    given, has looked at the running process): gcore's, or for a
    process in a root filesystem the kernel's own core, made by SIGQUIT
    (gdb 13's gcore writes the thread stacks of a chrooted process as
    zeros, while /proc/PID/mem reads them fine; and a kernel core names the
    files as the process saw them, inside its root, as a container's does).
    Returns (core, truth path, the signal the report must show or None)."""
    truth_path = os.path.join(workdir, "truth.json")
    pattern, why = kernel_core_usable() if target.root else (None, None)
    if why:
        raise Failure("cannot take a kernel core of a process in %s: %s" % (target.root, why))

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    argv = [target.scenario(workdir, scenario + ".py"), target.inside(truth_path)] + list(args)
    proc = start_ready(target, argv, workdir, unlimited if target.root else None)
    try:
        if before:
            before(proc)
        if target.root:
            # READY is written before the scenario's last blocking call (a
            # write that releases the GIL): give it time to get there, as
            # gcore's attaching does
            time.sleep(0.5)
            proc.send_signal(signal.SIGQUIT)
            proc.communicate(timeout=scaled(60))
            core = kernel_core_path(pattern, proc.pid, workdir)
            if not os.path.exists(core):
                raise Failure("SIGQUIT: the kernel wrote no core (%s)" % core)
            return core, truth_path, signal.SIGQUIT
        g = subprocess.run(["gcore", "-o", os.path.join(workdir, "core"), str(proc.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
        core = os.path.join(workdir, "core.%d" % proc.pid)
        if g.returncode != 0 or not os.path.exists(core):
            raise Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-500:])
        return core, truth_path, None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def take_and_read(target, scenario, workdir, abort=False, suffix=None):
    """A core of SCENARIO: gcore's snapshot once it is READY, or with ABORT
    the kernel's core after it calls os.abort() (argv[2] "abort"); its
    threads compared with the truth.  Returns (core, pycore's JSON report,
    the scenario's truth file with SUFFIX loaded, or None)."""
    if abort:
        core, truth_path = take_crash(target, workdir, [scenario + ".py", "abort"], signal.SIGABRT)
        crashed, snap_signal = signal.SIGABRT, None
    else:
        core, truth_path, snap_signal = take_snapshot(target, scenario, workdir)
        crashed = None
    truth = json.load(open(truth_path))
    more = json.load(open(truth_path + suffix)) if suffix else None
    rc, out, err = run_pycore(["analyze", "--format", "json"] + target.pycore_args() + [core])
    if rc != 0:
        raise Failure("pycore exit %d: %s" % (rc, err.strip()))
    report = load_report(out)
    compare(truth, report, crashed, snap_signal)
    return core, report, more


def kernel_core_path(pattern, pid, workdir):
    uses_pid = open("/proc/sys/kernel/core_uses_pid").read().strip() == "1"
    name = pattern.replace("%p", str(pid))
    if uses_pid and "%p" not in pattern:
        name += ".%d" % pid
    return os.path.join(workdir, name)


def kernel_core_usable():
    try:
        pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    except OSError:
        return None, "cannot read /proc/sys/kernel/core_pattern"
    if pattern.startswith("|"):
        return None, "core_pattern pipes cores to %s" % pattern[1:].split()[0]
    if "/" in pattern or "%" in pattern.replace("%p", ""):
        return None, "core_pattern %r is not a plain file name" % pattern
    return pattern, None


def config_for(python):
    """python3.X-config beside the interpreter, or None."""
    real = os.path.realpath(python)
    for cand in (python + "-config", real + "-config"):
        if os.access(cand, os.X_OK):
            return cand
    return None


def root_includes(target):
    """For an interpreter in the Debian unstable root: the -I options of its
    headers (libpython3.X-dev, unpacked beside the root by sid-root; their
    pyconfig.h includes <x86_64-linux-gnu/python3.X/pyconfig.h>)."""
    inc = target.root + ".debug/usr/include"
    ver = os.path.basename(target.exe)[len("python"):]
    if not os.path.isfile(os.path.join(inc, "python" + ver, "Python.h")):
        raise Skip("no headers of %s in %s (scripts/sid-root unpacks them)" % (target.exe, inc))
    return ["-I" + os.path.join(inc, "python" + ver), "-I" + inc]


def compile_into(workdir, compiler, out, source, flags):
    """Build a shared object with this machine's compiler.  For a process in
    the root, into its working directory there: it runs against the root's
    newer C library, which keeps the older versions' symbols."""
    if not shutil.which(compiler):
        raise Skip("no %s compiler (Debian package %s)" % (compiler, "g++" if compiler == "c++" else "gcc"))
    b = subprocess.run([compiler, "-shared", "-fPIC", "-g", "-O0", "-o", os.path.join(workdir, out),
                        os.path.join(SCENARIOS, source)] + flags, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b.returncode != 0:
        raise Failure("cannot build %s: %s" % (out, b.stdout.decode("utf-8", "replace")[-400:]))


def build_extension(target, workdir):
    if target.root:
        inc = root_includes(target)
    else:
        cfg = config_for(target.exe)
        if not cfg:
            raise Skip("no %s-config to build the C extension with" % target.exe)
        inc = subprocess.run([cfg, "--includes"], stdout=subprocess.PIPE).stdout.decode().split()
    compile_into(workdir, "cc", "crashext.so", "crashext.c", inc)


def build_cxx(target, workdir):
    compile_into(workdir, "c++", "libcrashxx.so", "crashxx.cpp", [])


def take_crash(target, workdir, argv, signo, limit=None):
    """The kernel's core of the scenario ARGV crashing with SIGNO, with
    RLIMIT_CORE at LIMIT bytes (None: unlimited): (core, truth path).
    Raises Skip when the kernel's cores cannot be had here."""
    target = as_target(target)
    pattern, why = kernel_core_usable()
    if why:
        raise Skip(why)
    truth_path = os.path.join(workdir, "truth.json")

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY if limit is None else limit,
                                                  resource.RLIM_INFINITY))

    proc = target.popen([target.scenario(workdir, argv[0]), target.inside(truth_path)] + argv[1:], workdir,
                        preexec=unlimited, stdout=subprocess.PIPE)
    try:
        proc.communicate(timeout=scaled(60))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise Failure("the scenario did not crash")
    if proc.returncode != -signo:
        raise Failure("the scenario ended with %s, not %s" % (proc.returncode, signal.Signals(signo).name))
    core = kernel_core_path(pattern, proc.pid, workdir)
    if not os.path.exists(core):
        raise Skip("the kernel wrote no core (%s; is ulimit -c limited by a hard limit?)" % core)
    return core, truth_path


_twins = {}


def twin_fingerprints(name, workdir):
    """The fingerprints, plain and --native, of crash.py's SIGSEGV on the
    interpreter NAME (pyM.N: pyenv's ordinary shared build), which other
    builds of that version must match: (plain, native).  Made once per
    process and NAME, in WORKDIR; a skip when NAME is not here."""
    if name not in _twins:
        from .interpreters import find
        target, why = find(name)
        if why:
            raise Skip("no %s to compare with: %s" % (name, why))
        d = os.path.join(workdir, "twin")
        os.makedirs(d, exist_ok=True)
        core, _ = take_crash(target, d, ["crash.py"], signal.SIGSEGV)
        prints = []
        for args in ([], ["--native"]):
            rc, out, err = run_pycore(["analyze", "--format", "json"] + args + [core])
            if rc != 0:
                raise Failure("%s's crash: pycore %s: exit %d: %s" % (name, " ".join(args), rc, err.strip()))
            prints.append(load_report(out)["fingerprint"])
        _twins[name] = tuple(prints)
    return _twins[name]
