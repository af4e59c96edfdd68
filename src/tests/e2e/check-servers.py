"""Where Python runs in servers: greenlets, uvloop, nested interpreters.

- gunicorn with gevent workers (Debian's gunicorn and python3-gevent, on
  Debian's python3.11): four requests block their greenlets in
  threading.Lock.acquire, Event.wait, a socket's recv and time.sleep (all
  gevent's in the worker); the worker then writes what it says of every
  greenlet (gc.get_objects(), gr_frame through f_back) and of its OS
  threads, and gcore takes its core.  pycore must report every suspended
  greenlet under the worker's thread with exactly its stack, the hub
  named and running, the main greenlet, and each blocked stack in the
  text, --format collapsed and HTML, and --redact must hide the sleeping
  greenlet's secret local.
- uvicorn on uvloop (Debian's uvicorn and python3-uvloop): a request blocks
  its task, and so the loop's thread, after recording the loop, its
  thread and the task; the loop must be reported running, on that
  thread, that task running and no other.
- Three interpreters nested on one OS thread (3.12+, every interpreter of
  src/tests/interpreters/ from 3.12; the scenario subinterp_nested.py):
  with --native-all, each interpreter's thread gets its own slice of the
  one native stack: exactly one eval loop call each (its own), the
  innermost interpreter the top of the stack, the main one _start, the
  Python frames the ones each level recorded.

Prints TAP; exit 0 pass, 1 fail."""
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
import pycoretest as cs  # noqa: E402
from pycoretest.env import scaled

SERVERS = os.path.join(HERE, "servers")
PYTHON311 = "/usr/bin/python3.11"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def missing(modules, programs):
    for p in programs:
        if not os.access(p, os.X_OK):
            return "%s not installed" % p
    if not os.access(PYTHON311, os.X_OK):
        return "%s not installed" % PYTHON311
    for m in modules:
        r = subprocess.run([PYTHON311, "-c", "import " + m], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return "%s's module %s not installed" % (PYTHON311, m)
    return None


class Server:
    """A server started in its own session, stopped (the whole group) on
    exit."""

    def __init__(self, args, work, env):
        self.log = open(os.path.join(work, "server.log"), "wb")
        self.p = subprocess.Popen(args, cwd=work, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                  start_new_session=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.p.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                pass
        self.log.close()


def connect(port, timeout=30):
    end = time.time() + scaled(timeout)
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=scaled(10))
        except OSError:
            if time.time() > end:
                raise cs.Failure("the server did not listen on port %d in %d s" % (port, timeout))
            time.sleep(0.2)


def wait_file(path, timeout=30):
    end = time.time() + scaled(timeout)
    while not os.path.exists(path):
        if time.time() > end:
            raise cs.Failure("%s not written in %d s" % (path, timeout))
        time.sleep(0.1)
    return json.load(open(path))


def gcore(pid, work):
    g = subprocess.run(["gcore", "-o", os.path.join(work, "core"), str(pid)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=scaled(120))
    core = os.path.join(work, "core.%d" % pid)
    if g.returncode != 0 or not os.path.exists(core):
        raise cs.Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-500:])
    return core


def analyze(core, fmt, extra=()):
    rc, out, err = cs.run_pycore(["analyze", "--format", fmt] + list(extra) + [core])
    if rc != 0:
        raise cs.Failure("pycore --format %s: exit %d: %s" % (fmt, rc, err.strip()))
    return out


def frames_of(stack):
    return [(f["function"], f["file"], f["line"]) for f in stack if f["kind"] == "python"]


def check_gevent(work):
    port = free_port()
    truth_path = os.path.join(work, "truth.json")
    env = dict(os.environ, PYCORE_TRUTH=truth_path, PYTHONDONTWRITEBYTECODE="1")
    args = [PYTHON311, "/usr/bin/gunicorn", "-k", "gevent", "-w", "1", "--bind", "127.0.0.1:%d" % port,
            "--chdir", SERVERS, "--timeout", "600", "gevent_app:app"]
    blocked = {"/lock": "block_lock", "/event": "block_event", "/recv": "block_recv", "/sleep": "block_sleep"}
    with Server(args, work, env):
        socks = []
        for path in blocked:
            s = connect(port)
            s.sendall(("GET %s HTTP/1.0\r\n\r\n" % path).encode())
            socks.append(s)
        time.sleep(0.5)
        s = connect(port)
        s.sendall(b"GET /truth HTTP/1.0\r\n\r\n")
        s.settimeout(30)
        s.recv(4096)
        truth = wait_file(truth_path)
        core = gcore(truth["pid"], work)
        for s in socks:
            s.close()
    report = cs.load_report(analyze(core, "json"))
    (interp,) = report["interpreters"]
    if interp["greenlet_version"] != truth["greenlet"]:
        raise cs.Failure("greenlet_version %r, the worker runs %r" % (interp["greenlet_version"], truth["greenlet"]))
    threads = interp["threads"]
    if sorted(t["tid"] for t in threads) != [t for t in truth["tids"] if t in [x["tid"] for x in threads]] or \
       len(truth["tids"]) != 1 or threads[0]["tid"] != truth["tids"][0]:
        raise cs.Failure("threads %s, the worker's /proc/self/task %s" % ([t["tid"] for t in threads], truth["tids"]))
    got = dict((g["address"], g) for g in threads[0]["greenlets"])
    if interp["greenlets"]:
        raise cs.Failure("greenlets of no thread: %s" % [g["address"] for g in interp["greenlets"]])
    seen_blocked = set()
    for w in truth["greenlets"]:
        if w["address"] == truth["self"] or w["state"] == "dead":
            continue  # the truth's writer has finished since
        g = got.get(w["address"])
        label = "greenlet %s (%s)" % (w["address"], w["type"])
        if g is None:
            raise cs.Failure("%s is not in the report" % label)
        if g["type"] != w["type"] or g["main"] != w["main"] or g["parent"] != w["parent"]:
            raise cs.Failure("%s: type %s main %s parent %s, the worker says %s %s %s"
                             % (label, g["type"], g["main"], g["parent"], w["type"], w["main"], w["parent"]))
        want = [(f["function"], f["file"], f["line"]) for f in w["stack"]]
        if g["state"] == "running" and w["state"] == "suspended" and (w["main"] or g["hub"]):
            # switched to since the truth (the hub, or the worker's loop
            # woken): its stack is the thread's now
            if frames_of(threads[0]["frames"]) != want:
                raise cs.Failure("%s runs: the thread's stack %s, the worker says %s"
                                 % (label, frames_of(threads[0]["frames"]), want))
            continue
        if g["state"] != w["state"] or frames_of(g["stack"]) != want:
            raise cs.Failure("%s: %s %s, the worker says %s %s" % (label, g["state"], frames_of(g["stack"]),
                                                                  w["state"], want))
        seen_blocked |= set(f[0] for f in want) & set(blocked.values())
    if seen_blocked != set(blocked.values()):
        raise cs.Failure("blocked greenlets %s, the requests block in %s" % (sorted(seen_blocked), sorted(blocked.values())))
    hubs = [g for g in got.values() if g["hub"]]
    if len(hubs) != 1 or hubs[0]["type"] != "gevent.hub.Hub" or hubs[0]["state"] != "running" or \
       hubs[0]["run"] != "Hub.run":
        raise cs.Failure("hubs %s" % [(g["address"], g["type"], g["state"], g["run"]) for g in hubs])
    if frames_of(threads[0]["frames"])[0][0] != "run":
        raise cs.Failure("the thread's stack %s is not the hub's" % frames_of(threads[0]["frames"]))
    if sum(g["main"] for g in got.values()) != 1:
        raise cs.Failure("%d main greenlets" % sum(g["main"] for g in got.values()))
    text = analyze(core, "text")
    if "Greenlets of thread %d" % truth["tids"][0] not in text or "gevent hub, running" not in text:
        raise cs.Failure("text: no greenlets section under the thread, or no hub")
    html = analyze(core, "html")
    missing_html = [a for a in got if "Greenlet %s " % a not in html]
    if missing_html:
        raise cs.Failure("html: no greenlet %s" % missing_html)
    collapsed = analyze(core, "collapsed").splitlines()
    for w in truth["greenlets"]:
        names = [f["function"] for f in w["stack"]]
        if set(names) & set(blocked.values()):
            line = ";".join("%s (%s:%d)" % (f["function"], f["file"], f["line"]) for f in reversed(w["stack"]))
            if not any(l.rsplit(" ", 1)[0] == line for l in collapsed):
                raise cs.Failure("collapsed: no line %r" % line)
    out = analyze(core, "json", ["--locals", "--redact"])
    if "s3cr3t-" in out:
        raise cs.Failure("--redact: the sleeping greenlet's api_token is in the report")
    red = [e for e in cs.load_report(out)["redacted"] if e["in"] == "greenlet" and e["name"] == "api_token"]
    sleeper = [w["address"] for w in truth["greenlets"] if "block_sleep" in [f["function"] for f in w["stack"]]]
    if len(red) != 1 or [red[0]["greenlet"]] != sleeper or red[0]["thread"] != truth["tids"][0]:
        raise cs.Failure("--redact: redactions %s, the secret is in greenlet %s" % (red, sleeper))
    woven = check_gevent_native(core, threads[0], got)
    return "%d greenlets, 4 blocked ones with their stacks, the hub, a secret redacted; %s" % (len(got), woven)


def check_gevent_native(core, thread, greenlets):
    """--native on the worker (#36): the running hub's Python frames woven
    into its own slice of the stack (each run right inside an eval loop
    frame, each eval loop frame of the slice holding one), no "placed
    after" warning, and every frame above the slice marked with the
    suspended greenlet whose slice holds it, the outermost the main one."""
    report = cs.load_report(analyze(core, "json", ["--native-all"]))
    placed = [w for w in report["warnings"] if "placed after" in str(w)]
    if placed:
        raise cs.Failure("--native: %s" % placed[0])
    (t,) = [x for x in report["interpreters"][0]["threads"] if x["tid"] == thread["tid"]]
    if frames_of(t["frames"]) != frames_of(thread["frames"]):
        raise cs.Failure("--native: Python frames %s, without it %s" % (frames_of(t["frames"]), frames_of(thread["frames"])))
    frames = t["frames"]
    first = next((i for i, f in enumerate(frames) if f["kind"] == "native" and f["greenlet"]), len(frames))
    for i, f in enumerate(frames[:first]):
        eval_loop = f["kind"] == "native" and (f["function"] or "").startswith("_PyEval_EvalFrameDefault")
        if eval_loop and not f["inlined"] and (i == 0 or frames[i - 1]["kind"] != "python"):
            raise cs.Failure("--native: the hub's eval loop frame %s holds no Python frame" % f["address"])
        if f["kind"] == "python" and frames[i + 1]["kind"] != "python" and \
           not (frames[i + 1]["function"] or "").startswith("_PyEval_EvalFrameDefault"):
            raise cs.Failure("--native: Python frame %s not right inside an eval loop frame" % f["function"])
    main = [a for a, g in greenlets.items() if g["main"]]
    above = frames[first:]
    if not above or any(f["kind"] != "native" or f["greenlet"] not in greenlets or
                        greenlets[f["greenlet"]]["state"] != "suspended" for f in above) or \
       above[-1]["greenlet"] != main[0]:
        raise cs.Failure("--native: frames above the hub's slice %s, the main greenlet %s" %
                         ([(f["function"], f["greenlet"]) for f in above], main))
    text = analyze(core, "text", ["--native"])
    if "[greenlet %s]" % main[0] not in text or "placed after" in text:
        raise cs.Failure("--native text: no frame marked [greenlet %s], or a 'placed after' warning" % main[0])
    return "--native: the hub's %d frames woven, %d above it in %d greenlets' slices" % (
        first, len(above), len(set(f["greenlet"] for f in above)))


def check_uvloop(work):
    port = free_port()
    truth_path = os.path.join(work, "truth.json")
    env = dict(os.environ, PYCORE_TRUTH=truth_path, PYTHONDONTWRITEBYTECODE="1")
    args = [PYTHON311, "/usr/bin/uvicorn", "--loop", "uvloop", "--host", "127.0.0.1", "--port", str(port),
            "--app-dir", SERVERS, "uvloop_app:app"]
    with Server(args, work, env):
        s = connect(port)
        s.sendall(b"GET /block HTTP/1.0\r\n\r\n")
        truth = wait_file(truth_path)
        time.sleep(0.3)  # into time.sleep
        core = gcore(truth["pid"], work)
        s.close()
    report = cs.load_report(analyze(core, "json"))
    loops = [l for i in report["interpreters"] for l in (i["asyncio"] or []) if l["loop"] == truth["loop"]]
    if len(loops) != 1:
        raise cs.Failure("loop %s not reported (loops: %s)" % (truth["loop"], [l["loop"] for i in report["interpreters"]
                                                                               for l in (i["asyncio"] or [])]))
    l = loops[0]
    if l["type"] != truth["loop_type"] or l["running"] is not True or l["thread"] != truth["thread"]:
        raise cs.Failure("loop: type %s running %s thread %s, the process says %s running on %s"
                         % (l["type"], l["running"], l["thread"], truth["loop_type"], truth["thread"]))
    running = [t["address"] for t in l["tasks"] if t["running"]]
    if running != [truth["task"]]:
        raise cs.Failure("running tasks %s, the process runs %s" % (running, truth["task"]))
    text = analyze(core, "text")
    if "not running" in text:
        raise cs.Failure("text: a loop said not running")
    return "uvloop.Loop running on thread %d, task %s running" % (l["thread"], truth["task"])


def check_nested(target, work):
    core, truth_path, _ = cs.take_snapshot(target, "subinterp_nested", work)
    truth = json.load(open(truth_path))
    # a root's interpreter is stripped: its eval loop is found by the
    # separate debug files beside the root (scripts/sid-root)
    debug = ["--debug-dir", target.root + ".debug/usr/lib/debug"] if target.root else []
    rc, out, err = cs.run_pycore(["analyze", "--format", "json", "--native-all"] + target.pycore_args() + debug + [core])
    if rc != 0:
        raise cs.Failure("pycore exit %d: %s" % (rc, err.strip()))
    report = cs.load_report(out)
    mine = [(i["id"], t) for i in report["interpreters"] for t in i["threads"] if t["tid"] == truth["tid"]]
    if len(mine) != 3:
        raise cs.Failure("%d thread states on OS thread %d, the process nests 3" % (len(mine), truth["tid"]))
    # the levels innermost first: the innermost's Python frames are the
    # last level's
    want = list(reversed(truth["levels"]))
    slices = []
    for level in want:
        match = [t for _, t in mine if [f["function"] for f in t["frames"] if f["kind"] == "python"] == level]
        if len(match) < 1:
            raise cs.Failure("no interpreter runs %s: %s" % (level, [[f["function"] for f in t["frames"]
                                                                      if f["kind"] == "python"] for _, t in mine]))
        slices.append(match[0])
        mine = [(i, t) for i, t in mine if t is not match[0]]
    for n, t in enumerate(slices):
        natives = [f["function"] for f in t["frames"] if f["kind"] == "native"]
        evals = sum(1 for f in natives if f and f.startswith("_PyEval_EvalFrameDefault"))
        if evals != 1:
            raise cs.Failure("level %d from the innermost: %d eval loop frames in its slice, it runs 1: %s"
                             % (n, evals, natives))
        if t["frames"][0]["kind"] != "native":
            raise cs.Failure("level %d: its slice begins with a Python frame" % n)
        if (n == 2) != ("_start" in natives):
            raise cs.Failure("level %d: _start %s its slice" % (n, "not in" if n == 2 else "in"))
    sleeps = [n for n, t in enumerate(slices)
              if any("sleep" in (f["function"] or "") for f in t["frames"] if f["kind"] == "native")]
    if sleeps != [0]:
        raise cs.Failure("the thread's sleep is in the slices of levels %s from the innermost, not the "
                         "innermost's alone" % sleeps)
    return "3 interpreters on OS thread %d, one eval loop call in each slice" % truth["tid"]


def main():
    tap = cs.TAP()
    why = missing(["gevent", "greenlet"], ["/usr/bin/gunicorn"])
    if why:
        tap.skip("gunicorn gevent worker", why)
    else:
        work = tempfile.mkdtemp(prefix="pycore-gevent-")
        cs.run_in(tap, "gunicorn gevent worker: every greenlet", work, check_gevent, work)
    why = missing(["uvloop", "uvicorn"], ["/usr/bin/uvicorn"])
    if why:
        tap.skip("uvicorn on uvloop", why)
    else:
        work = tempfile.mkdtemp(prefix="pycore-uvloop-")
        cs.run_in(tap, "uvicorn on uvloop: the loop runs", work, check_uvloop, work)
    for path in sorted(glob.glob(os.path.join(HERE, "interpreters", "*.interp"))):
        name = os.path.basename(path)[:-7]
        label = "%s nested subinterpreters" % name
        target, why = cs.interpreter(path)
        if why:
            tap.skip(label, why)
            continue
        if target.minor() < 12:
            tap.skip(label, "interpreters nest on one OS thread's native stack pycore slices from 3.12")
            continue
        work = target.workdir("pycore-nested-%s-" % name)
        cs.run_in(tap, label, work, check_nested, target, work)
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
