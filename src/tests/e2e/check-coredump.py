"""pycore coredump, the systemd-coredump hook, against the real
systemd-coredump and systemd-journald, started here.

Debian's systemd-coredump package is never installed (its postinst would
point kernel.core_pattern at it at once): scripts/install-deps unpacks it
with dpkg-deb -x into ~/.cache/pycore/systemd-coredump/root (or
$PYCORE_SYSTEMD_COREDUMP), and this test runs its binary by hand.  All of
it happens in a private mount namespace (unshare -m) that this script
re-executes itself in: tmpfs on /run/systemd, /run/log and
/var/log/journal, a scratch directory bound on /var/lib/systemd/coredump;
systemd-journald, and systemd-socket-activate --seqpacket -a on
/run/systemd/coredump running systemd-coredump per connection, as
systemd-coredump.socket does.  Every process started here is killed at
the end, and the mounts go with the namespace.

A crash is made the way the kernel makes one: Debian's python3.11 runs the
crash scenario under gdb (the scenario records its own threads' stacks and
its pid first); stopped at its SIGSEGV, gdb writes the core, and
systemd-coredump PID UID GID SIGNAL TIME 9223372036854775808 HOST gets it
on standard input, as from the kernel's core pipe, while the process still
exists (systemd-coredump reads /proc/PID).  Then pycore coredump INSTANCE
(NUMBER-PID-UID, PID that of the connection's peer) runs as the unit would,
and the cases check:
  * the report: the journal entry (pycore's MESSAGE_ID, COREDUMP_PID,
    PYCORE_REPORT, the summary, the text report) and the JSON file beside
    the core (schema-valid, stacks as the process recorded them,
    process.coredump = what this test passed systemd-coredump);
  * pycore analyze on the stored .zst, and coredumpctl dump | pycore
    analyze - (a pipe);
  * the privilege drop and MaxConcurrent=1: with the one slot held by this
    test, the hook waits; its /proc/PID/status shows the uid and gid of
    User=nobody, no groups, no capabilities; released, it finishes;
  * the rate limit (RateLimitBurst=1: the second analysis is skipped with a
    journal note), MaxCoreSize (skipped with a note), a hostile core (the
    stored .zst overwritten with garbage: an error entry and an error
    record, exit 0);
  * a non-Python crash (sleep killed with SIGSEGV) skipped without reading
    the core, and how long that takes; pycore's own crash never analyzed;
  * Storage=journal: the core read from the journal entry's COREDUMP field;
  * an entry forged with logger --journald, naming /etc/passwd, refused;
  * without libsystemd.so.0 (/dev/null bound over it in a mount namespace
    of the test's own), the hook says so in one line and exits 1, and
    pycore still starts (pycore analyze --help).

Output: TAP; what cannot run here is a skip by name.
"""
import fcntl
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pycoretest as pt
from pycoretest.coredump import (COREDUMP_DIR, COREDUMP_ID, HOSTNAME, PYTHON, World, config, extracted,
                                 hook, in_namespace, journal, sidecar_of, why_not)
from pycoretest.env import scaled, wait_until

Failure = pt.Failure
Skip = pt.Skip


def pycore_message_id():
    """pycore's MESSAGE_ID, as src/cli/coredump/coredump.h defines it."""
    for line in open(os.path.join(pt.SRCDIR, "src", "cli", "coredump", "coredump.h")):
        if line.startswith("#define PYCORE_MESSAGE_ID"):
            return line.split('"')[1]
    raise Failure("PYCORE_MESSAGE_ID not found in src/cli/coredump/coredump.h")


def crash_python(world, work, name):
    """The crash scenario under gdb, stored by systemd-coredump while gdb
    holds it stopped at its SIGSEGV: (truth, instance, entry, when)."""
    d = os.path.join(work, name)
    os.mkdir(d)
    for f in ("crash.py", "_truth.py"):
        shutil.copy(os.path.join(pt.SCENARIOS, f), d)
    truth_path, core, flag, done = (os.path.join(d, n) for n in ("truth.json", "core", "written", "done"))
    gdb = subprocess.Popen(["gdb", "-nx", "-batch", "-ex", "set pagination off", "-ex", "run",
                            "-ex", "generate-core-file " + core, "-ex", "shell touch " + flag,
                            "-ex", "shell while [ ! -e %s ]; do sleep 0.1; done" % done, "-ex", "kill",
                            "--args", PYTHON, os.path.join(d, "crash.py"), truth_path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=d)
    try:
        wait_until(lambda: os.path.exists(flag) or gdb.poll() is not None, 120, step=0.1)
        if not os.path.exists(flag):
            raise Failure("gdb wrote no core: %s" % gdb.communicate(timeout=scaled(30))[0].decode("utf-8", "replace")[-2000:])
        truth = json.load(open(truth_path))
        when = int(time.time())
        instance, entry = world.store(truth["pid"], core, signal.SIGSEGV, when)
    finally:
        open(done, "w").close()
        try:
            gdb.communicate(timeout=scaled(60))
        except subprocess.TimeoutExpired:
            gdb.kill()
            gdb.wait()
    os.unlink(core)
    return truth, truth_path, instance, entry, when


def check_coredump_facts(report, truth, when):
    c = report["process"].get("coredump")
    want = {"comm": os.path.basename(PYTHON), "exe": PYTHON, "uid": 0, "gid": 0, "signal": signal.SIGSEGV,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)), "hostname": HOSTNAME}
    if c != want:
        raise Failure("process.coredump %r, not %r" % (c, want))
    if report["process"]["pid"] != truth["pid"]:
        raise Failure("process.pid %r, not %d" % (report["process"]["pid"], truth["pid"]))


def new_entries(message_id, before):
    return journal(message_id)[before:]


def inner():
    tap = pt.TAP()
    work = tempfile.mkdtemp(prefix="pycore-coredump-")
    os.chmod(work, 0o755)
    world = None
    pid_mine = pycore_message_id()
    state = os.path.join(work, "state")
    run = os.path.join(work, "run")
    cache = os.path.join(work, "cache")
    os.mkdir(state)
    os.mkdir(run)
    os.mkdir(cache)
    env = {"STATE_DIRECTORY": state, "RUNTIME_DIRECTORY": run, "CACHE_DIRECTORY": cache, "TMPDIR": "/tmp"}
    ctx = {}
    try:
        world = tap.run("journald and systemd-coredump's socket start in a private mount namespace",
                        World, work)
        if world is None:
            return tap.done()

        def first_crash():
            truth, truth_path, instance, entry, when = crash_python(world, work, "first")
            core = entry.get("COREDUMP_FILENAME")
            if not core or not os.path.exists(core):
                raise Failure("systemd-coredump stored no file: %r" % entry.get("COREDUMP_FILENAME"))
            ctx.update(truth=truth, truth_path=truth_path, instance=instance, core=core, when=when)
            return "%s, instance %s" % (os.path.basename(core), instance)
        tap.run("a Python crash stored by the real systemd-coredump (xattrs, journal entry)", first_crash)
        if "core" not in ctx:
            return tap.done()
        truth, core, instance, when = ctx["truth"], ctx["core"], ctx["instance"], ctx["when"]
        side = sidecar_of(core)

        def analyze_zst():
            rc, out, err = pt.run_pycore(["analyze", "--format", "json", core])
            if rc not in (0, 1):
                raise Failure("pycore analyze exited %d: %s" % (rc, err))
            report = pt.load_report(out)
            pt.compare(truth, report, signal.SIGSEGV)
            check_coredump_facts(report, truth, when)
            rc, out, err = pt.run_pycore(["analyze", core])
            if "systemd-coredump: comm python3.11, exe %s, uid 0, gid 0, signal 11, at %s on " \
               "pycore-test\\x1bhost" % (PYTHON, report["process"]["coredump"]["timestamp"]) not in out:
                raise Failure("no escaped systemd-coredump line in the text report:\n%s" % out[:1500])
            with open(core, "rb") as f:  # standard input a regular file: mapped, attributes read
                p = subprocess.run([pt.PYCORE, "analyze", "--format", "json", "-"], stdin=f,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(300))
            report = pt.load_report(p.stdout)
            pt.compare(truth, report, signal.SIGSEGV)
            check_coredump_facts(report, truth, when)
            if report["input"]["path"] != "-" or report["input"]["compression"] != "zstd":
                raise Failure("pycore analyze - < core: input %r" % report["input"])
            return "stacks as recorded, process.coredump as given, also from standard input"
        tap.run("pycore analyze on the stored .zst (and - < it): stacks, process.coredump, text line", analyze_zst)

        def from_pipe():
            ctl = os.path.join(extracted(), "usr/bin/coredumpctl")
            dump = subprocess.Popen([ctl, "-D", "/run/log/journal", "dump", str(truth["pid"])],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            p = subprocess.run([pt.PYCORE, "analyze", "--format", "json", "-"], stdin=dump.stdout,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(300))
            dump.stdout.close()
            derr = dump.communicate(timeout=scaled(60))[1]
            if dump.returncode != 0:
                raise Failure("coredumpctl dump exited %d: %s" % (dump.returncode, derr.decode()))
            report = pt.load_report(p.stdout)
            pt.compare(truth, report, signal.SIGSEGV)
            if report["input"]["path"] != "-" or report["process"]["coredump"] is not None:
                raise Failure("input %r, coredump %r" % (report["input"], report["process"]["coredump"]))
            return "input.path -, %d bytes through the pipe" % report["input"]["size"]
        tap.run("coredumpctl dump | pycore analyze -", from_pipe)

        def drop_and_slots():
            conf = config(work, "slots", "MaxConcurrent=1\nRateLimitBurst=100\n")
            slot = os.open(os.path.join(run, "slot.0"), os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(slot, fcntl.LOCK_EX)
            before = len(journal(pid_mine))
            p = hook(["--config", conf, instance], env, wait=False)
            status = ""
            try:
                def dropped():
                    nonlocal status
                    try:
                        status = open("/proc/%d/status" % p.pid).read()
                    except OSError:
                        return True
                    return "\nUid:\t65534" in status
                wait_until(dropped, 5)
                fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
                got = {k: fields.get(k, "").split() for k in ("Uid", "Gid", "Groups", "CapEff", "CapPrm",
                                                               "NoNewPrivs")}
                want = {"Uid": ["65534"] * 4, "Gid": ["65534"] * 4, "Groups": [], "CapEff": ["0000000000000000"],
                        "CapPrm": ["0000000000000000"], "NoNewPrivs": ["1"]}
                if got != want:
                    raise Failure("the waiting hook's credentials %r, not %r" % (got, want))
                time.sleep(1)
                if p.poll() is not None or os.path.getsize(side) != 0:
                    raise Failure("the hook did not wait for the slot (exit %r)" % p.poll())
            finally:
                fcntl.flock(slot, fcntl.LOCK_UN)
                os.close(slot)
            out, err = p.communicate(timeout=scaled(300))
            if p.returncode != 0:
                raise Failure("pycore coredump exited %d: %s" % (p.returncode, err.decode()))
            report = pt.load_report(open(side, "rb").read(), "the sidecar")
            pt.compare(truth, report, signal.SIGSEGV)
            check_coredump_facts(report, truth, when)
            if not pt.locals.frames_with_locals(report):
                raise Failure("Locals=yes (the default), yet no frame has locals")
            entries = new_entries(pid_mine, before)
            if len(entries) != 1:
                raise Failure("%d new pycore journal entries, not 1" % len(entries))
            e = entries[0]
            problems = []
            for k, v in (("COREDUMP_PID", str(truth["pid"])), ("COREDUMP_FILENAME", core),
                         ("COREDUMP_EXE", PYTHON), ("PYCORE_REPORT", side),
                         ("PYCORE_FINGERPRINT", report["fingerprint"]["hash"])):
                if e.get(k) != v:
                    problems.append("%s=%r, not %r" % (k, e.get(k), v))
            if report["summary"]["text"] not in e.get("MESSAGE", ""):
                problems.append("MESSAGE %r lacks the summary" % e.get("MESSAGE"))
            if "crash_here" not in (e.get("PYCORE_TEXT") or ""):
                problems.append("PYCORE_TEXT lacks the crashed frame")
            if problems:
                raise Failure("; ".join(problems))
            debug = os.path.join(cache, "debug")
            if not os.path.isdir(debug) or os.stat(debug).st_uid != 65534:
                raise Failure("the debug cache %s is not a directory of uid 65534 (CacheDirectory=)" % debug)
            st = os.stat(side)
            return ("waited for the slot as uid 65534 without groups or capabilities; sidecar %o; "
                    "debug cache handed to it" % (st.st_mode & 0o777))
        tap.run("privilege drop to User=nobody and MaxConcurrent=1 (waits for the slot), journal entry "
                "and sidecar", drop_and_slots)

        def again_skipped():
            rc, out, err = hook(["--config", config(work, "again", ""), instance], env)
            if rc != 0 or "analyzed already" not in err:
                raise Failure("exit %d: %s" % (rc, err))
        tap.run("a second run for the same crash leaves its report alone", again_skipped)

        def rate_limit():
            st2 = os.path.join(work, "state-rate")
            os.mkdir(st2)
            conf = config(work, "rate", "RateLimitBurst=1\nRateLimitIntervalSec=3600\n")
            e2 = dict(env, STATE_DIRECTORY=st2)
            results = []
            for i in range(2):
                if os.path.exists(side):
                    os.unlink(side)
                before = len(journal(pid_mine))
                rc, out, err = hook(["--config", conf, instance], e2)
                if rc != 0:
                    raise Failure("run %d exited %d: %s" % (i + 1, rc, err))
                results.append((os.path.exists(side), new_entries(pid_mine, before)))
            (made1, ent1), (made2, ent2) = results
            if not made1 or made2:
                raise Failure("sidecar after the first run %s, after the second %s" % (made1, made2))
            if len(ent2) != 1 or ent2[0].get("PYCORE_RESULT") != "skipped" or "rate limit" not in ent2[0]["MESSAGE"]:
                raise Failure("the second run's journal entries: %r" % [e.get("MESSAGE") for e in ent2])
            return ent2[0]["MESSAGE"]
        tap.run("RateLimitBurst=1: the second crash of the executable is skipped with a journal note", rate_limit)

        def settings():
            if os.path.exists(side):
                os.unlink(side)
            rc, out, err = hook(["--config", config(work, "nolocals", "Locals=no\nRedact=no\nRateLimitBurst=100\n"),
                                 instance], env)
            if rc != 0:
                raise Failure("Locals=no: exit %d: %s" % (rc, err))
            report = pt.load_report(open(side, "rb").read(), "the sidecar")
            with_locals = pt.locals.frames_with_locals(report)
            if with_locals:
                raise Failure("Locals=no, yet %d frames have locals" % len(with_locals))
            os.unlink(side)
            rc, out, err = hook(["--config", config(work, "only", "Executables=/usr/bin/nothing* other\n"),
                                 instance], env)
            if rc != 0 or "not in Executables=" not in err or os.path.exists(side):
                raise Failure("Executables=: exit %d, sidecar %s: %s" % (rc, os.path.exists(side), err))
            rc, out, err = hook(["--config", config(work, "unknown", "NoSuchKey=1\nRateLimitBurst=100\n"),
                                 instance], env)
            if rc != 0 or "unknown setting NoSuchKey ignored" not in err or not os.path.exists(side):
                raise Failure("an unknown key: exit %d, sidecar %s: %s" % (rc, os.path.exists(side), err))
            return "Locals=no: no locals; Executables= not matching: skipped; an unknown key: named, ignored"
        tap.run("coredump.conf: Locals=no, Executables=, an unknown key", settings)

        def too_big():
            if os.path.exists(side):
                os.unlink(side)
            before = len(journal(pid_mine))
            rc, out, err = hook(["--config", config(work, "size", "MaxCoreSize=1K\n"), instance], env)
            ent = new_entries(pid_mine, before)
            if rc != 0 or os.path.exists(side) or len(ent) != 1 or "MaxCoreSize" not in ent[0]["MESSAGE"]:
                raise Failure("exit %d, sidecar %s, entries %r: %s" % (rc, os.path.exists(side),
                                                                      [e.get("MESSAGE") for e in ent], err))
            return ent[0]["MESSAGE"]
        tap.run("MaxCoreSize=1K: the core is skipped with a journal note", too_big)

        def hostile():
            with open(core, "r+b") as f:
                size = os.fstat(f.fileno()).st_size
                f.seek(0)
                # a zstd frame header without a content size (descriptor
                # 0, window descriptor 0x58), then fixed garbage: a header
                # of random bytes could claim any size, and MaxCoreSize
                # would skip it instead
                junk = bytes(random.Random(1).getrandbits(8) for _ in range(min(size, 1 << 16)))
                f.write(b"\x28\xb5\x2f\xfd\x00\x58" + junk)
                f.truncate(6 + len(junk))
            before = len(journal(pid_mine))
            rc, out, err = hook(["--config", config(work, "hostile", "RateLimitBurst=100\n"), instance],
                                dict(env, STATE_DIRECTORY=os.path.join(work, "state")))
            ent = new_entries(pid_mine, before)
            if rc != 0 or len(ent) != 1 or ent[0].get("PRIORITY") != "3" or ent[0].get("PYCORE_RESULT") != "error":
                raise Failure("exit %d, entries %r: %s" % (rc, [(e.get("PRIORITY"), e.get("MESSAGE")) for e in ent], err))
            rec = [json.loads(line) for line in open(side) if line.strip()]
            if len(rec) != 1 or set(rec[0]) != {"schema", "tool", "input", "error"} or \
               rec[0]["error"]["code"] != "bad-input":
                raise Failure("sidecar %r" % rec)
            return ent[0]["MESSAGE"]
        tap.run("a hostile core (garbage zstd): an error journal entry and error record, exit 0", hostile)

        def not_python():
            sleeper = subprocess.Popen(["sleep", "1000"])
            try:
                sleeper.send_signal(signal.SIGSTOP)
                g = subprocess.run(["gcore", "-o", os.path.join(work, "sleep"), str(sleeper.pid)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
                score = os.path.join(work, "sleep.%d" % sleeper.pid)
                if g.returncode != 0:
                    raise Failure("gcore of sleep failed: %s" % g.stdout.decode()[-500:])
                inst, entry = world.store(sleeper.pid, score, signal.SIGSEGV, int(time.time()))
            finally:
                sleeper.kill()
                sleeper.wait()
            before = len(journal(pid_mine))
            stored = entry["COREDUMP_FILENAME"]
            times = []
            for _ in range(5):
                t = time.monotonic()
                rc, out, err = hook(["--config", config(work, "sleep", ""), inst], env)
                times.append(time.monotonic() - t)
            if rc != 0 or "not Python" not in err or os.path.exists(sidecar_of(stored)) or \
               new_entries(pid_mine, before):
                raise Failure("exit %d, sidecar %s: %s" % (rc, os.path.exists(sidecar_of(stored)), err))
            best = min(times)
            if best > 0.5:
                raise Failure("skipping took %.0f ms" % (best * 1000))
            return "skipped in %.1f ms (best of 5, the whole pycore process)" % (best * 1000)
        tap.run("a non-Python crash (sleep, SIGSEGV) skipped fast", not_python)

        def own_crash():
            # pycore itself, waiting for its list on standard input, "crashed";
            # its core is garbage (gcore of a sanitizer build would take
            # minutes): the hook must skip it before opening it
            p = subprocess.Popen([pt.PYCORE, "batch", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            try:
                time.sleep(0.2)
                fake = os.path.join(work, "own.core")
                with open(fake, "wb") as f:
                    f.write(b"\x7fELF" + os.urandom(4096))
                inst, entry = world.store(p.pid, fake, signal.SIGSEGV, int(time.time()))
            finally:
                p.kill()
                p.wait()
            stored = entry["COREDUMP_FILENAME"]
            before = len(journal(pid_mine))
            rc, out, err = hook(["--config", config(work, "own", "Executables=*\n"), inst], env)
            if rc != 0 or "pycore itself" not in err or os.path.exists(sidecar_of(stored)) or \
               new_entries(pid_mine, before):
                raise Failure("exit %d, sidecar %s: %s" % (rc, os.path.exists(sidecar_of(stored)), err))
            return err.strip()
        tap.run("pycore's own crash is never analyzed (even with Executables=*)", own_crash)

        def storage_journal():
            os.makedirs("/run/systemd/coredump.conf.d", exist_ok=True)
            with open("/run/systemd/coredump.conf.d/storage.conf", "w") as f:
                f.write("[Coredump]\nStorage=journal\n")
            truth2, _, inst, entry, when2 = crash_python(world, work, "journal")
            if "COREDUMP_FILENAME" in entry:
                raise Failure("Storage=journal stored a file: %s" % entry["COREDUMP_FILENAME"])
            reports = os.path.join(work, "reports")
            os.mkdir(reports)
            os.chmod(reports, 0o755)
            before = len(journal(pid_mine))
            rc, out, err = hook(["--config", config(work, "journal", "ReportDirectory=%s\nRateLimitBurst=100\n"
                                                    % reports), inst], env)
            files = glob.glob(os.path.join(reports, "pycore.*.json"))
            if rc != 0 or len(files) != 1:
                raise Failure("exit %d, reports %r: %s" % (rc, files, err))
            report = pt.load_report(open(files[0], "rb").read(), "the sidecar")
            pt.compare(truth2, report, signal.SIGSEGV)
            check_coredump_facts(report, truth2, when2)
            ent = new_entries(pid_mine, before)
            if len(ent) != 1 or ent[0].get("COREDUMP_PID") != str(truth2["pid"]) or \
               not report["input"]["path"].startswith("journal:"):
                raise Failure("entries %r, input %r" % ([e.get("MESSAGE") for e in ent], report["input"]))
            return os.path.basename(files[0])
        tap.run("Storage=journal: the core read from the journal entry, process.coredump from its fields",
                storage_journal)

        def forged():
            if not shutil.which("logger"):
                raise Skip("needs logger (Debian package bsdutils) to log a forged entry")
            fields = "MESSAGE_ID=%s\nMESSAGE=forged\nCOREDUMP_PID=1\nCOREDUMP_COMM=python3\n" \
                     "COREDUMP_EXE=%s\nCOREDUMP_FILENAME=/etc/passwd\n" % (COREDUMP_ID, PYTHON)
            subprocess.run(["logger", "--journald"], input=fields.encode(), check=True, timeout=scaled(60))
            wait_until(lambda: any(e.get("COREDUMP_FILENAME") == "/etc/passwd" for e in journal(COREDUMP_ID)), 5)
            rc, out, err = hook(["--config", config(work, "forged", ""), "99-1-0"], env)
            if rc != 1 or "not a core file of systemd-coredump's" not in err or \
               glob.glob("/etc/pycore.*.json"):
                raise Failure("exit %d: %s" % (rc, err))
            return err.strip()
        tap.run("a forged systemd-coredump entry naming /etc/passwd is not opened", forged)

        def without_libsystemd():
            # libsystemd.so.0 made unloadable (/dev/null bound over it in a
            # mount namespace of this test's own, inside the test's)
            lib = next((p for p in glob.glob("/lib/*/libsystemd.so.0") + glob.glob("/usr/lib/*/libsystemd.so.0")),
                       None)
            if not lib or not shutil.which("unshare"):
                raise Skip("no libsystemd.so.0 under /lib or /usr/lib, or no unshare (util-linux)")
            # (the dynamic linker would refuse to start a pycore linked with it)
            script = 'mount --bind /dev/null "$1" && "$2" coredump 1-2-3; echo "hook exit $?" >&2; ' \
                     '"$2" analyze --help >/dev/null; echo "analyze exit $?" >&2'
            p = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", lib, pt.PYCORE],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120))
            lines = p.stderr.decode("utf-8", "replace").strip().splitlines()
            said = [l for l in lines if l.startswith("pycore:")]
            if "hook exit 1" not in lines or "analyze exit 0" not in lines or len(said) != 1 or \
                    "libsystemd.so.0" not in said[0]:
                raise Failure("without libsystemd: %s" % lines)
            return "%s; pycore starts without it" % said[0]
        tap.run("without libsystemd.so.0: the hook says so in one line, exit 1; pycore starts", without_libsystemd)
    finally:
        if world:
            world.stop()
        if os.environ.get("KEEP_CORES") == "1":
            tap.diag("kept in %s" % work)
        else:
            subprocess.run(["umount", COREDUMP_DIR], stderr=subprocess.DEVNULL)
            shutil.rmtree(work, ignore_errors=True)
    pt.schema_summary(tap)
    return tap.done()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        return inner()
    why = why_not()
    if why:
        tap = pt.TAP()
        tap.skip("the systemd-coredump hook against the real systemd-coredump", why)
        return tap.done()
    return in_namespace(__file__, "--inner")


if __name__ == "__main__":
    sys.exit(main())
