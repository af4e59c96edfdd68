#!/bin/sh
# The line-table decoders (src/python/objects/linetable.c) against the lines that
# each interpreter present reports for every instruction of a varied set of
# code objects (src/tests/unit/linetable-vectors.py), plus the checker's own
# hand-made and random tables.
#
# Builds nothing: the checker is $TEST_LINETABLE (default ./test-linetable).
# TAP (src/tests/lib/tap.sh): a line per interpreter's vectors (a skip when it
# is not installed) and one for the checker over all of them.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
bin=${TEST_LINETABLE:-./test-linetable}
gen=$srcdir/src/tests/unit/linetable-vectors.py

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

files=
n=0

vectors() { # interpreter
	n=$((n + 1))
	out=$tmp/$n-$(basename "$1").vec
	if "$1" "$gen" > "$out" 2> "$tmp/err"; then
		tap_ok "vectors from $1: $(grep -vc '^#' "$out") records"
		files="$files $out"
	else
		tap_fail "vectors from $1" "it could not make them"
		tap_diag <"$tmp/err"
	fi
}

for m in 6 7 8 9 10 11 12 13; do
	if py=$(interp "py3.$m" 2>"$tmp/why"); then
		vectors "$py"
	else
		tap_skip "vectors from python3.$m" "$(cat "$tmp/why")"
	fi
done
if py=$(interp debian3.11 2>"$tmp/why"); then
	vectors "$py"
else
	tap_skip "vectors from /usr/bin/python3.11" "$(cat "$tmp/why")"
fi

# The checker's hand-made and random tables, and every vector made above.
if [ ! -x "$bin" ]; then
	tap_fail "the line-table decoders" "checker $bin not built"
else
	# shellcheck disable=SC2086 # one argument per file; the paths have no blanks
	"$bin" $files >"$tmp/check" 2>&1
	rc=$?
	tap_diag <"$tmp/check"
	if [ "$rc" -eq 0 ]; then
		tap_ok "the line-table decoders: hand-made and random tables, and $(echo $files | wc -w) interpreters' vectors"
	else
		tap_fail "the line-table decoders" "exit $rc (see above)"
	fi
fi
tap_done
