"""pycore's JSON reports against the schema, src/report/pycore-report.schema.json.

As a module (the check-*.py tests):
    v = Validator()       # v.why: None, or why nothing can be validated here
    v.check(text)         # every report in TEXT (JSON Lines, or --pretty
                          # output); raises tap.Failure naming the first
                          # error's place; v.count: reports checked so far
As a program (the shell tests):
    schema.py FILE...   every report in each file; exit 0 all valid,
                               1 one is not (the error on stdout), 77 no
                               jsonschema here
    schema.py --serve   one report per line on stdin, one answer per
                               line on stdout ("ok" or "invalid: ...")

The validator is Debian's python3-jsonschema (draft 2020-12).  The tests may
run under another python3 (pyenv's) that lacks it: then /usr/bin/python3
($PYCORE_SCHEMA_PYTHON) runs this file with --serve as a co-process.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__:
    from .tap import Failure
else:   # run as a program, by its path (tap.sh, the --serve co-process)
    sys.path.insert(0, HERE)
    from tap import Failure  # noqa: E402

SRCDIR = os.environ.get("srcdir") or os.path.abspath(os.path.join(HERE, *[os.pardir] * 4))
SCHEMA = os.path.join(SRCDIR, "src", "report", "pycore-report.schema.json")
SYSTEM_PYTHON = os.environ.get("PYCORE_SCHEMA_PYTHON", "/usr/bin/python3")
MISSING = "python3-jsonschema is not installed (Debian package python3-jsonschema)"


def _local_validator():
    """A jsonschema validator in this interpreter, or None."""
    try:
        import jsonschema
    except ImportError:
        return None
    with open(SCHEMA) as f:
        schema = json.load(f)
    cls = jsonschema.Draft202012Validator   # the schema's draft (its $comment)
    cls.check_schema(schema)
    return cls(schema)


def _first_error(validator, obj):
    import jsonschema
    # a line is a report or (batch) an error record: name the errors of
    # the one it means to be, not of the other alternative
    kind = "error-record" if isinstance(obj, dict) and "error" in obj else "report"
    sub = dict(validator.schema, oneOf=[{"$ref": "#/$defs/" + kind}])
    err = jsonschema.exceptions.best_match(type(validator)(sub).iter_errors(obj))
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path) or "(the top)"
    return "at %s: %s" % (where, err.message[:400])


def reports(text):
    """The JSON objects in TEXT, one after another."""
    dec = json.JSONDecoder()
    i, out = 0, []
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text):
            return out
        obj, i = dec.raw_decode(text, i)
        out.append(obj)


class Validator:
    def __init__(self):
        self.count = 0
        self.why = None
        self._local = _local_validator()
        self._proc = None
        if self._local is not None:
            return
        if not os.access(SYSTEM_PYTHON, os.X_OK) or os.path.realpath(SYSTEM_PYTHON) == os.path.realpath(
                sys.executable):
            self.why = MISSING
            return
        self._proc = subprocess.Popen([SYSTEM_PYTHON, os.path.abspath(__file__), "--serve"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if self._ask("{}") is None:
            # the co-process could not load jsonschema either
            self.why = self._proc.stderr.read().decode("utf-8", "replace").strip() or MISSING
            self._proc.wait()
            self._proc = None

    def _ask(self, line):
        try:
            self._proc.stdin.write(line.encode("utf-8") + b"\n")
            self._proc.stdin.flush()
            answer = self._proc.stdout.readline().decode("utf-8", "replace").strip()
        except OSError:
            return None
        return answer or None

    def check(self, text, what="the report"):
        """Every report in TEXT is valid; raises Failure otherwise.  Does
        nothing (but parse) when no validator is at hand."""
        try:
            objs = reports(text)
        except ValueError as e:
            raise Failure("%s is not JSON: %s" % (what, e))
        if self.why:
            return objs
        for obj in objs:
            if self._local is not None:
                err = _first_error(self._local, obj)
            else:
                answer = self._ask(json.dumps(obj))
                if answer is None:
                    raise Failure("the schema validator (%s) died" % SYSTEM_PYTHON)
                err = None if answer == "ok" else answer[len("invalid: "):]
            if err:
                raise Failure("%s does not match src/report/pycore-report.schema.json: %s" % (what, err))
            self.count += 1
        return objs

    def summary(self, tap, name):
        """One TAP line for the validation of every report the script made."""
        if self.why:
            tap.skip(name, self.why)
        elif self.count == 0:
            tap.skip(name, "no JSON report was made")
        else:
            tap.ok(name, "%d reports match src/report/pycore-report.schema.json" % self.count)


def serve():
    v = _local_validator()
    if v is None:
        sys.stderr.write(MISSING + " for %s\n" % sys.executable)
        return 77
    for line in sys.stdin:
        try:
            err = _first_error(v, json.loads(line))
        except ValueError as e:
            err = "not JSON: %s" % e
        sys.stdout.write("ok\n" if err is None else "invalid: %s\n" % " ".join(err.split()))
        sys.stdout.flush()
    return 0


def main(argv):
    if argv == ["--serve"]:
        return serve()
    if not argv or argv[0].startswith("-"):
        sys.stderr.write("usage: schema.py FILE... | --serve\n")
        return 2
    v = Validator()
    if v.why:
        print("SKIP: %s" % v.why)
        return 77
    for path in argv:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        try:
            v.check(text, path)
        except Failure as e:
            print(e)
            return 1
    return 0



_validator = None


def validator():
    """The schema validator every JSON report of the tests goes through."""
    global _validator
    if _validator is None:
        _validator = Validator()
    return _validator


def load_report(out, what="pycore's JSON report"):
    """The one report in OUT (pycore's standard output, bytes or str),
    checked against the schema."""
    if isinstance(out, bytes):
        out = out.decode("utf-8", "replace")
    objs = validator().check(out, what)
    if len(objs) != 1:
        raise Failure("%s: expected one report, got %d" % (what, len(objs)))
    return objs[0]


def schema_summary(tap):
    """The script's one TAP line on every report it validated."""
    validator().summary(tap, "every JSON report matches the schema")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
