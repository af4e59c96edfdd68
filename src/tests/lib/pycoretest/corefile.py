"""A core file's bytes, read and patched by its own headers (x86-64 ELF
cores, little-endian): for the checkers that cut cores (check-truncated.py)
or corrupt them (check-corrupt.py), and check-errors.py, which does both.

  layout(path)        where the headers and notes end, where the last
                      segment ends
  crashing_stack_offset(path)  where the segment of the crashing thread's
                      C stack begins
  Core(path)          a core's PT_LOAD map: read and patch process addresses
  table(minor)        versions/3.MINOR.h's struct offsets, by name
"""
import os
import re
import struct

from .env import SRCDIR
from .tap import Failure


def layout(path):
    """The core's program headers by its own header: where the headers and
    notes end (a cut before leaves nothing usable) and where its last
    segment ends (the size of the core written whole)."""
    with open(path, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    notes = whole = phoff + phentsize * phnum
    for i in range(len(ph) // phentsize):
        t, _, off, _, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", ph, phentsize * i)
        if t == 4:  # PT_NOTE
            notes = max(notes, off + filesz)
        whole = max(whole, off + filesz)
    return notes, whole


def crashing_stack_offset(path):
    """Where in the core the segment holding the crashing thread's stack
    pointer begins (the kernel writes that thread's NT_PRSTATUS first; rsp
    is user_regs_struct's 20th word, pr_reg at byte 112 of elf_prstatus on
    x86_64): cut there, the core keeps every other thread's memory, the
    thread's data stack among it, but not its C stack."""
    data = open(path, "rb").read(1 << 20)
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    phs = [struct.unpack_from("<IIQQQQQQ", data, phoff + phentsize * i) for i in range(phnum)]
    note = [p for p in phs if p[0] == 4][0]
    at, rsp = note[2], None
    while at < note[2] + note[5] and rsp is None:
        namesz, descsz, ntype = struct.unpack_from("<III", data, at)
        desc = at + 12 + (namesz + 3) // 4 * 4
        if ntype == 1:  # NT_PRSTATUS
            rsp, = struct.unpack_from("<Q", data, desc + 112 + 19 * 8)
        at = desc + (descsz + 3) // 4 * 4
    for t, _, off, vaddr, _, filesz, memsz, _ in phs:
        if t == 1 and vaddr <= rsp < vaddr + memsz and filesz:
            return off
    raise Failure("the crashing thread's stack (rsp 0x%x) is not in the core" % rsp)


class Core:
    """A core file's PT_LOAD map, to read and patch process addresses."""

    def __init__(self, path):
        self.data = bytearray(open(path, "rb").read())
        phoff, = struct.unpack_from("<Q", self.data, 32)
        phnum, = struct.unpack_from("<H", self.data, 56)
        self.loads = []
        for i in range(phnum):
            t, _, off, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", self.data, phoff + 56 * i)
            if t == 1 and filesz:
                self.loads.append((vaddr, vaddr + filesz, off))

    def offset(self, addr):
        for start, end, off in self.loads:
            if start <= addr < end:
                return off + addr - start
        raise Failure("address 0x%x is not in the core" % addr)

    def threads(self):
        """Each NT_PRSTATUS note's thread: (pr_pid, fs_base), in the
        notes' order (x86-64: pr_pid at 32, user_regs_struct at 112,
        fs_base its 22nd word)."""
        phoff, = struct.unpack_from("<Q", self.data, 32)
        phnum, = struct.unpack_from("<H", self.data, 56)
        out = []
        for i in range(phnum):
            t, _, off, _, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", self.data, phoff + 56 * i)
            at = off
            while t == 4 and at + 12 <= off + filesz:
                namesz, descsz, ntype = struct.unpack_from("<III", self.data, at)
                desc = at + 12 + (namesz + 3) // 4 * 4
                if ntype == 1 and descsz >= 112 + 27 * 8:
                    pid, = struct.unpack_from("<i", self.data, desc + 32)
                    fs_base, = struct.unpack_from("<Q", self.data, desc + 112 + 21 * 8)
                    out.append((pid, fs_base))
                at = desc + (descsz + 3) // 4 * 4
        return out

    def u32(self, addr):
        return struct.unpack_from("<I", self.data, self.offset(addr))[0]

    def u64(self, addr):
        return struct.unpack_from("<Q", self.data, self.offset(addr))[0]

    def put64(self, addr, v):
        struct.pack_into("<Q", self.data, self.offset(addr), v)

    def put8(self, addr, v):
        self.data[self.offset(addr)] = v

    def save(self, path):
        open(path, "wb").write(self.data)


def table(minor):
    """versions/3.MINOR.h's offsets: {field: offset}."""
    text = open(os.path.join(SRCDIR, "versions", "3.%d.h" % minor)).read()
    return dict((k, int(v)) for k, v in re.findall(r"\.(\w+) = (-?\d+),", text))
