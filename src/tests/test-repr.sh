#!/bin/sh
# The int and float formatters against repr() of the newest interpreter
# present (int_max_str_digits exists from 3.11 on) and of Debian's python3.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${TEST_REPR:-./test-repr}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
ran=0
for py in $(ls /root/.pyenv/versions/3.*/bin/python3.[0-9]* 2>/dev/null | grep -E 'python3\.[0-9]+$' | sort -V | tail -n 1) /usr/bin/python3; do
	[ -x "$py" ] || { echo "SKIP: $py not installed"; continue; }
	"$py" "$srcdir/src/tests/repr-vectors.py" >"$tmp/v" || { echo "FAIL: $py could not make vectors"; exit 1; }
	echo "vectors from $py:"
	"$bin" "$tmp/v" || exit 1
	ran=1
done
[ "$ran" -eq 1 ] || { echo "SKIP: no interpreter to take vectors from"; exit 77; }
