"""Every error code a JSON report can carry, each in a real report of a real
process, validated against the schema (src/report/pycore-report.schema.json),
whose list of codes must be src/util/error.c's one table exactly.

- node errors (error_code, error_address beside a node's error), from
  analyze --format json:
  * not-captured: the kernel's core of the crash scenario (py3.11) cut
    where the crashing thread's C stack begins: that thread's current frame
    pointer (3.11's _PyCFrame) is beyond the cut; its error is
    not-captured at that address, an address the cut file does not hold
    and the whole core does;
  * corrupt: a gcore of the locals scenario under 3.12 whose first thread's
    current frame is patched to point to itself: corrupt, at that frame;
  * unsupported, limit: variables of that gcore whose type's own __repr__
    pycore does not run, or whose repr a limit cut (at the variable);
- records (batch's lines, the hook's report file), error.code and kind:
  * io (a path that does not exist), corrupt (a core whose program header
    count escapes to a missing section header), truncated and not-python
    (the kernel's core of sleep, cut after its notes, and whole),
    unsupported (a 3.13 gcore whose _Py_DebugOffsets claim 3.99: at
    _PyRuntime), timeout (a gzip stream of an ELF magic and 16 GiB of
    zeros: decompressing runs past the worker's time budget, 3/4 of
    --timeout; a FIFO is refused before it is opened, code io);
  * the coredump hook (run as check-coredump.py runs it, in a private
    mount namespace with the real systemd-coredump and journald): a crash
    of sleep with Executables= naming it is analyzed and skipped with a
    record of code not-python, and a garbage core gets the record of code
    bad-input its readers have always seen (kind: truncated, corrupt, ...).

Output: TAP, one line per code; a skip by name where a core cannot be made.
"""
import glob
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
import zlib

import pycoretest as cs
from pycoretest import coredump as ccd
from pycoretest.corefile import Core, crashing_stack_offset, layout, table
from pycoretest.env import scaled

HERE = os.path.dirname(os.path.abspath(__file__))
Failure, Skip = cs.Failure, cs.Skip


def table_codes():
    """The names of src/util/error.c's table, in its order."""
    text = open(os.path.join(cs.SRCDIR, "src", "util", "error.c")).read()
    return re.findall(r'\[PC_E\w+\] = \{ "([a-z-]+)"', text)


def schema():
    return json.load(open(os.path.join(cs.SRCDIR, "src", "report", "pycore-report.schema.json")))


def analyze(core, *extra):
    p = subprocess.run([cs.PYCORE, "analyze", "--format", "json"] + list(extra) + [core],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120))
    if p.returncode not in (0, 1):
        raise Failure("pycore analyze exited %d: %s" % (p.returncode, p.stderr.decode()[-500:]))
    return cs.load_report(p.stdout)


def batch(paths, *extra):
    """Batch's records of PATHS (each validated), by input path."""
    p = subprocess.run([cs.PYCORE, "batch", "--ordered"] + list(extra) + list(paths),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(300))
    if p.returncode != 0:
        raise Failure("pycore batch exited %d: %s" % (p.returncode, p.stderr.decode()[-500:]))
    recs = cs.validator().check(p.stdout.decode("utf-8", "replace"), "batch's records")
    return {r["input"]["path"]: r for r in recs}


def nodes(report):
    """Every node of REPORT that has an error: (where, node)."""
    out = []

    def walk(o, where):
        if isinstance(o, dict):
            if "error_code" in o and o.get("error") is not None:
                out.append((where, o))
            for k, v in o.items():
                walk(v, where + "/" + k)
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, "%s/%d" % (where, i))
    walk(report, "")
    return out


def record(recs, path, code, kind=None):
    r = recs.get(path)
    if not r or "error" not in r:
        raise Failure("%s: no error record: %s" % (path, json.dumps(r)[:300]))
    e = r["error"]
    if e["code"] != code or e["kind"] != (kind or code):
        raise Failure("%s: code %r, kind %r; want %r, %r: %s" % (path, e["code"], e["kind"], code, kind or code,
                                                                e["message"]))
    return e


class Loads:
    """An ELF core's PT_LOAD segments: which addresses its file holds."""

    def __init__(self, path):
        with open(path, "rb") as f:
            head = f.read(64)
            phoff, = struct.unpack_from("<Q", head, 32)
            phnum, = struct.unpack_from("<H", head, 56)
            f.seek(phoff)
            ph = f.read(56 * phnum)
        self.size = os.path.getsize(path)
        self.loads = []
        for i in range(phnum):
            t, _, off, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", ph, 56 * i)
            if t == 1 and filesz:
                self.loads.append((vaddr, vaddr + filesz, off))

    def holds(self, addr, size=8):
        return any(s <= addr and addr + size <= e and off + (addr - s) + size <= self.size
                   for s, e, off in self.loads)


def kernel_core(argv, work, cwd):
    """The kernel's core of ARGV killed by SIGSEGV (RLIMIT_CORE unlimited)."""
    pattern, why = cs.kernel_core_usable()
    if why:
        raise Skip(why)

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    p = subprocess.Popen(argv, cwd=cwd, preexec_fn=unlimited)
    time.sleep(0.2)
    p.send_signal(signal.SIGSEGV)
    p.wait()
    core = cs.kernel_core_path(pattern, p.pid, cwd)
    if not os.path.exists(core):
        raise Skip("the kernel wrote no core of %s (%s)" % (argv[0], core))
    return core


def cut(src, dst, n):
    with open(src, "rb") as f, open(dst, "wb") as g:
        left = n
        while left:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            g.write(chunk)
            left -= len(chunk)


# ---- the hook, inside a private mount namespace (pycoretest.coredump) ----

def hook_inner(out_path):
    work = tempfile.mkdtemp(prefix="pycore-errors-hook-")
    os.chmod(work, 0o755)
    result = {}
    world = None
    try:
        env = {"TMPDIR": "/tmp"}
        for d in ("state", "run", "cache"):
            os.mkdir(os.path.join(work, d))
            env[d.upper() + "_DIRECTORY" if d != "run" else "RUNTIME_DIRECTORY"] = os.path.join(work, d)
        world = ccd.World(work)
        sleeper = subprocess.Popen(["sleep", "1000"])
        try:
            sleeper.send_signal(signal.SIGSTOP)
            g = subprocess.run(["gcore", "-o", os.path.join(work, "sleep"), str(sleeper.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(120))
            if g.returncode != 0:
                raise Failure("gcore of sleep failed: %s" % g.stdout.decode()[-500:])
            inst, entry = world.store(sleeper.pid, os.path.join(work, "sleep.%d" % sleeper.pid),
                                      signal.SIGSEGV, int(time.time()))
        finally:
            sleeper.kill()
            sleeper.wait()
        stored = entry["COREDUMP_FILENAME"]
        side = ccd.sidecar_of(stored)
        exe = os.path.realpath(shutil.which("sleep"))
        conf = ccd.config(work, "sleep", "Executables=%s\nRateLimitBurst=100\n" % exe)
        rc, out, err = ccd.hook(["--config", conf, inst], env)
        result["skip"] = {"rc": rc, "err": err, "records": open(side).read() if os.path.exists(side) else None}
        if os.path.exists(side):
            os.unlink(side)
        with open(stored, "r+b") as f:   # check-coredump.py's hostile core: garbage zstd
            f.write(b"\x28\xb5\x2f\xfd\x00\x58" + bytes(range(256)) * 64)
            f.truncate(6 + 256 * 64)
        rc, out, err = ccd.hook(["--config", conf, inst], env)
        result["bad"] = {"rc": rc, "err": err, "records": open(side).read() if os.path.exists(side) else None}
    except (Failure, Skip) as e:
        result["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        if world:
            world.stop()
        subprocess.run(["umount", ccd.COREDUMP_DIR], stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)
        with open(out_path, "w") as f:
            json.dump(result, f)
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--hook-inner":
        return hook_inner(sys.argv[2])
    tap = cs.TAP()
    work = tempfile.mkdtemp(prefix="pycore-errors-")
    os.chmod(work, 0o755)
    seen = set()   # the codes met, in nodes and records

    def saw(code):
        seen.add(code)

    try:
        def schema_lists_table():
            names = table_codes()
            defs = schema()["$defs"]
            listed = defs["error-code"]["enum"]
            record = defs["error-record"]["properties"]["error"]["properties"]["code"]["enum"]
            if not names or sorted(names) != sorted(listed):
                raise Failure("error.c's table %s, the schema's error-code %s" % (names, listed))
            if sorted(record) != sorted(names + ["bad-input"]):
                raise Failure("the schema's record codes %s: want the table's and bad-input" % record)
            return "%d codes: %s" % (len(names), ", ".join(names))
        tap.run("the schema lists exactly the codes of error.c's one table (records: and the hook's bad-input)",
                schema_lists_table)

        # -- node errors --
        def not_captured():
            target, why = cs.interpreter(os.path.join(HERE, "interpreters", "py3.11.interp"))
            if why:
                raise Skip(why)
            why = cs.kernel_core_usable()[1]
            if why:
                raise Skip(why)
            sub = target.workdir("pycore-errors-311-")
            try:
                core, truth = cs.take_crash(target, sub, ["crash.py"], signal.SIGSEGV)
                at = crashing_stack_offset(core)
                short = os.path.join(work, "stack-cut.core")
                cut(core, short, at)
                whole = Loads(core)
            finally:
                shutil.rmtree(sub, ignore_errors=True)
            report = analyze(short)
            got = [(w, n) for w, n in nodes(report) if n["error_code"] == "not-captured"]
            if not got:
                raise Failure("no node with error_code not-captured: %s" % [(w, n["error_code"], n["error"])
                                                                             for w, n in nodes(report)])
            held = Loads(short)
            for w, n in got:
                a = n["error_address"]
                if a is None or a not in n["error"]:
                    raise Failure("%s: error_address %s, not the address its error names: %s" % (w, a, n["error"]))
                if held.holds(int(a, 16)) or not whole.holds(int(a, 16)):
                    raise Failure("%s: %s is %s by the cut core, %s by the whole one" % (
                        w, a, "held" if held.holds(int(a, 16)) else "not held",
                        "held" if whole.holds(int(a, 16)) else "not held"))
            saw("not-captured")
            return "%s: %s at %s (beyond the cut, in the whole core)" % (got[0][0], got[0][1]["error_code"],
                                                                        got[0][1]["error_address"])
        tap.run("not-captured: a thread whose frame pointer lies beyond a kernel core's cut, at that address",
                not_captured)

        gcore = {}

        def corrupt_node():
            pythons = sorted(glob.glob("/root/.pyenv/versions/3.12*/bin/python3.12"))
            if not pythons or not shutil.which("gcore"):
                raise Skip("needs python3.12 (pyenv) and gcore (Debian package gdb)")
            core, _ = cs.take_gcore(pythons[-1], "locals", work)
            intact = analyze(core, "--locals")
            gcore.update(report=intact)
            L = table(12)
            runtime = int(intact["python"]["runtime_address"], 16)
            c = Core(core)
            interp = c.u64(runtime + L["runtime_interpreters_head"])
            ts = c.u64(interp + L["interp_tstate_head"])
            frame = c.u64(c.u64(ts + L["tstate_cframe"]) + L["cframe_current_frame"])
            c.put64(frame + L["iframe_previous"], frame)
            patched = os.path.join(work, "self-frame.core")
            c.save(patched)
            del c
            os.unlink(core)
            report = analyze(patched)
            want = "0x%x" % frame
            got = [(w, n) for w, n in nodes(report) if n["error_code"] == "corrupt" and n["error_address"] == want]
            if not got:
                raise Failure("no node corrupt at %s: %s" % (want, [(w, n["error_code"], n["error_address"],
                                                                       n["error"]) for w, n in nodes(report)]))
            saw("corrupt")
            return "%s: corrupt at %s: %s" % (got[0][0], want, got[0][1]["error"])
        tap.run("corrupt: a frame chain that points to itself, at that frame", corrupt_node)

        def variables():
            if "report" not in gcore:
                raise Skip("the 3.12 gcore could not be made")
            kinds = {}
            for w, n in nodes(gcore["report"]):
                if "/locals/" in w:
                    kinds.setdefault(n["error_code"], (w, n))
            for code, text in (("unsupported", "not run"), ("limit", "repr cut")):
                if code not in kinds:
                    raise Failure("no variable of error_code %s: %s" % (code, sorted(kinds)))
                w, n = kinds[code]
                if text not in n["error"] or n["error_address"] != n["address"]:
                    raise Failure("%s: %s at %s (the variable is at %s): %s" % (w, code, n["error_address"],
                                                                                n["address"], n["error"]))
                saw(code)
            return "; ".join("%s: %s" % (c, kinds[c][1]["error"]) for c in ("unsupported", "limit"))
        tap.run("unsupported and limit: variables whose own __repr__ is not run, or whose repr was cut", variables)

        # -- records --
        def records():
            paths = {}
            paths["io"] = os.path.join(work, "no-such-core")
            sl = os.path.join(work, "sleep")
            os.mkdir(sl)
            core = kernel_core(["sleep", "100"], work, sl)
            notes, _ = layout(core)
            paths["not-python"] = core
            paths["truncated"] = os.path.join(work, "sleep-cut.core")
            cut(core, paths["truncated"], notes)
            paths["corrupt"] = os.path.join(work, "phnum.core")
            data = bytearray(open(core, "rb").read(64 * 1024))
            struct.pack_into("<H", data, 56, 0xffff)   # e_phnum: PN_XNUM, no section header holds the count
            open(paths["corrupt"], "wb").write(data)
            recs = batch(sorted(paths.values()))
            out = []
            for code, path in sorted(paths.items()):
                e = record(recs, path, code)
                saw(code)
                out.append("%s (%s)" % (code, e["message"][:60]))
            return "; ".join(out)
        tap.run("io, corrupt, truncated, not-python: batch's records of a missing file and of sleep's kernel "
                "core, broken, cut and whole", records)

        def unsupported_record():
            pythons = sorted(glob.glob("/root/.pyenv/versions/3.13*/bin/python3.13"))
            if not pythons or not shutil.which("gcore"):
                raise Skip("needs python3.13 (pyenv) and gcore (Debian package gdb)")
            core, _ = cs.take_gcore(pythons[-1], "locals", work)
            runtime = analyze(core)["python"]["runtime_address"]
            data = bytearray(open(core, "rb").read())
            os.unlink(core)
            at = data.find(b"xdebugpy")
            if at < 0:
                raise Failure("no _Py_DebugOffsets cookie in the 3.13 core")
            struct.pack_into("<Q", data, at + 8, 0x036300f0)   # its version: 3.99.0
            path = os.path.join(work, "v3.99.core")
            open(path, "wb").write(data)
            del data
            e = record(batch([path]), path, "unsupported")
            if e["address"] != runtime:
                raise Failure("address %s, _PyRuntime is at %s: %s" % (e["address"], runtime, e["message"]))
            saw("unsupported")
            return "at _PyRuntime %s: %s" % (runtime, e["message"][:80])
        tap.run("unsupported: a 3.13 core whose debug offsets claim 3.99 (batch's record, at _PyRuntime)",
                unsupported_record)

        def timeout():
            # gzip members one after another are one stream (as gzip -d
            # reads them): 256 of 64 MiB of zeros, holes on the disk
            bomb = os.path.join(work, "zeros.gz")
            unit = zlib.compressobj(1, zlib.DEFLATED, 31)
            member = unit.compress(bytes(64 << 20)) + unit.flush()
            first = zlib.compressobj(1, zlib.DEFLATED, 31)
            with open(bomb, "wb") as f:
                f.write(first.compress(b"\x7fELF" + bytes(64 << 20)) + first.flush())
                for _ in range(255):
                    f.write(member)
            t = time.monotonic()
            e = record(batch([bomb], "--timeout", "0.5"), bomb, "timeout")
            saw("timeout")
            return "%.1f s: %s" % (time.monotonic() - t, e["message"])
        tap.run("timeout: a worker's time budget runs out while it decompresses a bomb", timeout)

        def hook():
            why = ccd.why_not()
            if why:
                raise Skip(why)
            out = os.path.join(work, "hook.json")
            rc = ccd.in_namespace(__file__, "--hook-inner", out, timeout=scaled(600))
            if rc != 0 or not os.path.exists(out):
                raise Failure("the hook's namespace exited %d" % rc)
            res = json.load(open(out))
            if "error" in res:
                raise Failure(res["error"])
            said = []
            for key, code, kinds in (("skip", "not-python", ("not-python",)),
                                     ("bad", "bad-input", ("io", "format", "corrupt", "truncated"))):
                r = res[key]
                if r["rc"] != 0 or not r["records"]:
                    raise Failure("%s: exit %d, no report file: %s" % (key, r["rc"], r["err"]))
                recs = cs.validator().check(r["records"], "the hook's report file")
                e = recs[0].get("error") if len(recs) == 1 else None
                if not e or e["code"] != code or e["kind"] not in kinds:
                    raise Failure("%s: %s" % (key, r["records"][:400]))
                said.append("%s (kind %s)" % (code, e["kind"]))
            saw("hook")
            return "; ".join(said)
        tap.run("the coredump hook: sleep's crash in Executables= skipped with a not-python record; a garbage "
                "core's bad-input record", hook)

        def all_codes():
            want = {"not-captured", "corrupt", "unsupported", "limit", "io", "truncated", "not-python", "timeout",
                    "hook"}
            if not want <= seen:
                raise Skip("not met here (their cases skipped): %s" % ", ".join(sorted(want - seen)))
            return "met: %s" % ", ".join(sorted(seen))
        tap.run("every code the issue names met in a real, schema-valid report", all_codes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
