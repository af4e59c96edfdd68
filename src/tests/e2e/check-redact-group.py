"""--redact over a real core, and pycore group over a batch of real crashes.

Redaction: the secrets scenario (src/tests/e2e/scenarios/redact_secrets.py; not
secrets.py, which would shadow the standard library's module for every
scenario, numpy's imports among them) on the newest pyenv interpreter, a gcore snapshot with --locals=deep.  Its values
are random, made by the process, which records their repr() itself:
  * without --redact (analyze's default) every variable's repr is the
    process's own, "redacted" is [];
  * with --redact (and in batch mode by default) none of the password, the
    AWS-key-looking value or the api_token attribute appears anywhere in
    the JSON or the text output; each keeps its type and its length
    ("<redacted str of N characters>", N the len() the process had);
    "redacted" lists each, where it is and why (the name; the format; the
    same value passed on under another name); the variables that are not
    secret keep their reprs; batch --no-redact shows the values again.
Grouping: the crash scenario (SIGSEGV) on every pyenv interpreter and the
abort scenario (SIGABRT) on two, one batch over them plus a garbage file,
then pycore group (text and --format json) over its output and a bad line:
one group per scenario with the right count, first and last seen by the
dump files' modification times (set here, distinct), the newest dump as
the example with its summary; the error record and the bad line counted
apart; with a dump removed, its group falls back to input order.

Output: TAP, one line per case; a case that cannot run here is a skip by name.
"""
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.env import scaled

Failure = pt.Failure


def pythons():
    return interpreters.pyenv_pythons()


def pycore(args, stdin=None):
    p = subprocess.run([pt.PYCORE] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=scaled(300))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def frames_by_function(report, tid):
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["tid"] == tid:
                return dict((f["function"], (i, f)) for i, f in enumerate(t["frames"]))
    raise Failure("no thread %s in the report" % tid)


def check_redact(tap, work):
    exe = pythons()[-1]
    core, truth_path = pt.take_gcore(exe, "redact_secrets", work)
    truth = json.load(open(truth_path))
    main = [t for t in truth["threads"] if t["main"]][0]
    recorded = dict((f["function"], f["locals"]) for f in main["frames"])
    login, connect = recorded["login"], recorded["connect"]
    values = {
        "password": ast.literal_eval(login["password"][1]),
        "region_hint": ast.literal_eval(login["region_hint"][1]),
        "api_token": ast.literal_eval(login["client"][2]["api_token"][1]),
    }
    if values["password"] != ast.literal_eval(connect["pw"][1]):
        raise Failure("the scenario did not pass the password on")
    tid = main["native_id"]

    # without --redact: the process's own reprs, nothing listed
    rc, out, err = pycore(["analyze", "--format", "json", "--locals=deep", core])
    plain = pt.load_report(out)
    if rc != 0 or plain["redacted"] != []:
        raise Failure("analyze without --redact: exit %d, redacted %s: %s" % (rc, plain["redacted"], err))
    exact = pt.compare_locals(truth, plain)
    for v in values.values():
        if v not in out:
            raise Failure("without --redact, %r is not in the report" % v)
    rc, text, err = pycore(["analyze", "--locals=deep", core])
    if rc != 0 or any(repr(v) not in text for v in values.values()) or "Redacted" in text:
        raise Failure("text without --redact: exit %d, values missing or a Redacted section" % rc)
    tap.ok("without --redact: %d reprs exactly the process's, the secrets shown, \"redacted\": []" % exact)

    want = {  # (function, name, attribute): reason
        ("login", "password", None): "name",
        ("login", "region_hint", None): "aws-access-key-id",
        # login's client is connect's: its attributes are listed (and
        # redacted) once, in connect, the innermost frame
        ("connect", "pw", None): "secret-value",
        ("connect", "hint", None): "aws-access-key-id",
        ("connect", "client", "api_token"): "name",
    }
    secret_of = {"password": "password", "pw": "password", "region_hint": "region_hint",
                 "hint": "region_hint", "api_token": "api_token"}
    runs = [("analyze --redact", ["analyze", "--redact", "--format", "json", "--locals=deep", core]),
            ("batch (redacts by default)", ["batch", "--locals=deep", core])]
    for label, args in runs:
        rc, out, err = pycore(args)
        if rc != 0:
            raise Failure("%s: exit %d: %s" % (label, rc, err))
        for name, v in values.items():
            for form in (v, json.dumps(v)[1:-1], v[4:16]):
                if form in out:
                    raise Failure("%s: the %s's value (%r) is in the JSON output" % (label, name, form))
        report = pt.load_report(out, label)
        frames = frames_by_function(report, tid)
        got = {}
        for e in report["redacted"]:
            if e["thread"] != tid or e["in"] != "stack" or e["task"] is not None:
                raise Failure("%s: redaction entry %s: not thread %d's stack" % (label, e, tid))
            fn = [f for f, (i, _) in frames.items() if i == e["frame"]]
            got[(fn[0] if fn else e["frame"], e["name"], e["attribute"])] = e["reason"]
        if got != want:
            raise Failure("%s: redacted %s, want %s" % (label, sorted(got.items(), key=str),
                                                         sorted(want.items(), key=str)))
        for (fn, name, attr), _ in want.items():
            local = [l for l in frames[fn][1]["locals"] if l["name"] == name][0]
            t, r, attrs = recorded[fn][name][:3]
            if attr:
                local = [a for a in local["attributes"] if a["name"] == attr][0]
                t, r = attrs[attr]
            v = values[secret_of[attr or name]]
            placeholder = "<redacted str of %d characters>" % len(v)
            if local["type"] != t or local["repr"] != placeholder:
                raise Failure("%s: %s.%s%s: type %s repr %r, want type %s and %r"
                              % (label, fn, name, "." + attr if attr else "", local["type"], local["repr"],
                                 t, placeholder))
        # what is not secret is untouched
        for fn, name in (("login", "user"), ("connect", "user")):
            local = [l for l in frames[fn][1]["locals"] if l["name"] == name][0]
            if local["repr"] != recorded[fn][name][1]:
                raise Failure("%s: %s.%s: %r, the process says %r" % (label, fn, name, local["repr"],
                                                                      recorded[fn][name][1]))
        client = [l for l in frames["login"][1]["locals"] if l["name"] == "client"][0]
        if client["attributes"] is not None or client["attributes_shown_in"] != {"thread": tid, "frame":
                                                                                 frames["connect"][0]}:
            raise Failure("%s: login's client lists its attributes again: %s" % (label, client))
        endpoint = [a for a in pt.locals.attributes_at(report, client["attributes_shown_in"], client["address"])
                    if a["name"] == "endpoint"][0]
        if endpoint["repr"] != recorded["login"]["client"][2]["endpoint"][1]:
            raise Failure("%s: client.endpoint redacted: %r" % (label, endpoint["repr"]))
        tap.ok("%s: no secret in the JSON, types and lengths kept, %d redactions listed"
               % (label, len(report["redacted"])))

    rc, text, err = pycore(["analyze", "--redact", "--locals=deep", core])
    if rc != 0 or any(v in text or v[4:16] in text for v in values.values()):
        raise Failure("text with --redact: exit %d, or a secret shown" % rc)
    section = text.split("\nRedacted (values replaced by their type and length):\n", 1)
    lines = section[1].split("\n\n")[0].splitlines() if len(section) == 2 else []
    if len(lines) != len(want) or "password = <redacted str of %d characters>" % len(values["password"]) not in text \
            or not any("client.api_token" in line and "in connect" in line for line in lines):
        raise Failure("text with --redact: Redacted section %s" % lines)
    tap.ok("text with --redact: no secret, the placeholders in place, %d lines under Redacted:" % len(lines))

    rc, out, err = pycore(["batch", "--no-redact", "--locals=deep", core])
    report = pt.load_report(out, "batch --no-redact")
    if rc != 0 or report["redacted"] != [] or any(v not in out for v in values.values()):
        raise Failure("batch --no-redact: exit %d, redacted %s, or a value missing" % (rc, report["redacted"]))
    tap.ok("batch --no-redact: the values shown, nothing redacted")


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def check_group(tap, work):
    cores = {"crash": [], "abort": []}
    for exe in pythons():
        d = os.path.join(work, "crash-" + os.path.basename(exe)[6:])
        os.makedirs(d)
        try:
            cores["crash"].append(pt.take_crash(exe, d, ["crash.py"], signal.SIGSEGV)[0])
        except pt.Skip as why:
            tap.diag("%s: no core: %s" % (d, why))
    if not cores["crash"]:
        raise pt.Skip("no crash core could be made")
    for exe in pythons()[-2:]:
        d = os.path.join(work, "abort-" + os.path.basename(exe)[6:])
        os.makedirs(d)
        cores["abort"].append(pt.take_crash(exe, d, ["abort.py"], signal.SIGABRT)[0])
    # distinct modification times, an hour apart, not in input order
    base = 1700000000
    every = cores["crash"] + cores["abort"]
    order = every[1::2] + every[0::2]
    for i, p in enumerate(order):
        os.utime(p, (base + 3600 * i, base + 3600 * i))
    garbage = os.path.join(work, "garbage.core")
    with open(garbage, "wb") as f:
        f.write(b"\x7fELF" + os.urandom(4000))
    rc, out, err = pycore(["batch", "--jobs", "2", "--ordered"] + every + [garbage])
    if rc != 0:
        raise Failure("batch: exit %d: %s" % (rc, err))
    pt.validator().check(out, "batch output")
    summary = dict((json.loads(line)["input"]["path"], json.loads(line).get("summary", {}).get("text"))
                   for line in out.splitlines())
    jsonl = os.path.join(work, "reports.jsonl")
    with open(jsonl, "w") as f:
        f.write(out + "not json\n")

    rc, gout, gerr = pycore(["group", "--format", "json", jsonl])
    if rc != 1 or "1 bad line" not in gerr or ":%d:" % (len(every) + 2) not in gerr:
        raise Failure("group with a bad line: exit %d (want 1), stderr %r" % (rc, gerr))
    groups = [json.loads(line) for line in gout.splitlines()]
    if len(groups) != 2:
        raise Failure("group: %d groups, want 2: %s" % (len(groups), gout))
    mtime = dict((p, os.stat(p).st_mtime) for p in every)
    for kind, g in zip(("crash", "abort") if len(cores["crash"]) >= 2 else ("abort", "crash"), groups):
        paths = cores[kind]
        first = min(paths, key=mtime.get)
        last = max(paths, key=mtime.get)
        if g["count"] != len(paths) or g["seen_by"] != "mtime" or g["fingerprint"]["kind"] != \
                ("SIGSEGV" if kind == "crash" else "SIGABRT"):
            raise Failure("group %s: %s" % (kind, g))
        if (g["first_seen"]["path"], g["first_seen"]["time"], g["last_seen"]["path"], g["last_seen"]["time"]) != \
                (first, iso(mtime[first]), last, iso(mtime[last])):
            raise Failure("group %s: first %s, last %s; want %s at %s, %s at %s"
                          % (kind, g["first_seen"], g["last_seen"], first, iso(mtime[first]), last, iso(mtime[last])))
        if g["example"] != {"path": last, "summary": summary[last]}:
            raise Failure("group %s: example %s, want %s" % (kind, g["example"], last))
        if g["fingerprint"]["hash"] != json.loads([line for line in out.splitlines()
                                                   if json.loads(line)["input"]["path"] == first][0])["fingerprint"]["hash"]:
            raise Failure("group %s: fingerprint is not its reports'" % kind)
    tap.ok("group --format json: crash x%d, abort x%d, first/last by mtime, the newest as example; "
           "the bad line on stderr, exit 1" % (len(cores["crash"]), len(cores["abort"])))

    rc, text, gerr = pycore(["group"], stdin=out.encode())
    tail = "%d reports in 2 groups; 1 error records (format 1); 0 bad lines" % len(every)
    crash_hash = [g for g in groups if g["fingerprint"]["kind"] == "SIGSEGV"][0]["fingerprint"]["hash"]
    if rc != 0 or tail not in text or "by the dump files' modification times" not in text or \
            "%d  %s  SIGSEGV: crash:crash_here" % (len(cores["crash"]), crash_hash) not in text:
        raise Failure("group (text, standard input): exit %d:\n%s%s" % (rc, text, gerr))
    tap.ok("group (text, from standard input): %s" % tail)

    gone = cores["abort"][0]
    os.unlink(gone)
    rc, gout, gerr = pycore(["group", "--format", "json", "-"], stdin=out.encode())
    ab = [json.loads(line) for line in gout.splitlines() if json.loads(line)["fingerprint"]["kind"] == "SIGABRT"]
    recs = [json.loads(line) for line in out.splitlines() if "error" not in json.loads(line)]
    pos = dict((r["input"]["path"], i + 1) for i, r in enumerate(recs))
    want_first = min(cores["abort"], key=pos.get)
    want_last = max(cores["abort"], key=pos.get)
    if rc != 0 or len(ab) != 1 or ab[0]["seen_by"] != "input-order" or \
            (ab[0]["first_seen"]["record"], ab[0]["last_seen"]["record"]) != (pos[want_first], pos[want_last]) or \
            ab[0]["first_seen"]["path"] != want_first:
        raise Failure("group with %s removed: %s" % (gone, ab))
    tap.ok("group with a dump gone: its group by input order (reports %d and %d)"
           % (pos[want_first], pos[want_last]))


def main():
    tap = pt.TAP()
    if not pythons():
        tap.skip("redact and group", "no pyenv interpreter under %s/versions" % interpreters.pyenv_root())
        return tap.done()
    if shutil.which("gcore"):
        work = tempfile.mkdtemp(prefix="pycore-redact-")
        pt.run_in(tap, "--redact over a real core of the secrets scenario", work, check_redact, tap, work)
    else:
        tap.skip("--redact", "needs gcore (Debian package gdb)")
    _, why = pt.kernel_core_usable()
    if why:
        tap.skip("group", "kernel cores: %s" % why)
    else:
        work = tempfile.mkdtemp(prefix="pycore-group-")
        pt.run_in(tap, "group over a batch of real crash cores", work, check_group, tap, work)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
