#!/bin/sh
# versions/3.X.h must be exactly what scripts/gen-versions makes from the
# DWARF of the interpreters on this machine: regenerate every table whose
# interpreter is present into a scratch directory and diff.
# Exit: 0 all equal, 1 a difference or a failed generation (shown),
# 77 (skip) without gdb or without any CPython 3.6-3.13.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
gen=$srcdir/scripts/gen-versions

if ! command -v gdb >/dev/null 2>&1; then
	echo "SKIP: gdb not installed (Debian package gdb): cannot read the interpreters' DWARF"
	exit 77
fi
if [ ! -x "$gen" ]; then
	echo "FAIL: $gen missing or not executable"
	exit 1
fi

list=$("$gen" --list) || { echo "FAIL: $gen --list failed"; exit 1; }
if [ -z "$list" ]; then
	echo "SKIP: no CPython 3.6-3.13 installed (${PYENV_ROOT:-/root/.pyenv}/versions/3.X.*/bin/python3.X)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-versions.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

set --
for m in 6 7 8 9 10 11 12 13; do
	exe=$(printf '%s\n' "$list" | awk -F '\t' -v m="$m" '$1 == m { print $2 }')
	if [ -z "$exe" ]; then
		echo "SKIP: python3.$m not installed"
		continue
	fi
	set -- "$@" "$exe"
done

if ! "$gen" -o "$tmp" "$@" >"$tmp/gen.log" 2>&1; then
	cat "$tmp/gen.log"
	echo "FAIL: scripts/gen-versions failed"
	exit 1
fi

failed=0
for m in 6 7 8 9 10 11 12 13; do
	[ -f "$tmp/3.$m.h" ] || continue
	if diff -u "$srcdir/versions/3.$m.h" "$tmp/3.$m.h"; then
		echo "ok: versions/3.$m.h"
	else
		echo "FAIL: versions/3.$m.h differs from what the DWARF of python3.$m gives (run scripts/gen-versions)"
		failed=1
	fi
done
exit $failed
