"""Compact dumps (analyze --save): their report against the original's,
and gdb reading them.  check-save.py (dumps) and check-live.py (live
processes) share these."""
import re
import subprocess

from .tap import Failure
from .env import scaled


def first_difference(a, b, where="report"):
    """Where report A (the original's) and B (the compact dump's) first
    differ, said in one line; None when they are equal."""
    if type(a) is not type(b):
        return "%s: %r, the compact dump's %r" % (where, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s only in %s" % (where, k, "the original's" if k in a else "the compact's")
            d = first_difference(a[k], b[k], "%s.%s" % (where, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items, the compact dump's %d" % (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (where, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r, the compact dump's %r" % (where, a, b)


def gdb_threads(exe, compact, tids):
    """gdb -batch 'thread apply all bt' EXE COMPACT: every thread of TIDS
    listed, none failing in its three innermost frames; how many it lists."""
    p = subprocess.run(["gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off",
                        "-ex", "thread apply all bt", exe, compact],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(300))
    out = p.stdout.decode("utf-8", "replace")
    listed = set(int(t) for t in re.findall(r"^Thread \d+ \((?:Thread 0x[0-9a-f]+ )?\(?LWP (\d+)\)", out, re.M))
    missing = set(tids) - listed
    if missing:
        raise Failure("gdb lists threads %s, not %s:\n%s" % (sorted(listed), sorted(missing), out[-3000:]))
    for block in re.split(r"^Thread \d+ ", out, flags=re.M)[1:]:
        frames = [l for l in block.splitlines() if l.startswith("#")][:3]
        if not frames:
            raise Failure("gdb shows no frame for a thread:\n%s" % block[:1000])
        bad = [l for l in frames if "Cannot access memory" in l]
        if bad or "Cannot access memory" in block.split("#0", 1)[0]:
            raise Failure("gdb cannot read the innermost frames:\n%s" % block[:2000])
    return len(listed)
