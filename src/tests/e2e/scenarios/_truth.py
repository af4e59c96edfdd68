"""Truth recording for the real-core tests: the process writes down what its
own interpreter says its threads are doing, before the core is taken.

Runs unchanged on CPython 3.6 to 3.13.
"""
import json
import os
import sys
import threading


def type_name(v):
    t = type(v)
    if t.__module__ == "builtins":
        return t.__qualname__
    return "%s.%s" % (t.__module__, t.__qualname__)


def attributes(v):
    """name -> [type, repr] of the attributes of an instance of a class
    written in Python (its __dict__ and set __slots__), else None."""
    if isinstance(v, type) or not (type(v).__flags__ & (1 << 9)):
        return None
    out = {}
    d = getattr(v, "__dict__", None)
    if isinstance(d, dict):
        for k, a in d.items():
            out[k] = [type_name(a), repr(a)]
    for cls in type(v).__mro__:
        for name in cls.__dict__.get("__slots__", ()):
            if name in ("__dict__", "__weakref__"):
                continue
            # the slot itself, as the class declares it (a property of
            # the same name further down the MRO may shadow it)
            slot = cls.__dict__.get(name)
            try:
                a = slot.__get__(v, cls) if hasattr(slot, "__get__") else getattr(v, name)
            except AttributeError:
                continue
            out[name] = [type_name(a), repr(a)]
    return out


def length(v):
    """len(v) of a str, bytes or container, else None."""
    if isinstance(v, type) or not hasattr(type(v), "__len__"):
        return None
    try:
        return len(v)
    except Exception:
        return None


def frames_of(frame, with_locals):
    out = []
    while frame is not None:
        entry = {
            "function": frame.f_code.co_name,
            "file": frame.f_code.co_filename,
            "line": frame.f_lineno,
        }
        if with_locals:
            entry["locals"] = dict((k, [type_name(v), repr(v), attributes(v), length(v)])
                                   for k, v in frame.f_locals.items())
        out.append(entry)
        frame = frame.f_back
    return out


# threading.get_ident() -> the exception that thread is handling, noted by
# the thread itself (no interpreter before 3.12 can tell another's).
EXCEPTIONS = {}


def exception_facts(e):
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append({"function": tb.tb_frame.f_code.co_name,
                       "file": tb.tb_frame.f_code.co_filename, "line": tb.tb_lineno})
        tb = tb.tb_next
    frames.reverse()  # innermost first, like the stacks
    return {"type": type_name(e), "message": str(e), "traceback": frames, "repr": repr(e)}


def note_exception():
    """Call inside an except block: remember what this thread handles, and
    the chain Python's traceback would print (__cause__, else __context__
    unless __suppress_context__)."""
    t, e, tb = sys.exc_info()
    facts = exception_facts(e)
    facts["chain"] = []
    seen = {id(e)}
    while True:
        if e.__cause__ is not None:
            e, relation = e.__cause__, "cause"
        elif e.__context__ is not None and not e.__suppress_context__:
            e, relation = e.__context__, "context"
        else:
            break
        if id(e) in seen:
            break
        seen.add(id(e))
        link = exception_facts(e)
        link["relation"] = relation
        facts["chain"].append(link)
    EXCEPTIONS[threading.get_ident()] = facts


def record(path, current_frames, with_locals=False, crasher=None):
    """Write the truth for CURRENT_FRAMES (sys._current_frames(), taken by
    the caller so that this function's own frame is not part of it).
    CRASHER: the ident of the thread about to crash, when one is."""
    threads = dict((t.ident, t) for t in threading.enumerate())
    import sysconfig
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    truth = {"pid": os.getpid(), "ppid": os.getppid(), "uid": os.getuid(), "gid": os.getgid(), "version": list(sys.version_info[:3]), "hexversion": sys.hexversion,
             "free_threaded": free_threaded,
             "gil_enabled": sys._is_gil_enabled() if free_threaded else True,
             "threads": [], "crasher": crasher}
    for ident, frame in current_frames.items():
        t = threads.get(ident)
        truth["threads"].append({
            "ident": ident,
            "name": t.name if t is not None else None,
            "native_id": getattr(t, "native_id", None) if t is not None else None,
            "main": ident == threading.main_thread().ident,
            "frames": frames_of(frame, with_locals),
            "exception": EXCEPTIONS.get(ident),
        })
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(truth, f)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)
