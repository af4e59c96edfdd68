"""The census of a heap report (pycore heap --format json) against the
truth scenarios/heap.py writes in the process: every type's count and
bytes, the untracked objects reached, the buffers objects own, the
retained sizes of its named containers with their paths, the garbage, the
top of the dominator tree (check-heap.py, and check-arm64.py on the arm64
machine's cores)."""
from .tap import Failure

# the __sizeof__ pycore computes, by the class that defines it
KNOWN = {"object", "list", "dict", "set", "frozenset", "bytearray", "type", "module", "str", "int", "bytes",
         "numpy.ndarray", "array.array"}


def by_name(types):
    """The entries of TYPES summed by module and qualified name (classes of
    one name, as ctypes.CFUNCTYPE makes, are one entry in the truth)."""
    out = {}
    for t in types:
        k = (t["module"], t["qualname"])
        if k in out:
            o = out[k] = dict(out[k])
            for f in ("count", "bytes", "permanent", "permanent_bytes"):
                o[f] += t[f]
            o["exact"] = o["exact"] and t["exact"]
        else:
            out[k] = t
    return out


def known(report):
    """The classes whose __sizeof__ pycore computes for the interpreter of
    REPORT: KNOWN, and code's from 3.11 (code_sizeof adds its cell map
    and opcode cache before)."""
    minor = int(report["python"]["version"].split(".")[1])
    return KNOWN | ({"code"} if minor >= 11 else set())


def compare_types(truth, types, what, errors, computed=KNOWN):
    """Each type of TRUTH ([module, qualname, count, bytes, owner]) against
    pycore's TYPES, what differs put in ERRORS (COMPUTED: the classes whose
    __sizeof__ pycore computes): (the truth by name, exact types, inexact
    types)."""
    want = {(m, q): (n, b, owner) for m, q, n, b, owner in truth}
    got = by_name(types)
    exact_types = inexact_types = 0
    for k in sorted(set(want) | set(got), key=str):
        n, b, owner = want.get(k, (0, 0, None))
        t = got.get(k)
        name = "%s%s.%s" % (what, k[0], k[1])
        if t is None:
            errors.append("%s: %d in the truth, none counted" % (name, n))
            continue
        if t["count"] - t["permanent"] != n:
            errors.append("%s: %d counted (%d permanent), the truth %d" % (name, t["count"], t["permanent"], n))
        if owner is not None and t["sizeof_owner"] != owner:
            errors.append("%s: __sizeof__ of %s, the truth %s" % (name, t["sizeof_owner"], owner))
        if t["exact"]:
            exact_types += 1
            if t["bytes"] - t["permanent_bytes"] != b and n:
                errors.append("%s: %d bytes, the truth %d" % (name, t["bytes"] - t["permanent_bytes"], b))
            if owner is not None and owner not in computed:
                errors.append("%s: exact, but its __sizeof__ is %s's" % (name, owner))
        else:
            inexact_types += 1
            if owner in computed:
                errors.append("%s: inexact, but its __sizeof__ is %s's" % (name, owner))
    return want, exact_types, inexact_types


def compare(report, truth):
    """What the census of REPORT gets wrong against TRUTH; a summary."""
    h = report["heap"]
    if h is None:
        raise Failure("no heap in the report")
    if h["unread"]:
        raise Failure("unread: %s" % "; ".join(h["unread"]))
    errors = []
    want, exact_types, inexact_types = compare_types(truth["types"], h["types"], "", errors, known(report))
    # the objects the GC does not track, reached through the references
    # pycore follows (the truth follows the same ones)
    uwant, _, _ = compare_types(truth["untracked"], h["untracked"]["types"], "untracked ", errors, known(report))
    where = "mimalloc heaps" if report["python"]["free_threaded"] else "gc lists"
    if h["found_in"] != where:
        errors.append("found in %s, a %s build's objects are in its %s" % (
            h["found_in"], "free-threaded" if where != "gc lists" else "default", where))
    if h["permanent"] != truth["frozen"]:
        errors.append("permanent generation: %d, gc.get_freeze_count() %d" % (h["permanent"], truth["frozen"]))
    if h["exact"] != (inexact_types == 0):
        errors.append("exact is %s with %d inexact types" % (h["exact"], inexact_types))
    # the buffers bytearrays, arrays and numpy arrays hold outside
    # themselves: their __sizeof__ past their basic size, as the process sums it
    m = h["memory"]
    if m is not None and "buffers" in truth and m["buffers"] != truth["buffers"]:
        errors.append("buffers the objects own: %d bytes, the process's %d" % (m["buffers"], truth["buffers"]))
    if errors:
        raise Failure("; ".join(errors[:12]) + ("; and %d more" % (len(errors) - 12) if len(errors) > 12 else ""))
    objects = sum(n for n, _, _ in want.values())
    loose = sum(n for n, _, _ in uwant.values())
    return ("%d objects of %d types as the process counts them, bytes of %d types exact, %d inexact; "
            "%d untracked objects reached, of %d types; %s bytes of buffers they own") % (
                objects, len(want), exact_types, inexact_types, loose, len(uwant),
                m["buffers"] if m is not None else "no mappings: no")


def compare_retained(report, truth):
    """The retained size, and the number of objects it is, of each of the
    scenario's named containers, as the process computed them, among the
    report's largest retainers, each with its path from sys.modules."""
    r = report["heap"]["retained"]
    if r is None:
        raise Failure("no retained sizes in the report")
    got = {int(o["address"], 16): o for o in r["retainers"]}
    errors = []
    for name, (addr, size, count) in sorted(truth["retained"].items()):
        o = got.get(addr)
        path = "<thread %d, main()>.%s" % (truth["pid"], name) if name == "held" else \
            "sys.modules['__main__'].%s" % name
        if o is None:
            errors.append("%s (0x%x, %d bytes retained) is not among the %d largest retainers" % (
                name, addr, size, len(r["retainers"])))
        elif (o["retained"], o["objects"], o["path"]) != (size, count, path):
            errors.append("%s: %d bytes in %d objects retained, path %s; the process: %d bytes in %d objects, %s" % (
                name, o["retained"], o["objects"], o["path"], size, count, path))
    # the garbage: what a forked copy's collection found (gc.garbage with
    # DEBUG_SAVEALL), by type
    g, want = r["garbage"], truth["garbage"]
    got_types = {"%s.%s" % (t["module"], t["qualname"]): t["count"] for t in g["types"]}
    if g["objects"] != want["objects"] or got_types != want["types"]:
        errors.append("garbage: %d objects %s; the process's collection: %d %s" % (
            g["objects"], got_types, want["objects"], want["types"]))
    if errors:
        raise Failure("; ".join(errors))
    return "the retained sizes of %s as the process computes them, with their paths; %d of the objects reached " \
           "from the roots; garbage: %d objects of %d types, as the process's collection found" % (
               ", ".join(sorted(truth["retained"])), r["reached_objects"], g["objects"], len(got_types))


def compare_tree(report, truth):
    """The top of the dominator tree: each node after its parent, retaining
    its own size and at least what its children in the tree retain; the
    scenario's named containers in it with what the process computed."""
    r = report["heap"]["retained"]
    tree, errors = r["tree"], []
    kids = [[] for _ in tree]
    for i, n in enumerate(tree):
        if not -1 <= n["parent"] < i:
            errors.append("node %d: parent %d, not one before it" % (i, n["parent"]))
        elif n["parent"] >= 0:
            kids[n["parent"]].append(n)
    for i, n in enumerate(tree):
        below = sum(k["retained"] for k in kids[i])
        if n["retained"] < n["bytes"] + below or n["objects"] < 1 + sum(k["objects"] for k in kids[i]):
            errors.append("node %d (%s at %s) retains %d bytes in %d objects: less than itself (%d) and its "
                          "children (%d)" % (i, n["qualname"], n["address"], n["retained"], n["objects"],
                                             n["bytes"], below))
    top = sum(n["retained"] for n in tree if n["parent"] < 0)
    if top > r["reached_bytes"]:
        errors.append("the tree's top retains %d bytes, more than the %d reached" % (top, r["reached_bytes"]))
    at = {int(n["address"], 16): n for n in tree}
    for name, (addr, size, count) in sorted(truth["retained"].items()):
        n = at.get(addr)
        if n is None or (n["retained"], n["objects"]) != (size, count):
            errors.append("%s: %s in the tree; the process: %d bytes in %d objects" % (
                name, n and (n["retained"], n["objects"]), size, count))
    if errors:
        raise Failure("; ".join(errors[:5]))
    return "a tree of %d nodes, %d at its top" % (len(tree), sum(n["parent"] < 0 for n in tree))
