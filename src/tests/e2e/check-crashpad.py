"""Minidumps as Crashpad writes them when a real CPython process crashes,
checked against what the process recorded and against Breakpad's
minidump_stackwalk.

Crashpad is packaged nowhere this project installs from, and nothing of
it is in this tree: the test runs when a Crashpad built by hand is found
in $PYCORE_CRASHPAD_DIR or ~/.cache/pycore/crashpad (an install prefix:
bin/crashpad_handler, include/crashpad/, lib/libcrashpad_client.a and
the static libraries it needs, built position-independent; README says
how), and is one skip naming why otherwise.

For every interpreter of src/tests/e2e/interpreters/ present (Debian
unstable's in their root), the test starts Crashpad's handler (outside
any root, with --initial-client-fd: a socket pair, the other end
inherited by the process) and scenarios/crashpad_crash.py, which loads
scenarios/crashpadshim.cpp (built here against Crashpad's client library)
with ctypes: it asks for indirectly referenced memory, sets a module
annotation and an annotation object, hands Crashpad the socket, records
its threads and reads address 0.  Crashpad's signal handler has the
handler write the minidump.  Of it, pycore --native must give:
- a partial report (exit 1: Crashpad's Linux handler writes thread
  stacks and no heap, whatever the client asked), with one warning
  saying the Python state is not in the dump and that no Crashpad
  setting keeps it on Linux (gather_indirectly_referenced_memory named);
- the version the process recorded (from the interpreter's file, found
  by the soname Crashpad records; before 3.11 from PY_VERSION's string);
- SIGSEGV at address 0 in the main thread, the pid the process recorded;
- the annotations: the handler's process annotation and the shim's
  module annotation and annotation object, with the shim's path;
- the file of every module a native frame is in, with the build-id
  Crashpad recorded (the libraries Crashpad names by soname, found where
  the dynamic loader looked, included);
- every thread the process recorded (by native id from 3.8), each with an
  eval loop frame, and each thread's native stack frame for frame
  minidump_stackwalk's (the crashed thread's from the exception's
  context), up to its first frame found by scanning;
- no Python frame, and none of the code objects of the frames the process
  recorded (their addresses, id(), written beside the truth) in the
  dump's memory: nothing there could prove a Python frame (should one
  ever be captured, this fails, and README's known limit is wrong).

usage: check-crashpad.py [INTERPRETER-NAME...]
Output: TAP; KEEP_CORES=1 keeps the dumps."""
import glob
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

import pycoretest as pt
from pycoretest import breakpad
from pycoretest import interpreters
from pycoretest.env import scaled
CLIENT_LIBS = ["-lcrashpad_client", "-lcrashpad_util", "-lmini_chromium", "-lcrashpad_compat"]


def crashpad():
    """Crashpad's install prefix, or raise Skip saying why not."""
    d = os.environ.get("PYCORE_CRASHPAD_DIR") or os.path.expanduser("~/.cache/pycore/crashpad")
    need = ["bin/crashpad_handler", "include/crashpad/client/crashpad_client.h", "lib/libcrashpad_client.a"]
    missing = [n for n in need if not os.path.exists(os.path.join(d, n))]
    if missing:
        raise pt.Skip("no Crashpad in %s (%s missing; it is built by hand, README says what is needed)"
                      % (d, ", ".join(missing)))
    return d


def build_shim(prefix, work):
    """crashpadshim.cpp as a shared object the process loads (its C++
    runtime linked in: a root's process may have none)."""
    inc = os.path.join(prefix, "include", "crashpad")
    pt.compile_into(work, "c++", "libcrashpadshim.so", "crashpadshim.cpp",
                    ["-std=c++17", "-Wno-multichar", "-I" + inc, "-I" + os.path.join(inc, "mini_chromium"),
                     "-L" + os.path.join(prefix, "lib")] + CLIENT_LIBS +
                    ["-lpthread", "-ldl", "-static-libstdc++", "-static-libgcc", "-Wl,-z,noexecstack"])
    return os.path.join(work, "libcrashpadshim.so")


def produce(prefix, target, work):
    """The scenario crashing under Crashpad: (truth, argv, dump path, the
    shim's path as the process saw it, the annotation value)."""
    shim = build_shim(prefix, work)
    value = "run-%d" % os.getpid()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for s in (ours, theirs):   # Crashpad's UnixCredentialSocket: credentials on both ends
        s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    db = os.path.join(work, "db")
    log = open(os.path.join(work, "handler.log"), "wb")
    handler = subprocess.Popen([os.path.join(prefix, "bin", "crashpad_handler"), "--database=" + db,
                                "--initial-client-fd=%d" % ours.fileno(), "--annotation=product=pycore-test",
                                "--no-periodic-tasks", "--no-rate-limit"],
                               pass_fds=[ours.fileno()], stdout=log, stderr=log)
    ours.close()
    truth_path = os.path.join(work, "truth.json")
    argv = [target.scenario(work, "crashpad_crash.py"), target.inside(truth_path), target.inside(shim),
            str(theirs.fileno()), value]
    errors = open(os.path.join(work, "process.log"), "wb")
    proc = target.popen(argv, work, stdout=subprocess.PIPE, stderr=errors, pass_fds=[theirs.fileno()])
    theirs.close()
    try:
        ready = pt.wait_ready(proc)
        rc = proc.wait(timeout=scaled(60))
        handler.wait(timeout=scaled(60))
    finally:
        for p in (proc, handler):
            if p.poll() is None:
                p.kill()
                p.wait()
        log.close()
        errors.close()
    if not ready or rc != -11:
        raise pt.Failure("the scenario exited %s (ready: %s), want SIGSEGV; it said: %s; the handler: %s" %
                         (rc, ready, *(open(f.name, "rb").read().decode("utf-8", "replace")[-300:]
                                       for f in (errors, log))))
    dumps = glob.glob(os.path.join(db, "**", "*.dmp"), recursive=True)
    if len(dumps) != 1:
        raise pt.Failure("Crashpad wrote %d minidumps: %s" % (len(dumps), dumps))
    return json.load(open(truth_path)), dumps[0], target.inside(shim), value


def memory_ranges(path):
    """The (start, end) of every memory range the minidump holds (its
    memory list; read here, not by pycore)."""
    d = open(path, "rb").read()
    out = []
    for t, _, r in breakpad.md_directory(d):
        if t == 5:
            n, = struct.unpack_from("<I", d, r)
            for k in range(n):
                start, size, _ = struct.unpack_from("<QII", d, r + 4 + 16 * k)
                out.append((start, start + size))
        elif t == 9:
            n, base_rva = struct.unpack_from("<QQ", d, r)
            for k in range(n):
                start, size = struct.unpack_from("<QQ", d, r + 16 + 16 * k)
                out.append((start, start + size))
    return out


def check(prefix, bindir, symbols, target, work):
    truth, dmp, shim, value = produce(prefix, target, work)
    report = breakpad.partial_report(target, dmp, truth, "that Crashpad keeps no heap on Linux",
                               ["Linux", "gather_indirectly_referenced_memory"])
    proc = report["process"]
    sig = proc["signal"]
    if proc["pid"] != truth["pid"] or not sig or sig["name"] != "SIGSEGV" or sig["address"] != "0x0" \
            or proc["crashed_tid"] != truth["pid"]:
        raise pt.Failure("pid %s, signal %s; the process was %d and read address 0 in its main thread"
                         % (proc["pid"], sig, truth["pid"]))
    want = [{"module": None, "name": "product", "value": "pycore-test"},
            {"module": shim, "name": "pycore-key", "value": value},
            {"module": shim, "name": "pycore-note", "value": value}]
    if report["input"]["annotations"] != want:
        raise pt.Failure("annotations\n  pycore %s\n  want   %s" % (report["input"]["annotations"], want))
    # the module of every native frame read from its file (those Crashpad
    # names by soname found where the dynamic loader looked)
    by_soname = set()
    for t in report["native_threads"]:
        for f in t["frames"]:
            pc = int(f["address"], 16)
            for m in proc["modules"]:
                if int(m["start"], 16) <= pc < int(m["end"], 16) and m["path"] != "linux-vdso.so.1":
                    if not m["file"] or f["file"] != m["file"]:
                        raise pt.Failure("frame %s in %s: its file %s, the module's %s"
                                         % (f["address"], m["path"], f["file"], m["file"]))
                    if "/" not in m["path"]:
                        by_soname.add(m["path"])
    if report["interpreters"]:
        raise pt.Failure("%d interpreters from a dump without their memory" % len(report["interpreters"]))
    # nothing could prove a Python frame: none of the code objects of the
    # frames the process recorded is in the dump (the frames themselves
    # live in the threads' data stacks or heap, never on the C stack)
    codes = [int(a, 16) for a in open(os.path.join(work, "truth.json.codes")).read().split()]
    ranges = memory_ranges(dmp)
    held = [hex(a) for a in codes if any(lo < a + 16 and a < hi for lo, hi in ranges)]
    if not codes or held:
        raise pt.Failure("code objects of recorded frames in the dump: %s of %d (pycore recovers no "
                         "frame from such memory, and README says no producer here captures it)"
                         % (held, len(codes)))
    threads = {t["tid"]: t for t in report["native_threads"]}
    ids = [t["native_id"] for t in truth["threads"]]
    if None in ids and len(threads) != len(ids) or None not in ids and sorted(threads) != sorted(ids):
        raise pt.Failure("native_threads %s, the process had %s" % (sorted(threads), ids))
    breakpad.eval_loop_in_each(threads.values())
    frames = breakpad.walk_all(bindir, symbols, report, dmp)
    return "%d threads, %d frames as minidump_stackwalk's, %d annotations, files of %s found by soname; " \
        "none of the %d code objects of the recorded frames in its %d memory ranges" \
        % (len(threads), frames, len(want), ", ".join(sorted(by_soname)), len(codes), len(ranges))


def main():
    tap = pt.TAP()
    try:
        prefix = crashpad()
        bindir = breakpad.tools_dir()
    except pt.Skip as why:
        tap.skip("Crashpad's minidumps", why)
        return tap.done()
    symroot = tempfile.mkdtemp(prefix="pycore-crashpad-syms-")
    try:
        for name in interpreters.names():
            if sys.argv[1:] and name not in sys.argv[1:]:
                continue
            label = "%s Crashpad" % name
            target, why = interpreters.find(name)
            if why:
                tap.skip(label, why)
                continue
            work = target.workdir("pycore-crashpad-%s-" % name)
            pt.run_in(tap, label, work, check, prefix, bindir, breakpad.Symbols(bindir, symroot), target, work)
    finally:
        shutil.rmtree(symroot, ignore_errors=True)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
