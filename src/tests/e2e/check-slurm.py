"""pycore batch --shard as a Slurm array job, on a real Slurm cluster of one node.

README's "Beyond one machine" shows --shard under a Slurm array; this test
runs it.  It starts a cluster of its own, everything in one temporary
directory: munged with a fresh key, socket, pid, log and seed file there;
a slurm.conf there (this machine's CPUs and memory as one node
"localhost", one partition, select/cons_tres, proctrack/linuxproc,
task/none, no accounting and no cgroup, munge authentication through that
socket, ports on 127.0.0.1 that were free); slurmctld -D and slurmd -D with
SLURM_CONF naming it.  It waits until sinfo shows the node idle.

Real cores in a directory: the crash scenario's SIGSEGV on up to three
interpreters (one fingerprint), abort's SIGABRT twice, gcore snapshots of
a hang (threads.py) and of exceptions.py, and a core cut short.  Then
README's command, as an array of 4 tasks:

    sbatch --array=0-3 --wait --wrap 'pycore batch --jobs 1 \\
        --shard "$SLURM_ARRAY_TASK_ID/4" --skip-done "part-$SLURM_ARRAY_TASK_ID.jsonl" DUMPS \\
        >> "part-$SLURM_ARRAY_TASK_ID.jsonl"'

  * every task of the array ran on the node and COMPLETED, exit code 0
    (scontrol show job);
  * the parts hold every dump of the directory exactly once, each in the
    part that FNV-1a 64 of its path mod 4 names (computed here), and each
    record equals the record of one pycore batch over the whole directory;
  * pycore group over the 4 parts equals pycore group over the one batch:
    --format json (the records' input positions aside), and --format html:
    both dashboards pass check-html.py's markup check, and their totals,
    group rows (fingerprint, count, the crash they name) and group
    sections are the same;
  * a retried task resumes: the array submitted again appends nothing
    (--skip-done), and task K submitted alone after its part was cut
    inside its last record (what a task killed while writing leaves)
    analyzes that one dump again, and the parts still hold every dump
    exactly once.

The daemons (and any job step left) are stopped at the end, on every exit
path, and the directory removed: nothing of the test stays on the machine.
Skipped by name, saying why, when Slurm cannot run here: not root (slurmd
runs jobs as their users), munged or Slurm's programs missing
(scripts/install-deps installs Debian's munge and slurm packages), munged
or slurmd refusing to start for want of cgroup support or permissions, or
when the kernel's cores cannot be had.  Prints TAP.
"""
import ctypes
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pycoretest as cs
from pycoretest.htmlpage import Page, check_markup
from pycoretest.env import scaled
from pycoretest.run import drop_scratch

HERE = os.path.dirname(os.path.abspath(__file__))
Failure, Skip = cs.Failure, cs.Skip

SHARDS = 4
PROGRAMS = {"munged": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client",
            "sinfo": "slurm-client", "scontrol": "slurm-client", "scancel": "slurm-client"}
INSTALL = "scripts/install-deps installs Debian's munge, slurmctld, slurmd and slurm-client"


def free_ports(n):
    """N TCP ports of 127.0.0.1 free now (the kernel's choice)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def memory_mb():
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 1024


def die_with_parent():
    """In the child: SIGTERM when this test dies, even of SIGKILL
    (prctl PR_SET_PDEATHSIG, 1)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def tail(path, n=5):
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return "(no %s)" % os.path.basename(path)
    return " | ".join(lines[-n:])


class Cluster:
    """munged, slurmctld and slurmd of this test, in DIR; stop() ends them
    and whatever they started, whatever happened before."""

    def __init__(self, d):
        self.d = d
        self.procs = []          # (name, Popen), in start order
        self.conf = os.path.join(d, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        # a job's environment must not take the test's own Slurm variables
        # (a test run inside a Slurm job)
        for k in list(self.env):
            if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_", "SINFO_")) and k != "SLURM_CONF":
                del self.env[k]

    def path(self, *names):
        return os.path.join(self.d, *names)

    def start(self, name, argv, log):
        out = open(self.path(name + ".out"), "wb")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             env=self.env, start_new_session=True, cwd=self.d, preexec_fn=die_with_parent)
        out.close()
        self.procs.append((name, p))
        return p

    def died(self, name, p, log):
        """Why NAME (P) ended: a Skip when it says it cannot run here
        (cgroups, permissions), else a Failure, with its last lines."""
        text = "%s | %s" % (tail(self.path(name + ".out")), tail(log))
        why = "%s exited with %s: %s" % (name, p.returncode, text)
        if re.search(r"cgroup|Operation not permitted|Permission denied|must be run as root", text, re.I):
            return Skip(why)
        return Failure(why)

    def up(self):
        d = self.d
        mdir = self.path("munge")
        os.mkdir(mdir, 0o711)      # the socket's directory: others may reach the socket, not list it
        key = os.path.join(mdir, "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        os.write(fd, os.urandom(1024))
        os.close(fd)
        self.socket = os.path.join(mdir, "munge.socket")
        mlog = os.path.join(mdir, "munged.log")
        m = self.start("munged", ["munged", "--foreground", "--force", "--key-file=" + key,
                                  "--socket=" + self.socket, "--pid-file=" + os.path.join(mdir, "munged.pid"),
                                  "--log-file=" + mlog, "--seed-file=" + os.path.join(mdir, "munged.seed"),
                                  "--num-threads=2"], mlog)
        deadline = time.time() + scaled(20)
        while not os.path.exists(self.socket):
            if m.poll() is not None:
                raise self.died("munged", m, mlog)
            if time.time() > deadline:
                raise Failure("munged made no socket in 20 s: %s" % tail(self.path("munged.out")))
            time.sleep(0.1)

        ctld_port, d_port = free_ports(2)
        for sub in ("state", "spool"):
            os.mkdir(self.path(sub), 0o700)
        cpus = os.cpu_count() or 1
        conf = """# pycore's check-slurm.py: a cluster of one node, for this test only
ClusterName=pycoretest
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
CommunicationParameters=NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN
PartitionName=pycore Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""".format(ctld_port=ctld_port, d_port=d_port, sock=self.socket, d=d, cpus=cpus, mem=memory_mb() * 9 // 10)
        with open(self.conf, "w") as f:
            f.write(conf)

        ctld = self.start("slurmctld", ["slurmctld", "-D", "-i"], self.path("slurmctld.log"))
        # slurmd registers with slurmctld: let it listen first
        deadline = time.time() + scaled(30)
        while self.ctl(["scontrol", "ping"])[0] != 0:
            if ctld.poll() is not None:
                raise self.died("slurmctld", ctld, self.path("slurmctld.log"))
            if time.time() > deadline:
                raise Failure("slurmctld does not answer scontrol ping in 30 s: %s" % tail(self.path("slurmctld.log")))
            time.sleep(0.3)
        sd = self.start("slurmd", ["slurmd", "-D", "-N", "localhost"], self.path("slurmd.log"))
        deadline = time.time() + scaled(60)
        state = ""
        while True:
            rc, out, _ = self.ctl(["sinfo", "-h", "-N", "-n", "localhost", "-o", "%T"])
            state = out.strip()
            if rc == 0 and state == "idle":
                break
            for name, p in self.procs:
                if p.poll() is not None:
                    raise self.died(name, p, self.path(name + ".log") if name != "munged" else mlog)
            if time.time() > deadline:
                raise Failure("the node is %r, not idle, 60 s after slurmd started: %s | %s"
                              % (state, tail(self.path("slurmd.log")), tail(self.path("slurmctld.log"))))
            time.sleep(0.3)
        return "munged %d, slurmctld %d (port %d), slurmd %d (port %d): node localhost idle, %d CPUs" % (
            m.pid, ctld.pid, ctld_port, sd.pid, d_port, cpus)

    def ctl(self, argv, timeout=60):
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=self.env, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def ours(self):
        """Pids of the processes that run with this cluster's SLURM_CONF in
        their environment (slurmstepd and the jobs' processes), other than
        the daemons this test started."""
        mine = set(p.pid for _, p in self.procs)
        want = b"\0SLURM_CONF=" + self.conf.encode() + b"\0"
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) in mine or int(pid) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = b"\0" + f.read()
            except OSError:
                continue
            if want in env:
                found.append(int(pid))
        return found

    def stop(self):
        """Stop the daemons, newest first (SIGTERM, then SIGKILL after 15
        s), then anything still running with this cluster's SLURM_CONF.
        Returns what had to be killed."""
        killed = []
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=scaled(15))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    killed.append(name)
        for _ in range(3):
            left = self.ours()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append("pid %d" % pid)
                except OSError:
                    pass
            time.sleep(0.2)
        return killed


# where Debian's munge and slurm packages keep their state and logs: a
# cluster of this test's own writes nothing there
PACKAGE_DIRS = ["/etc/munge", "/etc/slurm", "/var/lib/munge", "/var/log/munge", "/run/munge", "/var/lib/slurm",
                "/var/log/slurm", "/var/spool/slurmd", "/var/spool/slurmctld", "/run/slurm"]


def package_files():
    """{path: (size, mtime)} of everything under PACKAGE_DIRS."""
    found = {}
    for top in PACKAGE_DIRS:
        for d, dirs, files in os.walk(top):
            for n in dirs + files:
                p = os.path.join(d, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                found[p] = (st.st_size, st.st_mtime_ns if not os.path.isdir(p) else 0)
    return found


def needs():
    """Why this machine cannot run a Slurm cluster, or None."""
    if os.geteuid() != 0:
        return "not root: slurmd starts each job as its user and must run as root"
    missing = sorted(p for p in PROGRAMS if not shutil.which(p))
    if missing:
        return "%s not installed (%s)" % (", ".join(missing), INSTALL)
    _, why = cs.kernel_core_usable()
    if why:
        return "kernel cores: %s" % why
    return None


def make_dumps(dumps, scratch):
    """Real cores in DUMPS (their truth files in SCRATCH): {name: core}."""
    targets = []
    for name in ("py3.13", "py3.12", "py3.11", "py3.10"):
        target, why = cs.interpreter(os.path.join(HERE, "interpreters", name + ".interp"))
        if not why and not target.root:
            targets.append((name, target))
    if not targets:
        raise Skip("none of py3.10-py3.13 is installed (src/tests/interpreters)")
    cores = {}

    def keep(name, core):
        path = os.path.join(dumps, name + ".core")
        shutil.move(core, path)
        cores[name] = path

    for name, target in targets[:3]:
        d = tempfile.mkdtemp(dir=scratch)
        keep("crash-" + name, cs.take_crash(target, d, ["crash.py"], signal.SIGSEGV)[0])
    newest = targets[0][1]
    for i in range(2):
        d = tempfile.mkdtemp(dir=scratch)
        keep("abort-%d" % i, cs.take_crash(newest, d, ["abort.py"], signal.SIGABRT)[0])
    for scenario in ("threads", "exceptions"):
        d = tempfile.mkdtemp(dir=scratch)
        keep("hang-" + scenario, cs.take_snapshot(newest, scenario, d)[0])
    cut = os.path.join(dumps, "cut-short.core")
    with open(cores["abort-0"], "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(200000))
    cores["cut-short"] = cut
    return cores


def records_of(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return cs.validator().check(text, os.path.basename(path)) if text.strip() else []


def comparable(record):
    """A record without what differs between two analyses of one dump."""
    r = json.loads(json.dumps(record))
    r.pop("analysis", None)
    return r


def group(args, files, bad=0):
    """pycore group's output over FILES, which hold BAD lines that are not
    records (exit 1, and stderr counts them)."""
    p = subprocess.run([cs.PYCORE, "group"] + args + files, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=scaled(120))
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != (1 if bad else 0) or (bad and "%d bad line" % bad not in err):
        raise Failure("pycore group %s: exit %d: %s" % (" ".join(args), p.returncode, err[-300:]))
    return p.stdout.decode("utf-8")


def groups_json(files, bad=0):
    out = []
    for line in group(["--format", "json"], files, bad).splitlines():
        g = json.loads(line)
        for seen in ("first_seen", "last_seen"):
            if g["seen_by"] == "mtime":
                g[seen].pop("record", None)
        out.append(g)
    return out


def dashboard(files, label):
    """The dashboard of FILES, checked as check-html.py checks markup:
    (totals, [(hash, count, crash) per row], [each group section's text])."""
    page = Page(group(["--format", "html"], files))
    check_markup(page, label)
    totals = [(n.attrs["id"], n.text()) for n in page.root.find("span")
              if n.attrs.get("id") in ("reports", "groups", "errors", "bad")]
    rows = []
    for r in page.root.find("tr", "group-row"):
        cells = [c for c in r.children if not isinstance(c, str)]
        rows.append((r.attrs["data-hash"], int(r.attrs["data-count"]), cells[2].text()))
    sections = [s.text() for s in page.root.find("section", "group")]
    return totals, rows, sections


def first_difference(a, b):
    """Where dashboards A and B (dashboard()'s tuples) first differ."""
    for what, x, y in zip(("totals", "rows", "sections"), a, b):
        if x == y:
            continue
        if len(x) != len(y):
            return "%s: %d and %d" % (what, len(x), len(y))
        i = [n for n in range(len(x)) if x[n] != y[n]][0]
        s, t = str(x[i]), str(y[i])
        c = next((n for n in range(min(len(s), len(t))) if s[n] != t[n]), min(len(s), len(t)))
        return "%s %d, at character %d: %r and %r" % (what, i + 1, c, s[max(0, c - 80):c + 80],
                                                      t[max(0, c - 80):c + 80])
    return "nowhere"


def scontrol_tasks(cluster, job):
    """{array task id: (state, exit code, node)} of JOB."""
    rc, out, err = cluster.ctl(["scontrol", "-o", "show", "job", str(job)])
    if rc != 0:
        raise Failure("scontrol show job %s: %s" % (job, err.strip()))
    tasks = {}
    for line in out.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if "ArrayTaskId" in f:
            tasks[f["ArrayTaskId"]] = (f.get("JobState"), f.get("ExitCode"), f.get("NodeList"))
    return tasks


def submit(cluster, work, dumps, array):
    """sbatch --wait of README's command over DUMPS for the tasks ARRAY
    ("0-3", "2"); returns (job id, {task: (state, exit, node)}, seconds)."""
    cmd = ("%s batch --jobs 1 --shard \"$SLURM_ARRAY_TASK_ID/%d\" --skip-done \"part-$SLURM_ARRAY_TASK_ID.jsonl\" "
           "%s >> \"part-$SLURM_ARRAY_TASK_ID.jsonl\"" % (shlex.quote(cs.PYCORE), SHARDS, shlex.quote(dumps)))
    t = time.time()
    try:
        p = subprocess.run(["sbatch", "--parsable", "--wait", "--array=" + array, "--job-name=pycore-shards",
                            "-D", work, "-o", os.path.join(work, "task-%a.log"), "--wrap", cmd],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=cluster.env, timeout=scaled(600))
    except subprocess.TimeoutExpired:
        cluster.ctl(["scancel", "--name=pycore-shards"])
        raise Failure("the array %s did not finish in 600 s: %s" % (array, tail(cluster.path("slurmctld.log"))))
    secs = time.time() - t
    out = p.stdout.decode().strip()
    job = out.split(";")[0].splitlines()[0] if out else ""
    if p.returncode != 0 or not job.isdigit():
        logs = " | ".join("%s: %s" % (n, tail(os.path.join(work, n), 3))
                          for n in sorted(os.listdir(work)) if n.startswith("task-"))
        raise Failure("sbatch --array=%s: exit %d, %r %s; %s" % (array, p.returncode, out, p.stderr.decode().strip(),
                                                                logs))
    return int(job), scontrol_tasks(cluster, job), secs


def run(tap, cluster, work):
    tap.diag(cluster.up())
    dumps = os.path.join(work, "dumps")
    os.mkdir(dumps)
    scratch = os.path.join(work, "scratch")
    os.mkdir(scratch)
    cores = make_dumps(dumps, scratch)
    paths = sorted(cores.values())

    job, tasks, secs = submit(cluster, work, dumps, "0-%d" % (SHARDS - 1))
    want_tasks = dict((str(k), ("COMPLETED", "0:0", "localhost")) for k in range(SHARDS))
    if tasks != want_tasks:
        raise Failure("array job %d: tasks %s, want every one COMPLETED 0:0 on localhost" % (job, tasks))
    parts = [os.path.join(work, "part-%d.jsonl" % k) for k in range(SHARDS)]
    missing = [p for p in parts if not os.path.exists(p)]
    if missing:
        raise Failure("array job %d wrote no %s" % (job, ", ".join(missing)))
    by_part = [records_of(p) for p in parts]
    seen = {}
    for k, records in enumerate(by_part):
        for r in records:
            path = r["input"]["path"]
            if path in seen:
                raise Failure("%s is in part %d and part %d" % (path, seen[path], k))
            seen[path] = k
            if cs.fnv1a64(path.encode()) % SHARDS != k:
                raise Failure("%s is in part %d, FNV-1a 64 mod %d says %d"
                              % (path, k, SHARDS, cs.fnv1a64(path.encode()) % SHARDS))
    if sorted(seen) != paths:
        raise Failure("the parts hold %s, the directory %s" % (sorted(seen), paths))
    tap.ok("Slurm array job %d of %d tasks, pycore batch --shard K/%d: %d dumps (%s), every one in one part, "
           "the part FNV-1a 64 names; %.1f s" % (job, SHARDS, SHARDS, len(paths),
                                                "+".join(str(len(r)) for r in by_part), secs))

    whole = os.path.join(work, "all.jsonl")
    with open(whole, "wb") as f:
        p = subprocess.run([cs.PYCORE, "batch", dumps], stdout=f, stderr=subprocess.PIPE, timeout=scaled(600))
    if p.returncode != 0:
        raise Failure("pycore batch %s: exit %d: %s" % (dumps, p.returncode, p.stderr.decode()[-300:]))
    one = dict((r["input"]["path"], comparable(r)) for r in records_of(whole))
    if sorted(one) != paths:
        raise Failure("one batch over %s: records for %s" % (dumps, sorted(one)))
    differ = [path for records in by_part for r in records if comparable(r) != one[r["input"]["path"]]]
    if differ:
        raise Failure("the array's records of %s differ from one batch's" % differ)
    errors = sorted(os.path.basename(p) for p, r in one.items() if "error" in r)

    a, b = groups_json(parts), groups_json([whole])
    if a != b:
        raise Failure("group --format json: over the parts %s, over one batch %s" % (a, b))
    if len(a) < 3:
        raise Failure("only %d groups: %s" % (len(a), [(g["fingerprint"]["kind"], g["count"]) for g in a]))
    da, db = dashboard(parts, "dashboard of the parts"), dashboard([whole], "dashboard of one batch")
    if da != db:
        raise Failure("the dashboards differ: %s" % first_difference(da, db))
    dr = dashboard(parts[::-1], "dashboard of the parts in reverse")
    if dr != db:
        raise Failure("the dashboard of the parts in reverse order differs: %s" % first_difference(dr, db))
    want_rows = [(g["fingerprint"]["hash"], g["count"]) for g in b]
    if [r[:2] for r in da[1]] != want_rows or len(da[2]) != len(b):
        raise Failure("dashboard rows %s, group --format json's %s" % (da[1], want_rows))
    tap.ok("group over the %d parts (in either order) equals group over one batch: --format json, and the html "
           "dashboards' "
           "totals, rows and sections: %s; error records: %s"
           % (SHARDS, "; ".join("%d x %s" % (r[1], r[2]) for r in da[1]), ", ".join(errors) or "none"))

    # retried: nothing new; then a task killed while writing its last record
    job2, tasks2, secs2 = submit(cluster, work, dumps, "0-%d" % (SHARDS - 1))
    if tasks2 != want_tasks:
        raise Failure("the array submitted again: tasks %s" % tasks2)
    again = [records_of(p) for p in parts]
    if again != by_part:
        raise Failure("the array submitted again changed the parts: %s" % [len(r) for r in again])
    k = max(range(SHARDS), key=lambda i: len(by_part[i]))
    raw = open(parts[k], "rb").read()
    lines = raw.splitlines(True)
    last = lines[-1]
    with open(parts[k], "wb") as f:
        f.write(b"".join(lines[:-1]) + last[:len(last) // 2])
    job3, tasks3, secs3 = submit(cluster, work, dumps, str(k))
    if tasks3 != {str(k): want_tasks[str(k)]}:
        raise Failure("task %d submitted alone: %s" % (k, tasks3))
    resumed = records_of_lenient(parts[k])
    cut_path = json.loads(last)["input"]["path"]
    got = sorted(r["input"]["path"] for r in resumed)
    want = sorted(r["input"]["path"] for r in by_part[k])
    if got != want:
        raise Failure("part %d after a retry of its cut last record (%s): records of %s, want %s"
                      % (k, os.path.basename(cut_path), got, want))
    a2 = groups_json(parts, bad=1)
    if a2 != b:
        raise Failure("group over the parts after the retry: %s, one batch's %s" % (a2, b))
    tap.ok("retried: the array again appends nothing (job %d); task %d alone after its part was cut inside "
           "its last record analyzes %s again, on a line of its own (job %d); group over the parts counts the "
           "cut line as 1 bad line and its groups are still one batch's"
           % (job2, k, os.path.basename(cut_path), job3))
    return None


def records_of_lenient(path):
    """The whole records of PATH (a line that is not a record skipped)."""
    out = []
    for line in open(path, "rb").read().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def main():
    tap = cs.TAP()
    name = "Slurm array of pycore batch --shard"
    why = needs()
    if why:
        tap.skip(name, why)
        return tap.done()
    before = package_files()
    work = tempfile.mkdtemp(prefix="pycore-slurm-")
    os.chmod(work, 0o755)
    cluster = Cluster(work)

    def stop_on_signal(signo, frame):
        raise SystemExit("check-slurm.py: %s" % signal.Signals(signo).name)
    old = dict((s, signal.signal(s, stop_on_signal)) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    try:
        tap.run(name, run, tap, cluster, work)
    finally:
        killed = cluster.stop()
        for s, h in old.items():
            signal.signal(s, h)
        left = [p for _, p in cluster.procs if p.poll() is None] + cluster.ours()
        drop_scratch(tap, work)
    after = package_files()
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if left:
        tap.not_ok("the cluster stopped", "still running: %s" % left)
    elif changed:
        tap.not_ok("the cluster stopped", "files of Debian's munge and slurm packages changed: %s" % changed[:10])
    elif cluster.procs:
        tap.ok("the cluster stopped: munged, slurmctld and slurmd ended%s, nothing left with its SLURM_CONF, "
               "nothing written under %d directories of the packages"
               % ("; killed: " + ", ".join(killed) if killed else " on SIGTERM", len(PACKAGE_DIRS)))
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
