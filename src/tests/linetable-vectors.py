"""Print line-table test vectors, the truth coming from the running
interpreter itself.  Runs unchanged on CPython 3.6 to 3.13.

One line per code object:  FORMAT FIRSTLINENO TABLEHEX POS:LINE,POS:LINE,...
FORMAT is lnotab (3.6-3.9; POS = byte offset, truth from dis.findlinestarts),
linetable310 (3.10; POS = byte offset, truth from co_lines()) or locations
(3.11+; POS = code unit, truth from co_positions()).  LINE -1 means None.
"""
import dis
import sys
import types

SOURCES = [
    "x = 1\n",
    # big forward and backward jumps, long lines apart
    "def f(a):\n" + "\n" * 300 + "    b = a + 1\n" + "\n" * 200 + "    return b\n",
    # loops go backwards; decorators and multi-line expressions
    "import functools\n@functools.lru_cache(\n    maxsize=None)\ndef g(n):\n"
    "    total = 0\n    for i in range(n):\n        total += (i *\n            2 +\n            3)\n"
    "    while total > 10:\n        total -= 7\n    return total\n",
    # try/except/finally, with, comprehensions, lambda, nested functions
    "def h(xs):\n    try:\n        r = [x * 2 for x in xs\n             if x]\n    except (ValueError,\n"
    "            TypeError) as e:\n        r = None\n    finally:\n        pass\n"
    "    with open('/dev/null') as f:\n        k = lambda y: (y,\n                       y)\n"
    "    def inner(z):\n        return {z: z for z in range(z)}\n    return inner\n",
    # a long basic block: more than 255 bytes of code on one line
    "def long_line():\n    return (" + " + ".join("a%d" % i for i in range(200)) + ")\n",
    # many lines of straight code
    "def many():\n" + "".join("    v%d = %d\n" % (i, i) for i in range(400)) + "    return v0\n",
    # async and generators
    "async def co(a):\n    await a\n    async for x in a:\n        pass\n"
    "def gen():\n    yield 1\n    yield from range(3)\n",
    # class bodies
    "class C:\n    x = 1\n    def m(self):\n        return self.x\n",
]


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            for sub in codes(c):
                yield sub


def vector(co):
    v = sys.version_info[:2]
    if v <= (3, 9):
        fmt, table = "lnotab", co.co_lnotab
        starts = list(dis.findlinestarts(co))
        pairs = []
        for off in range(0, len(co.co_code), 2):
            line = co.co_firstlineno
            for s, l in starts:
                if s <= off:
                    line = l
            pairs.append((off, line))
    elif v == (3, 10):
        fmt, table = "linetable310", co.co_linetable
        pairs = []
        for start, end, line in co.co_lines():
            for off in range(start, end, 2):
                pairs.append((off, -1 if line is None else line))
    else:
        fmt, table = "locations", co.co_linetable
        pairs = [(i, -1 if p[0] is None else p[0]) for i, p in enumerate(co.co_positions())]
    return "%s %d %s %s" % (fmt, co.co_firstlineno, table.hex() or "-",
                            ",".join("%d:%d" % p for p in pairs) or "-")


for src in SOURCES:
    top = compile(src, "<vector>", "exec")
    for co in codes(top):
        print(vector(co))
