"""Finding the interpreter when its files are not where the core says.

A real core of CPython 3.12 (pyenv, shared libpython) is analyzed in mount
namespaces where the interpreter's lib/ directory is hidden (unshare -m and
an empty directory bind-mounted over it), with the files offered through
--sysroot, --search-path (a renamed copy), --debug-dir (a build-id tree) and
debuginfod (a local server on 127.0.0.1, when the debuginfod package is
installed), and with a copy whose build-id was changed (refused, naming both
ids; used with --allow-mismatch and a warning).  Each found stack must match
what the process recorded, and the report must say how the interpreter's
file was found (found_by: recorded, sysroot, search-path, build-id-tree,
debuginfod; --verbose's Modules section in the text); every report must
match the schema.  Then
no interpreter files at all (3.13, 3.12, 3.8, 3.6), and libpython embedded
in a C program.  Output: TAP, one line per case; a case that cannot run
here is a skip naming what is missing.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
import pycoretest as pt
from pycoretest import interpreters
from pycoretest.env import scaled, wait_until


def hidden(libdir, empty, args):
    """Run pycore with LIBDIR hidden behind an empty directory."""
    return pt.run_hidden([libdir], empty, args)


def expect_found_by(label, report, how):
    """How the files were found reaches the report: the interpreter's
    binary and its module say HOW (None: no file read), and every module
    has found_by exactly when it has a file."""
    binary = report["python"]["binary"]
    if binary["found_by"] != how:
        raise pt.Failure("%s: python.binary.found_by is %r, not %r" % (label, binary["found_by"], how))
    modules = report["process"]["modules"]
    if how is not None:
        mine = [m for m in modules if m["file"] == binary["path"]]
        if not mine or any(m["found_by"] != how for m in mine):
            raise pt.Failure("%s: the module read from %s says found_by %r, not %r"
                             % (label, binary["path"], [m["found_by"] for m in mine], how))
    for m in modules:
        if (m["file"] is None) != (m["found_by"] is None):
            raise pt.Failure("%s: module %s has file %r but found_by %r" % (label, m["path"], m["file"],
                                                                              m["found_by"]))


def expect_stacks(label, truth, rc, out, err, binary_prefix=None, warning=None, found_by=None):
    if rc != 0 and not (warning and rc == 1):
        raise pt.Failure("%s: exit %d: %s" % (label, rc, err.strip()))
    report = pt.load_report(out)
    pt.compare(truth, report, None)
    path = report["python"]["binary"]["path"]
    if binary_prefix and not path.startswith(binary_prefix):
        raise pt.Failure("%s: python.binary.path is %s, not under %s" % (label, path, binary_prefix))
    if warning and not any(warning in w for w in report["warnings"]):
        raise pt.Failure("%s: no warning mentioning %r in %s" % (label, warning, report["warnings"]))
    if found_by:
        expect_found_by(label, report, found_by)


def build_id(path):
    out = subprocess.run(["eu-readelf", "-n", path], stdout=subprocess.PIPE).stdout.decode()
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None


def change_build_id(src, dst):
    """Copy SRC to DST with the last byte of its build-id flipped."""
    data = bytearray(open(src, "rb").read())
    bid = bytes.fromhex(build_id(src))
    at = data.find(b"GNU\0" + bid)
    if at < 0:
        raise pt.Failure("cannot find the build-id note of %s" % src)
    data[at + 4 + len(bid) - 1] ^= 0xff
    open(dst, "wb").write(data)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def check_debuginfod(work, lib, libdir, empty, core, truth):
    if not shutil.which("debuginfod"):
        raise pt.Skip("debuginfod not installed (Debian package debuginfod)")
    served = os.path.join(work, "served")
    os.makedirs(served)
    shutil.copy(lib, os.path.join(served, "libpython-served.so"))
    port = free_port()
    db = os.path.join(work, "debuginfod.sqlite")
    server = subprocess.Popen(["debuginfod", "-F", served, "-p", str(port), "-d", db],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = "http://127.0.0.1:%d" % port
        bid = build_id(lib)
        # wait for the server to index the file (bounded)
        def indexed():
            try:
                import urllib.request
                urllib.request.urlopen("%s/buildid/%s/executable" % (url, bid), timeout=scaled(2)).read(16)
                return True
            except Exception:
                return False
        if not wait_until(indexed, 20, step=0.2):
            raise pt.Failure("debuginfod on %s did not serve %s" % (url, bid))
        env = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=os.path.join(work, "cache"))
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
               'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", empty, libdir, pt.PYCORE,
               "analyze", "--format", "json", core]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=scaled(120))
        expect_stacks("debuginfod", truth, p.returncode, p.stdout.decode(), p.stderr.decode(),
                      os.path.join(work, "cache"), found_by="debuginfod")
    finally:
        server.terminate()
        server.wait()


NO_FILES = [("3.13", "debug-offsets", ("threads", "locals")), ("3.12", "scan", ("threads", "locals")),
            ("3.8", "scan", ("threads",)), ("3.6", "scan", ("threads",))]


def check_no_files(python, minor, how, scenario):
    """No interpreter files at all: the whole pyenv prefix hidden.  3.13 is
    found by its _Py_DebugOffsets cookie, older versions by the bounded scan
    for the interpreter list; stacks (and locals) must match what the
    process recorded."""
    prefix = os.path.dirname(os.path.dirname(python))
    work = tempfile.mkdtemp(prefix="pycore-nofiles-")
    try:
        core, truth_path = pt.take_gcore(python, scenario, work)
        truth = json.load(open(truth_path))
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        args = ["analyze", "--format", "json"] + (["--locals=deep"] if scenario == "locals" else []) + [core]
        rc, out, err = hidden(prefix, empty, args)
        if rc != 0:
            raise pt.Failure("exit %d: %s" % (rc, err.strip()))
        report = pt.load_report(out)
        if report["python"]["located_by"] != how:
            raise pt.Failure("located_by is %s, not %s" % (report["python"]["located_by"], how))
        pt.compare(truth, report, None)
        if scenario == "locals":
            # the types' names live in the hidden files: the standard
            # library's reprs need not be formed, only never wrong
            return "%d reprs exactly Python's" % pt.compare_locals(truth, report, stdlib=False)
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_embedded(minor):
    """libpython loaded by a C program (built here) that is not python."""
    exe, why = interpreters.where("py" + minor)
    if not exe:
        raise pt.Skip(why)
    prefixes = [os.path.dirname(os.path.dirname(exe))]
    if not shutil.which("cc"):
        raise pt.Skip("no cc compiler (Debian package gcc)")
    prefix = prefixes[-1]
    work = tempfile.mkdtemp(prefix="pycore-embed-")
    try:
        cflags = subprocess.run([os.path.join(prefix, "bin", "python%s-config" % minor), "--includes"],
                                stdout=subprocess.PIPE).stdout.decode().split()
        exe = os.path.join(work, "embedding-app")
        b = subprocess.run(["cc", "-o", exe, os.path.join(HERE, "embed", "embed.c")] + cflags +
                           ["-L" + os.path.join(prefix, "lib"), "-lpython" + minor,
                            "-Wl,-rpath," + os.path.join(prefix, "lib")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if b.returncode != 0:
            raise pt.Failure("cannot build the embedding program: %s" % b.stdout.decode()[-300:])
        core, truth_path = pt.take_gcore(exe, "threads", work)
        truth = json.load(open(truth_path))
        rc, out, err = pt.run_pycore(["analyze", "--format", "json", core])
        if rc != 0:
            raise pt.Failure("exit %d: %s" % (rc, err.strip()))
        report = pt.load_report(out)
        pt.compare(truth, report, None)
        if report["process"]["executable"] != exe:
            raise pt.Failure("process.executable is %s" % report["process"]["executable"])
    finally:
        shutil.rmtree(work, ignore_errors=True)


CASES = [
    "files hidden: found by scanning, the warning names the missing file",
    "--layout=dwarf: offsets from the interpreter's own DWARF",
    "--sysroot",
    "--verbose: the text's Modules section says the file came from --sysroot",
    "--search-path with a renamed copy",
    "--debug-dir build-id tree",
    "a stripped copy, its DWARF from a separate debug file (--layout=dwarf)",
    "a mismatched build-id is refused, both ids named, and never used",
    "--allow-mismatch uses it, with a warning",
    "debuginfod on 127.0.0.1 serves the interpreter",
]


def missing_tools(tools):
    """Why the cases needing TOOLS (and a mount namespace) cannot run, or None."""
    if os.geteuid() != 0:
        return "a mount namespace needs root"
    for tool, package in tools:
        if not shutil.which(tool):
            return "%s not installed (Debian package %s)" % (tool, package)
    return None


def check_312(tap):
    """The 3.12 core's interpreter hidden, offered each way in turn."""
    pythons = [p for p in [interpreters.path("py3.12")] if p]
    why = missing_tools([("gcore", "gdb"), ("unshare", "util-linux"), ("eu-readelf", "elfutils"),
                         ("eu-strip", "elfutils")])
    if not pythons:
        why = interpreters.where("py3.12")[1]
    if why:
        for label in CASES:
            tap.skip(label, why)
        return
    python = pythons[-1]
    libdir = os.path.join(os.path.dirname(os.path.dirname(python)), "lib")
    lib = os.path.join(libdir, "libpython3.12.so.1.0")
    work = tempfile.mkdtemp(prefix="pycore-locate-")
    try:
        core, truth_path = pt.take_gcore(python, "threads", work)
        truth = json.load(open(truth_path))
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        args = ["analyze", "--format", "json", core]
        cases = iter(CASES)

        def case(fn):
            tap.run(next(cases), fn)

        def nothing():
            rc, out, err = hidden(libdir, empty, args)
            if rc != 0:
                raise pt.Failure("exit %d: %s" % (rc, err.strip()))
            report = pt.load_report(out)
            pt.compare(truth, report, None)
            if report["python"]["located_by"] != "scan" or not any(
                    "not found" in w and "libpython3.12" in w for w in report["warnings"]):
                raise pt.Failure("located_by %s, warnings %s: want scan, naming the missing file"
                                 % (report["python"]["located_by"], report["warnings"]))
            expect_found_by("no file", report, None)
        case(nothing)

        def dwarf_layout():
            rc, out, err = pt.run_pycore(["analyze", "--format", "json", "--layout=dwarf", core])
            expect_stacks("--layout=dwarf", truth, rc, out, err, found_by="recorded")
        case(dwarf_layout)

        sysroot = os.path.join(work, "sysroot")
        os.makedirs(sysroot + libdir)
        shutil.copy(lib, sysroot + lib)
        case(lambda: expect_stacks("--sysroot", truth, *hidden(libdir, empty, ["--sysroot", sysroot] + args),
                                   binary_prefix=sysroot, found_by="sysroot"))

        def verbose_text():
            rc, out, err = hidden(libdir, empty, ["--sysroot", sysroot, "analyze", "--verbose", core])
            if rc != 0:
                raise pt.Failure("exit %d: %s" % (rc, err.strip()))
            want = "  %s: %s (under --sysroot)" % (lib, sysroot + lib)
            section = out[out.find("\nModules (the file read for each, and how it was found):\n"):]
            if not section or want not in section.splitlines():
                raise pt.Failure("no line %r in the Modules section: %r" % (want, section[:600]))
            rc, plain, err = hidden(libdir, empty, ["--sysroot", sysroot, "analyze", core])
            if "\nModules (" in plain:
                raise pt.Failure("the Modules section without --verbose")
        case(verbose_text)

        loose = os.path.join(work, "loose")
        os.makedirs(loose)
        shutil.copy(lib, os.path.join(loose, "renamed-copy.bin"))
        case(lambda: expect_stacks("--search-path", truth,
                                   *hidden(libdir, empty, ["--search-path", "/nonexistent:" + loose] + args),
                                   binary_prefix=os.path.join(loose, "renamed-copy.bin"),
                                   found_by="search-path"))

        tree = os.path.join(work, "debug")
        bid = build_id(lib)
        os.makedirs(os.path.join(tree, ".build-id", bid[:2]))
        shutil.copy(lib, os.path.join(tree, ".build-id", bid[:2], bid[2:]))
        case(lambda: expect_stacks("--debug-dir", truth, *hidden(libdir, empty, ["--debug-dir", tree] + args),
                                   binary_prefix=tree, found_by="build-id-tree"))

        def separate_debug():
            # a stripped copy, its DWARF in a separate file of a build-id
            # tree: --layout=dwarf needs libdwfl to find and read that file
            stripped = os.path.join(work, "stripped")
            dtree = os.path.join(work, "dtree")
            os.makedirs(stripped)
            os.makedirs(os.path.join(dtree, ".build-id", bid[:2]))
            st = subprocess.run(["eu-strip", "-f", os.path.join(dtree, ".build-id", bid[:2], bid[2:] + ".debug"),
                                 "-o", os.path.join(stripped, "libpython3.12.so.1.0"), lib],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if st.returncode != 0:
                raise pt.Failure("eu-strip failed: %s" % st.stdout.decode())
            expect_stacks("separate debug file", truth,
                          *hidden(libdir, empty, ["--search-path", stripped, "--debug-dir", dtree,
                                                  "--layout=dwarf"] + args),
                          binary_prefix=stripped, found_by="search-path")
        case(separate_debug)

        wrong = os.path.join(work, "wrong")
        os.makedirs(wrong)
        change_build_id(lib, os.path.join(wrong, "libpython3.12.so.1.0"))
        wrong_id = build_id(os.path.join(wrong, "libpython3.12.so.1.0"))

        def mismatch():
            rc, out, err = hidden(libdir, empty, ["--search-path", wrong] + args)
            report = pt.load_report(out) if rc == 0 else None
            if rc != 0 or report["python"]["located_by"] != "scan" or not any(
                    bid in w and wrong_id in w for w in report["warnings"]):
                raise pt.Failure("exit %d, stderr %r, warnings %s; want the file refused (both ids "
                                 "named) and the runtime found by scanning"
                                 % (rc, err, report and report["warnings"]))
        case(mismatch)
        case(lambda: expect_stacks("--allow-mismatch", truth,
                                   *hidden(libdir, empty, ["--search-path", wrong, "--allow-mismatch"] + args),
                                   warning=wrong_id, found_by="search-path"))
        case(lambda: check_debuginfod(work, lib, libdir, empty, core, truth))
    finally:
        pt.drop_scratch(tap, work)


def main():
    tap = pt.TAP()
    check_312(tap)
    why = missing_tools([("gcore", "gdb"), ("unshare", "util-linux")])
    for minor, how, scenarios in NO_FILES:
        exe, not_here = interpreters.where("py" + minor)
        pythons = [exe] if exe else []
        for scenario in scenarios:
            label = "%s %s with no interpreter files at all (%s)" % (minor, scenario, how)
            if why or not pythons:
                tap.skip(label, why or not_here)
            else:
                tap.run(label, check_no_files, pythons[-1], minor, how, scenario)
    for minor in ("3.12", "3.8"):
        label = "libpython %s embedded in a C program" % minor
        if not shutil.which("gcore"):
            tap.skip(label, "gcore not installed (Debian package gdb)")
        else:
            tap.run(label, check_embedded, minor)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
