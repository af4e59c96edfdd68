"""Containers of three million entries (a dict, a set, a list, a tuple)
held in a frame's locals; READY once they are built.  argv: truth path
(their lengths)."""
import json
import sys
import time

N = 3_000_000


def hold():
    big_dict = {i: i for i in range(N)}
    big_set = set(range(N))
    big_list = list(range(N))
    big_tuple = tuple(big_list)
    with open(sys.argv[1], "w") as f:
        json.dump({"big_dict": len(big_dict), "big_set": len(big_set), "big_list": len(big_list),
                   "big_tuple": len(big_tuple)}, f)
    print("READY", flush=True)
    time.sleep(1000)


hold()
