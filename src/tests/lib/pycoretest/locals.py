"""The owner of every assertion on variables (--locals): pycore's reprs
against the ones the process recorded (frames and asyncio tasks), their
attributes, lengths and cut reprs, and the few shapes other checkers ask
for (a local by name, frames with or without locals).  The checkers call
these; none compares locals on its own."""
import re

from .tap import Failure

# Types whose repr pycore forms itself: it must be exactly Python's.
SCALARS = {"int", "bool", "float", "str", "bytes", "bytearray", "NoneType"}
DEFAULT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-f]+>$")
# The standard library's types pycore forms from memory (the versions where
# it does, first and last minor): exactly Python's repr too.
STDLIB_EXACT = {
    "complex": (6, 99), "range": (6, 99), "slice": (6, 99), "module": (6, 99),
    "ZeroDivisionError": (6, 99), "KeyError": (6, 99), "ValueError": (6, 99), "__main__.AppError": (6, 99),
    "collections.deque": (6, 99), "collections.OrderedDict": (6, 99), "collections.defaultdict": (6, 99),
    "collections.Counter": (6, 99), "__main__.Point": (7, 99), "__main__.Sub": (7, 99),
    "datetime.date": (6, 99), "datetime.time": (6, 99), "datetime.datetime": (6, 99),
    "datetime.timedelta": (6, 99), "datetime.timezone": (6, 99), "__main__.Color": (6, 99),
    "uuid.UUID": (6, 99), "fractions.Fraction": (6, 99), "functools.partial": (6, 99),
    "sys.version_info": (6, 99), "decimal.Decimal": (6, 99), "asyncgen_hooks": (6, 99),
    "os.stat_result": (9, 99), "pathlib.PosixPath": (6, 12), "pathlib.PurePosixPath": (6, 12),
    "pathlib._local.PosixPath": (13, 99), "pathlib._local.PurePosixPath": (13, 99), "__main__.Order": (7, 99), "__main__.Derived2": (7, 99), "generator": (6, 99), "coroutine": (6, 99),
}
# Locals that may keep the fallback: a Decimal that needs an exponent (its
# "E" or "e" is the thread's context's choice).
FALLBACK_NAMES = {"dec_small"}


def compare_locals(truth, report, stdlib=True, no_files=False):
    """Every variable of every frame: pycore's repr is Python's, or a true
    prefix ending in ... with the error saying it was cut, or (for types
    with their own __repr__) comes with an error saying so.  Never a
    different repr stated as fact.  STDLIB: the standard library's types of
    STDLIB_EXACT must be exact too (not where the interpreter's files are
    hidden: then even static types' names are not in the core).  NO_FILES:
    no file of the interpreter was read, and a type defined in it has its
    name in the file's read-only pages, which a kernel core leaves out: a
    default repr (<T object at 0x...>) may then be missing, with an error
    that says the type's name was not captured.  Returns how many reprs
    were exact."""
    threads = {}
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            threads[t["ident"]] = t
    exact = 0
    for tt in truth["threads"]:
        frames = [f for f in threads[tt["ident"]]["frames"] if f["kind"] == "python"]
        for i, (tf, f) in enumerate(zip(tt["frames"], frames)):
            where = "thread %s frame %d (%s)" % (tt.get("name"), i, tf["function"])
            if f["locals"] is None:
                raise Failure("%s: locals is null with --locals" % where)
            got = dict((l["name"], l) for l in f["locals"])
            if sorted(got) != sorted(tf["locals"]):
                raise Failure("%s: variables %s, the process has %s" % (where, sorted(got), sorted(tf["locals"])))
            for name, (tname, want, attrs, length) in tf["locals"].items():
                exact += compare_value("%s: %s (%s)" % (where, name, tname), tname, want, got[name],
                                       minor=truth["version"][1] if stdlib else None,
                                       fallback=name in FALLBACK_NAMES, no_files=no_files)
                compare_length("%s: %s (%s)" % (where, name, tname), want, length, got[name])
                if attrs is None:
                    continue
                listed = got[name]["attributes"]
                ref = got[name].get("attributes_shown_in")
                if ref is not None:
                    # listed once per report: at the variable it points to
                    if listed is not None:
                        raise Failure("%s: %s: attributes both listed and shown elsewhere" % (where, name))
                    listed = attributes_at(report, ref, got[name]["address"])
                mine = dict((a["name"], a) for a in listed or [])
                if sorted(mine) != sorted(attrs):
                    raise Failure("%s: %s: attributes %s, the process has %s"
                                  % (where, name, sorted(mine), sorted(attrs)))
                for aname, (atype, awant, _) in [(k, v + [None]) for k, v in attrs.items()]:
                    exact += compare_value("%s: %s.%s (%s)" % (where, name, aname, atype), atype,
                                           awant, mine[aname], no_files=no_files)
    return exact


def attributes_at(report, ref, address):
    """The attributes listed for the object at ADDRESS by a variable of the
    frame REF ({"thread": tid, "frame": index}) points to."""
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            if t["tid"] == ref["thread"] and ref["frame"] < len(t["frames"]):
                for l in t["frames"][ref["frame"]]["locals"] or []:
                    if l["address"] == address and l["attributes"] is not None:
                        return l["attributes"]
    raise Failure("attributes_shown_in %s: no variable there lists %s's attributes" % (ref, address))


def listed_once(report):
    """--locals=deep lists one object's attributes once per report."""
    seen = set()
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            for f in t["frames"]:
                for l in f["locals"] or []:
                    if l["attributes"] is not None:
                        if l["address"] in seen:
                            raise Failure("the attributes of %s are listed twice" % l["address"])
                        seen.add(l["address"])
    return len(seen)


def compare_length(label, want, length, l):
    """A cut repr of a str, bytes or container says its real length."""
    r = l["repr"]
    cut = r is not None and r != want and r.endswith("...") and l["error"] and "cut" in l["error"]
    if l["length"] is not None and (not cut or l["length"] != length):
        raise Failure("%s: length %s, the process has len() %s (repr cut: %s)" % (label, l["length"], length, cut))
    if cut and length is not None and l["length"] is None and l["type"] in (
            "str", "bytes", "list", "tuple", "dict", "set", "collections.deque"):
        raise Failure("%s: a cut repr without its length %d" % (label, length))


def compare_value(label, tname, want, l, minor=None, fallback=False, no_files=False):
    """1 if pycore's repr is exactly Python's; 0 if it is honestly not."""
    r, err = l["repr"], l["error"]
    if r == want:
        return 1
    if no_files and r is None and err and "type name not captured" in err and DEFAULT_REPR.match(want):
        return 0
    if r is not None and r.endswith("...") and err and "cut" in err and want.startswith(r[:-3]):
        return 0
    lo, hi = STDLIB_EXACT.get(tname, (99, 0))
    strict = minor is not None and lo <= minor <= hi and not fallback
    if tname == "numpy.ndarray":
        # pycore forms short 1-d int and bool arrays: exact, or a fallback
        # that names the shape and dtype
        strict = strict or (r is not None and not r.startswith("<") and err is None)
        if r is not None and r.startswith("<") and not (err and "shape" in err):
            raise Failure("%s: fallback %r without the shape and dtype: %r" % (label, r, err))
    if tname in SCALARS or DEFAULT_REPR.match(want) or (tname.startswith("numpy.") and
                                                        tname != "numpy.ndarray") or strict:
        raise Failure("%s: repr %r (error %r), Python says %r" % (label, r, err, want))
    if err is None:
        raise Failure("%s: repr %r stated as exact, Python says %r" % (label, r, want))
    return 0


def compare_task_locals(want, report):
    """--locals: each task frame's variables with Python's own reprs (or,
    where pycore cannot form one, an error that says so).  Returns how many
    reprs were exact."""
    got = dict((t["address"], t) for i in report["interpreters"] for l in (i["asyncio"] or [])
               for t in l["tasks"])
    exact = 0
    for w in want["tasks"]:
        for i, (wf, gf) in enumerate(zip(w["stack"], got[w["address"]]["stack"])):
            where = "task %s frame %d (%s)" % (w["name"], i, wf["function"])
            mine = dict((l["name"], l) for l in gf["locals"] or [])
            if sorted(mine) != sorted(wf["locals"]):
                raise Failure("%s: variables %s, the process has %s" % (where, sorted(mine), sorted(wf["locals"])))
            for name, (tname, r) in wf["locals"].items():
                exact += compare_value("%s: %s (%s)" % (where, name, tname), tname, r, mine[name])
    return exact


def find_local(report, function, name):
    for interp in report["interpreters"]:
        for t in interp["threads"]:
            for f in t["frames"]:
                if f["function"] == function:
                    for l in f["locals"] or []:
                        if l["name"] == name:
                            return l
    raise Failure("no local %s in %s" % (name, function))


def frames_with_locals(report):
    """The frames of the report that carry variables (not null)."""
    return [f for i in report["interpreters"] for t in i["threads"] for f in t["frames"]
            if f["locals"] is not None]


def check_max_repr(report, n):
    """--max-repr N: every repr, "..." included, is at most N characters,
    and ends in "..." exactly when its error says it was cut.  Returns
    how many were cut."""
    cut = 0
    for t in [t for i in report["interpreters"] for t in i["threads"]]:
        for f in t["frames"]:
            for l in f["locals"] or []:
                r = l["repr"]
                if r is not None and (len(r) > n or ("cut" in (l["error"] or "")) != r.endswith("...")):
                    raise Failure("--max-repr %d: %s = %r (error %r)" % (n, l["name"], r, l["error"]))
                cut += r is not None and r.endswith("...")
    return cut
