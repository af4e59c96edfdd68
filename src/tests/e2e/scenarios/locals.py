"""Frames holding locals of every built-in type (and some that are not),
and of the standard library's types services hold (stdlib_values), for
--locals: the process records repr() of each, pycore must print the same.
Runs unchanged on CPython 3.6 to 3.15; numpy scalars when numpy
imports."""
import _thread
import collections
import datetime
import decimal
import enum
import fractions
import functools
import os
import pathlib
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None

parked = _thread.allocate_lock()
parked.acquire()


class WithDict(object):
    def __init__(self):
        self.a = 1


class WithSlots(object):
    __slots__ = ("x", "unset")

    def __init__(self):
        self.x = 2


class Derived(WithSlots):
    __slots__ = ("y",)

    def __init__(self):
        WithSlots.__init__(self)
        self.y = [3]


SHARED = WithDict()  # held by two frames: its attributes listed once


class Many(object):
    def __init__(self):
        for i in range(12):
            setattr(self, "attr%d" % i, i * 1.5)
        del self.attr3


class Color(enum.Enum):
    RED = 1
    GREEN = "green"


class AppError(Exception):
    pass


Point = collections.namedtuple("Point", "x y")

try:
    import dataclasses
except ImportError:  # 3.6
    dataclasses = None
if dataclasses is not None:
    @dataclasses.dataclass
    class Order:
        id: int
        items: list = dataclasses.field(default_factory=list)
        secret: str = dataclasses.field(default="s", repr=False)

    @dataclasses.dataclass
    class Written:
        a: int = 1

        def __repr__(self):
            return "written by hand"

    class Derived2(Order):
        pass


class Sub(Point):
    pass


def numbers(ready):
    zero, small, negative = 0, 42, -7
    big, negbig = 2 ** 100, -(2 ** 70)
    digits30, digits60 = 2 ** 30, 2 ** 60 - 1
    huge = 10 ** 300
    t, f, none = True, False, None
    tenth, neg, large, tiny = 0.1, -2.5, 1e300, 5e-324
    inf, ninf, nan, negzero = float("inf"), float("-inf"), float("nan"), -0.0
    whole, e16, e15, small_e = 1.0, 1e16, 123456789012345.6, 1e-05
    ready.release(); parked.acquire()  # noqa: E702


def strings(ready):
    empty, ascii_ = "", "hello world"
    latin, cyrillic, emoji = "caf\xe9", "\u0416\u0443\u043a", "\U0001f40dpy"
    quotes, both = "it's", "it's \"quoted\""
    escapes = "tab\there\nnew\rret\\slash\x00nul\x7fdel"
    nonprint = "\x85\xa0\u2028\ufeff\U000e0001"
    long_ = "x" * 1000
    b, b2 = b"\x00ab", b"it's \xff\"q\""
    ba, eba = bytearray(b"xy\n"), bytearray()
    ready.release(); parked.acquire()  # noqa: E702


def containers(ready):
    lst, tup, one, empty_t = [1, "two", 3.0], (1, 2), (1,), ()
    empty_l, empty_d, empty_s, empty_fs = [], {}, set(), frozenset()
    d = {"a": 1, "b": [1, 2, {"c": (3,)}], 5: None}
    s, fs = {7}, frozenset({"x"})
    nested = [[[[]]], {"k": {"k2": []}}]
    selfref = [1]
    selfref.append(selfref)
    selfdict = {}
    selfdict["me"] = selfdict
    many = list(range(300))
    inst, slotted, derived, many_attrs = WithDict(), WithSlots(), Derived(), Many()
    shared = SHARED
    inst.later = {"added": "after __init__"}
    split_dict = many_attrs.__dict__
    ready.release(); parked.acquire()  # noqa: E702


def closures(ready):
    cellvar = "captured"
    other = [1]

    def inner():
        freevar = cellvar
        also = other
        ready.release(); parked.acquire()  # noqa: E702
        return freevar, also
    inner()


def stdlib_values(ready):
    cplx, imag, cneg, cinf = complex(1, 2), 3j, complex(-1.5, -0.0), complex(float("inf"), float("nan"))
    cbig = complex(1e16, 1e-5)
    rng, rng_step, rng_neg = range(10), range(1, 20, 3), range(5, -5, -2)
    sl, sl_none = slice(1, 10, 2), slice(None, 5)
    mod_os, mod_sys, mod_main = os, sys, sys.modules[__name__]
    zde, kerr, verr, custom = ZeroDivisionError("division by zero"), KeyError("k", 2), ValueError(), AppError("x")
    dq, dq_max, dq_empty = collections.deque(range(100)), collections.deque([1, "a"], maxlen=5), collections.deque()
    od, od_empty = collections.OrderedDict([("a", 1), ("b", [2])]), collections.OrderedDict()
    od_moved = collections.OrderedDict([("a", 1), ("b", 2)])
    od_moved.move_to_end("a")
    dd, dd_none = collections.defaultdict(list, {"k": [1]}), collections.defaultdict()
    cnt, cnt_empty = collections.Counter("abracadabra"), collections.Counter()
    pt, sub = Point(1, "y"), Sub(2, [3])
    day, clock = datetime.date(2024, 1, 2), datetime.time(3, 4, 5, 6)
    clock_min, clock_fold = datetime.time(23, 59), datetime.time(1, 2, fold=1)
    moment = datetime.datetime(2024, 1, 2, 3, 4)
    moment_s = datetime.datetime(1999, 12, 31, 23, 59, 58)
    moment_tz = datetime.datetime(2024, 1, 2, 3, 4, 5, 600, tzinfo=datetime.timezone.utc)
    delta, delta0, delta_neg = datetime.timedelta(days=1, seconds=2, microseconds=3), datetime.timedelta(0), \
        datetime.timedelta(seconds=-1)
    est = datetime.timezone(datetime.timedelta(hours=-5), "EST")
    plus1 = datetime.timezone(datetime.timedelta(hours=1))
    color, green = Color.RED, Color.GREEN
    uid = uuid.UUID("12345678-1234-5678-1234-567812345678")
    frac, frac_neg = fractions.Fraction(1, 3), fractions.Fraction(-10 ** 30, 7)
    part = functools.partial(int, "10", base=2)
    vinfo, hooks, stat = sys.version_info, sys.get_asyncgen_hooks(), os.stat(os.sep)
    path, pure, rel, here = pathlib.Path("/usr/lib/../lib/x.py"), pathlib.PurePosixPath("a//b/./c"), \
        pathlib.Path(), pathlib.Path("it's")
    # (the process's own repr() before the core turns each into a str
    # once: pycore reads that)
    if dataclasses is not None:
        order, written, derived_order = Order(7, ["tea"]), Written(), Derived2(8)
    dec, dec_neg, dec_small, dec_big = decimal.Decimal("3.14"), decimal.Decimal("-0.000123"), \
        decimal.Decimal("1E-9"), decimal.Decimal("-1267650600228229401496703205376.123")
    dec_int, dec_inf, dec_nan, dec_zero = decimal.Decimal("12345678901234567890"), decimal.Decimal("-Infinity"), \
        decimal.Decimal("NaN123"), decimal.Decimal("0.00")
    genexp = (x for x in ())

    def numbers_gen():
        yield 1
    gen = numbers_gen()

    async def waiting():
        pass
    coro = waiting()
    big, big_str, big_dict = list(range(100000)), "y" * 5000, dict.fromkeys(range(1000))
    shared = SHARED
    ready.release(); parked.acquire()  # noqa: E702
    coro.close()


def numpy_scalars(ready):
    i64, f64, bl = numpy.int64(5), numpy.float64(0.1), numpy.bool_(True)
    u8, i8, f32 = numpy.uint8(255), numpy.int8(-3), numpy.float32(0.1)
    arr, arr_neg, arr_bool = numpy.array([1, 2, 3]), numpy.array([-1, 10, 100]), numpy.array([True, False])
    arr_strided = numpy.arange(10)[::3]
    arr_float, arr_2d = numpy.array([0.5, 1.0]), numpy.zeros((2, 3), dtype=numpy.int32)
    ready.release(); parked.acquire()  # noqa: E702


def main_frame(arg, *args, **kwargs):
    local = {"k": arg}
    record(sys.argv[1], sys._current_frames(), True); print("READY", flush=True); parked.acquire()  # noqa: E702


targets = [numbers, strings, containers, closures, stdlib_values]
if numpy is not None:
    targets.append(numpy_scalars)
readies = []
for target in targets:
    ready = _thread.allocate_lock()
    ready.acquire()
    readies.append(ready)
    threading.Thread(target=target, args=(ready,), name=target.__name__, daemon=True).start()
for ready in readies:
    ready.acquire()
time.sleep(0.1)
main_frame("positional", 1, 2, key="word")
