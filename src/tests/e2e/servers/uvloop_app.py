"""An ASGI application for uvicorn on uvloop (check-servers.py).

A request to /block writes, to $PYCORE_TRUTH, what the process says of its
running loop (its type, the thread running it, /proc/self/task) and of the
task handling the request, then blocks that task (and so its loop's thread)
in time.sleep: the loop runs, on that thread, with that task running."""
import asyncio
import json
import os
import threading
import time


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    if scope["path"] == "/block":
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        t = type(loop)
        truth = {"pid": os.getpid(), "loop": "0x%x" % id(loop), "loop_type": "%s.%s" % (t.__module__, t.__qualname__),
                 "thread": threading.get_native_id(), "ident": threading.get_ident(),
                 "thread_name": threading.current_thread().name, "task": "0x%x" % id(task),
                 "tids": sorted(int(x) for x in os.listdir("/proc/self/task"))}
        with open(os.environ["PYCORE_TRUTH"] + ".tmp", "w") as f:
            json.dump(truth, f)
        os.rename(os.environ["PYCORE_TRUTH"] + ".tmp", os.environ["PYCORE_TRUTH"])
        time.sleep(3600)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})
