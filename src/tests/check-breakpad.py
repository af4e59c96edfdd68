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

For every interpreter of src/tests/interpreters/ present (Debian
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
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tap import load_script  # noqa: E402

cs = load_script("check_stacks", os.path.join(HERE, "check-stacks.py"))
cn = load_script("check_native", os.path.join(HERE, "check-native.py"))
FRAME_LINE = re.compile(r"^ ?\d+  \S")   # " 9  libc.so.6!f + 0x1", "10  ..."; registers are indented
PROC_FILES = ("auxv", "cmdline", "environ", "maps", "status")


def breakpad():
    """The directory of Breakpad's tools (scripts/breakpad builds them
    once), or raise Skip saying why not."""
    p = subprocess.run([os.path.join(cs.SRCDIR, "scripts", "breakpad")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1800)
    if p.returncode != 0:
        raise cs.Skip(p.stderr.decode("utf-8", "replace").strip() or "scripts/breakpad failed")
    return os.path.join(p.stdout.decode().strip(), "bin")


def md_directory(d):
    """The minidump's stream directory (read here, not by pycore): (type,
    size, RVA) each."""
    n, rva = struct.unpack_from("<II", d, 8)
    return [struct.unpack_from("<III", d, rva + 12 * i) for i in range(n)]


def md_thread_ids(path):
    """The thread ids of the minidump's thread list, in its order:
    minidump_stackwalk numbers threads by it."""
    d = open(path, "rb").read()
    for t, _, r in md_directory(d):
        if t == 3:
            count, = struct.unpack_from("<I", d, r)
            return [struct.unpack_from("<I", d, r + 4 + 48 * k)[0] for k in range(count)]
    return []


class Symbols:
    """Symbol files for minidump_stackwalk, made by dump_syms from the
    files pycore read (one per build-id, shared by every dump)."""

    def __init__(self, bindir, root):
        self.dump_syms = os.path.join(bindir, "dump_syms")
        self.root = root
        self.done = set()

    def add(self, path):
        if path in self.done:
            return
        self.done.add(path)
        p = subprocess.run([self.dump_syms, path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=300)
        first = p.stdout.split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if p.returncode != 0 or len(first) != 5 or first[0] != "MODULE":
            return  # not an ELF file dump_syms reads: stackwalk scans there, and the compare stops
        d = os.path.join(self.root, first[4], first[3])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, first[4] + ".sym"), "wb") as f:
            f.write(p.stdout)


def stackwalk(bindir, dmp, symroot):
    """minidump_stackwalk's threads, in the dump's order: each a list of
    (module file name, pc, how it was found), innermost first."""
    p = subprocess.run([os.path.join(bindir, "minidump_stackwalk"), dmp, symroot], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, timeout=300)
    if p.returncode != 0:
        raise cs.Failure("minidump_stackwalk failed (exit %d)" % p.returncode)
    threads, frame = [], None
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        words = line.split()
        if line.startswith("Thread "):
            threads.append([])
            frame = None
        elif threads and FRAME_LINE.match(line):
            name = words[1].split("!")[0]
            frame = [name if not name.startswith("0x") else None, None, None]
            threads[-1].append(frame)
        elif frame is not None and "rip = " in line:
            frame[1] = int(line.split("rip = ")[1].split()[0], 16)
        elif frame is not None and line.strip().startswith("Found by:"):
            frame[2] = line.split("Found by:")[1].strip()
    return [[tuple(f) for f in t] for t in threads]


def physical(thread):
    """pycore's native frames of a thread without its inlined calls:
    (module file name, pc)."""
    return [(os.path.basename(f["file"]) if f["file"] else None, int(f["address"], 16))
            for f in thread["frames"] if f["kind"] == "native" and not f["inlined"]]


def same_as_stackwalk(label, thread, theirs):
    walked = []
    for module, pc, how in theirs:
        if how is None or "scanning" in how or module is None:
            break   # a guess, or past the outermost frame (_start's return address is undefined)
        walked.append((module, pc))
    mine = physical(thread)
    if len(walked) < 2 or mine[:len(walked)] != walked:
        raise cs.Failure("%s: native frames\n  pycore             %s\n  minidump_stackwalk %s"
                         % (label, [(m, hex(pc)) for m, pc in mine], [(m, hex(pc)) for m, pc in walked]))
    return len(walked)


def check_version(report, truth):
    """The version the process recorded, read from the interpreter's file
    (Py_Version from 3.11, PY_VERSION's string before)."""
    want = cs.version_of(truth)
    if report["python"] is None or report["python"]["version"] != want:
        raise cs.Failure("version %s, the process says %s (warnings: %s)"
                         % (report["python"] and report["python"]["version"], want, report["warnings"]))


def walk_all(bindir, symbols, report, dmp):
    """Every thread's native stack of the report, frame for frame
    minidump_stackwalk's; the number of frames compared."""
    threads = {t["tid"]: t for t in report["native_threads"]}
    for m in report["process"]["modules"]:
        if m["file"]:
            symbols.add(m["file"])
    walked = stackwalk(bindir, dmp, symbols.root)
    order = md_thread_ids(dmp)
    if len(walked) != len(order):
        raise cs.Failure("minidump_stackwalk shows %d threads, the dump lists %d" % (len(walked), len(order)))
    return sum(same_as_stackwalk("thread %d" % tid, threads[tid], theirs) for tid, theirs in zip(order, walked))


def partial_report(target, dmp, truth, setting, words):
    """pycore --native's JSON report of a stack-only dump: exit 1, one
    line saying the Python state is not in the dump that holds every one
    of WORDS (what it says of the producer's SETTING), and the version the
    process recorded."""
    rc, out, err = cs.run_pycore(["analyze", "--format", "json", "--native"] + target.pycore_args() +
                                 cn.debug_args(target) + [dmp])
    if not out:
        raise cs.Failure("pycore exit %d, no report: %s" % (rc, err.strip()))
    report = cs.load_report(out)
    if rc != 1:
        raise cs.Failure("exit %d (want 1, a partial report): %s" % (rc, report["warnings"]))
    lines = [w for w in report["warnings"] if "the Python state is not in the dump" in w]
    if len(lines) != 1 or not all(w in lines[0] for w in words):
        raise cs.Failure("want one line saying the Python state is missing and %s: %s"
                         % (setting, report["warnings"]))
    check_version(report, truth)
    return report


def eval_loop_in_each(threads):
    """Every native thread has a frame of the interpreter's eval loop."""
    for t in threads:
        if not any(f["function"] and f["function"].startswith(cn.EVAL) for f in t["frames"]):
            raise cs.Failure("thread %s: no eval loop frame named: %s" % (t["tid"], [f["function"] for f in t["frames"]]))


def check_dump(bindir, symbols, target, dmp, truth, tids, argv, sig):
    report = partial_report(target, dmp, truth, "naming Breakpad's RegisterAppMemory", ["RegisterAppMemory"])
    proc = report["process"]
    for key in ("pid", "ppid", "uid", "gid"):
        if proc[key] != truth[key]:
            raise cs.Failure("%s %s, the process says %s" % (key, proc[key], truth[key]))
    if proc["argv"] != argv:
        raise cs.Failure("argv %s, the process was started with %s" % (proc["argv"], argv))
    got_sig = proc["signal"]["name"] if proc["signal"] else None
    if got_sig != sig or (proc["signal"] and proc["signal"]["number"] != getattr(signal, sig)):
        raise cs.Failure("signal %s, the process got %s" % (got_sig, sig))
    threads = {t["tid"]: t for t in report["native_threads"]}
    if sorted(threads) != sorted(tids):
        raise cs.Failure("native_threads %s, the process had %s" % (sorted(threads), sorted(tids)))
    eval_loop_in_each(threads.values())
    frames = walk_all(bindir, symbols, report, dmp)
    return "%d threads, %d frames as minidump_stackwalk's" % (len(threads), frames)


def produce(bindir, target, work):
    """threads.py's dumps: pid2md's of the live process, core2md's of its
    core.  Returns (truth, tids, argv, {name: (dump, signal name) or why
    not})."""
    truth_path = os.path.join(work, "truth.json")
    argv = [target.exe, target.scenario(work, "threads.py"), target.inside(truth_path)]
    pattern, why_no_kernel_core = cs.kernel_core_usable()

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    proc = target.popen(argv[1:], work, preexec=unlimited, stdout=subprocess.PIPE)
    dumps = {}
    try:
        if not cs.wait_ready(proc):
            raise cs.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        time.sleep(0.5)   # READY comes just before its last blocking call
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % proc.pid))
        live = os.path.join(work, "pid2md.dmp")
        p = subprocess.run([os.path.join(bindir, "pid2md"), str(proc.pid), live], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        dumps["pid2md"] = (live, None) if p.returncode == 0 and os.path.exists(live) else \
            "pid2md failed: %s" % p.stdout.decode("utf-8", "replace").strip()[-300:]
        os.kill(proc.pid, signal.SIGSTOP)
        for _ in range(100):
            if open("/proc/%d/stat" % proc.pid).read().rsplit(")", 1)[1].split()[0] == "T":
                break
            time.sleep(0.05)
        procdir = os.path.join(work, "proc")
        os.mkdir(procdir)
        for f in PROC_FILES:
            with open("/proc/%d/%s" % (proc.pid, f), "rb") as src, open(os.path.join(procdir, f), "wb") as dst:
                dst.write(src.read())
        if not why_no_kernel_core:
            os.kill(proc.pid, signal.SIGQUIT)
            os.kill(proc.pid, signal.SIGCONT)
            proc.communicate(timeout=60)
            core, sig = cs.kernel_core_path(pattern, proc.pid, work), "SIGQUIT"
        elif not target.root:
            g = subprocess.run(["gcore", "-o", os.path.join(work, "core"), str(proc.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
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
                               stderr=subprocess.STDOUT, timeout=120)
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
    entries = md_directory(d)
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
    rc, text, err = cs.run_pycore(["analyze", "--format", "json", out])
    if not text:
        raise cs.Failure("pycore exit %d, no report: %s" % (rc, err.strip()))
    return cs.load_report(text), module if mcount else None


def check_crashpad_cap(dmp, work):
    """More annotations than pycore keeps (4096): the first 4096, and one
    warning that the rest were not read."""
    report, _ = with_crashpad(dmp, os.path.join(work, "crashpad-flood.dmp"), flood=5000)
    got = report["input"]["annotations"]
    if len(got) != 4096 or got[2] != {"module": None, "name": "k0", "value": "v"}:
        raise cs.Failure("%d annotations kept, the third %s" % (len(got), got[2:3]))
    if sum("annotations are too many" in w for w in report["warnings"]) != 1:
        raise cs.Failure("want one warning that annotations were left out: %s" % report["warnings"])


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
        raise cs.Failure("annotations\n  pycore %s\n  want   %s" % (report["input"]["annotations"], want))
    lines = [w for w in report["warnings"] if "the Python state is not in the dump" in w]
    if len(lines) != 1 or "gather_indirectly_referenced_memory" not in lines[0]:
        raise cs.Failure("want one line naming Crashpad's setting: %s" % report["warnings"])
    rc, text, err = cs.run_pycore(["analyze", out])
    shown = text.split("\nAnnotations:\n", 1)[-1].split("\n\n", 1)[0].splitlines()
    want_text = ["  " + (a["module"] + ": " if a["module"] else "") + (a["name"] + " = " if a["name"] else "") +
                 (a["value"] if a["value"] is not None else "(not text)") for a in want]
    if shown != want_text:
        raise cs.Failure("text report's annotations\n  pycore %s\n  want   %s" % (shown, want_text))
    return "%d annotations" % len(want)


def main():
    tap = cs.TAP()
    try:
        bindir = breakpad()
    except cs.Skip as why:
        tap.skip("Breakpad's tools", why)
        return tap.done()
    symroot = tempfile.mkdtemp(prefix="pycore-breakpad-syms-")
    parser_dump = None
    try:
        for path in sorted(os.listdir(os.path.join(HERE, "interpreters"))):
            name = path[:-len(".interp")]
            if sys.argv[1:] and name not in sys.argv[1:]:
                continue
            target, why = cs.interpreter(os.path.join(HERE, "interpreters", path))
            if not why and not target.root and not shutil.which("gcore") and cs.kernel_core_usable()[1]:
                why = "neither the kernel's cores nor gcore can be had"
            if why:
                for producer in ("pid2md", "core2md"):
                    tap.skip("%s %s" % (name, producer), why)
                continue
            symbols = Symbols(bindir, symroot)
            work = target.workdir("pycore-breakpad-%s-" % name)
            try:
                try:
                    truth, tids, argv, dumps = produce(bindir, target, work)
                except cs.Failure as e:
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
                if os.environ.get("KEEP_CORES") == "1":
                    tap.diag("kept in %s" % work)
                else:
                    shutil.rmtree(work, ignore_errors=True)
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
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
