"""Breakpad's tools (scripts/breakpad builds them) and the checks of a
stack-only minidump built on them: the stream directory, symbol files,
minidump_stackwalk's stacks against pycore's, the partial report such a
dump gives.  check-breakpad.py and check-crashpad.py share these."""
import os
import re
import struct
import subprocess

from .compare import version_of
from .env import SRCDIR, scaled
from .native import EVAL, debug_args
from .run import run_pycore
from .schema import load_report
from .tap import Failure, Skip


FRAME_LINE = re.compile(r"^ ?\d+  \S")   # " 9  libc.so.6!f + 0x1", "10  ..."; registers are indented


def tools_dir():
    """The directory of Breakpad's tools (scripts/breakpad builds them
    once), or raise Skip saying why not."""
    p = subprocess.run([os.path.join(SRCDIR, "scripts", "breakpad")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=scaled(1800))
    if p.returncode != 0:
        raise Skip(p.stderr.decode("utf-8", "replace").strip() or "scripts/breakpad failed")
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


def md_module_names(path):
    """The paths of the minidump's module list, in its order (read here:
    MDRawModule is 108 bytes, its name's RVA at 20; an MDString is a
    32-bit byte count and UTF-16LE)."""
    d = open(path, "rb").read()
    for t, _, r in md_directory(d):
        if t == 4:
            count, = struct.unpack_from("<I", d, r)
            names = []
            for k in range(count):
                rva, = struct.unpack_from("<I", d, r + 4 + 108 * k + 20)
                size, = struct.unpack_from("<I", d, rva)
                names.append(d[rva + 4:rva + 4 + size].decode("utf-16-le"))
            return names
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
                           timeout=scaled(300))
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
                       stderr=subprocess.DEVNULL, timeout=scaled(300))
    if p.returncode != 0:
        raise Failure("minidump_stackwalk failed (exit %d)" % p.returncode)
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
    """pycore's native frames of a thread without its inlined calls and
    the tail calls it infers (no stack frame holds them: a stack walker
    finds neither): (module file name, pc)."""
    return [(os.path.basename(f["file"]) if f["file"] else None, int(f["address"], 16))
            for f in thread["frames"] if f["kind"] == "native" and not f["inlined"] and not f.get("tail_call")]


def same_as_stackwalk(label, thread, theirs):
    walked = []
    for module, pc, how in theirs:
        if how is None or "scanning" in how or module is None:
            break   # a guess, or past the outermost frame (_start's return address is undefined)
        walked.append((module, pc))
    mine = physical(thread)
    if len(walked) < 2 or mine[:len(walked)] != walked:
        raise Failure("%s: native frames\n  pycore             %s\n  minidump_stackwalk %s"
                         % (label, [(m, hex(pc)) for m, pc in mine], [(m, hex(pc)) for m, pc in walked]))
    return len(walked)


def check_version(report, truth):
    """The version the process recorded, read from the interpreter's file
    (Py_Version from 3.11, PY_VERSION's string before)."""
    want = version_of(truth)
    if report["python"] is None or report["python"]["version"] != want:
        raise Failure("version %s, the process says %s (warnings: %s)"
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
        raise Failure("minidump_stackwalk shows %d threads, the dump lists %d" % (len(walked), len(order)))
    return sum(same_as_stackwalk("thread %d" % tid, threads[tid], theirs) for tid, theirs in zip(order, walked))


def partial_report(target, dmp, truth, setting, words):
    """pycore --native's JSON report of a stack-only dump: exit 1, one
    line saying the Python state is not in the dump that holds every one
    of WORDS (what it says of the producer's SETTING), and the version the
    process recorded."""
    rc, out, err = run_pycore(["analyze", "--format", "json", "--native"] + target.pycore_args() +
                                 debug_args(target) + [dmp])
    if not out:
        raise Failure("pycore exit %d, no report: %s" % (rc, err.strip()))
    report = load_report(out)
    if rc != 1:
        raise Failure("exit %d (want 1, a partial report): %s" % (rc, report["warnings"]))
    lines = [w for w in report["warnings"] if "the Python state is not in the dump" in w]
    if len(lines) != 1 or not all(w in lines[0] for w in words):
        raise Failure("want one line saying the Python state is missing and %s: %s"
                         % (setting, report["warnings"]))
    check_version(report, truth)
    return report


def eval_loop_in_each(threads):
    """Every native thread has a frame of the interpreter's eval loop."""
    for t in threads:
        if not any(f["function"] and f["function"].startswith(EVAL) for f in t["frames"]):
            raise Failure("thread %s: no eval loop frame named: %s" % (t["tid"], [f["function"] for f in t["frames"]]))
