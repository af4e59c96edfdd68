"""Secrets among the locals, for --redact: a password under its own name, an
AWS-access-key-looking value under an innocent one, an instance attribute
api_token, and the same values passed on to another function under other
names.  The values are random, made here; the process records their repr()
with its stacks, then blocks (a gcore snapshot)."""
import _thread
import os
import random
import string
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _truth import record  # noqa: E402

parked = _thread.allocate_lock()
parked.acquire()
rng = random.SystemRandom()


class Client(object):
    def __init__(self, token):
        self.api_token = token
        self.endpoint = "billing-api/v1"  # an innocent attribute beside the token


def connect(user, pw, hint, client):
    record(sys.argv[1], sys._current_frames(), True); print("READY", flush=True); parked.acquire()  # noqa: E702


def login():
    user = "alice"
    password = "hunter2-" + "".join(rng.choice(string.ascii_lowercase) for _ in range(16))
    region_hint = "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))
    client = Client("tok" + "".join(rng.choice(string.hexdigits) for _ in range(29)))
    connect(user, password, region_hint, client)


login()
