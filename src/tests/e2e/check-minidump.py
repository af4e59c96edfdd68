"""Minidumps: the same report from a full-memory minidump as from the ELF
core it was made from, an independent reader's view of pycore's converter,
lldb-written minidumps of a live process, and corrupt ones.

1. For one interpreter of each frame walker present
   (pycoretest.interpreters.feature_names(); every one with
   PYCORE_ALL_INTERPRETERS=1; Debian unstable's in their root, read with
   --sysroot): a snapshot of each
   scenario below (gcore's; the kernel's, by SIGQUIT, in the root) and a
   kernel core of the crash scenario are converted by scripts/core2minidump;
   pycore's report of the minidump must equal the core's (interpreters,
   python, signal, crashed thread, native stacks) and match what the process
   recorded.
2. lldb reads one converted minidump: its threads, their registers, the
   modules' build-ids and memory bytes must be what gdb shows of the core.
3. lldb saves minidumps of a live CPython process.  Stack style: pycore's
   report lists every thread id (/proc/PID/task) and every module build-id
   (eu-unstrip -n -p PID) taken at the same moment, says what memory is
   missing, and exits 1.  Modified-memory and full styles (lldb 19 and
   later; lldb-16 writes only the stack style): a complete report whose
   stacks are what the process recorded.
4. Corrupt minidumps: directory past the end, a huge stream count, a memory
   range past the end, overlapping ranges: exit 4 and one line.
lldb is $LLDB, else lldb-19, else lldb-16.  Output: TAP, one line per case.
"""
import json
import os
import signal
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.minidump import LLDB, LLDB_NAME, LLDB_VERSION, need_lldb, save_minidump
from pycoretest.env import scaled
CONVERT = os.path.join(pt.SRCDIR, "scripts", "core2minidump")
SNAPSHOTS = ("threads", "recursion", "genco", "exceptions", "gc")


def convert(core, out):
    p = subprocess.run([sys.executable, CONVERT, core, out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise pt.Failure("core2minidump: %s" % p.stdout.decode()[-300:])


def report_of(path, args=(), ok=(0,)):
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + list(args) + [path])
    if rc not in ok:
        raise pt.Failure("%s: exit %d: %s" % (os.path.basename(path), rc, err.strip()))
    return pt.load_report(out)


def without_waits(interps, core_interps=None):
    """INTERPS with the threads' waiting_on taken out.  A minidump has no
    syscall registers (orig_rax), so it names only the waits its frames
    prove: with CORE_INTERPS, each one it names must be the core's."""
    out = json.loads(json.dumps(interps))
    for i, interp in enumerate(out):
        for k, t in enumerate(interp["threads"]):
            w = t.pop("waiting_on")
            if core_interps is not None and w is not None and w != core_interps[i]["threads"][k]["waiting_on"]:
                raise pt.Failure("thread %s: the minidump says it waits on %s, the core %s"
                                 % (t["tid"], w, core_interps[i]["threads"][k]["waiting_on"]))
    return out


def same_report(target, core, dmp, truth, crashed, snap_signal):
    args = target.pycore_args()
    a, b = report_of(core, args), report_of(dmp, args)
    if b["input"]["format"] != "minidump":
        raise pt.Failure("input.format is %s" % b["input"]["format"])
    if without_waits(a["interpreters"]) != without_waits(b["interpreters"], a["interpreters"]):
        raise pt.Failure("the minidump's interpreters differ from the core's")
    if a["python"] != b["python"]:
        raise pt.Failure("the minidump's python differ from the core's")
    for key in ("pid", "signal", "crashed_tid", "executable"):
        if a["process"][key] != b["process"][key]:
            raise pt.Failure("process.%s: core %s, minidump %s" % (key, a["process"][key], b["process"][key]))
    pt.compare(truth, b, crashed, snap_signal)
    # native stacks too: the same unwinder over either format
    n1 = report_of(core, ["--native"] + args, ok=(0, 1))
    n2 = report_of(dmp, ["--native"] + args, ok=(0, 1))
    if without_waits(n1["interpreters"]) != without_waits(n2["interpreters"], n1["interpreters"]):
        raise pt.Failure("--native: the minidump's stacks differ from the core's")


def lldb(dmp, commands):
    args = [LLDB, "-c", dmp, "-b"]
    for c in commands:
        args += ["-o", c]
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120)).stdout.decode()


def gdb(python, core, commands):
    args = ["gdb", "-nx", "-batch"]
    for c in commands:
        args += ["-ex", c]
    return subprocess.run(args + [python, core], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          timeout=scaled(120)).stdout.decode()


def independent_view(python, core, dmp):
    """lldb on the minidump against gdb on the core."""
    need_lldb()
    if not shutil.which("gdb"):
        raise pt.Skip("gdb not installed (Debian package gdb)")
    report = report_of(core)
    runtime = report["python"]["runtime_address"]
    out = lldb(dmp, ["thread list", "image list -u", "register read rip rsp rbp",
                     "memory read -s8 -fx -c4 %s" % runtime])
    g = gdb(python, core, ["info threads", "info registers rip rsp rbp", "x/4gx %s" % runtime])
    lldb_tids = sorted(int(t) for t in re.findall(r"tid = (\d+)", out))
    gdb_tids = sorted(set(int(t) for t in re.findall(r"LWP (\d+)", g)))
    if not lldb_tids or lldb_tids != gdb_tids:
        raise pt.Failure("threads: lldb %s, gdb %s" % (lldb_tids, gdb_tids))
    for reg in ("rip", "rsp", "rbp"):
        lv = re.search(r"%s = (0x[0-9a-f]+)" % reg, out)
        gv = re.search(r"^%s\s+(0x[0-9a-f]+)" % reg, g, re.M)
        if not lv or not gv or int(lv.group(1), 16) != int(gv.group(1), 16):
            raise pt.Failure("%s: lldb %s, gdb %s" % (reg, lv and lv.group(1), gv and gv.group(1)))
    if "memory read" not in out:
        raise pt.Failure("lldb did not read memory: %s" % out[-500:])
    lmem = [int(x, 16) for x in re.findall(r"0x[0-9a-f]{16}", out.split("memory read", 1)[1])[:4]]
    gmem = [int(x, 16) for x in re.findall(r"\t(0x[0-9a-f]+)", g)][-4:]
    if lmem != gmem:
        raise pt.Failure("memory at %s: lldb %s, gdb %s" % (runtime, lmem, gmem))
    uuids = set(u.replace("-", "").lower() for u in re.findall(r"\] ([0-9A-F-]{20,})", out))
    want = set(m["build_id"] for m in report["process"]["modules"] if m["build_id"])
    if not want or want != set(u[:len(next(iter(want)))] for u in uuids) and want != uuids:
        raise pt.Failure("build-ids: lldb %s, the core %s" % (sorted(uuids), sorted(want)))
    return "%d threads, registers, memory and %d build-ids" % (len(lldb_tids), len(want))


def live_minidump(python, style):
    """lldb's minidump of STYLE of a live process running the threads
    scenario."""
    need_lldb()
    if style != "stack" and LLDB_VERSION < 19:
        raise pt.Skip("%s writes only stack-style minidumps (lldb 19 writes %s ones)" % (LLDB_NAME, style))
    if style == "stack" and not shutil.which("eu-unstrip"):
        raise pt.Skip("eu-unstrip not installed (Debian package elfutils)")
    work = tempfile.mkdtemp(prefix="pycore-md-live-")
    try:
        return live_minidump_in(python, style, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def live_minidump_in(python, style, work):
    truth_path = os.path.join(work, "truth.json")
    dmp = os.path.join(work, "live.dmp")
    proc = subprocess.Popen([python, os.path.join(pt.SCENARIOS, "threads.py"), truth_path],
                            stdout=subprocess.PIPE, cwd=work)
    try:
        if not pt.wait_ready(proc):
            raise pt.Failure("the scenario did not get ready")
        tasks = sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid))
        ids = set()
        if style == "stack":
            unstrip = subprocess.run(["eu-unstrip", "-n", "-p", str(proc.pid)],
                                     stdout=subprocess.PIPE).stdout.decode()
            ids = set(l.split()[1].split("@")[0] for l in unstrip.splitlines() if len(l.split()) > 1)
        saved = save_minidump(proc.pid, style, dmp)
    finally:
        proc.kill()
        proc.wait()
    if not os.path.exists(dmp):
        raise pt.Failure("%s wrote no minidump: %s" % (LLDB_NAME, saved.decode("utf-8", "replace")[-400:]))
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", dmp])
    if style != "stack":
        # every byte the walk needs is in it: a complete report, the
        # process's own stacks; lldb stops the process to save it
        if rc != 0:
            raise pt.Failure("%s-style minidump: exit %d: %s" % (style, rc, err.strip()))
        report = pt.load_report(out)
        truth = json.load(open(truth_path))
        sig = report["process"]["signal"]
        pt.compare(truth, report, None, sig["number"] if sig else None)
        if sorted(report["process"]["threads"]) != tasks:
            raise pt.Failure("threads %s, /proc/PID/task %s" % (sorted(report["process"]["threads"]), tasks))
        return "%d threads, every stack the process's own" % len(truth["threads"])
    if rc != 1 or not out:
        raise pt.Failure("stack-style minidump: exit %d (want 1, a partial report): %s" % (rc, err.strip()))
    report = pt.load_report(out)
    if not report["warnings"] or not any("not in the dump" in w or "not captured" in w for w in report["warnings"]):
        raise pt.Failure("the report does not say what memory is missing: %s" % report["warnings"])
    mine_ids = set(m["build_id"] for m in report["process"]["modules"] if m["build_id"])
    missing = set(i for i in ids if i != "-" and not any(i.startswith(m) for m in mine_ids))
    if missing:
        raise pt.Failure("build-ids eu-unstrip saw but pycore did not: %s" % sorted(missing))
    if sorted(report["process"]["threads"]) != tasks:
        raise pt.Failure("threads %s, /proc/PID/task %s" % (sorted(report["process"]["threads"]), tasks))
    return "a partial report, every thread and module build-id"


def corrupt_cases(dmp):
    """(label, bytes) of each corruption of the minidump DMP."""
    data = bytearray(open(dmp, "rb").read())
    nstreams, dir_rva = struct.unpack_from("<II", data, 8)
    cases = []
    d = bytearray(data)
    struct.pack_into("<I", d, 12, len(d) + 4096)
    cases.append(("directory past the end", d))
    d = bytearray(data)
    struct.pack_into("<I", d, 8, 0x7fffffff)
    cases.append(("a huge stream count", d))
    for i in range(nstreams):
        stype, size, rva = struct.unpack_from("<III", data, dir_rva + 12 * i)
        if stype == 9:
            count, base = struct.unpack_from("<QQ", data, rva)
            d = bytearray(data)
            struct.pack_into("<Q", d, rva + 16 + 8, 1 << 40)     # first range's size
            cases.append(("a memory range past the end", d))
            if count >= 2:
                d = bytearray(data)
                first, = struct.unpack_from("<Q", data, rva + 16)
                struct.pack_into("<Q", d, rva + 32, first)       # second range starts where the first does
                cases.append(("overlapping memory ranges", d))
    return cases


CORRUPT = ("directory past the end", "a huge stream count", "a memory range past the end",
           "overlapping memory ranges")


def check_corrupt(blob, work):
    path = os.path.join(work, "bad.dmp")
    open(path, "wb").write(blob)
    rc, out, err = pt.run_pycore(["analyze", path])
    if rc != 4 or err.count("\n") != 1 or "bad.dmp" not in err:
        raise pt.Failure("exit %d, stderr %r; want 4 and one line naming the file" % (rc, err))
    return err.strip()


def take(target, scenario, work):
    """A core of SCENARIO: (core, truth, crashed signal, snapshot signal)."""
    if scenario == "crash":
        core, truth_path = pt.take_crash(target, work, ["crash.py"], signal.SIGSEGV)
        return core, json.load(open(truth_path)), signal.SIGSEGV, None
    core, truth_path, snap_signal = pt.take_snapshot(target, scenario, work)
    return core, json.load(open(truth_path)), None, snap_signal


def main():
    tap = pt.TAP()
    extras = ["%s reads the converted minidump as gdb reads the core" % LLDB_NAME] + \
        ["corrupt minidump: %s" % c for c in CORRUPT] + \
        ["%s's %s-style minidump of a live process" % (LLDB_NAME, s) for s in ("stack", "modified-memory", "full")]
    for name in interpreters.feature_names():
        target, why = interpreters.find(name)
        if not why and not target.root and not shutil.which("gcore"):
            why = "gcore not installed (Debian package gdb)"
        for scenario in SNAPSHOTS + ("crash",):
            label = "%s %s: the minidump's report is the core's" % (name, scenario)
            if why:
                tap.skip(label, why)
                continue
            work = target.workdir("pycore-md-%s-%s-" % (name, scenario))
            try:
                got = {}

                def one():
                    core, truth, crashed, snap_signal = take(target, scenario, work)
                    dmp = os.path.join(work, "core.dmp")
                    convert(core, dmp)
                    same_report(target, core, dmp, truth, crashed, snap_signal)
                    got.update(core=core, dmp=dmp)
                tap.run(label, one)
                if name != "py3.12" or scenario != "threads":
                    continue
                # the converter against lldb, corrupt minidumps and lldb's
                # own minidumps, once, with pyenv's 3.12
                if "dmp" not in got:
                    for extra in extras:
                        tap.skip("py3.12: " + extra, "the threads scenario failed")
                    continue
                tap.run("py3.12: " + extras[0], independent_view, target.exe, got["core"], got["dmp"])
                cases = dict(corrupt_cases(got["dmp"]))
                for c in CORRUPT:
                    if c in cases:
                        tap.run("py3.12: corrupt minidump: " + c, check_corrupt, cases[c], work)
                    else:
                        tap.skip("py3.12: corrupt minidump: " + c, "the converted minidump has one memory range")
                for style in ("stack", "modified-memory", "full"):
                    tap.run("py3.12: %s's %s-style minidump of a live process" % (LLDB_NAME, style),
                            live_minidump, target.exe, style)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        if name == "py3.12" and why:
            for extra in extras:
                tap.skip("py3.12: " + extra, why)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
