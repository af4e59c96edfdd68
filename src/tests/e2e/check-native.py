"""Native stacks with --native / --native-all, on real cores of every
interpreter present (src/tests/e2e/interpreters/*.interp).

- native scenario: a thread that never touches Python (libc's sleep started
  by pthread_create) is listed in "native_threads" with the OS thread id
  the process recorded, and its frames are gdb's for that thread, return
  address for return address; every Python thread's frames are the ones
  the process recorded, each run of them sitting right inside the eval
  loop call (_PyEval_EvalFrameDefault) that ran it;
- zero-stacks: gdb's gcore of a chrooted process writes thread stacks as
  zeros (a Debian unstable interpreter in its root; every other one in a
  root filesystem of its own, assembled from bind mounts in a private
  mount namespace); where a chain ends there (3.12+: an entry frame; 3.11
  and 3.12: the _PyCFrame holding the current frame) the thread says so,
  and its frames are still the process's own, recovered from the data
  stack where the chain lost them;
- gc_nogil: a collection whose finalizer released the GIL: with --native
  the thread whose native stack runs the collector carries the <GC>
  marker (the thread the process recorded), without it a warning says the
  thread is not known;
- aio_abort: os.abort() in an asyncio future's __del__ run from a task's
  coroutine: each of the three eval loop calls' Python frames woven inside
  its own, in the order the process recorded;
- finalizing: a __del__ run by Py_FinalizeEx at exit, blocked: the report
  says the runtime is finalizing, in the thread the process recorded;
- subinterp scenario (3.12+): two subinterpreters each run on a worker
  thread of the main interpreter: each is reported on the OS thread its
  code recorded (not the thread state's stale id), with its own slice of
  that thread's native stack (the top of it down to its own eval loop
  call, as many eval loop frames as it has calls; the worker's thread
  state the rest, out to the thread's start), and no frame is left
  unplaced.

Output: TAP, one line per case, every case that cannot run a skip by
name."""
import json
import os
import signal
import re
import shutil
import subprocess
import sys
import tempfile

import pycoretest as pt
from pycoretest import native as gdb_native
from pycoretest import interpreters
from pycoretest.env import scaled

def targets(tap):
    """(name, Target) for every interpreter present; a skip by name for
    the others."""
    out = []
    for name in interpreters.names():
        target, why = interpreters.find(name)
        if why:
            for scenario in SCENARIOS:
                tap.skip("%s %s" % (name, scenario), why)
        else:
            out.append((name, target))
    return out


def analyze(target, core, *opts):
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + list(opts) + target.pycore_args() +
                                 gdb_native.debug_args(target) + [core])
    if rc != 0:
        raise pt.Failure("pycore %s: exit %d: %s" % (" ".join(opts), rc, err.strip()))
    return pt.load_report(out)


def python_frames(thread):
    return [(f["function"], f["file"], f["line"]) for f in thread["frames"] if f["kind"] == "python"]


def check_woven(label, thread):
    """Each run of Python frames sits right inside an eval loop call: the
    next frame outwards is _PyEval_EvalFrameDefault."""
    frames = thread["frames"]
    for i, f in enumerate(frames):
        if f["kind"] == "python" and (i + 1 == len(frames) or frames[i + 1]["kind"] != "python"):
            nxt = frames[i + 1] if i + 1 < len(frames) else None
            if not nxt or nxt["kind"] != "native" or (nxt["function"] or "").split(".")[0] != gdb_native.EVAL:
                raise pt.Failure("%s: Python frame %s is not inside an eval loop call (next: %s)"
                                 % (label, f["function"], nxt and (nxt["kind"], nxt["function"])))


def unplaced(report):
    return [w for w in report["warnings"] if "placed after the native stack" in w]


def check_native_scenario(target, work):
    core, truth_path, _ = pt.take_snapshot(target, "native", work)
    truth = json.load(open(truth_path))
    tids = json.load(open(truth_path + ".native"))["native_tids"]
    if tids is None:
        raise pt.Skip("the process cannot list its threads (no /proc in %s)" % target.root)
    if len(tids) != 1:
        raise pt.Failure("the process saw %d new threads: %s" % (len(tids), tids))
    report = analyze(target, core, "--native-all")
    if unplaced(report):
        raise pt.Failure("frames left unplaced: %s" % unplaced(report))
    native = [t for t in report["native_threads"] if t["tid"] == tids[0]]
    if len(native) != 1:
        raise pt.Failure("native_threads %s, the process started thread %d"
                         % ([t["tid"] for t in report["native_threads"]], tids[0]))
    mine = native[0]["frames"]
    if not mine or any(f["kind"] != "native" for f in mine):
        raise pt.Failure("thread %d: frames %s" % (tids[0], mine))
    inlined = 0
    if shutil.which("gdb"):
        gdb_native.same_as_gdb("thread %d" % tids[0], target, core, native[0])
    python = [t for i in report["interpreters"] for t in i["threads"]]
    for tt in truth["threads"]:
        mt = [t for t in python if t["ident"] == tt["ident"]]
        if len(mt) != 1:
            raise pt.Failure("thread ident %s: %d in the report" % (tt["ident"], len(mt)))
        want = [(f["function"], f["file"], f["line"]) for f in tt["frames"]]
        if python_frames(mt[0]) != want:
            raise pt.Failure("thread %s: Python frames %s, the process says %s"
                             % (tt["name"], python_frames(mt[0]), want))
        check_woven("thread %s" % tt["name"], mt[0])
        if shutil.which("gdb") and tt.get("main"):
            inlined = gdb_native.same_as_gdb("thread %s" % tt["name"], target, core, mt[0])
    cache = debug_cache(target, core, work, report)
    # --native keeps the thread, without the interpreter's own frames
    plain = analyze(target, core, "--native")
    if tids[0] not in [t["tid"] for t in plain["native_threads"]]:
        raise pt.Failure("--native lost thread %d" % tids[0])
    return "thread %d: %d native frames%s; the main thread's, %d inlined calls among them, = gdb's; %s" % (
        tids[0], len(mine), " = gdb's" if shutil.which("gdb") else "", inlined, cache)


def debug_cache(target, core, work, report):
    """Compressed separate debug files (the host's libc6-dbg ships them so)
    get an uncompressed copy in the cache on the first analysis, read by
    the next; the report is the same byte for byte, with or without it.
    The cache is on another file system than the debug files where one is
    at hand (/dev/shm's tmpfs: copy_file_range refuses to cross them, and
    the cache stayed empty so; every other test's cache is in the build
    directory, on the debug files' own file system here)."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.path.isdir("/usr/lib/debug") and \
            os.stat(shm).st_dev != os.stat("/usr/lib/debug").st_dev and os.access(shm, os.W_OK):
        cache = tempfile.mkdtemp(prefix="pycore-debug-cache-", dir=shm)
        try:
            return cached_copies(target, core, report, cache) + " (the cache on %s)" % shm
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return cached_copies(target, core, report, os.path.join(work, "debug-cache"))


def cached_copies(target, core, report, cache):
    env = dict(os.environ, PYCORE_DEBUG_CACHE=cache)
    args = ["analyze", "--format", "json", "--native-all"] + target.pycore_args() + gdb_native.debug_args(target) + [core]
    runs = [pt.run_pycore(args, env=env), pt.run_pycore(args, env=env),
            pt.run_pycore(["--no-debug-cache"] + args)]
    if any(r[0] != 0 for r in runs) or len(set(r[1] for r in runs)) != 1:
        raise pt.Failure("debug cache: exits %s, the reports differ: %s" % (
            [r[0] for r in runs], [r[2].strip() for r in runs]))
    made = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
    compressed = []
    for m in report["process"]["modules"]:
        bid = m["build_id"]
        dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:]) if bid and not target.root else None
        if dbg and os.path.exists(dbg):
            r = subprocess.run(["readelf", "-SW", dbg], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if any(line.split()[-4:-3] and "C" in line.split()[-4] for line in r.stdout.decode().splitlines()
                   if ".debug_info" in line):
                compressed.append(bid)
    made = [f for f in made if not f.startswith(".")]
    libc = [m["build_id"] for m in report["process"]["modules"] if "/libc.so" in (m["path"] or "")]
    if not set(made) <= set(b + ".debug" for b in compressed) or \
       (libc and libc[0] in compressed and libc[0] + ".debug" not in made):
        raise pt.Failure("debug cache holds %s; the compressed debug files present are %s (libc's: %s)"
                         % (made, compressed, libc))
    return "%d of %d compressed debug files cached (those read), the same report" % (len(made), len(compressed))


def check_finalizing(target, work):
    """A __del__ run by Py_FinalizeEx, blocked there: the report says the
    runtime is finalizing, in the thread the process recorded."""
    core, truth_path, _ = pt.take_snapshot(target, "finalizing", work)
    truth = json.load(open(truth_path))
    if not truth["finalizing"]:
        raise pt.Failure("the process says it is not finalizing: the scenario is wrong")
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + target.pycore_args() + [core])
    report = pt.load_report(out) if rc in (0, 1) else None
    if not report:
        raise pt.Failure("exit %d: %s" % (rc, err.strip()))
    said = [w for w in report["warnings"] if w.startswith("the runtime is finalizing")]
    want = "in thread %d" % truth["tid"] if truth["tid"] is not None else "finalizing"
    if len(said) != 1 or want not in said[0]:
        raise pt.Failure("warnings %s; want one saying the runtime is finalizing, %s" % (report["warnings"], want))
    return said[0]


def check_aio_abort(target, work):
    """os.abort() in an asyncio future's __del__, run while a task's
    coroutine drops it: three eval loop calls on one stack (the finalizer,
    the coroutine started by the task's step from C, the event loop's
    Python frames).  With --native-all each run of Python frames must sit
    inside its own eval loop call, in the order the process recorded."""
    core, truth_path = pt.take_crash(target, work, ["aio_abort.py"], signal.SIGABRT)
    truth = json.load(open(truth_path))
    report = analyze(target, core, "--native-all")
    if unplaced(report):
        raise pt.Failure("frames left unplaced: %s" % unplaced(report))
    crashed = [t for i in report["interpreters"] for t in i["threads"] if t["crashed"]]
    want = [tt for tt in truth["threads"] if tt["ident"] == truth["crasher"]]
    if len(crashed) != 1 or len(want) != 1:
        raise pt.Failure("%d crashed threads in the report, %d in the truth" % (len(crashed), len(want)))
    frames = [(f["function"], f["file"], f["line"]) for f in want[0]["frames"]]
    if python_frames(crashed[0]) != frames:
        raise pt.Failure("Python frames %s, the process says %s" % (python_frames(crashed[0]), frames))
    check_woven("the aborting thread", crashed[0])
    runs = sum(1 for k, f in enumerate(crashed[0]["frames"]) if f["kind"] == "python" and
               k + 1 < len(crashed[0]["frames"]) and crashed[0]["frames"][k + 1]["kind"] != "python")
    return "%d Python frames in %d eval loop calls, each inside its own" % (len(frames), runs)


def check_subinterp_scenario(target, work):
    core, truth_path, _ = pt.take_snapshot(target, "subinterp", work)
    subs = [json.load(open(truth_path + ".sub%d" % n)) for n in (1, 2)]
    report = analyze(target, core, "--native-all")
    if unplaced(report):
        raise pt.Failure("frames left unplaced: %s" % unplaced(report))
    main = [i for i in report["interpreters"] if i["id"] == 0][0]
    for n, sub in enumerate(subs, 1):
        want = [(f["function"], f["file"], f["line"]) for f in sub["frames"]]
        mine = [t for i in report["interpreters"] if i["id"] != 0 for t in i["threads"]
                if python_frames(t) == want]
        if len(mine) != 1:
            raise pt.Failure("subinterpreter %d: %d threads run %s" % (n, len(mine), want))
        t = mine[0]
        if t["tid"] != sub["native_id"]:
            raise pt.Failure("subinterpreter %d: thread %s, its code ran on OS thread %d"
                             % (n, t["tid"], sub["native_id"]))
        check_woven("subinterpreter %d" % n, t)
        runner = [w for w in main["threads"] if w["tid"] == t["tid"]]
        if len(runner) != 1:
            raise pt.Failure("subinterpreter %d: no main-interpreter thread on OS thread %d" % (n, t["tid"]))
        check_woven("runner %d" % n, runner[0])
        # the same OS thread, one stack: the subinterpreter's slice is its
        # top down to its own (outermost) eval loop call, the runner's the
        # rest, from run_sub's call out to _start
        nat = [f for f in t["frames"] if f["kind"] == "native"]
        run_nat = [f for f in runner[0]["frames"] if f["kind"] == "native"]
        if not nat or not run_nat:
            raise pt.Failure("subinterpreter %d: %d native frames, its runner %d" % (n, len(nat), len(run_nat)))
        if (t["frames"][-1]["function"] or "").split(".")[0] != gdb_native.EVAL:
            raise pt.Failure("subinterpreter %d's slice ends at %s, not its eval loop call"
                             % (n, t["frames"][-1]["function"]))
        bottom = run_nat[-1]
        if any(f["address"] == bottom["address"] for f in nat):
            raise pt.Failure("subinterpreter %d: the thread's outermost frame %s is in its slice too"
                             % (n, bottom["function"]))
        evals = sum(1 for f in nat if (f["function"] or "").split(".")[0] == gdb_native.EVAL)
        runs = sum(1 for k, f in enumerate(t["frames"]) if f["kind"] == "python" and
                   k + 1 < len(t["frames"]) and t["frames"][k + 1]["kind"] != "python")
        if evals != runs:
            raise pt.Failure("subinterpreter %d: %d eval loop frames in its slice for its %d eval loop calls"
                             % (n, evals, runs))
    extra = ""
    if target.root:
        # without the debug files nothing names the eval loop: nothing may
        # be woven in then, and the report must say so
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--native-all"] + target.pycore_args()
                                     + [core])
        bare = pt.load_report(out) if rc in (0, 1) else None
        if not bare or not unplaced(bare) or any(
                f["kind"] == "python" and k + 1 < len(t["frames"]) and t["frames"][k + 1]["kind"] == "native"
                for i in bare["interpreters"] for t in i["threads"] for k, f in enumerate(t["frames"])):
            raise pt.Failure("without symbols for the eval loop: exit %d, warnings %s; want every Python "
                             "frame listed after the native stack, and said" % (rc, bare and bare["warnings"]))
        extra = "; without symbols, nothing woven and that said"
    return "both subinterpreters on their own OS threads, woven inside their runners' calls" + extra


def local_gcore(args):
    g = subprocess.run(["gcore"] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
    return g.returncode, g.stdout.decode("utf-8", "replace")[-300:]


def check_zero_stacks(target, work, gcore=local_gcore):
    """gdb's gcore of a process in a root filesystem (another mount
    namespace would do the same) writes its threads' C stacks as zeros:
    3.12+ keep each eval loop call's entry frame there, so each worker's
    chain ends at zeros.  Its frames must still be the process's own, all
    of them: the chain reached the thread's first frame (a warning says
    only the C stack is missing), or the outer frames are recovered from
    the data stack and marked so (the thread's error says how many)."""
    truth_path = os.path.join(work, "truth.json")
    proc = target.popen([target.scenario(work, "threads.py"), target.inside(truth_path)], work,
                        stdout=subprocess.PIPE)
    try:
        if not pt.wait_ready(proc):
            raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        core = os.path.join(work, "core")
        rc, out = gcore(["-o", core, str(proc.pid)])
        core = "%s.%d" % (core, proc.pid)
        if rc != 0 or not os.path.exists(core):
            raise pt.Failure("gcore failed: %s" % out)
    finally:
        proc.kill()
        proc.wait()
    truth = json.load(open(truth_path))
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + target.pycore_args() + [core])
    if rc not in (0, 1):
        raise pt.Failure("exit %d: %s" % (rc, err.strip()))
    report = pt.load_report(out)
    threads = [t for i in report["interpreters"] for t in i["threads"]]
    zeroed = 0
    for tt in truth["threads"]:
        mt = [t for t in threads if t["ident"] == tt["ident"]]
        if len(mt) != 1:
            raise pt.Failure("thread ident %s: %d in the report" % (tt["ident"], len(mt)))
        want = [(f["function"], f["file"], f["line"]) for f in tt["frames"]]
        if python_frames(mt[0]) != want:
            raise pt.Failure("thread %s: frames %s, the process says %s (error %s)"
                             % (tt["name"], python_frames(mt[0]), want, mt[0]["error"]))
        said = [w for w in report["warnings"] if w.startswith("thread %s: " % mt[0]["tid"]) and "reads as zeros" in w]
        error = mt[0]["error"] or ""
        if said or ("recovered" in error and ("reads as zeros" in error or "is NULL" in error)):
            zeroed += 1
    if not zeroed and target.minor() >= 11:
        raise pt.Failure("no thread says its C stack reads as zeros: %s" % report["warnings"])
    if not zeroed:
        return "before 3.11 frames live on the heap: every thread's frames read, none lost to the zeros"
    return "%d threads end at a zeroed C stack, say so, and keep every frame" % zeroed


CLONE_NEWNS = 0x00020000


def private_root_check(target, work, fn):
    """FN(chrooted, work, gcore) for an interpreter of this machine run in
    a root filesystem of its own: a child process enters a mount namespace
    of its own, assembles WORK/root there from read-only bind mounts (the
    Debian unstable root's /usr, whose C library is not this machine's, as
    a container's often is not; the interpreter's prefix, or for an
    interpreter of this machine's /usr, it and its standard library under
    /opt/pycore-host) and
    runs FN with the interpreter chrooted into it, and pycore in that
    namespace, where the paths the core names exist.  GCORE runs gdb's
    gcore here, outside the namespace, as for a container's process (gdb 13
    in the namespace, or with this machine's C library in the root, reads
    the stacks fine).  Requests and what FN returns or
    raises cross two pipes.  The mounts are private to the namespace from
    the start (never propagated here) and go with it when the child exits;
    checked gone before WORK is removed."""
    if os.geteuid() != 0:
        raise pt.Skip("a root filesystem of its own needs root (mount namespaces, chroot)")
    if not shutil.which("mount"):
        raise pt.Skip("mount not installed")
    real = os.path.realpath(target.exe)
    prefix = os.path.dirname(os.path.dirname(real))
    exe, binds = target.exe, [(prefix, prefix)]
    if prefix == "/usr" or prefix.startswith("/usr/"):
        # this machine's /usr gives way to the root's: the interpreter and
        # its standard library come in under a prefix of their own, where
        # it finds them (sys.prefix from its own location)
        m = re.match(r"python(\d+\.\d+)", os.path.basename(real))
        if not m or not os.path.isdir("/usr/lib/python" + m.group(1)):
            raise pt.Skip("no standard library of %s in /usr/lib" % target.exe)
        exe = "/opt/pycore-host/bin/" + os.path.basename(real)
        binds = [(real, exe), ("/usr/lib/python" + m.group(1), "/opt/pycore-host/lib/python" + m.group(1))]
    sid, why = pt.sid_root()
    if not sid:
        raise pt.Skip("no Debian unstable root for its /usr: %s" % why)
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    root = os.path.join(work, "root")
    up_r, up_w = os.pipe()
    down_r, down_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(up_r)
        os.close(down_w)
        up, down = os.fdopen(up_w, "w"), os.fdopen(down_r)

        def gcore(args):
            up.write(json.dumps({"gcore": args}) + "\n")
            up.flush()
            reply = json.loads(down.readline() or '{"rc": -1, "out": "no answer"}')
            return reply["rc"], reply["out"]
        try:
            if libc.unshare(CLONE_NEWNS) != 0:
                raise pt.Skip("unshare(CLONE_NEWNS): %s" % os.strerror(ctypes.get_errno()))
            subprocess.run(["mount", "--make-rprivate", "/"], check=True)
            os.makedirs(os.path.join(root, "tmp"))
            binds = [(sid + "/usr", "/usr")] + binds
            for d in ("/lib", "/lib64", "/bin", "/sbin"):
                if os.path.islink(sid + d):
                    os.symlink(os.readlink(sid + d), root + d)
                elif os.path.isdir(sid + d):
                    binds.append((sid + d, d))
            for src, d in binds:
                if os.path.isdir(src):
                    os.makedirs(root + d, exist_ok=True)
                else:  # a file is bound onto a file
                    os.makedirs(os.path.dirname(root + d), exist_ok=True)
                    open(root + d, "w").close()
                subprocess.run(["mount", "--bind", src, root + d], check=True)
                subprocess.run(["mount", "-o", "remount,bind,ro", root + d], check=True)
            chrooted = pt.Target(exe, root)
            out = {"how": "ok", "what": fn(chrooted, chrooted.workdir("zero-"), gcore)}
        except pt.Skip as e:
            out = {"how": "skip", "what": str(e)}
        except pt.Failure as e:
            out = {"how": "fail", "what": str(e)}
        except BaseException as e:  # noqa: B902 -- the child must always answer
            out = {"how": "fail", "what": "%s: %s" % (type(e).__name__, e)}
        up.write(json.dumps({"result": out}) + "\n")
        up.flush()
        os._exit(0)
    os.close(up_w)
    os.close(down_r)
    up, down = os.fdopen(up_r), os.fdopen(down_w, "w")
    out = {"how": "fail", "what": "the child died without a result"}
    for line in up:
        msg = json.loads(line)
        if "result" in msg:
            out = msg["result"]
            break
        try:
            g = subprocess.run(["gcore"] + msg["gcore"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=scaled(120))
            reply = {"rc": g.returncode, "out": g.stdout.decode("utf-8", "replace")[-300:]}
        except subprocess.TimeoutExpired:
            reply = {"rc": -1, "out": "gcore timed out"}
        down.write(json.dumps(reply) + "\n")
        down.flush()
    up.close()
    down.close()
    os.waitpid(pid, 0)
    if any(os.path.ismount(os.path.join(root, d)) for d in ("usr", "lib", "lib64", "bin", "sbin")):
        raise SystemExit("%s: a bind mount of the private root is visible outside its namespace; "
                         "not removing %s" % (sys.argv[0], work))
    if out["how"] == "skip":
        raise pt.Skip(out["what"])
    if out["how"] != "ok":
        raise pt.Failure(out["what"])
    return out["what"] + " (in a root filesystem of its own)"


def check_gc_nogil(target, work):
    """A collection whose finalizer released the GIL: without --native the
    report says which thread collects is not known; with it, the thread
    whose native stack runs the collector (the one the process recorded)
    carries the one <GC> marker, inside the collector's native frames."""
    core, truth_path, _ = pt.take_snapshot(target, "gc_nogil", work)
    truth = json.load(open(truth_path))
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + target.pycore_args() + gdb_native.debug_args(target)
                                 + [core])
    plain = pt.load_report(out) if rc in (0, 1) else None
    if not plain or plain["interpreters"][0]["gc_collecting"] is not True:
        raise pt.Failure("without --native: exit %d, gc_collecting %s" % (
            rc, plain and plain["interpreters"][0]["gc_collecting"]))
    # ("which thread is not known"; a free-threaded build's: "which thread collects is not known")
    if not any("which thread" in w and "is not known" in w for w in plain["warnings"]):
        raise pt.Failure("without --native: no warning that the collecting thread is unknown: %s"
                         % plain["warnings"])
    report = analyze(target, core, "--native-all")
    threads = [t for i in report["interpreters"] for t in i["threads"]]
    marked = [t for t in threads if any(f["kind"] == "gc" for f in t["frames"])]
    if len(marked) != 1 or marked[0]["ident"] != truth["crasher"]:
        raise pt.Failure("<GC> on threads %s; the process collects in %s"
                         % ([t["ident"] for t in marked], truth["crasher"]))
    frames = marked[0]["frames"]
    at = [k for k, f in enumerate(frames) if f["kind"] == "gc"]
    if len(at) != 1 or at[0] + 1 >= len(frames) or frames[at[0] + 1]["kind"] != "native":
        raise pt.Failure("the <GC> marker is not on the collector's native frames: %s"
                         % [(f["kind"], f["function"]) for f in frames])
    if any("which thread" in w and "is not known" in w for w in report["warnings"]):
        raise pt.Failure("with --native, still 'not known': %s" % report["warnings"])
    return "the collecting thread found by its native stack (%s)" % frames[at[0] + 1]["function"]


SCENARIOS = ("native", "subinterp", "zero-stacks", "gc_nogil", "finalizing", "aio_abort")


def main():
    tap = pt.TAP()
    if not shutil.which("gcore"):
        tap.skip("native stacks", "gcore not installed (Debian package gdb)")
        return tap.done()
    if not shutil.which("gdb"):
        tap.skip("native frames against gdb's", "gdb not installed")
    checks = {"native": check_native_scenario, "subinterp": check_subinterp_scenario,
              "zero-stacks": check_zero_stacks, "gc_nogil": check_gc_nogil, "finalizing": check_finalizing,
              "aio_abort": check_aio_abort}
    for name, target in targets(tap):
        minor = target.minor()
        for scenario in SCENARIOS:
            label = "%s %s" % (name, scenario)
            if scenario == "subinterp" and minor < 12:
                tap.skip(label, "separate interpreters in one process need 3.12+")
                continue
            if scenario == "zero-stacks" and not target.root:
                work = target.workdir("pycore-native-%s-%s-" % (name, scenario))
                pt.run_in(tap, label, work, private_root_check, target, work, check_zero_stacks)
                continue
            if scenario == "aio_abort" and minor < 7:
                tap.skip(label, "asyncio.run and get_running_loop need 3.7+")
                continue
            if scenario == "finalizing" and minor < 7:
                tap.skip(label, "3.6 keeps its finalizing flag in a static pycore does not read")
                continue
            if scenario == "gc_nogil" and minor < 7:
                tap.skip(label, "3.6 keeps its collecting flag in a static pycore does not read")
                continue
            work = target.workdir("pycore-native-%s-%s-" % (name, scenario))
            pt.run_in(tap, label, work, checks[scenario], target, work)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
