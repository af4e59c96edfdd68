#!/usr/bin/env python3
"""wheel.py: scripts/wheel's Python half: the source's copy, the wheel, its check.

usage: scripts/wheel.py sync TOP DEST
       scripts/wheel.py build --top TOP --arch x86_64|aarch64 --binary FILE
                              [--crash-lib FILE] --out DIR
       scripts/wheel.py check WHEEL...

sync: copies the files of TOP that git knows (tracked, and untracked ones
  it does not ignore; testdata/ left out) into DEST: a file is written only
  when its content differs from DEST's copy, and then stamped with the
  current time, so that make rebuilds what changed and nothing else;
  files an earlier sync copied that are gone from TOP are removed.  Prints
  how many files it wrote or removed.
build: assembles dist/pycore-VERSION-py3-none-manylinux_2_31_ARCH.whl
  (VERSION: configure.ac's AC_INIT) from the binary (pycore/bin/pycore,
  mode 0755), the crash library (pycore/lib/libpycore-crash.so, when
  given), the Python package of src/pypkg/pycore/, the man pages of man/
  (pycore-VERSION.data/data/share/man/manN/) and the dist-info; the zip's
  timestamps are SOURCE_DATE_EPOCH's, else the last commit's: the same
  inputs make the same bytes.  Then checks it as `check` does.
check: what auditwheel checks of a manylinux_2_31 wheel, for each ELF file
  in it: the libraries it needs (DT_NEEDED) are the C library's own, the
  policy's, the GLIBC_ versions it references are 2.31 or older, it names
  no RPATH or RUNPATH, and its machine is the wheel tag's.  One line per
  ELF file; the wheel's RECORD is checked against its files too.
Exit: 0 done, 1 failed (why on standard error, one line each), 2 usage.
"""
import base64
import hashlib
import io
import os
import re
import struct
import subprocess
import sys
import time
import zipfile

PROG = "wheel"
POLICY = "manylinux_2_31"
GLIBC_MAX = (2, 31)
# The libraries of the manylinux_2_31 policy a program of ours may need:
# the C library's own (the policy also lists libstdc++, libgcc_s, X11,
# GL and GLib, which pycore has no use for: their presence is a mistake
# in the static link, so they fail here too).
ALLOWED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1"}
# the dynamic loader, by wheel architecture: (e_machine, loader names)
MACHINES = {
    "x86_64": (62, {"ld-linux-x86-64.so.2"}),
    "aarch64": (183, {"ld-linux-aarch64.so.1"}),
}


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


# ---------------------------------------------------------------- sync

def git_files(top):
    out = subprocess.run(
        ["git", "-C", top, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, stdout=subprocess.PIPE).stdout
    files = []
    for name in out.decode("utf-8", "surrogateescape").split("\0"):
        if not name or name.startswith("testdata/") or "/__pycache__/" in "/" + name:
            continue
        if os.path.isfile(os.path.join(top, name)) or os.path.islink(os.path.join(top, name)):
            files.append(name)
    return sorted(set(files))


def sync(top, dest):
    manifest = os.path.join(dest, ".pycore-sync")
    try:
        with open(manifest, encoding="utf-8", errors="surrogateescape") as f:
            before = set(f.read().split("\0")) - {""}
    except FileNotFoundError:
        before = set()
    files = git_files(top)
    written = removed = 0
    for name in files:
        src = os.path.join(top, name)
        dst = os.path.join(dest, name)
        if os.path.islink(src):
            target = os.readlink(src)
            if os.path.islink(dst) and os.readlink(dst) == target:
                continue
            if os.path.lexists(dst):
                os.unlink(dst)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.symlink(target, dst)
            written += 1
            continue
        with open(src, "rb") as f:
            data = f.read()
        mode = os.stat(src).st_mode & 0o777
        try:
            if os.path.islink(dst):
                raise FileNotFoundError
            with open(dst, "rb") as f:
                same = f.read() == data
        except FileNotFoundError:
            same = False
        if same:
            if os.stat(dst).st_mode & 0o777 != mode:
                os.chmod(dst, mode)
            continue
        if os.path.lexists(dst):
            os.unlink(dst)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
        os.chmod(dst, mode)
        written += 1
    for name in sorted(before - set(files)):
        p = os.path.join(dest, name)
        if os.path.lexists(p):
            os.unlink(p)
            removed += 1
    with open(manifest + ".new", "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("\0".join(files))
    os.replace(manifest + ".new", manifest)
    print(f"{written} written, {removed} removed")


# ---------------------------------------------------------------- ELF

SHT_DYNAMIC = 6
SHT_GNU_VERNEED = 0x6FFFFFFE
DT_NEEDED, DT_RPATH, DT_RUNPATH = 1, 15, 29
PT_INTERP = 3


class Elf:
    """The little of an ELF file the check reads: machine, interpreter,
    DT_NEEDED, RPATH/RUNPATH, and the versions it references (verneed)."""

    def __init__(self, data, name):
        if data[:4] != b"\x7fELF":
            fail(f"{name}: not an ELF file")
        self.name = name
        self.data = data
        cls, enc = data[4], data[5]
        if cls not in (1, 2) or enc not in (1, 2):
            fail(f"{name}: unknown ELF class or encoding")
        self.is64 = cls == 2
        self.e = "<" if enc == 1 else ">"
        if self.is64:
            (self.type, self.machine, _, _, phoff, shoff, _, _, phentsize, phnum,
             shentsize, shnum, shstrndx) = struct.unpack_from(self.e + "HHIQQQIHHHHHH", data, 16)
        else:
            (self.type, self.machine, _, _, phoff, shoff, _, _, phentsize, phnum,
             shentsize, shnum, shstrndx) = struct.unpack_from(self.e + "HHIIIIIHHHHHH", data, 16)
        self.sections = []
        for i in range(shnum):
            off = shoff + i * shentsize
            if self.is64:
                (sh_name, sh_type, _, _, sh_offset, sh_size, sh_link, _, _, sh_entsize
                 ) = struct.unpack_from(self.e + "IIQQQQIIQQ", data, off)
            else:
                (sh_name, sh_type, _, _, sh_offset, sh_size, sh_link, _, _, sh_entsize
                 ) = struct.unpack_from(self.e + "IIIIIIIIII", data, off)
            self.sections.append((sh_type, sh_offset, sh_size, sh_link, sh_entsize))
        self.interp = None
        for i in range(phnum):
            off = phoff + i * phentsize
            if self.is64:
                p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(self.e + "IIQQQQ", data, off)
            else:
                p_type, p_offset, _, _, p_filesz = struct.unpack_from(self.e + "IIIII", data, off)
            if p_type == PT_INTERP:
                self.interp = data[p_offset:p_offset + p_filesz].split(b"\0")[0].decode()
        self.needed, self.rpath = [], []
        self.versions = {}  # library -> set of version names
        for sh_type, off, size, link, entsize in self.sections:
            if sh_type == SHT_DYNAMIC:
                self._dynamic(off, size, link)
            elif sh_type == SHT_GNU_VERNEED:
                self._verneed(off, link)

    def _str(self, strtab, idx):
        off = self.sections[strtab][1] + idx
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode("utf-8", "replace")

    def _dynamic(self, off, size, link):
        fmt, step = (self.e + "qQ", 16) if self.is64 else (self.e + "iI", 8)
        for pos in range(off, off + size, step):
            tag, val = struct.unpack_from(fmt, self.data, pos)
            if tag == 0:
                break
            if tag == DT_NEEDED:
                self.needed.append(self._str(link, val))
            elif tag in (DT_RPATH, DT_RUNPATH):
                self.rpath.append(self._str(link, val))

    def _verneed(self, off, link):
        pos = off
        while True:
            _, cnt, file_, aux, nxt = struct.unpack_from(self.e + "HHIII", self.data, pos)
            lib = self._str(link, file_)
            apos = pos + aux
            for _ in range(cnt):
                _, _, _, name, anext = struct.unpack_from(self.e + "IHHII", self.data, apos)
                self.versions.setdefault(lib, set()).add(self._str(link, name))
                if not anext:
                    break
                apos += anext
            if not nxt:
                break
            pos += nxt


def version_key(v):
    return tuple(int(x) for x in v.split("."))


def check_elf(elf, arch):
    """Problems of one ELF file for a manylinux_2_31 wheel of ARCH, and a
    one-line summary."""
    machine, loaders = MACHINES[arch]
    problems = []
    if elf.machine != machine:
        problems.append(f"machine {elf.machine}, not {arch}'s {machine}")
    if elf.interp is not None and os.path.basename(elf.interp) not in loaders:
        problems.append(f"interpreter {elf.interp} is not {arch}'s")
    for lib in elf.needed:
        if lib not in ALLOWED and lib not in loaders:
            problems.append(f"needs {lib}, outside the {POLICY} policy")
    if elf.rpath:
        problems.append(f"has an RPATH/RUNPATH ({':'.join(elf.rpath)})")
    glibc = []
    for lib, vers in sorted(elf.versions.items()):
        for v in sorted(vers):
            m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)*)", v)
            if m:
                glibc.append(m.group(1))
                if version_key(m.group(1))[:2] > GLIBC_MAX:
                    problems.append(f"references {v} ({lib}), newer than {POLICY}'s GLIBC_2.31")
            else:
                problems.append(f"references the version {v} of {lib}, outside the {POLICY} policy")
    top = max(glibc, key=version_key) if glibc else "none"
    summary = f"NEEDED {','.join(elf.needed) or '-'}; max GLIBC_{top}"
    return problems, summary


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def check(path, name=None):
    name = name or os.path.basename(path)
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    m = re.fullmatch(r"([^-]+)-([^-]+)-py3-none-(manylinux_(\d+)_(\d+)_(x86_64|aarch64))\.whl", name)
    if not m:
        fail(f"{name}: not a name scripts/wheel makes (NAME-VERSION-py3-none-manylinux_X_Y_ARCH.whl)")
    dist, version, tag, arch = m.group(1), m.group(2), m.group(3), m.group(6)
    if (int(m.group(4)), int(m.group(5))) != GLIBC_MAX:
        fail(f"{name}: tagged {tag}, this check knows {POLICY} only")
    problems = []
    elves = 0
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        distinfo = f"{dist}-{version}.dist-info"
        try:
            record = z.read(f"{distinfo}/RECORD").decode()
            wheel = z.read(f"{distinfo}/WHEEL").decode()
        except KeyError as e:
            fail(f"{name}: no {e.args[0]}")
        if f"Tag: py3-none-{tag}" not in wheel.splitlines():
            problems.append(f"{name}: WHEEL's Tag is not py3-none-{tag}")
        listed = {}
        for line in record.splitlines():
            p, h, s = line.rsplit(",", 2)
            listed[p] = (h, s)
        for info in z.infolist():
            data = z.read(info)
            if info.filename != f"{distinfo}/RECORD":
                h, s = listed.pop(info.filename, (None, None))
                if h is None:
                    problems.append(f"{info.filename}: not in RECORD")
                elif h != record_hash(data) or s != str(len(data)):
                    problems.append(f"{info.filename}: RECORD's hash or size is not the file's")
            else:
                listed.pop(info.filename, None)
            if data[:4] != b"\x7fELF":
                continue
            elves += 1
            mode = info.external_attr >> 16
            if not mode & 0o111 and info.filename.endswith("/bin/pycore"):
                problems.append(f"{info.filename}: not executable in the zip")
            p, summary = check_elf(Elf(data, info.filename), arch)
            print(f"{name}: {info.filename}: {summary}: {'ok' if not p else 'FAILS'}")
            problems += [f"{info.filename}: {x}" for x in p]
        for p in listed:
            problems.append(f"{p}: in RECORD, not in the wheel")
        if f"{dist}/bin/pycore" not in names:
            problems.append(f"{name}: no {dist}/bin/pycore")
    if elves == 0:
        problems.append(f"{name}: no ELF file in it")
    for p in problems:
        print(f"{PROG}: {p}", file=sys.stderr)
    if problems:
        fail(f"{name} is not a {POLICY} wheel ({len(problems)} problems)")
    print(f"{name}: {POLICY}: ok")


# ---------------------------------------------------------------- build

def project_version(top):
    with open(os.path.join(top, "configure.ac"), encoding="utf-8") as f:
        m = re.search(r"AC_INIT\(\[([^]]+)\],\s*\[([^]]+)\]", f.read())
    if not m:
        fail("no AC_INIT([pycore], [VERSION]) in configure.ac")
    return m.group(1), m.group(2)


def epoch(top):
    e = os.environ.get("SOURCE_DATE_EPOCH")
    if not e:
        r = subprocess.run(["git", "-C", top, "log", "-1", "--format=%ct"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        e = r.stdout.decode().strip()
    try:
        t = int(e)
    except ValueError:
        t = 315532800
    return max(t, 315532800)  # zip's first date: 1980-01-01


def license_of(top):
    """(the License field, the name and bytes of the license file)."""
    for n in ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING"):
        p = os.path.join(top, n)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                data = f.read()
            first = next((ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()), "")
            return first, os.path.basename(n), data
    p = os.path.join(top, "debian", "copyright")
    if not os.path.isfile(p):
        fail("no license file (LICENSE, COPYING or debian/copyright) in the tree")
    with open(p, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", "replace")
    m = re.search(r"^License:[ \t]*(\S.*)$", text, re.M)  # a DEP-5 copyright file
    if m:
        return m.group(1).strip(), "LICENSE", data
    # no license chosen yet (debian/copyright says so): the wheel says so too
    return "Proprietary: all rights reserved, no license granted yet (see the dist-info's LICENSE)", \
        "LICENSE", data


def metadata(top, dist, version, license_field):
    with open(os.path.join(top, "README"), encoding="utf-8") as f:
        readme = f.read()
    title = readme.splitlines()[0].strip()
    summary = re.sub(r"^\S+\s+[—-]+\s+", "", title)
    head = [
        "Metadata-Version: 2.1",
        f"Name: {dist}",
        f"Version: {version}",
        f"Summary: {summary}",
        "License: " + license_field.replace("\n", " "),
        "Platform: Linux",
        "Classifier: Environment :: Console",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: C",
        "Classifier: Topic :: Software Development :: Debuggers",
    ]
    if license_field.startswith("Proprietary"):
        head.append("Classifier: License :: Other/Proprietary License")
    head += [
        "Requires-Python: >=3.6",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme


def build(args):
    top, arch, binary, crash, out = args["top"], args["arch"], args["binary"], args.get("crash-lib"), args["out"]
    if arch not in MACHINES:
        fail(f"unknown architecture {arch} (x86_64 or aarch64)")
    dist, version = project_version(top)
    tag = f"py3-none-{POLICY}_{arch}"
    stamp = time.gmtime(epoch(top))[:6]
    distinfo = f"{dist}-{version}.dist-info"
    data_dir = f"{dist}-{version}.data"
    pypkg = os.environ.get("PYCORE_WHEEL_PYPKG") or os.path.join(top, "src", "pypkg", dist)
    entries = []  # (archive name, bytes, executable)

    if not os.path.isfile(os.path.join(pypkg, "__init__.py")):
        fail(f"no Python package in {pypkg} (__init__.py, with _main, the console script)")
    for d, dirs, files in os.walk(pypkg):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith((".pyc", ".pyo")):
                continue
            p = os.path.join(d, f)
            rel = os.path.relpath(p, pypkg).replace(os.sep, "/")
            if rel in ("bin/pycore", "lib/libpycore-crash.so"):
                continue
            with open(p, "rb") as fh:
                entries.append((f"{dist}/{rel}", fh.read(), bool(os.stat(p).st_mode & 0o111)))
    with open(binary, "rb") as fh:
        entries.append((f"{dist}/bin/pycore", fh.read(), True))
    if crash:
        with open(crash, "rb") as fh:
            entries.append((f"{dist}/lib/libpycore-crash.so", fh.read(), True))
    mandir = os.path.join(top, "man")
    for f in sorted(os.listdir(mandir)) if os.path.isdir(mandir) else []:
        m = re.fullmatch(r".+\.([158])", f)
        if m:
            with open(os.path.join(mandir, f), "rb") as fh:
                entries.append((f"{data_dir}/data/share/man/man{m.group(1)}/{f}", fh.read(), False))

    license_field, license_name, license_data = license_of(top)
    entries.append((f"{distinfo}/METADATA", metadata(top, dist, version, license_field).encode(), False))
    entries.append((f"{distinfo}/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: pycore scripts/wheel\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n").encode(), False))
    entries.append((f"{distinfo}/entry_points.txt", f"[console_scripts]\n{dist} = {dist}:_main\n".encode(), False))
    entries.append((f"{distinfo}/{license_name}", license_data, False))
    entries.append((f"{distinfo}/top_level.txt", f"{dist}\n".encode(), False))
    record = "".join(f"{n},{record_hash(b)},{len(b)}\n" for n, b, _ in entries)
    record += f"{distinfo}/RECORD,,\n"
    entries.append((f"{distinfo}/RECORD", record.encode(), False))

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{dist}-{version}-{tag}.whl")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, b, x in entries:
            info = zipfile.ZipInfo(n, date_time=stamp)
            info.create_system = 3  # Unix: the mode below is read
            info.external_attr = ((0o100755 if x else 0o100644) & 0xFFFF) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b, compresslevel=9)
    # a wheel that fails the check is not left in DIR
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(buf.getvalue())
    try:
        check(tmp, os.path.basename(path))
    except BaseException:
        os.unlink(tmp)
        raise
    os.replace(tmp, path)
    print(path)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1] if len(argv) >= 2 else __doc__, file=sys.stderr if len(argv) < 2 else sys.stdout)
        return 2 if len(argv) < 2 else 0
    try:
        if argv[1] == "sync" and len(argv) == 4:
            sync(argv[2], argv[3])
        elif argv[1] == "check" and len(argv) > 2:
            failed = 0
            for w in argv[2:]:
                try:
                    check(w)
                except (Failure, OSError, zipfile.BadZipFile, struct.error, ValueError) as e:
                    print(f"{PROG}: {e}", file=sys.stderr)
                    failed = 1
            return failed
        elif argv[1] == "build":
            args = {}
            rest = argv[2:]
            while rest:
                if not rest[0].startswith("--") or len(rest) < 2:
                    print(f"usage: {argv[0]} build --top TOP --arch ARCH --binary FILE [--crash-lib FILE] --out DIR",
                          file=sys.stderr)
                    return 2
                args[rest[0][2:]] = rest[1]
                rest = rest[2:]
            for k in ("top", "arch", "binary", "out"):
                if k not in args:
                    print(f"{PROG}: build needs --{k}", file=sys.stderr)
                    return 2
            build(args)
        else:
            print(f"usage: {argv[0]} sync TOP DEST | build ... | check WHEEL...", file=sys.stderr)
            return 2
    except Failure as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
