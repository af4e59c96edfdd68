"""A thread multiplying big matrices with numpy, over and over
(check-weave.py takes gcore's core while it runs, to catch it inside
OpenBLAS's hand-written kernels).  OPENBLAS_NUM_THREADS=1 (set by the
checker) keeps the multiplication on the Python thread itself.

argv[1]: the truth file.  The thread records the truth (every thread's
frames, its own innermost line replaced by the line of the
multiplication, which it computes from its own frame) and, in
TRUTH.matmul, its native id and the BLAS library the process mapped
(/proc/self/maps), then multiplies until killed.  READY once written."""
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

import numpy  # noqa: E402


def blas():
    with open("/proc/self/maps") as f:
        libs = set(line.split()[-1] for line in f if "blas" in line.split()[-1].lower())
    return sorted(libs)


def multiply(a, b, ready):
    frames = sys._current_frames()
    line = sys._getframe().f_lineno + 8  # the line of a @ b below
    with open(sys.argv[1] + ".matmul", "w") as f:
        json.dump({"tid": threading.get_native_id(), "blas": blas(), "line": line}, f)
    record(sys.argv[1], frames)
    ready.set()
    n = 0
    while True:
        n += 1
        a @ b


def main():
    a = numpy.random.rand(1500, 1500)
    b = numpy.random.rand(1500, 1500)
    ready = threading.Event()
    t = threading.Thread(target=multiply, args=(a, b, ready), name="matmul", daemon=True)
    t.start()
    ready.wait()
    print("READY", flush=True)
    t.join()


main()
