#!/bin/sh
# versions/ must be exactly what scripts/gen-versions makes from the DWARF of
# every interpreter on this machine: regenerate each table present and diff.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v gdb >/dev/null || { echo "SKIP: gdb not installed (Debian package gdb)"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
found=0 failed=0
for m in 6 7 8 9 10 11 12 13; do
	py=
	for p in /root/.pyenv/versions/3.$m.*/bin/python3.$m; do
		[ -x "$p" ] && py=$p
	done
	if [ -z "$py" ]; then
		echo "SKIP: python3.$m not installed (/root/.pyenv/versions/3.$m.*/bin/python3.$m)"
		continue
	fi
	found=$((found + 1))
	if ! "$srcdir/scripts/gen-versions" -o "$tmp" "$py" >/dev/null; then
		echo "FAIL: gen-versions failed for $py"
		failed=$((failed + 1))
	elif ! diff -u "$srcdir/versions/3.$m.h" "$tmp/3.$m.h"; then
		echo "FAIL: versions/3.$m.h differs from what $py's DWARF says"
		failed=$((failed + 1))
	else
		echo "ok: versions/3.$m.h matches $py"
	fi
done
[ "$found" -gt 0 ] || { echo "SKIP: no CPython 3.6-3.13 interpreter found"; exit 77; }
[ "$failed" -eq 0 ]
