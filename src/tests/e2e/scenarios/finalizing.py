"""A __del__ run at interpreter shutdown: a module global whose finalizer
records the process's view (sys.is_finalizing() is then True) and blocks,
so a core shows Py_FinalizeEx at work.  Truth: argv[1] ("finalizing":
what sys.is_finalizing() said, "tid": the thread running the finalizer)."""
import json
import os
import sys
import threading
import time


class AtExit(object):
    # every name it uses is bound now: at exit, modules and builtins are torn
    # down, and up to 3.9 the codec registry too (so: bytes and os.write)
    def __del__(self, json=json, sys=sys, os=os, threading=threading, sleep=time.sleep, path=sys.argv[1],
                getattr=getattr, native_id=getattr(threading, "get_native_id", None)):  # 3.8+
        data = json.dumps({"finalizing": sys.is_finalizing(), "tid": native_id() if native_id else None})
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, data.encode("utf-8"))
        os.close(fd)
        os.rename(path + ".tmp", path)
        os.write(1, b"READY\n")
        sleep(1000)


keep = AtExit()
