"""The sample core of the README (testdata/) against the truth its process
recorded when scripts/make-sample made it; then the same with the
interpreter's installation hidden: the README's first command must work on
a machine without it.

usage: check-sample.py [CORE TRUTH]  (default: testdata/sample-py3.13-threads.*)
Output: TAP (pycoretest.tap).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from pycoretest.compare import compare
from pycoretest.env import PYCORE, SRCDIR
from pycoretest.run import run_pycore
from pycoretest.schema import load_report, schema_summary
from pycoretest.tap import TAP, Failure, Skip
from pycoretest.env import scaled


def check_sample(tap, core, truth_path):
    """The sample core shipped in testdata/: its truth was recorded by the
    process when scripts/make-sample made it.  Then the same with the
    interpreter's whole installation hidden: the README's first command
    must work on a machine without it."""
    with open(truth_path) as f:
        truth = json.load(f)
    got = {}

    def plain():
        rc, out, err = run_pycore(["analyze", "--format", "json", core])
        if rc != 0:
            raise Failure("pycore exit %d: %s" % (rc, err.strip()))
        report = load_report(out)
        compare(truth, report, None)
        if report["input"]["compression"] != "zstd":
            raise Failure("input.compression is %r, not zstd" % report["input"]["compression"])
        got["report"] = report
        return "%d threads, located by %s" % (len(truth["threads"]), report["python"]["located_by"])

    def hidden():
        if "report" not in got:
            raise Failure("the sample itself was not read")
        if os.geteuid() != 0:
            raise Skip("a mount namespace needs root")
        if not shutil.which("unshare"):
            raise Skip("unshare not installed (Debian package util-linux)")
        prefix = os.path.dirname(os.path.dirname(got["report"]["process"]["executable"] or "/"))
        if prefix == "/" or not os.path.isdir(prefix):
            raise Skip("the sample's interpreter (%s) is not on this machine: the check above read it "
                       "without it" % prefix)
        empty = tempfile.mkdtemp(prefix="pycore-empty-")
        try:
            p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                                'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", empty, prefix,
                                PYCORE, "analyze", "--format", "json", core],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(120))
        finally:
            os.rmdir(empty)
        if p.returncode != 0:
            raise Failure("exit %d: %s" % (p.returncode, p.stderr.decode().strip()))
        report = load_report(p.stdout)
        compare(truth, report, None)
        return "located by %s" % report["python"]["located_by"]

    tap.run("sample %s" % os.path.basename(core), plain)
    tap.run("sample with its interpreter's installation hidden", hidden)


def main():
    tap = TAP()
    if len(sys.argv) == 3:
        core, truth = sys.argv[1:]
    elif len(sys.argv) == 1:
        base = os.path.join(SRCDIR, "testdata", "sample-py3.13-threads")
        core, truth = base + ".core.zst", base + ".truth.json"
    else:
        sys.exit("usage: check-sample.py [CORE TRUTH]")
    check_sample(tap, core, truth)
    schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
