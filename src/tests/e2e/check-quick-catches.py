"""make check-quick catches what it is there to catch: pycore built three
times with one deliberate bug each (a walk that stops after two frames, an
int repr off by one, a JSON report whose line numbers are off by one), and
the quick checks that own each (check-sample.py, check-stacks.py's locals
scenario) run against each broken build: each must report a failure.

The source tree is copied to a scratch directory, configured and built
once; each bug is put in by replacing one exact line of the source (when
the line is gone, the test fails and names it: a change moved the code the
mutant breaks, and the mutant must move with it), built (make pycore
recompiles one file), and undone.

usage: check-quick-catches.py
Output: TAP (pycoretest.tap).  Environment: srcdir, PYCORE (unused but for
its build's configure flags), KEEP_CORES=1 keeps the scratch directory.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from pycoretest import interpreters
from pycoretest.env import SRCDIR, scaled
from pycoretest.tap import TAP, Failure, Skip
from pycoretest.run import drop_scratch

# (name, file, the exact text, what replaces it, the checks that must fail)
MUTANTS = [
    ("a walk that stops after two frames", "src/python/walk/frames.c",
     "\t\tif (!f)\n\t\t\tbreak;\n\t\tif (L->iframe_is_entry >= 0) {\n",
     "\t\tif (!f || t->frames.n >= 2)\n\t\t\tbreak;\n\t\tif (L->iframe_is_entry >= 0) {\n",
     [("check-sample.py", [], {})]),
    ("an int repr off by one", "src/python/repr/scalar.c",
     '\to += (size_t)snprintf(out + o, cap - o, "%u", limbs[nl - 1]);\n',
     '\to += (size_t)snprintf(out + o, cap - o, "%u", limbs[nl - 1] + 1);\n',
     [("check-stacks.py", ["py3.13.interp|debian3.11.interp"], {"PYCORE_SCENARIOS": "locals"})]),
    ("a JSON report's line numbers off by one", "src/report/json.c",
     '\ttext_int(t, f->line > 0, f->line);\n',
     '\ttext_int(t, f->line > 0, f->line + 1);\n',
     [("check-sample.py", [], {})]),
]
# what the copy needs to configure and build pycore
PARTS = ["configure", "configure.ac", "Makefile.in", "Makefile.am", "aclocal.m4", "config.h.in", "build-aux",
         "src", "versions", "man", "systemd", "debian", "scripts", "README"]


def main():
    tap = TAP()
    names = [m[0] for m in MUTANTS]
    missing = [p for p in ("configure", "Makefile.in") if not os.path.exists(os.path.join(SRCDIR, p))]
    if missing:
        for n in names:
            tap.skip("the quick checks catch %s" % n, "%s not made in %s (autoreconf -fi)" % (missing, SRCDIR))
        return tap.done()
    scratch = tempfile.mkdtemp(prefix="pycore-mutants-")
    try:
        src = os.path.join(scratch, "src-tree")
        os.mkdir(src)
        for p in PARTS:
            path = os.path.join(SRCDIR, p)
            if os.path.isdir(path):
                shutil.copytree(path, os.path.join(src, p), symlinks=True,
                                ignore=shutil.ignore_patterns("*.o", ".deps", ".dirstamp", "__pycache__"))
            elif os.path.exists(path):
                shutil.copy2(path, os.path.join(src, p))
        build = os.path.join(scratch, "build")
        os.mkdir(build)
        env = dict(os.environ)
        for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
            env.pop(k, None)
        jobs = str(os.cpu_count() or 2)
        # the copy configured and built once; should that fail, each
        # mutant's result is a failure that says so
        unbuilt = None
        p = subprocess.run([os.path.join(src, "configure"), "-q"], cwd=build, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=scaled(300))
        if p.returncode != 0:
            unbuilt = "configure of the copy failed: %s" % p.stdout.decode(errors="replace")[-1000:]
        else:
            p = subprocess.run(["make", "-s", "-j" + jobs, "pycore"], cwd=build, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=scaled(900))
            if p.returncode != 0:
                unbuilt = "the copy's pycore does not build: %s" % p.stdout.decode(errors="replace")[-1000:]

        def mutant(name, path, old, new, checks):
            if unbuilt:
                raise Failure(unbuilt)
            file = os.path.join(src, path)
            text = open(file).read()
            if text.count(old) != 1:
                raise Failure("%s: the line the mutant replaces is %s in %s: %r (move the mutant with the code)"
                              % (name, "gone" if old not in text else "not unique", path, old.strip()))
            try:
                with open(file, "w") as f:
                    f.write(text.replace(old, new))
                b = subprocess.run(["make", "-s", "-j" + jobs, "pycore"], cwd=build, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(600))
                if b.returncode != 0:
                    raise Failure("the mutant does not build: %s" % b.stdout.decode(errors="replace")[-1500:])
                caught = []
                for script, args, extra in checks:
                    if script == "check-stacks.py":
                        # the first interpreter of A|B this machine has
                        whys = []
                        for name in args[0].split("|"):
                            _, why = interpreters.find(name.rsplit(".interp", 1)[0])
                            if not why:
                                args = [name]
                                break
                            whys.append(why)
                        else:
                            raise Skip("; ".join(whys))
                    e = dict(env, PYCORE=os.path.join(build, "pycore"), **extra)
                    r = subprocess.run([sys.executable, os.path.join(SRCDIR, "src", "tests", "e2e", script)] + args,
                                       env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       timeout=scaled(600))
                    out = r.stdout.decode(errors="replace")
                    failed = [l for l in out.splitlines() if l.startswith("not ok")]
                    if not failed:
                        raise Failure("%s %s passed with the mutant built in: it would not catch %s"
                                      % (script, " ".join(args), name))
                    caught.append("%s: %s" % (script, failed[0][:120]))
                return "; ".join(caught)
            finally:
                with open(file, "w") as f:
                    f.write(text)

        for name, path, old, new, checks in MUTANTS:
            tap.run("the quick checks catch %s" % name, mutant, name, path, old, new, checks)
    finally:
        drop_scratch(tap, scratch)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
