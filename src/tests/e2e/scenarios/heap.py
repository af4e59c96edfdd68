"""A heap of known shapes, for check-heap.py: the process builds it, stops
the GC, takes its own census and writes it to argv[1] (JSON), prints
READY, and sleeps until killed.

The heap: a module-level cache of dicts of lists, instances with
__slots__ and with a __dict__, subclasses of dict, list, set, str and int,
a leaking list of closures, reference cycles no one holds (those made
with the module, which the first collection frees, and make_garbage()'s,
made with the GC off: garbage), big bytes, bytearrays and array.arrays,
numpy arrays (where the interpreter has numpy), a deque, a frozenset, a
module of its own; on a free-threaded build, objects three more threads made
(in their own mimalloc heaps), one of which has ended.

With "retained" among its arguments, the census also records the retained
size of each of RETAINERS, its module-level containers, and of main()'s
local "held" (see retained()), and the garbage a collection would free
(made by make_garbage(), counted by garbage()).

With "leak" among them: after READY, SIGUSR1 makes it leak (20000 more
LeakItem objects in the module-level list LEAKED, 5000 strings in the
dict LEAKED_TEXT), take its census again
into argv[1] + ".2" (with LEAKED's id) and print READY again; with
"retained" too, both censuses record the retained sizes of LEAKED and
LEAKED_TEXT as well.

The census is what the interpreter itself says: gc.get_objects() (every
object on the GC's lists but the permanent generation's), each counted by
type (its __module__ and __qualname__) with sys.getsizeof; for each type
the class along its MRO whose __dict__ defines __sizeof__; and
gc.get_freeze_count(), the permanent generation's size (3.7+).  Taking the
census leaves the heap as it found it: what it allocates is made after
gc.get_objects() and freed before it returns, without cycles (json.dumps'
C encoder, os.write), and everything made once on a first call (print's
keyword tuple before 3.12) is made by a first census before the one
written."""
import _signal
import array
import collections
import ctypes
import gc
import os
import signal
import sys
import time
import types


class Slotted:
    __slots__ = ("a", "b")


class Node:
    def __init__(self, i):
        self.i = i
        self.kids = [i]


class MyDict(dict):
    pass


class MyList(list):
    pass


class MySet(set):
    pass


class MyStr(str):
    pass


class MyInt(int):
    pass


class LeakItem:
    __slots__ = tuple("s%d" % i for i in range(20))


class Sized:
    """A class of its own __sizeof__: pycore cannot know what it says."""

    def __sizeof__(self):
        return 1000


CACHE = {i: {"k": i, "v": [i, str(i)]} for i in range(20000)}
SLOTTED = [Slotted() for _ in range(5000)]
NODES = [Node(i) for i in range(3000)]
SUBS = [MyDict(a=i) for i in range(100)] + [MyList(range(i % 7)) for i in range(100)] + \
    [MySet(range(i % 20)) for i in range(100)]
STRS = [MyStr("s" * (i % 50)) for i in range(200)]
INTS = [MyInt(i * 10**(i % 30)) for i in range(200)]
SIZED = [Sized() for _ in range(10)]
LEAK = []
for i in range(1000):
    def f(x=i, y=[i]):
        return x, y
    LEAK.append(f)
for i in range(500):
    a, b = [], {}
    a.append(b)
    b["a"] = a
del a, b
BIG = [bytes(100000 + i) for i in range(5)] + [bytearray(200000 + i) for i in range(5)] + [
    array.array("d", range(1000 + i)) for i in range(3)] + [array.array("b"), array.array("q", [1] * 777)]
BIG[-1].append(2)
# numpy's arrays where the interpreter has numpy (Debian's): arrays that
# own their data (of three dtypes, one of them 2-D), views that do not, an
# empty one
try:
    import numpy
    _base = numpy.arange(30000, dtype=numpy.int32)
    ARRAYS = [numpy.zeros(100000 + i) for i in range(3)] + [
        numpy.ones((50, 60), dtype=numpy.complex128), _base, _base[::3], _base.reshape(100, 300), numpy.zeros(0)]
    del _base
except Exception:   # (not installed, or not for this interpreter)
    ARRAYS = []
# the types whose objects hold buffers outside themselves that pycore
# counts (heap.memory.buffers: their __sizeof__ past their basic size):
# numpy's arrays only with numpy 1, whose arrays pycore sizes
BUFFER_OWNERS = {"bytearray", "array.array"} | (
    {"numpy.ndarray"} if ARRAYS and sys.modules["numpy"].__version__.startswith("1.") else set())
BUFFERS = [0]
TEXTS = {"k%d" % i: ("value %d " % i) * (i % 40) + "\u00e9" * (i % 3) + "\u20ac" * (i % 5 == 0)
         for i in range(3000)}
NUMBERS = [(i, i * 2**70, float(i)) for i in range(2000)]
SETS = [set(range(i % 50)) for i in range(500)]
FROZEN = frozenset(range(100))
QUEUE = collections.deque(range(1000))
LEAKED = [LeakItem() for _ in range(1000)]
LEAKED_TEXT = {}
MODULE = types.ModuleType("heapmod")
MODULE.x = [1, 2, 3]
# a free-threaded build's objects live in the heaps of the thread that
# made them: there, two threads build objects of their own (held by
# THREADED) and wait, and a third ends (its heaps' segments left to the
# interpreter's pool, until another thread takes them over)
FREE_THREADED = not getattr(sys, "_is_gil_enabled", lambda: True)()
THREADED = {}
ENDING = []


def build_own(name, ready, never):
    THREADED[name] = [Node(i) for i in range(500)] + [{"t": name, "i": [i]} for i in range(500)]
    ready.set()
    never.wait()


def start_builders():
    import threading
    import warnings
    # (the census finds the garbage in a forked copy, which Python warns of
    # while threads run)
    warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
    never = threading.Event()
    for name in ("builder-1", "builder-2"):
        ready = threading.Event()
        threading.Thread(target=build_own, args=(name, ready, never), name=name, daemon=True).start()
        ready.wait()
    ready = threading.Event()
    ENDING.append(threading.Event())
    ENDING.append(threading.Thread(target=build_own, args=("ended", ready, ENDING[0]), name="ended"))
    ENDING[1].start()
    ready.wait()


def end_builder():
    """The third builder ended, after a first census (when the census that
    counts has no new page to make, the segments it left stay in the pool)."""
    ENDING[0].set()
    ENDING[1].join()
    ENDING.clear()


class Registry:
    """A class-level cache: reached through the class's namespace."""
    items = [[i, "registry %d" % i] for i in range(2000)]


def owner(t):
    """The class along T's MRO that defines __sizeof__, named as pycore
    names a type."""
    for m in t.__mro__:
        if "__sizeof__" in m.__dict__:
            return m.__qualname__ if m.__module__ == "builtins" else "%s.%s" % (m.__module__, m.__qualname__)


# The references pycore follows to the objects the GC does not track: the
# exact built-in containers' and Python classes' instances' (whose
# tp_traverse, the word after tp_flags and tp_doc in PyTypeObject, at 184
# on 64-bit builds of every version, 16 more where the object header is
# (a free-threaded build's is 32 bytes, not 16), is subtype_traverse, but
# for the classes a Python metaclass makes), a class's namespace, bases
# and MRO, a function's defaults, keyword defaults, closure and code, and
# a code object's constants, names, file name, name and qualified name;
# gc.get_referents gives an instance's attributes and its built-in base's
# items, but not a dict's str keys, which pycore counts.
HEAPTYPE = 1 << 9
CELL = type((lambda x: (lambda: x))(0).__closure__[0])
FUNCTION = type(owner)


class Probe:
    pass


def tp_traverse(t):
    return ctypes.c_void_p.from_address(id(t) + 184 + object.__basicsize__ - 16).value


SUBTYPE = tp_traverse(Probe)


def referents(o, t):
    if isinstance(o, type):
        # a class: its namespace (the dict its mappingproxy holds), its
        # bases and its MRO (the tuples it keeps); a static type's are
        # not the heap's
        return gc.get_referents(vars(o))[:1] + [o.__bases__, o.__mro__] if o.__flags__ & HEAPTYPE else []
    if t is FUNCTION:
        # what a function holds of its own
        return [x for x in (o.__defaults__, o.__kwdefaults__, o.__closure__, o.__code__) if x is not None]
    if t is types.CodeType:
        # what a code object holds that Python shows as it is kept (its
        # constants, names, file name, name and, from 3.11, qualified
        # name; not co_varnames and co_code, which 3.11+ make anew)
        return [o.co_consts, o.co_names, o.co_filename, o.co_name] + (
            [o.co_qualname] if sys.version_info >= (3, 11) else [])
    if t is list or t is tuple or t is set or t is frozenset:
        return list(o)
    if t is dict:
        return list(o.keys()) + list(o.values())
    if t is CELL:
        try:
            return [o.cell_contents]
        except ValueError:
            return []
    if t is types.ModuleType:
        return [o.__dict__]
    if t.__flags__ & HEAPTYPE and tp_traverse(t) == SUBTYPE and not isinstance(o, type):
        r = [x for x in gc.get_referents(o) if x is not t]
        if isinstance(o, dict):
            r += list(dict.keys(o))
        return r
    return []


def reach(x, seen, stack, counts):
    """X, an object referred to: counted when the GC does not track it (nor is
    it a static type), once."""
    if gc.is_tracked(x) or id(x) in seen:
        return
    if isinstance(x, type) and not x.__flags__ & HEAPTYPE:
        return
    seen[id(x)] = x
    t = type(x)
    k = (t.__module__, t.__qualname__)
    c = counts.get(k)
    if c is None:
        counts[k] = c = [0, 0, owner(t)]
    c[0] += 1
    c[1] += sys.getsizeof(x)
    if c[2] in BUFFER_OWNERS:
        BUFFERS[0] += x.__sizeof__() - t.__basicsize__
    stack.append(x)


def untracked(objs):
    seen = {}
    stack = []
    counts = {}
    for o in objs:
        for x in referents(o, type(o)):
            reach(x, seen, stack, counts)
    while stack:
        o = stack.pop()
        for x in referents(o, type(o)):
            reach(x, seen, stack, counts)
    return [[m, q, n, b, w] for (m, q), (n, b, w) in counts.items()]


# The named roots whose retained sizes the census records: what would be
# freed with each (it and every object that no path from the roots reaches
# but through it), over the references pycore follows (referents()), from
# the roots pycore reads: sys.modules, sys.__dict__, builtins.__dict__ and
# the frames' locals (retained()).
RETAINERS = ("CACHE", "NODES", "SLOTTED", "TEXTS", "SUBS", "Registry.items", "LEAK") + (("ARRAYS",) if ARRAYS else ())


def reached(roots, skip):
    """The bytes (sys.getsizeof) and number of the objects reached from
    ROOTS without passing through SKIP (static types left out: pycore
    counts none)."""
    seen = set()
    stack = []
    for r in roots:
        if r is not skip and id(r) not in seen:
            seen.add(id(r))
            stack.append(r)
    total = n = 0
    while stack:
        o = stack.pop()
        total += sys.getsizeof(o)
        n += 1
        for x in referents(o, type(o)):
            if x is skip or id(x) in seen or (isinstance(x, type) and not x.__flags__ & HEAPTYPE):
                continue
            seen.add(id(x))
            stack.append(x)
    return total, n


def attr(name):
    """The module-level object NAME ("CACHE", "Registry.items")"""
    first, _, rest = name.partition(".")
    return getattr(globals()[first], rest) if rest else globals()[first]


def retained(frame):
    """The retained size and number of objects of each of RETAINERS (and,
    leaking, of LEAKED and LEAKED_TEXT) and of FRAME's local "held" (FRAME:
    main()'s), from the roots pycore reads:
    sys.modules, sys.__dict__, builtins.__dict__, and the locals of every
    Python frame but a module's (whose locals are its globals): main()'s."""
    import builtins
    roots = (sys.modules, sys.__dict__, builtins.__dict__) + tuple(frame.f_locals.values())
    everything = reached(roots, object())   # (skips nothing: no path reaches a new object)
    out = {}
    names = RETAINERS + (("LEAKED", "LEAKED_TEXT") if leak else ())
    named = [(name, attr(name)) for name in names] + [("held", frame.f_locals["held"])]
    for name, x in named:
        without = reached(roots, x)
        out[name] = [id(x), everything[0] - without[0], everything[1] - without[1]]
    return out


def make_garbage():
    """Cycles no one holds, made with the GC off: 300 lists and dicts that
    hold each other, 200 Node instances that hold themselves (and their
    kids lists)."""
    for i in range(300):
        a, b = [], {}
        a.append(b)
        b["a"] = a
    for i in range(200):
        n = Node(i)
        n.me = n


def garbage():
    """What a collection would free, as the interpreter's own GC finds it:
    a forked copy of the process collects with DEBUG_SAVEALL and says how
    many objects, of which types, its gc.garbage holds (as JSON text: a
    str holds nothing the census counts)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        counts = {}
        for o in gc.garbage:
            t = type(o)
            k = "%s.%s" % (t.__module__, t.__qualname__)
            counts[k] = counts.get(k, 0) + 1
        os.write(w, json.dumps({"objects": len(gc.garbage), "types": counts}).encode())
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


def census(path, with_retained=False):
    # (nothing made before gc.get_objects() that is gone after: 3.14's
    # empty dicts are tracked; no comprehension or closure, whose cells
    # 3.11 and older make when the function starts)
    # (first, and as text: what it makes is gone before gc.get_objects(),
    # and a str holds nothing the census counts)
    held = json.dumps(retained(sys._getframe(1))) if with_retained else "null"
    freed = garbage() if with_retained else "null"
    me = sys._getframe()
    BUFFERS[0] = 0
    objs = gc.get_objects()
    counts = {}
    owners = {}
    for o in objs:
        if o is me:
            continue    # (3.6 tracks a running function's frame: this one is gone after)
        t = type(o)
        k = (t.__module__, t.__qualname__)
        c = counts.get(k)
        if c is None:
            counts[k] = c = [0, 0]
            owners[k] = owner(t)
        c[0] += 1
        c[1] += sys.getsizeof(o)
        if owners[k] in BUFFER_OWNERS:
            BUFFERS[0] += o.__sizeof__() - t.__basicsize__
    loose = untracked(objs)   # (3.6's frame, me, holds nothing it follows)
    del objs, o, me
    frozen = gc.get_freeze_count() if hasattr(gc, "get_freeze_count") else 0
    types_ = []
    for (m, q), (n, b) in counts.items():
        types_.append([m, q, n, b, owners[(m, q)]])
    text = json.dumps({"pid": os.getpid(), "frozen": frozen, "types": types_, "untracked": loose,
                       "buffers": BUFFERS[0],
                       "leaked": id(LEAKED), "leaked_text": id(LEAKED_TEXT)})[:-1] + \
        ', "retained": %s, "garbage": %s}' % (held, freed)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, text.encode())
    os.close(fd)


import json  # noqa: E402  (after the heap: its objects are the interpreter's own)


def main():
    # a list of lists only this frame holds: its local (a root)
    held = [[i] for i in range(3000)]
    if FREE_THREADED:
        start_builders()
    if leak:
        signal.pthread_sigmask(signal.SIG_BLOCK, WAIT)
    gc.collect()
    gc.disable()
    make_garbage()
    print("", end="", flush=True)
    census(sys.argv[1])
    if FREE_THREADED:
        end_builder()
    census(sys.argv[1], "retained" in sys.argv[2:])
    print("READY", flush=True)
    if leak:
        _signal.sigwait(WAIT)   # (signal.sigwait is Python: a frame 3.6 tracks)
        LEAKED.extend(LeakItem() for _ in range(20000))
        for i in range(5000):
            LEAKED_TEXT[i] = "leaked text %d " % i * 4
        census(sys.argv[1] + ".2", "retained" in sys.argv[2:])
        print("READY", flush=True)
    time.sleep(3600)
    return held


leak = "leak" in sys.argv[2:]
WAIT = {signal.SIGUSR1}     # (made before the census, as sigwait's argument is there after it)
main()
