"""Running pycore, and scenarios in scratch directories."""
import os
import shutil
import subprocess

from .env import PYCORE, scaled


def run_pycore(args, env=None):
    p = subprocess.run([PYCORE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120), env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run_hidden(dirs, empty, args):
    """run_pycore(ARGS) with each directory of DIRS hidden behind EMPTY, an
    empty directory, in a mount namespace of its own (the machine's mounts
    are not touched)."""
    script = "".join('mount --bind "$1" "%s" && ' % d.replace('"', '\\"') for d in dirs)
    cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", script + 'shift && exec "$@"', "sh",
           empty, PYCORE] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run_in(tap, label, work, fn, *args):
    """tap.run(LABEL, FN, *ARGS) with WORK, a scratch directory, removed
    afterwards (kept, and said so, with KEEP_CORES=1)."""
    try:
        return tap.run(label, fn, *args)
    finally:
        drop_scratch(tap, work)


def run_on(tap, name, case, fn, *args):
    """The case "NAME CASE": FN(target, work, *ARGS) on the interpreter
    NAME (pycoretest.interpreters) in a scratch directory of its, or a
    skip saying why NAME is not here."""
    from .interpreters import find
    label = "%s %s" % (name, case)
    target, why = find(name)
    if why:
        tap.skip(label, why)
        return None
    work = target.workdir("pycore-%s-%s-" % (name, case.replace(" ", "-")))
    return run_in(tap, label, work, fn, target, work, *args)


def drop_scratch(tap, work):
    """WORK, a scratch directory, removed (kept, and said so, with
    KEEP_CORES=1)."""
    if os.environ.get("KEEP_CORES") == "1":
        tap.diag("kept in %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)


def scenario_cases(tap, name, target, why, scenarios, check):
    """For each scenario of SCENARIOS, the case "NAME SCENARIO":
    CHECK(SCENARIO, WORKDIR, SUBS) in a scratch directory of TARGET's, then
    each (sub, fn, args) it put in SUBS as the case "NAME SCENARIO: sub";
    each a skip saying WHY when WHY is not None."""
    for scenario in scenarios:
        label = "%s %s" % (name, scenario)
        if why:
            tap.skip(label, why)
            continue
        workdir = target.workdir("pycore-%s-%s-" % (name, scenario))
        try:
            subs = []
            if tap.run(label, check, scenario, workdir, subs) is not None:
                for sub, fn, args in subs:
                    tap.run("%s: %s" % (label, sub), fn, *args)
        finally:
            drop_scratch(tap, workdir)


def fnv1a64(data):
    """FNV-1a, 64 bits, of the bytes DATA: how batch --shard K/N picks a
    dump's shard (its path's hash modulo N)."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h
