"""The abort's own words (issue 49): glibc's __abort_msg in the report.

A tiny C library (scenarios/aborts.c, built by the test with gcc: once
plain with -fstack-protector-all, once with -O2 -D_FORTIFY_SOURCE=2) is
called through ctypes by scenarios/aborts.py, which aborts in one of four
ways glibc keeps a message for: an assert() failing, a double free
(libc's free twice on one malloc'd pointer: malloc's tcache check), the
stack protector (a local buffer overrun), fortify (memcpy past a fixed
buffer with a length the compiler cannot see); and, for contrast, a plain
SIGSEGV (ctypes.string_at(0)), which must have no abort; an assert in a
thread of the library's own (no Python thread state; it writes its id to
stderr first, the summary must name it); an assert whose message is
longer than the 4096 bytes pycore keeps (__assert_fail called with 3000
two-byte characters: the message must be the line's first 4096 bytes,
less a character they would split, and truncated); and an assert the process
survives (its SIGABRT caught and jumped out of) followed by os.abort():
glibc still holds the assert's message, which is not this crash's, so
abort must be null and a warning say why.  Each runs with
faulthandler off and on (-X faulthandler: its handler catches the
SIGABRT and re-raises it), on pyenv's 3.12 and 3.13, Debian's
python3.11, and the Debian unstable root's 3.14 (a newer glibc; skipped
by name when scripts/sid-root has not built it).

The truth is what the process wrote to its own stderr: glibc prints the
message before it keeps it (assert/assert.c, sysdeps/posix/libc_fatal.c),
so the one stderr line of the kind's own form (an assert's "Assertion
`...' failed.", malloc's "free(): ...", "*** ... ***: terminated") is
the message, and the JSON report's abort.message (and summary.abort) must
be exactly that line, source "glibc"; the text report's summary line must
end its facts with `, abort: "MESSAGE"` and an "Abort:" line say it whole.
The pid and thread of the crash are the process's own (written first).
A static executable holding glibc (gcc -static; scenarios/abort_static.c,
named python3-static-abort so that pycore reports a process without a
Python state) fails an assert the same way: its __abort_msg is found in
the executable's own symbol table.

Then uncaught C++ exceptions (scenarios/abort_throw.cpp, built with g++,
thrown from an extern "C" function called through ctypes: no handler, so
std::terminate): a std::runtime_error, a class derived from it, a
std::invalid_argument (a logic_error), a std::exception with a what() of
its own, and an int.  libstdc++'s terminate handler prints "terminate
called after throwing an instance of 'TYPE'" and "  what():  TEXT" on
stderr: abort.exception_type must be TYPE, abort.message TEXT for the
three whose text libstdc++ keeps (runtime_error's, logic_error's), and
null for the other two (their what() is not a string pycore can prove).

Prints TAP lines; exit 0 pass, 1 fail."""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

import pycoretest as pt
from pycoretest.env import scaled

NAMES = ("py3.12", "py3.13", "debian3.11", "sid3.14")
KINDS = ("assert", "assert-long", "double-free", "stack-smash", "fortify", "assert-thread", "survived-then-os-abort", "segv",
         "c++-runtime", "c++-derived", "c++-invalid", "c++-custom", "c++-int")
# the C++ kinds whose what() is a std::runtime_error's or logic_error's text
# (scenarios/abort_throw.cpp): the others' must not be claimed
CXX_TEXT = ("c++-runtime", "c++-derived", "c++-invalid")
TERMINATE = re.compile(r"^terminate called after throwing an instance of '(.*)'$")
WHAT = re.compile(r"^  what\(\):  (.*)$")
# the stderr line each kind's message is, in the form glibc prints it
LINE = {
    "assert": re.compile(r"^.*: .*aborts\.c:\d+: queue_pop: Assertion `n_items > 0' failed\.$"),
    "assert-long": re.compile(r"^.*: .*aborts\.c:\d+: assert_says: Assertion `queue_len > 0 && \u00e9{3000}' "
                              r"failed\.$"),
    "assert-thread": re.compile(r"^.*: .*aborts\.c:\d+: queue_pop: Assertion `n_items > 0' failed\.$"),
    "double-free": re.compile(r"^free\(\): double free detected in tcache 2$"),
    "stack-smash": re.compile(r"^\*\*\* stack smashing detected \*\*\*: terminated$"),
    "fortify": re.compile(r"^\*\*\* buffer overflow detected \*\*\*: terminated$"),
}


def build(work, kind):
    pt.compile_into(work, "cc", "libaborts.so", "aborts.c", ["-fstack-protector-all"])
    pt.compile_into(work, "cc", "libaborts-fortify.so", "aborts.c", ["-O2", "-D_FORTIFY_SOURCE=2"])
    if kind.startswith("c++-"):
        pt.compile_into(work, "c++", "libabort_throw.so", "abort_throw.cpp", [])


def crash(target, work, kind, faulthandler):
    """The kernel's core of aborts.py KIND, its truth and its stderr."""
    pattern, why = pt.kernel_core_usable()
    if why:
        raise pt.Skip(why)
    truth = os.path.join(work, "truth.json")

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    args = (["-X", "faulthandler"] if faulthandler else []) + [
        target.scenario(work, "aborts.py"), target.inside(truth), kind, target.inside(work)]
    proc = target.popen(args, work, preexec=unlimited, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=scaled(60))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise pt.Failure("the scenario did not crash")
    err = err.decode("utf-8", "replace")
    want = signal.SIGSEGV if kind == "segv" else signal.SIGABRT
    if proc.returncode != -want:
        raise pt.Failure("aborts.py %s ended with %s, not %s: %s" % (kind, proc.returncode, want.name, err[-300:]))
    core = pt.kernel_core_path(pattern, proc.pid, work)
    if not os.path.exists(core):
        raise pt.Skip("the kernel wrote no core (%s; is ulimit -c limited by a hard limit?)" % core)
    return core, json.load(open(truth)), err


def said(kind, err):
    """The one line of stderr that is the process's own message."""
    lines = [l for l in err.splitlines() if LINE[kind].match(l)]
    if len(lines) != 1:
        raise pt.Failure("stderr holds %d lines of %s's form, not one: %r" % (len(lines), kind, err[-400:]))
    return lines[0]


def cut(s, n):
    """The summary's cut: N bytes on a character boundary, "..." when cut."""
    b = s.encode()
    if len(b) <= n:
        return s
    while n > 0 and (b[n] & 0xC0) == 0x80:
        n -= 1
    return b[:n].decode() + "..."


def check_cxx(kind, err, report, text, summary):
    """An uncaught C++ exception: its type as libstdc++'s terminate handler
    printed it, its what() where libstdc++ keeps it, nothing claimed
    where it does not."""
    types = [m.group(1) for m in map(TERMINATE.match, err.splitlines()) if m]
    whats = [m.group(1) for m in map(WHAT.match, err.splitlines()) if m]
    if len(types) != 1 or len(whats) > 1:
        raise pt.Failure("stderr holds %d terminate lines and %d what() lines: %r" % (len(types), len(whats),
                                                                                   err[-400:]))
    ab = report["abort"]
    if ab is None:
        raise pt.Failure("abort null; the process threw %s (warnings: %s)" % (types[0], report["warnings"]))
    message = whats[0] if kind in CXX_TEXT else None
    want = {"message": message, "truncated": False, "source": "c++", "exception_type": types[0]}
    if ab != want:
        raise pt.Failure("abort %r, the process threw %r (what(): %r)" % (ab, types[0], whats))
    if report["summary"]["abort"] != message:
        raise pt.Failure("summary.abort %r, not %r" % (report["summary"]["abort"], message))
    said = ", abort: uncaught %s" % types[0] + (': "%s"' % message if message else "")
    if len(summary) != 1 or not re.search(re.escape(said) + r"(;|,|$)", summary[0]):
        raise pt.Failure("the text's summary %r does not say %r" % (summary, said))
    line = "Abort: uncaught C++ exception %s%s (the exception object libstdc++ holds)" % (
        types[0], ": " + message if message else "")
    if line not in text.splitlines():
        raise pt.Failure("no text line %r" % line)
    return "%s%s" % (types[0], ": " + message if message else " (no what() claimed)")


def check(target, work, kind, faulthandler):
    build(work, kind)
    core, truth, err = crash(target, work, kind, faulthandler)
    rc, out, perr = pt.run_pycore(["analyze", "--format", "json"] + target.pycore_args() + [core])
    if rc not in (0, 1):
        raise pt.Failure("pycore exit %d: %s" % (rc, perr.strip()))
    report = pt.load_report(out)
    if report["process"]["pid"] != truth["pid"]:
        raise pt.Failure("pid %s, the process was %s" % (report["process"]["pid"], truth["pid"]))
    if kind == "assert-thread":
        # the library's thread, which said its id before it asserted
        ids = [int(m.group(1)) for m in map(re.compile(r"^native thread (\d+) asserts$").match, err.splitlines())
               if m]
        if len(ids) != 1:
            raise pt.Failure("stderr names no one asserting thread: %r" % err[-300:])
        truth["tid"] = ids[0]
    if report["summary"]["thread"] != truth["tid"]:
        raise pt.Failure("summary names thread %s, the process crashed in %s" % (report["summary"]["thread"],
                                                                              truth["tid"]))
    rc, text, perr = pt.run_pycore(["analyze"] + target.pycore_args() + [core])
    if rc not in (0, 1):
        raise pt.Failure("text: pycore exit %d: %s" % (rc, perr.strip()))
    summary = [l for l in text.splitlines() if l.startswith("Summary: ")]
    if kind == "segv":
        if report["abort"] is not None or report["summary"]["abort"] is not None:
            raise pt.Failure("a plain SIGSEGV, yet abort %r" % report["abort"])
        if any(l.startswith("Abort: ") for l in text.splitlines()) or "abort: " in summary[0]:
            raise pt.Failure("a plain SIGSEGV, yet the text says an abort: %s" % summary[0])
        return "no abort"
    if kind == "survived-then-os-abort":
        # glibc kept the survived assert's message; this abort is os.abort()'s
        said("assert", err)
        if report["abort"] is not None or report["summary"]["abort"] is not None:
            raise pt.Failure("os.abort() after a survived assert, yet abort %r" % report["abort"])
        if any(l.startswith("Abort: ") for l in text.splitlines()) or "abort: " in summary[0]:
            raise pt.Failure("os.abort() after a survived assert, yet the text says an abort: %s" % summary[0])
        if not any("__abort_msg holds a message" in w for w in report["warnings"]):
            raise pt.Failure("no warning that the survived assert's message is not this crash's: %s"
                             % report["warnings"])
        return "the survived assert's message not taken"
    if kind.startswith("c++-"):
        return check_cxx(kind, err, report, text, summary)
    message = said(kind, err)
    # kept: 4096 bytes, less the start of a character they would split
    kept = cut(message, 4096)
    truncated = kept != message
    if truncated:
        message = kept[:-len("...")]
    ab = report["abort"]
    if ab is None:
        raise pt.Failure("abort null; the process said %r (warnings: %s)" % (message, report["warnings"]))
    if (ab["message"] != message or ab["source"] != "glibc" or ab["truncated"] != truncated or
            ab["exception_type"] is not None):
        raise pt.Failure("abort %r, the process said %r" % (ab, message))
    if report["summary"]["abort"] != message:
        raise pt.Failure("summary.abort %r, the process said %r" % (report["summary"]["abort"], message))
    if len(summary) != 1 or (', abort: "%s"' % cut(message, 200)) not in summary[0]:
        raise pt.Failure("the text's summary %r does not say the abort %r" % (summary, message))
    line = "Abort: %s%s (glibc's __abort_msg)" % (message, "... (cut at 4096 bytes)" if truncated else "")
    if line not in text.splitlines():
        raise pt.Failure("no text line %r" % line)
    return message if not truncated else "%d bytes of %d kept" % (len(message.encode()), len(said(kind, err).encode()))


def check_static(work):
    """A static executable holding glibc (gcc -static: its __abort_msg is
    in the executable's own .symtab), named like Python so that pycore
    reports it (without a Python state: a partial report)."""
    if not shutil.which("cc"):
        raise pt.Skip("no cc compiler (Debian package gcc)")
    exe = os.path.join(work, "python3-static-abort")
    b = subprocess.run(["cc", "-static", "-g", "-o", exe, os.path.join(pt.SCENARIOS, "abort_static.c")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b.returncode != 0:
        raise pt.Skip("cannot link statically (libc6-dev's libc.a): %s" % b.stdout.decode("utf-8", "replace")[-200:])
    pattern, why = pt.kernel_core_usable()
    if why:
        raise pt.Skip(why)

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    p = subprocess.Popen([exe], cwd=work, preexec_fn=unlimited, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = p.communicate(timeout=scaled(60))
    if p.returncode != -signal.SIGABRT:
        raise pt.Failure("the static program ended with %s, not SIGABRT" % p.returncode)
    core = pt.kernel_core_path(pattern, p.pid, work)
    if not os.path.exists(core):
        raise pt.Skip("the kernel wrote no core (%s; is ulimit -c limited by a hard limit?)" % core)
    lines = [l for l in err.decode("utf-8", "replace").splitlines() if "Assertion `n_items > 0' failed." in l]
    if len(lines) != 1:
        raise pt.Failure("stderr holds no one assert line: %r" % err[-300:])
    rc, out, err = pt.run_pycore(["analyze", "--format", "json", core])
    if rc not in (0, 1):
        raise pt.Failure("pycore exit %d: %s" % (rc, err.strip()))
    ab = pt.load_report(out)["abort"]
    if not ab or ab["message"] != lines[0] or ab["source"] != "glibc":
        raise pt.Failure("abort %r, the process said %r" % (ab, lines[0]))
    return lines[0]


def main():
    tap = pt.TAP()
    work = tempfile.mkdtemp(prefix="pycore-abort-static-")
    pt.run_in(tap, "a static executable holding glibc: assert", work, check_static, work)
    for name in NAMES:
        target, why = pt.find(name)
        for kind in KINDS:
            for faulthandler in (False, True):
                label = "%s %s%s" % (name, kind, " -X faulthandler" if faulthandler else "")
                if why:
                    tap.skip(label, why)
                    continue
                work = target.workdir("pycore-abort-%s-" % name)
                pt.run_in(tap, label, work, check, target, work, kind, faulthandler)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
