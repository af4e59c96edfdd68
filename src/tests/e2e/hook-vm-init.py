#!/usr/bin/python3
"""The systemd-coredump hook's test inside the x86-64 machine of
scripts/amd64-vm (check-hook-vm.py puts this file on the machine's second
disk as /pycore-test/init; the machine's pycore-vm-test.service runs it as
root under systemd, PID 1, and powers the machine off when it ends).

It installs the project's Debian package (/pycore-test/pycore.deb) with
dpkg -i, sets the rate limit small (/etc/pycore/coredump.conf:
RateLimitBurst=BURST), adds a drop-in to pycore-coredump@.service that
runs /pycore-test/probe.py after the hook, inside the same sandbox (the
unit's own settings untouched: their systemctl show is taken before), and
makes Python crash: one crash, then once its report is in the journal a
flood of FLOOD crashes at once.  Each crashing process records its own
threads and frames (src/tests/e2e/scenarios/crash.py) before its SIGSEGV.
It waits (bounded) for pycore's journal entries of every crash, then
writes to /pycore-test/out: the journal's entries as JSON, the files of
/var/lib/systemd/coredump (cores and reports), the unit's properties,
the files of the root file system written while the crashes were handled,
and facts (results.json).  The checker reads the disk with debugfs.
"""
import json
import os
import shutil
import subprocess
import sys
import time

T = "/pycore-test"
OUT = os.path.join(T, "out")
PYCORE_ID = sys.argv[1] if len(sys.argv) > 1 else "bee5f1820e0c4d1fb9207024ca7e75c5"
COREDUMP_ID = "fc2e22bc6ee647b6b90729ab34a250b1"
BURST = 3
FLOOD = 5
facts = {}


def sh(argv, timeout=60, **kw):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, **kw)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", ""


def save():
    with open(os.path.join(OUT, "results.json.tmp"), "w") as f:
        json.dump(facts, f, indent=1)
    os.rename(os.path.join(OUT, "results.json.tmp"), os.path.join(OUT, "results.json"))


def entries(message_id):
    rc, out = sh(["journalctl", "-q", "-o", "json", "--no-pager", "MESSAGE_ID=" + message_id])
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def crash(name):
    """A crash scenario run to its SIGSEGV: its pid (from its truth)."""
    truth = os.path.join(OUT, name + ".truth.json")
    return subprocess.Popen(["/usr/bin/python3", os.path.join(T, "scenarios", "crash.py"), truth],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/"), truth


def wait_reports(pids, seconds):
    """Until pycore's journal has an entry of each pid, and no instance
    of the hook runs."""
    end = time.time() + seconds
    while time.time() < end:
        got = {int(e.get("COREDUMP_PID", "0")) for e in entries(PYCORE_ID)}
        if set(pids) <= got:
            rc, out = sh(["systemctl", "list-units", "--no-legend", "--plain", "--state=activating,active",
                          "pycore-coredump@*", "systemd-coredump@*"])
            if not out.strip():
                return True
        time.sleep(0.5)
    return False


def main():
    os.makedirs(OUT, exist_ok=True)
    facts["pid1"] = open("/proc/1/comm").read().strip()
    facts["systemd"] = sh(["systemctl", "--version"])[1].splitlines()[0]
    facts["core_pattern"] = open("/proc/sys/kernel/core_pattern").read().strip()
    # this unit is Type=simple: the boot's other jobs end without it
    facts["system_running"] = sh(["systemctl", "is-system-running", "--wait"], timeout=90)[1].strip()
    t = time.time()
    rc, out = sh(["dpkg", "-i", os.path.join(T, "pycore.deb")], timeout=120)
    facts["dpkg"] = {"rc": rc, "output": out[-4000:], "seconds": round(time.time() - t, 1)}
    facts["dpkg_version"] = sh(["dpkg-query", "-W", "-f=${Version}", "pycore"])[1]
    facts["user"] = sh(["id", "pycore"])[1].strip()
    facts["onsuccess"] = sh(["systemctl", "show", "-p", "OnSuccess", "systemd-coredump@1-2-3.service"])[1].strip()
    save()
    if rc != 0:
        return
    # the unit's properties as the package installed it
    facts["show"] = sh(["systemctl", "show", "pycore-coredump@0-0-0.service"])[1]
    with open("/etc/pycore/coredump.conf", "a") as f:
        f.write("\n# check-hook-vm.py\nRateLimitBurst=%d\nRateLimitIntervalSec=3600\n" % BURST)
    d = "/etc/systemd/system/pycore-coredump@.service.d"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "zz-pycore-probe.conf"), "w") as f:
        f.write("# check-hook-vm.py: the sandbox, seen from inside\n[Service]\n"
                "ExecStartPost=/usr/bin/python3 %s/probe.py %%i\n" % T)
    sh(["systemctl", "daemon-reload"])
    # what the handling of the crashes writes to the root file system
    # (its mtime's granularity: one second apart)
    marker = "/var/tmp/pycore-vm-marker"
    open(marker, "w").close()
    time.sleep(1.1)

    t = time.time()
    p, truth = crash("first")
    p.wait(timeout=60)
    facts["first"] = {"status": p.returncode, "truth": os.path.basename(truth)}
    first_pid = json.load(open(truth))["pid"] if os.path.exists(truth) else 0
    facts["first"]["reported"] = wait_reports([first_pid], 60)
    facts["first"]["seconds"] = round(time.time() - t, 1)
    save()

    t = time.time()
    flood = [crash("flood%d" % i) for i in range(FLOOD)]
    pids = []
    for i, (p, truth) in enumerate(flood):
        p.wait(timeout=60)
        pids.append(json.load(open(truth))["pid"] if os.path.exists(truth) else 0)
    facts["flood"] = {"pids": pids, "statuses": [p.returncode for p, _ in flood],
                      "reported": wait_reports(pids, 120), "seconds": round(time.time() - t, 1)}
    save()

    # the root file system's files written since the marker
    rc, out = sh(["find", "/", "-xdev", "-newer", marker, "-not", "-type", "d", "-print"], timeout=60)
    facts["written"] = sorted(line for line in out.splitlines() if line != marker)
    facts["tmp"] = sorted(os.listdir("/tmp")) + sorted(os.listdir("/var/tmp"))
    rc, out = sh(["journalctl", "-q", "-o", "json", "--no-pager", "-b"], timeout=60)
    with open(os.path.join(OUT, "journal.json"), "w") as f:
        f.write(out)
    dest = os.path.join(OUT, "coredump")
    os.makedirs(dest, exist_ok=True)
    for name in sorted(os.listdir("/var/lib/systemd/coredump")):
        shutil.copy(os.path.join("/var/lib/systemd/coredump", name), dest)
    facts["coredump_dir"] = sorted(os.listdir(dest))
    facts["state"] = sorted(os.listdir("/var/lib/pycore"))
    facts["done"] = True
    save()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:   # said in results.json, then the machine powers off
        facts["error"] = "%s: %s" % (type(e).__name__, e)
        save()
    os.sync()
