"""Every input has a bounded cost (issue 28): nothing blocks, nothing fills
the disk, nothing escapes to the terminal.

Each case runs pycore analyze and pycore batch with --timeout 2 and the disk
budget PYCORE_MAX_SPOOL=32M (the environment: a pycore without budgets
ignores it, and the disk check then fails, as it must), and asserts a
wall-clock budget (the timeout plus one second) and a disk budget (what
the process and its workers passed to write(2), /proc/PID/io's wchar, read
before the process is reaped: at most the 32 MiB plus 1 MiB of reports).
Inputs, all made here: a FIFO given as a dump, /dev/zero and /dev/urandom
on standard input (analyze -) and as paths (batch), a pipe of an ELF
magic followed by endless zeros or random bytes, and for each compression
format (zstd, gzip, xz, lz4, made by its own CLI) three bombs: 256 MiB of
one byte (no dump's magic: dropped at its first bytes), an ELF magic then
256 MiB of one byte (stopped at the disk budget), an ELF magic then 64 GiB
of zeros (holes, no disk: stopped by the time budget).  Each refusal is
one line naming the file and its cause, with the exit code the help
promises (4: not a dump; 6: a budget).

Cases from a real process (a gcore of CPython 3.12, skipped by name
without it): a core whose PT_LOAD headers are made PT_NULL (no memory:
one line, no sanitizer report), the 3.11+ carets under a source line
holding characters printed as escapes (an ESC and a tab before the call),
and, parser-level tests of the minidump reader: the core converted to a
minidump (scripts/core2minidump), its thread and module lists and its
memory (as a 32-bit MemoryList) padded with 4 bytes after the count as
Breakpad's Mac writer pads them: the same report as the unpadded one;
the same with SystemInfo's platform id made macOS's: refused in one line
saying it is not a Linux process (exit 3); a maps stream with no line
pycore can parse (no sanitizer report).  And pycore group on a hostile
JSON Lines file (ESC, BEL, CR, C1 controls in the fingerprint's hash,
kind, frames, paths, summary and error codes): no control byte reaches
its text or its HTML.  Output: TAP, one line per case.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

from pycoretest import interpreters
from pycoretest.env import PYCORE, SRCDIR
from pycoretest.tap import TAP, Failure, Skip
from pycoretest.env import scaled
TIMEOUT = 2.0
SPOOL = 32 << 20
SLACK_DISK = 1 << 20
MIB = 1 << 20
FORMATS = [("zstd", "zst", "zstd", ["zstd", "-q", "-1", "-c"]), ("gzip", "gz", "gzip", ["gzip", "-1", "-c"]),
           ("xz", "xz", "xz-utils", ["xz", "-0", "-T1", "-c"]), ("lz4", "lz4", "lz4", ["lz4", "-q", "-1", "-c"])]
ELF_HEAD = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 4, 62)   # ET_CORE, x86-64


def env():
    e = dict(os.environ)
    e["PYCORE_MAX_SPOOL"] = "32M"
    e.pop("PYCORE_DEBUG_CACHE", None)
    return e


def measured(args, stdin=None, feeder=None):
    """Run pycore ARGS (standard input STDIN, a file object, or the output
    of the process FEEDER, an argv); returns (exit code, stdout, stderr,
    seconds, bytes written).  A run past the budget by 10 s is killed and
    fails the case (its stdout and stderr cut)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        feed = None
        if feeder:
            feed = subprocess.Popen(feeder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            stdin = feed.stdout
        t0 = time.monotonic()
        p = subprocess.Popen([PYCORE] + args, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                             stdout=out, stderr=err, env=env())
        if feed:
            feed.stdout.close()
        killed = []

        def kill():
            killed.append(True)
            p.kill()
        timer = threading.Timer(TIMEOUT + 10, kill)
        timer.start()
        try:
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            secs = time.monotonic() - t0
            wchar = 0
            with open("/proc/%d/io" % p.pid) as f:
                for line in f:
                    if line.startswith("wchar:"):
                        wchar = int(line.split()[1])
        finally:
            timer.cancel()
            p.wait()
            if feed:
                feed.kill()
                feed.wait()
        out.seek(0)
        err.seek(0)
        o, e = out.read(), err.read().decode("utf-8", "replace")
    if killed:
        raise Failure("pycore %s still ran %.0f s after its --timeout %g: killed (stderr %r)"
                      % (" ".join(args), TIMEOUT + 10, TIMEOUT, e[-300:]))
    return p.returncode, o, e, secs, wchar


def budgets(what, secs, wchar, disk=SPOOL + SLACK_DISK):
    if secs > TIMEOUT + 1:
        raise Failure("%s took %.2f s: more than --timeout %g plus 1 s" % (what, secs, TIMEOUT))
    if wchar > disk:
        raise Failure("%s wrote %.1f MiB: more than the %.1f MiB budget" % (what, wchar / MIB, disk / MIB))
    return "%.2f s, %.1f MiB written" % (secs, wchar / MIB)


def no_sanitizer(err):
    if "runtime error" in err or "AddressSanitizer" in err or "LeakSanitizer" in err:
        raise Failure("a sanitizer report: %s" % err[:500])


def analyze_refused(args, name, code, words, stdin=None, feeder=None, disk=SPOOL + SLACK_DISK):
    """pycore analyze ARGS: exit CODE, one line naming NAME with WORDS (a
    regular expression), within the budgets."""
    rc, out, err, secs, wchar = measured(["analyze", "--timeout", str(TIMEOUT)] + args, stdin, feeder)
    no_sanitizer(err)
    lines = err.splitlines()
    if rc != code or len(lines) != 1 or not lines[0].startswith("pycore: %s: " % name) \
            or not re.search(words, lines[0]):
        raise Failure("exit %d, stderr %r; want exit %d and one line 'pycore: %s: ...' saying /%s/"
                      % (rc, err[:400], code, name, words))
    return budgets("analyze", secs, wchar, disk) + ": " + lines[0]


def batch_refused(path, codes, disk=SPOOL + SLACK_DISK):
    """pycore batch PATH: one error record of one of CODES, within the budgets."""
    rc, out, err, secs, wchar = measured(["batch", "--timeout", str(TIMEOUT), path])
    no_sanitizer(err)
    recs = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    if rc != 0 or len(recs) != 1 or recs[0].get("error", {}).get("code") not in codes:
        raise Failure("batch: exit %d, records %r; want one error record of code %s" % (rc, recs, "/".join(codes)))
    return budgets("batch", secs, wchar, disk) + ": " + recs[0]["error"]["message"]


def compressed(cmd, path, parts):
    """PARTS (an iterable of bytes) through the compressor CMD into PATH,
    streamed: nothing of the bomb's inflated size touches the disk."""
    with open(path, "wb") as f:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=f)
        for b in parts:
            p.stdin.write(b)
        p.stdin.close()
        if p.wait() != 0:
            raise Failure("%s failed" % cmd[0])


def ones(n):
    chunk = b"A" * MIB
    for _ in range(n // MIB):
        yield chunk


def zeros(n):
    chunk = bytes(MIB)
    for _ in range(n // MIB):
        yield chunk


def bomb_cases(tap, work):
    for fmt, ext, pkg, cmd in FORMATS:
        names = ["%s bomb of 256 MiB of one byte, no dump's magic: %s" % (fmt, w) for w in ("analyze", "batch")]
        names += ["%s bomb of an ELF magic and 256 MiB of one byte: %s" % (fmt, w) for w in ("analyze", "batch")]
        names += ["%s bomb of an ELF magic and 64 GiB of zeros: %s" % (fmt, w) for w in ("analyze", "batch")]
        if not shutil.which(cmd[0]):
            for n in names:
                tap.skip(n, "%s not installed (Debian package %s)" % (cmd[0], pkg))
            continue
        plain = os.path.join(work, "plain." + ext)
        elf = os.path.join(work, "elf." + ext)
        zero = os.path.join(work, "zeros." + ext)
        compressed(cmd, plain, ones(256 * MIB))
        compressed(cmd, elf, [ELF_HEAD] + list(ones(256 * MIB)))
        # one stream of 256 MiB of zeros, then copies of another: 64 GiB
        compressed(cmd, zero, [ELF_HEAD] + list(zeros(256 * MIB)))
        unit = os.path.join(work, "unit." + ext)
        compressed(cmd, unit, zeros(256 * MIB))
        with open(unit, "rb") as f:
            u = f.read()
        with open(zero, "ab") as f:
            for _ in range(255):
                f.write(u)
        os.unlink(unit)
        tiny = 1 * MIB   # dropped at its first bytes: nothing spooled
        tap.run(names[0], analyze_refused, [plain], plain, 4, "does not hold a dump", disk=tiny)
        tap.run(names[1], batch_refused, plain, ["format"], disk=tiny)
        tap.run(names[2], analyze_refused, [elf], elf, 6, "would write more than --max-spool 32 MiB")
        tap.run(names[3], batch_refused, elf, ["limit"])
        tap.run(names[4], analyze_refused, [zero], zero, 6, r"time budget \(--timeout 2 s\) ran out while decompressing")
        tap.run(names[5], batch_refused, zero, ["timeout"])
        for p in (plain, elf, zero):
            os.unlink(p)


def input_cases(tap, work):
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    tap.run("a FIFO given as a dump: analyze", analyze_refused, [fifo], fifo, 4, "FIFO")
    tap.run("a FIFO given as a dump: batch", batch_refused, fifo, ["io"])
    for dev in ("/dev/zero", "/dev/urandom"):
        def stdin_case(dev=dev):
            with open(dev, "rb") as f:
                return analyze_refused(["-"], "-", 4, "standard input is not a dump", stdin=f, disk=MIB)
        tap.run("%s on standard input: analyze -" % dev, stdin_case)
        tap.run("%s given as a dump: batch" % dev, batch_refused, dev, ["io"], disk=MIB)
    tap.run("a pipe of an ELF magic then endless zeros: analyze - stops at --timeout",
            analyze_refused, ["-"], "-", 6, r"time budget \(--timeout 2 s\) ran out while reading standard input",
            feeder=["sh", "-c", "printf '\\177ELF'; exec cat /dev/zero"])
    tap.run("a pipe of an ELF magic then endless random bytes: analyze - stops at the disk budget",
            analyze_refused, ["-"], "-", 6, "spooling standard input would write more than --max-spool 32 MiB",
            feeder=["sh", "-c", "printf '\\177ELF'; exec cat /dev/urandom"])
    tap.run("a pipe that says nothing: analyze - stops at --timeout", analyze_refused, ["-"], "-", 6,
            "ran out while reading standard input", feeder=["sleep", "30"])

    def explicit():
        # --max-spool given, over the environment's
        return analyze_refused(["--max-spool", "1M", "-"], "-", 6, "--max-spool 1 MiB",
                               feeder=["sh", "-c", "printf '\\177ELF'; exec cat /dev/urandom"], disk=2 * MIB)
    tap.run("--max-spool 1M on a pipe of random bytes: refused at 1 MiB", explicit)

    def usage():
        rc, out, err, _, _ = measured(["analyze", "--max-spool", "lots", "core"])
        if rc != 2 or len(err.splitlines()) != 1 or "--max-spool" not in err:
            raise Failure("exit %d: %r; want a usage error naming --max-spool" % (rc, err))
        return err.strip()
    tap.run("--max-spool lots: a usage error", usage)


# ---- group ----

HOSTILE = "\x1b[2J\x1b]0;owned\x07\r\x9b31m\x85\u202e\x7f"


def group_case(tap, work):
    def hostile():
        path = os.path.join(work, "hostile.jsonl")
        rec = {"schema": "pycore-report/1", "tool": {"name": "pycore"},
               "input": {"path": "/var/crash/core" + HOSTILE},
               "fingerprint": {"hash": "0123" + HOSTILE, "kind": "SIGSEGV" + HOSTILE,
                               "frames": ["f" + HOSTILE + " (x.py)", "g (y.py)"]},
               "summary": "crashed" + HOSTILE}
        err = {"schema": "pycore-report/1", "input": {"path": "/x" + HOSTILE},
               "error": {"code": "io" + HOSTILE, "message": "m" + HOSTILE}}
        with open(path, "w") as f:
            f.write(json.dumps(rec) + "\n" + json.dumps(err) + "\n" + "not json " + HOSTILE + "\n")
        said = []
        for fmt in ("text", "html"):
            rc, out, errs, secs, _ = measured(["group", "--format", fmt, path])
            no_sanitizer(errs)
            if rc not in (0, 1) or not out:
                raise Failure("group --format %s: exit %d, %r" % (fmt, rc, errs))
            text = out.decode("utf-8", "replace")
            bad = [c for c in text + errs if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f
                   or c in "\u202e"]
            if bad:
                raise Failure("group --format %s wrote raw control characters %r" % (fmt, sorted(set(bad))))
            if fmt == "text" and "0123\\x1b[2J" not in text:
                raise Failure("the hash is not shown escaped: %r" % text[:300])
            said.append("%s: %.2f s" % (fmt, secs))
        return ", ".join(said) + ", no control character"
    tap.run("group on a hostile JSON Lines file: everything it prints escaped (text and html)", hostile)


# ---- cases from a real process ----

CARET_SCRIPT = 'import sys, time\nprint("READY", flush=True)\nx = "\x1b\t"; time.sleep(100)\n'


def take_core(python, work):
    """A gcore of PYTHON asleep on a line holding an ESC and a tab."""
    script = os.path.join(work, "caret.py")
    with open(script, "w") as f:
        f.write(CARET_SCRIPT)
    p = subprocess.Popen([python, script], stdout=subprocess.PIPE)
    try:
        if p.stdout.readline().strip() != b"READY":
            raise Failure("the script did not get ready")
        time.sleep(0.3)
        subprocess.run(["gcore", "-o", os.path.join(work, "py"), str(p.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=scaled(120))
    finally:
        p.kill()
        p.wait()
    core = os.path.join(work, "py.%d" % p.pid)
    if not os.path.exists(core):
        raise Failure("gcore made no core")
    return core, script


def caret_case(core, script):
    rc, out, err, _, _ = measured(["analyze", "--timeout", "30", core])
    text = out.decode("utf-8", "replace")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if 'time.sleep(100)' in line and line.lstrip().startswith("x = "):
            if i + 1 >= len(lines) or "^" not in lines[i + 1]:
                raise Failure("no caret line under %r" % line)
            col = line.index("time.sleep(100)")
            carets = lines[i + 1]
            first = carets.index("^")
            n = len(carets.rstrip()) - first
            if first != col or n != len("time.sleep(100)") or set(carets[first:first + n]) != {"^"}:
                raise Failure("carets at column %d, %d of them, under %r; want column %d, %d"
                              % (first, n, line, col, len("time.sleep(100)")))
            if '"\\x1b\\t"' not in line:
                raise Failure("the source line's ESC and tab are not shown as escapes: %r" % line)
            return "%r / %r" % (line.strip(), carets.strip())
    raise Failure("exit %d: no source line of %s in the report:\n%s" % (rc, script, text[:2000]))


def no_load_case(core, work):
    data = bytearray(open(core, "rb").read())
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    n = 0
    for i in range(phnum):
        if struct.unpack_from("<I", data, phoff + 56 * i)[0] == 1:
            struct.pack_into("<I", data, phoff + 56 * i, 0)     # PT_LOAD -> PT_NULL
            n += 1
    path = os.path.join(work, "no-load.core")
    open(path, "wb").write(data)
    rc, out, err, secs, wchar = measured(["analyze", "--timeout", str(TIMEOUT), path])
    no_sanitizer(err)
    if rc not in (1, 3, 4) or len(err.splitlines()) != 1 or path not in err:
        raise Failure("exit %d, stderr %r; want one line naming the file (exit 1, 3 or 4)" % (rc, err))
    rcb, outb, errb, secsb, wcharb = measured(["batch", "--timeout", str(TIMEOUT), path])
    no_sanitizer(errb)
    if rcb != 0 or len(outb.splitlines()) != 1:
        raise Failure("batch: exit %d, %r" % (rcb, outb[:300]))
    return "%d PT_LOAD made PT_NULL: exit %d, %s; batch %s" % (n, rc, budgets("analyze", secs, wchar),
                                                                 budgets("batch", secsb, wcharb))


# minidumps: directory entries and streams
def md_streams(d):
    n, rva = struct.unpack_from("<II", d, 8)
    return [(i, *struct.unpack_from("<III", d, rva + 12 * i)) for i in range(n)], rva


def md_repoint(d, dir_rva, index, stype, blob):
    """BLOB appended (4-aligned) as stream INDEX of type STYPE."""
    while len(d) % 8:
        d += b"\0"
    struct.pack_into("<III", d, dir_rva + 12 * index, stype, len(blob), len(d))
    d += blob


def pad_minidump(src, dst, platform_id=None):
    """SRC's thread and module lists padded with 4 bytes after their
    counts, its Memory64List made a 32-bit MemoryList padded the same way
    (Breakpad's Mac writer's form); PLATFORM_ID into SystemInfo."""
    d = bytearray(open(src, "rb").read())
    streams, dir_rva = md_streams(d)
    padded = set()
    for i, stype, size, rva in streams:
        if stype in (3, 4):      # thread list, module list: count, pad, entries
            count = d[rva:rva + 4]
            md_repoint(d, dir_rva, i, stype, bytes(count) + b"\0\0\0\0" + bytes(d[rva + 4:rva + size]))
            padded.add(stype)
        elif stype == 9:         # Memory64List -> MemoryList (type 5)
            n, base = struct.unpack_from("<QQ", d, rva)
            entries = b""
            for k in range(n):
                start, length = struct.unpack_from("<QQ", d, rva + 16 + 16 * k)
                if length >= 1 << 32 or base >= 1 << 32:
                    raise Skip("a memory range over 4 GiB: no 32-bit MemoryList")
                entries += struct.pack("<QII", start, length, base)
                base += length
            md_repoint(d, dir_rva, i, 5, struct.pack("<I", n) + b"\0\0\0\0" + entries)
            padded.add(5)
        elif stype == 7 and platform_id is not None:
            struct.pack_into("<I", d, rva + 20, platform_id)
    if len(d) >= 1 << 32:
        raise Skip("the minidump is over 4 GiB")
    open(dst, "wb").write(d)
    return padded


def frames_of(report):
    """What the walk found: every interpreter's threads and frames."""
    interps = report.get("interpreters") or []
    n = sum(len(f.get("frames") or []) for i in interps for f in i.get("threads") or [])
    return json.dumps(interps, sort_keys=True), n


def minidump_cases(tap, core, work):
    conv = os.path.join(SRCDIR, "scripts", "core2minidump")
    md = os.path.join(work, "py.dmp")
    names = ["parser-level: a minidump whose lists are padded as Breakpad's Mac writer pads them: the same report",
             "parser-level: the padded minidump saying macOS: refused in one line, not a Linux process, exit 3",
             "parser-level: a minidump whose maps stream has no parsable line: no sanitizer report"]
    r = subprocess.run([sys.executable, conv, core, md], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        for n in names:
            tap.not_ok(n, "core2minidump failed: %s" % r.stderr.decode()[-300:])
        return

    def report(path):
        rc, out, err, _, _ = measured(["analyze", "--timeout", "30", "--format", "json", path])
        no_sanitizer(err)
        if rc not in (0, 1):
            raise Failure("%s: exit %d: %s" % (os.path.basename(path), rc, err.strip()))
        return json.loads(out)

    def padded():
        p = os.path.join(work, "padded.dmp")
        kinds = pad_minidump(md, p)
        if kinds != {3, 4, 5}:
            raise Failure("the minidump lacks lists to pad: %s" % sorted(kinds))
        (want, n), (got, _) = frames_of(report(md)), frames_of(report(p))
        if not n or want != got:
            raise Failure("the padded minidump's interpreters %s differ from the unpadded one's %s"
                          % (got[:600], want[:600]))
        return "the same %d Python frames" % n
    tap.run(names[0], padded)

    def mac():
        p = os.path.join(work, "mac.dmp")
        pad_minidump(md, p, platform_id=0x8101)
        return analyze_refused([p], p, 3, "minidump of a macOS process, not of a Linux one")
    tap.run(names[1], mac)

    def maps():
        d = bytearray(open(md, "rb").read())
        streams, dir_rva = md_streams(d)
        hit = [s for s in streams if s[1] == 0x47670009]
        if not hit:
            raise Failure("core2minidump wrote no maps stream")
        md_repoint(d, dir_rva, hit[0][0], 0x47670009, b"no line of /proc/PID/maps here\n\x01\x02\n")
        p = os.path.join(work, "maps.dmp")
        open(p, "wb").write(d)
        report(p)
        return "read without a sanitizer report"
    tap.run(names[2], maps)


def process_cases(tap, work):
    names = ["a core whose PT_LOAD headers are all PT_NULL: one line, no sanitizer report",
             "3.11+ carets under a source line with an ESC and a tab: aligned under the call"]
    md_names = ["parser-level: a minidump whose lists are padded as Breakpad's Mac writer pads them: the same report",
                "parser-level: the padded minidump saying macOS: refused in one line, not a Linux process, exit 3",
                "parser-level: a minidump whose maps stream has no parsable line: no sanitizer report"]
    py312 = interpreters.path("py3.12")
    pythons = [py312] if py312 else []
    why = None if pythons else "python3.12 (pyenv) not installed"
    if not why and not shutil.which("gcore"):
        why = "gcore not installed (Debian package gdb)"
    if why:
        for n in names + md_names:
            tap.skip(n, why)
        return
    got = {}

    def make():
        got["core"], got["script"] = take_core(pythons[-1], work)
    tap.run("a gcore of CPython 3.12 on a line with an ESC and a tab", make)
    if "core" not in got:
        for n in names + md_names:
            tap.not_ok(n, "no core")
        return
    tap.run(names[0], no_load_case, got["core"], work)
    tap.run(names[1], caret_case, got["core"], got["script"])
    minidump_cases(tap, got["core"], work)


def main():
    tap = TAP()
    work = tempfile.mkdtemp(prefix="pycore-budget-")
    try:
        input_cases(tap, work)
        bomb_cases(tap, work)
        group_case(tap, work)
        process_cases(tap, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
