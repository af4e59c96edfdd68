"""Native stacks woven across greenlets' stack switches and past code
without call frame information (#36), with --native on Debian's
python3.11 (debian3.11), checked in JSON, text and HTML.

- greenlet / gevent crashes (the scenario greenlet_crash.py, the
  kernel's core of its SIGSEGV): a greenlet started by another greenlet
  (plain: a loop greenlet; gevent: the hub) crashes in
  ctypes.string_at(0).  No "placed after" warning; the thread's Python
  frames are the crashing greenlet's, as the process recorded, each run
  of them right inside an eval loop frame (--native-all) of the running
  greenlet's part of the stack, which is gdb's for the same core frame
  for frame; every native frame above it is marked with a suspended
  greenlet the process listed, the outermost with its main greenlet,
  and the stack reaches __libc_start_main; the text marks them
  "[greenlet 0x...]" and the HTML page too.
- no CFI (nocfi.S, built here with -fno-asynchronous-unwind-tables: no
  .eh_frame entry, checked with readelf): a thread runs through an
  assembly function into a ctypes callback that records the truth and
  sleeps (gcore's core).  "fp": the function sets up a frame pointer;
  "scan": it saves rbp and then clobbers it.  The frame after the
  assembly function is at the return address the function itself wrote
  down, marked "frame pointer" or "scan" (JSON found_by, text "[by ...]",
  HTML), and the stack goes on to the thread's start with every Python
  frame the process recorded woven in, no "placed after" warning; gdb's
  frames agree up to the assembly function (gdb goes wrong past it
  without a frame pointer), and in the "fp" case all the way.
- OpenBLAS (matmul.py, gcore's core while a thread multiplies; numpy on
  an OpenBLAS the process maps, OPENBLAS_CORETYPE=Haswell on a CPU with
  AVX2 and FMA so that the kernel is Haswell's hand-written one): a core
  where the thread is inside an OpenBLAS function without CFI (up to five
  tries), and its stack goes on past it, the next frame marked, to the
  thread's Python frames (the process's own) and its start.  A skip by
  name: numpy's BLAS is not OpenBLAS (Debian's libopenblas0-pthread,
  which scripts/install-deps unpacks in ~/.cache/pycore/openblas, or
  PYCORE_TEST_OPENBLAS, a directory holding OpenBLAS's libblas.so.3, put
  first on the scenario's library path), the CPU lacks AVX2, or the
  kernel caught has CFI after all.

Prints TAP; exit 0 pass, 1 fail."""
import json
import os
import signal
import subprocess
import sys
import time

import pycoretest as pt
from pycoretest import native as gdb_native
from pycoretest.htmlpage import Page, check_markup
from pycoretest.env import scaled

HERE = os.path.dirname(os.path.abspath(__file__))
EVAL = gdb_native.EVAL


def analyze(target, core, fmt, *opts):
    rc, out, err = pt.run_pycore(["analyze", "--format", fmt] + list(opts) + target.pycore_args() +
                                 gdb_native.debug_args(target) + [core])
    if rc != 0:
        raise pt.Failure("pycore --format %s %s: exit %d: %s" % (fmt, " ".join(opts), rc, err.strip()))
    return out


def report_of(target, core, *opts):
    return pt.load_report(analyze(target, core, "json", *opts))


def no_placed_after(report):
    bad = [w for w in report["warnings"] if "placed after" in str(w)]
    if bad:
        raise pt.Failure("warning: %s" % bad[0])


def thread_of(report, tid):
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["tid"] == tid:
                return t
    raise pt.Failure("no Python thread %d in the report" % tid)


def python_frames(frames):
    return [(f["function"], f["file"], f["line"]) for f in frames if f["kind"] == "python"]


def truth_frames(truth, tid=None, ident=None):
    for t in truth["threads"]:
        if (tid is not None and t["native_id"] == tid) or (ident is not None and t["ident"] == ident):
            return [(f["function"], f["file"], f["line"]) for f in t["frames"]]
    if len(truth["threads"]) == 1 and truth["threads"][0]["native_id"] is None:
        # gevent's patched threading knows no thread by its real ident:
        # the process's one thread
        return [(f["function"], f["file"], f["line"]) for f in truth["threads"][0]["frames"]]
    raise pt.Failure("the truth has no thread %s" % (tid if tid is not None else ident))


def check_woven(label, frames):
    """Each run of Python frames sits right inside an eval loop frame,
    and each eval loop frame of FRAMES holds a run (--native-all)."""
    for i, f in enumerate(frames):
        if f["kind"] == "python" and (i + 1 == len(frames) or frames[i + 1]["kind"] != "python"):
            nxt = frames[i + 1] if i + 1 < len(frames) else None
            if not nxt or not (nxt["function"] or "").startswith(EVAL):
                raise pt.Failure("%s: Python frame %s is followed by %s, not the eval loop" %
                                 (label, f["function"], nxt and nxt["function"]))
        if f["kind"] == "native" and (f["function"] or "").startswith(EVAL) and not f["inlined"]:
            if i == 0 or frames[i - 1]["kind"] != "python":
                raise pt.Failure("%s: eval loop frame %s at %d holds no Python frame" % (label, f["address"], i))


def gdb_agrees(label, target, core, tid, frames, upto=None):
    """gdb's frames of thread TID agree with FRAMES (pycore's native ones):
    all of gdb's, or its first UPTO real frames."""
    mine = gdb_native.pycore_frames({"frames": frames})
    theirs = gdb_native.gdb_frames(target, core, tid)
    if upto is not None:
        cut, real = 0, 0
        while cut < len(theirs) and real < upto:
            real += theirs[cut][0] == "N"
            cut += 1
        theirs = theirs[:cut]
    if theirs and theirs[-1] == ("N", None):
        theirs = theirs[:-1]
    if not theirs or mine[:len(theirs)] != theirs:
        raise pt.Failure("%s: native frames\n  pycore %s\n  gdb    %s" % (label, mine[:len(theirs) + 2], theirs))
    return len(theirs)


# -- greenlets -------------------------------------------------------------

def check_greenlets(target, mode, work):
    core, truth_path = pt.take_crash(target, work, ["greenlet_crash.py", mode], signal.SIGSEGV)
    truth = json.load(open(truth_path))
    gl = json.load(open(truth_path + ".greenlets"))
    report = report_of(target, core, "--native-all")
    no_placed_after(report)
    t = thread_of(report, gl["tid"])
    # (gevent's threading.get_ident names the greenlet: the thread by its
    # native id; the process recorded its frames in crash(), the call of
    # ctypes.string_at that faults is one more)
    want = truth_frames(truth, tid=gl["tid"])
    got = python_frames(t["frames"])
    if got[len(got) - len(want):] != want or [f[0] for f in got[:len(got) - len(want)]] != ["string_at"]:
        raise pt.Failure("the thread's Python frames %s, the process says %s under string_at" % (got, want))
    suspended = set(g["address"] for g in gl["greenlets"] if not g["running"])
    main = [g["address"] for g in gl["greenlets"] if g["main"]]
    frames = t["frames"]
    first = next((i for i, f in enumerate(frames) if f["kind"] == "native" and f["greenlet"]), None)
    if first is None:
        raise pt.Failure("no native frame is marked with a suspended greenlet")
    running = frames[:first]
    check_woven("the running greenlet's frames", running)
    above = [f for f in frames[first:]]
    if any(f["kind"] != "native" for f in above):
        raise pt.Failure("Python frames above the running greenlet's slice: %s" % python_frames(above))
    strays = sorted(set(f["greenlet"] for f in above) - suspended)
    if strays:
        raise pt.Failure("frames marked with %s, not suspended greenlets of the thread (%s)" % (strays, sorted(suspended)))
    if len(main) != 1 or above[-1]["greenlet"] != main[0]:
        raise pt.Failure("the outermost frame is marked %s, the main greenlet is %s" % (above[-1]["greenlet"], main))
    if not any(f["function"] == "__libc_start_main" for f in above):
        raise pt.Failure("the stack does not reach __libc_start_main: %s" % [f["function"] for f in above[-5:]])
    n = gdb_agrees("the running greenlet's part", target, core, gl["tid"], running,
                   upto=sum(1 for f in running if f["kind"] == "native" and not f["inlined"]))
    # each suspended greenlet's own stack: its native frames from where it
    # was switched out (the first found by a scan), its Python frames (the
    # process's gr_frame chain) woven into its eval loop calls
    listed = dict((g["address"], g) for g in t["greenlets"])
    for w in gl["greenlets"]:
        if w["running"]:
            continue
        g = listed.get(w["address"])
        label = "greenlet %s" % w["address"]
        if g is None or g["state"] != "suspended":
            raise pt.Failure("%s: not reported suspended: %s" % (label, g and g["state"]))
        wanted = [(f["function"], f["file"], f["line"]) for f in w["stack"]]
        if python_frames(g["stack"]) != wanted:
            raise pt.Failure("%s: Python frames %s, the process says %s" % (label, python_frames(g["stack"]), wanted))
        check_woven(label, g["stack"])
        natives = [f for f in g["stack"] if f["kind"] == "native"]
        if not natives or natives[0]["found_by"] != "scan" or any(f["greenlet"] for f in natives):
            raise pt.Failure("%s: native frames %s" % (label, [(f["function"], f["found_by"]) for f in natives[:3]]))
        if w["main"] and natives[-1]["function"] != "__libc_start_main" and \
           not any(f["function"] == "__libc_start_main" for f in natives):
            raise pt.Failure("%s: the main greenlet's stack does not reach __libc_start_main" % label)
    text = analyze(target, core, "text", "--native")
    for addr in set(f["greenlet"] for f in above):
        if "[greenlet %s]" % addr not in text:
            raise pt.Failure("text: no frame marked [greenlet %s]" % addr)
    if "placed after" in text:
        raise pt.Failure("text: a 'placed after' warning")
    html = analyze(target, core, "html", "--native-all")
    check_markup(Page(html), "html")
    if html.count('class="mark greenlet"') < len(above) or main[0] not in html:
        raise pt.Failure("html: %d frames marked greenlet, %d above the slice" %
                         (html.count('class="mark greenlet"'), len(above)))
    return ("%d Python frames woven in the running greenlet's %d frames (gdb's %d), %d above in %d greenlets' "
            "slices; %d suspended greenlets' own stacks woven" % (
                len(want), len(running), n, len(above), len(set(f["greenlet"] for f in above)),
                sum(1 for w in gl["greenlets"] if not w["running"])))


# -- no CFI ------------------------------------------------------------------

def build_nocfi(work):
    out = os.path.join(work, "libnocfi.so")
    b = subprocess.run(["cc", "-shared", "-fPIC", "-fno-asynchronous-unwind-tables", "-o", out,
                        os.path.join(pt.SCENARIOS, "nocfi.S")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b.returncode != 0:
        raise pt.Failure("cannot build libnocfi.so: %s" % b.stdout.decode("utf-8", "replace")[-400:])
    r = subprocess.run(["readelf", "--debug-dump=frames", out], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if b" FDE " in r.stdout:
        raise pt.Failure("libnocfi.so has call frame information after all")


def check_nocfi(target, variant, work):
    if not shutil_which("cc") or not shutil_which("readelf"):
        raise pt.Skip("no cc or readelf (Debian packages gcc, binutils)")
    build_nocfi(work)
    core, truth_path, _ = pt.take_snapshot(target, "nocfi", work, args=[variant])
    truth = json.load(open(truth_path))
    facts = json.load(open(truth_path + ".nocfi"))
    how = {"fp": "frame pointer", "scan": "scan"}[variant]
    report = report_of(target, core, "--native-all")
    no_placed_after(report)
    t = thread_of(report, facts["tid"])
    frames = t["frames"]
    want = truth_frames(truth, tid=facts["tid"])
    if python_frames(frames) != want:
        raise pt.Failure("Python frames %s, the process says %s" % (python_frames(frames), want))
    check_woven("the thread", frames)
    at = [i for i, f in enumerate(frames) if f["kind"] == "native" and f["function"] == facts["function"]]
    if len(at) != 1:
        raise pt.Failure("%d frames of %s" % (len(at), facts["function"]))
    nxt = frames[at[0] + 1]
    if nxt["address"] != "0x%x" % facts["return_address"] or nxt["found_by"] != how:
        raise pt.Failure("after %s: %s found by %s, the function returns to 0x%x (%s)" % (
            facts["function"], nxt["address"], nxt["found_by"], facts["return_address"], how))
    if frames[-1]["function"] not in ("__clone3", "clone3", "__clone", "clone"):
        raise pt.Failure("the stack ends in %s, not the thread's start" % frames[-1]["function"])
    natives = [f for f in frames if f["kind"] == "native" and not f["inlined"]]
    upto = None if variant == "fp" else natives.index(frames[at[0]]) + 1
    n = gdb_agrees("native frames", target, core, facts["tid"], frames, upto)
    text = analyze(target, core, "text", "--native")
    line = [l for l in text.splitlines() if "0x%x " % facts["return_address"] in l]
    if not line or "[by %s]" % how not in line[0]:
        raise pt.Failure("text: the frame at 0x%x is not marked [by %s]: %s" % (facts["return_address"], how, line))
    html = analyze(target, core, "html", "--native")
    check_markup(Page(html), "html")
    if '<span class="mark found-by">by %s</span>' % how not in html:
        raise pt.Failure("html: no frame marked by %s" % how)
    return "the frame after %s found by %s at its return address, %d Python frames woven, gdb's %d frames agree" % (
        facts["function"], how, len(want), n)


def shutil_which(name):
    import shutil
    return shutil.which(name)


# -- OpenBLAS ----------------------------------------------------------------

def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def matmul_core(target, work, env):
    truth_path = os.path.join(work, "truth.json")
    proc = subprocess.Popen([target.exe, os.path.join(pt.SCENARIOS, "matmul.py"), truth_path], cwd=work, env=env,
                            stdout=subprocess.PIPE)
    try:
        if not pt.wait_ready(proc):
            raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        facts = json.load(open(truth_path + ".matmul"))
        if not any("openblas" in b.lower() for b in facts["blas"]):
            raise pt.Skip("numpy's BLAS here is not OpenBLAS (%s; Debian's libopenblas0-pthread, or "
                          "PYCORE_TEST_OPENBLAS)" % ", ".join(facts["blas"]))
        cores = []
        for k in range(5):
            time.sleep(0.3)
            g = subprocess.run(["gcore", "-o", os.path.join(work, "core%d" % k), str(proc.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
            core = os.path.join(work, "core%d.%d" % (k, proc.pid))
            if g.returncode != 0 or not os.path.exists(core):
                raise pt.Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-300:])
            cores.append(core)
        return cores, json.load(open(truth_path)), facts
    finally:
        proc.kill()
        proc.wait()


# scripts/install-deps unpacks Debian's libopenblas0-pthread here (never
# installed: it would become this machine's libblas.so.3 for every numpy)
UNPACKED_OPENBLAS = os.path.join(os.environ.get("PYCORE_OPENBLAS") or
                                 os.path.expanduser("~/.cache/pycore/openblas/root"),
                                 "usr/lib/x86_64-linux-gnu/openblas-pthread")


def check_openblas(target, work):
    if not {"avx2", "fma"} <= cpu_flags():
        raise pt.Skip("the CPU lacks AVX2 or FMA: no Haswell kernel of OpenBLAS to run")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OPENBLAS_CORETYPE="Haswell")
    openblas = os.environ.get("PYCORE_TEST_OPENBLAS") or UNPACKED_OPENBLAS
    if os.path.isfile(os.path.join(openblas, "libblas.so.3")):
        env["LD_LIBRARY_PATH"] = openblas
    cores, truth, facts = matmul_core(target, work, env)
    want = truth_frames(truth, tid=facts["tid"])
    want[0] = (want[0][0], want[0][1], facts["line"])
    caught = []  # OpenBLAS functions caught that have CFI
    for core in cores:
        report = report_of(target, core, "--native-all")
        t = thread_of(report, facts["tid"])
        frames = t["frames"]
        blas = [i for i, f in enumerate(frames) if f["kind"] == "native" and not f["inlined"] and
                "openblas" in (f["file"] or "").lower()]
        if not blas:
            continue
        nxt = frames[blas[0] + 1] if blas[0] + 1 < len(frames) else None
        if nxt is None or nxt["found_by"] is None:
            caught.append(frames[blas[0]]["function"])  # unwound by its CFI
            continue
        no_placed_after(report)
        if python_frames(frames) != want:
            raise pt.Failure("Python frames %s, the process says %s" % (python_frames(frames), want))
        check_woven("the matmul thread", frames)
        marked = [f for f in frames if f["kind"] == "native" and f["found_by"]]
        if frames[-1]["function"] not in ("__clone3", "clone3", "__clone", "clone"):
            raise pt.Failure("the stack ends in %s, not the thread's start" % frames[-1]["function"])
        text = analyze(target, core, "text", "--native")
        if "[by %s]" % marked[0]["found_by"] not in text or "placed after" in text:
            raise pt.Failure("text: no frame marked [by %s], or a 'placed after' warning" % marked[0]["found_by"])
        html = analyze(target, core, "html", "--native")
        check_markup(Page(html), "html")
        if '<span class="mark found-by">by %s</span>' % marked[0]["found_by"] not in html:
            raise pt.Failure("html: no frame marked by %s" % marked[0]["found_by"])
        return "caught in %s: %s found by %s, %d Python frames woven" % (
            frames[blas[0]]["function"], marked[0]["function"], marked[0]["found_by"], len(want))
    if caught:
        raise pt.Skip("OpenBLAS's %s has call frame information here: nothing to go past" % caught[0])
    raise pt.Failure("in %d cores the thread was never inside OpenBLAS" % len(cores))


def main():
    tap = pt.TAP()
    cases = [("debian3.11", "greenlet crash --native", "greenlet", check_greenlets, ("plain",)),
             ("debian3.11", "gevent crash --native", "gevent", check_greenlets, ("gevent",)),
             ("sid3.14", "greenlet crash --native", "greenlet", check_greenlets, ("plain",)),
             ("sid3.14", "gevent crash --native", "gevent", check_greenlets, ("gevent",)),
             ("debian3.11", "no CFI, by frame pointer", None, check_nocfi, ("fp",)),
             ("debian3.11", "no CFI, by scan", None, check_nocfi, ("scan",)),
             ("debian3.11", "OpenBLAS matmul thread", "numpy", check_openblas, ())]
    for name, label, module, fn, args in cases:
        label = "%s %s" % (name, label)
        target, why = pt.interpreter(os.path.join(HERE, "interpreters", name + ".interp"))
        if why:
            tap.skip(label, why)
            continue
        if module:
            p = target.popen(["-c", "import " + module], target.root or "/", stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
            if p.wait() != 0:
                tap.skip(label, "%s cannot import %s (Debian's python3-%s)" % (name, module, module))
                continue
        work = target.workdir("pycore-weave-")
        pt.run_in(tap, label, work, fn, target, *(args + (work,)))
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
