"""Minidumps: the same report from a full-memory minidump as from the ELF
core it was made from, an independent reader's view of pycore's converter,
an lldb-written stack-style minidump of a live process, and corrupt ones.

1. For every interpreter present: a gcore of each snapshot scenario and a
   kernel core of the crash scenario are converted by scripts/core2minidump;
   pycore's report of the minidump must equal the core's (interpreters,
   python, signal, crashed thread, native stacks) and match what the process
   recorded.
2. lldb-16 reads one converted minidump: its threads, their registers, the
   modules' build-ids and memory bytes must be what gdb shows of the core.
3. lldb-16 saves a stack-style minidump of a live CPython process: pycore's
   report lists every thread id (/proc/PID/task) and every module build-id
   (eu-unstrip -n -p PID) taken at the same moment, says what memory is
   missing, and exits 1.
4. Corrupt minidumps: directory past the end, a huge stream count, a memory
   range past the end, overlapping ranges: exit 4 and one line.
Exit 0 pass, 1 fail, 77 skip.
"""
import glob
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("check_stacks", os.path.join(HERE, "check-stacks.py"))
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)
CONVERT = os.path.join(cs.SRCDIR, "scripts", "core2minidump")
LLDB = shutil.which("lldb-16")


def convert(core, out):
    p = subprocess.run([sys.executable, CONVERT, core, out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise cs.Failure("core2minidump: %s" % p.stdout.decode()[-300:])


def report_of(path, ok=(0,)):
    rc, out, err = cs.run_pycore(["analyze", "--format", "json", path])
    if rc not in ok:
        raise cs.Failure("%s: exit %d: %s" % (os.path.basename(path), rc, err.strip()))
    return json.loads(out)


def same_report(core, dmp, truth, crashed):
    a, b = report_of(core), report_of(dmp)
    if b["input"]["format"] != "minidump":
        raise cs.Failure("input.format is %s" % b["input"]["format"])
    for key in ("interpreters", "python"):
        if a[key] != b[key]:
            raise cs.Failure("the minidump's %s differ from the core's" % key)
    for key in ("pid", "signal", "crashed_tid", "executable"):
        if a["process"][key] != b["process"][key]:
            raise cs.Failure("process.%s: core %s, minidump %s" % (key, a["process"][key], b["process"][key]))
    cs.compare(truth, b, crashed)
    # native stacks too: the same unwinder over either format
    n1 = cs.run_pycore(["analyze", "--format", "json", "--native", core])[1]
    n2 = cs.run_pycore(["analyze", "--format", "json", "--native", dmp])[1]
    if json.loads(n1)["interpreters"] != json.loads(n2)["interpreters"]:
        raise cs.Failure("--native: the minidump's stacks differ from the core's")


def lldb(dmp, commands):
    args = [LLDB, "-c", dmp, "-b"]
    for c in commands:
        args += ["-o", c]
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120).stdout.decode()


def gdb(python, core, commands):
    args = ["gdb", "-nx", "-batch"]
    for c in commands:
        args += ["-ex", c]
    return subprocess.run(args + [python, core], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          timeout=120).stdout.decode()


def independent_view(python, core, dmp):
    """lldb on the minidump against gdb on the core."""
    report = report_of(core)
    runtime = report["python"]["runtime_address"]
    out = lldb(dmp, ["thread list", "image list -u", "register read rip rsp rbp",
                     "memory read -s8 -fx -c4 %s" % runtime])
    g = gdb(python, core, ["info threads", "info registers rip rsp rbp", "x/4gx %s" % runtime])
    lldb_tids = sorted(int(t) for t in re.findall(r"tid = (\d+)", out))
    gdb_tids = sorted(set(int(t) for t in re.findall(r"LWP (\d+)", g)))
    if not lldb_tids or lldb_tids != gdb_tids:
        raise cs.Failure("threads: lldb %s, gdb %s" % (lldb_tids, gdb_tids))
    for reg in ("rip", "rsp", "rbp"):
        lv = re.search(r"%s = (0x[0-9a-f]+)" % reg, out)
        gv = re.search(r"^%s\s+(0x[0-9a-f]+)" % reg, g, re.M)
        if not lv or not gv or int(lv.group(1), 16) != int(gv.group(1), 16):
            raise cs.Failure("%s: lldb %s, gdb %s" % (reg, lv and lv.group(1), gv and gv.group(1)))
    lmem = [int(x, 16) for x in re.findall(r"0x[0-9a-f]{16}", out.split("memory read", 1)[1])[:4]]
    gmem = [int(x, 16) for x in re.findall(r"0x[0-9a-f]{16}", g.split("x/4gx", 1)[-1])[-4:]]
    gmem = [int(x, 16) for x in re.findall(r"\t(0x[0-9a-f]+)", g)][-4:]
    if lmem != gmem:
        raise cs.Failure("memory at %s: lldb %s, gdb %s" % (runtime, lmem, gmem))
    uuids = set(u.replace("-", "").lower() for u in re.findall(r"\] ([0-9A-F-]{20,})", out))
    want = set(m["build_id"] for m in report["process"]["modules"] if m["build_id"])
    if not want or want != set(u[:len(next(iter(want)))] for u in uuids) and want != uuids:
        raise cs.Failure("build-ids: lldb %s, the core %s" % (sorted(uuids), sorted(want)))


def live_stack_style(python, work):
    """lldb-16's stack-style minidump of a live process."""
    truth = os.path.join(work, "truth.json")
    proc = subprocess.Popen([python, os.path.join(cs.SCENARIOS, "threads.py"), truth],
                            stdout=subprocess.PIPE, cwd=work)
    try:
        if not cs.wait_ready(proc):
            raise cs.Failure("the scenario did not get ready")
        dmp = os.path.join(work, "live.dmp")
        tasks = sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid))
        unstrip = subprocess.run(["eu-unstrip", "-n", "-p", str(proc.pid)], stdout=subprocess.PIPE).stdout.decode()
        ids = set(l.split()[1].split("@")[0] for l in unstrip.splitlines() if len(l.split()) > 1)
        subprocess.run([LLDB, "-p", str(proc.pid), "-b", "-o",
                        "process save-core --plugin-name=minidump --style stack %s" % dmp],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    finally:
        proc.kill()
        proc.wait()
    if not os.path.exists(dmp):
        raise cs.Failure("lldb wrote no minidump")
    rc, out, err = cs.run_pycore(["analyze", "--format", "json", dmp])
    if rc != 1 or not out:
        raise cs.Failure("stack-style minidump: exit %d (want 1, a partial report): %s" % (rc, err.strip()))
    report = json.loads(out)
    if not report["warnings"] or not any("not in the dump" in w or "not captured" in w for w in report["warnings"]):
        raise cs.Failure("the report does not say what memory is missing: %s" % report["warnings"])
    mine_ids = set(m["build_id"] for m in report["process"]["modules"] if m["build_id"])
    missing = set(i for i in ids if i != "-" and not any(i.startswith(m) for m in mine_ids))
    if missing:
        raise cs.Failure("build-ids eu-unstrip saw but pycore did not: %s" % sorted(missing))
    if sorted(report["process"]["threads"]) != tasks:
        raise cs.Failure("threads %s, /proc/PID/task %s" % (sorted(report["process"]["threads"]), tasks))
    return report, tasks


def corrupt(dmp, work):
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
    failed = 0
    for label, blob in cases:
        path = os.path.join(work, "bad.dmp")
        open(path, "wb").write(blob)
        rc, out, err = cs.run_pycore(["analyze", path])
        if rc != 4 or err.count("\n") != 1 or "bad.dmp" not in err:
            print("FAIL: corrupt minidump, %s: exit %d, stderr %r" % (label, rc, err))
            failed += 1
        else:
            print("ok: corrupt minidump, %s: %s" % (label, err.strip()))
    return failed


def main():
    failed = 0
    ran = False
    pythons = []
    for path in sorted(glob.glob(os.path.join(HERE, "interpreters", "*.interp"))):
        m = sorted(glob.glob(open(path).read().strip()))
        name = os.path.basename(path)[:-7]
        if not m:
            print("SKIP: %s not installed" % name)
        else:
            pythons.append((name, m[-1]))
    if not pythons or not shutil.which("gcore"):
        print("SKIP: no interpreter or no gcore")
        return 77
    for name, python in pythons:
        for scenario in ("threads", "recursion", "genco", "exceptions", "gc", "crash"):
            work = tempfile.mkdtemp(prefix="pycore-md-")
            try:
                if scenario == "crash":
                    core, truth_path, why = cs.take_crash(python, work, ["crash.py"], cs.signal.SIGSEGV)
                    if why:
                        print("SKIP: %s crash: %s" % (name, why))
                        continue
                    crashed = cs.signal.SIGSEGV
                else:
                    core, truth_path = cs.take_gcore(python, scenario, work)
                    crashed = None
                truth = json.load(open(truth_path))
                dmp = os.path.join(work, "core.dmp")
                convert(core, dmp)
                same_report(core, dmp, truth, crashed)
                ran = True
                print("ok: %s %s: the minidump's report is the core's" % (name, scenario))
                if name == "py3.12" and scenario == "threads":
                    if LLDB:
                        independent_view(python, core, dmp)
                        print("ok: lldb-16 reads the converted minidump as gdb reads the core")
                    else:
                        print("SKIP: the converter against lldb: lldb-16 not installed")
                    failed += corrupt(dmp, work)
                    if LLDB:
                        live_stack_style(python, work)
                        print("ok: lldb-16's stack-style minidump of a live process: a partial report, "
                              "every module build-id")
                    else:
                        print("SKIP: stack-style minidumps: lldb-16 not installed")
            except cs.Failure as e:
                failed += 1
                print("FAIL: %s %s: %s" % (name, scenario, e))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    if not ran and not failed:
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
