"""Corrupted Python memory in a real core: pycore must say what is wrong
where it is wrong, and go on, never crash, hang or print a wrong value.

A gcore of the locals scenario under CPython 3.12 is copied and patched
(addresses from pycore's own report of the intact core, struct offsets from
versions/3.12.h): a thread list that loops, a frame chain that points to
itself, a chain cut short by a NULL link (the thread's first frame is at
the bottom of its data stack: pycore must say so and recover the outer
frames from it, marked), a current frame that reads NULL while the data
stack holds frames (all recovered, marked),
a dict whose keys table claims 2**60 slots, a str whose length is
2**50, a list whose items pointer is garbage; a list item that points
nowhere and a NULL tuple item, which cost only themselves: the container
keeps the rest of its repr (as the process printed it); a deque whose
block pointer is garbage.  Cores of other machines: the same core with
its ELF header's machine (and class and byte order) changed to riscv64,
ppc64le, s390x and i386 -- a test of the reader's refusal at the header,
not of real cores of those machines -- must get one line naming the
architecture, exit 3 (a dump pycore cannot analyze), and a batch error
record of code "unsupported".  Every report must match the
schema.  Output: TAP, one line per case (a skip each when the 3.12 core
cannot be made here).
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.corefile import Core, table
from pycoretest.env import scaled


def run(core, *extra):
    p = subprocess.run([pt.PYCORE, "analyze", "--format", "json", "--locals"] + list(extra) + [core],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(60))
    if p.returncode < 0 or p.returncode > 4:
        raise pt.Failure("pycore died: exit %d: %s" % (p.returncode, p.stderr.decode()[-500:]))
    out = p.stdout.decode("utf-8", "replace")
    return p.returncode, pt.load_report(out) if out.strip() else None, p.stderr.decode("utf-8", "replace")


CASES = ["the intact core (input.architecture x86_64)", "a thread list that loops", "a frame chain that points to itself",
         "a frame chain cut short: said, and the outer frames recovered from the data stack",
         "a current frame that reads NULL: said, and every frame recovered from the data stack",
         "a dict whose keys claim 2**60 slots", "a str of length 2**50", "a list whose items pointer is garbage",
         "a list that claims 2**40 items",
         "a list item that points nowhere: [1, <invalid object at 0xbad>, 3.0]",
         "a NULL tuple item: (1, <NULL>)",
         "a deque whose first block points nowhere"]
# (e_machine, EI_CLASS, EI_DATA, name): the ELF header's fields changed
OTHER_MACHINES = [(243, 2, 1, "riscv64"), (21, 2, 1, "ppc64le"), (22, 2, 2, "s390x"), (3, 1, 1, "i386")]
MACHINE_CASES = ["a core of %s %s process (the header changed): refused in one line, exit 3"
                 % ("an" if m[3][0] in "aeiox" or m[3].startswith("s390") else "a", m[3]) for m in OTHER_MACHINES]


def other_machine(core, work, machine, cls, data, name):
    """The x86-64 CORE with its ELF header saying MACHINE, CLASS and DATA
    (e_type and e_machine in that byte order): pycore's refusal."""
    c = bytearray(open(core, "rb").read())
    c[4], c[5] = cls, data
    struct.pack_into(">HH" if data == 2 else "<HH", c, 16, 4, machine)  # ET_CORE
    path = os.path.join(work, "machine-" + name)
    open(path, "wb").write(c)
    article = "an" if name[0] in "aeiox" or name.startswith("s390") else "a"
    want = "pycore: %s: core of %s %s process: pycore cannot analyze %s dumps yet" % (path, article, name, name)
    rc, report, err = run(path)
    if rc != 3 or err.strip() != want or report is not None:
        raise pt.Failure("exit %d, stderr %r, a report: %s; want exit 3 and %r"
                         % (rc, err, report is not None, want))
    p = subprocess.run([pt.PYCORE, "batch", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=scaled(60))
    records = [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]
    if p.returncode != 0 or len(records) != 1 or records[0].get("error", {}).get("code") != "unsupported":
        raise pt.Failure("batch: exit %d, records %r; want one error record of code unsupported"
                         % (p.returncode, records))


def main():
    tap = pt.TAP()
    pythons = [p for p in [interpreters.path("py3.12")] if p]
    why = None
    if not pythons:
        why = interpreters.where("py3.12")[1]
    elif not shutil.which("gcore"):
        why = "gcore not installed (Debian package gdb)"
    if why:
        for label in CASES + MACHINE_CASES:
            tap.skip(label, why)
        pt.schema_summary(tap)
        return tap.done()
    L = table(12)
    work = tempfile.mkdtemp(prefix="pycore-corrupt-")
    try:
        got = {}

        def intact():
            core, truth_path = pt.take_gcore(pythons[-1], "locals", work)
            rc, report, err = run(core)
            if rc != 0:
                raise pt.Failure("exit %d: %s" % (rc, err))
            if report["input"].get("architecture") != "x86_64":
                raise pt.Failure("input.architecture %r, not x86_64" % report["input"].get("architecture"))
            with open(truth_path) as f:
                truth = json.load(f)
            got.update(core=core, report=report, truth=truth)
        tap.run(CASES[0], intact)
        if "core" not in got:
            for label in CASES[1:] + MACHINE_CASES:
                tap.skip(label, "the intact core could not be read")
            pt.schema_summary(tap)
            return tap.done()
        core, report = got["core"], got["report"]
        runtime = int(report["python"]["runtime_address"], 16)
        cases = iter(CASES[1:])

        def case(patch, check):
            def run_case():
                c = Core(core)
                patch(c)
                path = os.path.join(work, "patched")
                c.save(path)
                rc2, rep, err2 = run(path)
                check(rc2, rep, err2)
            tap.run(next(cases), run_case)

        def first_tstate(c):
            interp = c.u64(runtime + L["runtime_interpreters_head"])
            return c.u64(interp + L["interp_tstate_head"])

        def loop_threads(c):
            ts = first_tstate(c)
            second = c.u64(ts + L["tstate_next"])
            c.put64(second + L["tstate_next"], ts)

        def expect_warning(text):
            def check(rc2, rep, err2):
                if rc2 != 1 or not rep or not any(text in w for w in rep["warnings"]):
                    raise pt.Failure("exit %d, warnings %s; want 1 and one saying %r"
                                     % (rc2, rep and rep["warnings"], text))
            return check
        case(loop_threads, expect_warning("loops"))

        def self_frame(c):
            ts = first_tstate(c)
            cframe = c.u64(ts + L["tstate_cframe"])
            frame = c.u64(cframe + L["cframe_current_frame"])
            c.put64(frame + L["iframe_previous"], frame)

        def expect_thread_error(text):
            def check(rc2, rep, err2):
                errors = [t["error"] for i in (rep or {}).get("interpreters", []) for t in i["threads"]]
                if rc2 != 1 or not any(e and text in e for e in errors):
                    raise pt.Failure("exit %d, thread errors %s; want 1 and one saying %r" % (rc2, errors, text))
            return check
        case(self_frame, expect_thread_error("loops"))

        def cut_chain(c):
            ts = first_tstate(c)
            cframe = c.u64(ts + L["tstate_cframe"])
            frame = c.u64(cframe + L["cframe_current_frame"])
            c.put64(frame + L["iframe_previous"], 0)
        def expect_recovered(rc2, rep, err2):
            # the thread whose chain was cut keeps its first frame from the
            # chain and gets every outer one back from the data stack
            ts_report = [t for i in (rep or {}).get("interpreters", []) for t in i["threads"]
                         if t["error"] and "recovered" in t["error"]]
            intact = [t for i in report["interpreters"] for t in i["threads"]]
            if rc2 != 1 or len(ts_report) != 1:
                raise pt.Failure("exit %d, threads with recovered frames: %d; want 1 and 1" % (rc2, len(ts_report)))
            t = ts_report[0]
            same = [u for u in intact if u["tid"] == t["tid"]][0]
            got = [(f["function"], f["line"], f["recovered"]) for f in t["frames"] if f["kind"] == "python"]
            want = [(f["function"], f["line"], k > 0) for k, f in enumerate(
                f for f in same["frames"] if f["kind"] == "python")]
            if got != want:
                raise pt.Failure("frames %s; the intact core's, the outer ones recovered: %s" % (got, want))
        case(cut_chain, expect_recovered)

        def null_current(c):
            ts = first_tstate(c)
            c.put64(c.u64(ts + L["tstate_cframe"]) + L["cframe_current_frame"], 0)

        def expect_all_recovered(rc2, rep, err2):
            # a current frame that reads NULL while the data stack holds
            # frames: every frame comes back from the data stack, in order
            ts_report = [t for i in (rep or {}).get("interpreters", []) for t in i["threads"]
                         if t["error"] and "is NULL" in t["error"] and "recovered" in t["error"]]
            if rc2 != 1 or len(ts_report) != 1:
                raise pt.Failure("exit %d, threads saying NULL and recovered: %d; want 1 and 1"
                                 % (rc2, len(ts_report)))
            t = ts_report[0]
            same = [u for i in report["interpreters"] for u in i["threads"] if u["tid"] == t["tid"]][0]
            got = [(f["function"], f["line"], f["recovered"]) for f in t["frames"] if f["kind"] == "python"]
            want = [(f["function"], f["line"], True) for f in same["frames"] if f["kind"] == "python"]
            if got != want:
                raise pt.Failure("frames %s; the intact core's, all recovered: %s" % (got, want))
        case(null_current, expect_all_recovered)

        def expect_local_error(function, name):
            def check(rc2, rep, err2):
                if rc2 not in (0, 1) or not rep:
                    raise pt.Failure("exit %d: %s" % (rc2, err2))
                l = pt.locals.find_local(rep, function, name)
                if l["repr"] is not None or not l["error"]:
                    raise pt.Failure("%s: repr %r, error %r; want no repr and an error"
                                     % (name, l["repr"], l["error"]))
            return check

        d = int(pt.locals.find_local(report, "containers", "d")["address"], 16)
        case(lambda c: c.put8(c.u64(d + L["dict_keys"]) + L["dictkeys_log2_size"], 60),
             expect_local_error("containers", "d"))
        s = int(pt.locals.find_local(report, "strings", "latin")["address"], 16)
        case(lambda c: c.put64(s + L["unicode_length"], 1 << 50), expect_local_error("strings", "latin"))
        lst = int(pt.locals.find_local(report, "containers", "lst")["address"], 16)
        case(lambda c: c.put64(lst + L["list_item"], 0x10), expect_local_error("containers", "lst"))

        def expect_some_error(rc2, rep, err2):
            if rc2 not in (0, 1) or not rep or not pt.locals.find_local(rep, "containers", "lst")["error"]:
                raise pt.Failure("exit %d, no error on lst" % rc2)
        case(lambda c: c.put64(lst + L["var_size"], 1 << 40), expect_some_error)

        def recorded(function, name):
            for t in got["truth"]["threads"]:
                for f in t["frames"]:
                    if f["function"] == function:
                        return f["locals"][name][1]
            raise pt.Failure("the process recorded no %s in %s" % (name, function))

        def expect_repr(function, name, want):
            def check(rc2, rep, err2):
                if rc2 not in (0, 1) or not rep:
                    raise pt.Failure("exit %d: %s" % (rc2, err2))
                l = pt.locals.find_local(rep, function, name)
                if l["repr"] != want or not l["error"] or "could not be read" not in l["error"]:
                    raise pt.Failure("%s: repr %r, error %r; want %r and an error saying so"
                                     % (name, l["repr"], l["error"], want))
            return check
        # lst = [1, "two", 3.0], tup = (1, 2) in the scenario
        case(lambda c: c.put64(c.u64(lst + L["list_item"]) + 8, 0xbad),
             expect_repr("containers", "lst", recorded("containers", "lst").replace(
                 repr("two"), "<invalid object at 0xbad>")))
        tup = int(pt.locals.find_local(report, "containers", "tup")["address"], 16)
        case(lambda c: c.put64(tup + L["tuple_item"] + 8, 0),
             expect_repr("containers", "tup", recorded("containers", "tup")[:-len("2)")] + "<NULL>)"))
        # dequeobject: leftblock is the first word after the var header
        dq = int(pt.locals.find_local(report, "stdlib_values", "dq")["address"], 16)
        case(lambda c: c.put64(dq + L["var_size"] + 8, 0x10), expect_local_error("stdlib_values", "dq"))
        for label, m in zip(MACHINE_CASES, OTHER_MACHINES):
            tap.run(label, lambda m=m: other_machine(core, work, *m))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
