"""Crashes below Python as a C engineer reads them (issue 49): real crashes
of scenarios/crashes.py on several builds, each with and without
faulthandler, read by pycore and by gdb on the same core with the same
files.

The scenarios (crashes.py says how each crashes; crashlib.c and
crashcxx.cpp are built here with gcc/g++ -g and loaded with ctypes): a
fault inside libpython (Py_DecRef(16)), Py_FatalError, an assert, a double
free, a stack protector failure, an uncaught C++ exception, SIGFPE, SIGILL
in anonymous executable memory, SIGBUS on a truncated mapped file, Python
-> qsort -> a Python callback -> a fault in C, a C stack overflow, a fault
in a thread while another holds the GIL, numpy's copy of an array with
a bad stride (where the interpreter has numpy: Debian's), and kill -SEGV
from another process (the sender, a process started here).  All but the two that
crash in a thread of their own make their last call from one line of one
Python function, so that the Python frames alone cannot tell them apart.

Builds: BUILDS below (Debian's python3.11 with its debug file, pyenv's
3.10 to 3.13, the Debian unstable root's 3.14, musl's 3.12 and 3.13 and
3.13 linked without a build-id, which are skips by name until
scripts/musl-python has built them).  A scenario an interpreter cannot
have (no numpy) is a skip by name.
PYCORE_QUICK=1 runs QUICK_BUILDS only, the sanitizer pass those of
pycoretest.interpreters' SANITIZER_PASS_NAMES and _BUILT; PYCORE_BUILDS=a,b
and PYCORE_SCENARIOS=x,y pick others.

Truth: the process writes its pid, the crashing thread's OS id, the
address or message it chose (crashes.py) before it crashes; its standard
error is captured (the words glibc, libstdc++ or CPython printed); the
kernel's exit status gives the signal; the sender's pid is the sender's.
gdb (`thread apply all bt` through its Python API, pycoretest.native's
gdb_cores: one gdb run reads every core of a build, with ulimit -c 0 and
the interpreter's auto-loaded pretty-printers off) is the truth for native
frames and their arguments, and for the core's own siginfo note.

One TAP result per build x scenario x faulthandler off/on x check:

  frames       pycore analyze --native --format json: the crashing
               thread's innermost native frame is gdb's #0 (names compared
               after normalising .cold/.constprop/.isra/.part suffixes and
               glibc's __GI_ prefix; two names that the module's symbol
               tables put at one address are the same; "??" only against
               "??"), the frames from #0 to the first Python frame are
               gdb's, in order (the tail-call frames gdb infers included,
               pycore's marked "tail_call"; the eval loop's frame that
               runs the first Python frame ends the range on both sides),
               and no frame pycore names anywhere in that thread has
               another name in gdb at the same address; where gdb's
               unwind never reaches the eval loop (musl's libc has no call
               frame information: past raise() gdb reads stack words as
               frames) the range is a skip saying so, the innermost frame
               and the frames named at one address still checked
  site         the text report's Summary line names the crash site: the
               innermost frame, or for a signal caught by a handler that
               re-raised it (faulthandler) the first frame under the
               handler's signal frame; its address where gdb has no name;
               where gdb does not unwind through the handler (musl), the
               site gdb names for the same scenario without faulthandler
  fingerprint  (JSON .fingerprint.hash, --native and plain) no other
               scenario on this build has it (plain: unless the two plain
               reports differ in nothing, neither with the abort's words,
               and their --native fingerprints do: doc/fingerprints.md's
               native frame needs --native); with faulthandler it is the
               one without; on a second build of one version (pyenv's 3.11
               and Debian's, shared and linked-in libpython) the first
               build's
  facts        the signal is the one the process died of, in the thread
               that crashed; a fault address only where there was a fault,
               and then the one the process chose (for SIGFPE the faulting
               instruction's, gdb's pc where gdb reaches it; else the
               core's siginfo's), stated
               wherever the dump proves it (a siginfo the kernel wrote, or
               a handler's saved state: cr2, the faulting pc); a signal
               code only as the core's siginfo says it (gdb's $_siginfo
               of the same core, or of the same scenario without
               faulthandler); a sender only the test's sender or the
               process itself (its own tkill), never another pid: an
               unwritten siginfo never stated as fact
  abort        (where the JSON has "abort") its message is text the
               process printed on standard error, and holds the words it
               chose; the text's summary (before the first thread) has
               it; no message where nothing aborted; on musl, which keeps
               none, a skip saying so
  fault-kind   (where the JSON has "fault_kind") the kind is the
               scenario's class's (KINDS), with the sender's pid for a
               signal sent, the offset the process read for a NULL
               dereference
  args         (where pycore's native frames have "args") each frame's
               arguments from #0 to the first Python frame are gdb's:
               names in order, values as gdb prints them, a char
               pointer's string; where one side says less (pycore
               "optimized out" in an outer frame, where gdb guesses a
               caller-saved register unchanged, or in a frame whose
               caller gdb reaches through a tail-call frame it infers and
               takes the entry value from, a tail-call frame's own, which
               pycore does not show, gdb "<optimized out>" where
               pycore resolves an entry value, a value pycore locates but
               does not print) the result lists it as not verifiable

A field the JSON does not have yet is a skip naming it.  The cores are
made two at a time; gdb reads each once for every thread.

Prints TAP lines; exit 0 pass, 1 fail."""
import concurrent.futures
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pycoretest as pt
from pycoretest import interpreters
from pycoretest import native as gdb_native
from pycoretest.env import scaled

BUILDS = ("debian3.11", "py3.10", "py3.11", "py3.12", "py3.13", "sid3.14", "musl3.12", "musl3.13",
          "musl3.13-nobuildid")
QUICK_BUILDS = ("debian3.11", "py3.12")
# builds of one version whose fingerprints must agree: the second against the first
TWINS = {"py3.11": "debian3.11", "musl3.12": "py3.12", "musl3.13": "py3.13", "musl3.13-nobuildid": "musl3.13"}
MODES = (("plain", []), ("faulthandler", ["-X", "faulthandler"]))
CHECKS = ("frames", "site", "fingerprint", "facts", "abort", "fault-kind", "args")

# name, the signal it dies of, the test's libraries it loads, its class
SCENARIOS = (
    ("py_decref", signal.SIGSEGV, (), "null"),
    ("fatal_error", signal.SIGABRT, (), "abort"),
    ("assert", signal.SIGABRT, ("crashlib",), "abort"),
    ("double_free", signal.SIGABRT, (), "abort"),
    ("stack_smash", signal.SIGABRT, ("crashlib",), "abort"),
    ("cxx_throw", signal.SIGABRT, ("crashcxx",), "abort"),
    ("sigfpe", signal.SIGFPE, ("crashlib",), "divide"),
    ("sigill", signal.SIGILL, (), "illegal"),
    ("sigbus", signal.SIGBUS, (), "bus"),
    ("callback", signal.SIGSEGV, (), "null"),
    ("stack_overflow", signal.SIGSEGV, (), "overflow"),
    ("thread_nogil", signal.SIGSEGV, ("crashlib",), "null"),
    ("numpy_stride", signal.SIGSEGV, (), "wild"),
    ("kill_segv", signal.SIGSEGV, (), "sent"),
)
# The fault kinds (fault_kind.kind) each class may be named: its own, and
# for a signal another process sent, "unrecorded" where faulthandler's
# handler (no SA_SIGINFO) left the sender unwritten.  A kind of another
# class is always wrong.
KINDS = {
    "null": {"null-dereference"},
    "abort": {"abort"},
    "overflow": {"stack-overflow"},
    "bus": {"sigbus-past-eof"},
    "divide": {"divide-by-zero"},
    "illegal": {"illegal-instruction-anonymous"},
    "sent": {"signal-sent"},
    # an address far from every mapping: no kind the dump proves, or
    # near one by chance
    "wild": {None, "unmapped-near"},
}
SENT_WITH_HANDLER = {"signal-sent", "unrecorded"}
# musl's malloc and stack protector end a process with a trap of their
# own (a_crash), not abort(): there the signal the process died of is the
# truth, and no class is asserted
MUSL_OWN_CRASH = ("double_free", "stack_smash")
LIBRARIES = {"crashlib": ("cc", "libcrashlib.so", "crashlib.c", ["-fstack-protector-all"]),
             "crashcxx": ("c++", "libcrashcxx.so", "crashcxx.cpp", [])}
EVAL = re.compile(r"^_?PyEval_EvalFrameDefault$")


# ---------------------------------------------------------------------------
# names as gdb and pycore write them

def norm(name):
    """A function's name without the decorations compilers and glibc add:
    GCC's clone suffixes (.cold, .constprop.N, .isra.N, .part.N,
    .lto_priv.N), glibc's internal __GI_ prefix, a C++ parameter list; None
    and "" are "??"."""
    if not name:
        return "??"
    name = re.sub(r"\((.*)\)( const)?$", "", name) if "::" in name else name
    name = re.sub(r"(\.(cold|constprop|isra|part|lto_priv|localalias)(\.\d+)?)+$", "", name)
    while name.startswith("__GI_"):
        name = name[len("__GI_"):]
    return name


_symbols = {}


def build_id(path):
    r = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout.decode("utf-8", "replace"))
    return m.group(1) if m else None


def symbols(path, debug_roots):
    """name -> set of addresses, from PATH's symbol tables (.dynsym,
    .symtab) and its separate debug file's (by build-id, under each of
    DEBUG_ROOTS)."""
    if path in _symbols:
        return _symbols[path]
    table = {}
    files = [path]
    bid = build_id(path) if os.path.exists(path) else None
    for d in debug_roots:
        if bid:
            dbg = os.path.join(d, ".build-id", bid[:2], bid[2:] + ".debug")
            if os.path.exists(dbg):
                files.append(dbg)
    for f in files:
        for opt in (["-D"], []):
            r = subprocess.run(["nm", "--defined-only"] + opt + [f], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
            for line in r.stdout.decode("utf-8", "replace").splitlines():
                parts = line.split()
                if len(parts) == 3:
                    table.setdefault(norm(parts[2].split("@")[0]), set()).add(int(parts[0], 16))
    _symbols[path] = table
    return table


def same_name(a, b, module, debug_roots):
    """A (pycore's) and B (gdb's) name one function: equal once
    normalised, or two names of one address in MODULE's symbol tables."""
    a, b = norm(a), norm(b)
    if a == b:
        return True
    if "??" in (a, b) or not module:
        return False
    table = symbols(module, debug_roots)
    return bool(table.get(a, set()) & table.get(b, set()))


# ---------------------------------------------------------------------------
# frames

def gdb_range(frames):
    """gdb's frames from #0 to the first Python frame, the range ended by
    the first physical frame of the eval loop (with the calls gdb shows
    inlined into it).  Returns (frames, the tail-call frames gdb inferred
    among all, all frames).  A frame whose caller gdb reached through a
    tail-call frame it inferred is marked "via_tail"."""
    group = []
    for k, f in enumerate(frames):
        if f["kind"] == "tailcall":
            continue
        group.append(f)
        if f["kind"] != "inline":
            via = k + 1 < len(frames) and frames[k + 1]["kind"] == "tailcall"
            for g in group:
                g["via_tail"] = via
            group = []
    real = list(frames)
    tails = [f for f in frames if f["kind"] == "tailcall"]
    out, group = [], []
    for f in real:
        if f["kind"] == "error":
            break
        group.append(f)
        if f["kind"] == "inline":
            continue
        if EVAL.match(norm(f["name"])):
            if not out:
                out.extend(group)   # the crash is in the eval loop itself: #0 is its frame
            return out, tails, real
        out.extend(group)
        group = []
    return out + group, tails, real


def pycore_range(thread):
    """pycore's native frames from the innermost to the first Python frame
    (or another frame that is not native), less a trailing eval loop frame
    (with its inlined calls: one address) that runs that Python frame."""
    out = []
    for f in thread["frames"]:
        if f["kind"] != "native":
            break
        out.append(f)
    while out:
        addr = out[-1]["address"]
        group = [f for f in out if f["address"] == addr]
        if not EVAL.match(norm(group[-1]["function"])) or len(group) == len(out):
            break   # (the whole range: the crash is in the eval loop itself)
        out = out[:len(out) - len(group)]
    return out


def module_of(gframe, target):
    so = gframe.get("solib")
    return so if so else target.host_exe()


def debug_roots(target):
    return [target.root + ".debug/usr/lib/debug"] if target.root else ["/usr/lib/debug"]


def names(frames, key):
    return [norm(f[key]) for f in frames]


def crashed_thread(report, tid):
    for t in [t for i in report["interpreters"] for t in i["threads"]] + report.get("native_threads", []):
        if t.get("tid") == tid:
            return t
    return None


def gdb_thread(gdb, tid):
    for t in gdb["threads"]:
        if t["tid"] == tid:
            return t["frames"]
    return None


def gdb_lost(gframes):
    """Whether gdb's unwind does not reach the eval loop (a C library
    without call frame information, musl's: past its first frames gdb
    reads stack words as frames)."""
    _, _, real = gdb_range(gframes)
    for f in real:
        if f["kind"] == "error":
            break
        if EVAL.match(norm(f["name"])):
            return False
    return True


def check_frames(case):
    target, truth, report, gdb = case["target"], case["truth"], case["report"], case["gdb"]
    thread = crashed_thread(report, truth["tid"])
    if thread is None:
        raise pt.Failure("no thread %d (the one that crashed) in pycore's report" % truth["tid"])
    gframes = gdb_thread(gdb, truth["tid"])
    if not gframes:
        raise pt.Failure("gdb has no frames for thread %d" % truth["tid"])
    theirs, tails, real = gdb_range(gframes)
    mine = pycore_range(thread)
    roots = debug_roots(target)
    problems = []
    lost = gdb_lost(gframes)
    if not mine:
        problems.append("pycore's innermost frame is not native (%s), gdb's #0 is %s"
                        % (thread["frames"][0]["kind"] if thread["frames"] else "none", norm(real[0]["name"])))
    elif not same_name(mine[0]["function"], real[0]["name"], module_of(real[0], target), roots):
        problems.append("innermost frame %s, gdb's #0 %s" % (norm(mine[0]["function"]), norm(real[0]["name"])))
    if not lost and (len(mine) != len(theirs) or
                     not all(same_name(m["function"], g["name"], module_of(g, target), roots)
                             for m, g in zip(mine, theirs))):
        problems.append("frames to the first Python frame:\n  pycore %s\n  gdb    %s"
                        % (names(mine, "function"), names(theirs, "name")))
    # every frame pycore names, anywhere in the thread, is gdb's name at
    # that address (inlined calls: the same position in the address's run
    # of frames; a recursion has many runs at one address, all alike)
    by_pc = {}
    for pc, gs in runs(real, lambda g: g.get("pc")):
        by_pc.setdefault(pc, gs)
    mine_runs = runs([f for f in thread["frames"] if f["kind"] == "native" and f.get("address")],
                     lambda f: int(f["address"], 16))
    for pc, fs in mine_runs:
        gs = by_pc.get(pc)
        if not gs:
            continue
        for f, g in zip(reversed(fs), reversed(gs)):
            if f["function"] and not same_name(f["function"], g["name"], module_of(g, target), roots):
                problems.append("at 0x%x pycore names %s, gdb %s" % (pc, norm(f["function"]), norm(g["name"])))
    note = "; with the tail-call frames gdb infers: %s" % ", ".join(norm(t["name"]) for t in tails) if tails else ""
    if problems:
        raise pt.Failure("\n".join(problems) + ("\n" + note[2:] if note else ""))
    if lost:
        # what gdb has agrees (#0, each address both name): the rest has no oracle
        raise pt.Skip("gdb's unwind does not reach the eval loop (the C library has no call frame "
                      "information): no truth for pycore's %d frames to the first Python frame; the innermost "
                      "and every frame gdb names at an address pycore has agree" % len(mine))
    return "%d frames to the first Python frame = gdb's (#0 %s)%s" % (len(theirs), norm(real[0]["name"]), note)


def runs(frames, pc_of):
    """FRAMES as runs of consecutive frames at one address: (pc, frames)."""
    out = []
    for f in frames:
        pc = pc_of(f)
        if pc is None:
            continue
        if out and out[-1][0] == pc:
            out[-1][1].append(f)
        else:
            out.append((pc, [f]))
    return out


def site_frame(gframes):
    """gdb's crash site: #0, or the first frame under the last signal frame
    (a handler that re-raised: faulthandler)."""
    _, _, real = gdb_range(gframes)
    if not real:
        raise pt.Failure("gdb has no frames for the crashed thread")
    at = [k for k, f in enumerate(real) if f["kind"] == "sigtramp"]
    if at and at[-1] + 1 < len(real):
        return real[at[-1] + 1]
    return real[0]


def check_site(case, plain_case):
    target, truth, text, gdb = case["target"], case["truth"], case["text"], case["gdb"]
    lines = [l for l in text.splitlines() if l.startswith("Summary:")]
    if not lines:
        raise pt.Failure("no Summary: line in the text report")
    summary = lines[0]
    gframes = gdb_thread(gdb, truth["tid"]) or []
    site = site_frame(gframes)
    said = ""
    if case["mode"] != "plain" and gdb_lost(gframes) and not any(f["kind"] == "sigtramp" for f in gframes):
        # gdb stops inside the handler's raise(): the same scenario
        # without the handler died where it faulted, gdb's #0 there
        if not plain_case:
            raise pt.Skip("gdb's unwind ends inside the handler (no call frame information in the C library) "
                          "and the same scenario without the handler made no case to compare")
        site = site_frame(gdb_thread(plain_case["gdb"], plain_case["truth"]["tid"]) or [])
        said = " (gdb's, on the same crash without faulthandler: gdb does not unwind through the handler here)"
        if norm(site["name"]) == "??":
            raise pt.Skip("gdb's unwind ends inside the handler, and without the handler gdb names no crash "
                          "site either (an address of another process)")
    name = norm(site["name"])
    if name == "??":
        if ("0x%x" % site["pc"]) not in summary:
            raise pt.Failure("gdb has no name for the crash site 0x%x; the summary does not give that address: %s"
                             % (site["pc"], summary))
        return "0x%x (no name in gdb either)" % site["pc"]
    words = set(re.findall(r"[A-Za-z_][\w:.~<>]*", summary))
    if not any(same_name(w, site["name"], module_of(site, target), debug_roots(target)) for w in words):
        raise pt.Failure("the summary does not name the crash site %s (gdb%s): %s" % (name, said, summary))
    return name + said


# ---------------------------------------------------------------------------
# facts: signal, code, address, sender

def stated(report):
    """What the report states of the signal: process.signal (the core's
    note) and process.fault (a handler's frame), each a dict or None."""
    p = report["process"]
    return p.get("signal"), p.get("fault")


def expected_address(case):
    """The fault address the report must state, and who says so: the
    address the process chose; for SIGFPE the faulting instruction's (gdb's
    pc where the fault interrupted the thread); else the core's own
    siginfo where the kernel wrote one for a fault (code > 0, no handler
    ran: plain); else (None, why) -- unknown here, any address accepted."""
    truth, gdb = case["truth"], case["gdb"]
    if "address" in truth:
        return truth["address"], "chosen by the process"
    if case["signo"] in (signal.SIGFPE, signal.SIGILL):
        gframes = gdb_thread(gdb, truth["tid"]) or []
        if case["mode"] != "plain" and gdb_lost(gframes) and not any(f["kind"] == "sigtramp" for f in gframes):
            return None, "unknown: gdb does not unwind through the handler here"
        return site_frame(gframes)["pc"], "the faulting instruction, gdb's pc"
    si = gdb.get("siginfo") or {}
    # (a fault's codes: 1 up to SI_KERNEL, 0x80, whose address is no fault's)
    if case["mode"] == "plain" and 0 < (si.get("code") or 0) < 0x80 and si.get("signo") == case["signo"]:
        return si.get("addr"), "the core's siginfo, gdb's $_siginfo"
    return None, "unknown"


def check_facts(case, plain_case):
    truth, report, gdb, text = case["truth"], case["report"], case["gdb"], case["text"]
    signo, problems = case["signo"], []
    sig, fault = stated(report)
    eff = fault or sig
    if not eff or eff.get("number") != signo:
        problems.append("signal %s, the process died of %s" % (eff and eff.get("number"), signal.Signals(signo).name))
    if report["summary"].get("thread") != truth["tid"]:
        problems.append("the summary names thread %s, thread %d crashed" % (report["summary"].get("thread"),
                                                                             truth["tid"]))
    want, want_why = expected_address(case)
    if case["cls"] in ("abort", "sent"):
        for what in (sig, fault):
            if what and what.get("address") is not None:
                problems.append("a fault address %s, but nothing faulted (%s)" % (what["address"], case["scenario"]))
        if re.search(r"fault address", report["summary"]["text"]):
            problems.append("the summary states a fault address: %s" % report["summary"]["text"])
    elif want is not None and (not eff or eff.get("address") != "0x%x" % want):
        problems.append("fault address %s, the fault's was 0x%x (%s)" % (eff and eff.get("address"), want, want_why))
    # the code: the core's note says it (gdb reads the same note); a
    # handler's frame only what the same scenario's own fault said
    si = gdb.get("siginfo") or {}
    if sig and sig.get("code") is not None and si.get("code") is not None and sig["code"] != si["code"]:
        problems.append("signal code %s, the core's siginfo (gdb) %s" % (sig["code"], si["code"]))
    if fault and fault.get("code") is not None:
        want = plain_case and (plain_case["gdb"].get("siginfo") or {}).get("code")
        if case["mode"] == "plain":
            want = si.get("code")
        if want is None or fault["code"] != want:
            problems.append("fault code %s, the fault's own siginfo %s" % (fault["code"], want))
    allowed = {truth["pid"]} | ({case["sender"]} if case.get("sender") else set())
    for what in (sig, fault):
        if what and what.get("sender_pid") is not None and what["sender_pid"] not in allowed:
            problems.append("sender pid %s; only %s could have sent it" % (what["sender_pid"], sorted(allowed)))
        if what and what.get("sender_uid") is not None and what["sender_uid"] != truth["uid"]:
            problems.append("sender uid %s, every process here ran as %d" % (what["sender_uid"], truth["uid"]))
    for pid in re.findall(r"sent by pid (\d+)", text):
        if int(pid) not in allowed:
            problems.append("the text says sent by pid %s; only %s could have sent it" % (pid, sorted(allowed)))
    if case.get("sender") and case["mode"] == "plain" and (not sig or sig.get("sender_pid") != case["sender"]):
        problems.append("sender %s; the core's siginfo holds the sender's pid %d" % (sig and sig.get("sender_pid"),
                                                                                    case["sender"]))
    if problems:
        raise pt.Failure("\n".join(problems))
    return eff["name"] + (" at %s" % eff["address"] if eff.get("address") else "") + \
        (" from pid %d" % case["sender"] if case.get("sender") else "")


# ---------------------------------------------------------------------------
# fields issue 49 adds: checked where present, skipped by name where not

def field(report, name):
    """REPORT's field NAME at the top, in the summary or in the process
    (wherever the engineer who adds it puts it); (present, value)."""
    for where in (report, report.get("summary") or {}, report.get("process") or {}):
        if name in where:
            return True, where[name]
    return False, None


def flat(text):
    return " ".join(text.split())


def check_abort(case):
    present, abort = field(case["report"], "abort")
    if not present:
        raise pt.Skip("no \"abort\" in this pycore's JSON (issue 49: the abort's own words)")
    msg = abort.get("message") if isinstance(abort, dict) else None
    if case["signo"] != signal.SIGABRT or case["scenario"] == "kill_segv":
        if msg:
            raise pt.Failure("an abort message %r, but nothing aborted" % msg)
        return "no message: nothing aborted"
    if not msg and case["build"].startswith("musl"):
        raise pt.Skip("musl keeps no abort message (it printed: %s)" % flat(case["stderr"])[:200])
    if not msg:
        raise pt.Failure("no abort message; the process printed: %s" % flat(case["stderr"])[:300])
    if flat(msg) not in flat(case["stderr"]):
        raise pt.Failure("abort message %r is not what the process printed: %s" % (msg, flat(case["stderr"])[:400]))
    chosen = case["truth"].get("message")
    if chosen and chosen not in msg:
        raise pt.Failure("abort message %r lacks the words the process chose, %r" % (msg, chosen))
    # the text's summary: its lines before the first thread
    head = case["text"].split("\nThread ")[0]
    if flat(msg)[:60] not in flat(head):
        raise pt.Failure("the text's summary does not hold the message %r" % msg)
    return repr(msg)


def check_fault_kind(case):
    present, kind = field(case["report"], "fault_kind")
    if not present:
        raise pt.Skip("no \"fault_kind\" in this pycore's JSON (issue 49: the fault named)")
    name = kind.get("kind") if isinstance(kind, dict) else None
    own = case["cls"]
    if own is None:
        raise pt.Skip("%s on %s: the C library's own trap, no class asserted (named %s)"
                      % (case["scenario"], case["build"], name))
    want = KINDS[own] if not (own == "sent" and case["mode"] != "plain") else SENT_WITH_HANDLER
    if name not in want:
        others = [c for c, kinds in KINDS.items() if name in kinds]
        raise pt.Failure("fault kind %s%s; the %s class is %s" % (
            name, " (the kind of %s faults)" % others[0] if others else "", own, " or ".join(sorted(want))))
    if name == "signal-sent" and kind.get("sender_pid") not in (None, case.get("sender")):
        raise pt.Failure("signal-sent by pid %s; the sender was %s" % (kind.get("sender_pid"), case.get("sender")))
    if name == "null-dereference" and "address" in case["truth"] and kind.get("offset") is not None and \
            kind["offset"] != case["truth"]["address"]:
        raise pt.Failure("NULL + %s; the process read 0x%x" % (kind["offset"], case["truth"]["address"]))
    return name


def same_arg(a, theirs):
    """pycore's argument A (the JSON's native-arg) against gdb's printed
    THEIRS: "same", "differs: why", or "unverifiable: why" (one side says
    less than the other, in ways gdb and pycore legitimately part:
    gdb's values through the tail-call frames it infers and its guess that
    a caller-saved register is unchanged in an outer frame, entry values
    gdb does not resolve, values pycore locates but does not print)."""
    if isinstance(a, dict) and "optimized_out" in a:
        optimized, value, string = a["optimized_out"], a.get("value"), a.get("string")
        truncated = a.get("string_truncated")
    else:  # another shape: its text
        value = a.get("value") if isinstance(a, dict) else a
        optimized, string, truncated = value is not None and "optimized out" in str(value), None, False
    if optimized:
        return "same" if theirs == "<optimized out>" else "unverifiable: optimized out, gdb %s" % theirs
    if value is None:
        return "unverifiable: not printed (%s), gdb %s" % (a.get("unavailable") if isinstance(a, dict) else "", theirs)
    if theirs == "<optimized out>":
        return "unverifiable: %s, gdb <optimized out>" % value
    value = str(value)
    if theirs != value and not theirs.startswith(value + " "):
        return "differs: %s, gdb %s" % (value, theirs)
    if string is not None:
        q = gdb_native.c_quoted(string)
        # gdb: the pointer, the symbol it points into if any, the string
        printed = re.sub(r"^(\S+) <[^>]*>", r"\1", theirs)
        if q and printed != value + " " + q + ("..." if truncated else ""):
            return "differs: string %r, gdb %s" % (string, theirs)
    return "same"


def check_args(case):
    truth, report, gdb = case["truth"], case["report"], case["gdb"]
    thread = crashed_thread(report, truth["tid"])
    if thread is None:
        raise pt.Failure("no thread %d in pycore's report" % truth["tid"])
    if not any("args" in f for f in thread["frames"] if f["kind"] == "native"):
        raise pt.Skip("no \"args\" in this pycore's native frames (issue 49: native frames' arguments)")
    mine = pycore_range(thread)
    theirs, _, _ = gdb_range(gdb_thread(gdb, truth["tid"]))
    # pair gdb's frames with pycore's: a physical frame by its address, an
    # inlined call by its name among the calls at that address
    problems, compared, unverifiable, missing = [], 0, [], []
    innermost, seen = True, {}
    for g in theirs:
        same_pc = [f for f in mine if f.get("address") and int(f["address"], 16) == g["pc"]]
        # the k-th call of one name at one address is the k-th (a function
        # inlined into itself, or into its own out-of-line copy)
        k = seen[(g["pc"], norm(g["name"]))] = seen.get((g["pc"], norm(g["name"])), -1) + 1
        f = [f for f in same_pc if norm(f["function"]) == norm(g["name"])][k:k + 1] or \
            ([same_pc[-1]] if same_pc and g["kind"] != "inline" else [])
        if g.get("args") and not f:
            missing.append(norm(g["name"]))
        if f and g.get("args") and g["kind"] == "tailcall" and f[0].get("args") is None:
            # a tail-call frame has no frame to read: gdb's values are entry
            # values through the chain it inferred, pycore shows none
            unverifiable.append("%s: tail-call frame, gdb %s" % (norm(g["name"]), g["args"]))
        elif f and g.get("args"):
            margs = f[0].get("args")
            if margs is None:
                problems.append("%s: no arguments, gdb's %s" % (norm(g["name"]), g["args"]))
            else:
                mnames = [x.get("name") if isinstance(x, dict) else None for x in margs]
                if mnames != [n for n, _ in g["args"]]:
                    problems.append("%s: arguments %s, gdb's %s" % (norm(g["name"]), mnames, [n for n, _ in g["args"]]))
                else:
                    for x, (n, v) in zip(margs, g["args"]):
                        said = same_arg(x, v)
                        if said == "same":
                            compared += 1
                        elif said.startswith("differs") or (innermost and not g.get("via_tail") and
                                                            "optimized out, gdb" in said):
                            problems.append("%s: %s %s" % (norm(g["name"]), n, said.split(": ", 1)[1]))
                        else:
                            unverifiable.append("%s: %s %s" % (norm(g["name"]), n, said.split(": ", 1)[1]))
        if g["kind"] != "inline":
            innermost = False
    if problems:
        raise pt.Failure("\n".join(problems))
    return "%d arguments = gdb's%s%s" % (
        compared, "; not verifiable: %s" % "; ".join(unverifiable) if unverifiable else "",
        "; gdb's frames with arguments not among pycore's (see frames): %s" % ", ".join(missing) if missing else "")


def unnamed_native(case):
    """Whether CASE's crashed thread has a native frame without a name
    before its first Python frame (its fingerprint then may have none)."""
    thread = crashed_thread(case["report"], case["truth"]["tid"]) or {"frames": []}
    return any(not f["function"] for f in pycore_range(thread))


def builds_differ(case, twin, key):
    """Where CASE's and its TWIN's KEY fingerprints differ only in what
    their builds make of one crash: the native frame when it is the C
    library's own function and the libraries differ (musl, glibc), the
    abort's words musl does not keep, or a native frame one side names
    where the other's has no symbol (Debian's stripped libffi, the one
    built into musl's _ctypes): what differs; else None."""
    a, b = case["fingerprints"][key], twin["fingerprints"][key]
    libcs = case["build"].startswith("musl") != twin["build"].startswith("musl")
    what = []
    # one scenario: the Python frames are the same, a native frame last
    fa, fb = a["frames"], b["frames"]
    k = 0
    while k < min(len(fa), len(fb)) and fa[k] == fb[k]:
        k += 1
    na, nb = fa[k:], fb[k:]
    if a["kind"] != b["kind"] or len(na) > 1 or len(nb) > 1:
        return None
    if na != nb:
        if libcs and all(f.startswith("libc:") for f in na + nb):
            what.append("the C library's own function: %s" % ", ".join(na + nb))
        elif key == "native" and (not na and unnamed_native(case) or not nb and unnamed_native(twin)):
            what.append("%s where the other build's frame has no symbol" % ", ".join(na + nb))
        else:
            return None
    if a.get("message") != b.get("message"):
        if not (libcs and bool(a.get("message")) != bool(b.get("message"))):
            return None
        what.append("the abort's words, which musl does not keep")
    return "; ".join(what) or None


def check_fingerprint(case, build_cases, twin_cases):
    problems, said = [], []
    for key in ("native", "plain"):
        mine = case["prints"].get(key)
        if mine is None:
            problems.append("no %s fingerprint" % key)
            continue
        others = [c for c in build_cases
                  if c is not case and c.get("prints") and c["mode"] == case["mode"] and c["prints"].get(key) == mine]
        same = sorted(c["scenario"] for c in others)
        # without --native, a crash in C has no native frame in its
        # fingerprint (doc/fingerprints.md): crashes whose plain reports
        # differ in nothing else, none with the abort's words, share one,
        # and their native fingerprints tell them apart
        if same and key == "plain" and not case.get("plain_words") and \
                not any(c.get("plain_words") for c in others) and \
                all(c["prints"].get("native") != case["prints"].get("native") for c in others):
            said.append("plain = %s's (a difference in C only; --native tells them apart)" % ", ".join(same))
        elif same:
            problems.append("%s fingerprint %s shared with %s" % (key, mine, ", ".join(same)))
        if case["mode"] != "plain":
            plain = [c for c in build_cases if c["scenario"] == case["scenario"] and c["mode"] == "plain"
                     and c.get("prints")]
            if plain and plain[0]["prints"].get(key) != mine:
                problems.append("%s fingerprint %s with faulthandler, %s without"
                                % (key, mine, plain[0]["prints"].get(key)))
        if twin_cases is not None:
            twin = [c for c in twin_cases if c["scenario"] == case["scenario"] and c["mode"] == case["mode"]
                    and c.get("prints") and c["signo"] == case["signo"]]
            if twin and twin[0]["prints"].get(key) != mine and builds_differ(case, twin[0], key):
                said.append("%s = %s's but for what the builds differ in (%s)" % (key, twin[0]["build"],
                                                                      builds_differ(case, twin[0], key)))
            elif twin and twin[0]["prints"].get(key) != mine:
                problems.append("%s fingerprint %s, %s's %s" % (key, mine, twin[0]["build"],
                                                                twin[0]["prints"].get(key)))
            elif twin:
                said.append("= %s's" % twin[0]["build"])
    if problems:
        raise pt.Failure("\n".join(problems))
    return "%s%s" % (case["prints"]["native"], (" " + " ".join(sorted(set(said)))) if said else "")


# ---------------------------------------------------------------------------
# making the cores

def unlimited():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def build_libraries(target, name, base):
    """The test's libraries for TARGET in BASE: {library: None, or why it
    could not be built}."""
    out = {}
    musl = name.startswith("musl")
    for lib, (compiler, so, source, flags) in LIBRARIES.items():
        try:
            if musl and compiler == "c++":
                raise pt.Skip("no C++ runtime built for musl here")
            pt.compile_into(base, "musl-gcc" if musl else compiler, so, source, flags)
            out[lib] = None
        except (pt.Skip, pt.Failure) as e:
            out[lib] = str(e)
    return out


def environment(target):
    env = dict(target.env if target.env is not None else os.environ)
    for k in ("PYTHONFAULTHANDLER", "PYTHONDEVMODE", "PYTHONMALLOC"):
        env.pop(k, None)
    return env


def make_case(target, build, base, scenario, signo, cls, mode, pyargs, pattern, gdb_cache):
    """Crash SCENARIO once (MODE: with or without faulthandler), then read
    its core with gdb and pycore: a case dict (its "error": why there is
    none, a Skip or a Failure)."""
    case = {"target": target, "build": build, "scenario": scenario, "signo": signo, "cls": cls, "mode": mode}
    work = os.path.join(base, "%s-%s" % (scenario, mode))
    os.makedirs(work)
    truth_path = os.path.join(work, "truth.json")
    t0 = time.monotonic()
    proc = target.popen(pyargs + [target.scenario(base, "crashes.py"), target.inside(truth_path), scenario,
                                  target.inside(base)], work, preexec=unlimited, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, env=environment(target))
    try:
        if scenario == "kill_segv":
            if not pt.wait_ready(proc):
                raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
            time.sleep(0.3)  # into its sleep
            kill = shutil.which("kill") or "/bin/kill"
            sender = subprocess.Popen([kill, "-SEGV", str(proc.pid)])
            case["sender"] = sender.pid
            sender.wait()
        _, err = proc.communicate(timeout=scaled(60))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise pt.Failure("the scenario did not crash in time")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    case["stderr"] = err.decode("utf-8", "replace")
    case["time"] = {"crash": time.monotonic() - t0}
    if proc.returncode == 3:
        said = [l[len("cannot: "):] for l in case["stderr"].splitlines() if l.startswith("cannot: ")]
        raise pt.Skip(said[-1] if said else "the scenario cannot run here")
    if build.startswith("musl") and scenario in MUSL_OWN_CRASH and proc.returncode < 0:
        signo = case["signo"] = -proc.returncode
        case["cls"] = None
    if proc.returncode != -signo:
        raise pt.Failure("the scenario ended with %s, not %s: %s" % (proc.returncode, signal.Signals(signo).name,
                                                                    flat(case["stderr"])[-300:]))
    case["truth"] = json.load(open(truth_path))
    core = pt.kernel_core_path(pattern, proc.pid, work)
    if not os.path.exists(core):
        raise pt.Skip("the kernel wrote no core (%s)" % core)
    case["core"] = core
    t1 = time.monotonic()
    common = target.pycore_args() + gdb_native.debug_args(target) + [core]
    runs = {}
    for key, args in (("json", ["--native", "--format", "json"]), ("text", ["--native"]),
                      ("plain", ["--format", "json"])):
        rc, out, perr = pt.run_pycore(["analyze"] + args + common)
        if rc not in (0, 1):
            raise pt.Failure("pycore analyze %s: exit %d: %s" % (" ".join(args), rc, perr.strip()[-300:]))
        runs[key] = out
    case["time"]["pycore"] = time.monotonic() - t1
    case["report"] = pt.load_report(runs["json"])
    case["text"] = runs["text"]
    plain = pt.load_report(runs["plain"])
    case["prints"] = {"native": case["report"]["fingerprint"]["hash"], "plain": plain["fingerprint"]["hash"]}
    case["fingerprints"] = {"native": case["report"]["fingerprint"], "plain": plain["fingerprint"]}
    case["plain_words"] = (field(plain, "abort")[1] or {}).get("message")
    return case


# gdb reads every core with its own Python (pycoretest.native's script),
# not the interpreter's pretty-printers that python3.X-dbg installs for
# auto-loading: what it prints of an argument is then the same whichever
# packages are installed
GDB_OPTIONS = ["-iex", "set auto-load python-scripts off"]


def read_with_gdb(target, cases, gdb_cache):
    """gdb's frames of every case's core (one gdb run for the build), put
    in each case ("gdb"); a case gdb could not read gets an "error"."""
    t0 = time.monotonic()
    views = gdb_native.gdb_cores(target, [c["core"] for c in cases], extra=GDB_OPTIONS + [
        "-iex", "set index-cache directory " + gdb_cache, "-iex", "set index-cache enabled on"])
    for c in cases:
        view = views[c["core"]]
        if "error" in view:
            c["error"] = pt.Failure("gdb could not read the core: %s" % view["error"])
        else:
            c["gdb"] = view
        c["time"]["gdb"] = (time.monotonic() - t0) / len(cases)
        if os.environ.get("KEEP_CORES") != "1":
            os.unlink(c["core"])


def run_case(*args):
    try:
        return make_case(*args)
    except (pt.Skip, pt.Failure) as e:
        return {"error": e}
    except Exception as e:  # a bug of the test or a tool gone wrong: that case fails, the others go on
        import traceback
        return {"error": pt.Failure("%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))}


def picked(env, default, known):
    if os.environ.get(env):
        want = os.environ[env].split(",")
        return [w for w in known if w in want] + [w for w in want if w not in known]
    return list(default)


def main():
    tap = pt.TAP()
    quick = os.environ.get("PYCORE_QUICK") == "1"
    default = QUICK_BUILDS if quick else BUILDS
    if interpreters.sanitizer_pass():
        # one build of each frame walker it has, as the other checkers
        default = [b for b in BUILDS if b in interpreters.SANITIZER_PASS_NAMES + interpreters.SANITIZER_PASS_BUILT]
    builds = picked("PYCORE_BUILDS", default, BUILDS)
    scenarios = [s for s in SCENARIOS if s[0] in picked("PYCORE_SCENARIOS", [s[0] for s in SCENARIOS],
                                                         [s[0] for s in SCENARIOS])]
    missing = [tool for tool in ("gdb", "readelf", "nm") if not shutil.which(tool)]
    pattern, why = pt.kernel_core_usable()
    if missing or why:
        for build in builds:
            for s in scenarios:
                for mode, _ in MODES:
                    for check in CHECKS:
                        tap.skip("%s %s %s %s" % (build, s[0], mode, check),
                                 why or "%s not installed (Debian packages gdb, binutils)" % ", ".join(missing))
        return tap.done()
    started = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="pycore-crashes-")
    gdb_cache = os.path.join(scratch, "gdb-index")
    os.makedirs(gdb_cache)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    plan, bases = [], []
    for build in builds:
        target, why = interpreters.find(build)
        if why:
            plan.append((build, None, why))
            continue
        base = target.workdir("pycore-crashes-%s-" % build)
        bases.append(base)
        libs = build_libraries(target, build, base)
        futures = {}
        for name, signo, needs, cls in scenarios:
            for mode, pyargs in MODES:
                lack = [libs[n] for n in needs if libs.get(n)]
                if lack:
                    futures[(name, mode)] = lack[0]
                    continue
                futures[(name, mode)] = pool.submit(run_case, target, build, base, name, signo, cls, mode, pyargs,
                                                    pattern, gdb_cache)
        plan.append((build, futures, None))
    results, failed = {}, {}
    try:
        for build, futures, why in plan:
            if why:
                for s in scenarios:
                    for mode, _ in MODES:
                        for check in CHECKS:
                            tap.skip("%s %s %s %s" % (build, s[0], mode, check), why)
                continue
            cases = {}
            for key, fut in futures.items():
                cases[key] = fut.result() if not isinstance(fut, str) else {"error": pt.Skip(fut)}
            made = [c for c in cases.values() if "error" not in c]
            if made:
                read_with_gdb(made[0]["target"], made, gdb_cache)
            results[build] = [c for c in cases.values() if "error" not in c]
            twin = results.get(TWINS.get(build))
            for name, signo, needs, cls in scenarios:
                for mode, _ in MODES:
                    case = cases[(name, mode)]
                    label = "%s %s %s" % (build, name, mode)
                    if "error" in case:
                        for check in CHECKS:
                            if isinstance(case["error"], pt.Skip):
                                tap.skip("%s %s" % (label, check), case["error"])
                            else:
                                tap.not_ok("%s %s" % (label, check), "no case: %s" % case["error"])
                        continue
                    plain = cases.get((name, "plain"))
                    plain = plain if plain and "error" not in plain else None
                    for check, fn, args in (("frames", check_frames, ()), ("site", check_site, (plain,)),
                                            ("fingerprint", check_fingerprint, (results[build], twin)),
                                            ("facts", check_facts, (plain,)), ("abort", check_abort, ()),
                                            ("fault-kind", check_fault_kind, ()), ("args", check_args, ())):
                        before = tap.failed
                        tap.run("%s %s" % (label, check), fn, case, *args)
                        if tap.failed > before:
                            failed[check] = failed.get(check, 0) + 1
    finally:
        pool.shutdown(wait=True)
        for base in bases:
            pt.drop_scratch(tap, base)
        shutil.rmtree(scratch, ignore_errors=True)
    spent = {}
    for cases in results.values():
        for c in cases:
            for k, v in c["time"].items():
                spent[k] = spent.get(k, 0) + v
    if failed:
        tap.diag("failed, by check: %s" % ", ".join("%s %d" % kv for kv in sorted(failed.items())))
    tap.diag("%d builds in %.0f s (summed over the cases: %s)" % (
        len(builds), time.monotonic() - started, ", ".join("%s %.0f s" % kv for kv in sorted(spent.items()))))
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
