"""The wheels of scripts/wheel, built (cached like the other roots: the
Debian 11 build root and what is built in it) and used as pip, pipx and a
Debian 11 or unstable machine use them:

  * the x86-64 wheel: its binary needs nothing outside the manylinux_2_31
    policy at run time (this test reads its NEEDED entries and the versions
    of the symbols it takes, with readelf; scripts/wheel --check agrees);
    its size at most twice the stripped source build's plus the shared
    libraries that one loads; its metadata (name, version, the console
    script, python -m pycore);
  * installed with pip into a fresh venv on this machine (Debian 12): the
    console script's JSON of the sample equals the source build's, the API
    equals the console script, and the plugin from the wheel (its own
    libpycore-crash.so) reads a test that segfaults;
  * installed with pip into fresh venvs in the Debian 11 root (the wheel's
    build root) and the Debian unstable root, with chroot: the sample
    core's report equals the truth its process recorded, and so does the
    report of a compact dump of a process of that root (threads.py, run
    there, saved with --pid --save);
  * pipx install of the wheel, as a user would (its home and bin in a
    scratch directory): the pycore on its PATH reads the sample;
  * the aarch64 wheel (scripts/wheel --arch arm64), where its build root
    is made (emulated, about 40 minutes the first time: a skip saying so
    until then): the same checks of its binary, and in the arm64 Debian 11
    root under qemu-user a venv's pycore reads the sample as the truth
    says.

Output: TAP (pycoretest.tap).  A part that cannot run here (no
debootstrap, no network for the roots, no qemu-user) is a skip by name.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from pycoretest.compare import compare
from pycoretest.env import PYCORE, SRCDIR, scaled
from pycoretest.interpreters import Target, sid_root
from pycoretest.schema import load_report, schema_summary
from pycoretest.tap import TAP, Failure, Skip

SAMPLE = os.path.join(SRCDIR, "testdata", "sample-py3.13-threads.core.zst")
SAMPLE_TRUTH = os.path.join(SRCDIR, "testdata", "sample-py3.13-threads.truth.json")
SCENARIOS = os.path.join(SRCDIR, "src", "tests", "e2e", "scenarios")
VICTIMS = os.path.join(SCENARIOS, "pytest_victims.py")
DIST = os.path.join(tempfile.gettempdir(), "pycore-test-wheel-dist")
# The manylinux_2_31 policy's libraries (PEP 600: the manylinux2014 list,
# which later glibc policies keep) and its highest symbol versions
POLICY_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
               "libgcc_s.so.1", "libstdc++.so.6", "libcrypt.so.1", "libnsl.so.1", "libgl.so.1",
               "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
GLIBC_MAX = (2, 31)
MACHINES = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}


def run(argv, timeout=600, **kw):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(timeout), **kw)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def build(arch):
    """scripts/wheel --arch ARCH into DIST: the wheel's path."""
    rc, out, err = run([os.path.join(SRCDIR, "scripts", "bullseye-root"), "--arch", arch], timeout=3600)
    if rc != 0:
        raise Skip("no Debian 11 %s root: %s" % (arch, err.strip().splitlines()[-1] if err.strip() else rc))
    rc, out, err = run([os.path.join(SRCDIR, "scripts", "wheel"), "--arch", arch, "--out", DIST], timeout=7200)
    if rc != 0:
        raise Failure("scripts/wheel --arch %s: exit %d: %s" % (arch, rc, err.strip()[-2000:]))
    tag = {"amd64": "x86_64", "arm64": "aarch64"}[arch]
    wheels = glob.glob(os.path.join(DIST, "pycore-*-py3-none-manylinux_2_31_%s.whl" % tag))
    if len(wheels) != 1:
        raise Failure("scripts/wheel made %s in %s" % (wheels or "no wheel", DIST))
    return wheels[0]


def elf_files(whl, work):
    """The ELF files of WHL, extracted into WORK: {name in the wheel: path}."""
    out = {}
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            data = z.read(name)
            if data[:4] == b"\x7fELF":
                path = os.path.join(work, name.replace("/", "_"))
                with open(path, "wb") as f:
                    f.write(data)
                out[name] = path
    return out


def audit(whl, tag, work):
    """What auditwheel checks, read by this test: each ELF file's NEEDED
    libraries in the policy, its GLIBC_ versions at most 2.31, no RPATH,
    its machine the tag's."""
    lines = []
    files = elf_files(whl, work)
    if "pycore/bin/pycore" not in files:
        raise Failure("the wheel has no pycore/bin/pycore (%s)" % sorted(files))
    for name, path in sorted(files.items()):
        rc, dyn, err = run(["readelf", "-dW", path])
        rc2, syms, err2 = run(["readelf", "--dyn-syms", "-W", path])
        rc3, hdr, err3 = run(["readelf", "-hW", path])
        if rc or rc2 or rc3:
            raise Failure("readelf %s: %s" % (name, err + err2 + err3))
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn))
        outside = sorted(n for n in needed if n.lower() not in POLICY_LIBS)
        if outside:
            raise Failure("%s needs %s, outside the manylinux_2_31 policy" % (name, ", ".join(outside)))
        if re.search(r"\((RPATH|RUNPATH)\)", dyn):
            raise Failure("%s has an RPATH or RUNPATH" % name)
        versions = set((int(a), int(b)) for a, b in re.findall(r"@GLIBC_(\d+)\.(\d+)", syms))
        if versions and max(versions) > GLIBC_MAX:
            raise Failure("%s takes GLIBC_%d.%d, newer than 2.31" % ((name,) + max(versions)))
        machine = re.search(r"Machine:\s+(.*)", hdr).group(1).strip()
        if machine != MACHINES[tag]:
            raise Failure("%s is for %s, the tag says %s" % (name, machine, tag))
        lines.append("%s: needs %s, GLIBC_%s" % (name, " ".join(sorted(needed)) or "nothing",
                                                 "%d.%d" % max(versions) if versions else "none"))
    rc, out, err = run([os.path.join(SRCDIR, "scripts", "wheel"), "--check", whl])
    if rc != 0:
        raise Failure("scripts/wheel --check disagrees: %s" % (err or out).strip()[-1000:])
    return "; ".join(lines)


def metadata(whl):
    version = open(os.path.join(SRCDIR, "configure.ac")).read()
    version = re.search(r"AC_INIT\(\[pycore\], \[([^\]]+)\]", version).group(1)
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        info = "pycore-%s.dist-info/" % version
        meta = z.read(info + "METADATA").decode()
        entry = z.read(info + "entry_points.txt").decode()
        record = z.read(info + "RECORD").decode()
    for want in ("Name: pycore", "Version: " + version, "License: ", "Requires-Python: "):
        if want not in meta:
            raise Failure("METADATA lacks %r" % want)
    if "pycore = pycore:_main" not in entry:
        raise Failure("no console script pycore: %s" % entry)
    for need in ("pycore/__main__.py", "pycore/lib/libpycore-crash.so", "pycore/py.typed"):
        if need not in names:
            raise Failure("the wheel lacks %s" % need)
    mans = [n for n in names if "/share/man/man" in n]
    if len(mans) != len(glob.glob(os.path.join(SRCDIR, "man", "*.[158]"))):
        raise Failure("the wheel's man pages %s are not the tree's" % mans)
    missing = [n for n in names if not n.endswith("RECORD") and n + "," not in record]
    if missing:
        raise Failure("RECORD lacks %s" % missing)
    return "version %s, console script, python -m pycore, %d man pages, RECORD complete" % (version, len(mans))


def size(whl):
    """At most twice the stripped source build plus the shared libraries
    it loads (those outside the C library's own)."""
    work = tempfile.mkdtemp(prefix="pycore-wheel-size-")
    try:
        stripped = os.path.join(work, "pycore")
        shutil.copy(PYCORE, stripped)
        run(["strip", stripped])
        total = os.path.getsize(stripped)
        rc, out, err = run(["ldd", PYCORE])
        libs = re.findall(r"=> (/\S+)", out)
        for lib in libs:
            if os.path.basename(lib) not in POLICY_LIBS:
                total += os.path.getsize(os.path.realpath(lib))
        got = os.path.getsize(whl)
        if got > 2 * total:
            raise Failure("the wheel is %d bytes, more than twice %d" % (got, total))
        return "%d bytes, %.2f of the stripped build plus its %d libraries (%d bytes)" % (
            got, got / total, len([l for l in libs if os.path.basename(l) not in POLICY_LIBS]), total)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def same_as_source(report_text, what):
    rc, out, err = run([PYCORE, "analyze", "--format", "json", SAMPLE])
    if rc != 0:
        raise Failure("the source build: exit %d: %s" % (rc, err))
    mine, theirs = load_report(report_text, what), load_report(out)
    if mine != theirs:
        diff = [k for k in theirs if mine.get(k) != theirs.get(k)]
        raise Failure("%s differs from the source build's report in %s" % (what, diff))


def host_venv(whl):
    """A venv of Debian 12's python3 (with its site packages: pytest)."""
    work = tempfile.mkdtemp(prefix="pycore-wheel-venv-")
    try:
        venv = os.path.join(work, "venv")
        rc, out, err = run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
        if rc != 0:
            raise Skip("python3 -m venv: %s (Debian package python3-venv)" % err.strip()[-300:])
        rc, out, err = run([os.path.join(venv, "bin", "pip"), "install", "--no-index", "-q", whl])
        if rc != 0:
            raise Failure("pip install: %s" % err.strip()[-1000:])
        env = dict(os.environ)
        for k in ("PYCORE", "PYCORE_CRASH_LIB", "PYTHONPATH"):
            env.pop(k, None)
        pycore = os.path.join(venv, "bin", "pycore")
        rc, out, err = run([pycore, "analyze", "--format", "json", SAMPLE], env=env)
        if rc != 0:
            raise Failure("the venv's pycore: exit %d: %s" % (rc, err))
        same_as_source(out, "the venv's pycore")
        py = os.path.join(venv, "bin", "python")
        rc, api, err = run([py, "-c", "import json, sys, pycore; print(pycore.binary()); "
                            "print(json.dumps(pycore.analyze(sys.argv[1])))", SAMPLE], env=env)
        if rc != 0:
            raise Failure("the API: %s" % err[-1000:])
        where, api = api.split("\n", 1)
        if not where.startswith(venv) or json.loads(api) != json.loads(out):
            raise Failure("the API ran %s, or its result is not the console script's" % where)
        rc, mod, err = run([py, "-m", "pycore", "--version"], env=env)
        if rc != 0 or not mod.startswith("pycore "):
            raise Failure("python -m pycore --version: exit %d %r %s" % (rc, mod, err))
        # the plugin with the wheel's own crash library
        if subprocess.run([py, "-c", "import pytest"], stderr=subprocess.DEVNULL).returncode != 0:
            return "the console script = the source build, the API = the console script (no pytest: plugin not run)"
        shutil.copy(VICTIMS, os.path.join(work, "test_victims.py"))
        env["VICTIM_TRUTH"] = work
        p = subprocess.run([py, "-m", "pytest", "-p", "pycore", "-p", "no:cacheprovider",
                            "test_victims.py::test_segfault"], cwd=work, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=scaled(120))
        err = p.stderr.decode("utf-8", "replace")
        saved = os.path.join(work, "pycore-reports", "test_victims.py__test_segfault.json")
        if p.returncode != -11 or "signal 11 (SIGSEGV)" not in err or not os.path.exists(saved):
            raise Failure("the wheel's plugin on a segfault: exit %d, report saved: %s\n%s" % (
                p.returncode, os.path.exists(saved), err[-2000:]))
        truth = json.load(open(os.path.join(work, "segfault.json")))
        fault = load_report(open(saved).read(), "the plugin's report")["process"]["fault"]
        if not fault or fault["thread"] != truth["tid"] or fault["address"] != hex(truth["address"]):
            raise Failure("the plugin's report: fault %s, the test's thread %d at %#x" % (
                fault, truth["tid"], truth["address"]))
        return ("the console script = the source build, the API = the console script, python -m pycore; "
                "the plugin read the segfaulting test")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def in_root(root, whl, python, arch="amd64"):
    """A venv of ROOT's PYTHON with the wheel, made and used with chroot;
    the sample as its truth says, and (amd64) a compact dump of a process
    of the root, saved by the source build's pycore --pid, too."""
    work = tempfile.mkdtemp(prefix="pycore-wheel-", dir=os.path.join(root, "tmp"))
    inside = work[len(root):]
    try:
        shutil.copy(whl, work)
        shutil.copy(SAMPLE, work)
        # (in the sandbox the roots' own programs run in: pip runs no
        # script of the wheel's, but nothing of a root touches this machine)
        chroot = [os.path.join(SRCDIR, "scripts", "root-sandbox")] + (
            ["--binfmt-aarch64"] if arch == "arm64" else []) + [root, "chroot", root]
        # the roots hold no pip: their distribution's own, as a wheel
        rc, pip, err = run([os.path.join(SRCDIR, "scripts", "root-pip")] +
                           (["--binfmt-aarch64"] if arch == "arm64" else []) + [root], timeout=600)
        if rc != 0:
            raise Skip("no pip for %s: %s" % (root, err.strip()))
        pip = pip.strip()
        shutil.copy(pip, work)
        # (Debian 11's pip is debundled: its libraries are wheels beside it)
        wheels = [w for w in glob.glob(os.path.join(os.path.dirname(pip), "*.whl")) if w != pip]
        os.makedirs(os.path.join(work, "wheels"))
        for w in wheels:
            shutil.copy(w, os.path.join(work, "wheels"))
        # Debian 11's distutils, which its pip imports, beside the wheels
        # (scripts/root-pip); pip 24.2 and later take the certificates of
        # a minimal root, which has none, unless told to use the old way
        pylib = glob.glob(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(pip))), "lib", "python3*"))
        for d in pylib:
            shutil.copytree(d, os.path.join(work, "pylib"), dirs_exist_ok=True)
            # (with the root's own distutils/__init__.py: a package of its)
            own = os.path.join(root, "usr", "lib", os.path.basename(d), "distutils")
            for f in os.listdir(own) if os.path.isdir(own) else ():
                if f.endswith(".py") and not os.path.exists(os.path.join(work, "pylib", "distutils", f)):
                    shutil.copy(os.path.join(own, f), os.path.join(work, "pylib", "distutils", f))
        major, minor = map(int, re.match(r"pip-(\d+)\.(\d+)", os.path.basename(pip)).groups())
        legacy = "--use-deprecated=legacy-certs" if (major, minor) >= (24, 2) else ""
        script = ('"$1" -m venv --without-pip "$2/venv" && '
                  'PYTHONPATH="$2/pylib$(for w in "$2"/wheels/*.whl; do [ -f "$w" ] && printf ":%s" "$w"; done)" '
                  '"$2/venv/bin/python" "$2/$3/pip" '
                  'install --no-index -q $6 "$2/$4" && "$2/venv/bin/pycore" analyze --format json "$2/$5"')
        rc, out, err = run(chroot + ["sh", "-c", script, "sh", python, inside, os.path.basename(pip),
                                     os.path.basename(whl), os.path.basename(SAMPLE), legacy], timeout=1800)
        if rc != 0:
            raise Failure("venv, pip install and pycore in %s: exit %d: %s" % (root, rc, err.strip()[-1500:]))
        compare(json.load(open(SAMPLE_TRUTH)), load_report(out, "the root's venv's pycore"), None)
        done = "the sample as its truth says"
        if arch != "amd64":
            return done
        target = Target(python, root=root)
        scen = target.workdir("pycore-wheel-threads-")
        try:
            truth = os.path.join(scen, "truth.json")
            proc = target.popen([target.scenario(scen, "threads.py"), target.inside(truth)], scen,
                                stdout=subprocess.PIPE)
            try:
                if proc.stdout.readline().strip() != b"READY":
                    raise Failure("threads.py in %s did not get ready" % root)
                save = os.path.join(scen, "live.core.zst")
                rc, out, err = run([PYCORE, "analyze", "--pid", "--save", save, str(proc.pid)])
                if rc != 0:
                    raise Failure("pycore --pid --save of the root's process: exit %d: %s" % (rc, err))
            finally:
                proc.kill()
                proc.wait()
            rc, out, err = run(chroot + ["%s/venv/bin/pycore" % inside, "analyze", "--format", "json",
                                         target.inside(save)])
            if rc != 0:
                raise Failure("the venv's pycore on the root's dump: exit %d: %s" % (rc, err))
            compare(json.load(open(truth)), load_report(out, "the root's dump"), None)
        finally:
            shutil.rmtree(scen, ignore_errors=True)
        return done + "; a process of the root's %s, saved with --pid --save, as its truth says" % python
    finally:
        shutil.rmtree(work, ignore_errors=True)


def pipx(whl):
    if not shutil.which("pipx"):
        raise Skip("pipx not installed (Debian package pipx)")
    work = tempfile.mkdtemp(prefix="pycore-pipx-")
    try:
        env = dict(os.environ, PIPX_HOME=os.path.join(work, "home"), PIPX_BIN_DIR=os.path.join(work, "bin"),
                   PIPX_MAN_DIR=os.path.join(work, "man"))
        for k in ("PYCORE", "PYTHONPATH"):
            env.pop(k, None)
        rc, out, err = run(["pipx", "install", whl], env=env, timeout=600)
        if rc != 0:
            raise Failure("pipx install: %s" % (err or out)[-1500:])
        env["PATH"] = os.path.join(work, "bin") + os.pathsep + env["PATH"]
        p = subprocess.run(["sh", "-c", "command -v pycore && pycore analyze --format json \"$1\"", "sh", SAMPLE],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=scaled(120))
        out = p.stdout.decode()
        where, report = out.split("\n", 1) if "\n" in out else (out, "")
        if p.returncode != 0 or not where.startswith(os.path.join(work, "bin")):
            raise Failure("pycore after pipx install: %s exit %d %s" % (where, p.returncode, p.stderr.decode()))
        compare(json.load(open(SAMPLE_TRUTH)), load_report(report, "pipx's pycore"), None)
        return "pipx's pycore on PATH reads the sample as its truth says"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    tap = TAP()
    shutil.rmtree(DIST, ignore_errors=True)
    os.makedirs(DIST)
    work = tempfile.mkdtemp(prefix="pycore-wheel-elf-")
    try:
        whl = tap.run("scripts/wheel: the x86-64 wheel", lambda: os.path.basename(build("amd64")))
        whl = whl and os.path.join(DIST, whl)
        if whl:
            tap.run("x86-64 wheel: manylinux_2_31 policy", audit, whl, "x86_64", work)
            tap.run("x86-64 wheel: metadata", metadata, whl)
            tap.run("x86-64 wheel: size", size, whl)
            tap.run("x86-64 wheel: pip in a venv of Debian 12 (this machine)", host_venv, whl)
            root = run([os.path.join(SRCDIR, "scripts", "bullseye-root"), "--print"])[1].strip()
            tap.run("x86-64 wheel: pip in a venv of the Debian 11 root", in_root, root, whl, "/usr/bin/python3")

            def sid():
                r, why = sid_root()
                if why:
                    raise Skip("no Debian unstable root: %s" % why)
                return in_root(r, whl, "/usr/bin/python3.13")
            tap.run("x86-64 wheel: pip in a venv of the Debian unstable root", sid)
            tap.run("x86-64 wheel: pipx install", pipx, whl)
        else:
            for what in ("manylinux_2_31 policy", "metadata", "size", "pip in a venv of Debian 12 (this machine)",
                         "pip in a venv of the Debian 11 root", "pip in a venv of the Debian unstable root",
                         "pipx install"):
                tap.skip("x86-64 wheel: " + what, "no x86-64 wheel")

        def arm64():
            if not os.path.exists("/usr/libexec/qemu-binfmt/aarch64-binfmt-P") and not shutil.which(
                    "qemu-aarch64-static"):
                raise Skip("qemu-user-static not installed")
            root = run([os.path.join(SRCDIR, "scripts", "bullseye-root"), "--arch", "arm64", "--print"])[1].strip()
            if not os.path.exists(os.path.join(root, "opt", "pycore-elfutils", ".pycore-ready")):
                # (its root and elfutils, emulated: about 40 minutes the
                # first time, too long beside the suite; seconds cached)
                raise Skip("the arm64 build root is not made yet: scripts/wheel --arch arm64 makes it once")
            w = build("arm64")
            detail = audit(w, "aarch64", work)
            return detail + "; " + in_root(root, w, "/usr/bin/python3", arch="arm64")
        tap.run("aarch64 wheel: manylinux_2_31 policy; pip in a venv of the arm64 Debian 11 root (qemu-user)",
                arm64)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
