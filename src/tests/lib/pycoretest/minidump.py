"""lldb's minidumps, for the checkers that read them (check-minidump.py,
check-html.py): which lldb, and a minidump of a live process.

  LLDB, LLDB_VERSION  the lldb to use and its major version, or None and
                      why not ($LLDB, else lldb-19, else lldb-16)
  LLDB_NAME           its name, for labels
  need_lldb()         Skip naming what is missing
  save_minidump(pid, style, path)  lldb's minidump of STYLE (stack,
                      modified-memory, full) of the live process PID
"""
import os
import re
import shutil
import subprocess

from .tap import Skip
from .env import scaled


def find_lldb():
    """(path, major version) of the lldb to use, or (None, why not)."""
    names = [os.environ["LLDB"]] if os.environ.get("LLDB") else ["lldb-19", "lldb-16"]
    for name in names:
        path = shutil.which(name)
        if not path:
            continue
        v = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        m = re.search(r"lldb version (\d+)", v.stdout.decode("utf-8", "replace"))
        return path, int(m.group(1)) if m else 0
    return None, "%s not installed (Debian package lldb-19)" % " or ".join(names)


LLDB, LLDB_VERSION = find_lldb()
LLDB_NAME = os.path.basename(LLDB) if LLDB else "lldb"


def need_lldb():
    if not LLDB:
        raise Skip(LLDB_VERSION)


def save_minidump(pid, style, path):
    """lldb attached to PID saves its minidump of STYLE at PATH; lldb's
    output (whether it wrote PATH is the caller's to check)."""
    need_lldb()
    return subprocess.run([LLDB, "-p", str(pid), "-b", "-o",
                           "process save-core --plugin-name=minidump --style %s %s" % (style, path)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(300)).stdout
