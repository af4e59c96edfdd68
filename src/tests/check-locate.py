"""Finding the interpreter when its files are not where the core says.

A real core of CPython 3.12 (pyenv, shared libpython) is analyzed in mount
namespaces where the interpreter's lib/ directory is hidden (unshare -m and
an empty directory bind-mounted over it), with the files offered through
--sysroot, --search-path (a renamed copy), --debug-dir (a build-id tree) and
debuginfod (a local server on 127.0.0.1, when the debuginfod package is
installed), and with a copy whose build-id was changed (refused, naming both
ids; used with --allow-mismatch and a warning).  Each found stack must match
what the process recorded.  Exit 0 pass, 1 fail, 77 skip.
"""
import glob
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("check_stacks", os.path.join(HERE, "check-stacks.py"))
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)


def hidden(libdir, empty, args):
    """Run pycore with LIBDIR hidden behind an empty directory."""
    cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
           'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", empty, libdir, cs.PYCORE] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def expect_stacks(label, truth, rc, out, err, binary_prefix=None, warning=None):
    if rc != 0 and not (warning and rc == 1):
        raise cs.Failure("%s: exit %d: %s" % (label, rc, err.strip()))
    report = json.loads(out)
    cs.compare(truth, report, None)
    path = report["python"]["binary"]["path"]
    if binary_prefix and not path.startswith(binary_prefix):
        raise cs.Failure("%s: python.binary.path is %s, not under %s" % (label, path, binary_prefix))
    if warning and not any(warning in w for w in report["warnings"]):
        raise cs.Failure("%s: no warning mentioning %r in %s" % (label, warning, report["warnings"]))


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
        raise cs.Failure("cannot find the build-id note of %s" % src)
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
        print("SKIP: debuginfod: the debuginfod package is not installed")
        return
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
        for _ in range(100):
            time.sleep(0.2)
            try:
                import urllib.request
                urllib.request.urlopen("%s/buildid/%s/executable" % (url, bid), timeout=2).read(16)
                break
            except Exception:
                continue
        else:
            raise cs.Failure("debuginfod on %s did not serve %s" % (url, bid))
        env = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=os.path.join(work, "cache"))
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
               'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", empty, libdir, cs.PYCORE,
               "analyze", "--format", "json", core]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
        expect_stacks("debuginfod", truth, p.returncode, p.stdout.decode(), p.stderr.decode(),
                      os.path.join(work, "cache"))
        print("ok: debuginfod on 127.0.0.1 served the interpreter")
    finally:
        server.terminate()
        server.wait()


def check_no_files(failed_cases):
    """No interpreter files at all: the whole pyenv prefix hidden.  3.13 is
    found by its _Py_DebugOffsets cookie, older versions by the bounded scan
    for the interpreter list; stacks (and locals) must match what the
    process recorded."""
    plan = [("3.13", "debug-offsets", ("threads", "locals")), ("3.12", "scan", ("threads", "locals")),
            ("3.8", "scan", ("threads",)), ("3.6", "scan", ("threads",))]
    for minor, how, scenarios in plan:
        pythons = sorted(glob.glob("/root/.pyenv/versions/%s.*/bin/python%s" % (minor, minor)))
        if not pythons:
            print("SKIP: no files at all: python%s not installed" % minor)
            continue
        python = pythons[-1]
        prefix = os.path.dirname(os.path.dirname(python))
        for scenario in scenarios:
            work = tempfile.mkdtemp(prefix="pycore-nofiles-")
            try:
                core, truth_path = cs.take_gcore(python, scenario, work)
                truth = json.load(open(truth_path))
                empty = os.path.join(work, "empty")
                os.makedirs(empty)
                args = ["analyze", "--format", "json"] + (["--locals=deep"] if scenario == "locals" else []) + [core]
                rc, out, err = hidden(prefix, empty, args)
                if rc != 0:
                    raise cs.Failure("exit %d: %s" % (rc, err.strip()))
                report = json.loads(out)
                if report["python"]["located_by"] != how:
                    raise cs.Failure("located_by is %s, not %s" % (report["python"]["located_by"], how))
                cs.compare(truth, report, None)
                extra = ""
                if scenario == "locals":
                    extra = ", %d reprs exactly Python's" % cs.compare_locals(truth, report)
                print("ok: %s %s with no interpreter files at all (%s)%s" % (minor, scenario, how, extra))
            except cs.Failure as e:
                failed_cases.append(scenario)
                print("FAIL: %s %s with no interpreter files: %s" % (minor, scenario, e))
            finally:
                shutil.rmtree(work, ignore_errors=True)


def check_embedded(failed_cases):
    """libpython loaded by a C program (built here) that is not python."""
    for minor in ("3.12", "3.8"):
        prefixes = sorted(glob.glob("/root/.pyenv/versions/%s*" % minor))
        if not prefixes or not shutil.which("cc"):
            print("SKIP: embedded libpython %s: pyenv %s or cc not installed" % (minor, minor))
            continue
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
                raise cs.Failure("cannot build the embedding program: %s" % b.stdout.decode()[-300:])
            core, truth_path = cs.take_gcore(exe, "threads", work)
            truth = json.load(open(truth_path))
            rc, out, err = cs.run_pycore(["analyze", "--format", "json", core])
            if rc != 0:
                raise cs.Failure("exit %d: %s" % (rc, err.strip()))
            report = json.loads(out)
            cs.compare(truth, report, None)
            if report["process"]["executable"] != exe:
                raise cs.Failure("process.executable is %s" % report["process"]["executable"])
            print("ok: libpython %s embedded in a C program" % minor)
        except cs.Failure as e:
            failed_cases.append("embed")
            print("FAIL: libpython %s embedded in a C program: %s" % (minor, e))
        finally:
            shutil.rmtree(work, ignore_errors=True)


def main():
    pythons = sorted(glob.glob("/root/.pyenv/versions/3.12*/bin/python3.12"))
    if not pythons:
        print("SKIP: python3.12 (/root/.pyenv/versions/3.12*/bin/python3.12) not installed")
        return 77
    for tool in ("gcore", "unshare", "eu-readelf"):
        if not shutil.which(tool):
            print("SKIP: %s not installed" % tool)
            return 77
    python = pythons[-1]
    libdir = os.path.join(os.path.dirname(os.path.dirname(python)), "lib")
    lib = sorted(glob.glob(os.path.join(libdir, "libpython3.12.so.1.0")))[0]
    work = tempfile.mkdtemp(prefix="pycore-locate-")
    failed = 0
    try:
        core, truth_path = cs.take_gcore(python, "threads", work)
        truth = json.load(open(truth_path))
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        args = ["analyze", "--format", "json", core]

        def case(label, fn):
            nonlocal failed
            try:
                fn()
                print("ok: %s" % label)
            except cs.Failure as e:
                failed += 1
                print("FAIL: %s: %s" % (label, e))

        def nothing():
            rc, out, err = hidden(libdir, empty, args)
            if rc != 0:
                raise cs.Failure("exit %d: %s" % (rc, err.strip()))
            report = json.loads(out)
            cs.compare(truth, report, None)
            if report["python"]["located_by"] != "scan" or not any(
                    "not found" in w and "libpython3.12" in w for w in report["warnings"]):
                raise cs.Failure("located_by %s, warnings %s: want scan, naming the missing file"
                                 % (report["python"]["located_by"], report["warnings"]))
        case("files hidden: found by scanning, the warning names the missing file", nothing)

        def dwarf_layout():
            rc, out, err = cs.run_pycore(["analyze", "--format", "json", "--layout=dwarf", core])
            expect_stacks("--layout=dwarf", truth, rc, out, err)
        case("--layout=dwarf: offsets from the interpreter's own DWARF", dwarf_layout)

        sysroot = os.path.join(work, "sysroot")
        os.makedirs(sysroot + libdir)
        shutil.copy(lib, sysroot + lib)
        case("--sysroot", lambda: expect_stacks("--sysroot", truth, *hidden(libdir, empty, ["--sysroot", sysroot] + args),
                                                binary_prefix=sysroot))

        loose = os.path.join(work, "loose")
        os.makedirs(loose)
        shutil.copy(lib, os.path.join(loose, "renamed-copy.bin"))
        case("--search-path with a renamed copy",
             lambda: expect_stacks("--search-path", truth,
                                   *hidden(libdir, empty, ["--search-path", "/nonexistent:" + loose] + args),
                                   binary_prefix=os.path.join(loose, "renamed-copy.bin")))

        tree = os.path.join(work, "debug")
        bid = build_id(lib)
        os.makedirs(os.path.join(tree, ".build-id", bid[:2]))
        shutil.copy(lib, os.path.join(tree, ".build-id", bid[:2], bid[2:]))
        case("--debug-dir build-id tree",
             lambda: expect_stacks("--debug-dir", truth, *hidden(libdir, empty, ["--debug-dir", tree] + args),
                                   binary_prefix=tree))

        # a stripped copy, its DWARF in a separate file of a build-id tree:
        # --layout=dwarf needs libdwfl to find and read that file
        stripped = os.path.join(work, "stripped")
        dtree = os.path.join(work, "dtree")
        os.makedirs(stripped)
        os.makedirs(os.path.join(dtree, ".build-id", bid[:2]))
        st = subprocess.run(["eu-strip", "-f", os.path.join(dtree, ".build-id", bid[:2], bid[2:] + ".debug"),
                             "-o", os.path.join(stripped, "libpython3.12.so.1.0"), lib],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

        def separate_debug():
            if st.returncode != 0:
                raise cs.Failure("eu-strip failed: %s" % st.stdout.decode())
            expect_stacks("separate debug file", truth,
                          *hidden(libdir, empty, ["--search-path", stripped, "--debug-dir", dtree,
                                                  "--layout=dwarf"] + args),
                          binary_prefix=stripped)
        case("a stripped copy, its DWARF from a separate debug file (--layout=dwarf)", separate_debug)

        wrong = os.path.join(work, "wrong")
        os.makedirs(wrong)
        change_build_id(lib, os.path.join(wrong, "libpython3.12.so.1.0"))
        wrong_id = build_id(os.path.join(wrong, "libpython3.12.so.1.0"))

        def mismatch():
            rc, out, err = hidden(libdir, empty, ["--search-path", wrong] + args)
            report = json.loads(out) if rc == 0 else None
            if rc != 0 or report["python"]["located_by"] != "scan" or not any(
                    bid in w and wrong_id in w for w in report["warnings"]):
                raise cs.Failure("exit %d, stderr %r, warnings %s; want the file refused (both ids "
                                 "named) and the runtime found by scanning"
                                 % (rc, err, report and report["warnings"]))
        case("a mismatched build-id is refused, both ids named, and never used", mismatch)
        case("--allow-mismatch uses it, with a warning",
             lambda: expect_stacks("--allow-mismatch", truth,
                                   *hidden(libdir, empty, ["--search-path", wrong, "--allow-mismatch"] + args),
                                   warning=wrong_id))
        try:
            check_debuginfod(work, lib, libdir, empty, core, truth)
        except cs.Failure as e:
            failed += 1
            print("FAIL: debuginfod: %s" % e)

        bad = []
        check_no_files(bad)
        check_embedded(bad)
        failed += len(bad)
    finally:
        if os.environ.get("KEEP_CORES") == "1":
            print("kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
