"""Minidumps as Breakpad writes them, of real CPython processes, checked
against what the process recorded and against Breakpad's own
minidump_stackwalk.

The tools are Breakpad's, built from source by scripts/breakpad (once,
into ~/.cache/pycore/breakpad): pid2md writes a minidump of a live
process through ptrace with the same writer as Breakpad's in-process
client; core2md CORE PROCDIR OUT writes one from a core and the auxv,
cmdline, environ, maps and status files of /proc/PID, copied while the
process was stopped; dump_syms makes symbol files (CFI and public
symbols) for minidump_stackwalk.

For every interpreter of src/tests/e2e/interpreters/ present (Debian
unstable's in their root, read with --sysroot), threads.py runs until it
has recorded its threads; pid2md writes a dump; the process is stopped,
its /proc files copied, and the kernel's core taken (SIGQUIT; gcore where
the kernel's cores cannot be had); core2md converts the core.  Of each
dump, pycore --native must give:
- a partial report (exit 1; Breakpad's Linux dumps hold thread stacks and
  no heap), with one warning saying the Python state is not in the dump
  and naming the Breakpad setting that would keep it (RegisterAppMemory);
- the version the process recorded (read from the interpreter's file;
  before 3.11 the file holds no version number: null, and a warning
  names the minor the layout was chosen for);
- no signal for pid2md's dump (Breakpad's "dump requested"), SIGQUIT for
  the core's;
- pid, ppid, uid and gid as the process recorded them (Breakpad's copy of
  /proc/PID/status), argv as the test started it;
- every thread of /proc/PID/task, each with an eval loop frame;
- each thread's native stack frame for frame minidump_stackwalk's, given
  symbol files dump_syms made of the files pycore read for the modules
  (build-id checked): the same module and program counter per frame, up to
  the first frame minidump_stackwalk finds by scanning the stack (a guess,
  not an unwind) or outside every module (past _start, whose return
  address CFI leaves undefined and Breakpad's symbol format cannot say so).
Python frames cannot be compared: the dumps hold none of the memory they
live in.

Last, a parser test of every annotation kind (check-crashpad.py reads
Crashpad's own dumps, where a Crashpad is at hand): Crashpad's info
stream (process and module annotations, list annotations, annotation
objects) appended to a core2md dump by this script must come out in the report's input.annotations and the text
report's Annotations section; 5000 of them give the first 4096 and one
warning.

usage: check-breakpad.py [INTERPRETER-NAME...]  (all by default: py3.12, sid3.14, ...)
Output: TAP (exit 0, 1 when a case failed); one skip, naming why, when
Breakpad's tools cannot be built (no npm, no network); a skip by name for
each interpreter not present.  KEEP_CORES=1 keeps the dumps and symbols."""
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

import pycoretest as pt
from pycoretest import breakpad
from pycoretest import interpreters
from pycoretest.env import scaled, wait_until
from pycoretest.run import drop_scratch
PROC_FILES = ("auxv", "cmdline", "environ", "maps", "status")


def check_dump(bindir, symbols, target, dmp, truth, tids, argv, sig):
    report = breakpad.partial_report(target, dmp, truth, "naming Breakpad's RegisterAppMemory", ["RegisterAppMemory"])
    proc = report["process"]
    for key in ("pid", "ppid", "uid", "gid"):
        if proc[key] != truth[key]:
            raise pt.Failure("%s %s, the process says %s" % (key, proc[key], truth[key]))
    if proc["argv"] != argv:
        raise pt.Failure("argv %s, the process was started with %s" % (proc["argv"], argv))
    got_sig = proc["signal"]["name"] if proc["signal"] else None
    if got_sig != sig or (proc["signal"] and proc["signal"]["number"] != getattr(signal, sig)):
        raise pt.Failure("signal %s, the process got %s" % (got_sig, sig))
    threads = {t["tid"]: t for t in report["native_threads"]}
    if sorted(threads) != sorted(tids):
        raise pt.Failure("native_threads %s, the process had %s" % (sorted(threads), sorted(tids)))
    breakpad.eval_loop_in_each(threads.values())
    frames = breakpad.walk_all(bindir, symbols, report, dmp)
    return "%d threads, %d frames as minidump_stackwalk's" % (len(threads), frames)


def produce(bindir, target, work):
    """threads.py's dumps: pid2md's of the live process, core2md's of its
    core.  Returns (truth, tids, argv, {name: (dump, signal name) or why
    not})."""
    truth_path = os.path.join(work, "truth.json")
    argv = [target.exe, target.scenario(work, "threads.py"), target.inside(truth_path)]
    pattern, why_no_kernel_core = pt.kernel_core_usable()

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    proc = target.popen(argv[1:], work, preexec=unlimited, stdout=subprocess.PIPE)
    dumps = {}
    try:
        if not pt.wait_ready(proc):
            raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        time.sleep(0.5)   # READY comes just before its last blocking call
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid))
        live = os.path.join(work, "pid2md.dmp")
        p = subprocess.run([os.path.join(bindir, "pid2md"), str(proc.pid), live], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=scaled(120))
        dumps["pid2md"] = (live, None) if p.returncode == 0 and os.path.exists(live) else \
            "pid2md failed: %s" % p.stdout.decode("utf-8", "replace").strip()[-300:]
        os.kill(proc.pid, signal.SIGSTOP)
        wait_until(lambda: open("/proc/%d/stat" % proc.pid).read().rsplit(")", 1)[1].split()[0] == "T", 5)
        procdir = os.path.join(work, "proc")
        os.mkdir(procdir)
        for f in PROC_FILES:
            with open("/proc/%d/%s" % (proc.pid, f), "rb") as src, open(os.path.join(procdir, f), "wb") as dst:
                dst.write(src.read())
        if not why_no_kernel_core:
            os.kill(proc.pid, signal.SIGQUIT)
            os.kill(proc.pid, signal.SIGCONT)
            proc.communicate(timeout=scaled(60))
            core, sig = pt.kernel_core_path(pattern, proc.pid, work), "SIGQUIT"
        elif not target.root:
            g = subprocess.run(["gcore", "-o", os.path.join(work, "core"), str(proc.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
            core, sig = os.path.join(work, "core.%d" % proc.pid), None
            if g.returncode != 0:
                core = None
        else:
            core = None
        if not core or not os.path.exists(core):
            dumps["core2md"] = "no core of the process (%s)" % (why_no_kernel_core or "the kernel wrote none")
        else:
            out = os.path.join(work, "core2md.dmp")
            p = subprocess.run([os.path.join(bindir, "core2md"), core, procdir, out], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=scaled(120))
            dumps["core2md"] = (out, sig) if os.path.exists(out) and os.path.getsize(out) > 0 else \
                "core2md failed: %s" % p.stdout.decode("utf-8", "replace").strip()[-300:]
            os.unlink(core)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return json.load(open(truth_path)), tids, argv, dumps


# ---------------------------------------------------------------------------
# Crashpad's info stream, appended to a real dump: every annotation kind
# ---------------------------------------------------------------------------

def crashpad_stream(base, module_count, flood=0):
    """The bytes of a Crashpad info stream placed at file offset BASE
    (layouts: Breakpad's minidump_format.h, MDRawCrashpadInfo and what it
    points to), and the annotations the report must show."""
    blob = bytearray()

    def put(data):
        blob.extend(b"\0" * (-len(blob) % 4))
        at = base + len(blob)
        blob.extend(data)
        return at

    def utf8(s):
        b = s if isinstance(s, bytes) else s.encode()
        return put(struct.pack("<I", len(b)) + b)

    def dictionary(pairs):
        entries = [(utf8(k), utf8(v)) for k, v in pairs]
        data = struct.pack("<I", len(entries)) + b"".join(struct.pack("<II", k, v) for k, v in entries)
        return struct.pack("<II", len(data), put(data))

    module = 1 if module_count > 1 else 0
    lst = [utf8("list note")]
    lst_data = struct.pack("<I", len(lst)) + b"".join(struct.pack("<I", r) for r in lst)
    objects = [(utf8("obj"), 1, utf8("text value")), (utf8("binary"), 0x8001, utf8(b"\x01\x02"))]
    obj_data = struct.pack("<I", len(objects)) + b"".join(struct.pack("<IHHI", n, t, 0, v) for n, t, v in objects)
    mod_info = struct.pack("<I", 1) + struct.pack("<II", len(lst_data), put(lst_data)) + \
        dictionary([("mkey", "mvalue")]) + struct.pack("<II", len(obj_data), put(obj_data))
    mod_at = put(mod_info)
    links = struct.pack("<I", 1) + struct.pack("<III", module, len(mod_info), mod_at)
    process = [("product", "pycore-test"), ("ver", "1.0")] + [("k%d" % i, "v") for i in range(flood)]
    info = struct.pack("<I", 1) + b"R" * 16 + b"C" * 16 + dictionary(process) + \
        struct.pack("<II", len(links), put(links)) + struct.pack("<IQ", 0, 0)
    info_at = put(info)
    return bytes(blob), info_at, len(info), module


def with_crashpad(dmp, out, flood=0):
    """DMP with a Crashpad info stream appended, written to OUT; returns
    pycore's JSON report of it and the annotated module's index."""
    d = bytearray(open(dmp, "rb").read())
    entries = breakpad.md_directory(d)
    modules = [e for e in entries if e[0] == 4]
    mcount = struct.unpack_from("<I", d, modules[0][2])[0] if modules else 0
    d.extend(b"\0" * (-len(d) % 4))
    blob, info_at, info_len, module = crashpad_stream(len(d), mcount, flood)
    d.extend(blob)
    d.extend(b"\0" * (-len(d) % 4))
    new_dir = len(d)
    for e in entries + [(0x43500001, info_len, info_at)]:
        d.extend(struct.pack("<III", *e))
    struct.pack_into("<II", d, 8, len(entries) + 1, new_dir)
    open(out, "wb").write(d)
    rc, text, err = pt.run_pycore(["analyze", "--format", "json", out])
    if not text:
        raise pt.Failure("pycore exit %d, no report: %s" % (rc, err.strip()))
    return pt.load_report(text), module if mcount else None


def check_crashpad_cap(dmp, work):
    """More annotations than pycore keeps (4096): the first 4096, and one
    warning that the rest were not read."""
    report, _ = with_crashpad(dmp, os.path.join(work, "crashpad-flood.dmp"), flood=5000)
    got = report["input"]["annotations"]
    if len(got) != 4096 or got[2] != {"module": None, "name": "k0", "value": "v"}:
        raise pt.Failure("%d annotations kept, the third %s" % (len(got), got[2:3]))
    if sum("annotations are too many" in w for w in report["warnings"]) != 1:
        raise pt.Failure("want one warning that annotations were left out: %s" % report["warnings"])


def check_crashpad_parser(dmp, work):
    out = os.path.join(work, "crashpad.dmp")
    report, module = with_crashpad(dmp, out)
    mpath = report["process"]["modules"][module]["path"] if module is not None else None
    want = [{"module": None, "name": "product", "value": "pycore-test"},
            {"module": None, "name": "ver", "value": "1.0"},
            {"module": mpath, "name": None, "value": "list note"},
            {"module": mpath, "name": "mkey", "value": "mvalue"},
            {"module": mpath, "name": "obj", "value": "text value"},
            {"module": mpath, "name": "binary", "value": None}]
    if report["input"]["annotations"] != want:
        raise pt.Failure("annotations\n  pycore %s\n  want   %s" % (report["input"]["annotations"], want))
    lines = [w for w in report["warnings"] if "the Python state is not in the dump" in w]
    if len(lines) != 1 or "gather_indirectly_referenced_memory" not in lines[0]:
        raise pt.Failure("want one line naming Crashpad's setting: %s" % report["warnings"])
    rc, text, err = pt.run_pycore(["analyze", out])
    shown = text.split("\nAnnotations:\n", 1)[-1].split("\n\n", 1)[0].splitlines()
    want_text = ["  " + (a["module"] + ": " if a["module"] else "") + (a["name"] + " = " if a["name"] else "") +
                 (a["value"] if a["value"] is not None else "(not text)") for a in want]
    if shown != want_text:
        raise pt.Failure("text report's annotations\n  pycore %s\n  want   %s" % (shown, want_text))
    return "%d annotations" % len(want)


def main():
    tap = pt.TAP()
    try:
        bindir = breakpad.tools_dir()
    except pt.Skip as why:
        tap.skip("Breakpad's tools", why)
        return tap.done()
    symroot = tempfile.mkdtemp(prefix="pycore-breakpad-syms-")
    parser_dump = None
    try:
        for name in interpreters.names():
            if sys.argv[1:] and name not in sys.argv[1:]:
                continue
            target, why = interpreters.find(name)
            if not why and not target.root and not shutil.which("gcore") and pt.kernel_core_usable()[1]:
                why = "neither the kernel's cores nor gcore can be had"
            if why:
                for producer in ("pid2md", "core2md"):
                    tap.skip("%s %s" % (name, producer), why)
                continue
            symbols = breakpad.Symbols(bindir, symroot)
            work = target.workdir("pycore-breakpad-%s-" % name)
            try:
                try:
                    truth, tids, argv, dumps = produce(bindir, target, work)
                except pt.Failure as e:
                    for producer in ("pid2md", "core2md"):
                        tap.not_ok("%s %s" % (name, producer), e)
                    continue
                for producer in ("pid2md", "core2md"):
                    label = "%s %s" % (name, producer)
                    got = dumps[producer]
                    if isinstance(got, str):
                        tap.not_ok(label, got) if producer == "pid2md" or "failed" in got else tap.skip(label, got)
                        continue
                    dmp, sig = got
                    if tap.run(label, check_dump, bindir, symbols, target, dmp, truth, tids, argv, sig) \
                            and producer == "core2md" and not parser_dump:
                        parser_dump = os.path.join(symroot, "core2md.dmp")
                        shutil.copy(dmp, parser_dump)
            finally:
                drop_scratch(tap, work)
        label = "Crashpad info stream appended to a core2md dump (every annotation kind)"
        if parser_dump:
            tap.run(label, check_crashpad_parser, parser_dump, symroot)
            tap.run("Crashpad annotations past pycore's cap", check_crashpad_cap, parser_dump, symroot)
        else:
            tap.skip(label, "no core2md dump was made")
            tap.skip("Crashpad annotations past pycore's cap", "no core2md dump was made")
    finally:
        if os.environ.get("KEEP_CORES") == "1":
            tap.diag("symbols kept in %s" % symroot)
        else:
            shutil.rmtree(symroot, ignore_errors=True)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
