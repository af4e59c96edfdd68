"""Print line-table test vectors whose truth comes from the running
interpreter itself.  Runs unchanged on CPython 3.6 to 3.13:

    python3.X linetable-vectors.py > 3.X.vec

It compiles a set of source snippets (and a few of the interpreter's own
standard-library modules) and prints one record per code object, walking
co_consts recursively:

    TAG FORMAT FIRSTLINENO TABLEHEX POS:LINE,POS:LINE,... LABEL

TAG         the interpreter's version, e.g. 3.11.7; "3.11.7-nodebugranges"
            for the records of a child run under -X no_debug_ranges (3.11+,
            whose tables then hold the no-column entry kind).
FORMAT      lnotab (3.6-3.9), linetable310 (3.10) or locations (3.11+), the
            decoder of src/python/objects/linetable.c that applies.
FIRSTLINENO co_firstlineno.
TABLEHEX    co_lnotab (3.6-3.9) or co_linetable (3.10+) in hex, "-" if empty.
POS         what the decoder is given: the byte offset (3.6-3.10) or the
            code-unit index (3.11+) of an instruction.  Every position of the
            bytecode is listed, plus first the position of a frame that has
            not started yet (f_lasti -1) and, for 3.10+, last the position
            just past the end, which no table entry covers (LINE -1).
LINE        the interpreter's own answer, -1 for "no line" (None).
            3.11+: LINE:END_LINE:COLUMN:END_COLUMN for each instruction of
            the bytecode, the last three from code.co_positions() (-1 for
            None), for src/python/objects/linetable.c's py_positions_locations().
LABEL       where the code object came from, for messages only.

The truth is PyCode_Addr2Line(), called through ctypes: the function the
interpreter itself uses for frame.f_lineno and traceback tb_lineno.  It is
cross-checked against the Python-level view of the same table
(dis.findlinestarts for 3.6-3.9, co_lines() for 3.10, co_positions() for
3.11+), and all units of one instruction (EXTENDED_ARG prefixes, the
instruction, 3.11+ CACHE entries) are checked to share one line.  Anything
that disagrees is printed as a "#" comment line, and so are the counts of
these checks.  Without ctypes the Python-level view is the truth.
"""
import dis
import os
import subprocess
import sys
import types

VERSION = sys.version_info[:2]
TAG = "%d.%d.%d" % sys.version_info[:3]


def _addr2line():
    try:
        import ctypes
        fn = ctypes.pythonapi.PyCode_Addr2Line
    except (ImportError, AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.py_object, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


ADDR2LINE = _addr2line()

# --------------------------------------------------------------------------
# Source snippets.  Each one aims at some corner of the table formats; the
# comment says which.  They must all compile on 3.6 (no walrus, no match).

SNIPPETS = []


def snippet(label, src):
    SNIPPETS.append((label, src))


snippet("tiny", "x = 1\n")
snippet("empty", "")
snippet("pass", "pass\n")

# Forward line jumps far beyond one table byte (127 for 3.6-3.10, the 0-2
# of the 3.11 one-line forms, several varint groups).
snippet("forward-jumps",
        "def f(a):\n" + "\n" * 300 + "    b = a + 1\n" + "\n" * 200 +
        "    c = b * 2\n" + "\n" * 70000 + "    return b + c\n")

# Backward line jumps below -128: a decorator far above its def, a call
# whose arguments run over hundreds of lines, loop bodies far below the
# loop header (the condition or jump back goes to the header line), a
# finally block far below its try.
snippet("backward-jumps",
        "def deco(f):\n    return f\n"
        "@deco\n" + "\n" * 300 + "def decorated():\n    return 1\n"
        "def call(*a):\n    return a\n"
        "r = call(\n    1,\n" + "\n" * 300 + "    2)\n"
        "def loops(n):\n    while n > 0:\n" + "\n" * 200 + "        n -= 1\n"
        "    for i in range(n):\n" + "\n" * 400 + "        n += i\n"
        "    return n\n"
        "def tryfin(x):\n    try:\n" + "\n" * 150 + "        x = 1 / x\n"
        "    finally:\n" + "\n" * 150 + "        x = None\n    return x\n")

# Loops, decorators with arguments, multi-line expressions.
snippet("loops",
        "import functools\n@functools.lru_cache(\n    maxsize=None)\ndef g(n):\n"
        "    total = 0\n    for i in range(n):\n        total += (i *\n            2 +\n"
        "            3)\n        if i % 3:\n            continue\n        elif i > 50:\n"
        "            break\n    else:\n        total = -total\n"
        "    while total > 10:\n        total -= 7\n        if total == 13:\n"
        "            break\n    return total\n")

# try/except/finally, with, comprehensions, lambda, nested functions.
snippet("blocks",
        "def h(xs):\n    try:\n        r = [x * 2 for x in xs\n             if x]\n"
        "    except (ValueError,\n            TypeError) as e:\n        r = None\n"
        "    except Exception:\n        raise\n    else:\n        r = r or []\n"
        "    finally:\n        pass\n"
        "    with open('/dev/null') as f, open('/dev/null') as g:\n"
        "        k = lambda y: (y,\n                       y)\n"
        "    def inner(z):\n        return {z: z for z in range(z)}\n"
        "    s = {v for v in xs}\n    t = (v for v in xs if v\n         )\n"
        "    def outer():\n        n = 0\n        def mid():\n            nonlocal n\n"
        "            def deepest():\n                return n\n            return deepest\n"
        "        return mid\n    return inner, s, t, outer, k\n")

# A long basic block: far more than 255 bytes (3.6-3.10) and 8 code units
# (3.11+) of code on one line, with columns past 127 (long form).
snippet("long-line",
        "def long_line():\n    return (" + " + ".join("a%d" % i for i in range(200)) + ")\n"
        "def long_list():\n    return [" + ", ".join(str(i * 7) for i in range(300)) +
        ", x]\n"
        "def long_then_more(b):\n    s = (" + " + ".join("b[%d]" % i for i in range(150)) + ")\n"
        "    return s\n")

# Many lines of straight code: more than 256 locals and constants, so
# instructions carry EXTENDED_ARG prefixes, and jumps that need them.
snippet("many",
        "def many(flag):\n" + "".join("    v%d = %d\n" % (i, i * 3 + 1) for i in range(400)) +
        "    if flag:\n" + "".join("        v%d += 1\n" % i for i in range(200)) +
        "    return v0 + v399\n")

# Async code, generators.
snippet("async",
        "async def co(a):\n    await a\n    async for x in a:\n        pass\n"
        "    async with a as b:\n        await b\n    return [y async for y in a]\n"
        "async def agen():\n    yield 1\n    await agen()\n"
        "def gen():\n    yield 1\n    x = yield from range(3)\n    return x\n")

# Class bodies, class decorators, keywords.
snippet("classes",
        "class C:\n    x = 1\n    def m(self):\n        return self.x\n"
        "    @property\n    def p(self):\n        return (self\n                .x)\n"
        "    @staticmethod\n    def s(\n            a,\n            b=2,\n"
        "            *c,\n            **d):\n        return a\n"
        "@dataclass_like(\n    x=1)\nclass D(C,\n        metaclass=type):\n    pass\n")

# Columns at the edges of the 3.11+ short (< 80) and one-line (< 128) forms.
snippet("columns",
        "".join("if 1:\n" + " " * n + "z = (q%d)\n" % n
                for n in (1, 70, 79, 80, 120, 126, 127, 128, 200)) +
        "w = " + "x" * 120 + " + y\n"
        "w = " + "x" * 122 + " + y\n"
        "w = (\n  a +\n  b\n  + c)\n")

# Statements that give the compiler artificial instructions: assertions,
# implicit returns after if/else, del, global, chained comparisons,
# conditional expressions, star-unpacking, f-strings, augmented subscripts.
snippet("misc",
        "def m(a, b):\n    global gg\n    assert a, (\n        'msg')\n"
        "    if a < b < 3:\n        gg = a if b else (\n            b)\n    else:\n"
        "        del a\n        return\n    x, *y = b\n    d = {}\n"
        "    d[a] += 1\n    s = f'{a!r:>{b}} {b}'\n"
        "    try:\n        pass\n    except:\n        pass\n"
        "    with a:\n        return b\n")

# A code object whose first line is large (co_firstlineno near 10^5).
snippet("late-start", "\n" * 100000 + "def late(a):\n    return a\n")



def reordered_tree():
    """An AST whose statements were given line numbers out of source order,
    as an AST transformer may: the only way to have 3.6 and 3.7 write
    negative line increments (the reason they became signed in 3.6)."""
    import ast
    src = ("def shuffled(a):\n" +
           "".join("    v%d = a * %d + len(str(a))\n" % (i, i) for i in range(12)) +
           "    return v0\n" +
           "".join("w%d = %d\n" % (i, i) for i in range(6)))
    tree = ast.parse(src)
    lines = [40000, 3, 900, 2, 600, 150, 7, 300, 20, 5000, 4, 1, 70000]
    for stmt, line in zip(tree.body[0].body, lines):
        ast.increment_lineno(stmt, line - stmt.lineno)
    for stmt, line in zip(tree.body[1:], [800, 2, 200000, 1, 129, 3]):
        ast.increment_lineno(stmt, line - stmt.lineno)
    return tree


# Whole modules of the interpreter's own library: a wide, realistic variety
# of code objects.
LIBRARY = ["argparse.py", "textwrap.py", "contextlib.py", "inspect.py",
           "asyncio/base_events.py", "dataclasses.py", "typing.py"]


def library_sources():
    libdir = os.path.dirname(os.__file__)
    for name in LIBRARY:
        path = os.path.join(libdir, name)
        try:
            with open(path, "rb") as f:
                yield "lib:" + name, f.read()
        except OSError:
            pass


# --------------------------------------------------------------------------

def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            for sub in codes(c):
                yield sub


OP_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
OP_CACHE = dis.opmap.get("CACHE") if VERSION >= (3, 11) else None

STATS = {"code objects": 0, "positions": 0, "Addr2Line vs Python-level": 0,
         "disagreements": 0, "EXTENDED_ARG units": 0, "CACHE units": 0,
         "instructions split over lines": 0}
NOTES = []


def note(msg):
    if len(NOTES) < 50:
        NOTES.append(msg)


def python_level(co):
    """{pos: line} from the Python-level API of each version."""
    truth = {}
    if VERSION <= (3, 9):
        # dis.findlinestarts gives (offset, line) where a line starts; each
        # offset has the line of the last start at or before it, and offsets
        # before the first start have co_firstlineno.
        starts = sorted(dis.findlinestarts(co))
        line, k = co.co_firstlineno, 0
        for off in range(0, len(co.co_code), 2):
            while k < len(starts) and starts[k][0] <= off:
                line = starts[k][1]
                k += 1
            truth[off] = line
    elif VERSION == (3, 10):
        for start, end, line in co.co_lines():
            for off in range(start, end, 2):
                truth[off] = -1 if line is None else line
    else:
        for unit, p in enumerate(co.co_positions()):
            truth[unit] = -1 if p[0] is None else p[0]
    return truth


def vector(co, label):
    if VERSION <= (3, 9):
        fmt, table, per_unit = "lnotab", co.co_lnotab, False
    elif VERSION == (3, 10):
        fmt, table, per_unit = "linetable310", co.co_linetable, False
    else:
        fmt, table, per_unit = "locations", co.co_linetable, True
    code = co.co_code
    nunits = len(code) // 2
    # decoder position -> byte offset for PyCode_Addr2Line
    scale = 2 if per_unit else 1
    pos_of_unit = (lambda u: u) if per_unit else (lambda u: 2 * u)
    py = python_level(co)
    positions = list(co.co_positions()) if per_unit else []
    pairs = []
    truth = {}
    for u in range(nunits):
        pos = pos_of_unit(u)
        want = py.get(pos, -1)
        if ADDR2LINE is not None:
            c = ADDR2LINE(co, pos * scale)
            STATS["Addr2Line vs Python-level"] += 1
            if c != want:
                STATS["disagreements"] += 1
                note("%s %s pos %d: PyCode_Addr2Line %d, Python-level %d (kept %d)"
                     % (label, co.co_name, pos, c, want, c))
                want = c
        truth[pos] = want
        if per_unit:
            _, end_line, col, end_col = positions[u]
            pairs.append((pos, want) + tuple(-1 if v is None else v for v in (end_line, col, end_col)))
        else:
            pairs.append((pos, want))

    # Instructions: EXTENDED_ARG* OPCODE CACHE*.  The decoder is given the
    # position of whichever unit f_lasti / prev_instr points at, so every
    # unit of an instruction must have the instruction's line.
    group = []
    for u in range(nunits):
        op = code[2 * u]
        if op == OP_CACHE and group:
            STATS["CACHE units"] += 1
            group.append(u)
            continue
        if group and code[2 * group[-1]] != OP_EXTENDED_ARG:
            check_group(co, label, group, truth, pos_of_unit)
            group = []
        if op == OP_EXTENDED_ARG:
            STATS["EXTENDED_ARG units"] += 1
        group.append(u)
    if group:
        check_group(co, label, group, truth, pos_of_unit)

    # A frame that has not run yet has f_lasti -1: byte offset -1 for
    # 3.6-3.9, f_lasti * 2 = -2 for 3.10, code unit -1 for 3.11+.
    before = {"lnotab": -1, "linetable310": -2, "locations": -1}[fmt]
    if ADDR2LINE is not None:
        pairs.insert(0, (before, ADDR2LINE(co, before * scale)))
    else:
        pairs.insert(0, (before, co.co_firstlineno))
    # 3.10+: the table covers exactly the bytecode, as co_lines() shows;
    # nothing covers the position just past the end.
    if fmt != "lnotab":
        ends = [end for _, end, _ in co.co_lines()]
        end = max(ends) if ends else 0
        if end != len(code):
            note("%s %s: co_lines() ends at %d, the bytecode at %d"
                 % (label, co.co_name, end, len(code)))
        pairs.append((end // 2 if per_unit else end, -1))
    STATS["code objects"] += 1
    STATS["positions"] += len(pairs)
    name = co.co_name.replace(" ", "_") or "?"
    return "%s %s %d %s %s %s:%s" % (TAG, fmt, co.co_firstlineno, table.hex() or "-",
                                     ",".join(":".join("%d" % v for v in p) for p in pairs) or "-", label, name)


def check_group(co, label, group, truth, pos_of_unit):
    lines = sorted(set(truth[pos_of_unit(u)] for u in group))
    if len(lines) > 1:
        STATS["instructions split over lines"] += 1
        note("%s %s: units %d-%d of one instruction have lines %s"
             % (label, co.co_name, group[0], group[-1], lines))


def main():
    global TAG
    child = "--child" in sys.argv
    if child:
        TAG += "-nodebugranges"
    out = sys.stdout
    sources = list(SNIPPETS) + [("ast-reordered", reordered_tree())] + list(library_sources())
    for label, src in sources:
        top = compile(src, "<%s>" % label, "exec", dont_inherit=True)
        for co in codes(top):
            out.write(vector(co, label) + "\n")
    # the other compile modes: an expression, an interactive statement
    for mode, src in (("eval", "(lambda q:\n  q +\n  1)(2)"),
                      ("single", "for i in ():\n  pass\n")):
        for co in codes(compile(src, "<%s>" % mode, mode, dont_inherit=True)):
            out.write(vector(co, mode) + "\n")
    out.write("# %s: truth from %s; %s\n" % (
        TAG, "PyCode_Addr2Line" if ADDR2LINE else "the Python-level API (no ctypes)",
        ", ".join("%s %d" % kv for kv in sorted(STATS.items()))))
    for n in NOTES:
        out.write("# %s\n" % n)
    out.flush()
    # 3.11+: the same again without column information, which turns most
    # entries into the no-column kind.
    if VERSION >= (3, 11) and not child:
        rc = subprocess.call([sys.executable, "-X", "no_debug_ranges",
                              os.path.abspath(__file__), "--child"])
        if rc != 0:
            sys.exit(rc)


if __name__ == "__main__":
    main()
