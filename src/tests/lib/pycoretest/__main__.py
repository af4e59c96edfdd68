"""python3 -m pycoretest NAME | --list: the interpreters found here
(pycoretest.interpreters; the shell tests use it through tap.sh's interp)."""
import sys

from pycoretest.interpreters import main

sys.exit(main(sys.argv[1:]))
