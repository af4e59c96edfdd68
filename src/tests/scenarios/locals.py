"""Frames holding locals of every built-in type (and some that are not),
for --locals: the process records repr() of each, pycore must print the
same.  Runs unchanged on CPython 3.6 to 3.13; numpy scalars when numpy
imports."""
import _thread
import os
import sys
import threading
import time

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


class Many(object):
    def __init__(self):
        for i in range(12):
            setattr(self, "attr%d" % i, i * 1.5)
        del self.attr3


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


def numpy_scalars(ready):
    i64, f64, bl = numpy.int64(5), numpy.float64(0.1), numpy.bool_(True)
    u8, i8, f32 = numpy.uint8(255), numpy.int8(-3), numpy.float32(0.1)
    ready.release(); parked.acquire()  # noqa: E702


def main_frame(arg, *args, **kwargs):
    local = {"k": arg}
    record(sys.argv[1], sys._current_frames(), True); print("READY", flush=True); parked.acquire()  # noqa: E702


targets = [numbers, strings, containers, closures]
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
