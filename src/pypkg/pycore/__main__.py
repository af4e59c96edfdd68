"""python -m pycore ARGS: the pycore binary with ARGS."""
from pycore import _main

_main()
