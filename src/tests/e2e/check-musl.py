"""CPython built with musl (Alpine's C library) instead of glibc: real cores
of real processes, read through the libc seam (src/platform/libc.c).

The interpreters are musl3.11, musl3.12 and musl3.13, and 3.12 and 3.13
fully static (musl3.12-static, musl3.13-static; pycoretest.interpreters;
the sanitizer pass: musl3.12, musl3.12-static and musl3.13-nobuildid), and
3.13 linked as musl-gcc links by default, without a GNU build-id
(musl3.13-nobuildid):
the CPythons that scripts/musl-python builds once per machine with Debian's
musl-tools and caches; this test never builds them -- until one is there,
its cases are skips by its name (scripts/run-tests starts the builds in the
background).

For each scenario (src/tests/e2e/scenarios/: threads and locals, snapshots
taken with gcore; crash, a real SIGSEGV in musl's strlen with ulimit -c
unlimited and the kernel's core) the process records its own threads'
stacks; then, each case a TAP line:
- the JSON report matches the record (pycoretest.compare: every thread,
  its tid, every frame; the crash's signal, address and thread), its
  modules name musl's C library, and the libc seam's struct pthread facts
  hold in the core: for every thread of the core, the tid read at the
  thread pointer through libc.c's musl table is the thread's NT_PRSTATUS
  pid; locals: every repr exactly Python's (pycoretest.locals);
- the text report holds every recorded frame;
- a compact dump (analyze --save) gives the same report and keeps every
  thread's struct pthread where the seam says (the check above, on it);
- --native: the same Python frames, with native frames between them; the
  native frames musl's stripped libc.so (no symbol table, no call frame
  information in its assembly) cannot name are counted, not invented;
- the crash's fingerprint, plain and with --native, is the fingerprint of
  the same crash on glibc's CPython of that version (pyenv's), or a skip
  by name;
- without build-ids (musl3.13-nobuildid): every module whose file pycore
  read and whose dump records no build-id says "verified_by": "bytes" (the
  executable among them); the crash's thread with --native-all has gdb's
  frames (gdb on the same core, the oracle) from #0 up to the eval loop's
  frame that carries the first Python call, each by its pc, each inlined
  call by its name; and a copy of the executable with one byte of the read-
  only page the core holds changed, given as --executable, is refused, the
  JSON module's "refused" and the --verbose text saying where it differs;
  with _ctypes' directory hidden (a mount namespace), a copy of its module
  in --search-path is used (found by name, verified by its bytes) and a
  changed copy refused; and every local's type name is the process's
  (those names are in the files' read-only data, read from the files so
  verified).

Environment: PYCORE, srcdir, KEEP_CORES=1 keeps the cores.  Output: TAP.
"""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

from pycoretest import interpreters
from pycoretest import native as gdb_native
from pycoretest.compare import compare, text_frames
from pycoretest.corefile import Core
from pycoretest.cores import take_crash, take_snapshot, twin_fingerprints
from pycoretest.env import SRCDIR, scaled
from pycoretest.locals import compare_locals, listed_once
from pycoretest.run import run_hidden, run_pycore, scenario_cases
from pycoretest.schema import load_report, schema_summary
from pycoretest.tap import TAP, Failure, Skip

NAMES = ["musl3.11", "musl3.12", "musl3.13", "musl3.12-static", "musl3.13-static", "musl3.13-nobuildid"]

# For the fully static build (musl3.12-static): musl's static dlopen always
# fails, and ctypes' own import opens the program itself (PyDLL(None)), so
# the scenarios' "import ctypes" would fail before they start.  This
# sitecustomize, the test's and not the scenario's, lets that one dlopen
# give a null handle; ctypes._string_at, which the crash calls, needs none.
STATIC_SITE = """import _ctypes
_real = _ctypes.dlopen
def _dlopen(name, *mode):
    try:
        return _real(name, *mode)
    except OSError:
        if name is None:
            return 0
        raise
_ctypes.dlopen = _dlopen
"""
SCENARIOS = ["threads", "locals", "crash"]


def seam_facts():
    """libc.c's musl struct pthread on x86-64: (below_tp, size, tid)."""
    src = open(os.path.join(SRCDIR, "src", "platform", "libc.c")).read()
    table = re.search(r"musl_pthreads\[\] = \{(.*?)\n\};", src, re.S)
    m = table and re.search(r"\.elf_machine = EM_X86_64, \.below_tp = (true|false), \.size = (\d+), "
                            r"\.tid = (\d+)", table.group(1))
    if not m:
        raise Failure("libc.c has no musl x86-64 struct pthread entry")
    return m.group(1) == "true", int(m.group(2)), int(m.group(3))


def check_seam(core):
    """Every thread's tid, read at its thread pointer through the seam's
    facts, is its NT_PRSTATUS pid."""
    below, size, tid_at = seam_facts()
    c = Core(core)
    threads = c.threads()
    if not threads:
        raise Failure("the core has no NT_PRSTATUS note")
    for pid, tp in threads:
        if not tp:
            raise Failure("thread %d: no thread pointer (fs_base 0)" % pid)
        tid = c.u32(tp - size + tid_at if below else tp + tid_at)
        if tid != pid:
            raise Failure("thread %d: struct pthread at 0x%x holds tid %d at +%d" % (pid, tp, tid, tid_at))
    return len(threads), tid_at


def analyze(core, args=()):
    rc, out, err = run_pycore(["analyze", "--format", "json"] + list(args) + [core])
    if rc != 0:
        raise Failure("pycore %s: exit %d: %s" % (" ".join(args), rc, err.strip()))
    return load_report(out)


def musl_module(report, static):
    paths = [m["path"] for m in report["process"]["modules"]]
    if static:
        shared = [p for p in paths if ".so" in os.path.basename(p)]
        if shared:
            raise Failure("a fully static executable, yet shared objects among the modules: %s" % shared)
        return "no shared object (static)"
    named = [p for p in paths if "ld-musl-" in os.path.basename(p) or
             ("-linux-musl/" in p and os.path.basename(p).startswith("libc.so"))]
    if not named:
        raise Failure("no musl C library among the modules: %s" % paths)
    if any(os.path.basename(p).startswith("libc.so.6") for p in paths):
        raise Failure("glibc's libc.so.6 in a musl process: %s" % paths)
    return named[0]


def check_text(core, truth, args):
    rc, out, err = run_pycore(["analyze", "--format", "text"] + args + [core])
    if rc != 0:
        raise Failure("text report: exit %d: %s" % (rc, err.strip()))
    return "%d frames in the text" % text_frames(out, truth)


def check_native(core, truth, crashed, snap_signal, args):
    report = analyze(core, ["--native"] + args)
    compare(truth, report, crashed, snap_signal)
    native = [f for i in report["interpreters"] for t in i["threads"] for f in t["frames"] if f["kind"] == "native"]
    if not native:
        raise Failure("--native: no native frame in any thread")
    unnamed = [f for f in native if not f.get("function")]
    if crashed is not None:
        t = [t for i in report["interpreters"] for t in i["threads"] if t["crashed"]][0]
        first = t["frames"][0]
        if first["kind"] != "native":
            raise Failure("--native: the crashed thread's innermost frame is %s, not native C" % first["kind"])
    return "%d native frames, %d unnamed (\"??\")" % (len(native), len(unnamed))


def check_compact(core, report, args, workdir):
    """analyze --save: the compact dump gives the same report ("input"
    aside) and keeps every thread's struct pthread, where the libc seam
    says it is (check_seam on the compact dump)."""
    compact = os.path.join(workdir, "compact")
    rc, out, err = run_pycore(["analyze", "--format", "json", "--save", compact] + args + [core])
    if rc != 0:
        raise Failure("--save: exit %d: %s" % (rc, err.strip()))
    again = analyze(compact, args)
    if dict(again, input=None) != dict(report, input=None):
        raise Failure("the compact dump's report differs from the core's")
    n, _ = check_seam(compact)
    return "%d of %d bytes; the same report; %d threads' struct pthread kept" % (
        os.path.getsize(compact), os.path.getsize(core), n)


def check_fingerprint(name, core, report, workdir):
    plain, native = twin_fingerprints("py" + name[len("musl"):].replace("-static", "").replace("-nobuildid", ""),
                                      workdir)
    mine_native = analyze(core, ["--native"])["fingerprint"]
    if report["fingerprint"] != plain:
        raise Failure("fingerprint %s, glibc's gives %s" % (report["fingerprint"], plain))
    if name.endswith("-static"):
        # the C library is linked into the executable: its crashing
        # function is named, its library is the executable's (pycore
        # cannot tell the C library's code from the interpreter's there)
        exe = os.path.basename(report["process"]["executable"])
        lib, _, fn = mine_native["frames"][-1].partition(":")
        if (mine_native["frames"][:-1] != native["frames"][:-1] or mine_native["kind"] != native["kind"] or
                fn != native["frames"][-1].partition(":")[2] or not lib or not exe.startswith(lib)):
            raise Failure("--native: fingerprint frames %s, want glibc's %s with the library of the last "
                          "one the executable's (%s)" % (mine_native["frames"], native["frames"], exe))
        return "%s as on glibc; with --native %s, glibc's but for the library of %s" % (
            plain["hash"], " < ".join(mine_native["frames"]), native["frames"][-1])
    if mine_native != native:
        raise Failure("--native: fingerprint %s, glibc's gives %s" % (mine_native, native))
    return "%s, and %s with --native (%s), as on glibc" % (plain["hash"], native["hash"], " < ".join(native["frames"]))


def check_by_bytes(report):
    """Every file read for a module the dump records no build-id of was
    verified by its bytes; the executable's among them."""
    mods = report["process"]["modules"]
    exe = report["process"]["executable"]
    bad = [m["path"] for m in mods if m["file"] and not m["build_id"] and m.get("verified_by") != "bytes"]
    if bad:
        raise Failure("files read without a build-id, not verified by bytes: %s" % bad)
    byid = [m["path"] for m in mods if m["file"] and m["build_id"] and m.get("verified_by") != "build-id"]
    if byid:
        raise Failure("files with a build-id not said verified by it: %s" % byid)
    mine = [m for m in mods if m["path"] == exe]
    if not mine or mine[0]["build_id"] or mine[0].get("verified_by") != "bytes":
        raise Failure("the executable %s: %s, not a file without a build-id verified by its bytes" % (exe, mine))
    done = [m for m in mods if m.get("verified_by") == "bytes"]
    return "%d files by their bytes (%s: %d bytes compared)" % (len(done), os.path.basename(exe),
                                                                 mine[0]["verified_bytes"])


def check_type_names(truth, report):
    """Every variable's type name is the one the process recorded: the
    names of types defined in the interpreter live in its files' read-only
    data, which a core leaves out (read only from a file so verified)."""
    threads = dict((t["ident"], t) for i in report["interpreters"] for t in i["threads"])
    n = 0
    for tt in truth["threads"]:
        frames = [f for f in threads[tt["ident"]]["frames"] if f["kind"] == "python"]
        for tf, f in zip(tt["frames"], frames):
            got = dict((v["name"], v) for v in f["locals"] or [])
            for name, (tname, _, _, _) in tf["locals"].items():
                if name not in got or got[name]["type"] != tname:
                    raise Failure("%s: %s: type %r, the process says %r" % (
                        tf["function"], name, got.get(name, {}).get("type"), tname))
                n += 1
    return "%d variables' types" % n


def gdb_named_frames(target, core, tid):
    """gdb's frames of thread TID, innermost first: (inlined, pc, name)."""
    g = subprocess.run(["sh", "-c", 'ulimit -c 0; exec "$@"', "gdb", "gdb", "-nx", "-batch", "-ex",
                        gdb_native.GDB_THREAD % tid, target.host_exe(), core],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=scaled(180))
    frames = []
    for line in g.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("FRAME "):
            _, inline, pc, name = line.split(" ", 3)
            frames.append((inline == "1", int(pc, 16), name))
    return frames


def check_gdb_native(target, core):
    """The crashed thread's native frames before its first Python frame,
    with --native-all, are gdb's from #0 to the eval loop's frame that
    carries that Python call (merged into it): real frames by pc, inlined
    calls by name."""
    if not shutil.which("gdb"):
        raise Skip("gdb not installed")
    report = analyze(core, ["--native-all"])
    t = [t for i in report["interpreters"] for t in i["threads"] if t["crashed"]]
    if not t:
        raise Failure("no crashed thread")
    mine = []
    for f in t[0]["frames"]:
        if f["kind"] != "native":
            break
        mine.append(("I", f["function"]) if f["inlined"] else ("N", int(f["address"], 16)))
    gdb = gdb_named_frames(target, core, t[0]["tid"])
    first_eval = [i for i, (_, _, name) in enumerate(gdb) if name.startswith("_PyEval_EvalFrameDefault")]
    if not first_eval:
        raise Failure("gdb shows no eval loop: %s" % gdb)
    # the eval loop's inlined calls at that pc are the Python frame's too
    cut = first_eval[0]
    while cut > 0 and gdb[cut - 1][0] and gdb[cut - 1][1] == gdb[cut][1]:
        cut -= 1
    theirs = [("I", name) if inline else ("N", pc) for inline, pc, name in gdb[:cut]]
    if mine != theirs:
        raise Failure("native frames before Python\n  pycore %s\n  gdb    %s" % (
            [(k, v if k == "I" else hex(v)) for k, v in mine], [(k, v if k == "I" else hex(v)) for k, v in theirs]))
    names = [name for _, _, name in gdb[:cut]]
    return "%d frames as gdb's: %s" % (len(theirs), " < ".join(names))


def first_page_byte(path):
    """A file offset in EXE's first page, inside its first (read-only)
    PT_LOAD segment and past its program headers: the page the kernel
    dumps."""
    with open(path, "rb") as f:
        head = f.read(4096)
    phoff, = struct.unpack_from("<Q", head, 32)
    phentsize, phnum = struct.unpack_from("<HH", head, 54)
    for i in range(phnum):
        p_type, p_flags, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", head, phoff + i * phentsize)
        if p_type == 1 and p_offset == 0:
            if p_flags & 2:
                raise Failure("%s: its first segment is writable" % path)
            off = min(p_filesz, 4096) - 8
            if off <= phoff + phnum * phentsize:
                raise Failure("%s: its first page holds no more than its headers" % path)
            return off
    raise Failure("%s: no PT_LOAD at offset 0" % path)


def check_changed_copy(target, core, workdir):
    """The executable copied, one byte of the page the core holds of it
    changed, and given as --executable: refused, with the reason, in the
    JSON's module and in --verbose's module list."""
    exe = target.host_exe()
    copy = os.path.join(workdir, "changed-" + os.path.basename(exe))
    shutil.copyfile(exe, copy)
    off = flip_first_page(copy)
    rc, out, err = run_pycore(["analyze", "--format", "json", "--executable", copy, core])
    if rc not in (0, 1):
        raise Failure("--executable a changed copy: exit %d: %s" % (rc, err.strip()))
    report = load_report(out)
    mine = [m for m in report["process"]["modules"] if m["path"] == report["process"]["executable"]]
    want = "differs from the dump's copy of its ELF header page at file offset 0x%x" % off
    if not mine or mine[0]["file"] or not mine[0].get("refused") or want not in mine[0]["refused"] or \
            copy not in mine[0]["refused"]:
        raise Failure("the changed copy: module %s, not refused saying %r" % (mine, want))
    rc, out, err = run_pycore(["analyze", "--verbose", "--executable", copy, core])
    line = [ln for ln in out.splitlines() if ln.strip().startswith(report["process"]["executable"] + ": not read: ")]
    if rc not in (0, 1) or not line or want not in line[0]:
        raise Failure("--verbose's module list: exit %d, no line saying %r:\n%s" % (rc, want, out[-3000:]))
    return "exit %d: %s" % (rc, line[0].strip())


def flip_first_page(path):
    """One byte of PATH's dumped first page changed; its offset."""
    off = first_page_byte(path)
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x5a]))
    return off


def check_search_path(core, workdir):
    """_ctypes' directory hidden (a mount namespace of its own), its
    module found by name in --search-path: a true copy used, verified by
    its bytes; a copy with one byte of its dumped first page changed
    refused, the reason naming it."""
    mods = analyze(core, ["--native"])["process"]["modules"]
    ctypes = [m["path"] for m in mods if os.path.basename(m["path"]).startswith("_ctypes.")]
    if not ctypes:
        raise Failure("no _ctypes module among %s" % [m["path"] for m in mods])
    lib = ctypes[0]
    empty, good, bad = (os.path.join(workdir, d) for d in ("empty", "good", "bad"))
    for d in (empty, good, bad):
        os.makedirs(d, exist_ok=True)
    shutil.copyfile(lib, os.path.join(good, os.path.basename(lib)))
    shutil.copyfile(lib, os.path.join(bad, os.path.basename(lib)))
    off = flip_first_page(os.path.join(bad, os.path.basename(lib)))
    got = {}
    for d in (good, bad):
        rc, out, err = run_hidden([os.path.dirname(lib)], empty,
                                  ["analyze", "--native", "--format", "json", "--search-path", d, core])
        if rc not in (0, 1):
            if "unshare" in err or "mount" in err:
                raise Skip("no mount namespace here: %s" % err.strip())
            raise Failure("--search-path %s: exit %d: %s" % (d, rc, err.strip()))
        got[d] = [m for m in load_report(out)["process"]["modules"] if m["path"] == lib][0]
    m = got[good]
    if m["file"] != os.path.join(good, os.path.basename(lib)) or m["found_by"] != "search-path" or \
            m["verified_by"] != "bytes":
        raise Failure("the true copy: %s" % m)
    m = got[bad]
    want = "differs from the dump's copy of its ELF header page at file offset 0x%x" % off
    if m["file"] or not m["refused"] or want not in m["refused"] or bad not in m["refused"]:
        raise Failure("the changed copy: %s, not refused saying %r" % (m, want))
    return "the copy used (%d bytes compared), the changed one refused: %s" % (got[good]["verified_bytes"],
                                                                               m["refused"])


def check(name, target, scenario, workdir, subs):
    crashed = snap_signal = None
    if scenario == "crash":
        core, truth_path = take_crash(target, workdir, ["crash.py"], signal.SIGSEGV)
        crashed = signal.SIGSEGV
    else:
        core, truth_path, snap_signal = take_snapshot(target, scenario, workdir)
    truth = json.load(open(truth_path))
    args = ["--locals=deep"] if scenario == "locals" else []
    report = analyze(core, args)
    compare(truth, report, crashed, snap_signal)
    libc = musl_module(report, name.endswith("-static"))
    nthreads, tid_at = check_seam(core)
    if crashed == signal.SIGSEGV and report["process"]["signal"]["address"] != "0x0":
        raise Failure("fault address %s, the process touched 0x0" % report["process"]["signal"]["address"])
    subs.append(("text", check_text, (core, truth, args)))
    subs.append(("--native", check_native, (core, truth, crashed, snap_signal, args)))
    subs.append(("a compact dump (--save)", check_compact, (core, report, args, workdir)))
    if scenario == "crash":
        subs.append(("fingerprint as on glibc", check_fingerprint, (name, core, report, workdir)))
    if name.endswith("-nobuildid"):
        subs.append(("files without a build-id verified by their bytes", check_by_bytes, (report,)))
    if name.endswith("-nobuildid") and scenario == "locals":
        subs.append(("every local's type named as the process names it", check_type_names, (truth, report)))
    if name.endswith("-nobuildid") and scenario == "crash":
        subs.append(("--native-all: the crash's frames are gdb's up to Python", check_gdb_native,
                     (target, core)))
        subs.append(("a changed copy of the executable refused", check_changed_copy, (target, core, workdir)))
        subs.append(("--search-path: _ctypes' copy used, a changed one refused", check_search_path,
                     (core, workdir)))
    nframes = sum(len(t["frames"]) for t in truth["threads"])
    what = "%d threads, %d frames; %s; %d tids at struct pthread + %d" % (
        len(truth["threads"]), nframes, os.path.basename(libc), nthreads, tid_at)
    if scenario == "locals":
        listed_once(report)
        what += "; %d reprs exactly Python's" % compare_locals(truth, report)
    return what


def main():
    tap = TAP()
    names = [n for n in NAMES if n in interpreters.SANITIZER_PASS_BUILT] if interpreters.sanitizer_pass() else NAMES
    for name in names:
        target, why = interpreters.find(name)
        site = None
        if not why and name.endswith("-static"):
            site = tempfile.mkdtemp(prefix="pycore-musl-site-")
            with open(os.path.join(site, "sitecustomize.py"), "w") as f:
                f.write(STATIC_SITE)
            target.env = dict(os.environ, PYTHONPATH=site)
        if not why and not shutil.which("gcore"):
            why = "gcore not installed (Debian package gdb)"
        scenario_cases(tap, name, target, why, SCENARIOS,
                       lambda scenario, workdir, subs, name=name, target=target:
                       check(name, target, scenario, workdir, subs))
        if site:
            shutil.rmtree(site, ignore_errors=True)
    schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
