"""A container's core read on the host, which lacks the container's image.

Each interpreter runs the threads scenario in a root filesystem entered as a
container runtime does (unshare --mount --pid --fork, then chroot; the
scenario is not the namespace's PID 1, a shell is): the Debian unstable
root's interpreters in that root (scripts/sid-root), pyenv's and Debian's
own in a root made of this machine's /usr with the interpreter mounted at
/opt/python, a path this machine does not have.  Its kernel core (SIGQUIT)
is read on the host:

  - with no sysroot: the runtime found by its debug offsets (3.13+) or the
    validated scan (3.6-3.12), every thread and frame as the process
    recorded them;
  - with --sysroot DIR (the files the process mapped, copied through
    /proc/PID/root, and the frames' source files), --sysroot image.tar
    (tar -C DIR -cf) and image.tar.zst: the interpreter's file found under
    the sysroot, the stacks right, and the tars' JSON reports the
    directory's but for the fields that name the sysroot;
  - with --sysroot an OCI image layout of two layers built here: the base
    holds a copy of the interpreter's file whose build-id was changed and a
    file of libpython's directory, the second layer an opaque marker over
    that directory with the right interpreter file only, and a whiteout of
    another mapped file: the report must be the one of the directory the two
    layers make once applied (so the whiteout and the opaque directory
    matter), the stacks right.

Then bad images: not a tar, a truncated tar, a member escaping the root, a
symbolic link loop, an OCI layout without its index: each one line on
standard error and exit 9.  Output: TAP, one line per case; a case that
cannot run here is a skip naming what is missing.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

import pycoretest as pt
from pycoretest import interpreters
from pycoretest.env import scaled, SCENARIOS

NAMES = ["py3.6", "py3.7", "py3.8", "py3.9", "py3.10", "py3.11", "py3.12", "py3.13", "debian3.11",
         "sid3.13", "sid3.14", "sid3.15"]
EXIT_IMAGE = 9


# ------------------------------------------------------------------------
# A container: a root, a mount namespace, a PID namespace, chroot
# ------------------------------------------------------------------------

class Container:
    """NAME's interpreter in a root filesystem: (root on the host, the
    executable inside, the mounts to make in the namespace, environment)."""

    def __init__(self, name):
        self.name = name
        self.scratch = None
        exe, where = interpreters.where(name)
        if exe is None:
            raise pt.Skip(where)
        if where == "sid":
            target, why = interpreters.find(name)
            if why:
                raise pt.Skip(why)
            self.root, self.exe, self.mounts, self.env = target.root, target.exe, [], {}
            return
        # this machine's /usr, the interpreter's prefix at /opt/python
        self.scratch = tempfile.mkdtemp(prefix="pycore-container-")
        self.root = os.path.join(self.scratch, "root")
        for d in ("usr", "tmp", "opt/python", "proc"):
            os.makedirs(os.path.join(self.root, d))
        for link in ("bin", "lib", "lib64", "sbin"):
            if os.path.islink("/" + link):
                os.symlink(os.readlink("/" + link).lstrip("/"), os.path.join(self.root, link))
        self.mounts = [("/usr", "/usr")]
        if name.startswith("debian"):
            # its executable alone, moved: its standard library stays at /usr
            os.makedirs(os.path.join(self.root, "opt/python/bin"))
            base = os.path.basename(exe)
            open(os.path.join(self.root, "opt/python/bin", base), "w").close()
            self.mounts.append((exe, "/opt/python/bin/" + base))
            self.exe = "/opt/python/bin/" + base
            self.env = {"PYTHONHOME": "/usr"}
        else:
            prefix = os.path.dirname(os.path.dirname(exe))
            self.mounts.append((prefix, "/opt/python"))
            self.exe = "/opt/python/bin/" + os.path.basename(exe)
            # its RUNPATH names the prefix on this machine
            self.env = {"LD_LIBRARY_PATH": "/opt/python/lib"}

    def host(self, inside):
        return self.root + inside

    def inside(self, host):
        return host[len(self.root):]

    def inside_of(self, tree, host):
        return host[len(tree):]

    def close(self):
        if self.scratch and os.environ.get("KEEP_CORES") != "1":
            shutil.rmtree(self.scratch, ignore_errors=True)

    def snapshot(self, work, scenario="threads"):
        """The kernel's core of SCENARIO once READY, its files copied out
        while it runs (through /proc/PID/root): (core, truth, the inside
        paths the process mapped, the host pid)."""
        pattern, why = pt.kernel_core_usable()
        if why:
            raise pt.Skip(why)
        shutil.copytree(SCENARIOS, os.path.join(work, "scenarios"))
        truth_path = os.path.join(work, "truth.json")
        script = ('for m; do case $m in *=*) ;; *) continue;; esac; src=${m%%=*}; dst=${m#*=}; '
                  'mount --bind "$src" "$ROOT$dst" || exit 97; done; '
                  'cd "$ROOT" && exec chroot "$ROOT" /bin/sh -c \'cd "$1" && shift && '
                  'ulimit -c unlimited && "$@"; exit $?\' sh "$WORK" "$EXE" "$SCRIPT" "$TRUTH"')
        env = dict(os.environ, ROOT=self.root, WORK=self.inside(work), EXE=self.exe,
                   SCRIPT=self.inside(os.path.join(work, "scenarios", scenario + ".py")),
                   TRUTH=self.inside(truth_path), **self.env)
        cmd = ["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script, "sh"] + \
              ["%s=%s" % m for m in self.mounts]

        def enter():
            signal.signal(signal.SIGQUIT, signal.SIG_DFL)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, preexec_fn=enter)
        try:
            if not pt.wait_ready(proc):
                raise pt.Failure("the scenario did not get ready in the container (exit %s)" % proc.poll())
            pid = python_under(proc.pid)
            if pid is None:
                raise pt.Failure("no python process under the container's unshare (%d)" % proc.pid)
            mapped = [self.inside(p) if p.startswith(self.root + "/") else p for p in mapped_files(pid)]
            self.files = copy_out(pid, mapped, truth_sources(truth_path), os.path.join(work, "files"))
            time.sleep(0.5)   # to its last blocking call, as the other kernel snapshots wait
            os.kill(pid, signal.SIGQUIT)
            proc.communicate(timeout=scaled(60))
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        cores = [f for f in os.listdir(work) if f.startswith("core")]
        if not cores:
            raise pt.Failure("SIGQUIT: the kernel wrote no core in %s" % work)
        return os.path.join(work, cores[0]), json.load(open(truth_path)), mapped, pid


def children():
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open("/proc/%s/stat" % d).read()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(d))
    return kids


def python_under(pid):
    """The scenario's host pid: the descendant of PID whose command is python."""
    kids = children()
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        try:
            comm = open("/proc/%d/comm" % p).read().strip()
        except OSError:
            continue
        if comm.startswith("python"):
            return p
        todo += kids.get(p, [])
    return None


def mapped_files(pid):
    """The files the process maps (named from this machine's root: a file
    inside the container's root is the root's path followed by its own)."""
    out = []
    for line in open("/proc/%d/maps" % pid):
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and not parts[5].rstrip().endswith(")"):
            path = parts[5].rstrip("\n")
            if path not in out:
                out.append(path)
    return out


def truth_sources(truth_path):
    names = set()
    for t in json.load(open(truth_path))["threads"]:
        names.update(f["file"] for f in t["frames"] if f["file"].startswith("/"))
    return sorted(names)


def copy_out(pid, mapped, sources, dest):
    """MAPPED and SOURCES (inside paths) copied from the process's root to
    DEST at the same paths: the unpacked image."""
    for p in mapped + sources:
        src = "/proc/%d/root%s" % (pid, p)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(dest + p), exist_ok=True)
            shutil.copyfile(src, dest + p)
    return dest


# ------------------------------------------------------------------------
# Reports
# ------------------------------------------------------------------------

def analyze(core, args=()):
    rc, out, err = pt.run_pycore(["analyze", "--format", "json"] + list(args) + [core])
    if rc != 0:
        raise pt.Failure("pycore %s: exit %d: %s" % (" ".join(args), rc, err.strip()))
    return pt.load_report(out)


def without_sysroot(report, sysroot):
    """The report with the sysroot's own name taken out of the paths of the
    files read (the one thing that may differ between a directory and an
    image of it) and the timing left out."""
    text = json.dumps(report, sort_keys=True).replace(json.dumps(sysroot)[1:-1], "SYSROOT")
    r = json.loads(text)
    r.get("input", {}).pop("path", None)
    r.pop("timing", None)
    r.get("analysis", {}).pop("seconds", None)
    return r


def first_difference(a, b, where="report"):
    if type(a) != type(b):
        return "%s: %r != %r" % (where, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: only in one" % (where, k)
            d = first_difference(a[k], b[k], where + "." + k)
            if d:
                return d
    elif isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items != %d" % (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (where, i))
            if d:
                return d
    elif a != b:
        return "%s: %r != %r" % (where, a, b)
    return None


def same_report(label, got, got_root, want, want_root):
    d = first_difference(without_sysroot(got, got_root), without_sysroot(want, want_root))
    if d:
        raise pt.Failure("%s: not the directory's report: %s" % (label, d))


def expect_sysroot(label, truth, report, python_file):
    pt.compare(truth, report, None, signal.SIGQUIT)
    b = report["python"]["binary"]
    if b["found_by"] != "sysroot" or not b["path"].endswith(python_file):
        raise pt.Failure("%s: python.binary is %s found by %s, not %s under the sysroot"
                         % (label, b["path"], b["found_by"], python_file))


def python_file(mapped):
    """The interpreter's file the process mapped: libpython, else the executable."""
    libs = [p for p in mapped if os.path.basename(p).startswith("libpython")]
    return libs[0] if libs else [p for p in mapped if "/bin/python" in p][0]


# ------------------------------------------------------------------------
# Images
# ------------------------------------------------------------------------

def make_tar(tree, path, zstd=False):
    subprocess.run(["tar", "-C", tree, "-cf", path, "."], check=True)
    if zstd:
        subprocess.run(["zstd", "-q", "-3", "--rm", path, "-o", path + ".zst"], check=True)
        return path + ".zst"
    return path


def flip_build_id(src, dst):
    data = bytearray(open(src, "rb").read())
    at = data.find(b"GNU\0", 0)
    while at >= 0:
        # the note's header before the name: namesz 4, descsz, type 3 (NT_GNU_BUILD_ID)
        if data[at - 4:at] == b"\x03\0\0\0" and data[at - 12:at - 8] == b"\x04\0\0\0":
            n = int.from_bytes(data[at - 8:at - 4], "little")
            data[at + 4 + n - 1] ^= 0xff
            open(dst, "wb").write(data)
            return
        at = data.find(b"GNU\0", at + 1)
    raise pt.Failure("no build-id note in %s" % src)


def add_blob(layout, path):
    """PATH moved into LAYOUT's blobs (or linked, when it is another layout's): its descriptor."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    blob = os.path.join(layout, "blobs", "sha256", h.hexdigest())
    os.makedirs(os.path.dirname(blob), exist_ok=True)
    if not os.path.exists(blob):
        os.link(path, blob)
    return {"digest": "sha256:" + h.hexdigest(), "size": os.path.getsize(blob)}


def layer_of(work, name, tree, gz):
    path = os.path.join(work, name + (".tar.gz" if gz else ".tar"))
    if not os.path.exists(path):
        with tarfile.open(path, "w:gz" if gz else "w", format=tarfile.PAX_FORMAT,
                          **({"compresslevel": 1} if gz else {})) as t:
            t.add(tree, arcname=".")
    return path


def oci_layout(work, name, layers):
    """An OCI image layout WORK/NAME of LAYERS ((tar path, gzip'd), the
    base first): index.json -> manifest -> config and layers."""
    layout = os.path.join(work, name)
    os.makedirs(layout)
    descs = []
    for path, gz in layers:
        d = add_blob(layout, path)
        d["mediaType"] = "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if gz else "")
        descs.append(d)
    cfg = os.path.join(work, name + "-config.json")
    json.dump({"architecture": "amd64", "os": "linux"}, open(cfg, "w"))
    c = add_blob(layout, cfg)
    c["mediaType"] = "application/vnd.oci.image.config.v1+json"
    man = os.path.join(work, name + "-manifest.json")
    json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": c,
               "layers": descs}, open(man, "w"))
    m = add_blob(layout, man)
    m["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    json.dump({"schemaVersion": 2, "manifests": [m]}, open(os.path.join(layout, "index.json"), "w"))
    json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(layout, "oci-layout"), "w"))
    return layout


def tree_of(work, name, files=None, drop=(), add=(), opaque=None, whiteout=None):
    """A layer's tree WORK/NAME: a copy of FILES but DROP (inside paths),
    ADD ((inside path, host file) pairs), an opaque marker in the directory
    OPAQUE, a whiteout of the file WHITEOUT."""
    tree = os.path.join(work, name)
    if files:
        shutil.copytree(files, tree, symlinks=True)
    else:
        os.makedirs(tree)
    for p in drop:
        os.unlink(tree + p)
    for p, src in add:
        os.makedirs(os.path.dirname(tree + p), exist_ok=True)
        if os.path.exists(tree + p):
            os.unlink(tree + p)
        shutil.copyfile(src, tree + p)
    if opaque:
        os.makedirs(tree + opaque, exist_ok=True)
        open(tree + opaque + "/.wh..wh..opq", "w").close()
    if whiteout:
        os.makedirs(os.path.dirname(tree + whiteout), exist_ok=True)
        open(os.path.join(os.path.dirname(tree + whiteout), ".wh." + os.path.basename(whiteout)), "w").close()
    return tree


# ------------------------------------------------------------------------
# One interpreter
# ------------------------------------------------------------------------

def check_interpreter(tap, name):
    labels = ["%s: %s" % (name, what) for what in (
        "no sysroot (debug offsets or the validated scan)", "--sysroot DIR", "--sysroot image.tar",
        "--sysroot image.tar.zst, and batch", "--sysroot OCI layouts of two layers: a directory replaced, a whiteout, an opaque directory",
        "locals (--locals=deep), no sysroot and --sysroot image.tar")]
    why = missing([("unshare", "util-linux"), ("tar", "tar"), ("zstd", "zstd")])
    c = None
    try:
        if why:
            raise pt.Skip(why)
        c = Container(name)
    except pt.Skip as s:
        for label in labels:
            tap.skip(label, str(s))
        return
    work = tempfile.mkdtemp(prefix="pycore-image-", dir=c.host("/tmp"))
    try:
        state = {}

        def none():
            core, truth, mapped, _ = c.snapshot(work)
            state.update(core=core, truth=truth, mapped=mapped, pyfile=python_file(mapped))
            report = analyze(core)
            pt.compare(truth, report, None, signal.SIGQUIT)
            minor = int(truth["version"][1]) if "version" in truth else 0
            want = "debug-offsets" if minor >= 13 else "scan"
            got = report["python"]["located_by"]
            if got != want:
                raise pt.Failure("located_by %s, not %s" % (got, want))
            if report["python"]["binary"]["found_by"] is not None:
                raise pt.Failure("the interpreter's file was found on this machine (%s): not a container "
                                 "without its image" % report["python"]["binary"]["path"])
            return "%d threads as recorded, located by %s" % (len(truth["threads"]), got)
        tap.run(labels[0], none)

        def need():
            if "core" not in state:
                raise pt.Skip("no core (see the first case)")

        def directory():
            need()
            files = c.files
            report = analyze(state["core"], ["--sysroot", files])
            expect_sysroot("--sysroot DIR", state["truth"], report, state["pyfile"])
            state["dir_report"] = report
            if c.scratch is None:
                # the Debian root itself, the whole of it
                whole = analyze(state["core"], ["--sysroot", c.root])
                expect_sysroot("--sysroot ROOT", state["truth"], whole, state["pyfile"])
        tap.run(labels[1], directory)

        def tar(zstd):
            need()
            if "dir_report" not in state:
                raise pt.Skip("no directory report (see --sysroot DIR)")
            image = make_tar(c.files, os.path.join(work, "image%s.tar" % ("-z" if zstd else "")), zstd)
            report = analyze(state["core"], ["--sysroot", image])
            expect_sysroot(image, state["truth"], report, state["pyfile"])
            same_report(os.path.basename(image), report, image, state["dir_report"], c.files)
            # the text, source lines read from the image, is the directory's
            text = [pt.run_pycore(["analyze", "--sysroot", root, state["core"]])[1].replace(root, "SYSROOT")
                    for root in (image, c.files)]
            if text[0] != text[1]:
                raise pt.Failure("%s: the text report is not the directory's" % os.path.basename(image))
            if zstd:
                # batch opens the image once, its workers read it
                rc, out, err = pt.run_pycore(["batch", "--sysroot", image, state["core"], state["core"]])
                records = [json.loads(l) for l in out.splitlines() if l.strip()]
                if rc != 0 or len(records) != 2:
                    raise pt.Failure("batch: exit %d, %d records: %s" % (rc, len(records), err.strip()))
                for r in records:
                    pt.compare(state["truth"], r, None, signal.SIGQUIT)
                    if r["python"]["binary"]["found_by"] != "sysroot":
                        raise pt.Failure("batch: the interpreter's file found by %s"
                                         % r["python"]["binary"]["found_by"])
            return "%d MiB, the directory's JSON and text reports" % (os.path.getsize(image) >> 20)
        tap.run(labels[2], tar, False)
        tap.run(labels[3], tar, True)

        def oci():
            need()
            files, pyfile, pydir = c.files, state["pyfile"], os.path.dirname(state["pyfile"])
            # everything under the interpreter file's directory, at any depth
            in_dir = [c.inside_of(files, os.path.join(d, f)) for d, _, fs in os.walk(files + pydir) for f in fs]
            wrong = os.path.join(work, "wrong-build-id")
            flip_build_id(files + pyfile, wrong)
            base = layer_of(work, "base", files, False)
            base_wrong = layer_of(work, "base-wrong", tree_of(work, "t-base-wrong", files, add=[(pyfile, wrong)]),
                                  True)
            done = []
            # the base's interpreter file has another build-id; the second
            # layer replaces its whole directory (opaque) by the right file
            # alone: the directory's other files are gone
            top = layer_of(work, "replace", tree_of(work, "t-replace", add=[(pyfile, files + pyfile)],
                                                    opaque=pydir), True)
            merged = tree_of(work, "m-replace", files, drop=[p for p in in_dir if p != pyfile])
            layout = oci_layout(work, "oci-replace", [(base_wrong, True), (top, True)])
            report = analyze(state["core"], ["--sysroot", layout])
            expect_sysroot("OCI, directory replaced", state["truth"], report, pyfile)
            same_report("OCI, directory replaced", report, layout, analyze(state["core"], ["--sysroot", merged]),
                        merged)
            done.append("replaced %s (%d files)" % (pydir, len(in_dir)))
            # the second layer deletes the interpreter's file (a whiteout), or
            # makes its directory opaque and empty: then it is not found
            for what, tree in (("whiteout", tree_of(work, "t-wh", whiteout=pyfile)),
                               ("opaque", tree_of(work, "t-opq", opaque=pydir, add=[(pydir + "/unrelated",
                                                                                      wrong)]))):
                layout = oci_layout(work, "oci-" + what, [(base, False), (layer_of(work, what, tree, True), True)])
                merged = tree_of(work, "m-" + what, files, drop=[pyfile] if what == "whiteout" else in_dir)
                report = analyze(state["core"], ["--sysroot", layout])
                pt.compare(state["truth"], report, None, signal.SIGQUIT)
                # (python.binary may still name another file the scan went
                # through, the executable, found in the base layer)
                read = [m["file"] for m in report["process"]["modules"] if m["path"] == pyfile and m["file"]]
                if read:
                    raise pt.Failure("OCI, %s: %s was read from the layer below (%s)" % (what, pyfile, read[0]))
                same_report("OCI, " + what, report, layout, analyze(state["core"], ["--sysroot", merged]), merged)
                done.append(what)
            return "; ".join(done)
        tap.run(labels[4], oci)

        def local_variables():
            need()
            lwork = os.path.join(work, "locals")
            os.makedirs(lwork)
            core, truth, mapped, _ = c.snapshot(lwork, "locals")
            bare = analyze(core, ["--locals=deep"])
            pt.compare(truth, bare, None, signal.SIGQUIT)
            n_bare = pt.compare_locals(truth, bare, stdlib=False, no_files=True)
            image = make_tar(c.files, os.path.join(lwork, "image.tar"))
            report = analyze(core, ["--locals=deep", "--sysroot", image])
            expect_sysroot("locals", truth, report, python_file(mapped))
            n = pt.compare_locals(truth, report)
            # the reprs compared: every variable's, and its attributes'
            total = sum(1 + len(v[2] or {}) for t in truth["threads"] for f in t["frames"]
                        for v in f["locals"].values())
            return "of %d reprs (variables and attributes), %d exactly Python's with no sysroot (the rest said to be " \
                   "missing, or cut), %d with the image" % (total, n_bare, n)
        tap.run(labels[5], local_variables)
    finally:
        pt.drop_scratch(tap, work)
        c.close()


def missing(tools):
    if os.geteuid() != 0:
        return "namespaces and chroot need root"
    for tool, package in tools:
        if not shutil.which(tool):
            return "%s not installed (Debian package %s)" % (tool, package)
    return None


# ------------------------------------------------------------------------
# Bad images
# ------------------------------------------------------------------------

def bad_images(tap):
    work = tempfile.mkdtemp(prefix="pycore-badimage-")
    try:
        dump = os.path.join(work, "dump")
        open(dump, "wb").write(b"\x7fELF" + b"\0" * 60)

        def add(t, name, data=b"", kind=tarfile.REGTYPE, link=""):
            ti = tarfile.TarInfo(name)
            ti.type = kind
            ti.linkname = link
            ti.size = len(data) if kind == tarfile.REGTYPE else 0
            t.addfile(ti, __import__("io").BytesIO(data) if kind == tarfile.REGTYPE else None)

        def tar_of(name, members, fmt=tarfile.GNU_FORMAT):
            path = os.path.join(work, name)
            with tarfile.open(path, "w", format=fmt) as t:
                for m in members:
                    add(t, *m)
            return path

        good = tar_of("good.tar", [("usr/lib/x", b"x" * 3000), ("usr/lib/y", b"", tarfile.SYMTYPE, "x")])
        data = open(good, "rb").read()
        cut = os.path.join(work, "cut.tar")
        open(cut, "wb").write(data[:512 + 1000])
        notar = os.path.join(work, "notar")
        open(notar, "wb").write(b"hello, this is no tar\n" * 100)
        escape = tar_of("escape.tar", [("usr/../../etc/passwd", b"root")])
        hard = tar_of("hard.tar", [("a", b"a"), ("b", b"", tarfile.LNKTYPE, "../../a")])
        loop = tar_of("loop.tar", [("a/b", b"", tarfile.SYMTYPE, "../c"), ("c", b"", tarfile.SYMTYPE, "a/b")])
        oci = os.path.join(work, "oci")
        os.makedirs(oci)
        open(os.path.join(oci, "oci-layout"), "w").write('{"imageLayoutVersion": "1.0.0"}')
        cases = [("not a tar", notar, "not a tar archive"),
                 ("a truncated tar", cut, "truncated"),
                 ("a member escaping the root", escape, "escapes the root"),
                 ("a hard link escaping the root", hard, "escapes the root"),
                 ("a symbolic link loop", loop, "loop"),
                 ("an OCI layout without index.json", oci, "index.json")]
        for label, image, words in cases:
            def one(image=image, words=words):
                rc, out, err = pt.run_pycore(["analyze", "--sysroot", image, dump])
                lines = err.strip().splitlines()
                if rc != EXIT_IMAGE or len(lines) != 1 or words not in lines[0] or out:
                    raise pt.Failure("exit %d, stderr %r: want exit %d and one line saying %r"
                                     % (rc, err, EXIT_IMAGE, words))
                return lines[0]
            tap.run("bad image: %s" % label, one)

        def good_one():
            # a good image with a bad dump: the image is read, the dump refused as before
            rc, out, err = pt.run_pycore(["analyze", "--sysroot", good, dump])
            if rc == EXIT_IMAGE or rc == 0:
                raise pt.Failure("exit %d, stderr %r: the good image refused, or a bad dump read" % (rc, err))
        tap.run("a good image: read, the bad dump refused as before", good_one)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    tap = pt.TAP()
    bad_images(tap)
    only = os.environ.get("PYCORE_IMAGE_ONLY")
    for name in NAMES:
        if only and name not in only.split(","):
            tap.skip("%s: every case" % name, "left out by PYCORE_IMAGE_ONLY=%s" % only)
            continue
        check_interpreter(tap, name)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
