#!/bin/sh
# Every input the fuzzers found (testdata/fuzz-regressions/, each named for
# what it broke) runs through pycore again: it must end on its own with
# an exit status of 0-4 and one line on stderr when it fails, never a
# signal, a sanitizer report or a hang (10 s each, against well under a
# second once fixed; the hangs found ran for minutes); a report it writes
# must match the schema.  The findings of the per-reader targets, kept in
# testdata/fuzz-regressions/TARGET/, go through that target's replay
# program (fuzz-replay-TARGET: the target's code with a main()), which must
# exit 0 within 10 s: a crash, or under --enable-sanitizers any report,
# fails it.  TAP (src/tests/lib/tap.sh): one line per input.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
pycore=${PYCORE:-./pycore}
dir=$srcdir/testdata/fuzz-regressions
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	timeout 10 "$pycore" analyze --format json "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	err=$(cat "$tmp/err")
	lines=$(grep -c . "$tmp/err")
	case $rc in
	0|1) if [ "$lines" -gt 1 ]; then tap_fail "$name" "exit $rc with $lines lines on stderr"; continue; fi ;;
	2|3|4) if [ "$lines" -ne 1 ]; then tap_fail "$name" "exit $rc, $lines lines on stderr: $err"; continue; fi ;;
	124) tap_fail "$name" "still running after 10 s"; continue ;;
	*) tap_fail "$name" "exit $rc: $err"; continue ;;
	esac
	if ! tap_schema "$tmp/out"; then
		tap_fail "$name" "exit $rc, and the report does not match the schema"
		continue
	fi
	tap_ok "$name: exit $rc"
done
builddir=$(dirname "$pycore")
for sub in "$dir"/*/; do
	[ -d "$sub" ] || continue
	target=$(basename "$sub")
	replay=$builddir/fuzz-replay-$target
	for f in "$sub"*; do
		[ -f "$f" ] || continue
		name=$target/$(basename "$f")
		if [ ! -x "$replay" ]; then
			tap_skip "$name" "no $replay (make check builds it)"
			continue
		fi
		timeout 10 "$replay" "$f" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		case $rc in
		0) tap_ok "$name: replayed" ;;
		124) tap_fail "$name" "still running after 10 s" ;;
		*) tap_fail "$name" "exit $rc: $(head -c 300 "$tmp/err")" ;;
		esac
	done
done
[ "$tap_n" -gt 0 ] || tap_skip "fuzz regressions" "no inputs in $dir"
tap_schema_done
tap_done
