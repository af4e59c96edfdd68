#!/bin/sh
# The line-table decoders (src/python/linetable.c) against the lines that
# each interpreter present reports for every instruction of a varied set of
# code objects (src/tests/linetable-vectors.py), plus the checker's own
# hand-made and random tables.
#
# Builds nothing: the checker is $TEST_LINETABLE (default ./test-linetable).
# Exit status: 0 pass, 1 failure, 77 no interpreter to take vectors from.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${TEST_LINETABLE:-./test-linetable}
gen=$srcdir/src/tests/linetable-vectors.py

if [ ! -x "$bin" ]; then
	echo "FAIL: checker $bin not built"
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

files=
failed=0
n=0

vectors() { # interpreter
	n=$((n + 1))
	out=$tmp/$n-$(basename "$1").vec
	if "$1" "$gen" > "$out" 2> "$tmp/err"; then
		echo "vectors: $1 ($(grep -vc '^#' "$out") records)"
		files="$files $out"
	else
		echo "FAIL: $1 could not make vectors:"
		sed 's/^/    /' "$tmp/err"
		failed=1
	fi
}

for m in 6 7 8 9 10 11 12 13; do
	found=
	for py in /root/.pyenv/versions/3."$m".*/bin/python3."$m"; do
		[ -x "$py" ] || continue
		found=1
		vectors "$py"
	done
	[ -n "$found" ] || echo "SKIP: /root/.pyenv/versions/3.$m.*/bin/python3.$m not installed"
done
if [ -x /usr/bin/python3.11 ]; then
	vectors /usr/bin/python3.11
else
	echo "SKIP: /usr/bin/python3.11 not installed"
fi

if [ -z "$files" ] && [ "$failed" = 0 ]; then
	echo "SKIP: no interpreter to take vectors from"
	exit 77
fi

# shellcheck disable=SC2086 # one argument per file; the paths have no blanks
"$bin" $files || failed=1
exit "$failed"
