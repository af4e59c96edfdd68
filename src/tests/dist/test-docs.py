"""The documentation is tested: README, HACKING and doc/*.md.

  * Every shell example marked runnable runs against the sample core and,
    where the doc shows output, prints that output.  A runnable example is
    a fenced block opened with ```console: its lines beginning with "$ "
    are commands (a line ending in a backslash goes on), the lines after a
    command up to the next one its expected output (standard output and
    standard error together).  In the expected output "..." stands for any
    text within a line, and a line that is only "..." for any number of
    lines (none included).  A command must exit 0: an example of a failure
    shows its status with `; echo "exit $?"`.  A block preceded by
    <!-- doctest: skip REASON --> (a service, a cluster) is a skip
    naming REASON; one preceded by <!-- doctest: root --> runs only as
    root (ptrace of a process not its child), else is a skip.  Commands run in a scratch directory holding testdata/
    (the source tree's) and build/pycore, with pycore under test first on
    PATH, the tree's Python package (src/pypkg) on PYTHONPATH, standard
    input /dev/null, 60 s each.  An example whose tool is
    not installed (the shell's "not found", exit 127) is a skip naming it.
  * Every error code of the JSON schema (src/report/pycore-report.schema.json,
    $defs error-code and error-record's codes) is in doc/errors.md's table,
    and every exit status src/cli/options.h defines.
  * README has at most 250 lines and links straight to how to install
    the hook, the exit codes and the Slurm array.
  * doc/json-report.md's tables of fields are what scripts/schema-doc
    makes of the schema.
  * No internal link is broken: a relative Markdown link names a file of
    the tree, and a #fragment a heading of that file (GitHub's anchors).
  * And the checker catches a drift: a copy of a doc with one output line
    changed, and one with a link broken, made in a scratch directory, must
    fail.

Output: TAP (pycoretest.tap), one result per example, per doc's links, and
for the error table.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from pycoretest.tap import TAP, Failure, Skip

SRCDIR = os.environ.get("srcdir") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PYCORE = os.environ.get("PYCORE") or os.path.join(SRCDIR, "build", "pycore")


def doc_files(top):
    files = [os.path.join(top, "README"), os.path.join(top, "HACKING")]
    files += sorted(glob.glob(os.path.join(top, "doc", "*.md")))
    return [f for f in files if os.path.exists(f)]


def examples(path):
    """The runnable examples of PATH: (line, skip reason or None, [(command,
    expected lines or None)])."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    marker = None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\s*<!--\s*doctest:\s*skip\s+(.*?)\s*-->\s*$", line)
        if m:
            marker = m.group(1)
            i += 1
            continue
        if re.match(r"\s*<!--\s*doctest:\s*root\s*-->\s*$", line):
            marker = "" if os.geteuid() == 0 else "needs root (the doc marks it so)"
            i += 1
            continue
        if line.strip().startswith("```"):
            lang = line.strip()[3:].strip()
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            if lang == "console":
                out.append((start, marker, parse_block(lines[start:j])))
            marker = None
            i = j + 1
            continue
        if line.strip():
            marker = None
        i += 1
    return out


def parse_block(body):
    cmds = []
    k = 0
    while k < len(body):
        if body[k].startswith("$ "):
            cmd = body[k][2:]
            while cmd.endswith("\\") and k + 1 < len(body):
                k += 1
                cmd = cmd + "\n" + body[k]
            expected = []
            k += 1
            while k < len(body) and not body[k].startswith("$ "):
                expected.append(body[k])
                k += 1
            while expected and not expected[-1].strip():
                expected.pop()
            cmds.append((cmd, expected or None))
        else:
            k += 1
    return cmds


def line_matches(pattern, text):
    if "..." not in pattern:
        return pattern == text
    parts = [re.escape(p) for p in pattern.split("...")]
    return re.fullmatch(".*".join(parts), text, re.S) is not None


def output_matches(expected, got):
    """EXPECTED lines against GOT lines; a line "..." is any lines."""
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            r = j == len(got)
        elif expected[i].strip() == "...":
            r = m(i + 1, j) or (j < len(got) and m(i, j + 1))
        else:
            r = j < len(got) and line_matches(expected[i].rstrip(), got[j].rstrip()) and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return m(0, 0)


def first_difference(expected, got):
    for n, (e, g) in enumerate(zip(expected, got)):
        if e.strip() == "...":
            break
        if not line_matches(e.rstrip(), g.rstrip()):
            return "line %d: the doc shows %r, the run printed %r" % (n + 1, e, g)
    return "the doc shows %d lines, the run printed %d" % (len(expected), len(got))


def scratch_dir():
    d = tempfile.mkdtemp(prefix="pycore-docs-")
    os.symlink(os.path.join(SRCDIR, "testdata"), os.path.join(d, "testdata"))
    os.makedirs(os.path.join(d, "build"))
    os.makedirs(os.path.join(d, ".bin"))
    os.symlink(PYCORE, os.path.join(d, "build", "pycore"))
    os.symlink(PYCORE, os.path.join(d, ".bin", "pycore"))
    return d


def run_block(cmds):
    """Run one example's commands in a fresh scratch directory; raise
    Failure at the first that fails or prints what the doc does not show."""
    d = scratch_dir()
    try:
        env = dict(os.environ)
        env["PATH"] = os.path.join(d, ".bin") + os.pathsep + env.get("PATH", "")
        env.pop("NO_COLOR", None)
        env["LC_ALL"] = "C.UTF-8"
        # the tree's Python package importable, as the wheel installs it
        env["PYTHONPATH"] = os.path.join(SRCDIR, "src", "pypkg")
        for cmd, expected in cmds:
            try:
                p = subprocess.run(["sh", "-c", cmd], cwd=d, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
            except subprocess.TimeoutExpired:
                raise Failure("`%s` ran past 60 s" % cmd)
            text = p.stdout.decode("utf-8", "replace")
            missing = re.search(r"^sh: \d+: (\S+): not found$", text, re.M)
            if p.returncode == 127 and missing:
                raise Skip("%s not installed (the example `%s` needs it)" % (missing.group(1), cmd.split("\n")[0]))
            if p.returncode != 0:
                raise Failure("`%s` exited %d:\n%s" % (cmd, p.returncode, text))
            if expected is not None:
                got = text.rstrip("\n").split("\n") if text.strip() else []
                if not output_matches(expected, got):
                    raise Failure("`%s`: output differs from the doc's (%s)\n--- printed:\n%s"
                                  % (cmd.split("\n")[0], first_difference(expected, got), text))
        return "%d commands" % len(cmds)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def check_example(path, line, skip, cmds):
    if skip:
        raise Skip(skip)
    if not cmds:
        raise Failure("a console block without a $ command")
    if not os.access(PYCORE, os.X_OK):
        raise Failure("the pycore under test, %s, is not there" % PYCORE)
    return run_block(cmds)


# --- links -----------------------------------------------------------------

def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation but - and _
    dropped, spaces to -."""
    h = re.sub(r"`", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    seen = {}
    out = set()
    fence = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    for m in re.finditer(r'<a (?:name|id)="([^"]+)"', text):
        out.add(m.group(1))
    return out


def links(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)   # code is no link
    text = re.sub(r"`[^`\n]*`", "", text)
    return [m.group(1) for m in re.finditer(r"\]\(([^)\s]+)\)", text)]


def check_links(path, base=None):
    """BASE: the directory relative links start from (PATH's own by
    default)."""
    base = base or os.path.dirname(path)
    bad = []
    n = 0
    for target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):   # http:, mailto:: not internal
            continue
        n += 1
        file_part, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(base, file_part)) if file_part else path
        if not os.path.exists(dest):
            bad.append("%s: no such file" % target)
            continue
        if frag and os.path.isfile(dest) and frag not in anchors(dest):
            bad.append("%s: no heading #%s in %s" % (target, frag, os.path.basename(dest)))
    if bad:
        raise Failure("%d broken links: %s" % (len(bad), "; ".join(bad)))
    return "%d internal links" % n


# --- the error table -------------------------------------------------------

def schema_codes(top):
    with open(os.path.join(top, "src", "report", "pycore-report.schema.json")) as f:
        s = json.load(f)
    codes = set()

    def walk(o, path):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "enum" and ("error-code" in path or "error-record" in path) and path.endswith("code"):
                    codes.update(x for x in v if x)
                walk(v, path + "/" + k)
        elif isinstance(o, list):
            for v in o:
                walk(v, path)

    walk(s, "")
    return codes


def exit_codes(top):
    with open(os.path.join(top, "src", "cli", "options.h")) as f:
        text = f.read()
    m = re.search(r"enum exit_code \{(.*?)\}", text, re.S)
    return sorted(int(x) for x in re.findall(r"=\s*(\d+)", m.group(1)))


def check_error_table(top):
    path = os.path.join(top, "doc", "errors.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rows = [l for l in text.split("\n") if l.startswith("|")]
    in_table = set()
    for r in rows:
        cell = r.split("|")[1].strip()
        in_table.update(re.findall(r"`([a-z-]+)`", cell))
        m = re.fullmatch(r"\**(\d+)\**", cell)
        if m:
            in_table.add(int(m.group(1)))
    codes = schema_codes(top)
    if not codes:
        raise Failure("no error code found in the schema")
    missing = sorted(c for c in codes if c not in in_table)
    missing += ["exit %d" % c for c in exit_codes(top) if c not in in_table]
    if missing:
        raise Failure("not in doc/errors.md's tables: %s" % ", ".join(map(str, missing)))
    return "%d error codes and exit statuses %s" % (len(codes), exit_codes(top))


# --- the README ------------------------------------------------------------

README_TARGETS = [("how to install the hook", "doc/hook.md#installing-the-hook"),
                  ("the exit codes", "doc/errors.md"),
                  ("the Slurm array", "doc/pipelines.md#a-slurm-array")]


def check_readme(top):
    """README: at most 250 lines, and the hook's installation, the exit
    codes and the Slurm array one link away (each target a heading that
    exists: the link check sees to that)."""
    path = os.path.join(top, "README")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    n = text.count("\n")
    if n > 250:
        raise Failure("README has %d lines (at most 250)" % n)
    targets = links(path)
    missing = [what for what, t in README_TARGETS if t not in targets]
    if missing:
        raise Failure("README links to none of: %s" % ", ".join(missing))
    return "%d lines; %s one link away" % (n, ", ".join(w for w, _ in README_TARGETS))


# --- the JSON fields ------------------------------------------------------

def check_schema_doc(top):
    """doc/json-report.md's field tables are what scripts/schema-doc makes
    of the schema now."""
    path = os.path.join(top, "doc", "json-report.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- schema-doc: begin -->\n(.*?)<!-- schema-doc: end -->", text, re.S)
    if not m:
        raise Failure("doc/json-report.md has no <!-- schema-doc: begin --> ... end block")
    p = subprocess.run([os.environ.get("PYTHON3", sys.executable), os.path.join(top, "scripts", "schema-doc")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        raise Failure("scripts/schema-doc: exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")))
    want = p.stdout.decode()
    if m.group(1) != want:
        import difflib
        diff = "".join(list(difflib.unified_diff(m.group(1).splitlines(True), want.splitlines(True),
                                                 "doc/json-report.md", "scripts/schema-doc"))[:40])
        raise Failure("doc/json-report.md's fields differ from the schema's (run scripts/schema-doc)\n" + diff)
    return "%d fields" % want.count("\n| `")


# --- the checker catches a drift -------------------------------------------

def drifted_copy_fails(tap_unused=None):
    """Copy the first doc whose example shows output, change one output
    line, and run this very checker's example check on the copy: it must
    fail.  Then the same with a link broken."""
    for path in doc_files(SRCDIR):
        for line, skip, cmds in examples(path):
            if skip or not any(exp for _, exp in cmds):
                continue
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            # the first expected line that is not a wildcard
            k = line
            while k < len(lines) and (lines[k].startswith("$ ") or lines[k].strip() in ("", "...")):
                k += 1
            tmp = tempfile.mkdtemp(prefix="pycore-docs-drift-")
            try:
                lines[k] = lines[k] + " (drifted)"
                copy = os.path.join(tmp, os.path.basename(path))
                with open(copy, "w", encoding="utf-8") as f:
                    f.write("\n".join(lines) + "\n[a link](no-such-file.md) [another](#no-such-heading)\n")
                ex = [e for e in examples(copy) if e[0] == line]
                try:
                    run_block(ex[0][2])
                except Failure as e:
                    caught = str(e).splitlines()[0]
                else:
                    raise Failure("the copy of %s with line %d changed passed" % (os.path.basename(path), k + 1))
                try:
                    check_links(copy, os.path.dirname(path))
                except Failure as e:
                    links_caught = str(e).splitlines()[0]
                    if not links_caught.startswith("2 broken links"):
                        raise Failure("the copy with two broken links: %s" % links_caught)
                else:
                    raise Failure("the copy with two broken links passed the link check")
                return "%s:%d changed: caught (%s); links: caught (%s)" % (
                    os.path.basename(path), k + 1, caught[:80], links_caught[:60])
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    raise Failure("no example with output found to drift")


def main():
    tap = TAP()
    files = doc_files(SRCDIR)
    if len(sys.argv) > 1:
        files = sys.argv[1:]
    total = 0
    for path in files:
        rel = os.path.relpath(path, SRCDIR)
        for line, skip, cmds in examples(path):
            total += 1
            tap.run("%s:%d example" % (rel, line), check_example, path, line, skip, cmds)
        tap.run("%s: internal links" % rel, check_links, path)
    if len(sys.argv) == 1:
        tap.run("doc/errors.md: every error code of the schema and every exit status", check_error_table, SRCDIR)
        tap.run("README: short, and the newcomer's questions one link away", check_readme, SRCDIR)
        tap.run("doc/json-report.md: every field of the schema", check_schema_doc, SRCDIR)
        tap.run("a drifted example and broken links are caught", drifted_copy_fails)
        if total == 0:
            tap.not_ok("runnable examples", "no ```console example in README or doc/")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
