"""Native frames' arguments against gdb's, on real crashes.

For each interpreter present of pyenv's 3.10, 3.12 and 3.13 (shared
libpython with DWARF) and Debian's 3.11 (its DWARF from python3.11-dbg,
libc's from libc6-dbg), three crashes made by scenarios/args_crash.py,
each without and with faulthandler (whose handler re-raises the signal:
the crash's frames are then past a signal frame):

- decref: ctypes.pythonapi.Py_DecRef(0x10): Py_DecRef's o, and its inlined
  Py_XDECREF/Py_DECREF/_Py_IsImmortal's op, are 0x10 (the address the
  process passed), in the JSON, the text ("Py_DecRef (o=0x10)") and the
  HTML page;
- fatal: ctypes.pythonapi.Py_FatalError(MESSAGE): a frame of CPython's
  fatal error path has an argument whose string is MESSAGE;
- clib: a library the test builds with gcc -O2 -g (scenarios/argslib.c)
  stores through 0x18 in argslib_crash(n, u, msg, d, c, col, flag, where),
  called with values the process computed from 7: each is checked as the
  process passed it (the double d from xmm0/v0, the crashing frame's own
  register in the core's NT_PRFPREG note; with faulthandler, past the
  signal frame, pycore must say it does not have it), and with --redact
  the string, the process's `password`, is nowhere in the report;
- object: argslib_object(PyObject *o, ...) of that library, called with a
  dict: o's repr is the one the process wrote;

and in each, every argument gdb shows (its Python API on the same core:
frame.block()'s symbols with is_argument, frame.read_var) of every frame
from the crash up to the first eval loop frame: the same names in the same
order, the same value (gdb's text starts with pycore's value; a char
pointer's string as gdb quotes it), "<optimized out>" where pycore says
optimized out.  Where gdb shows a value pycore does not have, it is a
failure, except in a frame gdb reached through a tail-call frame it
inferred from DWARF call-site information: gdb resolves that frame's
entry values through the tail call with every register of the frame
that called the chain, caller-saved ones too (a guess), and its stack,
where pycore has only the registers a call keeps; and in an
outer frame, a caller-saved register, which gdb takes as unchanged (a
guess).  pycore may resolve an entry value gdb leaves <optimized out>
(LTO's fatal_error.lto_priv.0: gdb looks the callee up by its linker
name): each kind counted and said.  pycore runs with --native-all
(--native hides the interpreter's own frames).

Output: TAP, one line per case; a missing interpreter, gdb or gcc a skip
by name."""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.cores import take_crash
from pycoretest.native import c_quoted
from pycoretest.env import SCENARIOS, scaled

NAMES = ["py3.10", "py3.12", "py3.13", "debian3.11"]
SCENARIO_NAMES = ["decref", "fatal", "clib", "object", "decref-faulthandler", "fatal-faulthandler",
                  "clib-faulthandler"]
MESSAGE = "pycore test message"

GDB_SCRIPT = r'''
import gdb
import re


def where(f, sym, lookup):
    """How gdb locates SYM at LOOKUP: "entry" (an entry value), "reg:NAME"
    (a register), "other" or "?"."""
    try:
        f.select()
        text = gdb.execute("info address %s" % sym.name, to_string=True)
    except gdb.error:
        return "?"
    desc = None
    if "multi-location" in text:
        for chunk in text.split("Range ")[1:]:
            m = re.match(r"(0x[0-9a-f]+)-(0x[0-9a-f]+): (.*)", chunk, re.S)
            if m and int(m.group(1), 16) <= lookup < int(m.group(2), 16):
                desc = m.group(3)
    else:
        desc = text.split(" is ", 1)[-1]
    if desc is None:
        return "?"
    if "entry_value" in desc:
        return "entry"
    m = re.match(r"a variable in \$(\w+)", desc)
    return "reg:" + m.group(1) if m else "other"


f = gdb.newest_frame()
n = 0
outer = False
while f is not None and n < 300:
    n += 1
    kind = {gdb.INLINE_FRAME: "I", gdb.TAILCALL_FRAME: "T", gdb.SIGTRAMP_FRAME: "S"}.get(f.type(), "N")
    name = f.name()
    lookup = f.pc() - 1 if outer else f.pc()
    print("FRAME %s 0x%x %s" % (kind, f.pc(), name))
    try:
        b = f.block()
        while b is not None and b.function is None:
            b = b.superblock
    except RuntimeError:
        b = None
    if b is None:
        print("NOBLOCK")
    else:
        for sym in b:
            if not sym.is_argument:
                continue
            try:
                v = f.read_var(sym, b)
                s = "<optimized out>" if v.is_optimized_out else str(v)
            except Exception as e:
                s = "<error: %s>" % e
            print("ARG %s %s=%s" % (where(f, sym, lookup), sym.name, s.replace("\n", "\\n")))
    if name and name.startswith("_PyEval_EvalFrameDefault"):
        break
    # (the frame a signal interrupted is at its pc, not after a call)
    outer = (outer or kind != "I") and kind != "S"
    f = f.older()
'''


def gdb_frames(target, core, workdir):
    """gdb's frames of the crashing thread, innermost first, up to the
    first eval loop frame: dicts kind ("N", "I" inlined, "T" tail call, "S"
    signal trampoline),
    pc, name, args (a list of (name, text), None without a block)."""
    script = os.path.join(workdir, "gdb-args.py")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT)

    def no_core():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    g = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set auto-load python-scripts off"] + target.gdb_args() +
                       ["-ex", "python exec(open(%r).read())" % script, target.host_exe(), core],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(180), preexec_fn=no_core)
    frames = []
    gdb_text = g.stdout.decode("utf-8", "replace")
    for line in gdb_text.splitlines():
        if line.startswith("FRAME "):
            _, kind, pc, name = line.split(" ", 3)
            frames.append({"kind": kind, "pc": int(pc, 16), "name": None if name == "None" else name, "args": []})
        elif line == "NOBLOCK" and frames:
            frames[-1]["args"] = None
        elif line.startswith("ARG ") and frames and frames[-1]["args"] is not None:
            loc, _, rest = line[4:].partition(" ")
            name, _, value = rest.partition("=")
            frames[-1]["args"].append((name, value, loc))
    if not frames:
        raise pt.Failure("gdb found no frames: %s" % g.stderr.decode("utf-8", "replace")[-400:])
    return frames


def crashed_thread(report):
    for i in report.get("interpreters") or []:
        for t in i["threads"]:
            if t.get("crashed"):
                return t
    for t in report.get("native_threads") or []:
        if t.get("crashed"):
            return t
    raise pt.Failure("no crashed thread in the report")


def matches(f, g):
    if g["kind"] == "I":
        return f["inlined"] and f["function"] == g["name"]
    return not f["inlined"] and int(f["address"], 16) == g["pc"]


def same_value(a, gdb_text):
    """Whether pycore's argument A says what gdb's text does; why not."""
    if a["optimized_out"]:
        return gdb_text == "<optimized out>", "optimized out, gdb: %s" % gdb_text
    if a["value"] is None:
        return True, None
    if gdb_text == "<optimized out>":
        return False, "%s, gdb: <optimized out>" % a["value"]
    if gdb_text != a["value"] and not gdb_text.startswith(a["value"] + " "):
        return False, "%s, gdb: %s" % (a["value"], gdb_text)
    if a.get("string") is not None:
        q = c_quoted(a.get("string"))
        want = a["value"] + " " + q + ("..." if a.get("string_truncated") else "") if q else None
        if want and gdb_text != want:
            return False, "string %r, gdb: %s" % (a.get("string"), gdb_text)
    return True, None


# x86-64's System V ABI: the registers a call need not preserve.  gdb
# takes a register the call frame information does not mention as
# unchanged in the caller ("same value"), which for these is a guess.
CALLER_SAVED = {"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"}


def compare(mine, gdb):
    """Every argument gdb shows against pycore's: (compared, notes)."""
    j = 0
    compared, notes = 0, []
    counts = {"tail": 0, "guess": 0, "entry": 0, "unavailable": 0}
    for idx, g in enumerate(gdb):
        if g["kind"] == "T":
            continue
        k = next((k for k in range(j, len(mine)) if matches(mine[k], g)), None)
        if k is None:
            notes.append("gdb's #%d %s (0x%x) is not among pycore's frames" % (idx, g["name"], g["pc"]))
            continue
        j = k + 1
        f = mine[k]
        if g["args"] is None or not g["args"]:
            continue
        if f["args"] is None:
            raise pt.Failure("#%d %s: pycore has no arguments, gdb %s" % (idx, g["name"], g["args"]))
        names = [a["name"] for a in f["args"]]
        if names != [n for n, _, _ in g["args"]]:
            raise pt.Failure("#%d %s: arguments %s, gdb %s" % (idx, g["name"], names, [n for n, _, _ in g["args"]]))
        # registers are all known in the first frame and in one a signal interrupted
        since = max([i for i in range(idx) if gdb[i]["kind"] == "S"], default=-1) + 1
        outer = any(x["kind"] != "I" for x in gdb[since:idx])
        # the physical caller: past this frame's own inlined calls
        c = idx
        while c < len(gdb) and gdb[c]["kind"] == "I":
            c += 1
        through_tail = c + 1 < len(gdb) and gdb[c + 1]["kind"] == "T"
        for a, (_, text, loc) in zip(f["args"], g["args"]):
            ok, why = same_value(a, text)
            if not ok and a["optimized_out"] and through_tail:
                counts["tail"] += 1
            elif not ok and a["optimized_out"] and outer and loc[4:] in CALLER_SAVED and loc.startswith("reg:"):
                counts["guess"] += 1
            elif not ok and text == "<optimized out>" and loc == "entry" and a["value"] is not None:
                counts["entry"] += 1
            elif a["value"] is None and not a["optimized_out"]:
                if text == "<synthetic pointer>" and "implicit_pointer" not in (a.get("unavailable") or ""):
                    raise pt.Failure("#%d %s: %s unavailable: %s, gdb: %s" % (idx, g["name"], a["name"],
                                                                              a.get("unavailable"), text))
                counts["unavailable"] += 1
            elif not ok:
                raise pt.Failure("#%d %s: %s = %s" % (idx, g["name"], a["name"], why))
            else:
                compared += 1
    said = {"tail": "resolved by gdb through a tail-call frame it infers, from what pycore does not have there (a "
                    "register a call does not keep, the jumping function's stack): optimized out in pycore",
            "guess": "in a caller-saved register in an outer frame: gdb takes it as unchanged, pycore says "
                     "optimized out",
            "entry": "entry values gdb leaves <optimized out> (LTO's fatal_error.lto_priv.0 among them), pycore "
                     "resolves through the caller's call site",
            "unavailable": "located but not printed by pycore (a struct, a float register, a synthetic pointer)"}
    notes += ["%d %s" % (n, said[k]) for k, n in counts.items() if n]
    return compared, notes


def arg_of(mine, function, name):
    for f in mine:
        if f["function"] == function and f["args"]:
            for a in f["args"]:
                if a["name"] == name:
                    return a
    raise pt.Failure("no argument %s of %s in pycore's frames" % (name, function))


def expect(a, value, string=None):
    if a["value"] != value or (string is not None and a.get("string") != string):
        raise pt.Failure("%s = %s %r, the process passed %s %r" % (a["name"], a["value"], a.get("string"), value,
                                                                   string))


def truth(scenario, mine, truth_path, handler):
    """What the process passed, in pycore's frames."""
    if scenario == "object":
        with open(truth_path) as f:
            want = json.load(f)["repr"]
        a = arg_of(mine, "argslib_object", "o")
        if a.get("repr") != want:
            raise pt.Failure("o's repr %r, the process's %r" % (a.get("repr"), want))
        return
    if scenario == "decref":
        expect(arg_of(mine, "Py_DecRef", "o"), "0x10")
        for fn in ("Py_XDECREF", "Py_DECREF"):
            if any(f["function"] == fn for f in mine):
                expect(arg_of(mine, fn, "op"), "0x10")
    elif scenario == "fatal":
        if not any(a.get("string") == MESSAGE for f in mine for a in (f["args"] or [])):
            raise pt.Failure("no argument of the fatal error's frames is %r: %s" % (
                MESSAGE, [(f["function"], f["args"]) for f in mine if f["args"]]))
    else:
        n = 7
        want = {"n": str(n * 3), "u": str(n << 40), "msg": None, "d": "3.5", "c": "72 'H'", "col": "ARGSLIB_BLUE",
                "flag": "true", "where": "0x18"}
        for name, value in want.items():
            a = arg_of(mine, "argslib_crash", name)
            if name == "msg":
                if a.get("string") != "hello from argslib":
                    raise pt.Failure("msg's string %r" % a.get("string"))
            elif name == "d" and handler and a["value"] is None and not a["optimized_out"]:
                # (in xmm0, which only the thread's first frame has: past the
                # handler's signal frame pycore says it is not read)
                if "vector register" not in (a.get("unavailable") or ""):
                    raise pt.Failure("d unavailable: %s" % a.get("unavailable"))
            else:
                expect(a, value)


def build_lib(workdir):
    if not shutil.which("gcc"):
        raise pt.Skip("no gcc (Debian package gcc)")
    out = os.path.join(workdir, "libargs.so")
    b = subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-g", "-o", out, os.path.join(SCENARIOS, "argslib.c")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b.returncode != 0:
        raise pt.Failure("cannot build argslib: %s" % b.stdout.decode("utf-8", "replace")[-400:])
    return out


def check(target, scenario, workdir, subs):
    if not shutil.which("gdb"):
        raise pt.Skip("no gdb (Debian package gdb)")
    handler = scenario.endswith("-faulthandler")
    scenario = scenario.split("-")[0]
    argv = ["args_crash.py", scenario]
    signo = signal.SIGSEGV
    if scenario == "fatal":
        argv.append(MESSAGE)
        signo = signal.SIGABRT
    elif scenario in ("clib", "object"):
        argv.append(build_lib(workdir))
    if handler:
        argv.append("--faulthandler")
    core, truth_path = take_crash(target, workdir, argv, signo)
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--native-all"] + target.pycore_args() + [core])
    if rc != 0:
        raise pt.Failure("pycore: exit %d: %s" % (rc, err.strip()))
    mine = [f for f in crashed_thread(pt.load_report(out))["frames"] if f["kind"] == "native"]
    truth(scenario, mine, truth_path, handler)
    if scenario == "decref":
        rc, text, err = pt.run_pycore(["analyze", "--native-all"] + target.pycore_args() + [core])
        if " Py_DecRef (o=0x10) in " not in text:
            raise pt.Failure("the text has no \"Py_DecRef (o=0x10)\":\n%s" % text)
        rc, page, err = pt.run_pycore(["analyze", "--native-all", "--format", "html"] + target.pycore_args() +
                                      [core])
        if 'Py_DecRef</span><span class="args"> (o=0x10)</span>' not in page:
            raise pt.Failure("the HTML page has no Py_DecRef (o=0x10)")
    if scenario == "clib":
        # the string passed was the process's `password` (a local: --locals): --redact hides it in the arguments too
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--native-all", "--locals", "--redact"] +
                                     target.pycore_args() + [core])
        if rc != 0 or "hello from argslib" in out:
            raise pt.Failure("--redact: exit %d, the secret %s" % (rc, "in the report" if rc == 0 else err))
        a = arg_of([f for f in crashed_thread(pt.load_report(out))["frames"] if f["kind"] == "native"],
                   "argslib_crash", "msg")
        if a.get("string") != "<redacted string of 18 characters>":
            raise pt.Failure("--redact: msg's string %r" % a.get("string"))
    compared, notes = compare(mine, gdb_frames(target, core, workdir))
    if not compared:
        raise pt.Failure("no argument compared: %s" % notes)
    return "%d arguments as gdb shows them%s" % (compared, "; " + "; ".join(notes) if notes else "")


def main():
    tap = pt.TAP()
    for name in NAMES:
        target, why = interpreters.find(name)
        if not why and name.startswith("debian") and not os.path.exists("/usr/lib/debug/.build-id") :
            why = "no debug files (python3.11-dbg, libc6-dbg)"
        pt.scenario_cases(tap, name, target, why, SCENARIO_NAMES,
                          lambda scenario, workdir, subs, t=target: check(t, scenario, workdir, subs))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
