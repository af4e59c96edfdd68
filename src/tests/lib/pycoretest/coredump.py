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
from .env import PYCORE, scaled, wait_until
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
        if wait_until(lambda: os.path.exists(path), 5):
            return
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
                p.wait(timeout=scaled(10))
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
            out = p.communicate(timeout=scaled(120))[0]
        self.connections += 1
        if p.returncode != 0:
            raise Failure("systemd-coredump exited %d: %s" % (p.returncode, out.decode("utf-8", "replace")))
        # its per-connection instance: NUMBER-PID-UID of the peer, this process
        instance = "%d-%d-0" % (self.connections, p.pid)
        entry = wait_until(lambda: [e for e in journal(COREDUMP_ID) if e.get("COREDUMP_PID") == str(pid)], 10)
        if entry:
            return instance, entry[-1]
        raise Failure("no systemd-coredump journal entry for pid %d; daemons' log:\n%s" % (pid, self.daemon_log()))


# The fields the checkers read: systemd-coredump's Storage=journal entry
# holds the whole core in its COREDUMP field, which `-o json --all` would
# print as an array of numbers at every poll (check-coredump timed out so
# under load).
JOURNAL_FIELDS = ("MESSAGE", "MESSAGE_ID", "PRIORITY", "COREDUMP_PID", "COREDUMP_FILENAME", "COREDUMP_EXE",
                  "PYCORE_REPORT", "PYCORE_FINGERPRINT", "PYCORE_RESULT", "PYCORE_TEXT")
JOURNAL_DIR = "/run/log/journal"
_journal_seen = {}   # (journal directory's device and inode, message id) -> (cursor, entries)


def journal(message_id):
    """Every entry of MESSAGE_ID in this checker's own journal (its private
    /run/log/journal), oldest first.  Each call reads only the entries
    written since the last one (journalctl --after-cursor), only the
    fields in JOURNAL_FIELDS."""
    st = os.stat(JOURNAL_DIR)
    key = (st.st_dev, st.st_ino, message_id)
    cursor, entries = _journal_seen.get(key, (None, []))
    argv = ["journalctl", "-D", JOURNAL_DIR, "-o", "json", "--all", "--no-pager",
            "--output-fields=" + ",".join(JOURNAL_FIELDS)]
    if cursor:
        argv.append("--after-cursor=" + cursor)
    p = subprocess.run(argv + ["MESSAGE_ID=" + message_id], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=scaled(60))
    if p.returncode != 0 and cursor:
        # a cursor the journal no longer knows (rotated): read it all again
        _journal_seen.pop(key, None)
        return journal(message_id)
    entries = list(entries)
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        if line.strip():
            e = json.loads(line)
            entries.append(e)
            cursor = e.get("__CURSOR", cursor)
    _journal_seen[key] = (cursor, entries)
    return list(entries)


def hook(args, env_extra, wait=True):
    env = dict(os.environ)
    env.update(env_extra)
    p = subprocess.Popen([PYCORE, "coredump"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if not wait:
        return p
    out, err = p.communicate(timeout=scaled(300))
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
