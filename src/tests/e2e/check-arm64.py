"""Real arm64 kernel cores and gcores, made on this machine by an arm64
Debian virtual machine (issue 26), read here.

scripts/arm64-vm builds once per machine, in ~/.cache/pycore/arm64/, a
Debian arm64 root (bookworm's python3.11 and its -dbg, libc6-dbg, gdb;
sid's python3.13, 3.14 and 3.15 too where that root is built), Debian's arm64
kernel and a busybox initramfs, and boots them under qemu-system-aarch64
(TCG, no KVM: about a minute).  The machine's PID 1 is this test's own
init (src/tests/e2e/arm64-init.sh): it runs scenarios of src/tests/e2e/scenarios/
that record their own truth (sys._current_frames(), locals' repr(),
thread ids) and crash (SIGSEGV in C), block (a gcore by the machine's gdb;
kill -ABRT: the kernel's core), run asyncio tasks or recurse deeply, then
powers off; the cores and truth files come out of its disk with debugfs.
The last run's are kept in ~/.cache/pycore/arm64/cores/SUITE/ (NAME.core,
NAME.truth.json, results, facts) for whoever works on aarch64 support.

Per case, TAP lines:
- the machine made the core and the truth (the status each way expects);
- the core's notes: per thread NT_PRSTATUS (392 bytes, pr_pid the thread
  ids the process recorded), NT_FPREGSET, NT_ARM_TLS, NT_ARM_PAC_MASK, and
  once NT_PRPSINFO, NT_SIGINFO, NT_AUXV, NT_FILE; the thread pointer
  (NT_ARM_TLS) minus sizeof(struct pthread) plus its tid offset (glibc's
  arm64 layout, src/tests/e2e/arm64-facts.txt) holds each thread's id;
- gdb-multiarch (set sysroot ROOT) unwinds every thread to its start and
  the crashing one from strlen: the native-stack reference;
- pycore's report, read here on x86-64 (--sysroot the arm64 root),
  against the process's truth (threads, frames, locals, asyncio tasks,
  the signal, its fault address or sender, the crashed thread; the fault
  behind faulthandler's re-raise, read from its signal frame's ESR record,
  fingerprinting as the same crash without faulthandler), and its
  native stacks against gdb-multiarch's, frame for frame and inlined call
  for inlined call, PAC bits stripped, through the kernel's signal frame
  (gdb's tail-call frames aside: inferred from DWARF call-site entries,
  no unwinder of pycore's kind sees them);
- pycore heap of a kernel core of scenarios/heap.py (the suite's last
  Python), against the census the process took: every type's count and
  bytes, the untracked objects reached, the retained sizes of its named
  containers with their paths, the garbage, the dominator tree
  (pycoretest.heap, check-heap.py's comparisons);
- a thread of the suite's last Python called back into Python through
  hand-written assembly without CFI (scenarios/nocfi.S, built here for
  arm64 with Debian's cross compiler): pycore --native-all goes on past
  it, to the return address the function recorded, found by its frame
  record or by a scan and marked so in JSON, text and HTML, the Python
  frames woven on both sides of it;
- pycore built as an arm64 program (scripts/arm64-cross: Debian's cross
  compiler against an arm64 bookworm tree of pycore's -dev libraries),
  run under qemu-aarch64-static on the same core with the same --sysroot
  files: its JSON reports (and text, of the suite's last Python's cores),
  exit status and standard error equal this machine's pycore's, byte for
  byte (the report holds no timing).  It is
  run through the tree's own loader (ld-linux-aarch64.so.1
  --library-path), not qemu's -L, which would show it the tree's files at
  the paths the dump records (/usr/lib/aarch64-linux-gnu/libc.so.6) where
  this machine's pycore finds none: pycore would then rightly say
  "recorded" where the other says "sysroot";
- the same arm64 build inside the arm64 machine (arm64-init.sh, after
  the scenarios), on the cores of the suite's last Python, in a chroot
  holding the root's files at the --sysroot path used here: its JSON
  reports equal this machine's pycore's, byte for byte;
- per suite, pycore batch over its cores: the arm64 build's JSONL the
  same (its summary line's time and rate on standard error aside), and
  once testdata's x86-64 sample core read by the arm64 build: the same
  reports.
Where qemu-system-aarch64 or the cache (root once, to build it) is
missing, every case is skipped by name, saying why; where
gcc-aarch64-linux-gnu or qemu-user-static is missing (or, not root, the
-dev tree), the arm64 build's cases are.

Environment: PYCORE, srcdir; PYCORE_ARM64_CACHE (scripts/arm64-vm);
PYCORE_ARM64_SUITES (default: bookworm, and sid when its root is built;
empty: none, one skip);
PYCORE_ARM64_TIMEOUT (seconds for a boot, default 420);
PYCORE_ARM64_REUSE=1 reads the kept cores of the last run instead of
booting (quick, for work on pycore's aarch64 support).
"""
import hashlib
import json
import mmap
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycoretest.tap import TAP, Failure, Skip  # noqa: E402
from pycoretest import aio  # noqa: E402
from pycoretest import heap as heapcheck  # noqa: E402

SRCDIR = os.environ.get("srcdir") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PYCORE = os.environ.get("PYCORE") or os.path.join(SRCDIR, "pycore")
VM = os.path.join(SRCDIR, "scripts", "arm64-vm")
INIT = os.path.join(SRCDIR, "src", "tests", "e2e", "arm64-init.sh")
SCENARIOS = os.path.join(SRCDIR, "src", "tests", "e2e", "scenarios")
import pycoretest as stacks  # noqa: E402
from pycoretest.env import scaled

# NAME SCENARIO HOW [ARGS] (arm64-init.sh): the crash, the hang (gcore),
# asyncio, deep recursion, locals (kernel cores of blocked processes,
# SIGABRT); a thread blocked in Python called back through hand-written
# assembly without CFI (nocfi.S, built here for arm64): its caller found
# by its frame record, or only by a scan (the suite's last Python only);
# a heap of known shapes (scenarios/heap.py, with the census and retained
# sizes the process takes: the suite's last Python only).
CASES = [
    ("crash", "crash.py", "crash", ""),
    ("crash_fh", "crash.py", "crash-fh", ""),
    ("threads", "threads.py", "gcore", ""),
    ("aio_tasks", "aio_tasks.py", "ABRT", ""),
    ("recursion", "recursion.py", "ABRT", ""),
    ("locals", "locals.py", "ABRT", ""),
    ("nocfi_fp", "nocfi.py", "ABRT", "fp"),
    ("nocfi_scan", "nocfi.py", "ABRT", "scan"),
    ("heap", "heap.py", "ABRT", "retained"),
]
NOCFI = {"nocfi_fp": "frame pointer", "nocfi_scan": "scan"}
HEAP = {"heap"}
CROSS_CC = "aarch64-linux-gnu-gcc"
def present(suite, cache):
    """The suite's Pythons its cached root holds (a root built before one
    was added to scripts/arm64-vm's list lacks it until built again)."""
    if not os.path.isdir(os.path.join(cache, suite, "usr", "bin")):
        return SUITE_PYTHONS[suite]   # not built: every case is a skip by name
    return [py for py in SUITE_PYTHONS[suite]
            if os.path.exists(os.path.join(cache, suite, "usr", "bin", py))]


def cases(suite, cache):
    """(python, name, scenario, how, args) of a suite's run: gdb's gcore
    under emulation takes a minute, so only the suite's last Python's hang
    is a gcore, the others' a kernel core (SIGABRT); the cases without CFI
    are the last Python's too, and need the cross compiler."""
    out = []
    pythons = present(suite, cache)
    for py in pythons:
        for name, scenario, how, args in CASES:
            if name in NOCFI and (py != pythons[-1] or not NOCFI_LIB):
                continue
            if name in HEAP and py != pythons[-1]:
                continue
            if how == "gcore" and py != pythons[-1]:
                how = "ABRT"
            out.append((py, "%s-%s" % (py, name), scenario, how, args))
    return out


# nocfi.S built for arm64 (main() builds it), None: the cases without CFI
# are not run
NOCFI_LIB = None


def nocfi_library(dest):
    """nocfi.S built for arm64 as DEST/libnocfi.so, without CFI (as
    check-weave.py builds it for this machine; it calls nothing of the C
    library's: no arm64 libc needed to link it)."""
    lib = os.path.join(dest, "libnocfi.so")
    b = subprocess.run([CROSS_CC, "-shared", "-fPIC", "-nostdlib", "-fno-asynchronous-unwind-tables", "-o", lib,
                        os.path.join(SCENARIOS, "nocfi.S")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
    if b.returncode != 0:
        raise Failure("cannot build libnocfi.so for arm64: %s" % b.stdout.decode("utf-8", "replace")[-400:])
    r = subprocess.run(["readelf", "--debug-dump=frames", lib], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if b" FDE " in r.stdout:
        raise Failure("the arm64 libnocfi.so has call frame information after all")
    return "%s, no FDE in it" % CROSS_CC


SUITE_PYTHONS = {"bookworm": ["python3.11"], "sid": ["python3.13", "python3.14", "python3.15"]}
# what wait(1) in the machine's sh says of each way
STATUS = {"crash": 128 + signal.SIGSEGV, "crash-fh": 128 + signal.SIGSEGV, "gcore": 128 + signal.SIGKILL, "ABRT": 128 + signal.SIGABRT}
SIGNAL = {"crash": signal.SIGSEGV, "crash-fh": signal.SIGSEGV, "gcore": None, "ABRT": signal.SIGABRT}

# Linux's note types (include/uapi/linux/elf.h)
NT = {1: "PRSTATUS", 2: "FPREGSET", 3: "PRPSINFO", 6: "AUXV", 0x53494749: "SIGINFO", 0x46494C45: "FILE",
      0x401: "ARM_TLS", 0x402: "ARM_HW_BREAK", 0x403: "ARM_HW_WATCH", 0x404: "ARM_SYSTEM_CALL",
      0x405: "ARM_SVE", 0x406: "ARM_PAC_MASK", 0x407: "ARM_PACA_KEYS", 0x408: "ARM_PACG_KEYS",
      0x409: "ARM_TAGGED_ADDR_CTRL", 0x40A: "ARM_PAC_ENABLED_KEYS", 0x40B: "ARM_SSVE", 0x40C: "ARM_ZA",
      0x40D: "ARM_ZT"}
# Measured (src/tests/e2e/arm64-facts.txt): Debian's 6.1 kernel writes per
# thread PRSTATUS, FPREGSET, ARM_TLS, ARM_HW_BREAK, ARM_HW_WATCH,
# ARM_SYSTEM_CALL, ARM_SVE, ARM_PAC_MASK, ARM_PAC_ENABLED_KEYS,
# ARM_PACA_KEYS, ARM_PACG_KEYS, ARM_TAGGED_ADDR_CTRL; gdb 13's gcore per
# thread PRSTATUS, ARM_SVE (the FP/SIMD registers: no FPREGSET on a CPU
# with SVE), ARM_PAC_MASK, ARM_TLS, SIGINFO, and a GDB target description.
PER_THREAD = {"kernel": ["PRSTATUS", "FPREGSET", "ARM_TLS", "ARM_PAC_MASK", "ARM_SVE"],
              "gcore": ["PRSTATUS", "ARM_TLS", "ARM_PAC_MASK", "ARM_SVE", "SIGINFO"]}
ONCE = {"kernel": ["PRPSINFO", "SIGINFO", "AUXV", "FILE"], "gcore": ["PRPSINFO", "AUXV", "FILE"]}
EM_AARCH64 = 183
# struct elf_prstatus on arm64 (include/uapi/linux/elfcore.h, arch/arm64
# user_pt_regs): pr_pid at 32, pr_reg at 112 (x0..x30, sp, pc, pstate),
# pr_fpvalid at 384, 392 bytes in all.
PRSTATUS_SIZE, PR_PID, PR_REG = 392, 32, 112
# glibc 2.36 (bookworm), from libc6-dbg's DWARF (gdb-multiarch ptype/o
# struct pthread, src/tests/e2e/arm64-facts.txt): the thread pointer
# (tpidr_el0) points just past struct pthread (TLS_DTV_AT_TP).
PTHREAD_SIZE = {"bookworm": 0x740, "sid": 0x720}
PTHREAD_TID = {"bookworm": 0xd0, "sid": 0xd0}


_pthread = {}


def pthread_offsets(root, suite):
    """(sizeof(struct pthread), offsetof tid) of the root's glibc, from
    libc6-dbg's DWARF through gdb-multiarch; the table's where it has none."""
    if suite in _pthread:
        return _pthread[suite]
    got = None
    if shutil.which("gdb-multiarch"):
        libc = [os.path.join(d, "libc.so.6") for d in (root + "/lib/aarch64-linux-gnu", root + "/usr/lib/aarch64-linux-gnu")]
        libc = [p for p in libc if os.path.isfile(p)]
        if libc:
            g = subprocess.run(["gdb-multiarch", "-nx", "-batch", "-iex", "set sysroot " + root,
                                "-iex", "set debug-file-directory " + root + "/usr/lib/debug",
                                "-ex", "p sizeof(struct pthread)", "-ex", "p (long) &((struct pthread *) 0)->tid",
                                libc[0]], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=scaled(120))
            nums = re.findall(r"^\$\d+ = (\d+)$", g.stdout.decode(errors="replace"), re.M)
            if len(nums) == 2:
                got = (int(nums[0]), int(nums[1]))
    table = (PTHREAD_SIZE[suite], PTHREAD_TID[suite]) if suite in PTHREAD_SIZE else None
    if got and table and got != table:
        raise Failure("struct pthread: size %#x, tid at %#x in libc6-dbg's DWARF; the table says %#x, %#x"
                      % (got + table))
    _pthread[suite] = got or table
    return _pthread[suite]


def vm(*args, timeout=60):
    return subprocess.run([VM] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


class Core:
    """An ELF core, mapped: its notes and its memory."""

    def __init__(self, path):
        self.f = open(path, "rb")
        self.m = mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ)
        m = self.m
        if m[:4] != b"\x7fELF" or m[4] != 2 or m[5] != 1:
            raise Failure("%s: not a 64-bit little-endian ELF file" % path)
        e_type, e_machine = struct.unpack_from("<HH", m, 16)
        if e_type != 4:
            raise Failure("%s: ELF type %d, not a core" % (path, e_type))
        self.machine = e_machine
        phoff, = struct.unpack_from("<Q", m, 32)
        phentsize, phnum = struct.unpack_from("<HH", m, 54)
        self.loads = []
        self.code = []    # executable mappings: (start, end)
        self.notes = []   # (name, type, desc bytes)
        self.gcore = False  # gdb's: a note of its own (its target description)
        for i in range(phnum):
            p_type, _, off, vaddr, _, filesz, memsz, _ = struct.unpack_from("<IIQQQQQQ", m, phoff + i * phentsize)
            if p_type == 1:
                self.loads.append((vaddr, memsz, off, filesz))
                p_flags, = struct.unpack_from("<I", m, phoff + i * phentsize + 4)
                if p_flags & 1:
                    self.code.append((vaddr, vaddr + memsz))
            elif p_type == 4:
                pos, end = off, off + filesz
                while pos + 12 <= end:
                    namesz, descsz, ntype = struct.unpack_from("<III", m, pos)
                    name = m[pos + 12:pos + 12 + namesz].rstrip(b"\0").decode("ascii", "replace")
                    dpos = pos + 12 + ((namesz + 3) & ~3)
                    self.notes.append((name, ntype, m[dpos:dpos + descsz]))
                    self.gcore = self.gcore or name == "GDB"
                    pos = dpos + ((descsz + 3) & ~3)

    def read(self, addr, size):
        for vaddr, memsz, off, filesz in self.loads:
            if vaddr <= addr and addr + size <= vaddr + memsz:
                if addr + size > vaddr + filesz:
                    return None   # not in the file
                return self.m[off + addr - vaddr:off + addr - vaddr + size]
        return None

    def threads(self):
        """Per NT_PRSTATUS: {type name: desc} of it and the notes after it
        up to the next one."""
        out = []
        for name, t, desc in self.notes:
            if t == 1:
                out.append({})
            if out and t != 3 and (t != 0x53494749 or self.gcore) and t not in (6, 0x46494C45):
                out[-1].setdefault(NT.get(t, hex(t)), desc)
        return out

    def is_code(self, addr):
        return any(a <= addr < b for a, b in self.code)

    def return_addresses(self, prstatus, limit=2000):
        """The saved x30 of each frame record on the x29 chain."""
        r = regs(prstatus)
        fp, out = r[29], []
        for _ in range(limit):
            d = self.read(fp, 16) if fp and fp % 8 == 0 else None
            if d is None:
                break
            nfp, lr = struct.unpack("<QQ", d)
            if lr == 0:
                break
            out.append(lr)
            if nfp <= fp:
                break
            fp = nfp
        return out

    def close(self):
        self.m.close()
        self.f.close()


def note_names(core):
    return [NT.get(t, hex(t)) for _, t, _ in core.notes]


def regs(prstatus):
    return struct.unpack_from("<34Q", prstatus, PR_REG)


def check_made(work, case, how, results):
    name = case
    core, truth = os.path.join(work, name + ".core"), os.path.join(work, name + ".truth.json")
    r = results.get(name)
    if r is None:
        raise Failure("the machine did not run it (out/results: %s)" % sorted(results))
    if int(r["status"]) != STATUS[how]:
        log = open(os.path.join(work, name + ".log"), errors="replace").read()[-800:]
        raise Failure("status %s, want %d\n%s" % (r["status"], STATUS[how], log))
    for p in (core, truth):
        if not os.path.isfile(p):
            raise Failure("no %s" % os.path.basename(p))
    return "%d MB, %.1f s in the machine" % (os.path.getsize(core) >> 20, float(r["end"]) - float(r["start"]))


def check_notes(root, work, suite, name, how):
    """The notes Debian's arm64 kernel (and gdb's gcore) write, per thread
    and per process, and what they hold: pr_pid the threads' ids, the PAC
    mask the same for data and code and every thread, glibc's struct
    pthread just below the thread pointer holding the thread's id."""
    truth = json.load(open(os.path.join(work, name + ".truth.json")))
    core = Core(os.path.join(work, name + ".core"))
    try:
        if core.machine != EM_AARCH64:
            raise Failure("e_machine %d, not EM_AARCH64" % core.machine)
        names = note_names(core)
        kind = "gcore" if how == "gcore" else "kernel"
        for n in ONCE[kind]:
            if names.count(n) != 1:
                raise Failure("%d NT_%s notes, want 1: %s" % (names.count(n), n, names))
        threads = core.threads()
        tids = sorted(struct.unpack_from("<i", t["PRSTATUS"], PR_PID)[0] for t in threads)
        want = sorted(t["native_id"] for t in truth["threads"])
        if not set(want) <= set(tids):
            raise Failure("NT_PRSTATUS pids %s, the process's threads %s" % (tids, want))
        pac = None
        offsets = pthread_offsets(root, suite)
        for t in threads:
            tid = struct.unpack_from("<i", t["PRSTATUS"], PR_PID)[0]
            for n in PER_THREAD[kind]:
                if n not in t:
                    raise Failure("thread %d: no NT_%s: %s" % (tid, n, names))
            if len(t["PRSTATUS"]) != PRSTATUS_SIZE:
                raise Failure("NT_PRSTATUS of %d bytes, want %d" % (len(t["PRSTATUS"]), PRSTATUS_SIZE))
            if len(t["ARM_TLS"]) < 8 or len(t["ARM_PAC_MASK"]) != 16:
                raise Failure("NT_ARM_TLS %d bytes, NT_ARM_PAC_MASK %d bytes" % (len(t["ARM_TLS"]),
                                                                              len(t["ARM_PAC_MASK"])))
            data_mask, insn_mask = struct.unpack("<QQ", t["ARM_PAC_MASK"])
            if data_mask != insn_mask or data_mask == 0 or pac not in (None, data_mask):
                raise Failure("NT_ARM_PAC_MASK data %#x insn %#x (another thread: %s)"
                              % (data_mask, insn_mask, pac))
            pac = data_mask
            tp, = struct.unpack_from("<Q", t["ARM_TLS"], 0)
            if offsets:
                size, off = offsets
                raw = core.read(tp - size + off, 4)
                if raw is None:
                    raise Failure("thread %d: struct pthread below tpidr_el0 %#x is not in the core" % (tid, tp))
                if struct.unpack("<i", raw)[0] != tid:
                    raise Failure("thread %d: struct pthread's tid at tpidr_el0 %#x - %#x + %#x is %d"
                                  % (tid, tp, size, off, struct.unpack("<i", raw)[0]))
        if kind == "kernel":
            si_signo, = struct.unpack_from("<i", [d for _, t, d in core.notes if t == 0x53494749][0], 0)
            if si_signo != SIGNAL[how]:
                raise Failure("NT_SIGINFO si_signo %d, want %d" % (si_signo, SIGNAL[how]))
        return "%d threads, PAC mask %#x, %d kinds of note%s" % (
            len(threads), pac, len(set(names)), "" if offsets else "; struct pthread unknown (no gdb-multiarch)")
    finally:
        core.close()


def check_pac(work, suite, name, how):
    """The saved return addresses on each thread's frame-record chain:
    with the PAC mask of NT_ARM_PAC_MASK stripped each is in an
    executable mapping; sid's builds (branch protection) sign some,
    bookworm's none."""
    core = Core(os.path.join(work, name + ".core"))
    try:
        signed = total = 0
        for t in core.threads():
            insn_mask, = struct.unpack_from("<Q", t["ARM_PAC_MASK"], 8)
            for lr in core.return_addresses(t["PRSTATUS"]):
                total += 1
                if lr & insn_mask:
                    signed += 1
                if not core.is_code(lr & ~insn_mask):
                    raise Failure("saved return address %#x (stripped %#x) is in no executable mapping"
                                  % (lr, lr & ~insn_mask))
        if total == 0:
            raise Failure("no frame record on any thread")
        if suite == "bookworm" and signed:
            raise Failure("%d of %d saved return addresses carry PAC bits; Debian 12 builds no branch protection"
                          % (signed, total))
        if suite == "sid" and not signed:
            raise Failure("none of %d saved return addresses carries PAC bits (sid builds branch protection)" % total)
        return "%d of %d saved return addresses signed" % (signed, total)
    finally:
        core.close()


# gdb's frames through its Python API: the kind of each (a call gdb shows
# inlined, a tail call it inferred from DW_TAG_call_site, the signal
# trampoline), its pc (return addresses with their PAC bits stripped: gdb
# strips them itself) and its function.
GDB_FRAMES = """python
kinds = {gdb.NORMAL_FRAME: "N", gdb.INLINE_FRAME: "I", gdb.TAILCALL_FRAME: "T", gdb.SIGTRAMP_FRAME: "S"}
for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.ptid[1]):
    t.switch()
    print("THREAD %d" % t.ptid[1])
    f = gdb.newest_frame()
    while f is not None:
        print("FRAME %s 0x%x %s" % (kinds.get(f.type(), "?"), f.pc(), f.name()))
        f = f.older()
end"""


def gdb_reference(root, work, name):
    """gdb-multiarch's frames of every thread: {lwp: [(kind, pc, function)]},
    innermost first, kind N (a frame), I (a call inlined into the next
    one, at the same pc), T (a tail call gdb inferred), S (the signal
    trampoline); and gdb's output."""
    exe = root + "/usr/bin/" + open(os.path.join(work, name + ".python")).read().strip()
    g = subprocess.run(["gdb-multiarch", "-nx", "-batch", "-iex", "set sysroot " + root,
                        "-iex", "set solib-search-path " + os.path.join(work, "lib"),
                        "-iex", "set debug-file-directory " + root + "/usr/lib/debug",
                        "-iex", "set auto-load off", "-ex", GDB_FRAMES, exe, os.path.join(work, name + ".core")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(300))
    out = g.stdout.decode("utf-8", "replace")
    threads, cur = {}, None
    for line in out.splitlines():
        if line.startswith("THREAD "):
            cur = threads.setdefault(int(line.split()[1]), [])
        elif line.startswith("FRAME ") and cur is not None:
            _, kind, pc, fn = line.split(" ", 3)
            cur.append((kind, int(pc, 16), fn))
    return threads, out


def check_gdb(root, work, name, how):
    """gdb-multiarch unwinds every thread of the core to its start (main,
    or clone's start_thread), and the crashing thread from strlen."""
    if not shutil.which("gdb-multiarch"):
        raise Skip("gdb-multiarch not installed (Debian package gdb-multiarch)")
    threads, out = gdb_reference(root, work, name)
    truth = json.load(open(os.path.join(work, name + ".truth.json")))
    for tt in truth["threads"]:
        frames = threads.get(tt["native_id"])
        if not frames:
            raise Failure("gdb-multiarch lists no frames for thread %s\n%s" % (tt["native_id"], out[-3000:]))
        fns = [f for _, _, f in frames]
        if not any(f in ("main", "start_thread", "thread_start", "_start") for f in fns[-3:]):
            raise Failure("thread %s: gdb-multiarch's backtrace ends %s\n%s" % (tt["native_id"], fns[-3:], out[-3000:]))
        if not any(f.startswith("_PyEval_EvalFrameDefault") for f in fns):
            raise Failure("thread %s: no _PyEval_EvalFrameDefault in %s" % (tt["native_id"], fns))
        if how == "crash" and tt.get("main") and "strlen" not in fns[0]:
            raise Failure("the crashing thread's innermost frame is %s, not strlen" % fns[0])
        if how == "crash-fh" and tt.get("main"):
            # faulthandler's handler raised the signal again: gdb goes
            # through the kernel's signal frame to the fault
            kinds = [k for k, _, _ in frames]
            if "S" not in kinds or "strlen" not in fns[kinds.index("S") + 1]:
                raise Failure("the crashing thread's frames %s: no signal frame above strlen" % fns)
    return "%d threads, %d frames" % (len(threads), sum(len(f) for f in threads.values()))


def scenario_libs(work):
    """pycore's arguments for the scenarios' own libraries (libnocfi.so:
    the machine loads it from its payload disk, which the root here does
    not hold), copied to WORK/lib after the run."""
    lib = os.path.join(work, "lib")
    return ["--search-path", lib] if os.path.isdir(lib) else []


def pycore_json(args, core, incomplete=False):
    """pycore's report; INCOMPLETE: exit 1 (a report that says what it
    lacks) is expected too."""
    rc, out, err = stacks.run_pycore(["analyze", "--format", "json"] + args + [core])
    if rc != 0 and not (incomplete and rc == 1):
        raise Failure("pycore exit %d: %s" % (rc, err.strip()))
    return stacks.load_report(out)


def check_pycore(root, work, name, how):
    """pycore's report against the process's truth: threads, frames, crash
    facts, and every local of the locals scenario."""
    truth = json.load(open(os.path.join(work, name + ".truth.json")))
    core = os.path.join(work, name + ".core")
    args = ["--sysroot", root] + (["--locals=deep"] if name.endswith("locals") else [])
    report = pycore_json(args, core)
    crashed = how.startswith("crash")
    stacks.compare(truth, report, SIGNAL[how] if crashed else None, SIGNAL[how] if not crashed else None)
    if report["input"]["architecture"] != "aarch64":
        raise Failure("input architecture %s, not aarch64" % report["input"]["architecture"])
    sig = report["process"]["signal"]
    if how == "crash" and (sig["code_name"], sig["address"]) != ("SEGV_MAPERR", "0x0"):
        # ctypes.string_at(0): strlen of NULL
        raise Failure("signal %s: want SEGV_MAPERR at address 0x0" % sig)
    if how == "crash-fh" and (sig["code_name"], sig["sender_pid"]) != ("SI_TKILL", truth["pid"]):
        # the kernel's siginfo is faulthandler's re-raise, sent by the
        # process to itself with tgkill
        raise Failure("signal %s: want SI_TKILL sent by the process itself (%d)" % (sig, truth["pid"]))
    if how == "crash-fh":
        # the fault behind faulthandler's re-raise, from the signal frame's
        # saved state (its handler takes no siginfo: the ESR record), and
        # the same fingerprint as the same crash without faulthandler
        f, by = report["process"]["fault"], report["process"]["reraised_by"]
        if not f or f["origin"] != "fault" or f["address"] != "0x0" or not by or by["handler"] != "faulthandler":
            raise Failure("faulthandler's re-raise not traced to the fault at 0x0: %s, %s" % (f, by))
        plain = os.path.join(work, name[:-len("crash_fh")] + "crash.core")
        if not os.path.exists(plain):
            raise Failure("no core of the same crash without faulthandler (%s)" % plain)
        for native in ([], ["--native"]):
            a = pycore_json(args + native, plain)["fingerprint"]["hash"]
            b = pycore_json(args + native, core)["fingerprint"]["hash"]
            if a != b:
                raise Failure("fingerprint%s %s without faulthandler, %s with" % (" --native" if native else "", a, b))
        return "%d threads; the fault at 0x0 behind faulthandler's re-raise, fingerprint %s with and without" % (
            len(truth["threads"]), b)
    if name.endswith("locals"):
        return "%d reprs exactly Python's" % stacks.compare_locals(truth, report)
    if name.endswith("aio_tasks"):
        # the tasks as the process listed them (check-asyncio.py's comparison)
        want = json.load(open(os.path.join(work, name + ".truth.json.asyncio")))
        return "%d threads, %d tasks" % (len(truth["threads"]), aio.compare_tasks(want, report))
    return "%d threads" % len(truth["threads"])


def check_heap(root, work, name, how):
    """pycore heap of the heap scenario's kernel core, read here with the
    root's files, against the census the process took (check-heap.py's
    comparisons: every type's count and bytes, the untracked objects
    reached, the buffers they own, the retained sizes of its named
    containers with their paths, the garbage, the dominator tree)."""
    truth = json.load(open(os.path.join(work, name + ".truth.json")))
    rc, out, err = stacks.run_pycore(["heap", "--format", "json", "--sysroot", root,
                                      os.path.join(work, name + ".core")])
    if rc not in (0, 1) or not out.strip():
        raise Failure("pycore heap: exit %d: %s" % (rc, err.strip()[-300:]))
    report = stacks.load_report(out)
    if report["input"]["architecture"] != "aarch64":
        raise Failure("input architecture %s, not aarch64" % report["input"]["architecture"])
    return "; ".join(f(report, truth) for f in (heapcheck.compare, heapcheck.compare_retained,
                                                  heapcheck.compare_tree))


# the arm64 build of pycore (main() makes it): the command that runs it
# under qemu-aarch64-static, or None and why not
ARM64_PYCORE = None
ARM64_WHY = "not built"


def arm64_build():
    """scripts/arm64-cross build BUILDDIR/aarch64: (command, None), or
    (None, why) with why a Skip's reason or a Failure."""
    if not shutil.which("aarch64-linux-gnu-gcc"):
        return None, Skip("aarch64-linux-gnu-gcc not installed (Debian package gcc-aarch64-linux-gnu)")
    if not shutil.which("qemu-aarch64-static"):
        return None, Skip("qemu-aarch64-static not installed (Debian package qemu-user-static)")
    cross = os.path.join(SRCDIR, "scripts", "arm64-cross")
    devroot = subprocess.run([cross, "--print"], stdout=subprocess.PIPE).stdout.decode().strip()
    if os.getuid() != 0 and not os.path.isfile(os.path.join(devroot, ".pycore-ready")):
        return None, Skip("the arm64 -dev tree %s is not made (as root, once: scripts/arm64-cross devroot)" % devroot)
    out = os.path.join(os.path.dirname(os.path.abspath(PYCORE)), "aarch64")
    p = subprocess.run([cross, "build", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(1800))
    if p.returncode != 0:
        return None, Failure("scripts/arm64-cross build %s: %s" % (out, p.stderr.decode(errors="replace").strip()))
    exe = p.stdout.decode().strip().splitlines()[-1]
    libs = ":".join(os.path.join(devroot, d, "aarch64-linux-gnu") for d in ("usr/lib", "lib"))
    return ["qemu-aarch64-static", os.path.join(devroot, "lib", "ld-linux-aarch64.so.1"),
            "--library-path", libs, exe], None


# Inside the arm64 machine (TCG) a report takes 2.4 s (measured: 12 in
# 28.7 s on bookworm's cores): the arm64 pycore reads there the cores of
# the suite's last Python only, in JSON (the text, from the same model,
# and every core are compared under qemu-user).
VM_FORMATS = ("json",)


def arm64_digest():
    with open(ARM64_PYCORE[-1], "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def in_vm_python(suite, cache):
    pythons = present(suite, cache)
    return pythons[-1] if pythons else None


def arm64_payload(dest, sysroot, kept, names):
    """The arm64 pycore for the machine's disk (arm64-init.sh runs it):
    DEST/pycore, its loader, DEST/lib/ the libraries the loader resolves
    in the -dev tree (the machine's root has not all of them), and
    DEST/paths, where the root's files and the kept cores are here."""
    loader, exe = ARM64_PYCORE[1], ARM64_PYCORE[4]
    p = subprocess.run(ARM64_PYCORE[:4] + ["--list", exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=scaled(60))
    libs = re.findall(r"^\s*(\S+) => (/\S+)", p.stdout.decode(errors="replace"), re.M)
    if p.returncode != 0 or not libs:
        raise Failure("ld-linux-aarch64.so.1 --list %s: %s" % (exe, (p.stdout + p.stderr).decode(errors="replace")))
    os.makedirs(os.path.join(dest, "lib"))
    for soname, path in libs:
        # the loader's own line names it by its absolute PT_INTERP path:
        # it is copied below, beside pycore
        if "/" not in soname:
            shutil.copy(path, os.path.join(dest, "lib", soname))
    shutil.copy(loader, os.path.join(dest, "ld-linux-aarch64.so.1"))
    shutil.copy(exe, os.path.join(dest, "pycore"))
    with open(os.path.join(dest, "paths"), "w") as f:
        f.write("%s %s\n" % (sysroot, kept))
    with open(os.path.join(dest, "cases"), "w") as f:
        for name in names:
            f.write("%s %s\n" % (name, " ".join(VM_FORMATS)))


def first_difference(a, b):
    """The first JSON path where two reports differ, for the message."""
    try:
        x, y = json.loads(a), json.loads(b)
    except ValueError:
        return "not JSON"

    def walk(x, y, path):
        if type(x) is not type(y):
            return path
        if isinstance(x, dict):
            for k in sorted(set(x) | set(y)):
                if k not in x or k not in y:
                    return path + "/" + k
                d = walk(x[k], y[k], path + "/" + k)
                if d:
                    return d
        elif isinstance(x, list):
            for i, (u, v) in enumerate(zip(x, y)):
                d = walk(u, v, "%s/%d" % (path, i))
                if d:
                    return d
            if len(x) != len(y):
                return path + " (length)"
        elif x != y:
            return "%s: %r here, %r on arm64" % (path, x, y)
        return None
    return walk(x, y, "") or "the same JSON, other bytes"


FORMATS = ("json", "text")


def cross_args(root, name, fmt):
    """pycore's arguments for a core of ROOT's suite: the kept core's path
    (the one the arm64 machine's pycore is given too, src/tests/e2e/arm64-init.sh)."""
    core = os.path.join(os.path.dirname(root), "cores", os.path.basename(root), name + ".core")
    return ["analyze", "--format", fmt, "--sysroot", root, "--native-all", "--locals=deep", core]


_here = {}


def here_report(root, name, fmt):
    """(exit status, standard output, standard error) of this machine's pycore."""
    key = (root, name, fmt)
    if key not in _here:
        p = subprocess.run([PYCORE] + cross_args(root, name, fmt), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=scaled(300))
        _here[key] = (p.returncode, p.stdout, p.stderr)
    return _here[key]


def same_report(fmt, here, arm):
    """A Failure saying where two (status, stdout, stderr) differ, or None."""
    if (here[0], here[2]) != (arm[0], arm[2]):
        return Failure("%s: exit %d here, %d on arm64; standard error\n  here:  %s\n  arm64: %s"
                       % (fmt, here[0], arm[0], here[2].decode(errors="replace")[-500:],
                          arm[2].decode(errors="replace")[-500:]))
    if here[1] == arm[1]:
        return None
    if fmt == "json":
        return Failure("the JSON reports differ at %s" % first_difference(here[1], arm[1]))
    a, b = here[1].splitlines(), arm[1].splitlines()
    i = next((i for i, (u, v) in enumerate(zip(a, b)) if u != v), min(len(a), len(b)))
    return Failure("the text reports differ at line %d:\n  here:  %r\n  arm64: %r"
                   % (i + 1, a[i] if i < len(a) else "(end)", b[i] if i < len(b) else "(end)"))


def check_cross(root, work, name, how):
    """The arm64 build of pycore, run here under qemu-aarch64-static, reads
    the core with the same --sysroot files as this machine's pycore: the
    same exit status, standard error, and JSON and text reports, byte for
    byte."""
    if ARM64_PYCORE is None:
        raise Skip(ARM64_WHY)
    # the text of the suite's last Python's cores only: a report takes
    # 0.5 s under qemu-user, and sid has 18 cores
    py = open(os.path.join(work, name + ".python")).read().strip()
    formats = FORMATS if py == in_vm_python(os.path.basename(root), os.path.dirname(root)) else ("json",)
    sizes = []
    for fmt in formats:
        here = here_report(root, name, fmt)
        p = subprocess.run(ARM64_PYCORE + cross_args(root, name, fmt), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=scaled(300))
        differ = same_report(fmt, here, (p.returncode, p.stdout, p.stderr))
        if differ:
            raise differ
        sizes.append(len(here[1]))
    return "%s reports the same (%s bytes), exit %d" % (
        " and ".join(f.upper() if f == "json" else f for f in formats), ", ".join(map(str, sizes)), here[0])


def run_both(args):
    """(this machine's, the arm64 build's) (status, stdout, stderr) of ARGS."""
    out = []
    for cmd in ([PYCORE], ARM64_PYCORE):
        p = subprocess.run(cmd + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(300))
        out.append((p.returncode, p.stdout, p.stderr))
    return out


def check_cross_batch(root, work):
    """pycore batch over the suite's cores (its workers, its JSONL): the
    arm64 build's records equal this machine's byte for byte; its summary
    line on standard error differs in its time and rate alone."""
    if ARM64_PYCORE is None:
        raise Skip(ARM64_WHY)
    kept = os.path.join(os.path.dirname(root), "cores", os.path.basename(root))
    cores = sorted(os.path.join(kept, f) for f in os.listdir(work) if f.endswith(".core"))
    # --ordered: by default records come as their workers finish
    here, arm = run_both(["batch", "--ordered", "--sysroot", root] + cores)
    timing = re.compile(rb" in [0-9.]+ s, [0-9.]+ dumps/s")
    here = (here[0], here[1], timing.sub(b" in T s, R dumps/s", here[2]))
    arm = (arm[0], arm[1], timing.sub(b" in T s, R dumps/s", arm[2]))
    differ = same_report("jsonl", here, arm)
    if differ:
        raise differ
    return "%d records the same (%d bytes), exit %d" % (len(here[1].splitlines()), len(here[1]), here[0])


def check_cross_x86():
    """The reverse direction: an x86-64 core (testdata's sample, a zstd
    core of Debian's 3.13) read by the arm64 build gives this machine's
    JSON and text reports."""
    if ARM64_PYCORE is None:
        raise Skip(ARM64_WHY)
    core = os.path.join(SRCDIR, "testdata", "sample-py3.13-threads.core.zst")
    sizes = []
    for fmt in FORMATS:
        here, arm = run_both(["analyze", "--format", fmt, "--native-all", "--locals=deep", core])
        differ = same_report(fmt, here, arm)
        if differ:
            raise differ
        sizes.append(len(here[1]))
    return "JSON (%d bytes) and text (%d bytes) reports the same, exit %d" % (sizes[0], sizes[1], here[0])


def check_in_vm(root, work, name, how):
    """The arm64 build of pycore, run inside the arm64 machine on the core
    it had just made (arm64-init.sh: the root's files at the same
    --sysroot path, in a chroot): the same reports as this machine's."""
    suite = os.path.basename(root)
    py = open(os.path.join(work, name + ".python")).read().strip()
    if py != in_vm_python(suite, os.path.dirname(root)):
        raise Skip("the machine reads the cores of %s's last Python only (%s; emulated, about 2.3 s a report)"
                   % (suite, in_vm_python(suite, os.path.dirname(root))))
    made = os.path.join(work, name + ".arm64.json.status")
    if not os.path.isfile(made):
        if not os.path.exists(os.path.join(work, "arm64-pycore")):
            raise Skip("the machine's run had no arm64 pycore (%s)" % ARM64_WHY if ARM64_PYCORE is None
                       else "the kept run predates the arm64 pycore in the machine")
        raise Failure("the machine's pycore wrote no report: %s"
                      % open(os.path.join(work, "arm64-pycore"), errors="replace").read().strip())
    if ARM64_PYCORE is None:
        raise Skip(ARM64_WHY)
    digest = os.path.join(work, "arm64-pycore.sha256")
    if not os.path.isfile(digest) or open(digest).read().strip() != arm64_digest():
        raise Skip("the kept run's reports were made by another arm64 build of pycore (boot again: "
                   "PYCORE_ARM64_REUSE unset)")
    sizes = []
    for fmt in VM_FORMATS:
        base = os.path.join(work, "%s.arm64.%s" % (name, fmt))
        arm = (int(open(base + ".status").read()), open(base, "rb").read(), open(base + ".err", "rb").read())
        here = here_report(root, name, fmt)
        differ = same_report(fmt, here, arm)
        if differ:
            raise differ
        sizes.append(len(here[1]))
    return "%s reports the same (%s bytes), exit %d" % (
        " and ".join(f.upper() if f == "json" else f for f in VM_FORMATS), ", ".join(map(str, sizes)), here[0])


def native_view(frames):
    """gdb's frames as pycore reports them: a frame by its pc (the signal
    trampoline's too: pycore shows it as a frame; a tail call gdb inferred
    from DW_TAG_call_site entries too, by its jump's return address, as
    pycore infers and shows it), an inlined call by its function."""
    return [("I", fn) if kind == "I" else ("N", pc) for kind, pc, fn in frames if kind in ("N", "I", "S", "T")]


def check_native(root, work, name, how):
    """--native-all: each thread's native frames are gdb-multiarch's,
    return address for return address (PAC bits stripped), inlined call
    for inlined call, through the kernel's signal frame."""
    if not shutil.which("gdb-multiarch"):
        raise Skip("gdb-multiarch not installed (Debian package gdb-multiarch)")
    report = pycore_json(["--sysroot", root, "--native-all"] + scenario_libs(work), os.path.join(work, name + ".core"))
    theirs, _ = gdb_reference(root, work, name)
    n = inlined = 0
    threads = [t for interp in report["interpreters"] for t in interp["threads"]]
    if sorted(t["tid"] for t in threads) != sorted(theirs):
        raise Failure("pycore's threads %s, gdb-multiarch's %s" % (sorted(t["tid"] for t in threads), sorted(theirs)))
    for t in threads:
        mine = [("I", f["function"]) if f.get("inlined") else ("N", int(f["address"], 16))
                for f in t["frames"] if f["kind"] == "native"]
        ref = native_view(theirs[t["tid"]])
        if not ref or mine[:len(ref)] != ref:
            raise Failure("thread %s: native frames\n  pycore %s\n  gdb    %s"
                          % (t["tid"], [(k, hex(v) if k == "N" else v) for k, v in mine],
                             [(k, hex(v) if k == "N" else v) for k, v in ref]))
        n += len(ref)
        inlined += sum(1 for k, _ in ref if k == "I")
    return "%d native frames (%d inlined calls) of %d threads, gdb-multiarch's" % (n, inlined, len(threads))


def check_nocfi(root, work, name, how):
    """The thread called back into Python through nocfi.S (no CFI): with
    --native-all, the frame after the assembly function is the return
    address it recorded, found by its frame record (nocfi_fp) or by a scan
    (nocfi_nofp), marked so in JSON, text and HTML; the thread's Python
    frames are the process's, woven on both sides of it; no frame placed
    after the native stack; the stack goes on to the thread's start."""
    found_by = NOCFI[name.split("-", 1)[1]]
    truth = json.load(open(os.path.join(work, name + ".truth.json")))
    facts = json.load(open(os.path.join(work, name + ".truth.json.nocfi")))
    core = os.path.join(work, name + ".core")
    args = ["--sysroot", root, "--native-all"] + scenario_libs(work)
    report = pycore_json(args, core)
    placed = [w for w in report["warnings"] if "placed after" in w]
    if placed:
        raise Failure("frames placed after the native stack: %s" % placed)
    t = next((t for i in report["interpreters"] for t in i["threads"] if t["tid"] == facts["tid"]), None)
    if t is None:
        raise Failure("no thread %s in the report" % facts["tid"])
    frames = t["frames"]
    tt = next(x for x in truth["threads"] if x["native_id"] == facts["tid"])
    mine = [(f["file"], f["line"], f["function"]) for f in frames if f["kind"] == "python"]
    want = [(f["file"], f["line"], f["function"]) for f in tt["frames"]]
    if mine != want:
        raise Failure("Python frames %s, the process says %s" % (mine, want))
    at = [i for i, f in enumerate(frames) if f["kind"] == "native" and f["function"] == facts["function"]]
    if len(at) != 1:
        raise Failure("%d frames of %s: %s" % (len(at), facts["function"], [f["function"] for f in frames]))
    nxt = frames[at[0] + 1]
    if nxt["address"] != "0x%x" % facts["return_address"] or nxt.get("found_by") != found_by:
        raise Failure("after %s: %s found by %s; the function returns to 0x%x (want: by %s)" % (
            facts["function"], nxt["address"], nxt.get("found_by"), facts["return_address"], found_by))
    py_at = [i for i, f in enumerate(frames) if f["kind"] == "python"]
    names = [frames[i]["function"] for i in py_at]
    inner = [i for i in py_at if frames[i]["function"] == "callback"]
    outer = [i for i in py_at if frames[i]["function"] == "through_assembly"]
    if not inner or not outer or not inner[0] < at[0] < outer[0]:
        raise Failure("the Python frames not woven around %s: %s" % (facts["function"], names))
    last = frames[-1]["function"] or ""
    if "clone" not in last and last != "thread_start":
        raise Failure("the stack ends in %s, not the thread's start" % last)
    rc, text, err = stacks.run_pycore(["analyze"] + args + [core])
    line = [ln for ln in text.splitlines() if "0x%x " % facts["return_address"] in ln]
    if rc != 0 or not line or "[by %s]" % found_by not in line[0]:
        raise Failure("text (exit %d): the frame at 0x%x is not marked [by %s]: %s" % (
            rc, facts["return_address"], found_by, line or err.strip()[-300:]))
    rc, html, err = stacks.run_pycore(["analyze", "--format", "html"] + args + [core])
    if rc != 0 or '<span class="mark found-by">by %s</span>' % found_by not in html:
        raise Failure("html (exit %d): no frame marked by %s" % (rc, found_by))
    return "the frame after %s found by %s at its return address; %d Python frames woven around it" % (
        facts["function"], found_by, len(want))


LLDB = shutil.which("lldb-19")


def native_frames(report):
    """{tid: [(kind, pc or function, module file)]} of a --native-all report,
    innermost first."""
    return {t["tid"]: [("I" if f.get("inlined") else "N", f["function"] if f.get("inlined") else f["address"],
                        f.get("file"))
                       for f in t["frames"] if f["kind"] == "native"]
            for interp in report["interpreters"] for t in interp["threads"]}


def check_minidump(root, work, name, how):
    """lldb-19's minidump of the core (lldb writes an ARM64 context per
    thread and, of a core, the threads' stacks only): pycore reads it on
    x86-64 with the same native stacks as the core's, down to a signal
    trampoline (the vDSO's pages, whose CFI and symbols go through it, are
    not in such a minidump); its Python frames are said to be missing,
    never invented."""
    if not LLDB:
        raise Skip("lldb-19 not installed (Debian package lldb-19)")
    py = open(os.path.join(work, name + ".python")).read().strip()
    core = os.path.join(work, name + ".core")
    with tempfile.TemporaryDirectory(prefix="pycore-arm64-md-") as tmp:
        dmp = os.path.join(tmp, name + ".dmp")
        p = subprocess.run([LLDB, "-b", "-o", "platform select --sysroot %s remote-linux" % root,
                            "-o", "target create --core %s %s/usr/bin/%s" % (core, root, py),
                            "-o", "process save-core --plugin-name=minidump --style full " + dmp],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(300))
        if not os.path.isfile(dmp):
            raise Failure("lldb wrote no minidump: %s" % p.stdout.decode(errors="replace")[-1500:])
        args = ["--debug-dir", root + "/usr/lib/debug", "--native-all"]
        md = pycore_json(args, dmp, incomplete=True)
    if md["input"]["format"] != "minidump" or md["input"]["architecture"] != "aarch64":
        raise Failure("input %s" % md["input"])
    mine = native_frames(md)
    want = native_frames(pycore_json(["--sysroot", root, "--native-all"], core))
    if sorted(mine) != sorted(want):
        raise Failure("threads %s, the core's %s" % (sorted(mine), sorted(want)))
    n = 0
    for tid, frames in want.items():
        cut = [i for i, f in enumerate(frames) if f[2] == "[vdso]"]
        ref = frames[:cut[0]] if cut else frames
        got = mine[tid][:len(ref)]
        if [f[:2] for f in got] != [f[:2] for f in ref]:
            raise Failure("thread %s: native frames of the minidump\n  %s\nthe core's\n  %s"
                          % (tid, [f[:2] for f in mine[tid]], [f[:2] for f in ref]))
        n += len(ref)
    # the Python frames it gives are the process's, innermost first, as
    # far as the captured memory goes
    truth = {t["ident"]: [(f["function"], f["file"], f["line"]) for f in t["frames"]]
             for t in json.load(open(os.path.join(work, name + ".truth.json")))["threads"]}
    python = 0
    for t in (t for i in md["interpreters"] for t in i["threads"]):
        got = [(f["function"], f["file"], f["line"]) for f in t["frames"] if f["kind"] == "python"]
        if got and got != truth.get(t["ident"], [])[:len(got)]:
            raise Failure("thread %s: Python frames %s, the process's %s" % (t["tid"], got, truth.get(t["ident"])))
        python += len(got)
    errors = sum(1 for i in md["interpreters"] for t in i["threads"] if t["error"])
    if python == 0 and errors == 0:
        raise Failure("no Python frame and no thread saying why")
    return "%d native frames the core's; %d Python frames, %d threads saying what is not captured" % (
        n, python, errors)


def boot(suite, cache, timeout):
    """One run of the machine: (directory of its out/, seconds) or (None,
    why); "timeout" when it did not finish in time."""
    work = tempfile.mkdtemp(prefix="pycore-arm64-")
    try:
        out, took = boot_in(work, suite, cache, timeout)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if out is None:
        shutil.rmtree(work, ignore_errors=True)
    return out, took


def boot_in(work, suite, cache, timeout):
    payload = os.path.join(work, "payload")
    os.makedirs(os.path.join(payload, "scenarios"))
    for f in os.listdir(SCENARIOS):
        if f.endswith(".py"):
            shutil.copy(os.path.join(SCENARIOS, f), os.path.join(payload, "scenarios"))
    if ARM64_PYCORE is not None:
        arm64_payload(os.path.join(payload, "arm64"), os.path.join(cache, suite), os.path.join(cache, "cores", suite),
                      [name for py, name, _, _, _ in cases(suite, cache)
                       if py == in_vm_python(suite, cache) and name.split("-", 1)[1] not in HEAP])
    if NOCFI_LIB:
        shutil.copy(NOCFI_LIB, os.path.join(payload, "scenarios"))
    shutil.copy(INIT, os.path.join(payload, "init"))
    os.chmod(os.path.join(payload, "init"), 0o755)
    with open(os.path.join(payload, "cases"), "w") as f:
        for py, name, scenario, how, args in cases(suite, cache):
            f.write("%s %s %s %s %s\n" % (name, py, scenario, how, args))
    disk = os.path.join(work, "disk.raw")
    t0 = time.time()
    # (the machine waits for the emulator lock while another runs)
    p = vm("run", suite, payload, disk, str(timeout), timeout=timeout + scaled(3600))
    took = time.time() - t0
    console = open(disk + ".console", errors="replace").read()
    if p.returncode == 124:
        return None, "timeout"
    if p.returncode != 0:
        return None, "the machine's run ended with %d after %.0f s: %s %s" % (
            p.returncode, took, p.stderr.decode(errors="replace").strip(), console[-1500:])
    out = os.path.join(work, "out")
    d = subprocess.run(["debugfs", "-R", "rdump /out " + work, disk], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=scaled(300))
    os.unlink(disk)
    if not os.path.isfile(os.path.join(out, "done")):
        log = open(os.path.join(out, "init.log"), errors="replace").read() if os.path.isdir(out) else ""
        return None, "the machine's init did not finish (%.0f s): %s %s %s" % (
            took, d.stdout.decode(errors="replace")[-500:], log[-1500:], console[-1500:])
    if NOCFI_LIB:
        os.makedirs(os.path.join(out, "lib"))
        shutil.copy(NOCFI_LIB, os.path.join(out, "lib"))
    for py, name, _, _, _ in cases(suite, cache):
        with open(os.path.join(out, name + ".python"), "w") as f:
            f.write(py + "\n")
    if ARM64_PYCORE is not None:
        # which arm64 build made the machine's reports (a kept run may
        # outlive it)
        with open(os.path.join(out, "arm64-pycore.sha256"), "w") as f:
            f.write(arm64_digest() + "\n")
    with open(os.path.join(out, "boot"), "w") as f:
        f.write("seconds %.1f\n" % took)
    # the last run's cores and truth, for whoever works on aarch64
    keep = os.path.join(cache, "cores", suite)
    shutil.rmtree(keep + ".new", ignore_errors=True)
    shutil.copytree(out, keep + ".new")
    shutil.rmtree(keep, ignore_errors=True)
    os.rename(keep + ".new", keep)
    shutil.rmtree(payload)
    return out, took


def results_of(out):
    results = {}
    for line in open(os.path.join(out, "results")):
        words = line.split()
        results[words[0]] = dict(w.split("=", 1) for w in words[1:])
    return results


def main():
    tap = TAP()
    suites = os.environ.get("PYCORE_ARM64_SUITES")
    cache = vm("--print").stdout.decode().strip()
    if suites is not None and not suites.split():
        tap.skip("the arm64 machine", "PYCORE_ARM64_SUITES is empty: no arm64 machine booted")
        return tap.done()
    if suites:
        suites = suites.split()
    else:
        suites = ["bookworm"] + [s for s in ["sid"] if os.path.isfile(os.path.join(cache, s + ".raw.ready"))]
    timeout = int(os.environ.get("PYCORE_ARM64_TIMEOUT", "420"))
    checks = [("the machine made the core and the truth", None),
              ("its notes, per thread and per process", check_notes),
              ("saved return addresses, PAC stripped, are code", check_pac),
              ("gdb-multiarch unwinds every thread", check_gdb),
              ("pycore's report against the process's truth", check_pycore),
              ("pycore's native stacks against gdb-multiarch's", check_native),
              ("lldb-19's minidump of the core", check_minidump),
              ("the arm64 build's report (qemu-user) equals this machine's", check_cross),
              ("the arm64 build's report in the arm64 machine equals this machine's", check_in_vm)]
    global ARM64_PYCORE, ARM64_WHY
    t0 = time.time()
    ARM64_PYCORE, why = arm64_build()
    if isinstance(why, Skip):
        ARM64_WHY = str(why)
        tap.skip("pycore built as an arm64 program (scripts/arm64-cross)", ARM64_WHY)
    elif why is not None:
        ARM64_WHY = "the arm64 build failed"
        tap.not_ok("pycore built as an arm64 program (scripts/arm64-cross)", str(why))
    else:
        tap.ok("pycore built as an arm64 program (scripts/arm64-cross)", "%s, %.0f s" % (ARM64_PYCORE[-1], time.time() - t0))
    tap.run("an x86-64 core read by the arm64 build: this machine's reports", check_cross_x86)
    global NOCFI_LIB
    label = "nocfi.S built for arm64, without CFI (the cases without CFI)"
    libdir = tempfile.mkdtemp(prefix="pycore-arm64-nocfi-")
    if not shutil.which(CROSS_CC) or not shutil.which("readelf"):
        tap.skip(label, "%s or readelf not installed (Debian packages gcc-aarch64-linux-gnu, binutils)" % CROSS_CC)
    else:
        if tap.run(label, nocfi_library, libdir):
            NOCFI_LIB = os.path.join(libdir, "libnocfi.so")
    for suite in suites:
        why = None
        if not shutil.which("qemu-system-aarch64"):
            why = "qemu-system-aarch64 not installed (Debian package qemu-system-arm)"
        elif not shutil.which("debugfs") or not shutil.which("mkfs.ext4"):
            why = "debugfs or mkfs.ext4 not installed (Debian package e2fsprogs)"
        elif not os.path.isfile(os.path.join(cache, suite + ".raw.ready")):
            if os.getuid() != 0:
                why = "the arm64 machine is not built in %s (as root, once: scripts/arm64-vm build %s)" % (cache, suite)
            else:
                p = vm("build", suite, timeout=scaled(3600))
                if p.returncode != 0:
                    why = "scripts/arm64-vm build %s failed: %s" % (suite, p.stderr.decode(errors="replace").strip())
        elif os.getuid() == 0 and os.environ.get("PYCORE_ARM64_REUSE") != "1":
            # built: quick, or the packages added to its list since
            p = vm("build", suite, timeout=scaled(3600))
            if p.returncode != 0:
                why = "scripts/arm64-vm build %s failed: %s" % (suite, p.stderr.decode(errors="replace").strip())
        for py in SUITE_PYTHONS[suite]:
            if why is None and py not in present(suite, cache):
                tap.skip("%s %s: its cases" % (suite, py),
                         "%s is not in the cached %s root %s (scripts/arm64-vm build %s adds it)"
                         % (py, suite, os.path.join(cache, suite), suite))
        names = [("%s %s (%s)" % (suite, name, how), name, how) for _, name, _, how, _ in cases(suite, cache)]
        out = took = None
        kept = os.path.join(cache, "cores", suite)
        reuse = os.environ.get("PYCORE_ARM64_REUSE") == "1"
        if reuse and why is None:
            if not os.path.isfile(os.path.join(kept, "done")):
                why = "PYCORE_ARM64_REUSE=1, but no kept run in %s" % kept
            else:
                out = kept
                tap.ok("%s: the arm64 machine's kept run" % suite, kept)
        elif why is None:
            out, took = boot(suite, cache, timeout)
            if out is None and took == "timeout":
                why = ("the arm64 machine did not finish within %d s (emulated, no KVM for arm64 here; "
                       "PYCORE_ARM64_TIMEOUT gives it longer)" % timeout)
                tap.skip("%s: the arm64 machine runs its scenarios" % suite, why)
            elif out is None:
                tap.not_ok("%s: the arm64 machine runs its scenarios" % suite, took)
                why = "the machine did not run"
            else:
                tap.ok("%s: the arm64 machine ran its scenarios" % suite, "%.0f s" % took)
        root = os.path.join(cache, suite)
        results = results_of(out) if out else {}
        for label, name, how in names:
            if why is not None:
                for what, _ in checks:
                    tap.skip("%s: %s" % (label, what), why)
                continue
            if tap.run("%s: %s" % (label, checks[0][0]), check_made, out, name, how, results) is None:
                for what, _ in checks[1:]:
                    tap.skip("%s: %s" % (label, what), "no core")
                continue
            if name.split("-", 1)[1] in HEAP:
                tap.run("%s: pycore heap against the process's census" % label, check_heap, root, out, name, how)
                continue
            tap.run("%s: %s" % (label, checks[1][0]), checks[1][1], root, out, suite, name, how)
            tap.run("%s: %s" % (label, checks[2][0]), checks[2][1], out, suite, name, how)
            for what, fn in checks[3:]:
                tap.run("%s: %s" % (label, what), fn, root, out, name, how)
            if name.split("-", 1)[1] in NOCFI:
                tap.run("%s: pycore goes on past the function without CFI" % label, check_nocfi, root, out, name, how)
        if why is None and out:
            tap.run("%s: pycore batch over its cores, the arm64 build's the same" % suite, check_cross_batch, root, out)
        else:
            tap.skip("%s: pycore batch over its cores, the arm64 build's the same" % suite, why or "no run")
        if out and not reuse:
            shutil.rmtree(os.path.dirname(out), ignore_errors=True)
    shutil.rmtree(libdir, ignore_errors=True)
    stacks.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
