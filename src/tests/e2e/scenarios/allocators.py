"""The two allocators' heaps of known shape, for check-heap.py's
allocators cases.  The process allocates through glibc's malloc (ctypes)
on its main thread and on three threads of its own (each given an arena
of its own by glibc), frees some blocks into the bins and some, after the
last large request, into the fastbins, keeps blocks mapped apart (1 MiB
each); its lists of their addresses and 100000 strings, a third of them
dropped, fill pymalloc's arenas.  Then it writes each allocator's own
account: glibc's mallinfo2() and the number of arenas malloc_info()
lists to argv[1] (JSON; mallinfo2() taken again after the write until two
agree, so that it is the heap's as it is left), then, last,
sys._debugmallocstats() to argv[1] + ".stats" (pymalloc's arenas, the
bytes in its blocks in use, its unused pools); then READY (os.write:
nothing allocated) and it sleeps until killed.

Needs glibc 2.33+ (mallinfo2)."""
import ctypes
import gc
import json
import os
import sys
import threading
import time

FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
          "keepcost")


class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in FIELDS]


libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fclose.argtypes = [ctypes.c_void_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]


def build(n):
    """N blocks of sizes up to 3 KB, a third of them and a few more freed
    (into the bins), two blocks mapped apart, then 200 of 24 bytes of
    which every other is freed: the tcache takes 7 a size, the fastbins
    the rest."""
    keep = [libc.malloc(i * 7 % 3000 + 16) for i in range(n)]
    for i in range(n):
        if i % 3 == 0 or i % 51 == 1:
            libc.free(keep[i])
    big = [libc.malloc(1 << 20) for _ in range(2)]
    small = [libc.malloc(24) for _ in range(200)]
    for p in small[::2]:
        libc.free(p)
    return keep, big, small


def account(path):
    fp = libc.fopen(path.encode() + b".xml", b"w")
    libc.malloc_info(0, fp)
    libc.fclose(fp)
    with open(path + ".xml") as f:
        arenas = f.read().count('<heap nr="')
    m = libc.mallinfo2()
    return {"pid": os.getpid(), "arenas": arenas, "mallinfo": dict((n, getattr(m, n)) for n in FIELDS)}


def main():
    go, done = threading.Event(), threading.Event()
    started = []

    def worker():
        started.append(build(5000))
        go.set()
        done.wait()

    threads = []
    for _ in range(3):
        go.clear()
        t = threading.Thread(target=worker)
        t.start()
        go.wait()
        threads.append(t)
    heap = build(20000)
    strings = [str(i) * 3 for i in range(100000)]
    del strings[::3]
    # no collection from here on: 3.12+ runs one at the next check of the
    # eval breaker, which can come after the accounts and free blocks
    gc.collect()
    gc.disable()
    truth = account(sys.argv[1])
    # sys._debugmallocstats() writes to the C library's stderr: fd 2, the
    # stats file from now on
    fd = os.open(sys.argv[1] + ".stats", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    for _ in range(20):
        text = json.dumps(truth)
        fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, text.encode())
        os.close(fd)
        m = libc.mallinfo2()
        now = dict((n, getattr(m, n)) for n in FIELDS)
        if now == truth["mallinfo"]:
            break
        truth["mallinfo"] = now
    # last, pymalloc's own account (stderr is unbuffered: no allocation),
    # taken again after a pause (a block was seen freed after the first,
    # now and then, on 3.9 and 3.13)
    sys._debugmallocstats()
    time.sleep(0.3)
    os.ftruncate(2, 0)
    os.lseek(2, 0, os.SEEK_SET)
    sys._debugmallocstats()
    os.write(1, b"READY\n")
    time.sleep(3600)
    return heap, started, strings


main()
