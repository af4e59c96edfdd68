"""The systemd-coredump hook's world, for the checkers that run pycore
coredump (check-coredump.py, check-errors.py): the real systemd-coredump
(Debian's package unpacked by scripts/install-deps, never installed) and
systemd-journald, started inside a private mount namespace the checker
re-executes itself in (in_namespace): tmpfs on /run/systemd, /run/log and
/var/log/journal, a scratch directory bound on /var/lib/systemd/coredump.

  why_not()     why the hook cannot be tested here, or None
  World(work)   journald and the coredump socket; store() feeds it a core
                as the kernel would; stop() ends every process it started
  journal(id)   the journal's entries of a MESSAGE_ID
  hook(args, env)  pycore coredump ARGS; config() writes a coredump.conf;
                sidecar_of() the report file beside a stored core
"""
import json
import os
import shutil
import subprocess
import sys
import time

from . import interpreters
from .env import PYCORE
from .tap import Failure

PYTHON = interpreters.path("debian3.11")   # Debian's: its package is what a hook meets
COREDUMP_ID = "fc2e22bc6ee647b6b90729ab34a250b1"     # systemd's SD_MESSAGE_COREDUMP
COREDUMP_DIR = "/var/lib/systemd/coredump"
JOURNALD = "/lib/systemd/systemd-journald"
HOSTNAME = "pycore-test\x1bhost"                      # the hook must escape it


def extracted():
    return os.environ.get("PYCORE_SYSTEMD_COREDUMP") or os.path.expanduser(
        "~/.cache/pycore/systemd-coredump/root")


def why_not():
    """Why this test cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (unshare -m, mounts, systemd-coredump)"
    p = subprocess.run([PYCORE, "coredump", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if b"built without libsystemd" in p.stderr:
        return "this pycore was built without libsystemd (configure --without-libsystemd)"
    root = extracted()
    binary = os.path.join(root, "lib/systemd/systemd-coredump")
    if not os.access(binary, os.X_OK):
        return "systemd-coredump is not unpacked in %s (scripts/install-deps does it)" % root
    ldd = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b"not found" in ldd.stdout:
        return "the unpacked systemd-coredump does not run with this system's libraries: %s" % \
            ldd.stdout.decode("utf-8", "replace").strip()
    for tool in (JOURNALD, shutil.which("systemd-socket-activate"), shutil.which("journalctl"),
                 shutil.which("unshare"), shutil.which("gdb"), shutil.which("gcore"), PYTHON):
        if not tool or not os.access(tool, os.X_OK):
            return "needs %s" % (tool or "systemd-socket-activate, journalctl, unshare and gdb")
    for d in ("/run/systemd", "/run/log", "/var/log/journal", COREDUMP_DIR):
        if not os.path.isdir(d):
            return "%s does not exist (the test mounts over it, never creates it)" % d
    return None


class World:
    """journald and the coredump socket, inside the namespace."""

    def __init__(self, work):
        self.work = work
        self.procs = []
        self.cores = os.path.join(work, "coredump")
        os.mkdir(self.cores)
        for d in ("/run/systemd", "/run/log", "/var/log/journal"):
            subprocess.run(["mount", "-t", "tmpfs", "tmpfs", d], check=True)
        subprocess.run(["mount", "--bind", self.cores, COREDUMP_DIR], check=True)
        self.log = open(os.path.join(work, "daemons.log"), "wb")
        self.start([JOURNALD])
        self.wait_for("/run/systemd/journal/socket")
        self.binary = os.path.join(extracted(), "lib/systemd/systemd-coredump")
        self.start(["systemd-socket-activate", "--seqpacket", "-a", "-l", "/run/systemd/coredump", self.binary])
        self.wait_for("/run/systemd/coredump")
        self.connections = 0

    def start(self, argv):
        self.procs.append(subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT))

    def wait_for(self, path):
        for _ in range(100):
            if os.path.exists(path):
                return
            time.sleep(0.05)
        raise Failure("%s did not appear; daemons' log:\n%s" % (path, self.daemon_log()))

    def daemon_log(self):
        self.log.flush()
        return open(self.log.name, "rb").read().decode("utf-8", "replace")[-3000:]

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.log.close()

    def store(self, pid, core, signo, when):
        """Feed CORE of the (still existing) process PID to systemd-coredump
        as the kernel would; the instance name of the connection, and the
        journal entry systemd-coredump wrote."""
        with open(core, "rb") as f:
            p = subprocess.Popen([self.binary, str(pid), "0", "0", str(signo), str(when),
                                  "9223372036854775808", HOSTNAME], stdin=f, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
            out = p.communicate(timeout=120)[0]
        self.connections += 1
        if p.returncode != 0:
            raise Failure("systemd-coredump exited %d: %s" % (p.returncode, out.decode("utf-8", "replace")))
        # its per-connection instance: NUMBER-PID-UID of the peer, this process
        instance = "%d-%d-0" % (self.connections, p.pid)
        for _ in range(200):
            entry = [e for e in journal(COREDUMP_ID) if e.get("COREDUMP_PID") == str(pid)]
            if entry:
                return instance, entry[-1]
            time.sleep(0.05)
        raise Failure("no systemd-coredump journal entry for pid %d; daemons' log:\n%s" % (pid, self.daemon_log()))


def journal(message_id):
    p = subprocess.run(["journalctl", "-D", "/run/log/journal", "-o", "json", "--all", "--no-pager",
                        "MESSAGE_ID=" + message_id], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    out = []
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def hook(args, env_extra, wait=True):
    env = dict(os.environ)
    env.update(env_extra)
    p = subprocess.Popen([PYCORE, "coredump"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if not wait:
        return p
    out, err = p.communicate(timeout=300)
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def config(work, name, text):
    path = os.path.join(work, name + ".conf")
    with open(path, "w") as f:
        f.write("# %s\n[Coredump]\nUser=nobody\n%s" % (name, text))
    return path


def sidecar_of(core_path):
    base = os.path.basename(core_path)
    assert base.startswith("core.") and base.endswith(".zst")
    return os.path.join(os.path.dirname(core_path), "pycore." + base[5:-4] + ".json")


def in_namespace(script, *args, timeout=None):
    """Run SCRIPT (a checker's path) with ARGS again in a private mount
    namespace (unshare -m): its mounts vanish with its last process.
    The exit status."""
    return subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable,
                           os.path.abspath(script)] + list(args), timeout=timeout).returncode
