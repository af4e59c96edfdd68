"""An asyncio future whose finalizer aborts the process: the coroutine that
drops the last reference runs in its own eval loop call, started by the
task's step from C, inside the event loop's Python frames; the finalizer
runs in a third.  The finalizer records the process's stacks, then calls
os.abort().  Truth: argv[1], "crasher" the aborting thread."""
import asyncio
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402


class Doomed(asyncio.Future):
    def __del__(self):
        record(sys.argv[1], sys._current_frames(), crasher=threading.get_ident()); os.abort()  # noqa: E702


async def drop():
    f = Doomed()
    f = None  # noqa: F841  the last reference: __del__ runs here


async def main():
    await asyncio.get_running_loop().create_task(drop())


asyncio.run(main())
