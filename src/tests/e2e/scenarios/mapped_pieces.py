"""A process that maps pieces of its own ELF files a second time, as
debuggers, crash reporters (gdb's libbacktrace) and JITs do: the first page
(an ELF header) and pieces at other file offsets of its libpython, its C
library, an extension module (_ctypes) and its executable, read-only,
wherever mmap puts them (below the loaded objects, as a rule).  Then two
workers block, the truth is written (the threads, their frames, and the
loaded objects as the dynamic linker reports them to the process itself:
dl_iterate_phdr through ctypes, each object's ELF header address) and the
process blocks (argv[2] "snapshot") or faults in C (argv[2] "crash",
ctypes._string_at(0), as crash.py).

Runs as a script (argv[1] the truth file), embedded (embed/mapped.c maps
pieces before the interpreter starts, and runs this), and inside gdb's own
Python (`gdb -batch -ex 'python ...'`: sys.argv is gdb's, so the truth
file and mode come from MAPPED_TRUTH and MAPPED_MODE)."""
import _thread
import ctypes
import json
import mmap
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _truth import record  # noqa: E402

PT_LOAD = 1


class Phdr(ctypes.Structure):
    _fields_ = [("p_type", ctypes.c_uint32), ("p_flags", ctypes.c_uint32), ("p_offset", ctypes.c_uint64),
                ("p_vaddr", ctypes.c_uint64), ("p_paddr", ctypes.c_uint64), ("p_filesz", ctypes.c_uint64),
                ("p_memsz", ctypes.c_uint64), ("p_align", ctypes.c_uint64)]


class DlPhdrInfo(ctypes.Structure):
    # <link.h>: struct dl_phdr_info's first four fields
    _fields_ = [("dlpi_addr", ctypes.c_uint64), ("dlpi_name", ctypes.c_char_p),
                ("dlpi_phdr", ctypes.POINTER(Phdr)), ("dlpi_phnum", ctypes.c_uint16)]


CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DlPhdrInfo), ctypes.c_size_t, ctypes.c_void_p)


def loaded_objects():
    """{real path: the address of its ELF header} as the dynamic linker
    placed each object (its load bias plus its first PT_LOAD's page)."""
    out = {}

    def each(info, size, data):
        i = info.contents
        name = i.dlpi_name.decode() if i.dlpi_name else ""
        if not name:
            name = os.readlink("/proc/self/exe") if not out else ""
        if name.startswith("/"):
            loads = [i.dlpi_phdr[k].p_vaddr for k in range(i.dlpi_phnum) if i.dlpi_phdr[k].p_type == PT_LOAD]
            if loads:
                out[os.path.realpath(name)] = i.dlpi_addr + (min(loads) & ~0xfff)
        return 0
    libc = ctypes.CDLL(None)
    libc.dl_iterate_phdr(CALLBACK(each), None)
    return out


KEEP = []


def map_piece(path, offset, length):
    fd = os.open(path, os.O_RDONLY)
    try:
        KEEP.append(mmap.mmap(fd, length, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ, offset=offset))
    finally:
        os.close(fd)


def map_pieces(objects):
    """Pieces of libpython, libc, _ctypes and the executable: the first
    page, 20 KiB at 0x10000, three pages from the middle of the file."""
    import _ctypes
    want = [p for p in objects if "libpython" in os.path.basename(p) or os.path.basename(p).startswith("libc.so")]
    want.append(os.path.realpath(_ctypes.__file__))
    want.append(os.path.realpath(os.readlink("/proc/self/exe")))
    mapped = []
    for path in want:
        size = os.path.getsize(path)
        for off, n in ((0, 4096), (0x10000, 0x5000), ((size // 2) & ~0xfff, 0x3000)):
            if off + n <= size:
                map_piece(path, off, n)
                mapped.append([path, off, n])
    return mapped


parked = _thread.allocate_lock()
parked.acquire()


def blocked(ready):
    ready.release(); parked.acquire()  # noqa: E702


def write_truth(truth_path, frames, mapped, objects):
    record(truth_path, frames)
    with open(truth_path) as f:
        truth = json.load(f)
    truth["objects"] = objects
    truth["mapped"] = mapped
    with open(truth_path + ".tmp", "w") as f:
        json.dump(truth, f)
    os.rename(truth_path + ".tmp", truth_path)
    print("READY", flush=True)


def finish(truth_path, mode, mapped):
    objects = loaded_objects()
    write_truth(truth_path, sys._current_frames(), mapped, objects); ctypes._string_at(0, -1) if mode == "crash" else parked.acquire()  # noqa: E501,E702


def main():
    in_gdb = "gdb" in sys.modules
    truth_path = os.environ["MAPPED_TRUTH"] if in_gdb else sys.argv[1]
    mode = os.environ.get("MAPPED_MODE", "snapshot") if in_gdb else sys.argv[2]
    mapped = map_pieces(loaded_objects())
    for i in range(2):
        ready = _thread.allocate_lock()
        ready.acquire()
        threading.Thread(target=blocked, args=(ready,), name="worker-%d" % i, daemon=True).start()
        ready.acquire()
    time.sleep(0.1)
    finish(truth_path, mode, mapped)


main()
