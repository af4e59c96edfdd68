#!/bin/sh
# Every input the fuzzers found (testdata/fuzz-regressions/, each named for
# what it broke) runs through pycore again: it must end on its own with
# an exit status of 0-4 and one line on stderr when it fails, never a
# signal, a sanitizer report or a hang (10 s each, against well under a
# second once fixed; the hangs found ran for minutes).
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
pycore=${PYCORE:-./pycore}
dir=$srcdir/testdata/fuzz-regressions
failed=0 n=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	err=$(timeout 10 "$pycore" analyze --format json "$f" 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$err" | grep -c .)
	case $rc in
	0|1) [ "$lines" -le 1 ] || { echo "FAIL: $(basename "$f"): exit $rc with $lines lines on stderr"; failed=1; continue; } ;;
	2|3|4) [ "$lines" -eq 1 ] || { echo "FAIL: $(basename "$f"): exit $rc, $lines lines on stderr: $err"; failed=1; continue; } ;;
	124) echo "FAIL: $(basename "$f"): still running after 10 s"; failed=1; continue ;;
	*) echo "FAIL: $(basename "$f"): exit $rc: $err"; failed=1; continue ;;
	esac
	echo "ok: $(basename "$f"): exit $rc"
done
if [ "$n" -eq 0 ]; then
	echo "SKIP: no inputs in $dir"
	exit 77
fi
exit $failed
