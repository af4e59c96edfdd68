"""pycore batch over real cores, and crash fingerprints.

Cores made here: the crash scenario (SIGSEGV in strlen) on every pyenv
interpreter 3.6-3.13 and once more from a copy of the script in another
directory with its lines moved; the abort scenario (SIGABRT); gcore
snapshots of the threads and exceptions scenarios; a zstd and an xz copy
of the threads snapshot (large: the xz copy's decompression takes a while,
which makes the hostile cases below).  Then:
  * one batch, --jobs 2, over them with a garbage file, a missing path, a
    truncated core, a dump whose worker hangs (this test stops it with
    SIGSTOP, the worker found by the dump it holds open) and one whose
    worker crashes (SIGSEGV from this test) in the middle: every real dump
    has its report, whose stacks match what the process recorded; the
    others have error records ("timeout", "crashed", ...); exit 0;
  * the xz dump alone with a --timeout shorter than its analysis takes;
  * --max-memory too small for the zstd dump's decompression: an error
    record for it, the others reported (not under AddressSanitizer, whose
    shadow memory needs more than any small limit);
  * --ordered keeps input order; --shard K/N for N = 3 partitions the dumps
    exactly as FNV-1a 64 of the path mod N (computed here independently);
    --skip-done leaves out what a file of earlier records holds (a line cut
    short is not a record; a path that is not UTF-8, its bytes written as
    lone surrogates, is read back); lists on standard input (newline and -0);
    directories searched recursively (the truth files beside the cores are
    not dumps); a progress line only when stderr is a terminal;
  * warm processes: every uncompressed core, and one of a fault
    faulthandler re-raised, three times over (hard links),
    --ordered, with warm processes (the default) and without
    (--warm-builds 0): the two outputs are the same bytes, and with one
    warm build at a time under a 1 MB cap (--warm-builds 1 --warm-memory
    1: processes ended as soon as they are idle) too; then the
    recursion scenario's snapshot (slow enough to catch its worker) seven
    times over, --jobs 1: the worker of one copy, forked by the warm
    process of that build, is killed with SIGSEGV by this test; that copy
    gets an error record ("crashed"), every other record is the cold run's,
    and copies after it are analyzed by workers of the same warm process;
  * fingerprints: the crash scenario on every interpreter, and moved, gives
    one fingerprint whose frames are the crashed thread's recorded frames
    normalized (and with --native one more, the same everywhere, ending in
    libc's strlen); abort, threads and exceptions each give another.

Output: TAP, one line per case; a case that cannot run here is a skip by name.
"""
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.env import scaled

Failure = pt.Failure


def batch(args, stdin=None, timeout=300):
    p = subprocess.run([pt.PYCORE, "batch"] + args, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=scaled(timeout))
    records = pt.validator().check(p.stdout.decode("utf-8", "replace"), "batch output")
    return p.returncode, records, p.stderr.decode("utf-8", "replace")


def paths_of(records):
    return [r["input"]["path"] for r in records]


def normalized(frames):
    """The recorded frames as the fingerprint (version 2) names them."""
    out = []
    for f in frames:
        base = os.path.basename(f["file"])
        out.append("%s:%s" % (base[:-3] if base.endswith(".py") else base, f["function"]))
    return out[:5]


def crashed_truth(truth_path):
    truth = json.load(open(truth_path))
    return truth, [t for t in truth["threads"] if t.get("main")][0]


class Moved(pt.Target):
    """The crash scenario copied to another directory, three lines lower."""

    def __init__(self, exe, scripts):
        pt.Target.__init__(self, exe)
        self.scripts = scripts

    def scenario(self, workdir, script):
        return os.path.join(self.scripts, script)


def make_cores(work):
    """{name: (core, truth path or None, signal or None)}; skips by name."""
    cores = {}
    pythons = interpreters.pyenv_pythons()
    for exe in pythons:
        name = "crash-" + os.path.basename(exe)[6:]
        d = os.path.join(work, name)
        os.makedirs(d)
        try:
            core, truth = pt.take_crash(exe, d, ["crash.py"], signal.SIGSEGV)
        except pt.Skip as why:
            print("# %s: no core: %s" % (name, why))
            continue
        cores[name] = (core, truth, signal.SIGSEGV)
    if not cores:
        return cores, pythons
    newest = pythons[-1]
    scripts = os.path.join(work, "elsewhere", "scripts")
    os.makedirs(scripts)
    shutil.copy(os.path.join(pt.SCENARIOS, "_truth.py"), scripts)
    with open(os.path.join(scripts, "crash.py"), "w") as f:
        f.write("\n\n\n" + open(os.path.join(pt.SCENARIOS, "crash.py")).read())
    d = os.path.join(work, "moved")
    os.makedirs(d)
    core, truth = pt.take_crash(Moved(newest, scripts), d, ["crash.py"], signal.SIGSEGV)
    cores["moved"] = (core, truth, signal.SIGSEGV)
    d = os.path.join(work, "abort")
    os.makedirs(d)
    core, truth = pt.take_crash(newest, d, ["abort.py"], signal.SIGABRT)
    cores["abort"] = (core, truth, signal.SIGABRT)
    for scenario in ("threads", "exceptions"):
        d = os.path.join(work, scenario)
        os.makedirs(d)
        core, truth = pt.take_gcore(newest, scenario, d)
        cores[scenario] = (core, truth, None)
    return cores, pythons


def check_reports(cores, records):
    """Each real dump's record is its report, matching what the process
    recorded."""
    by_path = dict((r["input"]["path"], r) for r in records)
    for name, (core, truth_path, signo) in sorted(cores.items()):
        r = by_path.get(core)
        if r is None:
            raise Failure("%s: no record" % name)
        if "error" in r:
            raise Failure("%s: error record %s" % (name, r["error"]))
        pt.compare(json.load(open(truth_path)), r, signo)


def children(pid):
    try:
        return open("/proc/%d/task/%d/children" % (pid, pid)).read().split()
    except OSError:
        return []


def holding(pid, paths):
    """{path: pid} of PID's children that hold one of PATHS open or mapped."""
    want = dict((os.path.realpath(p), p) for p in paths)
    found = {}
    for c in children(pid):
        try:
            # the dump is open, or mapped (its descriptor closed)
            names = [os.readlink("/proc/%s/fd/%s" % (c, fd)) for fd in os.listdir("/proc/%s/fd" % c)]
            names += [line.split(None, 5)[-1].strip() for line in open("/proc/%s/maps" % c)]
        except OSError:
            continue
        for name in names:
            if name in want:
                found[want[name]] = int(c)
    return found


def hostile_batch(args, signals):
    """Run batch ARGS; the worker that opens a dump of SIGNALS ({path:
    signal}) gets that signal (SIGSTOP: a worker that hangs; SIGSEGV: one
    that crashes).  Returns (exit code, records, stderr, {path: pid hit})."""
    p = subprocess.Popen([pt.PYCORE, "batch"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=signal_env())
    hit = {}
    out = []

    def read_out():
        out.append(p.stdout.read())
    reader = threading.Thread(target=read_out)
    reader.start()
    while p.poll() is None and len(hit) < len(signals):
        for path, pid in holding(p.pid, [s for s in signals if s not in hit]).items():
            os.kill(pid, signals[path])
            hit[path] = pid
        time.sleep(0.0005)
    err = p.stderr.read()
    p.wait(timeout=scaled(300))
    reader.join()
    records = pt.validator().check(out[0].decode("utf-8", "replace"), "batch output")
    return p.returncode, records, err.decode("utf-8", "replace"), hit


def sanitized():
    return b"__asan_init" in open(pt.PYCORE, "rb").read()


def signal_env():
    """The environment of a batch whose worker this test kills with
    SIGSEGV: under AddressSanitizer its handler would take the signal,
    which can arrive inside the allocator, and report it (or hang in its
    locks until the worker's timeout); the signal must end the worker as it
    ends a production build's."""
    env = dict(os.environ)
    if sanitized():
        env["ASAN_OPTIONS"] = ":".join(o for o in (env.get("ASAN_OPTIONS"), "handle_segv=0") if o)
    return env


def check_progress(paths):
    """With stderr a terminal: progress lines (carriage return, counts);
    without one (every other run here): the summary line alone."""
    pid, fd = pty.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(pt.PYCORE, [pt.PYCORE, "batch", "--jobs", "2"] + paths)
    buf = b""
    while True:
        r, _, _ = select.select([fd], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    _, status = os.waitpid(pid, 0)
    text = buf.decode("utf-8", "replace")
    if os.WEXITSTATUS(status) != 0 or "\r\x1b[K" not in text or "/%d dumps" % len(paths) not in text:
        raise Failure("no progress line on a terminal: %r" % text[-300:])


def main():
    tap = pt.TAP()
    name = "batch over real cores: hostile inputs, order, shards, skip-done, fingerprints"
    if not shutil.which("gcore") or not shutil.which("zstd") or not shutil.which("xz"):
        tap.skip(name, "needs gcore (Debian package gdb), zstd and xz (xz-utils)")
        return tap.done()
    _, why = pt.kernel_core_usable()
    if why:
        tap.skip(name, "kernel cores: %s" % why)
        return tap.done()
    work = tempfile.mkdtemp(prefix="pycore-batch-")
    pt.run_in(tap, name, work, run, tap, work)
    pt.schema_summary(tap)
    return tap.done()


def run(tap, work):
    cores, pythons = make_cores(work)
    if not cores:
        raise pt.Skip("no pyenv interpreter under %s/versions" % interpreters.pyenv_root())
    real = [cores[n][0] for n in sorted(cores)]

    # hostile inputs: garbage, a missing path, a truncated core, a dump
    # whose analysis outlasts --timeout
    garbage = os.path.join(work, "garbage.core")
    with open(garbage, "wb") as f:
        f.write(os.urandom(1 << 16))
    missing = os.path.join(work, "missing.core")
    truncated = os.path.join(work, "truncated.core")
    with open(truncated, "wb") as f:
        f.write(open(cores["abort"][0], "rb").read(200000))
    big = os.path.join(work, "big.core.zst")
    subprocess.run(["zstd", "-q", "-1", cores["threads"][0], "-o", big], check=True)
    # xz decompresses ten times slower than zstd: a dump slow enough to
    # catch its worker, and to time out
    slow = os.path.join(work, "slow.core.xz")
    with open(cores["threads"][0], "rb") as src, open(slow, "wb") as dst:
        subprocess.run(["xz", "-c", "-0", "-T1"], stdin=src, stdout=dst, check=True)
    times = []
    for _ in range(3):
        t = time.time()
        subprocess.run([pt.PYCORE, "analyze", "--format", "json", slow], stdout=subprocess.DEVNULL, check=True)
        times.append(time.time() - t)
    short = min(times) / 8

    # a dump whose worker hangs (stopped by this test) and one whose worker
    # crashes (SIGSEGV from this test), among the others; their
    # decompression takes long enough to catch the worker in it, and if one
    # was missed the whole batch is run again (at most 5 times)
    hang = os.path.join(work, "hang.core.xz")
    crash = os.path.join(work, "crash.core.xz")
    shutil.copy(slow, hang)
    shutil.copy(slow, crash)
    half = len(real) // 2
    inputs = real[:half] + [garbage, missing, truncated, hang, crash] + real[half:]
    for attempt in range(5):
        t = time.time()
        # (the timeout scales with the machine)
        rc, records, err, hit = hostile_batch(["--jobs", "2", "--timeout", "%.0f" % max(5, scaled(5))] + inputs,
                                              {hang: signal.SIGSTOP, crash: signal.SIGSEGV})
        elapsed = time.time() - t
        if len(hit) == 2:
            break
    else:
        raise Failure("could not catch the workers of %s and %s in 5 attempts" % (hang, crash))
    if rc != 0:
        raise Failure("batch exit %d: %s" % (rc, err.strip()))
    if sorted(paths_of(records)) != sorted(inputs):
        raise Failure("batch: records for %s, inputs %s" % (paths_of(records), inputs))
    check_reports(cores, records)
    errs = dict((r["input"]["path"], r["error"]) for r in records if "error" in r)
    for path, codes in ((garbage, ("format",)), (missing, ("io",)), (hang, ("timeout",)), (crash, ("crashed",))):
        if errs.get(path, {}).get("code") not in codes:
            raise Failure("%s: record %s, want error code %s" % (path, errs.get(path), " or ".join(codes)))
    if "SIGSEGV" not in errs[crash]["message"]:
        raise Failure("a crashed worker's record does not name the signal: %s" % errs[crash])
    trunc = [r for r in records if r["input"]["path"] == truncated][0]
    if "error" not in trunc and not trunc["warnings"]:
        raise Failure("a truncated core reported without an error or a warning")
    summary = err.strip().splitlines()[-1:] if sanitized() else err.strip().splitlines()
    if len(summary) != 1 or "pycore: batch: %d dumps, %d ok" % (len(inputs), len(real)) not in summary[0]:
        raise Failure("stderr is not the one summary line: %r" % err[-2000:])
    tap.ok("batch --jobs 2 of %d dumps (%d real; garbage, missing, truncated, a hung worker, a crashed "
          "worker) in %.2f s: %s" % (len(inputs), len(real), elapsed, summary[0]))
    tap.ok("the hung worker: %s; the crashed one: %s" % (errs[hang]["message"], errs[crash]["message"]))

    # a dump whose analysis itself outlasts a short --timeout
    if short >= 0.01:
        rc, records, err = batch(["--timeout", "%.3f" % short, slow])
        if rc != 0 or records[0].get("error", {}).get("code") != "timeout":
            raise Failure("%s with --timeout %.3f (analyze takes %.3f s): exit %d, %s"
                          % (slow, short, min(times), rc, records[0].get("error") or "reported"))
        tap.ok("--timeout %.3f on a dump analyzed in %.3f s: %s" % (short, min(times), records[0]["error"]["message"]))
    else:
        tap.skip("--timeout", "the xz dump is analyzed in %.3f s, too fast to time out reliably" % min(times))

    if sanitized():
        tap.skip("--max-memory", "under AddressSanitizer (its shadow memory needs more than any small limit)")
    else:
        # A dump that needs more than the limit gets an out-of-memory
        # record (2 MB: the big core's decompression), and a real core's
        # analysis fits a modest one (16 MB: its fault search, thread
        # matching and signal frames need about 5 since every signal the
        # process sent itself is traced, an abort's too)
        rc, records, err = batch(["--max-memory", "2", big])
        got = dict((r["input"]["path"], r) for r in records)
        if rc != 0 or got.get(big, {}).get("error", {}).get("code") != "out-of-memory":
            raise Failure("--max-memory 2: exit %d, %s" % (rc, [(p, r.get("error")) for p, r in got.items()]))
        message = got[big]["error"]["message"]
        rc, records, err = batch(["--max-memory", "16", real[0]])
        got = dict((r["input"]["path"], r) for r in records)
        if rc != 0 or real[0] not in got or "error" in got[real[0]]:
            raise Failure("--max-memory 16: exit %d, %s" % (rc, [(p, r.get("error")) for p, r in got.items()]))
        tap.ok("--max-memory 2: %s; 16: %s analyzed" % (message, os.path.relpath(real[0], work)))

    rc, records, err = batch(["--ordered", "--jobs", "2"] + inputs[::-1])
    if rc != 0 or paths_of(records) != inputs[::-1]:
        raise Failure("--ordered: exit %d, order %s" % (rc, paths_of(records)))
    tap.ok("--ordered: %d records in input order" % len(records))

    shards = []
    for k in range(3):
        rc, records, err = batch(["--shard", "%d/3" % k] + inputs)
        if rc != 0:
            raise Failure("--shard %d/3: exit %d: %s" % (k, rc, err.strip()))
        want = [p for p in inputs if pt.fnv1a64(p.encode()) % 3 == k]
        if sorted(paths_of(records)) != sorted(want):
            raise Failure("--shard %d/3: %s, FNV-1a 64 mod 3 says %s" % (k, paths_of(records), want))
        shards.append(set(paths_of(records)))
    if set().union(*shards) != set(inputs) or sum(len(s) for s in shards) != len(inputs):
        raise Failure("--shard: the shards %s do not partition %s" % (shards, inputs))
    tap.ok("--shard K/3: %s dumps, disjoint, together all %d" % ([len(s) for s in shards], len(inputs)))

    done = os.path.join(work, "done.jsonl")
    rc, first, err = batch(real[:3])
    with open(done, "w") as f:
        for r in first[:2]:
            f.write(json.dumps(r) + "\n")
        f.write(json.dumps(first[2])[:100])     # an interrupted run's last line
    rc, rest, err = batch(["--skip-done", done] + real)
    if rc != 0 or sorted(paths_of(rest)) != sorted(set(real) - set(paths_of(first[:2]))):
        raise Failure("--skip-done: exit %d, records for %s" % (rc, paths_of(rest)))
    if "2 already in --skip-done" not in err:
        raise Failure("--skip-done: the summary does not count the skipped: %s" % err.strip())
    tap.ok("--skip-done: %d done, %d analyzed" % (2, len(rest)))

    # a core at a path that is not UTF-8: its record spells the bytes as
    # lone surrogates ("\udce9"), and --skip-done must read them back
    odd = os.fsdecode(os.path.join(os.fsencode(work), b"caf\xe9-\xff.core"))
    shutil.copy(real[0], odd)
    p = subprocess.run([pt.PYCORE, "batch", os.fsencode(odd)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or b"\\udce9" not in p.stdout:
        raise Failure("a non-UTF-8 path: exit %d, no \\udce9 in its record: %s" % (p.returncode, p.stdout[:300]))
    with open(done, "wb") as f:
        f.write(p.stdout)      # pycore's own line, as written
    rc, rest, err = batch(["--skip-done", done, odd, real[1]])
    if rc != 0 or paths_of(rest) != [real[1]] or "1 already in --skip-done" not in err:
        raise Failure("--skip-done with a non-UTF-8 path: exit %d, records for %s: %s"
                      % (rc, paths_of(rest), err.strip()))
    os.unlink(odd)
    tap.ok("--skip-done reads a non-UTF-8 path's record (its bytes as \\udcNN)")

    listing = "\n".join(real[:3] + [garbage]) + "\n"
    rc, a, err = batch([], stdin=listing.encode())
    rc0, b, err0 = batch(["-0", "-"], stdin=("\0".join(real[:3] + [garbage]) + "\0").encode())
    if rc or rc0 or sorted(paths_of(a)) != sorted(real[:3] + [garbage]) or sorted(paths_of(a)) != sorted(paths_of(b)):
        raise Failure("lists on standard input: %s and %s" % (paths_of(a), paths_of(b)))
    rc, records, err = batch([work])
    found = sorted(paths_of(records))
    want = sorted(real + [big, slow, hang, crash, garbage, truncated])
    # the garbage file does not start like a dump: a directory's search
    # leaves it out; the truncated core and the compressed dumps do
    want.remove(garbage)
    if rc != 0 or found != want or "files in directories that are not dumps" not in err:
        raise Failure("a directory: records for %s, want %s (%s)" % (found, want, err.strip()))
    tap.ok("lists on standard input (newline, -0); a directory: %d dumps found" % len(found))

    check_progress(real[:3])
    tap.ok("a progress line on a terminal")

    check_warm(tap, cores, work)

    check_fingerprints(tap, cores, pythons)
    return 0


def grandchildren(pid):
    """{grandchild pid: its parent} of PID."""
    return dict((int(g), int(c)) for c in children(pid) for g in children(int(c)))


def check_warm(tap, cores, work):
    """Warm processes: the same bytes as cold workers; a warm worker that
    crashes costs its own record, and its warm process goes on."""
    d = os.path.join(work, "warm")
    os.makedirs(d)
    plain = [cores[n][0] for n in sorted(cores)]
    # and a fault faulthandler re-raised (the process signals itself: the
    # fault search unwinds its threads, naming their frames)
    r = os.path.join(work, "reraised")
    os.makedirs(r)
    os.environ["PYTHONFAULTHANDLER"] = "1"
    try:
        plain.append(pt.take_crash(interpreters.pyenv_pythons()[-1], r, ["reraise.py"], signal.SIGSEGV)[0])
    finally:
        del os.environ["PYTHONFAULTHANDLER"]
    inputs = []
    for k in range(3):
        for i, core in enumerate(plain):
            inputs.append(os.path.join(d, "%d-%d.core" % (i, k)))
            os.link(core, inputs[-1])
    p = subprocess.run([pt.PYCORE, "batch", "--ordered", "--jobs", "2"] + inputs, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=scaled(300))
    p0 = subprocess.run([pt.PYCORE, "batch", "--ordered", "--jobs", "2", "--warm-builds", "0"] + inputs,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(300))
    cold = pt.validator().check(p0.stdout.decode(), "cold batch")
    if p.returncode or p0.returncode or len(cold) != len(inputs):
        raise Failure("warm and cold batches: exit %d and %d, %d records" % (p.returncode, p0.returncode, len(cold)))
    if p.stdout != p0.stdout:
        a, b = p.stdout.splitlines(), p0.stdout.splitlines()
        diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
        raise Failure("warm and cold records differ (%d lines of %d): first %s" % (len(diff), len(b), inputs[diff[0]]
                                                                               if diff else "lengths"))
    check_reports(dict((n, (os.path.join(d, "%d-2.core" % i),) + cores[n][1:])
                       for i, n in enumerate(sorted(cores))), pt.validator().check(p.stdout.decode(), "warm batch"))
    reraised = [x for x in cold if x["input"]["path"] == inputs[-1]][0]
    if (reraised["process"].get("reraised_by") or {}).get("handler") != "faulthandler":
        raise Failure("the re-raised crash's record does not name faulthandler: %s"
                      % reraised["process"].get("reraised_by"))
    # one warm build at a time, and a memory cap every warm process is
    # over: each new build ends the last one's process
    tight = subprocess.run([pt.PYCORE, "batch", "--ordered", "--jobs", "2", "--warm-builds", "1", "--warm-memory",
                            "1"] + inputs[::-1], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(300))
    if tight.returncode or tight.stdout.splitlines() != p0.stdout.splitlines()[::-1]:
        raise Failure("--warm-builds 1 --warm-memory 1: exit %d, records not those of cold workers"
                      % tight.returncode)
    tap.ok("warm processes: %d dumps of %d cores, --ordered, the same %d bytes as with --warm-builds 0; with "
           "--warm-builds 1 --warm-memory 1 too" % (len(inputs), len(plain), len(p.stdout)))

    newest = interpreters.pyenv_pythons()[-1]
    r = os.path.join(work, "recursion")
    os.makedirs(r)
    core, truth = pt.take_gcore(newest, "recursion", r)
    copies = []
    for k in range(7):
        copies.append(os.path.join(r, "copy-%d.core" % k))
        os.link(core, copies[-1])
    rc0, cold, err0 = batch(["--ordered", "--jobs", "1", "--warm-builds", "0"] + copies)
    if rc0 or any("error" in c for c in cold):
        raise Failure("the recursion copies, cold: exit %d, %s" % (rc0, [c.get("error") for c in cold]))
    pt.compare(json.load(open(truth)), cold[0], None)
    for attempt in range(5):
        proc = subprocess.Popen([pt.PYCORE, "batch", "--ordered", "--jobs", "1"] + copies, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=signal_env())
        out = []
        reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
        reader.start()
        seen = {}          # copy: (worker, its parent)
        killed = None
        while proc.poll() is None:
            for g, parent in grandchildren(proc.pid).items():
                for path, pid in holding(parent, copies).items():
                    if pid == g and path not in seen:
                        seen[path] = (g, parent)
                        # the second copy caught: killed (one seen before it)
                        if killed is None and len(seen) == 2:
                            os.kill(g, signal.SIGSEGV)
                            killed = path
            time.sleep(0.0005)
        err = proc.stderr.read()
        proc.wait()
        reader.join()
        after = [c for c in seen if killed and copies.index(c) > copies.index(killed)]
        if killed and after:
            break
    else:
        raise Failure("could not catch a warm worker before and after the one killed in 5 attempts (%s)" % seen)
    if proc.returncode:
        raise Failure("batch with a crashed warm worker: exit %d: %s" % (proc.returncode, err.decode()[-500:]))
    records = pt.validator().check(out[0].decode(), "warm batch with a crashed worker")
    for c, got, want in zip(copies, records, cold):
        if c == killed:
            if got.get("error", {}).get("code") != "crashed":
                raise Failure("the killed warm worker's dump: %s" % got.get("error") or "reported")
        elif got != want:
            raise Failure("%s: its record differs from the cold run's" % c)
    parents = set(parent for _, parent in seen.values())
    if len(parents) != 1 or proc.pid in parents:
        raise Failure("the copies' workers had parents %s (batch %d): not one warm process" % (parents, proc.pid))
    tap.ok("a warm worker killed (SIGSEGV, %s): its record %s; the other %d as cold; %d copies after it by "
           "the same warm process" % (os.path.basename(killed), records[copies.index(killed)]["error"]["code"],
                                      len(copies) - 1, len(after)))


def check_fingerprints(tap, cores, pythons):
    crashes = sorted(n for n in cores if n.startswith("crash-") or n == "moved")
    paths = [cores[n][0] for n in crashes]
    for native in (False, True):
        rc, records, err = batch((["--native"] if native else []) + ["--ordered"] + paths)
        if rc != 0 or len(records) != len(paths):
            raise Failure("fingerprints: exit %d: %s" % (rc, err.strip()))
        fps = dict((n, r["fingerprint"]) for n, r in zip(crashes, records))
        for n in crashes:
            fp = fps[n]
            _, main = crashed_truth(cores[n][1])
            want = normalized(main["frames"])
            if native:
                if fp["frames"][:-1] != want or not fp["frames"][-1].endswith(":strlen"):
                    raise Failure("%s --native: fingerprint frames %s, want %s + libc strlen" % (n, fp["frames"], want))
            elif fp["frames"] != want:
                raise Failure("%s: fingerprint frames %s, the process recorded %s" % (n, fp["frames"], want))
            if fp["kind"] != "SIGSEGV" or fp["version"] != 2 or len(fp["hash"]) != 16:
                raise Failure("%s: fingerprint %s" % (n, fp))
        hashes = set(fp["hash"] for fp in fps.values())
        if len(hashes) != 1:
            raise Failure("the crash scenario gives %d fingerprints: %s" % (len(hashes), fps))
        if not native:
            plain = hashes.pop()
    others = ["abort", "threads", "exceptions"]
    rc, records, err = batch(["--ordered"] + [cores[n][0] for n in others])
    fps = dict(zip(others, (r["fingerprint"] for r in records)))
    if fps["abort"]["kind"] != "SIGABRT" or fps["threads"]["kind"] != "snapshot":
        raise Failure("fingerprint kinds: %s" % fps)
    if any(f.startswith("threading:") for f in fps["threads"]["frames"]):
        raise Failure("the threads snapshot's fingerprint keeps threading's frames: %s" % fps["threads"])
    every = [fp["hash"] for fp in fps.values()] + [plain]
    if len(set(every)) != len(every):
        raise Failure("different scenarios share a fingerprint: %s" % fps)
    tap.ok("fingerprints: the crash scenario on %d interpreters and moved: one (%s), with --native "
          "one too; abort, threads, exceptions: three others" % (len(crashes) - 1, plain))


if __name__ == "__main__":
    sys.exit(main())
