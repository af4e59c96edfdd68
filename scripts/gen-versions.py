# The gdb half of scripts/gen-versions.  Run inside gdb with an
# interpreter's DWARF loaded, it fills every field of struct py_layout
# (src/python/runtime/layout.h) as versions/fields.txt says to find it, and writes
# the table.
#
# Input, from the environment (set by scripts/gen-versions):
#   GV_OUT      the file to write
#   GV_MINOR    the minor version (6 ... 13)
#   GV_VERSION  the full version, e.g. 3.12.1
#   GV_OBJECT   the name of the object the DWARF came from
#   GV_LAYOUT   layout.h: the fields, and their order in the table
#   GV_FIELDS   versions/fields.txt: where each field is, which versions
#               must have it
#   GV_VERBOSE  1: note fields found in versions that need not have them
#
# Errors (the table is not written, gdb exits 1): a field required for this
# version that no alternative finds; alternatives that find different
# values (never a guess: pycore's own DWARF reader, which reads the same
# fields.txt, takes the first); a member that is a bit-field where a byte
# offset is wanted; layout.h and fields.txt not naming the same fields.
# These are the semantics of src/python/runtime/dwarf_layout.c, which
# src/tests/unit/test-dwarf-layout checks against the tables this writes.

import os
import re
import sys

import gdb

PROG = "gen-versions"


class Fail(Exception):
    pass


# ------------------------------------------------------------------ types

_types = {}


def find_type(name):
    """The struct or union NAME ("struct tag" or a typedef name) stands for,
    typedefs followed; None when this DWARF has no complete one."""
    if name not in _types:
        t = None
        try:
            t = gdb.lookup_type(name).strip_typedefs()
            if t.code not in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION) or not t.fields():
                t = None
        except gdb.error:
            t = None
        _types[name] = t
    return _types[name]


def member(t, name):
    """(bit position in t, gdb.Field) of member NAME of struct/union t,
    looking through anonymous members; None if there is none."""
    t = t.strip_typedefs()
    for f in t.fields():
        if f.name == name:
            return f.bitpos, f
        if not f.name and not f.is_base_class:
            inner = f.type.strip_typedefs()
            if inner.code in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION):
                hit = member(inner, name)
                if hit is not None:
                    return f.bitpos + hit[0], hit[1]
    return None


def walk(t, path):
    """For a dotted member path: (bit position of its last member from the
    start of t, bit position of it inside its parent, gdb.Field); None if a
    step is missing."""
    total = 0
    last = 0
    field = None
    for step in path.split("."):
        if field is not None:
            t = field.type.strip_typedefs()
            if t.code not in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION):
                return None
        hit = member(t, step)
        if hit is None:
            return None
        last, field = hit
        total += last
    return total, last, field


# ----------------------------------------------------------- alternatives
#
# versions/fields.txt spells them:
#   TYPE:path         byte offset of the member
#   ptr:TYPE:path     the same, only if the member is a pointer
#   inline:TYPE:path  the same, only if it is not
#   sizeof:TYPE       size of the type
#   bit:TYPE:path     bit position of a bit-field inside its containing member
# with '+' for the spaces of TYPE ("struct+_is").

class Alt:
    def __init__(self, text):
        self.text = text
        kind = "off"
        for prefix in ("ptr", "inline", "sizeof", "bit"):
            if text.startswith(prefix + ":"):
                kind = prefix
                text = text[len(prefix) + 1:]
                break
        self.kind = kind
        if kind == "sizeof":
            self.type, self.path = text, None
        else:
            if ":" not in text:
                raise Fail("bad alternative %r in fields.txt" % self.text)
            self.type, self.path = text.split(":", 1)
        self.type = self.type.replace("+", " ")

    def __str__(self):
        if self.kind == "sizeof":
            return "sizeof(%s)" % self.type
        s = "%s.%s" % (self.type, self.path)
        if self.kind == "ptr":
            s += " (a pointer)"
        elif self.kind == "inline":
            s += " (not a pointer)"
        elif self.kind == "bit":
            s += " (bit-field)"
        return s

    def resolve(self):
        """An int, or None when this DWARF lacks it."""
        t = find_type(self.type)
        if t is None:
            return None
        if self.kind == "sizeof":
            return t.sizeof if t.sizeof > 0 else None
        hit = walk(t, self.path)
        if hit is None:
            return None
        total, last, field = hit
        if self.kind == "bit":
            if not field.bitsize:
                raise Fail("%s is not a bit-field" % self)
            return last
        if self.kind in ("ptr", "inline"):
            is_ptr = field.type.strip_typedefs().code == gdb.TYPE_CODE_PTR
            if is_ptr != (self.kind == "ptr"):
                return None
        if field.bitsize or total % 8:
            raise Fail("%s is a bit-field, not at a byte offset" % self)
        return total // 8


# ------------------------------------------------------------------ input

def layout_fields(path):
    """The members of struct py_layout, in order."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"struct py_layout\s*\{(.*?)\n\};", text, re.S)
    if not m:
        raise Fail("no struct py_layout in %s" % path)
    body = re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S)
    names = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        mm = re.match(r"^[A-Za-z_][\w \*]*?[ \*]([A-Za-z_]\w*)$", decl)
        if not mm:
            raise Fail("cannot read the member %r of struct py_layout in %s" % (decl, path))
        names.append(mm.group(1))
    return names


def read_rules(path):
    """fields.txt: {field: ((first, last) or None, [Alt...])}, in order."""
    rules = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) < 4:
                raise Fail("%s:%d: want: field first last alternative..." % (path, n))
            name, lo, hi = words[:3]
            if name in rules:
                raise Fail("%s:%d: %s twice" % (path, n, name))
            if lo == "-" and hi == "-":
                need = None
            else:
                try:
                    need = (int(lo), int(hi))
                except ValueError:
                    raise Fail("%s:%d: bad versions %s %s" % (path, n, lo, hi))
            rules[name] = (need, [Alt(w) for w in words[3:]])
    return rules


# ------------------------------------------------------------------- main

def main():
    out = os.environ["GV_OUT"]
    minor = int(os.environ["GV_MINOR"])
    version = os.environ["GV_VERSION"]
    obj = os.environ["GV_OBJECT"]
    verbose = os.environ.get("GV_VERBOSE") == "1"
    fields = layout_fields(os.environ["GV_LAYOUT"])
    rules = read_rules(os.environ["GV_FIELDS"])

    errors = []
    notes = []
    special = ("minor", "source")
    for name in fields:
        if name not in rules and name not in special:
            errors.append("layout.h's field %s is not in versions/fields.txt" % name)
    for name in rules:
        if name not in fields:
            errors.append("versions/fields.txt's field %s is not in layout.h" % name)
    if find_type("PyObject") is None:
        errors.append("%s has no DWARF type PyObject: no debug information?" % obj)

    values = {}
    if not errors:
        for name in fields:
            if name in special:
                continue
            need, alts = rules[name]
            found = []
            for alt in alts:
                try:
                    v = alt.resolve()
                except Fail as e:
                    errors.append("%s: %s" % (name, e))
                    continue
                if v is not None:
                    found.append((alt, v))
            required = need is not None and need[0] <= minor <= need[1]
            if len(set(v for _, v in found)) > 1:
                errors.append("%s: the alternatives disagree: %s" % (
                    name, ", ".join("%s = %d" % (a, v) for a, v in found)))
            elif found:
                values[name] = found[0][1]
                if not required:
                    notes.append("%s: %s = %d, though fields.txt does not require it in 3.%d" % (
                        name, found[0][0], found[0][1], minor))
            elif required:
                errors.append("%s: not in the DWARF of %s (CPython %s), which must have %s" % (
                    name, obj, version, " or ".join(str(a) for a in alts)))
            else:
                values[name] = -1

    if verbose:
        for n in notes:
            sys.stderr.write("%s: note: %s\n" % (PROG, n))
    if errors:
        raise Fail("\n".join(errors))

    source = "CPython %s, %s" % (version, obj)
    lines = [
        "/* Generated by scripts/gen-versions from the DWARF of %s (CPython %s). Do not edit. */"
        % (obj, version),
        "{",
        "\t.minor = %d," % minor,
        "\t.source = \"%s\"," % source.replace("\\", "\\\\").replace("\"", "\\\""),
    ]
    lines += ["\t.%s = %d," % (name, values[name]) for name in fields if name not in special]
    lines.append("},")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


try:
    main()
    failed = False
except Fail as e:
    for line in str(e).split("\n"):
        sys.stderr.write("%s: error: %s\n" % (PROG, line))
    failed = True
except Exception as e:  # a surprise is an error too, never a table
    sys.stderr.write("%s: error: %s: %s\n" % (PROG, type(e).__name__, e))
    failed = True
sys.stderr.flush()
if failed:
    gdb.execute("quit 1")
