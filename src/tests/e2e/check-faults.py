"""The fault named, with its evidence (issue 49): real crashes of every
kind pycore names, on pyenv's 3.12 and 3.10 and Debian's python3.11, each
with and without -X faulthandler (whose handler takes no siginfo: the
saved state is then the evidence), each report's "fault_kind" against
what the process wrote before it faulted (scenarios/faults.py) and the
text report's "Fault kind:" line the JSON's.

  null           ctypes.string_at(OFFSET, 1), OFFSET chosen by the process:
                 null-dereference, offset OFFSET
  overflow       3.10 (each Python call a C call): deep recursion of f in a
                 thread of threading.stack_size(512 KiB): stack-overflow of
                 that thread (its native id), the repeated frame f of
                 faults.py, counted as often as the report's Python frames
                 of f on that thread and as the calls the process entered
                 (each writes the count into a shared mapping of a file,
                 which the kernel keeps; one more while a call's frame is
                 set up); with faulthandler (no alternate stack
                 for a thread) the kernel cannot deliver the signal
                 (SI_KERNEL), and the thread's stack pointer is the proof
  overflow-main  the same in the main thread (RLIMIT_STACK 8 MiB): the
                 kernel's gap under its stack
  overflow-c     every version: recursion of recurse() of the test's .so in
                 a thread of threading.stack_size(256 KiB): stack-overflow,
                 no recursion without --native (no frame of it is read);
                 with --native recurse() as often as the process entered it
                 (each call writes the count into a shared mapping)
  readonly       ctypes.memmove into a PROT_READ mapping of a file:
                 write-to-readonly at that address, in that file
  unmapped       a read 0x10 past an anonymous mapping whose last page the
                 process unmapped: unmapped-near, that mapping's end, 0x10
  sigbus         scenarios/sigbus.py (a mapped file truncated, a page past
                 its end read): sigbus-past-eof, the file, offset 8192,
                 the file 0 bytes
  fpe            42 / 0 in a .so the test builds: divide-by-zero; with
                 faulthandler nothing records the trap (#DE is what a
                 thread that never faulted holds too): unrecorded, or
                 divide-by-zero where the saved state is read as proof
  illegal        ud2 in an anonymous PROT_READ|WRITE|EXEC page, called:
                 illegal-instruction-anonymous at that address, rwx, no file
  kill           SIGSEGV sent by a process the test starts (it writes its
                 pid): signal-sent by that pid; with faulthandler the
                 sender is lost (no siginfo): unrecorded
  abort          os.abort(): abort, its message slot null

Every kind is named on its scenario and on no other: each run's kind must
be one of its scenario's.  KEEP_CORES=1 keeps the scratch directories.

Prints TAP lines; exit 0 pass, 1 fail."""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "scenarios")
import pycoretest as cs  # noqa: E402
from pycoretest import interpreters  # noqa: E402
from pycoretest.tap import TAP, Failure, Skip  # noqa: E402
from pycoretest.env import scaled, wait_until  # noqa: E402

INTERPRETERS = ["py3.12", "py3.10", "debian3.11"]
# scenario: (signal it dies of, kinds without faulthandler, kinds with it)
CASES = {
    "null": (signal.SIGSEGV, {"null-dereference"}, {"null-dereference"}),
    "overflow": (signal.SIGSEGV, {"stack-overflow"}, {"stack-overflow"}),
    "overflow-main": (signal.SIGSEGV, {"stack-overflow"}, {"stack-overflow"}),
    "overflow-c": (signal.SIGSEGV, {"stack-overflow"}, {"stack-overflow"}),
    "readonly": (signal.SIGSEGV, {"write-to-readonly"}, {"write-to-readonly"}),
    "unmapped": (signal.SIGSEGV, {"unmapped-near"}, {"unmapped-near"}),
    "sigbus": (signal.SIGBUS, {"sigbus-past-eof"}, {"sigbus-past-eof"}),
    "fpe": (signal.SIGFPE, {"divide-by-zero"}, {"divide-by-zero", "unrecorded"}),
    "illegal": (signal.SIGILL, {"illegal-instruction-anonymous"}, {"illegal-instruction-anonymous"}),
    "kill": (signal.SIGSEGV, {"signal-sent"}, {"unrecorded", "signal-sent"}),
    "abort": (signal.SIGABRT, {"abort"}, {"abort"}),
}
STACK_LIMIT = 8 << 20


def limits():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    resource.setrlimit(resource.RLIMIT_STACK, (STACK_LIMIT, STACK_LIMIT))


def divide_lib(work):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise Skip("no C compiler (cc) to build the divide .so")
    src = os.path.join(work, "divide.c")
    with open(src, "w") as f:
        f.write("int divide(int a, int b) { return a / b; }\n"
                "int recurse(int n, volatile int *entered)\n"
                "{\n"
                "\tvolatile char pad[600];\n"
                "\t*entered = n + 1;\n"
                "\tpad[0] = (char)n;\n"
                "\treturn recurse(n + 1, entered) + pad[0];\n"
                "}\n")
    lib = os.path.join(work, "libdivide.so")
    subprocess.run([cc, "-O0", "-shared", "-fPIC", "-o", lib, src], check=True)
    return lib


def crash(python, mode, faulthandler, work):
    """The kernel's core of MODE and the truth: (core, truth, extra)."""
    pattern, why = cs.kernel_core_usable()
    if why:
        raise Skip(why)
    truth = os.path.join(work, "truth.json")
    argv = [python] + (["-X", "faulthandler"] if faulthandler else [])
    extra = {}
    if mode == "sigbus":
        argv += [os.path.join(SCENARIOS, "sigbus.py"), truth]
    else:
        argv += [os.path.join(SCENARIOS, "faults.py"), truth, "wait" if mode == "kill" else mode]
        if mode in ("fpe", "overflow-c"):
            argv.append(divide_lib(work))
    proc = subprocess.Popen(argv, cwd=work, preexec_fn=limits, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if mode == "kill":
            if not wait_until(lambda: os.path.exists(truth) or proc.poll() is not None, 30) or proc.poll() is not None:
                raise Failure("the process did not start waiting: %s" % proc.communicate()[1][-300:])
            sender = os.path.join(work, "sender.json")
            subprocess.run([sys.executable, "-c", "import json, os, sys\n"
                            "json.dump({'pid': os.getpid()}, open(sys.argv[1], 'w'))\n"
                            "os.kill(int(sys.argv[2]), 11)\n", sender, str(proc.pid)], check=True)
            extra = json.load(open(sender))
        _, err = proc.communicate(timeout=scaled(120))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise Failure("%s did not crash" % mode)
    want = CASES[mode][0]
    if proc.returncode != -want:
        raise Failure("%s ended with %s, not %s: %s" % (mode, proc.returncode, want.name, err[-300:]))
    core = cs.kernel_core_path(pattern, proc.pid, work)
    if not os.path.exists(core):
        raise Skip("the kernel wrote no core (%s)" % core)
    return core, json.load(open(truth)), extra


def python_frames(report, tid):
    for i in report["interpreters"]:
        for t in i["threads"]:
            if t["tid"] == tid:
                return [f for f in t["frames"] if f["kind"] == "python"]
    return []


def check_evidence(mode, fk, truth, extra, report, work):
    kind = fk["kind"]
    if kind == "null-dereference":
        if fk["offset"] != truth["offset"] or fk["address"] != "0x%x" % truth["offset"]:
            raise Failure("offset %s (address %s), the process read NULL + %d" % (fk["offset"], fk["address"],
                                                                                 truth["offset"]))
        if fk["thread"] != truth["tid"]:
            raise Failure("thread %s, the process faulted in %d" % (fk["thread"], truth["tid"]))
        return "NULL + %d" % truth["offset"]
    if kind == "stack-overflow":
        if fk["thread"] != truth["tid"]:
            raise Failure("the stack of thread %s, the recursion ran in %d" % (fk["thread"], truth["tid"]))
        with open(truth["depth_file"], "rb") as f:
            entered = int.from_bytes(f.read(8)[:4], "little")
        if mode == "overflow-c":
            return check_native_recursion(fk, truth, entered, report)
        rec = fk["recursion"]
        if not rec or rec["kind"] != "python" or rec["function"] != truth["function"] or rec["file"] != truth["file"]:
            raise Failure("recursion %s, the process recursed in %s of %s" % (rec, truth["function"], truth["file"]))
        frames = [f for f in python_frames(report, truth["tid"])
                  if f["function"] == truth["function"] and f["file"] == truth["file"]]
        if rec["count"] != len(frames) or rec["count"] < 100:
            raise Failure("recursion count %d, the report's thread has %d Python frames of %s" % (
                rec["count"], len(frames), truth["function"]))
        # the calls the process entered, as its last one wrote; the fault
        # may come in the set-up of one more call's frame
        if rec["at_least"] or rec["count"] not in (entered, entered + 1):
            raise Failure("recursion count %d, the process entered %d calls of %s" % (
                rec["count"], entered, truth["function"]))
        m = fk["mapping"]
        want = "guard-gap" if mode == "overflow-main" else "guard-page"
        if not m or m["where"] != want or m["file"] is not None or m["permissions"] != "rw-":
            raise Failure("mapping %s: not the %s under an anonymous rw- stack" % (m, want))
        return "%d calls of %s (the process entered %d), %s" % (rec["count"], rec["function"], entered,
                                                                m["where"])
    if kind == "write-to-readonly":
        m = fk["mapping"]
        if fk["address"] != "0x%x" % truth["address"] or not m or m["file"] != truth["file"] or \
           m["permissions"][1] != "-" or m["where"] != "in":
            raise Failure("address %s in %s; the process wrote to 0x%x in a read-only mapping of %s" % (
                fk["address"], m, truth["address"], truth["file"]))
        return "%s of %s" % (m["permissions"], os.path.basename(m["file"]))
    if kind == "unmapped-near":
        m = fk["mapping"]
        if fk["address"] != "0x%x" % truth["address"] or not m or m["end"] != "0x%x" % truth["mapping_end"] or \
           m["where"] != "above" or fk["offset"] != 0x10 or m["file"] is not None:
            raise Failure("address %s, %s bytes from %s; the process read 0x%x, 0x10 past an anonymous mapping "
                          "ending at 0x%x" % (fk["address"], fk["offset"], m, truth["address"], truth["mapping_end"]))
        return "0x10 past %s anonymous" % m["permissions"]
    if kind == "sigbus-past-eof":
        m = fk["mapping"]
        path = os.path.join(work, "mapped")
        if not m or m["file"] != path or fk["offset"] != 8192 or fk["file_size"] != 0:
            raise Failure("mapping %s, offset %s, file size %s: the process read offset 8192 of %s, "
                          "truncated to 0 bytes" % (m, fk["offset"], fk["file_size"], path))
        return "offset 8192 of a 0-byte file"
    if kind == "illegal-instruction-anonymous":
        m = fk["mapping"]
        if fk["address"] != "0x%x" % truth["address"] or not m or m["file"] is not None or m["permissions"] != "rwx":
            raise Failure("address %s in %s; the process ran ud2 at 0x%x in an anonymous rwx page" % (
                fk["address"], m, truth["address"]))
        return "ud2 at the page's 0x40"
    if kind == "signal-sent":
        if fk["sender_pid"] != extra["pid"] or fk["sender_name"] is not None:
            raise Failure("sender %s (%s), the sender was pid %d" % (fk["sender_pid"], fk["sender_name"], extra["pid"]))
        return "sender %d" % extra["pid"]
    if kind == "abort":
        if fk["message"] is not None or fk["evidence"] not in ("siginfo", "stack"):
            raise Failure("abort with message %r, evidence %s" % (fk["message"], fk["evidence"]))
        return "abort, by %s" % fk["evidence"]
    if kind == "unrecorded":
        origin = (report["process"]["fault"] or {}).get("origin")
        if origin != "unrecorded" or fk["evidence"] != "none":
            raise Failure("unrecorded, yet the fault's origin is %s" % origin)
        return "unrecorded"
    if kind == "divide-by-zero":
        return "divide by zero"
    raise Failure("kind %s has no check" % kind)


def check_native_recursion(fk, truth, entered, report):
    """recurse() of the test's .so: without --native no frame repeats (the
    report has none of it); with it, recurse() as often as the process
    entered it (one more when the fault came in a call's prologue)."""
    if fk["recursion"] is not None:
        raise Failure("recursion %s without --native, where no frame repeats" % fk["recursion"])
    rc, out, err = cs.run_pycore(["analyze", "--format", "json", "--native", report["input"]["path"]])
    native = cs.load_report(out)["fault_kind"]
    rec = native and native["recursion"]
    if not rec or rec["kind"] != "native" or rec["function"] != truth["function"]:
        raise Failure("with --native: recursion %s, the process recursed in %s" % (rec, truth["function"]))
    # (the unwinder gives at most 1024 frames: past that, at least)
    if rec["count"] not in (entered, entered + 1) if not rec["at_least"] else rec["count"] > entered:
        raise Failure("with --native: %d calls of %s%s, the process entered %d" % (
            rec["count"], rec["function"], " at least" if rec["at_least"] else "", entered))
    return "%d calls of %s (the process entered %d) with --native" % (rec["count"], rec["function"], entered)


def one(name, mode, faulthandler):
    python = interpreters.path(name)
    if not python:
        raise Skip("%s is not on this machine" % name)
    if mode in ("overflow", "overflow-main") and name != "py3.10":
        raise Skip("a Python recursion overflows the C stack up to 3.10 only")
    work = tempfile.mkdtemp(prefix="pycore-faults-")
    try:
        core, truth, extra = crash(python, mode, faulthandler, work)
        rc, out, err = cs.run_pycore(["analyze", "--format", "json", core])
        if rc not in (0, 1):
            raise Failure("pycore exit %d: %s" % (rc, err.strip()))
        report = cs.load_report(out)
        fk = report["fault_kind"]
        allowed = CASES[mode][2 if faulthandler else 1]
        if fk is None or fk["kind"] not in allowed:
            raise Failure("fault kind %s, not %s (summary %r)" % (fk and fk["kind"], " or ".join(sorted(allowed)),
                                                                  report["summary"]["text"]))
        rc, text, err = cs.run_pycore(["analyze", core])
        lines = [line for line in text.splitlines() if line.startswith("Fault kind: ")]
        if lines != ["Fault kind: " + fk["text"]]:
            raise Failure("text %s, JSON %r" % (lines, fk["text"]))
        return "%s: %s" % (fk["kind"], check_evidence(mode, fk, truth, extra, report, work))
    finally:
        if os.environ.get("KEEP_CORES"):
            sys.stderr.write("# kept %s\n" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main():
    tap = TAP()
    for name in INTERPRETERS:
        for mode in CASES:
            for fh in (False, True):
                tap.run("%s %s%s" % (name, mode, " -X faulthandler" if fh else ""), one, name, mode, fh)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
