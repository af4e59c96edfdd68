"""Files mapped twice, and runtimes proven before they are believed.

A process that maps pieces of its own ELF files again (the first page,
pieces at other file offsets: libpython, the C library, the _ctypes
extension module and the executable), as gdb's libbacktrace, crash
reporters and JITs do (scenarios/mapped_pieces.py): a plain python3.12
(gcore's snapshot and its compact dump, the kernel's core of a real
crash, analyze --pid while it runs, lldb's minidump of it, and Breakpad's,
whose module list names the executable twice and whose DSO debug stream
holds the loader's list; it holds no heap, so only the modules and the
partial report's exit are checked); an application embedding libpython that maps pieces
before Py_Initialize too (embed/mapped.c; gcore, real crash); Python
embedded in gdb (Debian's gdb embeds python3.11) whose code maps pieces
inside gdb, snapshot with gcore.  The truth is the process's own: its
threads and frames (_truth.py), and each loaded object's ELF header
address as the dynamic linker told the process (dl_iterate_phdr through
ctypes).  Every case is read in JSON (schema-checked), text and HTML: all
the Python threads with their frames, exit 0, and each module's base and
start equal to the loader's, "base_from" "link_map"; a crash's native
frame (--native) a function of the C library.

Then proof before belief, on the python3.12 snapshot patched: a thread
state pointing to another interpreter (every runtime candidate refused:
exit 1, the reason named), and the interpreter list emptied while a
thread runs the eval loop (exit 1: no Python thread read, the thread
named).  Output: TAP, one line per case."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.corefile import Core, table
from pycoretest.htmlpage import Page, esc
from pycoretest.env import scaled

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    "python3.12 mapping pieces of its files: gcore",
    "python3.12 mapping pieces of its files: a real crash",
    "python3.12 mapping pieces of its files: analyze --pid",
    "python3.12 mapping pieces of its files: lldb's minidump",
    "python3.12 mapping pieces of its files: Breakpad's minidump (the loader's list in its DSO debug stream)",
    "an embedding program mapping pieces before and after Py_Initialize: gcore",
    "an embedding program mapping pieces before and after Py_Initialize: a real crash",
    "Python in gdb mapping pieces of libpython, gdb and _ctypes again: gcore",
    "a thread state pointing to another interpreter: the runtime refused, exit 1, the reason named",
    "an interpreter pointing to another runtime: the runtime refused, exit 1, the reason named",
    "the interpreter list emptied while a thread runs the eval loop: exit 1, that thread named",
]


# ---------------------------------------------------------------------------
# The three renderings against the truth
# ---------------------------------------------------------------------------

def check_modules(report, truth, label_from="link_map"):
    """Each loaded object's base (and start) is the loader's; the objects
    the process mapped pieces of are all there."""
    mods = {}
    for m in report["process"]["modules"]:
        mods.setdefault(os.path.realpath(m["path"]), m)
    mapped = set(p for p, _, _ in truth["mapped"])
    checked = 0
    for path, base in truth["objects"].items():
        m = mods.get(path)
        if m is None:
            if path in mapped:
                raise pt.Failure("no module %s in the report (the process mapped pieces of it)" % path)
            continue
        if m["base"] != "0x%x" % base or m["start"] != "0x%x" % base:
            raise pt.Failure("%s: base %s, start %s; the loader placed it at 0x%x" % (path, m["base"], m["start"], base))
        if m["base_from"] != label_from:
            raise pt.Failure("%s: base_from %r, not %r" % (path, m["base_from"], label_from))
        checked += 1
    return checked


def text_blocks(text):
    """{tid: [(file, line, function), ...] outermost first} of the text's
    thread sections ("Thread N (...)" or "K threads with this stack: N ...")."""
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^Thread (\d+) ", line)
        g = re.match(r"^\d+ threads with this stack: (.*)$", line)
        if m or g:
            cur = []
            tids = [m.group(1)] if m else re.findall(r"(\d+) \"", g.group(1))
            for t in tids:
                blocks[int(t)] = cur
            continue
        f = re.match(r'^  File "(.*)", line (\d+), in (.*)$', line)
        if f and cur is not None:
            cur.append((f.group(1), int(f.group(2)), f.group(3)))
        elif line and not line.startswith(" ") and not line.startswith("Traceback"):
            cur = None
    return blocks


def check_text(text, truth):
    blocks = text_blocks(text)
    for tt in truth["threads"]:
        got = blocks.get(tt["native_id"])
        want = [(f["file"], f["line"], f["function"]) for f in reversed(tt["frames"])]
        if got != want:
            raise pt.Failure("text: thread %s: frames %r, the process's %r" % (tt["native_id"], got, want))


def check_html(page_text, report, truth):
    page = Page(page_text)
    if page.bad:
        raise pt.Failure("html: markup the renderer does not write: %s" % page.bad[:3])
    sections = {}
    for s in page.root.find("section", "thread"):
        for tid in s.attrs.get("data-tids", "").split():
            sections[int(tid)] = s
    for tt in truth["threads"]:
        s = sections.get(tt["native_id"])
        if s is None:
            raise pt.Failure("html: no section of thread %s" % tt["native_id"])
        funcs = [n.text() for li in s.find("li", "frame") if "python" in li.cls() for n in li.find("span", "func")]
        want = [esc(f["function"]) for f in reversed(tt["frames"])]
        if funcs != want:
            raise pt.Failure("html: thread %s: functions %r, the process's %r" % (tt["native_id"], funcs, want))
    rows = {}
    for tr in page.root.find("tr"):
        cells = [td.text() for td in tr.find("td")]
        if len(cells) >= 4:
            rows[cells[0]] = cells
    for m in report["process"]["modules"]:
        if os.path.realpath(m["path"]) in truth["objects"] and m["base"]:
            cells = rows.get(esc(m["path"]))
            if not cells or cells[2] != m["base"] or cells[3] != m["base_from"]:
                raise pt.Failure("html: module %s: row %r, the JSON's base %s from %s"
                                 % (m["path"], cells, m["base"], m["base_from"]))


def read_all(target, truth, crashed=None, label_from="link_map"):
    """TARGET (a core, or ["--pid", PID]) in JSON, text and HTML."""
    args = target if isinstance(target, list) else [target]
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + args)
    if rc != 0:
        raise pt.Failure("json: exit %d: %s" % (rc, err.strip()[-400:]))
    report = pt.load_report(out)
    pt.compare(truth, report, crashed)
    n = check_modules(report, truth, label_from)
    if crashed:
        # the crash site: in the C library the process mapped pieces of
        # again (ctypes._string_at(0) faults in strlen), named
        rc, out, err = pt.run_pycore(["analyze", "--native", "--format", "json"] + args)
        if rc != 0:
            raise pt.Failure("--native: exit %d: %s" % (rc, err.strip()[-400:]))
        nf = pt.load_report(out)["summary"]["native_frame"] or {}
        if not nf.get("function") or not os.path.basename(nf.get("file") or "").startswith("libc.so"):
            raise pt.Failure("--native: the crash frame %s %s, not a function of libc"
                             % (nf.get("function"), nf.get("file")))
    if target and isinstance(target, list):
        return n    # a live process: one read is what it is
    rc, text, err = pt.run_pycore(["analyze", "--verbose"] + args)
    if rc != 0:
        raise pt.Failure("text: exit %d: %s" % (rc, err.strip()[-400:]))
    check_text(text, truth)
    words = {"link_map": "the dynamic linker's list", "module list": "the minidump's module list"}[label_from]
    for path, base in truth["objects"].items():
        if "libpython" in path and "    base 0x%x, from %s" % (base, words) not in text:
            raise pt.Failure("text: no line naming %s's base 0x%x from %s" % (path, base, words))
    rc, page, err = pt.run_pycore(["analyze", "--format", "html"] + args)
    if rc != 0:
        raise pt.Failure("html: exit %d: %s" % (rc, err.strip()[-400:]))
    check_html(page, report, truth)
    return n


# ---------------------------------------------------------------------------
# The processes
# ---------------------------------------------------------------------------

def gcore_of(argv, work, env=None, before=None):
    """gcore's core of ARGV once it prints READY: the core's path."""
    proc = subprocess.Popen(argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        if not pt.wait_ready(proc, timeout=60):
            raise pt.Failure("%s did not get ready (exit %s)" % (os.path.basename(argv[0]), proc.poll()))
        time.sleep(0.3)
        if before:
            before(proc)
        g = subprocess.run(["gcore", "-o", os.path.join(work, "core"), str(proc.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(180))
        core = os.path.join(work, "core.%d" % proc.pid)
        if g.returncode != 0 or not os.path.exists(core):
            raise pt.Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-400:])
        return core
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def fresh(work, name):
    d = os.path.join(work, name)
    os.makedirs(d)
    return d


def build_embed(python, work):
    if not shutil.which("cc"):
        raise pt.Skip("no cc compiler (Debian package gcc)")
    prefix = os.path.dirname(os.path.dirname(python))
    minor = os.path.basename(python)[len("python"):]
    cfg = os.path.join(prefix, "bin", "python%s-config" % minor)
    if not os.access(cfg, os.X_OK):
        raise pt.Skip("no %s to build the embedding program with" % cfg)
    cflags = subprocess.run([cfg, "--includes"], stdout=subprocess.PIPE).stdout.decode().split()
    exe = os.path.join(work, "mapping-app")
    b = subprocess.run(["cc", "-o", exe, os.path.join(HERE, "embed", "mapped.c")] + cflags +
                       ["-L" + os.path.join(prefix, "lib"), "-lpython" + minor,
                        "-Wl,-rpath," + os.path.join(prefix, "lib")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b.returncode != 0:
        raise pt.Failure("cannot build the embedding program: %s" % b.stdout.decode()[-300:])
    return exe


def pieces_mapped(truth, want):
    """The process mapped pieces of each file of WANT (by name's start)."""
    names = set(os.path.basename(p) for p, _, _ in truth["mapped"])
    for w in want:
        if not any(n.startswith(w) for n in names):
            raise pt.Failure("the process mapped no piece of %s (%s)" % (w, sorted(names)))


def main():
    tap = pt.TAP()
    py = interpreters.path("py3.12")
    why = None
    if not py:
        why = interpreters.where("py3.12")[1]
    elif not shutil.which("gcore"):
        why = "gcore not installed (Debian package gdb)"
    work = tempfile.mkdtemp(prefix="pycore-mappings-")
    scenario = os.path.join(pt.SCENARIOS, "mapped_pieces.py")
    got = {}
    labels = iter(CASES)

    def case(fn, skip=None):
        label = next(labels)
        if skip:
            tap.skip(label, skip)
        else:
            tap.run(label, fn)

    def script_gcore():
        d = fresh(work, "gcore")
        truth_path = os.path.join(d, "truth.json")
        core = gcore_of([py, scenario, truth_path, "snapshot"], d)
        truth = json.load(open(truth_path))
        pieces_mapped(truth, ["libpython", "libc.so", "_ctypes", "python3"])
        n = read_all(core, truth)
        got.update(core=core, truth=truth)
        # its compact dump (--save): the modules as the loader placed them too
        compact = os.path.join(d, "compact.core")
        rc, _, err = pt.run_pycore(["analyze", "--format", "json", "--save", compact, core])
        if rc != 0:
            raise pt.Failure("--save: exit %d: %s" % (rc, err.strip()[-300:]))
        read_all(compact, truth)
        return "%d threads, %d module bases the loader's, in the core and its compact dump" % (
            len(truth["threads"]), n)
    case(script_gcore, why)

    def script_crash():
        d = fresh(work, "crash")
        core, truth_path = pt.take_crash(py, d, ["mapped_pieces.py", "crash"], signal.SIGSEGV)
        truth = json.load(open(truth_path))
        n = read_all(core, truth, crashed=signal.SIGSEGV)
        return "%d threads, %d module bases the loader's" % (len(truth["threads"]), n)
    case(script_crash, why)

    def while_running(name, take):
        """The scenario (snapshot) run in a fresh directory NAME: TAKE(pid,
        directory) once it is ready, then it ends; (its truth, what TAKE
        returned)."""
        d = fresh(work, name)
        truth_path = os.path.join(d, "truth.json")
        proc = subprocess.Popen([py, scenario, truth_path, "snapshot"], cwd=d, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        try:
            if not pt.wait_ready(proc, timeout=60):
                raise pt.Failure("the scenario did not get ready")
            time.sleep(0.3)
            got = take(proc.pid, d)
        finally:
            proc.kill()
            proc.wait()
        return json.load(open(truth_path)), got

    def script_live():
        def read(pid, d):
            return read_all(["--pid", str(pid)], json.load(open(os.path.join(d, "truth.json"))),
                            label_from="link_map")
        truth, n = while_running("live", read)
        return "%d threads, %d module bases the loader's" % (len(truth["threads"]), n)
    case(script_live, why)

    def script_minidump():
        from pycoretest.minidump import save_minidump

        def take(pid, d):
            dump = os.path.join(d, "process.dmp")
            out = save_minidump(pid, "modified-memory", dump)
            if not os.path.exists(dump):
                raise pt.Failure("lldb wrote no minidump: %s" % out.decode("utf-8", "replace")[-300:])
            return dump
        truth, dump = while_running("minidump", take)
        n = read_all(dump, truth, label_from="module list")
        return "%d threads, %d module bases the loader's" % (len(truth["threads"]), n)
    case(script_minidump, why)

    def script_breakpad():
        from pycoretest import breakpad
        bindir = breakpad.tools_dir()

        def take(pid, d):
            dump = os.path.join(d, "pid2md.dmp")
            p = subprocess.run([os.path.join(bindir, "pid2md"), str(pid), dump], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=scaled(120))
            if p.returncode != 0 or not os.path.exists(dump):
                raise pt.Failure("pid2md failed: %s" % p.stdout.decode("utf-8", "replace").strip()[-300:])
            return dump
        truth, dump = while_running("breakpad", take)
        pieces_mapped(truth, ["libpython", "libc.so", "_ctypes", "python3"])
        listed = breakpad.md_module_names(dump)
        twice = sorted(set(n for n in listed if listed.count(n) > 1))
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", dump])
        if rc != 1 or not out:
            raise pt.Failure("exit %d (want 1: the dump holds no heap): %s" % (rc, err.strip()[-300:]))
        report = pt.load_report(out)
        n = check_modules(report, truth, "link_map")
        paths = [m["path"] for m in report["process"]["modules"]]
        again = sorted(set(p for p in paths if paths.count(p) > 1))
        if again:
            raise pt.Failure("modules named twice in the report: %s" % again)
        for name in twice:
            if not any(name in w and "not the loader's" in w for w in report["warnings"]):
                raise pt.Failure("the dump's module list names %s twice; no warning says which was left "
                                 "out: %s" % (name, report["warnings"]))
        return "%d module bases the loader's; named twice in the dump's module list, once in the report: %s" % (
            n, ", ".join(os.path.basename(t) for t in twice) or "none")
    case(script_breakpad, why)

    def embed(crash):
        def run():
            d = fresh(work, "embed-crash" if crash else "embed")
            exe = build_embed(py, d)
            if crash:
                core, truth_path = pt.take_crash(exe, d, ["mapped_pieces.py", "crash"], signal.SIGSEGV)
            else:
                truth_path = os.path.join(d, "truth.json")
                core = gcore_of([exe, scenario, truth_path, "snapshot"], d)
            truth = json.load(open(truth_path))
            pieces_mapped(truth, ["libpython", "libc.so", "_ctypes", "mapping-app"])
            n = read_all(core, truth, crashed=signal.SIGSEGV if crash else None)
            return "%d threads, %d module bases the loader's" % (len(truth["threads"]), n)
        return run
    case(embed(False), why)
    case(embed(True), why)

    def in_gdb():
        gdb = shutil.which("gdb")
        if not gdb:
            raise pt.Skip("gdb not installed (Debian package gdb)")
        d = fresh(work, "gdb")
        truth_path = os.path.join(d, "truth.json")
        env = dict(os.environ, MAPPED_TRUTH=truth_path, MAPPED_MODE="snapshot")
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONHOME", None)
        code = 'exec(compile(open(%r).read(), %r, "exec"), {"__name__": "__main__", "__file__": %r})' % (
            scenario, scenario, scenario)
        core = gcore_of([gdb, "-nx", "-batch", "-ex", "python " + code], d, env=env)
        truth = json.load(open(truth_path))
        pieces_mapped(truth, ["libpython", "libc.so", "_ctypes", "gdb"])
        n = read_all(core, truth)
        return "%d threads, %d module bases the loader's" % (len(truth["threads"]), n)
    case(in_gdb, None if shutil.which("gcore") else "gcore not installed (Debian package gdb)")

    # proof before belief, on the python3.12 snapshot
    L = table(12)

    def patched(name, patch):
        c = Core(got["core"])
        patch(c)
        path = os.path.join(work, name)
        c.save(path)
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", path])
        if rc != 1:
            raise pt.Failure("exit %d (want 1: an incomplete report): %s" % (rc, err.strip()[-300:]))
        report = pt.load_report(out)
        nthreads = sum(len(i["threads"]) for i in report["interpreters"])
        rc, text, err = pt.run_pycore(["analyze", path])
        return report, nthreads, text, rc

    def main_tstate():
        """The main thread's PyThreadState: the runtime's main interpreter's
        list, walked by the table's offsets to the one whose thread id is
        the main thread's ident (the process's truth)."""
        c = Core(got["core"])
        main = [t for t in got["truth"]["threads"] if t["main"]][0]
        runtime = got["runtime"]
        interp = c.u64(runtime + L["runtime_interpreters_head"])
        ts = c.u64(interp + L["interp_tstate_head"])
        while ts:
            if c.u64(ts + L["tstate_thread_id"]) == main["ident"]:
                return interp, ts
            ts = c.u64(ts + L["tstate_next"])
        raise pt.Failure("no thread state of the main thread (ident 0x%x) in the core" % main["ident"])

    def runtime_of_core():
        # _PyRuntime's address: the symbol in libpython, placed at the base the process recorded
        lib = [p for p in got["truth"]["objects"] if "libpython" in os.path.basename(p)][0]
        out = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE).stdout.decode()
        m = re.search(r"^([0-9a-f]+) \w _PyRuntime$", out, re.M)
        if not m:
            raise pt.Skip("no _PyRuntime in %s's dynamic symbols" % lib)
        got["runtime"] = got["truth"]["objects"][lib] + int(m.group(1), 16)

    def refusal(name, at, value, want):
        """The core with the word at AT (given the runtime, its main
        interpreter and thread state) set to VALUE: refused, WANT said."""
        runtime_of_core()
        interp, ts = main_tstate()
        where = at(got["runtime"], interp, ts)
        report, n, text, _ = patched(name, lambda c: c.put64(where, value(got["runtime"], interp)))
        want = want(got["runtime"], interp)
        ws = [w for w in report["warnings"] if "was refused" in w and want in w]
        if not ws or not any("no runtime candidate agrees with itself" in w for w in report["warnings"]):
            raise pt.Failure("no refusal naming %r in the warnings: %s" % (want, report["warnings"]))
        if want not in text:
            raise pt.Failure("the text does not say %r" % want)
        return "refused: %s" % ws[0][:160]

    no_core = "the python3.12 snapshot could not be read" if "core" not in got else None
    case(lambda: refusal("refused", lambda rt, interp, ts: ts + L["tstate_interp"], lambda rt, interp: interp + 0x1000,
                         lambda rt, interp: "points to the interpreter 0x%x" % (interp + 0x1000)), no_core)
    # PyInterpreterState.runtime (3.9+), &_PyRuntime in a sound process
    case(lambda: refusal("other-runtime", lambda rt, interp, ts: interp + L["interp_runtime"],
                         lambda rt, interp: rt + 0x2000,
                         lambda rt, interp: "its interpreter at 0x%x points to the runtime 0x%x" % (interp, rt + 0x2000)),
         no_core)

    def emptied():
        runtime_of_core()
        report, n, text, _ = patched("emptied", lambda c: c.put64(got["runtime"] + L["runtime_interpreters_head"], 0))
        if n:
            raise pt.Failure("%d Python threads read from an empty interpreter list" % n)
        ws = [w for w in report["warnings"] if w.startswith("no Python thread was read, but thread ")]
        tids = [t["native_id"] for t in got["truth"]["threads"]]
        if not ws or not any(" %d runs the eval loop" % t in ws[0] for t in tids):
            raise pt.Failure("no warning naming a thread that runs the eval loop: %s" % report["warnings"])
        return ws[0][:160]
    case(emptied, "the python3.12 snapshot could not be read" if "core" not in got else None)

    pt.drop_scratch(tap, work)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    raise SystemExit(main())
