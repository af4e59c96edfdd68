"""TAP output for the test scripts, one result line per scenario, so that
automake's tap-driver.sh counts each (and each skip, by name) in
test-suite.log: "ok N - name", "not ok N - name", "ok N - name # SKIP why",
and the plan "1..N" at the end (a script that dies before it has no plan:
the driver reports an error).

A scenario is a function run by TAP.run(): it passes by returning (a
string it returns is shown after the name), fails by raising Failure, and
is skipped by raising Skip.  A program that is gone when the scenario
starts it (a tool uninstalled during the run) makes the scenario a skip
naming it; the pycore under test gone is a failure.  Any other exception
fails that scenario alone (its traceback as TAP comments) and the script
goes on.
"""
import os
import sys
import traceback


class Failure(Exception):
    """A scenario's result differs from what it must be."""


class Skip(Exception):
    """A scenario that cannot run here (interpreter, tool or compiler
    missing); the message says what is missing."""


def _clean(text):
    # '#' starts a directive in TAP: keep it out of names and reasons
    return " ".join(str(text).replace("#", "no.").split())


def program_missing(e):
    """The program whose start failed because it is not there (it was
    when the script began, or it would have been skipped then), or None
    when E is not such a failure."""
    if not isinstance(e, (FileNotFoundError, PermissionError)) or not e.filename:
        return None
    tb = traceback.extract_tb(e.__traceback__)
    if not tb or os.path.basename(tb[-1].filename) != "subprocess.py":
        return None
    return str(e.filename)


class TAP:
    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.n = 0
        self.failed = 0
        self.skipped = 0

    def _line(self, text):
        self.out.write(text + "\n")
        self.out.flush()

    def diag(self, text):
        for line in str(text).splitlines():
            self._line("# " + line)

    def ok(self, name, detail=None):
        self.n += 1
        self._line("ok %d - %s" % (self.n, _clean(name + (": " + detail if detail else ""))))

    def not_ok(self, name, why):
        self.n += 1
        self.failed += 1
        lines = str(why).splitlines() or [""]
        self._line("not ok %d - %s: %s" % (self.n, _clean(name), _clean(lines[0])))
        self.diag("\n".join(lines[1:]))

    def skip(self, name, why):
        self.n += 1
        self.skipped += 1
        self._line("ok %d - %s # SKIP %s" % (self.n, _clean(name), _clean(why)))

    def run(self, name, fn, *args, **kw):
        """Run one scenario; returns what it returned, or None."""
        try:
            detail = fn(*args, **kw)
        except Skip as e:
            self.skip(name, e)
        except Failure as e:
            self.not_ok(name, e)
        except OSError as e:
            tool = program_missing(e)
            if tool is None:
                self.not_ok(name, "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))
            elif tool == os.environ.get("PYCORE"):
                self.not_ok(name, "the pycore under test, %s, is gone: %s" % (tool, e.strerror))
            else:
                self.skip(name, "%s is not installed (any more): %s" % (tool, e.strerror))
        except Exception as e:  # a bug of the test or a tool gone wrong: say so, go on
            self.not_ok(name, "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))
        else:
            self.ok(name, detail if isinstance(detail, str) else None)
            return detail
        return None

    def done(self):
        """Print the plan; the script's exit status (1 when any failed)."""
        self._line("1..%d" % self.n)
        return 1 if self.failed else 0
