"""The two allocators' heaps of known shape, for check-heap.py's
allocators cases.  The process allocates through glibc's malloc (ctypes)
on its main thread and on three threads of its own (each given an arena
of its own by glibc), frees some blocks into the bins and some, after the
last large request, into the fastbins (the main thread's last of all),
keeps blocks mapped apart (1 MiB each); its lists of their addresses and 100000 strings, a third of them
dropped, fill pymalloc's arenas.  Then it writes each allocator's own
account: glibc's mallinfo2() and the number of arenas malloc_info()
lists to argv[1] (JSON; mallinfo2() taken again after the write until two
agree, so that it is the heap's as it is left), then, last,
sys._debugmallocstats() to argv[1] + ".stats" (pymalloc's arenas, the
bytes in its blocks in use, its unused pools); then READY (os.write:
nothing allocated) and it sleeps until killed.  A free-threaded build
allocates with mimalloc, not pymalloc, and its sys._debugmallocstats()
counts nothing of it: there the process reads mimalloc's own statistics
(its static _mi_stats_main, found by the symbol table of the file that
holds it, as mapped in /proc/self/maps), the memory mimalloc reserved
from the system, into the JSON as mimalloc_reserved.

Needs glibc 2.33+ (mallinfo2)."""
import ctypes
import gc
import json
import os
import sys
import sysconfig
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
libc.setvbuf.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t]
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
    return keep, big, build_small()


def build_small():
    """200 blocks of 24 bytes of which every other is freed: the tcache
    takes 7 a size, the fastbins the rest."""
    small = [libc.malloc(24) for _ in range(200)]
    for p in small[::2]:
        libc.free(p)
    return small


def symbol(path, name):
    """The value of NAME in the symbol table (.symtab) of the ELF file at
    PATH (64-bit, little-endian), or None; the file mapped, not read: the
    heaps are left as they are."""
    import mmap
    import struct
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for sh in sections:
        if sh[1] != 2:   # SHT_SYMTAB
            continue
        strtab = sections[sh[6]][4]
        for at in range(sh[4], sh[4] + sh[5], 24):
            st_name, _, _, _, st_value, _ = struct.unpack_from("<IBBHQQ", data, at)
            end = data.find(b"\0", strtab + st_name)
            if data[strtab + st_name:end] == name:
                return st_value
    return None


def mimalloc_reserved():
    """mimalloc's own count of the memory it reserved from the system:
    _mi_stats_main.reserved.current (mi_stats_t: the mi_stat_count_t
    segments, pages, reserved, each four int64 allocated, freed, peak,
    current; Include/internal/mimalloc/mimalloc/types.h of 3.13), in
    the file mapped at offset 0 that names it; None when none does."""
    with open("/proc/self/maps") as f:
        maps = [line.split() for line in f]
    for fields in maps:
        if len(fields) > 5 and fields[2] == "00000000" and fields[5].startswith("/") and "python" in fields[5]:
            value = symbol(fields[5], b"_mi_stats_main")
            if value is not None:
                base = int(fields[0].split("-")[0], 16)
                return ctypes.c_int64.from_address(base + value + 2 * 32 + 24).value
    return None


def account(path):
    fp = libc.fopen(path.encode() + b".xml", b"w")
    libc.setvbuf(fp, None, 2, 0)   # _IONBF: no buffer of 4 KiB from malloc
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
    # and the main arena's fastbins, last: a request of 1 KiB or more
    # empties an arena's fastbins into its bins (malloc_consolidate), as a
    # free-threaded build's threads do whenever their biased reference
    # counting queues an object (a 2 KiB chunk), and the strings above do
    main_small = build_small()
    truth = account(sys.argv[1])
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        truth["mimalloc_reserved"] = mimalloc_reserved()
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
    return heap, started, strings, main_small


main()
