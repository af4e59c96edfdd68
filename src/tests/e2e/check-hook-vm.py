"""The systemd-coredump hook under systemd as PID 1 (issue 26): an x86-64
Debian machine booted under qemu-system-x86_64, the project's Debian
package installed in it, Python crashing there.

scripts/amd64-vm builds once per machine, in ~/.cache/pycore/amd64-vm/, a
bookworm root (debootstrap: systemd as init, systemd-coredump, udev,
python3.11, Debian's amd64 kernel and its own initramfs, the libraries
pycore's package depends on) and boots it (KVM when /dev/kvm can be
opened, else TCG).  The package is the project's own: `make distdir`,
then `dpkg-buildpackage -us -uc -b` (DEB_BUILD_OPTIONS=nocheck) in it,
kept in the cache under the hash of the distributed tree, so that a run
whose sources did not change reuses it (the first build of a tree takes
about 40 s here).  The machine's second disk holds the package, the
scenario, src/tests/e2e/hook-vm-init.py (run as root by the machine's own
unit once systemd has booted; it powers the machine off when it ends) and
hook-vm-probe.py (the hook's unit's ExecStartPost=, through a drop-in the
init adds).  Inside: dpkg -i the package; RateLimitBurst=3; one crash of
src/tests/e2e/scenarios/crash.py (it records its threads and frames
first), then a flood of 5 at once.  The disk comes back through debugfs.

TAP lines:
- the machine booted with systemd as PID 1, core_pattern systemd-coredump's;
- dpkg -i of the package: the user pycore, the drop-in's OnSuccess=;
- the crash stored by systemd-coredump@INSTANCE, pycore-coredump@INSTANCE
  started by it (same instance), its journal entry (result complete, the
  text report naming the recorded frames, the report file's path);
- the JSON report beside the core: schema-valid, every thread and frame
  as the process recorded them, process.coredump as systemd-coredump saw it;
- the unit's systemctl show: every property the unit file sets, as it sets it;
- the sandbox held, seen from inside the unit (the probe): writes refused
  outside its paths, allowed inside, private /tmp, no devices, the socket
  families and capabilities it names, no_new_privs, seccomp;
- nothing written to the root file system while the crashes were
  handled but under the paths the unit may write (and the cores' own);
- the flood rate-limited as configured: 2 more reports, 3 skips with
  pycore's journal note, one entry per crash.
Where qemu-system-x86_64, e2fsprogs, the Debian build tools or the machine
(root once, to build it) are missing, every case is skipped by name.

Environment: PYCORE, srcdir; PYCORE_AMD64_CACHE (scripts/amd64-vm);
PYCORE_HOOK_VM_TIMEOUT (seconds for the boot and the run, default 360:
a run takes 90-120 s under TCG on the loaded 2-core CI machine).
"""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pycoretest as pt
from pycoretest.env import scaled

Failure = pt.Failure
VM = os.path.join(pt.SRCDIR, "scripts", "amd64-vm")
UNIT = os.path.join(pt.SRCDIR, "systemd", "pycore-coredump@.service.in")
COREDUMP_ID = "fc2e22bc6ee647b6b90729ab34a250b1"
BURST, FLOOD = 3, 5    # as hook-vm-init.py sets them
CASES = ["the machine booted with systemd as PID 1 and ran the test",
         "dpkg -i of the project's package: its user, the drop-in's OnSuccess=",
         "a crash: systemd-coredump@ stores it, pycore-coredump@ of the same instance reports it in the journal",
         "the JSON report beside the core: stacks as the process recorded them",
         "the unit's systemctl show: every property the unit file sets",
         "the sandbox held, seen from inside the unit",
         "no write to the root file system outside the unit's paths",
         "a flood of crashes rate-limited as configured (RateLimitBurst=%d)" % BURST]


def pycore_message_id():
    for line in open(os.path.join(pt.SRCDIR, "src", "cli", "coredump", "coredump.h")):
        if line.startswith("#define PYCORE_MESSAGE_ID"):
            return line.split('"')[1]
    raise Failure("PYCORE_MESSAGE_ID not found in src/cli/coredump/coredump.h")


def vm(*args, timeout=60):
    return subprocess.run([VM] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def why_not():
    if not shutil.which("qemu-system-x86_64"):
        return "qemu-system-x86_64 not installed (Debian package qemu-system-x86)"
    for tool, pkg in (("debugfs", "e2fsprogs"), ("mkfs.ext4", "e2fsprogs"), ("dpkg-buildpackage", "dpkg-dev"),
                      ("dh", "debhelper")):
        if not shutil.which(tool):
            return "%s not installed (Debian package %s)" % (tool, pkg)
    p = subprocess.run([pt.PYCORE, "coredump", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if b"built without libsystemd" in p.stderr:
        return "this pycore was built without libsystemd: its package has no hook"
    builddir = os.path.dirname(os.path.abspath(pt.PYCORE))
    if not os.path.isfile(os.path.join(builddir, "Makefile")):
        return "no Makefile beside %s to make the package's tree from (make check runs this)" % pt.PYCORE
    # the package does not depend on this build's configuration
    for line in open(os.path.join(builddir, "Makefile")):
        if line.startswith("SANITIZER_CFLAGS =") and line.split("=", 1)[1].strip():
            return "the machine runs the Debian package, not this sanitizer build (the plain build's make check runs it)"
    return None


def tree_hash(tree):
    """The distributed tree's files, but the end-to-end tests' (which the
    package neither builds nor runs): editing a checker reuses the package."""
    h = hashlib.sha256()
    for d, dirs, files in os.walk(tree):
        if os.path.relpath(d, tree) == os.path.join("src", "tests"):
            dirs[:] = [n for n in dirs if n not in ("e2e", "lib")]
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(d, name)
            h.update(os.path.relpath(path, tree).encode() + b"\0%d\0" % (os.stat(path).st_mode & 0o111))
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def package(cache, work):
    """The project's .deb of this tree: (path, how it was had)."""
    builddir = os.path.dirname(os.path.abspath(pt.PYCORE))
    version = "0"
    for line in open(os.path.join(builddir, "Makefile")):
        if line.startswith("PACKAGE_VERSION = "):
            version = line.split("=", 1)[1].strip()
    tree = os.path.join(work, "pycore-" + version)
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    p = subprocess.run(["make", "-s", "-C", builddir, "distdir", "distdir=" + tree], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=scaled(300))
    if p.returncode != 0 or not os.path.isfile(os.path.join(tree, "debian", "control")):
        raise Failure("make distdir: %s" % p.stdout.decode(errors="replace")[-2000:])
    key = tree_hash(tree)
    debs = os.path.join(cache, "debs")
    kept = os.path.join(debs, key)
    found = [n for n in os.listdir(kept) if n.startswith("pycore_") and n.endswith(".deb")] \
        if os.path.isdir(kept) else []
    if found:
        os.utime(kept)
        return os.path.join(kept, found[0]), "kept (tree %s)" % key
    p = subprocess.run(["dpkg-checkbuilddeps"], cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise pt.Skip("the package's build dependencies: %s" % p.stdout.decode(errors="replace").strip())
    t = time.time()
    env["DEB_BUILD_OPTIONS"] = "nocheck parallel=%d" % (os.cpu_count() or 2)
    p = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=scaled(900))
    built = [n for n in os.listdir(work) if n.startswith("pycore_") and n.endswith(".deb")]
    if p.returncode != 0 or not built:
        raise Failure("dpkg-buildpackage -us -uc -b: %s" % p.stdout.decode(errors="replace")[-3000:])
    os.makedirs(debs, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=debs)
    shutil.copy(os.path.join(work, built[0]), tmp)
    try:
        os.rename(tmp, kept)
    except OSError:   # another run kept it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    # the three newest trees' packages are kept
    olds = sorted((os.path.getmtime(os.path.join(debs, n)), n) for n in os.listdir(debs))
    for _, n in olds[:-3]:
        shutil.rmtree(os.path.join(debs, n), ignore_errors=True)
    return os.path.join(work, built[0]), "built in %.0f s (tree %s)" % (time.time() - t, key)


def boot(cache, work, deb, timeout):
    payload = os.path.join(work, "payload")
    os.makedirs(os.path.join(payload, "scenarios"))
    e2e = os.path.join(pt.SRCDIR, "src", "tests", "e2e")
    shutil.copy(os.path.join(e2e, "hook-vm-init.py"), os.path.join(payload, "init"))
    os.chmod(os.path.join(payload, "init"), 0o755)
    shutil.copy(os.path.join(e2e, "hook-vm-probe.py"), os.path.join(payload, "probe.py"))
    for f in ("crash.py", "_truth.py"):
        shutil.copy(os.path.join(pt.SCENARIOS, f), os.path.join(payload, "scenarios"))
    shutil.copy(deb, os.path.join(payload, "pycore.deb"))
    # the init's argument: pycore's MESSAGE_ID
    with open(os.path.join(payload, "init")) as f:
        text = f.read()
    with open(os.path.join(payload, "init"), "w") as f:
        f.write(text.replace('"bee5f1820e0c4d1fb9207024ca7e75c5"', '"%s"' % pycore_message_id()))
    disk = os.path.join(work, "test.raw")
    t = time.time()
    # (the machine waits for the emulator lock while another runs)
    p = vm("run", payload, disk, str(timeout), timeout=timeout + scaled(3600))
    took = time.time() - t
    console = open(disk + ".console", errors="replace").read() if os.path.exists(disk + ".console") else ""
    if p.returncode != 0:
        return None, took, "scripts/amd64-vm run exited %d%s: %s\nconsole:\n%s" % (
            p.returncode, " (timeout)" if p.returncode == 124 else "", p.stderr.decode(errors="replace").strip(),
            console[-3000:])
    out = os.path.join(work, "out")
    d = subprocess.run(["debugfs", "-R", "rdump /out %s" % work, disk], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=scaled(120))
    if not os.path.isfile(os.path.join(out, "results.json")):
        return None, took, "no results on the machine's disk (debugfs: %s)\nconsole:\n%s" % (
            d.stdout.decode(errors="replace")[-500:], console[-3000:])
    return out, took, console


def field(e, key):
    v = e.get(key)
    if isinstance(v, list) and v and isinstance(v[0], int):   # journalctl's bytes
        v = bytes(v).decode("utf-8", "replace")
    elif isinstance(v, list):
        v = v[-1]
    return v


class Run:
    def __init__(self, out):
        self.out = out
        self.facts = json.load(open(os.path.join(out, "results.json")))
        self.journal = []
        path = os.path.join(out, "journal.json")
        if os.path.exists(path):
            for line in open(path, errors="replace"):
                if line.startswith("{"):
                    self.journal.append(json.loads(line))
        self.mine = pycore_message_id()

    def truth(self, name):
        return json.load(open(os.path.join(self.out, name + ".truth.json")))

    def of(self, message_id, pid):
        return [e for e in self.journal if field(e, "MESSAGE_ID") == message_id
                and field(e, "COREDUMP_PID") == str(pid)]


def check_booted(r):
    f = r.facts
    if f.get("error"):
        raise Failure("the machine's init: %s" % f["error"])
    if f.get("pid1") != "systemd":
        raise Failure("PID 1 is %r, not systemd" % f.get("pid1"))
    if "systemd-coredump" not in f.get("core_pattern", ""):
        raise Failure("core_pattern %r" % f.get("core_pattern"))
    if not f.get("done"):
        raise Failure("the init did not finish: %r" % {k: v for k, v in f.items() if k != "show"})
    return "%s; is-system-running: %s" % (f["systemd"], f["system_running"])


def check_installed(r, deb):
    f = r.facts
    d = f.get("dpkg", {})
    if d.get("rc") != 0:
        raise Failure("dpkg -i exited %r: %s" % (d.get("rc"), d.get("output")))
    want = subprocess.run(["dpkg-deb", "-f", deb, "Version"], stdout=subprocess.PIPE).stdout.decode().strip()
    if f.get("dpkg_version") != want:
        raise Failure("installed version %r, the package's %r" % (f.get("dpkg_version"), want))
    if not f.get("user", "").startswith("uid="):
        raise Failure("no user pycore after dpkg -i: %r" % f.get("user"))
    if "pycore-coredump@1-2-3.service" not in f.get("onsuccess", ""):
        raise Failure("systemd-coredump@1-2-3.service's %r" % f.get("onsuccess"))
    return "pycore %s in %.1f s, %s" % (want, d.get("seconds", 0), f["user"].split()[0])


def reports_of(r, pid):
    """(systemd-coredump's entry, pycore's entries) of a crashed pid."""
    stored = r.of(COREDUMP_ID, pid)
    if len(stored) != 1:
        raise Failure("%d systemd-coredump entries of pid %d" % (len(stored), pid))
    return stored[0], r.of(r.mine, pid)


def check_first(r, ctx):
    f = r.facts["first"]
    if f.get("status") != -signal.SIGSEGV:
        raise Failure("the crash's status %r, not killed by SIGSEGV" % f.get("status"))
    truth = r.truth("first")
    stored, mine = reports_of(r, truth["pid"])
    unit = field(stored, "_SYSTEMD_UNIT") or ""
    m = re.match(r"systemd-coredump@(.+)\.service$", unit)
    if not m:
        raise Failure("systemd-coredump's entry comes from %r" % unit)
    instance = m.group(1)
    if len(mine) != 1:
        raise Failure("%d entries of pycore for pid %d (reported in time: %r)" % (len(mine), truth["pid"],
                                                                                 f.get("reported")))
    e = mine[0]
    if field(e, "_SYSTEMD_UNIT") != "pycore-coredump@%s.service" % instance:
        raise Failure("pycore's entry comes from %r, not pycore-coredump@%s.service" %
                      (field(e, "_SYSTEMD_UNIT"), instance))
    if field(e, "PYCORE_RESULT") != "complete":
        raise Failure("PYCORE_RESULT %r: %s" % (field(e, "PYCORE_RESULT"), field(e, "MESSAGE")))
    core = field(stored, "COREDUMP_FILENAME")
    want = os.path.join(os.path.dirname(core), "pycore." + os.path.basename(core)[5:].rsplit(".zst", 1)[0] + ".json")
    if field(e, "PYCORE_REPORT") != want or field(e, "COREDUMP_FILENAME") != core:
        raise Failure("PYCORE_REPORT %r, COREDUMP_FILENAME %r; the core %s" % (
            field(e, "PYCORE_REPORT"), field(e, "COREDUMP_FILENAME"), core))
    text = field(e, "PYCORE_TEXT") or ""
    for name in ("crash_here", "middle", "blocked"):
        if name not in text:
            raise Failure("PYCORE_TEXT does not name %s:\n%s" % (name, text[:2000]))
    ctx.update(truth=truth, report=want, core=core, stored=stored)
    return "instance %s, %s: %s" % (instance, os.path.basename(want), field(e, "MESSAGE"))


def check_beside(r, ctx):
    if "report" not in ctx:
        raise pt.Skip("no report of the first crash in the journal")
    path = os.path.join(r.out, "coredump", os.path.basename(ctx["report"]))
    if not os.path.isfile(path):
        raise Failure("no %s beside the core (%s)" % (os.path.basename(path), r.facts.get("coredump_dir")))
    if not os.path.isfile(os.path.join(r.out, "coredump", os.path.basename(ctx["core"]))):
        raise Failure("the core %s is not there" % ctx["core"])
    report = pt.load_report(open(path).read())
    pt.compare(ctx["truth"], report, signal.SIGSEGV)
    c = report["process"].get("coredump") or {}
    s = ctx["stored"]
    want = {"exe": field(s, "COREDUMP_EXE"), "uid": int(field(s, "COREDUMP_UID")),
            "signal": int(field(s, "COREDUMP_SIGNAL")), "hostname": field(s, "COREDUMP_HOSTNAME")}
    got = {k: c.get(k) for k in want}
    if got != want:
        raise Failure("process.coredump %r, systemd-coredump's %r" % (got, want))
    threads = sum(len(i.get("threads", [])) for i in report["interpreters"])
    return "%d threads as recorded, process.coredump as stored" % threads


def show_of(text):
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition("=")
        out[k] = v
    return out


def check_show(r):
    show = show_of(r.facts.get("show", ""))
    if not show:
        raise Failure("no systemctl show of the unit")
    caps = lambda v: sorted(v.lower().split())   # noqa: E731
    words = lambda v: sorted(v.split())           # noqa: E731
    # key in the unit -> (its property in systemctl show, normalizer of
    # the unit's value, of the shown value)
    same = lambda v: v                            # noqa: E731
    special = {
        "ExecStart": ("ExecStart", lambda v: v.replace("@bindir@", "/usr/bin").replace("%i", "0-0-0").split(),
                      lambda v: re.search(r"argv\[\]=([^;]*);", v).group(1).split() if "argv[]=" in v else v),
        "TimeoutStartSec": ("TimeoutStartUSec", lambda v: "%dmin" % (int(v) // 60) if int(v) % 60 == 0 else v + "s",
                            same),
        "MemoryMax": ("MemoryMax", lambda v: str(int(v[:-1]) << {"K": 10, "M": 20, "G": 30}[v[-1]])
                      if v[-1] in "KMG" else v, same),
        "IOSchedulingClass": ("IOSchedulingClass", lambda v: {"idle": "3", "best-effort": "2",
                                                              "realtime": "1"}.get(v, v),
                              lambda v: {"idle": "3", "best-effort": "2", "realtime": "1"}.get(v, v)),
        "CapabilityBoundingSet": ("CapabilityBoundingSet", caps, caps),
        "RestrictAddressFamilies": ("RestrictAddressFamilies", words, words),
        "ReadWritePaths": ("ReadWritePaths", words, words),
        "SystemCallFilter": None,    # a set's name; the shown list is checked below
        "Description": None, "Documentation": None,
    }
    section = None
    checked, bad = [], []
    for line in open(UNIT):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
            continue
        key, _, value = line.partition("=")
        if key in special and special[key] is None:
            continue
        prop, mine, theirs = special.get(key, (key, same, same))
        if prop not in show:
            bad.append("%s (%s): not shown" % (key, section))
            continue
        if mine(value) != theirs(show[prop]):
            bad.append("%s=%s shown as %s=%s" % (key, value, prop, show[prop]))
        checked.append(key)
    calls = set(show.get("SystemCallFilter", "").split())
    if not {"openat", "read", "mmap"} <= calls or calls & {"reboot", "kexec_load", "init_module", "mount"}:
        bad.append("SystemCallFilter (@system-service) shown as %r" % show.get("SystemCallFilter", "")[:300])
    if bad:
        raise Failure("; ".join(bad))
    return "%d properties as the unit sets them, and @system-service's calls" % (len(checked) + 1)


def probes(r):
    out = []
    for e in r.journal:
        m = field(e, "MESSAGE") or ""
        if m.startswith("PYCORE-PROBE "):
            _, instance, data = m.split(" ", 2)
            out.append((instance, field(e, "_SYSTEMD_UNIT"), json.loads(data)))
    return out


def check_sandbox(r):
    got = probes(r)
    if not got:
        raise Failure("no probe line in the journal (the drop-in's ExecStartPost= did not run)")
    outside = ["/etc", "/usr/lib", "/var/lib", "/var/log", "/boot", "/root", "/pycore-test", "/var/lib/systemd"]
    inside = ["/var/lib/systemd/coredump", "/var/lib/pycore", "/run/pycore", "/var/cache/pycore", "/tmp", "/var/tmp"]
    for instance, unit, p in got:
        if unit != "pycore-coredump@%s.service" % instance:
            raise Failure("a probe line from %r" % unit)
        w = p["writes"]
        wrong = ["%s: %s" % (d, w.get(d)) for d in outside if w.get(d) != "EROFS"]
        wrong += ["%s: %s" % (d, w.get(d)) for d in inside if w.get(d) != "ok"]
        fam = p["families"]
        wrong += ["%s: %s" % (k, fam.get(k)) for k in ("AF_NETLINK", "AF_PACKET") if fam.get(k) != "EAFNOSUPPORT"]
        wrong += ["%s: %s" % (k, fam.get(k)) for k in ("AF_UNIX", "AF_INET") if fam.get(k) != "ok"]
        st = p["status"]
        if st.get("NoNewPrivs") != ["1"] or st.get("Seccomp") != ["2"]:
            wrong.append("NoNewPrivs %r, Seccomp %r" % (st.get("NoNewPrivs"), st.get("Seccomp")))
        # CAP_CHOWN 0, CAP_DAC_READ_SEARCH 2, CAP_FOWNER 3, CAP_SETGID 6, CAP_SETUID 7 (linux/capability.h)
        want = (1 << 0) | (1 << 2) | (1 << 3) | (1 << 6) | (1 << 7)
        if int(st.get("CapBnd", ["0"])[0], 16) != want:
            wrong.append("CapBnd %r, not %x" % (st.get("CapBnd"), want))
        disks = [d for d in p["devices"] if d.startswith(("vd", "sd", "mem", "kmsg", "port"))]
        if disks:
            wrong.append("devices seen: %s" % disks)
        if p["interfaces"] != ["lo"]:
            wrong.append("interfaces %r" % p["interfaces"])
        if wrong:
            raise Failure("pycore-coredump@%s: %s" % (instance, "; ".join(wrong)))
    leaked = [n for n in r.facts.get("tmp", []) if n.startswith("pycore-probe-")]
    if leaked:
        raise Failure("the unit's /tmp is the machine's: %s" % leaked)
    return "%d instances: EROFS in %d directories, writable in its %d, private /tmp, " \
           "no disks, netlink and packet sockets refused, no_new_privs, seccomp" % (len(got), len(outside), len(inside))


def check_written(r):
    allowed = ("/var/lib/systemd/coredump/", "/var/lib/pycore/", "/var/cache/pycore/")
    written = r.facts.get("written")
    if written is None:
        raise Failure("no list of the files written")
    other = [p for p in written if not p.startswith(allowed)]
    if other:
        raise Failure("written outside the unit's paths: %s" % other)
    if not any(p.startswith("/var/lib/pycore/ratelimit.") for p in written):
        raise Failure("not even the rate limit's state was written: %s" % written)
    return "%d files, all under %s" % (len(written), ", ".join(a.rstrip("/") for a in allowed))


def check_flood(r):
    f = r.facts.get("flood")
    if not f:
        raise Failure("no flood")
    if f["statuses"] != [-signal.SIGSEGV] * FLOOD:
        raise Failure("the flood's statuses %r" % f["statuses"])
    complete, skipped = [], []
    for i, pid in enumerate(f["pids"]):
        _, mine = reports_of(r, pid)
        if len(mine) != 1:
            raise Failure("%d entries of pycore for the flood's pid %d" % (len(mine), pid))
        e = mine[0]
        res = field(e, "PYCORE_RESULT")
        if res == "complete":
            path = os.path.join(r.out, "coredump", os.path.basename(field(e, "PYCORE_REPORT")))
            pt.compare(r.truth("flood%d" % i), pt.load_report(open(path).read()), signal.SIGSEGV)
            complete.append(pid)
        elif res == "skipped" and "over the rate limit" in (field(e, "MESSAGE") or "") and \
                field(e, "PRIORITY") == "6" and not field(e, "PYCORE_REPORT"):
            skipped.append(pid)
        else:
            raise Failure("pid %d: %s %s" % (pid, res, field(e, "MESSAGE")))
    if len(complete) != BURST - 1 or len(skipped) != FLOOD - BURST + 1:
        raise Failure("%d reports and %d skips, not %d and %d" % (len(complete), len(skipped), BURST - 1,
                                                                  FLOOD - BURST + 1))
    jsons = [n for n in r.facts.get("coredump_dir", []) if n.startswith("pycore.") and n.endswith(".json")]
    if len(jsons) != BURST:
        raise Failure("%d reports beside the cores, not %d: %s" % (len(jsons), BURST, jsons))
    return "%d crashes at once: %d reports (as recorded), %d skipped with the note, in %.0f s" % (
        FLOOD, len(complete), len(skipped), f.get("seconds", 0))


def main():
    tap = pt.TAP()
    cache = vm("--print").stdout.decode().strip()
    timeout = int(os.environ.get("PYCORE_HOOK_VM_TIMEOUT") or scaled(360))
    why = why_not()
    if why is None and not os.path.isfile(os.path.join(cache, "root.raw.ready")):
        if os.getuid() != 0:
            why = "the machine is not built in %s (as root, once: scripts/amd64-vm build)" % cache
        else:
            p = vm("build", timeout=scaled(3600))
            if p.returncode != 0:
                why = "scripts/amd64-vm build failed: %s" % p.stderr.decode(errors="replace").strip()
    if why is not None:
        for name in CASES:
            tap.skip(name, why)
        return tap.done()
    work = tempfile.mkdtemp(prefix="pycore-hook-vm-")
    try:
        got = tap.run("the project's Debian package of this tree", package, cache, work)
        if got is None:
            for name in CASES:
                tap.skip(name, "no package")
            return tap.done()
        deb = got[0]
        tap.diag("package: %s, %s" % (deb, got[1]))
        out, took, console = boot(cache, work, deb, timeout)
        if out is None:
            tap.not_ok(CASES[0], console.splitlines()[0] if console else "no output")
            tap.diag(console)
            for name in CASES[1:]:
                tap.skip(name, "the machine did not run the test")
            return tap.done()
        r = Run(out)
        tap.diag("the machine (%s) ran for %.0f s" % (vm("--accel").stdout.decode().strip(), took))
        if tap.run(CASES[0], check_booted, r) is None:
            tap.diag(console[-4000:])
        tap.run(CASES[1], check_installed, r, deb)
        ctx = {}
        tap.run(CASES[2], check_first, r, ctx)
        tap.run(CASES[3], check_beside, r, ctx)
        tap.run(CASES[4], check_show, r)
        tap.run(CASES[5], check_sandbox, r)
        tap.run(CASES[6], check_written, r)
        tap.run(CASES[7], check_flood, r)
        pt.schema_summary(tap)
    finally:
        if os.environ.get("KEEP_CORES") == "1":
            tap.diag("kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
