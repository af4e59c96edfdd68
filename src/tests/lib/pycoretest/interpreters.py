"""The interpreters the tests run, found on this machine rather than named
by path: pyenv's builds, Debian's /usr/bin/python3.N (and python3.N-dbg),
and the Debian unstable root's (scripts/sid-root) run there with chroot.

Names (one per-interpreter test each, src/tests/e2e/interpreters/NAME.interp):
  pyM.N            pyenv's newest M.N.x: $PYENV_ROOT (else `pyenv root`,
                   else ~/.pyenv)/versions/M.N.x/bin/pythonM.N
  debianM.N        /usr/bin/pythonM.N (Debian's python3.N package)
  debianM.N-dbg    /usr/bin/pythonM.N-dbg (python3.N-dbg)
  sidM.N           /usr/bin/pythonM.N inside scripts/sid-root's root
  muslM.N          CPython M.N built with musl (scripts/musl-python M.N,
                   cached once per machine; never built by a test: until
                   then, a skip by name)
  muslM.N-static   the same, a fully static executable (no dynamic linker,
                   every extension module built in: musl-python --static)
  muslM.N-nobuildid  the same, linked as musl-gcc links by default: no GNU
                   build-id in its files (musl-python --no-build-id)
  standaloneM.N    CPython M.N built as the standalone builds are: static
                   libpython, PGO and LTO, stripped (scripts/standalone-python
                   M.N, cached and skipped by name as musl's)
  ftM.N            CPython M.N free-threaded (configure --disable-gil:
                   pythonM.Nt, shared libpythonM.Nt, -g; scripts/freethreaded-python
                   M.N, cached and skipped by name as musl's)

find(NAME) gives its Target or why it is not here; names() the names the
suite runs on every machine (the .interp files: so a missing one is a skip
by name, never a silent absence); discover() everything found here.

As a program (the shell tests):
  python3 -m pycoretest NAME                the executable's path (for sid*,
                                            the host's path into the root);
                                            exit 1 with why on stderr
  python3 -m pycoretest --list              "NAME PATH" for each found here
                                            (sid* only once its root is built)
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from .env import E2E, SCENARIOS, SRCDIR, scaled

INTERP_FILES = os.path.join(E2E, "interpreters")
_NAME = re.compile(r"^(py|debian|sid|musl|standalone|ft)(\d+)\.(\d+)(-dbg|-static|-nobuildid)?$")


class Target:
    """The interpreter under test, run on this machine or in a root
    filesystem with chroot.  Paths the process sees are "inside" paths;
    the test reads and writes "host" paths."""

    def __init__(self, exe, root=None, env=None):
        self.exe = exe              # as the process sees it
        self.root = root
        self.env = env              # its environment (None: the tests')

    def host(self, inside):
        return self.root + inside if self.root else inside

    def inside(self, host):
        return host[len(self.root):] if self.root else host

    def host_exe(self):
        return self.host(self.exe)

    def workdir(self, prefix):
        """A scratch directory the process can reach, with the scenarios."""
        d = tempfile.mkdtemp(prefix=prefix, dir=os.path.join(self.root, "tmp") if self.root else None)
        if self.root:
            shutil.copytree(SCENARIOS, os.path.join(d, "scenarios"))
        return d

    def scenario(self, workdir, script):
        if self.root:
            return self.inside(os.path.join(workdir, "scenarios", script))
        return os.path.join(SCENARIOS, script)

    def popen(self, args, workdir, preexec=None, **kw):
        """The interpreter with ARGS (inside paths), its working directory
        WORKDIR (a host path)."""
        def enter():
            # a shell that is not interactive (nohup, a command ending in
            # &) starts its children with SIGQUIT ignored, and the tests
            # take kernel cores with SIGQUIT: the scenario gets the default
            signal.signal(signal.SIGQUIT, signal.SIG_DFL)
            if self.root:
                os.chroot(self.root)
                os.chdir(self.inside(workdir) or "/")
            if preexec:
                preexec()
        if self.env is not None:
            kw.setdefault("env", self.env)
        return subprocess.Popen([self.exe] + args, cwd=None if self.root else workdir,
                                preexec_fn=enter, **kw)

    def minor(self):
        p = self.popen(["-c", "import sys; print(sys.version_info[1])"], "/" if not self.root else self.root,
                       stdout=subprocess.PIPE)
        v = p.communicate()[0].decode().strip()
        return int(v) if v.isdigit() else 0

    def pycore_args(self):
        return ["--sysroot", self.root] if self.root else []

    def gdb_args(self):
        if not self.root:
            return []
        return ["-iex", "set sysroot " + self.root,
                "-iex", "set debug-file-directory " + self.root + ".debug/usr/lib/debug"]


def sid_root():
    """The Debian unstable root (scripts/sid-root builds it once): (path,
    None) or (None, why not)."""
    p = subprocess.run([os.path.join(SRCDIR, "scripts", "sid-root")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=scaled(1800))
    if p.returncode != 0:
        return None, p.stderr.decode("utf-8", "replace").strip() or "scripts/sid-root failed"
    return p.stdout.decode().strip(), None


# The sanitizer pass (make check-sanitizer sets PYCORE_SANITIZER_PASS=1)
# runs every interpreter's own test (check-stacks.py NAME.interp) under
# ASan and UBSan, but the checkers that repeat a feature over every
# interpreter (minidumps, lldb, Breakpad, native stacks, asyncio, locks,
# ...) over one interpreter of each of pycore's frame walkers: the 3.6 to
# 3.10 frame objects, 3.11's (Debian's stripped build with its debug
# file), 3.12's (the checkers' extra cases run on it), and 3.13 and later
# (debug offsets; the Debian unstable root's, read with --sysroot).  Their
# other interpreters ran in the plain pass: the dump's reader is the same
# code whatever the interpreter.
SANITIZER_PASS_NAMES = ("py3.9", "debian3.11", "py3.12", "sid3.15")
# ... and the checkers of a feature whose code is the same whatever the
# interpreter (feature_names()), over two: a build read from its own DWARF,
# and a Debian unstable one read by debug offsets with --sysroot
SANITIZER_FEATURE_NAMES = ("py3.12", "sid3.15")
# ... and of the builds check-musl repeats its cases over, one dynamic
# and the static one (the libc seam's two ways of telling musl), and the
# one without build-ids (the only files verified by their bytes)
SANITIZER_PASS_BUILT = ("musl3.12", "musl3.12-static", "musl3.13-nobuildid")


def sanitizer_pass():
    return os.environ.get("PYCORE_SANITIZER_PASS") == "1"


def names():
    """The per-interpreter test names, in order: the .interp files'
    (SANITIZER_PASS_NAMES in the sanitizer pass)."""
    every = [f[:-len(".interp")] for f in sorted(os.listdir(INTERP_FILES)) if f.endswith(".interp")]
    if sanitizer_pass():
        return [n for n in every if n in SANITIZER_PASS_NAMES]
    return every


def feature_names():
    """The interpreters a checker repeats a feature over when the feature's
    code does not depend on the interpreter (a dump format's reader, a
    producer's dumps, a live process's reader): one of each frame walker
    (SANITIZER_PASS_NAMES), among names(); in the sanitizer pass, two of
    them (SANITIZER_FEATURE_NAMES: pycore's code under the sanitizers, not
    the interpreters again, which their own tests read there).  Every
    interpreter's own test
    (check-stacks.py NAME.interp) reads every interpreter's dumps whole;
    PYCORE_ALL_INTERPRETERS=1 runs these checkers on every one too."""
    if os.environ.get("PYCORE_ALL_INTERPRETERS") == "1":
        return names()
    return [n for n in names() if n in (SANITIZER_FEATURE_NAMES if sanitizer_pass() else SANITIZER_PASS_NAMES)]


def pyenv_root():
    root = os.environ.get("PYENV_ROOT")
    if root:
        return root
    if shutil.which("pyenv"):
        p = subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.decode().strip()
    return os.path.expanduser("~/.pyenv")


def _version_key(v):
    return tuple(int(x) for x in v.split("."))


def pyenv(major, minor):
    """pyenv's newest build of MAJOR.MINOR (a final release, x.y.z), or None."""
    found = []
    for d in glob.glob(os.path.join(pyenv_root(), "versions", "%d.%d.*" % (major, minor))):
        v = os.path.basename(d)
        exe = os.path.join(d, "bin", "python%d.%d" % (major, minor))
        if re.match(r"^\d+\.\d+\.\d+$", v) and os.access(exe, os.X_OK):
            found.append((_version_key(v), exe))
    return max(found)[1] if found else None


def pyenv_pythons(major=3):
    """Every pyenv minor's newest build of MAJOR, oldest minor first."""
    minors = set()
    for d in glob.glob(os.path.join(pyenv_root(), "versions", "%d.*" % major)):
        m = re.match(r"^\d+\.(\d+)\.\d+$", os.path.basename(d))
        if m:
            minors.add(int(m.group(1)))
    return [p for p in (pyenv(major, m) for m in sorted(minors)) if p]


# the interpreters a script builds once per machine: kind -> (script, minutes)
BUILT = {"musl": ("musl-python", 20), "standalone": ("standalone-python", 40), "ft": ("freethreaded-python", 10)}


def built_prefix(kind, major, minor, flavour=""):
    """The prefix BUILT[KIND]'s script gives MAJOR.MINOR (FLAVOUR: "",
    "-static" or "-nobuildid"), built or not, and whether it is built (its
    marker written)."""
    p = subprocess.run([os.path.join(SRCDIR, "scripts", BUILT[kind][0]), "--print", "%d.%d" % (major, minor)] +
                       (["--static"] if flavour == "-static" else []) +
                       (["--no-build-id"] if flavour == "-nobuildid" else []),
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    prefix = p.stdout.decode().strip()
    return prefix, bool(prefix) and os.path.isfile(os.path.join(prefix, ".pycore-ready"))


def where(name):
    """NAME's executable as the process sees it and the root it runs in
    (None: this machine), without building anything: (exe, root) or
    (None, why)."""
    m = _NAME.match(name)
    if not m:
        return None, "%s: not an interpreter name (pyM.N, debianM.N[-dbg], sidM.N, muslM.N[-static], " \
            "standaloneM.N, ftM.N)" % name
    kind, major, minor, dbg = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4) or ""
    if dbg in ("-static", "-nobuildid") and kind != "musl":
        return None, "%s: only musl builds have a %s flavour" % (name, dbg)
    if kind == "py":
        if dbg:
            return None, "%s: pyenv has no -dbg builds" % name
        exe = pyenv(major, minor)
        if not exe:
            return None, "%s not installed (%s/versions/%d.%d.*/bin/python%d.%d)" % (
                name, pyenv_root(), major, minor, major, minor)
        return exe, None
    if kind in BUILT:
        script, minutes = BUILT[kind]
        if dbg == "-dbg":
            return None, "%s: %s builds have no -dbg flavour" % (name, kind)
        prefix, built = built_prefix(kind, major, minor, dbg)
        exe = os.path.join(prefix, "bin", "python%d.%d%s" % (major, minor, "t" if kind == "ft" else ""))
        if not built or not os.access(exe, os.X_OK):
            how = "scripts/%s%s %d.%d" % (script, {"-static": " --static", "-nobuildid": " --no-build-id"}.get(
                dbg, ""), major, minor)
            try:
                with open(prefix + ".failed") as f:
                    return None, "%s could not be built: %s (%s tries again)" % (name, f.read().strip(), how)
            except OSError:
                pass
            return None, "%s not built yet (%s builds it once, about %d minutes; " \
                "scripts/run-tests starts it in the background)" % (name, how, minutes)
        return exe, None
    exe = "/usr/bin/python%d.%d%s" % (major, minor, dbg)
    if kind == "debian":
        if not os.access(exe, os.X_OK):
            return None, "%s (%s) not installed" % (name, exe)
        return exe, None
    return exe, "sid"


def path(name):
    """NAME's executable on this machine (pyM.N, debianM.N[-dbg]), or None."""
    exe, root = where(name)
    return exe if exe and root is None else None


def find(name):
    """NAME's Target, or (None, why it cannot run here).  For sid* this
    builds the Debian unstable root the first time (scripts/sid-root)."""
    exe, root = where(name)
    if exe is None:
        return None, root
    if root != "sid":
        return Target(exe), None
    root, why = sid_root()
    if why:
        return None, "no Debian unstable root: %s" % why
    target = Target(exe, root)
    if not os.access(target.host_exe(), os.X_OK):
        return None, "%s is not in %s" % (target.exe, root)
    from .cores import kernel_core_usable
    _, why = kernel_core_usable()
    if why:
        return None, "its snapshots are kernel cores, and %s" % why
    return target, None


def interpreter(name_or_file):
    """find() by a name or an .interp file's path."""
    return find(os.path.basename(name_or_file).rsplit(".interp", 1)[0])


def discover():
    """{name: host path} of every interpreter found on this machine (the
    Debian unstable root's only when scripts/sid-root has built it)."""
    found = {}
    for p in glob.glob(os.path.join(pyenv_root(), "versions", "*")):
        m = re.match(r"^(\d+)\.(\d+)\.\d+$", os.path.basename(p))
        if m:
            name = "py%s.%s" % m.groups()
            exe, _ = where(name)
            if exe:
                found[name] = exe
    for p in glob.glob("/usr/bin/python[0-9].[0-9]*"):
        m = re.match(r"^python(\d+)\.(\d+)(-dbg)?$", os.path.basename(p))
        if m and os.access(p, os.X_OK):
            found["debian%s.%s%s" % (m.group(1), m.group(2), m.group(3) or "")] = p
    for name in ("musl3.11", "musl3.12", "musl3.13", "musl3.12-static", "musl3.13-static", "musl3.13-nobuildid",
                 "standalone3.12", "standalone3.13", "ft3.13"):
        exe, _ = where(name)
        if exe:
            found[name] = exe
    p = subprocess.run([os.path.join(SRCDIR, "scripts", "sid-root"), "--print"], stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL)
    root = p.stdout.decode().strip()
    if p.returncode == 0 and root and os.path.isdir(os.path.join(root, "usr", "bin")):
        for exe in glob.glob(os.path.join(root, "usr", "bin", "python[0-9].[0-9]*")):
            m = re.match(r"^python(\d+)\.(\d+)$", os.path.basename(exe))
            if m and os.access(exe, os.X_OK):
                found["sid%s.%s" % m.groups()] = exe
    return found


def main(argv):
    if argv == ["--list"]:
        for name, exe in sorted(discover().items()):
            print(name, exe)
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        sys.stderr.write("usage: python3 -m pycoretest NAME | --list\n")
        return 2
    exe, root = where(argv[0])
    if exe is None:
        sys.stderr.write(root + "\n")
        return 1
    if root == "sid":
        target, why = find(argv[0])
        if why:
            sys.stderr.write(why + "\n")
            return 1
        exe = target.host_exe()
    print(exe)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
