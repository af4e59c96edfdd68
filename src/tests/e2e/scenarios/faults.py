"""Faults of every kind pycore names (check-faults.py): argv is TRUTH
MODE [ARG]; the process writes TRUTH (its pid, the faulting thread's
native id, and what it is about to do: the offset, the address, the
file) and then crashes.  Python 3.6+ on Linux x86-64.

  null           ctypes.string_at(OFFSET, 1): a read of the byte at NULL + OFFSET
  overflow       deep recursion of f in a thread with a small stack
                 (threading.stack_size): glibc's guard page (3.10 and
                 older: each Python call is a C call); each call of f
                 writes how many were entered into the file depth_file
                 (a shared mapping, which outlives the process)
  overflow-main  the same in the main thread: the kernel's gap under it
  overflow-c     recursion of recurse() of the test's .so (ARG) in a thread
                 with a small stack, each call writing how many were
                 entered into the file depth_file
  readonly       a write (ctypes.memmove) into a PROT_READ mapping of a file
  unmapped       a read 0x10 bytes past the end of an anonymous mapping
                 (its last page unmapped)
  fpe            an integer division by zero in ARG (a .so the test built)
  illegal        ud2 (0f 0b) in an anonymous PROT_READ|WRITE|EXEC page, called
  wait           waits to be sent a signal (the test's sender kills it)
  abort          os.abort()
"""
import ctypes
import json
import mmap
import os
import sys
import threading
import time


def write_truth(**kw):
    kw.setdefault("pid", os.getpid())
    kw.setdefault("tid", threading.get_native_id())
    tmp = TRUTH + ".tmp"
    with open(tmp, "w") as f:
        json.dump(kw, f)
    os.rename(tmp, TRUTH)


DEPTH = None


def f(n):
    # how many calls of f were entered, in a shared mapping of a file:
    # the kernel keeps it when the process dies
    DEPTH[:8] = (n + 1).to_bytes(8, "little")
    return f(n + 1) + 1


def overflow(**kw):
    global DEPTH
    path = os.path.join(os.getcwd(), "depth")
    with open(path, "wb") as out:
        out.write(bytes(4096))
    with open(path, "r+b") as fd:
        DEPTH = mmap.mmap(fd.fileno(), 4096)
    sys.setrecursionlimit(10 ** 7)
    write_truth(function=f.__code__.co_name, file=f.__code__.co_filename, depth_file=path, **kw)
    f(0)


def libc_mmap():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    return libc.mmap


TRUTH, MODE = sys.argv[1], sys.argv[2]
if MODE == "null":
    offset = 16 * (os.getpid() % 255 + 1)
    write_truth(offset=offset)
    # one byte: a C string's strlen may read from an aligned address below
    ctypes.string_at(offset, 1)
elif MODE == "overflow":
    threading.stack_size(512 * 1024)
    t = threading.Thread(target=overflow, name="deep")
    t.start()
    t.join()
elif MODE == "overflow-main":
    overflow()
elif MODE == "overflow-c":
    def native():
        lib = ctypes.CDLL(sys.argv[3])
        path = os.path.join(os.getcwd(), "depth")
        with open(path, "wb") as out:
            out.write(bytes(4096))
        with open(path, "r+b") as fd:
            depth = mmap.mmap(fd.fileno(), 4096)
        buf = ctypes.c_int.from_buffer(depth)
        write_truth(function="recurse", depth_file=path)
        lib.recurse(0, ctypes.byref(buf))
    threading.stack_size(256 * 1024)
    t = threading.Thread(target=native, name="deep-c")
    t.start()
    t.join()
elif MODE == "readonly":
    path = os.path.join(os.getcwd(), "readonly.data")
    with open(path, "wb") as out:
        out.write(b"r" * 8192)
    fd = os.open(path, os.O_RDONLY)
    addr = libc_mmap()(None, 8192, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if not addr or addr == ctypes.c_void_p(-1).value:
        sys.exit("mmap failed: errno %d" % ctypes.get_errno())
    write_truth(address=addr + 0x123, file=path)
    ctypes.memmove(addr + 0x123, b"w", 1)
elif MODE == "unmapped":
    base = libc_mmap()(None, 3 * 4096, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                       -1, 0)
    if not base or base == ctypes.c_void_p(-1).value:
        sys.exit("mmap failed: errno %d" % ctypes.get_errno())
    libc = ctypes.CDLL(None)
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.munmap(base + 2 * 4096, 4096)
    write_truth(address=base + 2 * 4096 + 0x10, mapping_end=base + 2 * 4096)
    ctypes.string_at(base + 2 * 4096 + 0x10, 1)
elif MODE == "fpe":
    lib = ctypes.CDLL(sys.argv[3])
    write_truth()
    lib.divide(42, 0)
elif MODE == "illegal":
    page = libc_mmap()(None, 4096, mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC,
                       mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if not page or page == ctypes.c_void_p(-1).value:
        sys.exit("mmap failed: errno %d" % ctypes.get_errno())
    ctypes.memmove(page + 0x40, b"\x0f\x0b", 2)
    write_truth(address=page + 0x40)
    ctypes.CFUNCTYPE(None)(page + 0x40)()
elif MODE == "wait":
    write_truth()
    while True:
        time.sleep(1)
elif MODE == "abort":
    write_truth()
    os.abort()
else:
    sys.exit("unknown mode " + MODE)
